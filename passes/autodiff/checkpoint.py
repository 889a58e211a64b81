"""Store or recompute a call's values: the `df.checkpoint` attribute of `func.call`.

A call marked `{df.checkpoint = "nothing_saveable"}` (what `dfc.checkpoint`
emits, JAX's `jax.checkpoint`) keeps nothing of the callee's computation from
the forward sweep to the backward sweep but the call's arguments: the reverse
sweep calls `@callee_grad`, which reruns the callee's forward computation and
reverses it (`control.reverse_call`). `"dots_saveable"` keeps the results of
the contractions (`nn.matmul`, `nn.dot_general`, `nn.linear`) directly in the
callee's body as well: the forward sweep calls `@callee_dots`, which also
returns them, and the backward calls `@callee_grad_dots`, whose forward part
reads them from its arguments instead of recomputing them (contractions inside
the callee's loops or branches are recomputed). Every other call is inlined into the gradient's forward
computation before the sweep (`inline_stored_calls`), so that its values are
stored like the caller's own, within the loops' tapes and budget (JAX
differentiates an unmarked call the same way).

Where it matters: the attribute is read by `autodiff` only. No pass before it
inlines calls (the importers inline theirs before the mark exists: a
StableHLO program's `jax.checkpoint` arrives inlined), and the default
pipeline after it keeps functions apart (no inliner), so the recomputation in
`@callee_grad` cannot be merged back into the forward values by `cse`.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, SSAValue

from dfc.dialects.diagnostics import CompileError
from dfc.dialects.nn import LinearOp, MatmulOp
from dfc.dialects.nn_contract import DotGeneralOp

ATTRIBUTE = "df.checkpoint"
"""The discardable attribute of `func.call` naming its checkpoint policy."""

POLICIES = ("nothing_saveable", "dots_saveable")
"""JAX's names (`jax.checkpoint_policies`): save nothing; save contraction results."""

SAVED_OPS = (MatmulOp, DotGeneralOp, LinearOp)
"""What `dots_saveable` keeps: the results of these ops."""


def checkpoint_policy(call: func.CallOp) -> str | None:
    """The call's policy, None when it is not a checkpoint (a located error for an unknown one)."""
    attr = call.attributes.get(ATTRIBUTE)
    if attr is None:
        return None
    if not isinstance(attr, StringAttr) or attr.data not in POLICIES:
        raise CompileError.at(call, f"autodiff: unknown {ATTRIBUTE} policy {attr}: expected one of "
                              + ", ".join(f'"{p}"' for p in POLICIES))
    return attr.data


def inline_stored_calls(f: func.FuncOp, module: ModuleOp, exclude: frozenset[str]) -> None:
    """Inline into `f`, at any depth, every call that is not a checkpoint and whose
    callee has a one-block body, the calls of the inlined bodies too. Calls of
    the functions in `exclude` (f itself, the gradients being built), of a callee
    already being inlined (recursion) and of declarations stay calls, for the
    reverse sweep to differentiate or refuse."""
    bodies = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration}
    _inline_in(f.body.block, bodies, exclude | {f.sym_name.data})


def _inline_in(block: Block, bodies: dict[str, func.FuncOp], chain: frozenset[str]) -> None:
    for op in list(block.ops):
        for region in op.regions:
            for inner in region.blocks:
                _inline_in(inner, bodies, chain)
        if not isinstance(op, func.CallOp) or checkpoint_policy(op) is not None:
            continue
        name = op.callee.root_reference.data
        callee = bodies.get(name)
        if name in chain or callee is None or len(callee.body.blocks) != 1:
            continue
        body = callee.body.block
        mapping: dict[SSAValue, SSAValue] = dict(zip(body.args, op.arguments))
        inlined = Block()
        ret = body.last_op
        assert isinstance(ret, func.ReturnOp)
        for o in body.ops:
            if o is ret:
                break
            clone = o.clone(value_mapper=mapping)
            inlined.add_op(clone)
            mapping.update(zip(o.results, clone.results))
        _inline_in(inlined, bodies, chain | {name})
        results = [mapping.get(v, v) for v in ret.arguments]
        for o in list(inlined.ops):
            o.detach()
            block.insert_op_before(o, op)
        for old, new in zip(op.res, results):
            old.replace_all_uses_with(new)
        block.erase_op(op)


def _contractions(f: func.FuncOp, n: int | None = None) -> list[Operation]:
    """The `SAVED_OPS` directly in f's body (among its first `n` ops), in order."""
    return [op for op in list(f.body.block.ops)[:n] if isinstance(op, SAVED_OPS)]


def forward_with_contractions(module: ModuleOp, callee: func.FuncOp, exclude: frozenset[str]) -> func.FuncOp:
    """`@callee_dots(args...) -> (results..., contractions...)`: the callee, its stored
    calls inlined as its gradient inlines them, also returning the results of the
    contractions directly in its body (an existing one is reused)."""
    name = callee.sym_name.data
    for f in module.ops:
        if isinstance(f, func.FuncOp) and f.attributes.get("autodiff.contractions_of") == StringAttr(name):
            return f
    names = {f.sym_name.data for f in module.ops if isinstance(f, func.FuncOp)}
    fwd = callee.clone()
    fwd.sym_name = StringAttr(next(n for n in (f"{name}_dots" + (f"_{k}" if k else "") for k in range(len(names) + 1))
                                   if n not in names))
    fwd.sym_visibility = StringAttr("private")
    inline_stored_calls(fwd, module, exclude | {name})
    block = fwd.body.block
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    saved = [op.results[0] for op in _contractions(fwd)]
    block.insert_op_before(func.ReturnOp(*ret.arguments, *saved), ret)
    block.erase_op(ret)
    fwd.function_type = FunctionType.from_lists(list(callee.function_type.inputs.data),
                                                [*callee.function_type.outputs.data, *[v.type for v in saved]])
    fwd.attributes["autodiff.contractions_of"] = StringAttr(name)
    module.body.block.insert_op_after(fwd, callee)
    return fwd


def read_contractions(grad: func.FuncOp, n_forward: int, n_args: int) -> None:
    """Make `@callee_grad(args..., seeds...)` take `(args..., contractions..., seeds...)`:
    the contractions directly in its forward part (its first `n_forward` ops, in the
    order `forward_with_contractions` returns them) read their argument instead of
    computing; their backward rules need their operands only."""
    block = grad.body.block
    for k, op in enumerate(_contractions(grad, n_forward)):
        arg = block.insert_arg(op.results[0].type, n_args + k)
        op.results[0].replace_all_uses_with(arg)
        block.erase_op(op)
    grad.function_type = FunctionType.from_lists([a.type for a in block.args], list(grad.function_type.outputs.data))
