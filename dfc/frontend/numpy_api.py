"""The NumPy functions, array methods and builtins the frontend translates:
elementwise functions, reductions and creation (numpy_calls.py merges this
table with those of numpy_ufuncs.py and numpy_creation.py and dispatches calls).

Each is a function of the translator, its evaluated arguments and the call's
AST node, returning a lazy array (`arrays.py`), an integer or a tuple.
Elementwise functions build `Op` nodes; reductions, contractions and shape
changes go through the `Emitter` (maps, `nn.dot_general`, `nn.reduce`,
`nn.reshape`, `nn.concatenate`).
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from dfc.frontend.affine import Affine
from dfc.frontend.arrays import (
    EXACT_FLOAT,
    Const,
    Expr,
    Iota,
    View,
    is_float,
    is_unsigned,
    result_dtype,
)
from dfc.frontend.numpy_args import (
    MISSING,
    Handler,
    astype,
    axes_of,
    bind,
    check_order,
    condition_of,
    count_of,
    dtype_of,
    expr_of,
    fill_value,
    fresh,
    keepdims_of,
    no_kwargs,
    static,
)
from dfc.frontend.numpy_linalg import LINALG_HANDLERS
from dfc.frontend.numpy_linalg_stacked import STACKED_LINALG_HANDLERS
from dfc.frontend.numpy_shapes import SHAPE_HANDLERS, diag_args, diagonal, flat, reshape, shape_of, transpose
from dfc.frontend.numpy_sort import SORT_HANDLERS, SORT_METHODS
from dfc.frontend.numpy_svd import SVD_HANDLERS, singular
from dfc.frontend.weak_ints import check_python_int

UNARY = {
    np.exp: "exp", np.log: "log", np.sqrt: "sqrt", np.tanh: "tanh", np.sin: "sin", np.cos: "cos",
    np.abs: "abs", np.absolute: "abs", np.fabs: "abs", np.log1p: "log1p", np.floor: "floor", np.ceil: "ceil",
    np.rint: "rint",
    np.negative: "neg", np.sign: "sign", math.exp: "exp", math.log: "log", math.sqrt: "sqrt", math.tanh: "tanh",
    math.sin: "sin", math.cos: "cos", math.fabs: "abs", math.log1p: "log1p", math.floor: "floor", math.ceil: "ceil",
    builtins.abs: "abs", math.erf: "erf",
}
BINARY = {np.add: "add", np.subtract: "sub", np.multiply: "mul", np.divide: "div", np.true_divide: "div",
          np.power: "pow", np.maximum: "maximum", np.minimum: "minimum", np.fmax: "maximum", np.fmin: "minimum",
          math.pow: "pow"}
REDUCTIONS = {np.sum: "add", np.max: "max", np.amax: "max", np.min: "min", np.amin: "min", np.prod: "mul",
              np.mean: "mean"}
METHOD_REDUCTIONS = {"sum": "add", "max": "max", "min": "min", "prod": "mul", "mean": "mean"}
METHOD_MOMENTS = ("var", "std")


def _unary(name: str, function: Callable | None = None) -> Handler:
    def handler(tr, args, kwargs, node):
        no_kwargs(tr, kwargs, node)
        if len(args) != 1:
            raise tr.fail(f"{name} takes one argument", node)
        if name == "abs" and isinstance(args[0], Affine) and args[0].static is not None:
            return Affine(abs(args[0].static))
        number = args[0].static if isinstance(args[0], Affine) else (
            args[0].value if isinstance(args[0], Const) and not args[0].shape and args[0].weak else
            args[0] if isinstance(args[0], int | float) else None)
        if function is not None and number is not None:  # folded, with NumPy's result type
            value = function(number)
            weak = not isinstance(value, np.generic)
            return Const(float(value), "f64", weak) if isinstance(value, float | np.floating) else Affine(int(value))
        e = expr_of(tr, args[0], node)
        python_math = getattr(function, "__module__", None) == "math"
        if python_math and name in ("floor", "ceil"):  # Python's math.floor/ceil give an int
            return astype(tr, tr.elementwise(name, [astype(tr, e, "f64", node)], node, "f64"), "i64", node)
        if name in ("floor", "ceil") and not is_float(e.dtype):
            return fresh(e)  # NumPy 2 keeps integers and booleans as they are
        floating = name not in ("abs", "neg", "sign") or is_float(e.dtype) or python_math or function is np.fabs
        dtype = result_dtype([e], floating)
        if e.weak and is_float(dtype):
            dtype = tr.default_float
        if floating and not python_math and e.dtype in ("i8", "i16", "u8", "u16"):
            dtype = EXACT_FLOAT[e.dtype]  # NumPy: np.sqrt of int8 is float16
        if name == "sign":
            return _sign(tr, e, dtype, node)
        return tr.elementwise(name, [e], node, dtype)

    return handler


def _sign(tr, e: Expr, dtype: str, node: ast.AST) -> Expr:
    """NumPy's sign: -1, 0 or 1 (integers too), NaN for NaN."""
    if dtype == "i1":
        raise tr.fail("np.sign of booleans is not defined", node)
    if not is_float(dtype):
        return tr.elementwise("sub", [astype(tr, condition_of(tr, tr.compare("gt", e, Const(0, "i64"), node), node), dtype, node),
                                      astype(tr, condition_of(tr, tr.compare("lt", e, Const(0, "i64"), node), node), dtype, node)],
                              node, dtype)
    nan = condition_of(tr, tr.compare("ne", e, e, node), node)
    return tr.elementwise("where", [nan, e, tr.elementwise("sign", [e], node, dtype)], node, dtype)


def _binary(name: str) -> Handler:
    def handler(tr, args, kwargs, node):
        no_kwargs(tr, kwargs, node)
        if len(args) != 2:
            raise tr.fail(f"{name} takes two arguments", node)
        return tr.binop(name, args[0], args[1], node) if name in ("add", "sub", "mul", "div", "pow") else \
            tr.elementwise(name, [expr_of(tr, a, node) for a in args], node)

    return handler


def _fmaxmin(kind: str) -> Handler:
    """np.fmax / np.fmin: like maximum / minimum, but a NaN loses to a number (C's fmax: x if x >= y or y is NaN)."""

    def handler(tr, args, kwargs, node):
        no_kwargs(tr, kwargs, node)
        if len(args) != 2:
            raise tr.fail(f"np.f{kind[:3]} takes two arguments", node)
        x, y = (expr_of(tr, a, node) for a in args)
        dtype = result_dtype([x, y])
        if x.weak and y.weak and is_float(dtype):
            dtype = tr.default_float
        if not is_float(dtype):
            return tr.elementwise(kind, [x, y], node)
        keep = tr.elementwise("or", [condition_of(tr, tr.compare("ge" if kind == "maximum" else "le", x, y, node), node),
                                     condition_of(tr, tr.compare("ne", y, y, node), node)], node, "i1")
        return tr.elementwise("where", [keep, x, y], node, dtype)

    return handler


def _with_first(tr, kind: str, e: Expr, axes: list[int], keep: bool, result: Expr, node: ast.AST) -> Expr:
    """The max/min `result` over axes of run-time size combined with the first element along them: the same
    values, with a read that is out of bounds where a size is 0 (an `IndexError` at run time, where NumPy
    raises its ValueError: such a reduction has no identity)."""
    first = tr.index(e, tuple(Affine(0) if k in axes else slice(None) for k in range(e.ndim)), node)
    if keep:
        first = tr.index(first, tuple(None if k in axes else slice(None) for k in range(e.ndim)), node)
    return tr.elementwise("maximum" if kind == "max" else "minimum", [result, first], node)


def reduce(tr, kind: str, e: Expr, axis: Any, keepdims: Any, node: ast.AST) -> Expr:
    axes = axes_of(tr, axis, e.ndim, node)
    keep = keepdims_of(tr, keepdims, node)
    if kind == "mean" and not is_float(e.dtype):
        e = astype(tr, e, "f64", node)  # NumPy's mean of integers is float64
    elif kind in ("add", "mul") and not is_float(e.dtype):
        # NumPy sums and multiplies booleans and integers in int64 (unsigned ones in uint64); the conversion
        # also keeps a whole integer array off nn.reduce, which takes floats only
        e = tr.elementwise("convert", [e], node, "u64" if is_unsigned(e.dtype) else "i64")
    if not axes:
        return fresh(e)
    if kind in ("max", "min"):
        if any(e.shape[k].static == 0 for k in axes):
            raise tr.fail(f"np.{kind} of an empty array (a reduction without identity) is not defined", node)
        if e.dtype == "i1":  # any / not any(not e): booleans stay booleans
            flip = (lambda v: tr.elementwise("not", [v], node, "i1")) if kind == "min" else (lambda v: v)
            return flip(astype(tr, tr.em.reduce(flip(e), axes, "max", keep), "i1", node))
        if any(e.shape[k].static is None for k in axes):
            return _with_first(tr, kind, e, axes, keep, tr.em.reduce(e, axes, kind, keep), node)
    if kind == "mean":
        total = tr.em.reduce(e, axes, "add", keep)
        return tr.elementwise("div", [total, tr.as_expr(count_of(tr, e, axes, node, "np.mean"), node)], node)
    return tr.em.reduce(e, axes, kind, keep)


def _reduction(kind: str) -> Handler:
    def handler(tr, args, kwargs, node):
        x, axis, keepdims = bind(tr, args, kwargs, node, "a reduction", ("a", "axis", "keepdims"), (None, False))
        if len(args) > 2:
            raise tr.fail("a reduction takes an array and an optional axis (keepdims by keyword)", node)
        return reduce(tr, kind, expr_of(tr, x, node), axis, keepdims, node)

    return handler


def _broadcast(tr, e: Expr, shape: list[Affine], dtype: str, node: ast.AST) -> Expr:
    """`e` converted to `dtype` and broadcast to `shape` (a fill value)."""
    zero = Const(False if dtype == "i1" else 0, dtype, False, shape)
    r = tr.elementwise("or" if dtype == "i1" else "add", [zero, astype(tr, e, dtype, node)], node, dtype)
    if r.shape != shape:
        raise tr.fail(f"a fill value of shape ({', '.join(map(str, e.shape))}) does not broadcast to the array's shape", node)
    return r


def _filled(value: float | None) -> Handler:
    def handler(tr, args, kwargs, node):
        if value is not None:
            shape_arg, dtype = bind(tr, args, kwargs, node, "np.zeros/ones/empty", ("shape", "dtype"), (None,))
        else:
            shape_arg, fill, dtype = bind(tr, args, kwargs, node, "np.full", ("shape", "fill_value", "dtype"), (None,))
        shape = [Affine(d) for d in shape_of(tr, shape_arg, node)]
        if value is not None:
            d = dtype_of(tr, dtype, node, "f64")
            return Const(fill_value(tr, value, d, node), d, False, shape)
        number = static(fill)
        if number is not MISSING and number is not None and not isinstance(number, str):
            default = "i1" if isinstance(number, bool) else "i64" if isinstance(number, int) else "f64"
            if isinstance(fill, Const) and not fill.weak:
                default = fill.dtype
            d = dtype_of(tr, dtype, node, default)
            return Const(fill_value(tr, number, d, node), d, False, shape)
        e = expr_of(tr, fill, node)  # a run-time value, broadcast
        return _broadcast(tr, e, shape, dtype_of(tr, dtype, node, tr.em.concrete(e)), node)

    return handler


def _filled_like(value: float | None) -> Handler:
    def handler(tr, args, kwargs, node):
        if value is not None:
            a, dtype = bind(tr, args, kwargs, node, "np.zeros_like/ones_like/empty_like", ("a", "dtype"), (None,))
        else:
            a, fill, dtype = bind(tr, args, kwargs, node, "np.full_like", ("a", "fill_value", "dtype"), (None,))
        e = expr_of(tr, a, node)
        d = dtype_of(tr, dtype, node, tr.em.concrete(e))
        number = value if value is not None else static(fill)
        if number is MISSING or number is None:
            return _broadcast(tr, expr_of(tr, fill, node), list(e.shape), d, node)  # a run-time fill value
        return Const(fill_value(tr, number, d, node), d, False, list(e.shape))

    return handler


def _copy(tr, args, kwargs, node):
    a, _order_ignored = bind(tr, args, kwargs, node, "np.copy", ("a", "order"), (None,))
    e = expr_of(tr, a, node)
    return View.whole(tr.em.materialize(e))  # a value: later updates of either do not affect the other


def _array(tr, args, kwargs, node):
    a, dtype, _copy_flag, _order_ignored, ndmin = bind(tr, args, kwargs, node, "np.array",
                                                         ("object", "dtype", "copy", "order", "ndmin"),
                                                         (None, True, None, 0))
    if static(ndmin) != 0:
        raise tr.fail("np.array with ndmin is not supported", node)
    d = dtype_of(tr, dtype, node, None)
    e = sequence(tr, a, d, node) if isinstance(a, tuple) else expr_of(tr, a, node)
    return View.whole(tr.em.materialize(astype(tr, e, d, node) if d else e))


def _asarray(tr, args, kwargs, node):
    a, dtype, _order_ignored = bind(tr, args, kwargs, node, "np.asarray", ("a", "dtype", "order"), (None, None))
    d = dtype_of(tr, dtype, node, None)
    e = sequence(tr, a, d, node) if isinstance(a, tuple) else expr_of(tr, a, node)
    return astype(tr, e, d, node) if d else e


def sequence(tr, items: tuple, dtype: str | None, node: ast.AST) -> Expr:
    """`np.array([...], dtype)` of a list or tuple (nested ones too) of numbers and arrays of one shape: the
    elements, each as `dtype` (None: the dtype NumPy gives them, a Python int counting as int64 and a float as
    float64), stacked along a new first axis. A Python int outside `dtype` is NumPy's OverflowError."""
    parts = [sequence(tr, x, dtype, node) if isinstance(x, tuple) else expr_of(tr, x, node) for x in items]
    if not parts:
        raise tr.fail("np.array of an empty list is not supported (its shape would be (0,): use np.zeros(0))", node)
    strong = [dataclasses.replace(p, weak=False) if isinstance(p, Const) else p for p in parts]
    dtype = dtype or result_dtype(strong)
    for p in parts:
        check_python_int(tr, p, dtype, node)
    return SHAPE_HANDLERS[np.stack](tr, [tuple(astype(tr, p, dtype, node) for p in parts)], {}, node)


def _arange(tr, args, kwargs, node):
    no_kwargs(tr, kwargs, node, ("dtype",))
    dtype = kwargs.get("dtype")
    if len(args) == 4:
        *args, dtype = args
    if not 1 <= len(args) <= 3:
        raise tr.fail("np.arange takes one to three integers (start, stop, step) and a dtype", node)
    ints = [tr.integer(a, node) for a in args]
    start, stop, step = (Affine(0), ints[0], 1) if len(ints) == 1 else (ints[0], ints[1], ints[2].static if len(ints) > 2 else 1)
    if step is None or step <= 0:
        raise tr.fail("np.arange needs a positive constant step", node)
    size = stop - start
    if size.static is not None:
        size = Affine(max(0, -(-size.static // step)))
    elif step != 1:
        raise tr.fail("np.arange with a loop-dependent size needs step 1", node)
    e: Expr = Iota(start, step, size)
    d = dtype_of(tr, dtype, node, None)
    return astype(tr, e, d, node) if d else e


def _where(tr, args, kwargs, node):
    no_kwargs(tr, kwargs, node)
    if len(args) != 3:
        raise tr.fail("np.where needs three arguments (the one-argument form gives data-dependent shapes)", node)
    c, x, y = (expr_of(tr, a, node) for a in args)
    dtype = result_dtype([x, y])
    if x.weak and y.weak and is_float(dtype):
        dtype = tr.default_float
    if c.dtype != "i1":
        c = astype(tr, c, "i1", node)
    return tr.elementwise("where", [c, x, y], node, dtype)


def _clip(tr, args, kwargs, node):
    """np.clip: minimum(maximum(a, a_min), a_max); a None bound is not applied."""
    for new, old in (("min", "a_min"), ("max", "a_max")):  # NumPy 2.1 spellings
        if new in kwargs:
            kwargs = {(old if k == new else k): v for k, v in kwargs.items()}
    x, lo, hi = bind(tr, args, kwargs, node, "np.clip", ("a", "a_min", "a_max"), (None, None))
    r = fresh(expr_of(tr, x, node))
    if lo is not None:
        r = tr.elementwise("maximum", [r, expr_of(tr, lo, node)], node)
    if hi is not None:
        r = tr.elementwise("minimum", [r, expr_of(tr, hi, node)], node)
    return r


def _square(tr, args, kwargs, node):
    (x,) = bind(tr, args, kwargs, node, "np.square", ("x",))
    if expr_of(tr, x, node).dtype == "i1":
        raise tr.fail("np.square of booleans (int8 in NumPy) is not supported", node)
    return tr.binop("mul", x, x, node)


def _reciprocal(tr, args, kwargs, node):
    (x,) = bind(tr, args, kwargs, node, "np.reciprocal", ("x",))
    e = expr_of(tr, x, node)
    if not is_float(e.dtype):
        raise tr.fail("np.reciprocal of integers is an integer division in NumPy; convert with .astype(float)", node)
    return tr.binop("div", Const(1.0, "f64"), e, node)


def _trace(tr, args, kwargs, node):
    e, k = diag_args(tr, args, kwargs, node, "np.trace")
    return reduce(tr, "add", diagonal(tr, e, node, k), None, False, node)


def _len(tr, args, kwargs, node):
    (e,) = bind(tr, args, kwargs, node, "len()", ("obj",))
    if isinstance(e, tuple):
        return Affine(len(e))
    e = expr_of(tr, e, node)
    if not e.ndim:
        raise tr.fail("len() of a scalar", node)
    return e.shape[0]


def _minmax(kind: str) -> Handler:
    """Python's max/min: of several numbers (or arrays, elementwise), of a tuple, or of a vector's
    elements. As in Python, an argument replaces the result only if greater (less): a NaN first stays."""

    def handler(tr, args, kwargs, node):
        no_kwargs(tr, kwargs, node)
        if len(args) == 1 and isinstance(args[0], tuple):
            args = list(args[0])
        if not args:
            raise tr.fail(f"{kind[:3]}() of nothing", node)
        if len(args) == 1:
            e = expr_of(tr, args[0], node)
            if e.ndim != 1:
                raise tr.fail(f"{kind[:3]}() of one argument takes a vector (or a tuple)", node)
            return reduce(tr, kind[:3], e, None, False, node)
        if all(isinstance(a, Affine) for a in args):
            if all(a.static is not None for a in args):
                return Affine((max if kind == "maximum" else min)(a.static for a in args))
        result = expr_of(tr, args[0], node)
        for a in args[1:]:
            b = expr_of(tr, a, node)
            if not is_float(result_dtype([result, b])):
                result = tr.elementwise(kind, [result, b], node)
                continue
            dtype = result_dtype([result, b])
            if result.weak and b.weak:
                dtype = tr.default_float
            replace = condition_of(tr, tr.compare("gt" if kind == "maximum" else "lt", b, result, node), node)
            result = tr.elementwise("where", [replace, b, result], node, dtype)
        return result

    return handler


def _float(tr, args, kwargs, node):
    (x,) = bind(tr, args, kwargs, node, "float()", ("x",))
    e = expr_of(tr, x, node)
    if e.ndim:
        raise tr.fail("float() of an array", node)
    if isinstance(e, Const):
        return Const(float(e.value), "f64")
    return astype(tr, e, "f64" if not is_float(e.dtype) else e.dtype, node)


def _int(tr, args, kwargs, node):
    (v,) = bind(tr, args, kwargs, node, "int()", ("x",))
    if isinstance(v, Affine):
        return v
    number = static(v)
    if isinstance(number, bool | int | float):
        return Affine(int(number))
    raise tr.fail("int() of a run-time float is not supported (it would make a data-dependent index)", node)


def _norm(tr, args, kwargs, node):
    """np.linalg.norm: the 2-norm (sqrt(sum(x**2))) of a vector or over `axis`, the Frobenius norm of a
    matrix (ord None or 'fro'; 2, -2 and 'nuc' of the singular values), and of vectors ord 1 (sum |x|), inf
    (max |x|), -inf (min |x|), 0 (nonzeros)."""
    x, order, axis, keepdims = bind(tr, args, kwargs, node, "np.linalg.norm", ("x", "ord", "axis", "keepdims"),
                                     (None, None, False))
    e = expr_of(tr, x, node)
    if not is_float(e.dtype):
        e = astype(tr, e, "f64", node)
    o = static(order)
    axes = axes_of(tr, axis, e.ndim, node)
    vector = axis is not None and len(axes) == 1 or axis is None and e.ndim == 1
    if o is None or o == "fro" and not vector or o in (2, 2.0) and vector:
        return tr.elementwise("sqrt", [reduce(tr, "add", tr.binop("mul", e, e, node), axis, keepdims, node)], node)
    if vector and o in (1, 1.0):
        return reduce(tr, "add", tr.elementwise("abs", [e], node), axis, keepdims, node)
    if vector and o in (math.inf, -math.inf):
        return reduce(tr, "max" if o > 0 else "min", tr.elementwise("abs", [e], node), axis, keepdims, node)
    if axis is None and e.ndim == 2 and o in (2, -2, "nuc"):  # of the singular values (numpy_svd.py)
        s = singular(tr, e, node, "np.linalg.norm")
        last = s.shape[0] - 1
        value = reduce(tr, "add", s, None, False, node) if o == "nuc" else tr.index(s, (0 if o == 2 else last,), node)
        return tr.index(value, (None, None), node) if static(keepdims) else value
    if vector and o in (0, 0.0):
        nonzero = astype(tr, condition_of(tr, tr.compare("ne", e, Const(0.0, "f64"), node), node), e.dtype, node)
        return reduce(tr, "add", nonzero, axis, keepdims, node)
    shown = o if o is not MISSING else "..."
    raise tr.fail(f"np.linalg.norm with ord={shown} of {'a vector' if vector else 'a matrix'} is not supported "
                  "(vectors: None, 1, 2, inf, -inf, 0; matrices: None, 'fro', 2, -2, 'nuc')", node)


def moment(tr, kind: str, e: Expr, axis: Any, ddof: Any, keepdims: Any, node: ast.AST) -> Expr:
    """np.var / np.std: sum((e - mean)**2) / (n - ddof), its square root."""
    if not is_float(e.dtype):
        e = astype(tr, e, "f64", node)
    dof = tr.integer(ddof, node).static
    if dof is None:
        raise tr.fail(f"np.{kind} needs a constant ddof", node)
    axes = axes_of(tr, axis, e.ndim, node)
    d = tr.binop("sub", e, reduce(tr, "mean", e, axis, True, node), node)
    total = reduce(tr, "add", tr.binop("mul", d, d, node), axis, keepdims, node)
    n = count_of(tr, e, axes, node, f"np.{kind}") - dof
    dof_count = Const(max(n.static, 0), "i64") if n.static is not None else tr.elementwise(
        "maximum", [tr.as_expr(n, node), Const(0, "i64", False)], node, "i64")
    var = tr.elementwise("div", [total, dof_count], node)
    return tr.elementwise("sqrt", [var], node) if kind == "std" else var


def _moment(kind: str) -> Handler:
    def handler(tr, args, kwargs, node):
        a, axis, ddof, keepdims = bind(tr, args, kwargs, node, f"np.{kind}", ("a", "axis", "ddof", "keepdims"),
                                        (None, 0, False))
        if len(args) > 2:
            raise tr.fail(f"np.{kind} takes an array and an optional axis (ddof, keepdims by keyword)", node)
        return moment(tr, kind, expr_of(tr, a, node), axis, ddof, keepdims, node)

    return handler


def _average(tr, args, kwargs, node):
    """np.average: the mean, or sum(a * w) / sum(w) over the axis (w broadcast along it, as NumPy: a 1-d w
    with an int axis weighs that axis)."""
    a, axis, weights, returned, keepdims = bind(tr, args, kwargs, node, "np.average",
                                                ("a", "axis", "weights", "returned", "keepdims"), (None, None, False, False))
    e = expr_of(tr, a, node)
    if not is_float(e.dtype):
        e = astype(tr, e, "f64", node)
    if weights is None:
        total, count = reduce(tr, "mean", e, axis, keepdims, node), None
        if static(returned):
            axes = axes_of(tr, axis, e.ndim, node)
            count = astype(tr, tr.as_expr(count_of(tr, e, axes, node, "np.average"), node), e.dtype, node)
        return (total, count) if static(returned) else total
    w = expr_of(tr, weights, node)
    if w.ndim == 1 and e.ndim > 1:
        axes = axes_of(tr, axis, e.ndim, node)
        if len(axes) != 1:
            raise tr.fail("np.average with 1-d weights needs one axis", node)
        w = tr.index(w, tuple(slice(None) if j == axes[0] else None for j in range(e.ndim)), node)
    dtype = result_dtype([e, w])
    wsum = reduce(tr, "add", _broadcast(tr, w, list(e.shape), dtype, node), axis, keepdims, node)
    avg = tr.binop("div", reduce(tr, "add", tr.binop("mul", e, w, node), axis, keepdims, node), wsum, node)
    return (avg, wsum) if static(returned) else avg


def _scaled_log(base: float) -> Handler:
    def handler(tr, args, kwargs, node):
        return tr.binop("div", _unary("log")(tr, args, kwargs, node), Const(math.log(base), "f64"), node)

    return handler


def _sinh(tr, args, kwargs, node):
    """tanh(x) * cosh(x): no cancellation near 0, where (exp(x) - exp(-x)) / 2 loses all digits."""
    (x,) = bind(tr, args, kwargs, node, "np.sinh", ("x",))
    return tr.binop("mul", _unary("tanh")(tr, [x], {}, node), _cosh(tr, [x], {}, node), node)


def _cosh(tr, args, kwargs, node):
    """(exp(x) + exp(-x)) / 2, and near overflow exp(|x| - s) * (exp(s) / 2) (exact shift, constant factor),
    which overflows only where cosh does, not where exp(x) does (cosh(710.0) is 1.1e308)."""
    (x,) = bind(tr, args, kwargs, node, "np.cosh", ("x",))
    e = expr_of(tr, x, node)
    up = _unary("exp")(tr, [e], {}, node)
    down = _unary("exp")(tr, [tr.elementwise("neg", [e], node)], {}, node)
    near = tr.binop("mul", tr.binop("add", up, down, node), Const(0.5, "f64"), node)
    above = _OVERFLOW_SHIFT.get(near.dtype)
    if above is None:
        return near
    magnitude = _unary("abs")(tr, [e], {}, node)
    shifted = _unary("exp")(tr, [tr.binop("sub", magnitude, Const(above / 2, "f64"), node)], {}, node)
    far = tr.binop("mul", shifted, Const(math.exp(above / 2) / 2, "f64"), node)
    large = tr.as_expr(tr.compare("gt", magnitude, Const(above, "f64"), node), node)
    return tr.elementwise("where", [large, far, near], node, near.dtype)


_OVERFLOW_SHIFT = {"f64": 700.0, "f32": 88.0, "bf16": 88.0, "f16": 11.0}
"""Per float type: a bound below which exp does not overflow; above it `_cosh` uses exp(|x| - bound / 2)
(the shift is exact there) times exp(bound / 2) / 2."""


def _round(tr, args, kwargs, node):
    """np.round(a, decimals=0): NumPy's rint(a * 10**decimals) / 10**decimals (a division by 10**-decimals
    for negative decimals), halfway cases to even; integers stay integers when decimals >= 0."""
    a, decimals = bind(tr, args, kwargs, node, "np.round", ("a", "decimals"), (0,))
    d = tr.integer(decimals, node).static
    if d is None:
        raise tr.fail("np.round's decimals must be a constant integer", node)
    e = expr_of(tr, a, node)
    if not is_float(e.dtype):
        if d >= 0:
            return fresh(e)
        raise tr.fail("np.round of integers to negative decimals is not supported", node)
    rint = _unary("rint", np.rint)
    if d == 0:
        return rint(tr, [e], {}, node)
    scale = Const(10.0 ** abs(d), "f64", True)
    shifted = tr.binop("mul" if d > 0 else "div", e, scale, node)
    return tr.binop("div" if d > 0 else "mul", rint(tr, [shifted], {}, node), scale, node)


def _unsupported(what: str) -> Handler:
    def handler(tr, args, kwargs, node):
        raise tr.fail(what, node)

    return handler


ELEMENTWISE = {*UNARY, *BINARY, np.fmax, np.fmin, np.square, np.clip, np.where, np.sinh, np.cosh, np.log2, np.log10,
               np.reciprocal, np.round, np.around}
"""The handlers that apply element by element (a boolean-masked read stays masked through them)."""

HANDLERS: dict[Any, Handler] = {
    **{f: _unary(n, f) for f, n in UNARY.items()},
    **{f: _binary(n) for f, n in BINARY.items()},
    np.fmax: _fmaxmin("maximum"), np.fmin: _fmaxmin("minimum"),
    **{f: _reduction(k) for f, k in REDUCTIONS.items()},
    **LINALG_HANDLERS, **SVD_HANDLERS, **STACKED_LINALG_HANDLERS, **SHAPE_HANDLERS, **SORT_HANDLERS,
    np.zeros: _filled(0.0), np.ones: _filled(1.0), np.empty: _filled(0.0), np.full: _filled(None),
    np.zeros_like: _filled_like(0.0), np.ones_like: _filled_like(1.0), np.empty_like: _filled_like(0.0),
    np.full_like: _filled_like(None), np.copy: _copy, np.array: _array, np.asarray: _asarray,
    np.arange: _arange, np.where: _where, np.clip: _clip, np.square: _square, np.trace: _trace,
    np.linalg.norm: _norm,
    np.var: _moment("var"), np.std: _moment("std"), np.average: _average,
    np.log2: _scaled_log(2.0), np.log10: _scaled_log(10.0),
    np.sinh: _sinh, np.cosh: _cosh, np.reciprocal: _reciprocal, np.round: _round, np.around: _round,
    builtins.len: _len, builtins.min: _minmax("minimum"), builtins.max: _minmax("maximum"),
    builtins.float: _float, builtins.int: _int,
    builtins.range: _unsupported("range() is supported only as the iterable of a for loop"),
}


def _method_reduction(kind: str) -> Handler:
    def handler(tr, e, args, kwargs, node):
        (axis, keepdims) = bind(tr, args, kwargs, node, "an array reduction", ("axis", "keepdims"), (None, False))
        if len(args) > 1:
            raise tr.fail("an array reduction takes an optional axis (keepdims by keyword)", node)
        return reduce(tr, kind, e, axis, keepdims, node)

    return handler


def _method_moment(kind: str) -> Handler:
    def handler(tr, e, args, kwargs, node):
        axis, ddof, keepdims = bind(tr, args, kwargs, node, f".{kind}()", ("axis", "ddof", "keepdims"), (None, 0, False))
        if len(args) > 1:
            raise tr.fail(f".{kind}() takes an optional axis (ddof, keepdims by keyword)", node)
        return moment(tr, kind, e, axis, ddof, keepdims, node)

    return handler


def _method_shape(tr, args: list, kwargs: dict, node: ast.AST, what: str) -> Any:
    """The shape of `.reshape(2, 3)` or `.reshape((2, 3))` (also for .transpose's axes); order='C' only."""
    no_kwargs(tr, kwargs, node, ("order",) if what == ".reshape()" else ())
    check_order(tr, kwargs.get("order"), node, what)
    return args[0] if len(args) == 1 and (isinstance(args[0], tuple) or args[0] is None) else tuple(args)


def _method_flat(what: str) -> Handler:
    def handler(tr, e, args, kwargs, node):
        (order,) = bind(tr, args, kwargs, node, what, ("order",), (None,))
        check_order(tr, order, node, what)
        return fresh(flat(tr, e, node)) if what == ".flatten()" else flat(tr, e, node)  # flatten copies

    return handler


def _method_astype(tr, e, args, kwargs, node):
    dtype, _order_ignored, _copy_flag = bind(tr, args, kwargs, node, ".astype()", ("dtype", "order", "copy"), (None, True))
    d = dtype_of(tr, dtype, node, None)
    if d is None:
        raise tr.fail(".astype() needs a dtype", node)
    return fresh(astype(tr, e, d, node))  # a copy, as NumPy's default copy=True


def _method_diagonal(tr, e, args, kwargs, node):
    matrix, k = diag_args(tr, [e, *args], kwargs, node, ".diagonal()")
    return diagonal(tr, matrix, node, k)


METHODS: dict[str, Handler] = {
    **{n: _method_reduction(k) for n, k in METHOD_REDUCTIONS.items()},
    **{m: _method_moment(m) for m in METHOD_MOMENTS},
    "dot": lambda tr, e, a, k, n: LINALG_HANDLERS[np.dot](tr, [e, *a], k, n),
    "transpose": lambda tr, e, a, k, n: transpose(tr, e, _method_shape(tr, a, k, n, ".transpose()"), n),
    "reshape": lambda tr, e, a, k, n: reshape(tr, e, _method_shape(tr, a, k, n, ".reshape()"), n),
    "copy": lambda tr, e, a, k, n: _copy(tr, [e, *a], k, n),
    "ravel": _method_flat(".ravel()"),
    "flatten": _method_flat(".flatten()"),
    "astype": _method_astype,
    "diagonal": lambda tr, e, a, k, n: _method_diagonal(tr, e, a, k, n),
    "trace": lambda tr, e, a, k, n: _trace(tr, [e, *a], k, n),
    **SORT_METHODS,
}
