"""`dfc.checkpoint` (rematerialisation): JAX's `jax.checkpoint` (rematerialisation) for dfc's autodiff.

`checkpoint(f)` marks `f` so that a gradient through it keeps none of the
values `f` computes (only its arguments) and recomputes them in the backward
sweep. Called from a `dfc.jit` function, `f` becomes a `func.call` carrying
`{df.checkpoint = "<policy>"}` (dfc/frontend/checkpoint.py), which the
`autodiff` pass differentiates by calling `@f_grad` (passes/autodiff/checkpoint.py);
every unmarked call is inlined and stored. Transformed directly (`grad(checkpoint(f))`,
or a `dfc.Function` checkpointed), the entry becomes such a marked call.
"""

from __future__ import annotations

import weakref
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, StringAttr
from xdsl.ir import Block, Region

from dfc.errors import user_errors
from dfc.frontend.checkpoint import Checkpointed
from dfc.function import Function
from dfc.passes.autodiff.checkpoint import ATTRIBUTE, POLICIES
from dfc.transforms import _prepared, _specialize

_MARKED: weakref.WeakKeyDictionary[Function, dict[str, Function]] = weakref.WeakKeyDictionary()
"""Per `Function`, its checkpointed Function by policy."""


class CheckpointedFunction(Checkpointed):
    """What `checkpoint` returns for anything but a `Function`: callable as `f`
    (from Python, and from jitted code as a marked call); `specialize` gives the
    checkpointed `Function`, so that every transform takes it."""

    @user_errors
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fn, ir_args, _ = self.specialize(*args, **kwargs)
        return fn(*ir_args)

    @user_errors
    def specialize(self, *args: Any, **kwargs: Any) -> tuple[Function, list[Any], list[int]]:
        """(the checkpointed Function for these arguments, its IR arguments, the IR
        position of each parameter): the protocol of `dfc.jit` functions."""
        fn, ir_args, positions = _specialize(self.fn, args, kwargs)
        return checkpointed_function(fn, self.policy), ir_args, positions


def checkpoint(f: Any = None, *, policy: str = "nothing_saveable") -> Any:
    """`f` with its values recomputed for the backward sweep rather than stored
    (`jax.checkpoint`): a `Function` gives a `Function`; a Python or `dfc.jit`
    function gives a function to call or transform like `f`, also from inside a
    jitted function (then only that call is checkpointed). `policy`:
    `"nothing_saveable"` (keep only f's arguments) or `"dots_saveable"` (keep
    the results of f's matrix products and contractions too, recompute the
    rest). A decorator too: `@dfc.checkpoint`, `@dfc.checkpoint(policy=...)`."""
    if policy not in POLICIES:
        raise ValueError(f"unknown checkpoint policy {policy!r}: one of {', '.join(POLICIES)}")
    if f is None:
        return lambda g: checkpoint(g, policy=policy)
    if isinstance(f, Function):
        return checkpointed_function(f, policy)
    return CheckpointedFunction(_prepared(f), policy)


def checkpointed_function(fn: Function, policy: str) -> Function:
    """`@checkpoint_<name>(args...)`, in a copy of fn's module: the call of fn's entry,
    marked with `policy`. Built once per `fn` and policy."""
    cache = _MARKED.setdefault(fn, {})
    if policy not in cache:
        module = fn.module.clone()
        names = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
        name = next(n for n in (f"checkpoint_{fn.name}" + (f"_{k}" if k else "") for k in range(len(names) + 1))
                    if n not in names)
        entry = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == fn.name)
        block = Block(arg_types=fn.inputs)
        for new, old in zip(block.args, entry.body.block.args):
            new.name_hint = old.name_hint
        call = func.CallOp(fn.name, list(block.args), fn.outputs)
        call.attributes[ATTRIBUTE] = StringAttr(policy)
        ret = func.ReturnOp(*call.res)
        for op in (call, ret):
            op.location = entry.location
            block.add_op(op)
        wrapper = func.FuncOp(name, FunctionType.from_lists(fn.inputs, fn.outputs), Region(block))
        wrapper.location = entry.location
        module.body.block.add_op(wrapper)
        cache[policy] = Function(module, name, fn.threads)
    return cache[policy]
