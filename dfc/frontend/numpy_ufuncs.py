"""NumPy's ufunc methods and the functions built on them: `np.cumsum`,
`np.cumprod`, `ufunc.accumulate` (scans), `ufunc.reduce`, `ufunc.outer`; the
logical functions and reductions (`np.any`, `np.all`, `np.count_nonzero`,
`np.argmax`, `np.argmin`), the comparison ufuncs, `np.isnan`/`isinf`/
`isfinite`, `np.mod`/`floor_divide`, the inverse trigonometric functions (on
`nn.atan2`), `np.tan`, `np.hypot`, `np.expm1`, `np.exp2`, degrees and radians,
and NumPy scalar types called as casts (`np.float64(x)`, `np.int32(n)`).

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
from dfc.frontend import scatter
from dfc.frontend.affine import Affine
from dfc.frontend.arrays import Const, Expr, Iota, View, is_float, is_unsigned, result_dtype
from dfc.frontend.emit import Emitter
from dfc.frontend.numpy_api import HANDLERS, astype, reduce
from dfc.frontend.numpy_args import Handler, axes_of, bind, dtype_of, expr_of, no_kwargs, static
from dfc.frontend.numpy_shapes import flat
from dfc.frontend.numpy_ufuncs_more import MORE_UFUNC_HANDLERS
from dfc.frontend.weak_ints import check_python_int, out_of_bounds

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
            dtype = "u64" if is_unsigned(dtype) else "i64"  # NumPy accumulates integers in (u)int64
    n = e.shape[k]  # a run-time size too: the loop runs over it
    init = tr.em.materialize(astype(tr, e, dtype, node) if dtype != e.dtype or e.weak else e, dtype)
    if n.static is not None and n.static <= 1:
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
    bounds = [Affine.of(v).emit(tr.b) for v in (1, n, 1)]
    return View.whole(tr.b.insert(scf.ForOp(*bounds, [init], block)).results[0])


def _cumulative(op: str, what: str) -> Handler:
    def handler(tr, args, kwargs, node):
        a, axis, dtype, out = bind(tr, args, kwargs, node, what, ("a", "axis", "dtype", "out"), (None, None, None))
        if out is not None:
            raise tr.fail(f"{what} with out= is not supported (assign the result)", node)
        return scan(tr, op, expr_of(tr, a, node), axis, dtype_of(tr, dtype, node, None), node)

    return handler


def ufunc_method(tr, ufunc: np.ufunc, name: str, args: list, kwargs: dict, node: ast.AST, handlers: dict) -> Any:
    """`np.add.reduce(x, axis=0)`, `np.maximum.accumulate(x)`, `np.minimum.outer(a, b)` (`handlers`: the
    translated functions, whose binary ufuncs `.outer` applies)."""
    what = f"np.{ufunc.__name__}.{name}"
    if name == "at":
        return scatter.ufunc_at(tr, ufunc, args, kwargs, node)
    if name == "outer":
        no_kwargs(tr, kwargs, node)
        if len(args) != 2 or ufunc not in handlers:
            raise tr.fail(f"{what} takes two arrays (of a binary ufunc the frontend translates)", node)
        a, b = (expr_of(tr, x, node) for x in args)
        a = tr.index(a, (slice(None),) * a.ndim + (None,) * b.ndim, node)
        return handlers[ufunc](tr, [a, b], {}, node)
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
        raise tr.fail(f"NumPy type {f.__name__} is not supported (dtypes: bool, int8-int64, uint8-uint64, float16/32/64)", node)
    (x,) = bind(tr, args, kwargs, node, f"np.{f.__name__}", ("x",), (0,))
    number = static(x)
    if isinstance(number, bool | int | float) and number is not None:
        if type(number) is int and (message := out_of_bounds(number, d)):  # np.int8(300): NumPy's OverflowError
            raise tr.fail(message, node)
        value = np.asarray(number).astype(f).item()
        return Const(value, d, False)
    e = expr_of(tr, x, node)
    check_python_int(tr, e, d, node)
    return astype(tr, e, d, node)


def _compare(name: str) -> Handler:
    def handler(tr, args, kwargs, node):
        no_kwargs(tr, kwargs, node)
        if len(args) != 2:
            raise tr.fail(f"np.{name} takes two arguments", node)
        return tr.compare(name, args[0], args[1], node)

    return handler


_NUMPY_COMPARE = {np.greater: "gt", np.greater_equal: "ge", np.less: "lt", np.less_equal: "le", np.equal: "eq",
                  np.not_equal: "ne"}


def _float_test(kind: str) -> Handler:
    """np.isnan (x != x), np.isinf (|x| == inf), np.isfinite (|x| < inf: false for NaN)."""

    def handler(tr, args, kwargs, node):
        (x,) = bind(tr, args, kwargs, node, f"np.{kind}", ("x",))
        e = expr_of(tr, x, node)
        if kind == "isnan":
            return tr.compare("ne", e, e, node)
        a = tr.elementwise("abs", [e], node, e.dtype if not e.weak else tr.em.concrete(e))
        return tr.compare("eq" if kind == "isinf" else "lt", a, Const(math.inf, "f64"), node)

    return handler


def _arith(op: str, what: str) -> Handler:
    def handler(tr, args, kwargs, node):
        no_kwargs(tr, kwargs, node)
        if len(args) != 2:
            raise tr.fail(f"{what} takes two arguments", node)
        return tr.binop(op, args[0], args[1], node)

    return handler


def invert(tr, v: Any, node: ast.AST) -> Any:
    """`~v` as NumPy computes it: logical not of booleans, bitwise not (`v ^ -1`) of integers."""
    if isinstance(v, Affine):
        return -v - 1
    e = expr_of(tr, v, node)
    if e.dtype == "i1":
        return tr.elementwise("not", [e], node, "i1")
    if is_float(e.dtype):
        raise tr.fail("~ (np.invert) needs integer or boolean operands (NumPy refuses floats)", node)
    return tr.elementwise("xor", [e, Const(-1, e.dtype)], node)


def _invert(tr, args, kwargs, node):
    (x,) = bind(tr, args, kwargs, node, "np.invert", ("x",))
    return invert(tr, x, node)


def _one(tr, args, kwargs, node, what: str) -> Expr:
    (x,) = bind(tr, args, kwargs, node, what, ("x",))
    e = expr_of(tr, x, node)
    return e if is_float(e.dtype) else astype(tr, e, "f64", node)


def _call(tr, f, *args, node) -> Any:
    return HANDLERS[f](tr, list(args), {}, node)


def _inverse_trig(kind: str) -> Handler:
    """np.arctan(x) = atan2(x, 1), np.arcsin(x) = atan2(x, sqrt((1 - x)(1 + x))), np.arccos(x) = atan2(sqrt(...), x)
    (NaN outside [-1, 1], as NumPy): nn.atan2 and its backward rule."""

    def handler(tr, args, kwargs, node):
        e = _one(tr, args, kwargs, node, f"np.{kind}")
        one = Const(1.0, "f64")
        if kind == "arctan":
            return _arctan2(tr, [e, one], {}, node)
        c = _call(tr, np.sqrt, tr.binop("mul", tr.binop("sub", one, e, node), tr.binop("add", one, e, node), node), node=node)
        return _arctan2(tr, [e, c] if kind == "arcsin" else [c, e], {}, node)

    return handler


def _tan(tr, args, kwargs, node):
    e = _one(tr, args, kwargs, node, "np.tan")
    return tr.binop("div", _call(tr, np.sin, e, node=node), _call(tr, np.cos, e, node=node), node)


def _hypot(tr, args, kwargs, node):
    """m * sqrt(1 + (n / m)^2) with m, n the larger and smaller magnitude: no overflow or underflow where
    x^2 + y^2 would (1e308, 1e-310); 0 where both are 0, inf where either is infinite (a NaN in the other too)."""
    x, y = bind(tr, args, kwargs, node, "np.hypot", ("x1", "x2"))
    x, y = (expr_of(tr, v, node) for v in (x, y))
    if not (is_float(x.dtype) or is_float(y.dtype)):
        x, y = (astype(tr, v, "f64", node) for v in (x, y))
    a, b = (Const(abs(v.value), v.dtype, v.weak) if isinstance(v, Const) and not v.shape  # a weak number stays weak
            else _call(tr, np.abs, v, node=node) for v in (x, y))
    m, n = (tr.binop(f, a, b, node) for f in ("maximum", "minimum"))
    q = tr.binop("div", n, m, node)
    r = tr.binop("mul", m, _call(tr, np.sqrt, tr.binop("add", Const(1.0, "f64"), tr.binop("mul", q, q, node), node),
                                 node=node), node)
    r = tr.elementwise("where", [tr.as_expr(tr.compare("eq", m, Const(0.0, "f64"), node), node), m, r], node, r.dtype)
    infinite = tr.elementwise("or", [tr.as_expr(tr.compare("eq", v, Const(float("inf"), "f64"), node), node)
                                     for v in (a, b)], node, "i1")
    return tr.elementwise("where", [infinite, Const(float("inf"), "f64"), r], node, r.dtype)


def _expm1(tr, args, kwargs, node):
    """exp(x) - 1: 2t / (1 - t) with t = tanh(x / 2) for |x| < 0.5 (no cancellation near 0), exp(x) - 1
    elsewhere (where 1 - t loses digits, and is 0 from |x| ~ 37 on)."""
    e = _one(tr, args, kwargs, node, "np.expm1")
    t = _call(tr, np.tanh, tr.binop("mul", e, Const(0.5, "f64"), node), node=node)
    near = tr.binop("div", tr.binop("mul", t, Const(2.0, "f64"), node), tr.binop("sub", Const(1.0, "f64"), t, node), node)
    far = tr.binop("sub", _call(tr, np.exp, e, node=node), Const(1.0, "f64"), node)
    small = tr.as_expr(tr.compare("lt", _call(tr, np.abs, e, node=node), Const(0.5, "f64"), node), node)
    return tr.elementwise("where", [small, near, far], node, near.dtype)


def _exp2(tr, args, kwargs, node):
    """2.0 ** x (libm's pow: exp(x ln 2) is off by |x| ulp)."""
    e = _one(tr, args, kwargs, node, "np.exp2")
    return tr.binop("pow", Const(2.0, "f64"), e, node)


def _scaled(factor: float, what: str) -> Handler:
    def handler(tr, args, kwargs, node):
        return tr.binop("mul", _one(tr, args, kwargs, node, what), Const(factor, "f64"), node)

    return handler


def logical_reduce(tr, kind: str, e: Expr, axis: Any, keepdims: Any, node: ast.AST) -> Expr:
    """np.any (kind 'max') / np.all ('min') of `e` as booleans (of nothing: False / True)."""
    from dfc.frontend.numpy_args import keepdims_of

    axes = axes_of(tr, axis, e.ndim, node)
    if any(e.shape[k].static == 0 for k in axes):
        keep = keepdims_of(tr, keepdims, node)
        shape = [Affine(1) if k in axes else d for k, d in enumerate(e.shape) if keep or k not in axes]
        return Const(kind == "min", "i1", False, shape)
    return reduce(tr, kind, astype(tr, e, "i1", node), axis, keepdims, node)


def _any_all(kind: str, what: str) -> Handler:
    def handler(tr, args, kwargs, node):
        a, axis, out, keepdims = bind(tr, args, kwargs, node, what, ("a", "axis", "out", "keepdims"), (None, None, False))
        if out is not None:
            raise tr.fail(f"{what} with out= is not supported (assign the result)", node)
        return logical_reduce(tr, kind, expr_of(tr, a, node), axis, keepdims, node)

    return handler


def _count_nonzero(tr, args, kwargs, node):
    a, axis, keepdims = bind(tr, args, kwargs, node, "np.count_nonzero", ("a", "axis", "keepdims"), (None, False))
    return reduce(tr, "add", astype(tr, expr_of(tr, a, node), "i1", node), axis, keepdims, node)


def arg_extremum(tr, kind: str, e: Expr, axis: Any, keepdims: Any, node: ast.AST) -> Expr:
    """np.argmax / np.argmin: the first index of the extremum along `axis` (None: of the flattened array), or of
    the first NaN, as NumPy: the minimum index where the element equals the reduction or is NaN."""
    from dfc.frontend.numpy_args import keepdims_of

    keep = keepdims_of(tr, keepdims, node)
    if axis is None:
        if keep:
            raise tr.fail("np.argmax/argmin with keepdims needs an axis", node)
        e, axis = flat(tr, e, node), Affine(0)
    if e.ndim == 0:
        raise tr.fail("np.argmax/argmin of a 0-d array", node)
    k = axes_of(tr, axis, e.ndim, node)[0]
    n = e.shape[k]
    if n.static == 0:
        raise tr.fail("np.argmax/argmin of an empty sequence", node)
    e = View.whole(tr.em.materialize(e))
    best = reduce(tr, "max" if kind == "argmax" else "min", e, Affine(k), True, node)  # (empty: an IndexError)
    hit = tr.compare("eq", e, best, node)
    if is_float(e.dtype):
        hit = tr.elementwise("or", [hit, tr.compare("ne", e, e, node)], node, "i1")
    at = tr.index(Iota(Affine(0), 1, n), tuple(slice(None) if j == k else None for j in range(e.ndim)), node)
    first = tr.elementwise("where", [hit, at, tr.as_expr(n, node)], node, "i64")
    return reduce(tr, "min", first, Affine(k), keep, node)


def _arg(kind: str) -> Handler:
    def handler(tr, args, kwargs, node):
        a, axis, out, keepdims = bind(tr, args, kwargs, node, f"np.{kind}", ("a", "axis", "out", "keepdims"),
                                      (None, None, False))
        if out is not None:
            raise tr.fail(f"np.{kind} with out= is not supported (assign the result)", node)
        return arg_extremum(tr, kind, expr_of(tr, a, node), axis, keepdims, node)

    return handler


def _method(handler: Handler) -> Handler:
    return lambda tr, e, args, kwargs, node: handler(tr, [e, *args], kwargs, node)


UFUNC_METHODS: dict[str, Handler] = {
    "any": _method(_any_all("max", ".any()")), "all": _method(_any_all("min", ".all()")),
    "argmax": _method(_arg("argmax")), "argmin": _method(_arg("argmin")),
}

UFUNC_HANDLERS: dict[Any, Handler] = {
    **{f: _compare(name) for f, name in _NUMPY_COMPARE.items()},
    np.isnan: _float_test("isnan"), np.isinf: _float_test("isinf"), np.isfinite: _float_test("isfinite"),
    np.mod: _arith("mod", "np.mod"), np.floor_divide: _arith("floordiv", "np.floor_divide"),
    np.arctan: _inverse_trig("arctan"), np.arcsin: _inverse_trig("arcsin"), np.arccos: _inverse_trig("arccos"),
    np.tan: _tan, np.hypot: _hypot, np.expm1: _expm1, np.exp2: _exp2,
    np.deg2rad: _scaled(math.pi / 180, "np.deg2rad"), np.radians: _scaled(math.pi / 180, "np.radians"),
    np.rad2deg: _scaled(180 / math.pi, "np.rad2deg"), np.degrees: _scaled(180 / math.pi, "np.degrees"),
    np.any: _any_all("max", "np.any"), np.all: _any_all("min", "np.all"), np.count_nonzero: _count_nonzero,
    np.argmax: _arg("argmax"), np.argmin: _arg("argmin"),
    np.cumsum: _cumulative("add", "np.cumsum"), np.cumprod: _cumulative("mul", "np.cumprod"),
    np.logical_and: _logical("and"), np.logical_or: _logical("or"), np.logical_xor: _logical("xor"),
    np.logical_not: _logical("not"), np.arctan2: _arctan2,
    np.bitwise_and: _arith("and", "np.bitwise_and"), np.bitwise_or: _arith("or", "np.bitwise_or"),
    np.bitwise_xor: _arith("xor", "np.bitwise_xor"), np.left_shift: _arith("lshift", "np.left_shift"),
    np.right_shift: _arith("rshift", "np.right_shift"), np.invert: _invert, **MORE_UFUNC_HANDLERS,
}
