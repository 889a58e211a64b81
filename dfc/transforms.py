"""The JAX-style reverse-mode transforms: `grad`, `value_and_grad`, `vjp` and
`jacrev` (exported as `dfc.grad`, ...).

Each takes a `Function`, anything with a `specialize(*args) -> (Function,
arguments, positions)` method (what `dfc.jit` returns, and what `grad` and
`value_and_grad` return), or a plain Python function (jitted once, when the
transform is made).

`grad(f)` and `value_and_grad(f)` build, per specialisation of `f` and per
`argnums`/`has_aux`, one derived `Function`: a copy of f's module where the
`autodiff` pass has added `@f_grad` and a new entry `@grad_f(args...)` calls it
with the seed 1 and returns the gradients (then the aux results). It is
compiled once and cached (on the `Function` of `f`, weakly), and since it is IR
like any other, the `autodiff` pass differentiates it again (`grad(grad(f))`,
`jacrev(grad(f))`: reverse over reverse) and the `jvp` pass carries tangents
through it (`dfc.second_order`'s `hessian` and `hvp`: forward over reverse). The result of `jacrev` (a Python loop over the rows
of the Jacobian, one compiled vector-Jacobian product reused for every row) is
not differentiable again.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, FunctionType, ModuleOp, SymbolRefAttr, TensorType
from xdsl.ir import Block, Region

from dfc.basis_loops import batchable, jacobian_rows
from dfc.compiler.interpreter import dtype_of
from dfc.errors import user_errors
from dfc.frontend import FrontendError, jit
from dfc.function import Function, is_float_type

_DERIVED: weakref.WeakKeyDictionary[Function, dict[tuple, Function]] = weakref.WeakKeyDictionary()
"""Per `Function`, its derived gradient Functions by (wrt, has_aux, with_value)."""


def _types(types: Sequence[Any]) -> str:
    """Types as MLIR writes a result list: `tensor<8xf64>`, `(f32, i64)`, `()`."""
    text = ", ".join(str(t) for t in types)
    return text if len(types) == 1 else f"({text})"


def _prepared(f: Any) -> Any:
    """`f` as the transforms hold it: a plain Python function is jitted (once per
    function), so that its specialisations (and their gradients) are compiled once."""
    if getattr(f, "_dfc_not_differentiable", None):
        raise TypeError(f"the result of dfc.{f._dfc_not_differentiable} cannot be transformed again "
                        "(it is a Python loop, not IR); transform grad(f) instead, e.g. jacrev(grad(f))")
    if isinstance(f, Function) or hasattr(f, "specialize"):
        return f
    if callable(f):
        jitted = getattr(f, "__dfc_jit__", None)
        if jitted is None:
            jitted = jit(f)
            try:  # kept on the function, so that it lives as long as the function does
                f.__dfc_jit__ = jitted
            except AttributeError:
                pass  # a callable without attributes: jitted again by each transform
        return jitted
    raise TypeError(f"expected a dfc.Function or a Python function, got {type(f).__name__}")


def _specialize(f: Any, args: Sequence[Any], kwargs: dict) -> tuple[Function, list[Any], list[int]]:
    """(the Function, its IR arguments, IR index of each parameter or -1); keyword
    arguments and defaults bind as in Python (not for a `Function`). An imported
    JAX function's arguments are converted to its parameter dtypes here."""
    f = _prepared(f)
    if isinstance(f, Function):
        if kwargs:
            raise TypeError(f"@{f.name} takes positional arguments only")
        converted = f.arguments(*args) if hasattr(f, "arguments") else list(args)
        return f, converted, list(range(len(args)))
    fn, ir_args, positions = f.specialize(*args, **kwargs)
    if getattr(fn, "complex_signature", False):
        raise FrontendError(f"{fn.name}: complex gradient not supported (its arguments or results are complex; "
                            "differentiate a real function of the real and imaginary parts)")
    return fn, ir_args, positions


def _wrt(fn: Function, argnums: int | Sequence[int], positions: list[int], what: str = "argnums") -> list[int]:
    nums = [argnums] if isinstance(argnums, int) else list(argnums)
    wrt = []
    for k in nums:
        if not -len(positions) <= k < len(positions):
            raise ValueError(f"{what} {k} out of range for {len(positions)} arguments")
        ir = positions[k]
        if ir < 0 or not is_float_type(fn.inputs[ir]):
            raise TypeError(f"argument {k} of @{fn.name} is not a float array: it has no gradient")
        if ir in getattr(fn, "complex_inputs", ()):  # an imported JAX function's complex argument, packed
            raise TypeError(f"argument {k} of @{fn.name} is complex: gradients with respect to complex arguments "
                            "are not supported")
        wrt.append(ir)
    return wrt


def _element(t: Any) -> Any:
    return t.element_type if isinstance(t, TensorType) else t


def _one(t: Any) -> arith.ConstantOp:
    """The constant 1 of the float scalar or 0-d tensor type `t` (a gradient's seed)."""
    if isinstance(t, TensorType):
        return arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [1.0]))
    return arith.ConstantOp(FloatAttr(1.0, t))


def _fresh(names: set[str], base: str) -> str:
    return next(n for n in (base if k == 0 else f"{base}_{k}" for k in range(len(names) + 1)) if n not in names)


def _check_scalar_output(fn: Function, has_aux: bool, what: str) -> None:
    out = fn.outputs
    scalar = bool(out) and is_float_type(out[0]) and not (isinstance(out[0], TensorType) and out[0].get_shape())
    if not scalar or (not has_aux and len(out) != 1):
        wanted = "a scalar float first result (then the aux results)" if has_aux else "one scalar float result"
        raise TypeError(f"{what} needs a function with {wanted}; @{fn.name} returns {_types(out)}")


def derived_gradient(
    fn: Function, wrt: Sequence[int], has_aux: bool = False, with_value: bool = False, memory_budget: int | None = None
) -> Function:
    """The `Function` computing the gradient of `fn`'s first result (a float
    scalar) with respect to its IR arguments `wrt`: `@grad_<name>(args...) ->
    (grads..., aux...)`, or with `with_value` `@value_and_grad_<name>(args...) ->
    (value, aux..., grads...)`; the aux results are fn's other results (none
    unless `has_aux`). `memory_budget`: the bytes the compiled gradient may hold
    at once, measured (dfc/memory_budget.py). Built once per `fn` and options, and differentiable again."""
    key = (tuple(wrt), has_aux, with_value) + ((memory_budget,) if memory_budget is not None else ())
    cache = _DERIVED.setdefault(fn, {})
    if key not in cache:
        cache[key] = _build_derived(fn, list(wrt), has_aux, with_value, memory_budget)
    return cache[key]


def _build_derived(fn: Function, wrt: list[int], has_aux: bool, with_value: bool, memory_budget: int | None = None) -> Function:
    """The derived Function; under `memory_budget`, the one whose compiled form
    measures within it (dfc/memory_budget.py)."""
    from dfc.memory_budget import within_budget

    if memory_budget is None:
        return _derive(fn, wrt, has_aux, with_value, -1)
    entry = next(op for op in fn.module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == fn.name)
    return within_budget(lambda model: _derive(fn, wrt, has_aux, with_value, model), memory_budget, entry)


def _derive(fn: Function, wrt: list[int], has_aux: bool, with_value: bool, budget: int) -> Function:
    """The derived Function, its gradient built by `autodiff{memory_budget=budget}` (-1: none)."""
    from dfc.compiler.pass_manager import PassManager
    from dfc.passes.autodiff.autodiff import AutodiffPass, function_named, is_gradient_of

    module = fn.module.clone()
    PassManager(passes=[AutodiffPass(func=fn.name, wrt=tuple(wrt), outputs=(0,), memory_budget=budget)]).run(module)
    f = function_named(module, fn.name)
    assert f is not None
    g = next(op for op in module.ops if isinstance(op, func.FuncOp) and is_gradient_of(op, f, wrt, [0]))
    names = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
    name = _fresh(names, f"{'value_and_grad' if with_value else 'grad'}_{fn.name}")
    block = Block(arg_types=fn.inputs)
    for new, old in zip(block.args, f.body.block.args):
        new.name_hint = old.name_hint
    seed = _one(fn.outputs[0])
    call = func.CallOp(g.sym_name.data, [*block.args, seed.result], g.function_type.outputs.data)
    n = len(fn.outputs)
    values, grads = list(call.res[:n]), list(call.res[n:])
    aux = values[1:] if has_aux else []
    picked = [values[0], *aux, *grads] if with_value else [*grads, *aux]
    ret = func.ReturnOp(*picked)
    for op in (seed, call, ret):
        op.location = f.location
        block.add_op(op)
    wrapper = func.FuncOp(name, FunctionType.from_lists(fn.inputs, [v.type for v in picked]), Region(block))
    wrapper.location = f.location
    module.body.block.insert_op_after(wrapper, g)
    _keep_reachable(module, name)
    return Function(module, name, fn.threads)


def _keep_reachable(module: ModuleOp, entry: str) -> None:
    """Erase the function definitions `@entry` does not reach through symbol
    references (f itself and what earlier derivations left): the engine compiles
    every function of a module. Declarations stay."""
    defined = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration}
    reached, todo = {entry}, [entry]
    while todo:
        for op in defined[todo.pop()].walk():
            for attr in (*op.attributes.values(), *op.properties.values()):
                if isinstance(attr, SymbolRefAttr) and attr.root_reference.data in defined.keys() - reached:
                    reached.add(attr.root_reference.data)
                    todo.append(attr.root_reference.data)
    for name, op in defined.items():
        if name not in reached:
            module.body.block.erase_op(op)


class Derivative:
    """What `grad` and `value_and_grad` return: called like `f`, it returns the
    gradient (JAX's structure, `has_aux` included); `specialize(*args)` gives the
    derived `Function` for those arguments, so that it can be transformed again."""

    def __init__(self, f: Any, argnums: int | Sequence[int], has_aux: bool, with_value: bool, memory_budget: int | None = None):
        self.f = _prepared(f)
        self.memory_budget = memory_budget
        self.argnums = argnums if isinstance(argnums, int) else tuple(argnums)
        self.has_aux = has_aux
        self.with_value = with_value
        inner = getattr(self.f, "__name__", None) or getattr(self.f, "name", "f")
        kind = "value_and_grad" if with_value else "grad"
        self.__name__ = f"{kind}_{inner}"
        self.__doc__ = f"dfc.{kind}({inner})"

    def __repr__(self) -> str:
        options = f", argnums={self.argnums!r}" + (", has_aux=True" if self.has_aux else "")
        return f"<dfc.{'value_and_grad' if self.with_value else 'grad'}({self.f!r}{options})>"

    @user_errors
    def specialize(self, *args: Any, **kwargs: Any) -> tuple[Function, list[Any], list[int]]:
        """(the derived Function for these arguments, its IR arguments, the IR
        position of each parameter): the protocol of `dfc.jit` functions."""
        fn, ir_args, positions = _specialize(self.f, args, kwargs)
        wrt = _wrt(fn, self.argnums, positions)
        _check_scalar_output(fn, self.has_aux, "value_and_grad" if self.with_value else "grad")
        return derived_gradient(fn, wrt, self.has_aux, self.with_value, self.memory_budget), ir_args, positions

    @user_errors
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fn, ir_args, _ = self.specialize(*args, **kwargs)
        out = fn(*ir_args)
        out = list(out) if isinstance(out, tuple) else [out]
        n_grads = 1 if isinstance(self.argnums, int) else len(self.argnums)
        if self.with_value:
            value, aux, grads = out[0], out[1:len(out) - n_grads], out[len(out) - n_grads:]
        else:
            grads, aux, value = out[:n_grads], out[n_grads:], None
        g = grads[0] if isinstance(self.argnums, int) else tuple(grads)
        if self.has_aux:
            value = (value, _one_or_tuple(aux))
            return (value, g) if self.with_value else (g, value[1])
        return (value, g) if self.with_value else g


def _one_or_tuple(values: Sequence[Any]) -> Any:
    return values[0] if len(values) == 1 else tuple(values)


def grad(f: Any, argnums: int | Sequence[int] = 0, has_aux: bool = False, memory_budget: int | None = None) -> Derivative:
    """The gradient of scalar-valued `f` (a `Function`, a `dfc.jit` function, a
    Python function, jitted, or another `grad`) with respect to argument `argnums`
    (an int, or a tuple: a tuple of gradients; keyword arguments bind as in a
    call, and `argnums` counts the parameters in order). With `has_aux`, `f`
    returns `value, aux...` and the result is `(gradient, aux)` (aux a tuple when
    `f` has several more results). The result is differentiable again:
    `grad(grad(f))`, `jacrev(grad(f))`. `memory_budget` (bytes) bounds the
    memory the compiled gradient holds at once, measured on its lowered code:
    layers recomputed as checkpoints and loop checkpoints replace stored values
    until it fits, and a budget below the least it can hold raises
    `MemoryBudgetError` (a `CompileError`; docs/autodiff.md)."""
    return Derivative(f, argnums, has_aux, with_value=False, memory_budget=memory_budget)


def value_and_grad(
    f: Any, argnums: int | Sequence[int] = 0, has_aux: bool = False, memory_budget: int | None = None
) -> Derivative:
    """Like `grad`, returning `(f(*args), gradient)`; with `has_aux`,
    `((value, aux), gradient)`."""
    return Derivative(f, argnums, has_aux, with_value=True, memory_budget=memory_budget)


def _seed(t: Any, value: Any) -> Any:
    """`value` as an argument of type `t` (a 0-d numpy scalar for a float scalar type)."""
    array = np.asarray(value, dtype_of(_element(t)))
    return array if isinstance(t, TensorType) else array[()]


def _static_shape(t: Any) -> tuple[int, ...] | None:
    """The shape of values of type `t` (() for a scalar), or None if a dimension is dynamic."""
    shape = tuple(t.get_shape()) if isinstance(t, TensorType) else ()
    return shape if all(d >= 0 for d in shape) else None


def _as_list(out: Any) -> list[Any]:
    return list(out) if isinstance(out, tuple) else [out]


def jacrev(f: Any, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable[..., Any]:
    """The Jacobian of `f` by reverse mode: for a result of shape `S` and an
    argument of shape `A`, an array of shape `S + A` (a tuple over the results
    if `f` has several, of tuples over `argnums` if it is a tuple, as JAX). One
    compiled vector-Jacobian product (`Function.gradient`) runs once per element
    of the result: in one compiled loop over the result's elements
    (`dfc.basis_loops`) when the float results and the arguments in `argnums` are
    tensors of static shapes, else called from Python per element (`f` itself is
    not compiled when its result shapes are static). With `has_aux`, only the
    first result is differentiated and the call returns `(jacobian, aux)`. Not
    differentiable again."""
    f = _prepared(f)

    @user_errors
    def jacobian(*args: Any, **kwargs: Any) -> Any:
        fn, ir_args, positions = _specialize(f, args, kwargs)
        wrt = _wrt(fn, argnums, positions)
        outs = [0] if has_aux else list(range(len(fn.outputs)))
        for j in outs:
            if not is_float_type(fn.outputs[j]):
                raise TypeError(f"jacrev needs float results; result #{j} of @{fn.name} has type {fn.outputs[j]}")
        floats = [j for j, t in enumerate(fn.outputs) if is_float_type(t)]
        n = len(fn.outputs)
        shapes = [_static_shape(t) for t in fn.outputs]
        values = None if all(s is not None for s in shapes) else _as_list(fn(*ir_args))
        if values is not None:
            shapes = [np.shape(v) for v in values]
        if batchable([fn.outputs[j] for j in floats] + [fn.inputs[k] for k in wrt]):
            result = []
            for j in outs:
                rows = jacobian_rows(fn, "rev", wrt, floats.index(j), ir_args)
                blocks = [r.reshape(shapes[j] + r.shape[1:]) for r in rows]
                result.append(blocks[0] if isinstance(argnums, int) else tuple(blocks))
            jac = _one_or_tuple(result)
            return (jac, _one_or_tuple(_as_list(fn(*ir_args))[1:])) if has_aux else jac
        vjp = fn.gradient(wrt)
        zeros = [np.zeros(shapes[j], dtype_of(_element(fn.outputs[j]))) for j in floats]
        result = []
        for j in outs:
            blocks = [np.zeros(shapes[j] + np.shape(ir_args[k]), dtype_of(_element(fn.inputs[k]))) for k in wrt]
            for index in np.ndindex(shapes[j]):
                seeds = [z.copy() for z in zeros]
                seeds[floats.index(j)][index] = 1
                out = vjp(*ir_args, *[_seed(fn.outputs[i], s) for i, s in zip(floats, seeds)])
                values = values or list(out[:n])
                for block, g in zip(blocks, out[n:]):
                    block[index] = g
            result.append(blocks[0] if isinstance(argnums, int) else tuple(blocks))
        jac = _one_or_tuple(result)
        if not has_aux:
            return jac
        return jac, _one_or_tuple((values or _as_list(fn(*ir_args)))[1:])

    jacobian._dfc_not_differentiable = "jacrev"  # type: ignore[attr-defined]
    return jacobian


@user_errors
def vjp(f: Any, *args: Any, **kwargs: Any) -> tuple[Any, Callable[[Any], tuple]]:
    """`(f(*args, **kwargs), pullback)`: `pullback(cotangent)` returns the vector-Jacobian
    product for every float parameter of `f`, in order (None for the others; defaults
    and keyword arguments included)."""
    fn, ir_args, positions = _specialize(f, args, kwargs)
    floats = [k for k, ir in enumerate(positions) if ir >= 0 and is_float_type(fn.inputs[ir])]
    if len(fn.outputs) != 1 or not is_float_type(fn.outputs[0]):
        raise TypeError(f"vjp needs a function with one float result; @{fn.name} returns {_types(fn.outputs)}")
    gradient = fn.gradient([positions[k] for k in floats])
    value = fn(*ir_args)

    def pullback(cotangent: Any) -> tuple:
        _, *grads = gradient(*ir_args, cotangent)
        by_arg: list[Any] = [None] * len(positions)
        for k, g in zip(floats, grads):
            by_arg[k] = g
        return tuple(by_arg)

    return value, pullback
