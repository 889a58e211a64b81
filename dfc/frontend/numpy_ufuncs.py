"""NumPy's ufunc methods and the functions built on them: `np.cumsum`,
`np.cumprod`, `ufunc.accumulate` (scans), `ufunc.reduce`, `ufunc.outer`; the
logical functions, `np.arctan2`, and NumPy scalar types called as casts
(`np.float64(x)`, `np.int32(n)`).

A scan is an `scf.for` along the axis carrying the result, whose body writes
`out[k] = out[k - 1] op out[k]` (a map over the other axes): linear work, and
differentiable as any loop of slice updates. `np.arctan2` is `nn.atan2` on the
broadcast operands (its backward rule is the op's)."""

from __future__ import annotations

import ast
import math
from typing import Any

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block
from xdsl.rewriter import InsertPoint

from dfc.dialects.nn_elementwise import Atan2Op
from dfc.frontend.affine import Affine
from dfc.frontend.arrays import Const, Expr, View, is_float, result_dtype
from dfc.frontend.emit import Emitter
from dfc.frontend.numpy_api import HANDLERS, astype, reduce
from dfc.frontend.numpy_args import Handler, axes_of, bind, dtype_of, expr_of, no_kwargs, static
from dfc.frontend.numpy_shapes import flat

SCANS = {np.add: "add", np.multiply: "mul", np.maximum: "maximum", np.minimum: "minimum", np.fmax: "maximum",
         np.fmin: "minimum"}
REDUCES = {np.add: "add", np.multiply: "mul", np.maximum: "max", np.minimum: "min", np.fmax: "max", np.fmin: "min"}


def scan(tr, op: str, e: Expr, axis: Any, dtype: str | None, node: ast.AST) -> Expr:
    """The running `op` of `e` along `axis` (None: of the flattened array)."""
    if axis is None:
        e, axis = flat(tr, e, node), Affine(0)
    if e.ndim == 0:
        raise tr.fail("a cumulative operation needs an array of rank 1 or more", node)
    k = axes_of(tr, axis, e.ndim, node)[0]
    if dtype is None:
        dtype = tr.em.concrete(e)
        if op in ("add", "mul") and not is_float(dtype):
            dtype = "i64"  # NumPy accumulates booleans and integers in int64
    n = tr.em.static(e, "a cumulatively reduced array")[k]
    init = tr.em.materialize(astype(tr, e, dtype, node) if dtype != e.dtype or e.weak else e, dtype)
    if n <= 1:
        return View.whole(init)
    block = Block(arg_types=[IndexType(), init.type])
    outer_b, outer_em = tr.b, tr.em
    tr.b = Builder(InsertPoint.at_end(block))
    tr.em = Emitter(tr.b, tr.default_float, outer_em.fail)
    try:
        iv, acc = block.args
        whole = View.whole(acc)
        cur = tr.index(whole, (slice(None),) * k + (Affine.of(iv),), node)
        prev = tr.index(whole, (slice(None),) * k + (Affine.of(iv) - 1,), node)
        tr.b.insert(scf.YieldOp(tr.em.assign(cur, tr.elementwise(op, [prev, cur], node, dtype))))
    finally:
        tr.b, tr.em = outer_b, outer_em
    bounds = [Affine(v).emit(tr.b) for v in (1, n, 1)]
    return View.whole(tr.b.insert(scf.ForOp(*bounds, [init], block)).results[0])


def _cumulative(op: str, what: str) -> Handler:
    def handler(tr, args, kwargs, node):
        a, axis, dtype, out = bind(tr, args, kwargs, node, what, ("a", "axis", "dtype", "out"), (None, None, None))
        if out is not None:
            raise tr.fail(f"{what} with out= is not supported (assign the result)", node)
        return scan(tr, op, expr_of(tr, a, node), axis, dtype_of(tr, dtype, node, None), node)

    return handler


def ufunc_method(tr, ufunc: np.ufunc, name: str, args: list, kwargs: dict, node: ast.AST) -> Any:
    """`np.add.reduce(x, axis=0)`, `np.maximum.accumulate(x)`, `np.minimum.outer(a, b)`."""
    what = f"np.{ufunc.__name__}.{name}"
    if name == "outer":
        no_kwargs(tr, kwargs, node)
        if len(args) != 2 or ufunc not in HANDLERS:
            raise tr.fail(f"{what} takes two arrays (of a binary ufunc the frontend translates)", node)
        a, b = (expr_of(tr, x, node) for x in args)
        a = tr.index(a, (slice(None),) * a.ndim + (None,) * b.ndim, node)
        return HANDLERS[ufunc](tr, [a, b], {}, node)
    if name == "reduce" and ufunc in (np.logical_and, np.logical_or):
        a, axis, keepdims = bind(tr, args, kwargs, node, what, ("array", "axis", "keepdims"), (0, False))
        e = astype(tr, expr_of(tr, a, node), "i1", node)
        return reduce(tr, "min" if ufunc is np.logical_and else "max", e, axis, keepdims, node)
    if name == "reduce" and ufunc in REDUCES:
        a, axis, dtype, out, keepdims = bind(tr, args, kwargs, node, what, ("array", "axis", "dtype", "out", "keepdims"),
                                             (0, None, None, False))
        if out is not None:
            raise tr.fail(f"{what} with out= is not supported (assign the result)", node)
        e = expr_of(tr, a, node)
        d = dtype_of(tr, dtype, node, None)
        return reduce(tr, REDUCES[ufunc], astype(tr, e, d, node) if d else e, axis, keepdims, node)
    if name == "accumulate" and ufunc in SCANS:
        a, axis, dtype, out = bind(tr, args, kwargs, node, what, ("array", "axis", "dtype", "out"), (0, None, None))
        if out is not None:
            raise tr.fail(f"{what} with out= is not supported (assign the result)", node)
        e = expr_of(tr, a, node)
        d = dtype_of(tr, dtype, node, None) or (tr.em.concrete(e) if SCANS[ufunc] in ("maximum", "minimum") else None)
        return scan(tr, SCANS[ufunc], e, axis, d, node)
    raise tr.fail(f"{what} is not supported (the frontend translates ufunc.outer of the ufuncs it knows, .reduce and "
                  ".accumulate of add, multiply, maximum, minimum, and .reduce of logical_and/or)", node)


def _logical(op: str) -> Handler:
    def handler(tr, args, kwargs, node):
        no_kwargs(tr, kwargs, node)
        want = 1 if op == "not" else 2
        if len(args) != want:
            raise tr.fail(f"np.logical_{op} takes {want} argument{'s' if want > 1 else ''}", node)
        values = [static(a) for a in args]
        if all(isinstance(v, bool | int | float) and v is not None for v in values):
            x = [bool(v) for v in values]
            return {"and": lambda: x[0] and x[1], "or": lambda: x[0] or x[1], "xor": lambda: x[0] != x[1],
                    "not": lambda: not x[0]}[op]()
        es = [astype(tr, expr_of(tr, a, node), "i1", node) for a in args]
        return tr.elementwise(op, es, node, "i1")

    return handler


def _arctan2(tr, args, kwargs, node):
    no_kwargs(tr, kwargs, node)
    if len(args) != 2:
        raise tr.fail("np.arctan2 takes two arguments (y, x)", node)
    y, x = (expr_of(tr, a, node) for a in args)
    if all(isinstance(e, Const) and not e.shape and e.weak for e in (y, x)):
        return Const(math.atan2(float(y.value), float(x.value)), "f64")
    dtype = result_dtype([y, x], floating=True)
    if y.weak and x.weak:
        dtype = tr.default_float
    tr.em.static(tr.elementwise("add", [y, x], node, dtype), "np.arctan2's result")  # they broadcast, statically
    return View.whole(tr.b.insert(Atan2Op(tr.em.materialize(y, dtype), tr.em.materialize(x, dtype))).result)


def scalar_type(tr, f: type, args: list, kwargs: dict, node: ast.AST) -> Expr:
    """`np.float64(x)`, `np.int32(n)`, ...: a cast, as NumPy's scalar types do (an array stays an array)."""
    from dfc.frontend.dtypes import dtype_from_numpy

    d = dtype_from_numpy(f)
    if d is None:
        raise tr.fail(f"NumPy type {f.__name__} is not supported (dtypes: bool, int32, int64, float16/32/64)", node)
    (x,) = bind(tr, args, kwargs, node, f"np.{f.__name__}", ("x",), (0,))
    number = static(x)
    if isinstance(number, bool | int | float) and number is not None:
        value = np.asarray(number).astype(f).item()
        return Const(value, d, False)
    return astype(tr, expr_of(tr, x, node), d, node)


UFUNC_HANDLERS: dict[Any, Handler] = {
    np.cumsum: _cumulative("add", "np.cumsum"), np.cumprod: _cumulative("mul", "np.cumprod"),
    np.logical_and: _logical("and"), np.logical_or: _logical("or"), np.logical_xor: _logical("xor"),
    np.logical_not: _logical("not"), np.arctan2: _arctan2,
}
