"""The forward-mode transforms: `jvp`, `jacfwd` and `linearize` (exported as
`dfc.jvp`, ...), as JAX's.

Each takes what `dfc.grad` takes (a `Function`, a `dfc.jit` function, a plain
Python function, jitted once, or a `grad`/`value_and_grad`) and runs the `jvp`
pass through `Function.jvp`: one function `@f_jvp(args..., tangents...) ->
(results..., J t)` per set of differentiated arguments, compiled once and
cached on the `Function`. Since a `grad` specialises to IR, `jvp(grad(f), ...)`
is forward over reverse: a Hessian-vector product. Tangents are given and
returned for float arguments and results only: an integer argument's tangent is
ignored, an integer result's tangent is None (JAX's float0 zeros).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dfc.basis_loops import batchable, jacobian_rows
from dfc.compiler.interpreter import dtype_of
from dfc.errors import user_errors
from dfc.function import Function, is_float_type
from dfc.transforms import _element, _one_or_tuple, _prepared, _seed, _specialize, _wrt


def _tangent(fn: Function, ir: int, primal: Any, tangent: Any, k: int) -> Any:
    """`tangent` as an argument of the IR type of argument `ir` (the primal's shape)."""
    if np.shape(tangent) != np.shape(primal):
        raise ValueError(f"jvp: tangent {k} has shape {np.shape(tangent)}, but its primal has shape {np.shape(primal)}")
    return _seed(fn.inputs[ir], tangent)


def _forward(fn: Function, ir_args: list[Any], wrt: list[int], tangents: list[Any]) -> tuple[list[Any], list[Any]]:
    """(fn's results, the tangent of each: J t for a float result, None for another)."""
    n = len(fn.outputs)
    if not wrt:  # nothing varies
        values = list(fn(*ir_args)) if n != 1 else [fn(*ir_args)]
        return values, [np.zeros_like(v) if is_float_type(t) else None for v, t in zip(values, fn.outputs)]
    out = fn.jvp(wrt)(*ir_args, *tangents)
    rest = iter(out[n:])
    return list(out[:n]), [next(rest) if is_float_type(t) else None for t in fn.outputs]


@user_errors
def jvp(f: Any, primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False) -> tuple[Any, ...]:
    """`(f(*primals), J t)`: the value of `f` and its Jacobian-vector product with
    `tangents` (one per primal, of its shape), by forward mode, as `jax.jvp`.
    Each is one value for a function of one result, else a tuple. With
    `has_aux`, `f` returns `value, aux...` and the result is `(value, J t,
    aux)`, only the first result differentiated (aux a tuple when several)."""
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    fn, ir_args, positions = _specialize(f, primals, {})
    wrt, given = [], []
    for k, (ir, t) in enumerate(zip(positions, tangents)):
        if ir >= 0 and is_float_type(fn.inputs[ir]):
            wrt.append(ir)
            given.append(_tangent(fn, ir, ir_args[ir], t, k))
    values, outs = _forward(fn, ir_args, wrt, given)
    if has_aux:
        if len(values) < 2:
            raise TypeError(f"jvp with has_aux needs a function of two or more results; @{fn.name} has {len(values)}")
        return values[0], outs[0], _one_or_tuple(values[1:])
    return _one_or_tuple(values), _one_or_tuple(outs)


def jacfwd(f: Any, argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """The Jacobian of `f` by forward mode, as `jax.jacfwd`: for a result of shape
    `S` and an argument of shape `A`, an array of shape `S + A` (a tuple over the
    results if `f` has several, of tuples over `argnums` if it is a tuple). One
    compiled Jacobian-vector product runs once per element of the arguments (in
    one compiled loop per argument, `dfc.basis_loops`, when the results and those
    arguments are tensors of static shapes): cheaper than `jacrev` when the
    arguments are smaller than the results."""
    f = _prepared(f)

    @user_errors
    def jacobian(*args: Any, **kwargs: Any) -> Any:
        fn, ir_args, positions = _specialize(f, args, kwargs)
        wrt = _wrt(fn, argnums, positions)
        for j, t in enumerate(fn.outputs):
            if not is_float_type(t):
                raise TypeError(f"jacfwd needs float results; result #{j} of @{fn.name} has type {t}")
        if batchable(fn.outputs + [fn.inputs[k] for k in wrt]):
            blocks = [[] for _ in fn.outputs]
            for i, k in enumerate(wrt):
                shape = tuple(fn.inputs[k].get_shape())
                for j, rows in enumerate(jacobian_rows(fn, "fwd", wrt, i, ir_args)):
                    block = rows.reshape(shape + rows.shape[1:])
                    blocks[j].append(np.moveaxis(block, tuple(range(len(shape))), tuple(range(-len(shape), 0))))
            return _one_or_tuple([b[0] if isinstance(argnums, int) else tuple(b) for b in blocks])
        zeros = [np.zeros(np.shape(ir_args[k]), dtype_of(_element(fn.inputs[k]))) for k in wrt]
        values, _ = _forward(fn, ir_args, wrt, [_seed(fn.inputs[k], z) for z, k in zip(zeros, wrt)])
        blocks = [[np.zeros(np.shape(v) + z.shape, dtype_of(_element(t))) for z in zeros]
                  for v, t in zip(values, fn.outputs)]
        call = fn.jvp(wrt)
        for i, (k, z) in enumerate(zip(wrt, zeros)):
            for index in np.ndindex(z.shape):
                tangents = [x.copy() for x in zeros]
                tangents[i][index] = 1
                out = call(*ir_args, *[_seed(fn.inputs[j], x) for x, j in zip(tangents, wrt)])[len(fn.outputs):]
                for j, column in enumerate(out):
                    blocks[j][i][(Ellipsis, *index)] = column
        per_result = [b[0] if isinstance(argnums, int) else tuple(b) for b in blocks]
        return _one_or_tuple(per_result)

    jacobian._dfc_not_differentiable = "jacfwd"  # type: ignore[attr-defined]
    return jacobian


@user_errors
def linearize(f: Any, *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """`(f(*primals), f_jvp)` as `jax.linearize`: `f_jvp(*tangents)` is the
    Jacobian-vector product at `primals`. It reruns the compiled `@f_jvp` (the
    primal computation included) on each call, where JAX evaluates the primal
    part once: the same numbers, not JAX's cost."""
    f = _prepared(f)
    value, _ = jvp(f, primals, [np.zeros(np.shape(p)) for p in primals])

    def f_jvp(*tangents: Any) -> Any:
        return jvp(f, primals, tangents)[1]

    return value, f_jvp
