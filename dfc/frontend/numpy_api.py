"""The NumPy functions, array methods and builtins the frontend translates.

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

from dfc.dialects import nn
from dfc.dialects.nn_shape import ConcatenateOp
from dfc.frontend.affine import Affine
from dfc.frontend.arrays import (
    Cell,
    Const,
    Expr,
    Iota,
    Method,
    View,
    is_float,
    result_dtype,
)
from dfc.frontend.dtypes import dtype_from_numpy

Handler = Callable[..., Any]
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


def call(tr, f: Any, args: list, kwargs: dict, node: ast.AST) -> Any:
    from dfc.frontend import JitFunction

    if isinstance(f, JitFunction):
        return tr.callee(tr, f, args, kwargs, node)
    if isinstance(f, Method):
        return method(tr, f.value, f.name, args, kwargs, node)
    try:
        handler = HANDLERS.get(f)
    except TypeError:
        handler = None
    if handler is None:
        name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or type(f).__name__
        module = getattr(f, "__module__", None)
        raise tr.fail(f"call of unsupported function {module + '.' if module else ''}{name}", node)
    return handler(tr, args, kwargs, node)


def _expr(tr, v: Any, node: ast.AST) -> Expr:
    return tr.as_expr(v, node)


def _no_kwargs(tr, kwargs: dict, node: ast.AST, allowed: tuple = ()) -> None:
    extra = [k for k in kwargs if k not in allowed]
    if extra:
        raise tr.fail(f"unsupported keyword argument '{extra[0]}'", node)


_MISSING = object()


def _bind(tr, args: list, kwargs: dict, node: ast.AST, what: str, names: tuple, defaults: tuple = ()) -> list:
    """The arguments of `what(names...)` by position or keyword (the last `len(defaults)` optional);
    anything else is refused, so that an argument is never silently ignored."""
    if len(args) > len(names):
        raise tr.fail(f"{what} takes at most {len(names)} arguments ({', '.join(names)}), got {len(args)}", node)
    bound = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            raise tr.fail(f"unsupported keyword argument '{k}' of {what}", node)
        if k in bound:
            raise tr.fail(f"{what} got argument '{k}' twice", node)
        bound[k] = v
    required = len(names) - len(defaults)
    out = []
    for k, n in enumerate(names):
        if n in bound:
            out.append(bound[n])
        elif k >= required:
            out.append(defaults[k - required])
        else:
            raise tr.fail(f"{what} needs argument '{n}'", node)
    return out


def _static(v: Any) -> Any:
    """A compile-time Python value: a constant integer or number, a string, None, True/False."""
    if isinstance(v, Affine):
        return v.static if v.static is not None else _MISSING
    if isinstance(v, Const) and not v.shape:
        return v.value
    return v if v is None or isinstance(v, str | bool | int | float) else _MISSING


def _order(tr, order: Any, node: ast.AST, what: str) -> None:
    if _static(order) not in (None, "C"):
        raise tr.fail(f"{what} with order={_static(order)!r} is not supported (only 'C', row-major)", node)


def _fresh(e: Expr) -> Expr:
    """`e` as a new array (NumPy's result is not a view): updating it does not update the argument."""
    return dataclasses.replace(e, cell=None) if isinstance(e, View) and e.cell is not None else e


def _cond(tr, v: Any, node: ast.AST) -> Expr:
    """A boolean array from a comparison (folded to a Python bool when both sides are numbers)."""
    return Const(v, "i1", False) if isinstance(v, bool) else _expr(tr, v, node)


def _unary(name: str, function: Callable | None = None) -> Handler:
    def handler(tr, args, kwargs, node):
        _no_kwargs(tr, kwargs, node)
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
        e = _expr(tr, args[0], node)
        python_math = getattr(function, "__module__", None) == "math"
        if python_math and name in ("floor", "ceil"):  # Python's math.floor/ceil give an int
            return astype(tr, tr.elementwise(name, [astype(tr, e, "f64", node)], node, "f64"), "i64", node)
        if name in ("floor", "ceil") and not is_float(e.dtype):
            return _fresh(e)  # NumPy 2 keeps integers and booleans as they are
        floating = name not in ("abs", "neg", "sign") or is_float(e.dtype) or python_math or function is np.fabs
        dtype = result_dtype([e], floating)
        if e.weak and is_float(dtype):
            dtype = tr.default_float
        if name == "sign":
            return _sign(tr, e, dtype, node)
        return tr.elementwise(name, [e], node, dtype)

    return handler


def _sign(tr, e: Expr, dtype: str, node: ast.AST) -> Expr:
    """NumPy's sign: -1, 0 or 1 (integers too), NaN for NaN."""
    if dtype == "i1":
        raise tr.fail("np.sign of booleans is not defined", node)
    if not is_float(dtype):
        return tr.elementwise("sub", [astype(tr, _cond(tr, tr.compare("gt", e, Const(0, "i64"), node), node), dtype, node),
                                      astype(tr, _cond(tr, tr.compare("lt", e, Const(0, "i64"), node), node), dtype, node)],
                              node, dtype)
    nan = _cond(tr, tr.compare("ne", e, e, node), node)
    return tr.elementwise("where", [nan, e, tr.elementwise("sign", [e], node, dtype)], node, dtype)


def _binary(name: str) -> Handler:
    def handler(tr, args, kwargs, node):
        _no_kwargs(tr, kwargs, node)
        if len(args) != 2:
            raise tr.fail(f"{name} takes two arguments", node)
        return tr.binop(name, args[0], args[1], node) if name in ("add", "sub", "mul", "div", "pow") else \
            tr.elementwise(name, [_expr(tr, a, node) for a in args], node)

    return handler


def _fmaxmin(kind: str) -> Handler:
    """np.fmax / np.fmin: like maximum / minimum, but a NaN loses to a number (C's fmax: x if x >= y or y is NaN)."""

    def handler(tr, args, kwargs, node):
        _no_kwargs(tr, kwargs, node)
        if len(args) != 2:
            raise tr.fail(f"np.f{kind[:3]} takes two arguments", node)
        x, y = (_expr(tr, a, node) for a in args)
        dtype = result_dtype([x, y])
        if x.weak and y.weak and is_float(dtype):
            dtype = tr.default_float
        if not is_float(dtype):
            return tr.elementwise(kind, [x, y], node)
        keep = tr.elementwise("or", [_cond(tr, tr.compare("ge" if kind == "maximum" else "le", x, y, node), node),
                                     _cond(tr, tr.compare("ne", y, y, node), node)], node, "i1")
        return tr.elementwise("where", [keep, x, y], node, dtype)

    return handler


def _axes(tr, axis: Any, ndim: int, node: ast.AST) -> list[int]:
    if axis is None:
        return list(range(ndim))
    items = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in items:
        k = tr.integer(a, node).static
        if k is None or not -ndim <= k < ndim:
            raise tr.fail(f"axis {a} is out of range for an array of rank {ndim}", node)
        out.append(k % ndim)
    if len(set(out)) != len(out):
        raise tr.fail(f"axis {tuple(out)} repeats an axis", node)
    return sorted(out)


def _keepdims(tr, keepdims: Any, node: ast.AST) -> bool:
    k = _static(keepdims)
    if not isinstance(k, bool | int):
        raise tr.fail("keepdims must be a constant True or False", node)
    return bool(k)


def _count(tr, e: Expr, axes: list[int], node: ast.AST, what: str) -> int:
    count = Affine(1)
    for k in axes:
        count = tr.int_binop("mul", count, e.shape[k], node)
    if count.static is None:
        raise tr.fail(f"{what} over a loop-dependent size is not supported; divide a sum", node)
    return count.static


def reduce(tr, kind: str, e: Expr, axis: Any, keepdims: Any, node: ast.AST) -> Expr:
    axes = _axes(tr, axis, e.ndim, node)
    keep = _keepdims(tr, keepdims, node)
    if kind == "mean" and not is_float(e.dtype):
        e = astype(tr, e, "f64", node)  # NumPy's mean of integers is float64
    elif kind in ("add", "mul") and not is_float(e.dtype):
        # NumPy sums and multiplies booleans and integers in int64; the conversion also keeps a
        # whole integer array off nn.reduce, which takes floats only
        e = tr.elementwise("convert", [e], node, "i64")
    if not axes:
        return _fresh(e)
    if kind in ("max", "min"):
        if any(e.shape[k].static == 0 for k in axes):
            raise tr.fail(f"np.{kind} of an empty array (a reduction without identity) is not defined", node)
        if e.dtype == "i1":  # any / not any(not e): booleans stay booleans
            flip = (lambda v: tr.elementwise("not", [v], node, "i1")) if kind == "min" else (lambda v: v)
            return flip(astype(tr, tr.em.reduce(flip(e), axes, "max", keep), "i1", node))
    if kind == "mean":
        total = tr.em.reduce(e, axes, "add", keep)
        return tr.elementwise("div", [total, Const(_count(tr, e, axes, node, "np.mean"), "i64")], node)
    return tr.em.reduce(e, axes, kind, keep)


def _reduction(kind: str) -> Handler:
    def handler(tr, args, kwargs, node):
        x, axis, keepdims = _bind(tr, args, kwargs, node, "a reduction", ("a", "axis", "keepdims"), (None, False))
        if len(args) > 2:
            raise tr.fail("a reduction takes an array and an optional axis (keepdims by keyword)", node)
        return reduce(tr, kind, _expr(tr, x, node), axis, keepdims, node)

    return handler


def matmul(tr, a: Expr, b: Expr, node: ast.AST) -> Expr:
    subs = {(1, 1): ("i", "i", ""), (2, 1): ("ij", "j", "i"), (1, 2): ("j", "jk", "k"), (2, 2): ("ij", "jk", "ik"),
            (3, 3): ("bij", "bjk", "bik")}.get((a.ndim, b.ndim))
    if subs is None:
        raise tr.fail(f"@ of arrays of ranks {a.ndim} and {b.ndim} is not supported", node)
    return tr.em.contract([a, b], [subs[0], subs[1]], subs[2])


LETTERS = "abcdefghijklmnopqrstuvwxy"  # "z" is the contracted index below


def _two(tr, args, kwargs, node, what: str) -> tuple[Expr, Expr]:
    a, b = _bind(tr, args, kwargs, node, what, ("a", "b"))
    return _expr(tr, a, node), _expr(tr, b, node)


def _dot(tr, args, kwargs, node):
    """np.dot: a product with a scalar; else the last axis of a against the
    second-to-last of b (its only one when b is a vector)."""
    a, b = _two(tr, args, kwargs, node, "np.dot")
    if a.ndim == 0 or b.ndim == 0:
        return tr.binop("mul", a, b, node)
    if a.ndim <= 2 and b.ndim <= 2:
        return matmul(tr, a, b, node)
    sa = LETTERS[:a.ndim - 1] + "z"
    rest = LETTERS[a.ndim - 1:a.ndim + b.ndim - 2]
    sb = rest[:-1] + "z" + rest[-1:] if b.ndim > 1 else "z"
    return tr.em.contract([a, b], [sa, sb], sa[:-1] + rest)


def _matmul(tr, args, kwargs, node):
    a, b = _two(tr, args, kwargs, node, "np.matmul")
    return matmul(tr, a, b, node)


def _inner(tr, args, kwargs, node):
    """np.inner: a product with a scalar; else the last axes of a and b against each other."""
    a, b = _two(tr, args, kwargs, node, "np.inner")
    if a.ndim == 0 or b.ndim == 0:
        return tr.binop("mul", a, b, node)
    sa = LETTERS[:a.ndim - 1] + "z"
    sb = LETTERS[a.ndim - 1:a.ndim + b.ndim - 2] + "z"
    return tr.em.contract([a, b], [sa, sb], sa[:-1] + sb[:-1])


def _vdot(tr, args, kwargs, node):
    """np.vdot: the dot product of the flattened arrays (real: no conjugate)."""
    a, b = _two(tr, args, kwargs, node, "np.vdot")
    return tr.em.contract([_flat(tr, a, node), _flat(tr, b, node)], ["z", "z"], "")


def _outer(tr, args, kwargs, node):
    a, b = _two(tr, args, kwargs, node, "np.outer")
    return tr.em.contract([_flat(tr, a, node), _flat(tr, b, node)], ["i", "j"], "ij")


def _einsum(tr, args, kwargs, node):
    _no_kwargs(tr, kwargs, node, ("optimize",))
    if not args or not isinstance(args[0], str):
        raise tr.fail("np.einsum needs a subscripts string first", node)
    spec = args[0].replace(" ", "")
    if "." in spec:
        raise tr.fail("np.einsum with ellipses is not supported", node)
    inputs, _, out = spec.partition("->")
    subscripts = inputs.split(",")
    if "->" not in spec:
        letters = "".join(subscripts)
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    operands = [_expr(tr, x, node) for x in args[1:]]
    if len(operands) != len(subscripts):
        raise tr.fail(f"np.einsum: {len(subscripts)} subscripts for {len(operands)} operands", node)
    if any(len(set(s)) != len(s) for s in subscripts):
        raise tr.fail("np.einsum with a repeated index in one operand (a diagonal) is not supported", node)
    if len(set(out)) != len(out) or any(c not in inputs for c in out) or not all(c.isalpha() for c in spec if c not in ",->"):
        raise tr.fail(f"np.einsum: invalid subscripts '{args[0]}'", node)
    return tr.em.contract(operands, subscripts, out)


def _view(tr, e: Expr) -> View:
    return e if isinstance(e, View) and not e.gathers else View.whole(tr.em.materialize(e))


def transpose(tr, e: Expr, axes: Any, node: ast.AST) -> Expr:
    if axes is None or axes == ():
        perm = list(range(e.ndim))[::-1]
    else:
        items = [tr.integer(a, node).static for a in (axes if isinstance(axes, tuple) else (axes,))]
        perm = [k % e.ndim if k is not None and -e.ndim <= k < e.ndim else k for k in items]  # type: ignore[operator]
    if sorted(perm) != list(range(e.ndim)):  # type: ignore[type-var]
        raise tr.fail(f"axes {perm} are not a permutation of the array's dimensions", node)
    if e.ndim < 2:
        return e
    v = _view(tr, e)
    return v.columns([v.column(k) for k in perm], [v.shape[k] for k in perm])


def _transpose(tr, args, kwargs, node):
    a, axes = _bind(tr, args, kwargs, node, "np.transpose", ("a", "axes"), (None,))
    return transpose(tr, _expr(tr, a, node), axes, node)


def _flip(tr, args, kwargs, node):
    a, axis = _bind(tr, args, kwargs, node, "np.flip", ("m", "axis"), (None,))
    e = _expr(tr, a, node)
    v = _view(tr, e)
    for k in _axes(tr, axis, e.ndim, node):
        col = v.column(k)
        last = v.shape[k] - 1
        offset = [o + last.scale(c) for o, c in zip(v.offset, col)]
        cols = [[-c for c in v.column(j)] if j == k else v.column(j) for j in range(v.ndim)]
        v = v.columns(cols, v.shape, offset)
    return v


def _shape_arg(tr, shape: Any, node: ast.AST) -> list[int]:
    items = shape if isinstance(shape, tuple) else (shape,)
    out = []
    for d in items:
        k = tr.integer(d, node).static
        if k is None:
            raise tr.fail("array sizes must be constants (or depend only on argument shapes)", node)
        out.append(k)
    return out


def reshape(tr, e: Expr, shape: Any, node: ast.AST) -> Expr:
    dims = _shape_arg(tr, shape, node)
    total = int(np.prod(tr.em.static(e, "the reshaped array") or [1]))
    if dims.count(-1) == 1:
        known = int(np.prod([d for d in dims if d != -1]))
        if known == 0:
            raise tr.fail(f"cannot reshape an array of {total} elements into shape {tuple(dims)}: -1 is ambiguous", node)
        dims[dims.index(-1)] = total // known
    if any(d < 0 for d in dims) or int(np.prod(dims or [1])) != total:
        raise tr.fail(f"cannot reshape an array of {total} elements into shape {tuple(dims)}", node)
    src = tr.em.materialize(e)
    result = tr.b.insert(nn.ReshapeOp(src, dims)).result
    if isinstance(e, View) and e.cell is not None and not e.gathers:  # NumPy's result is a view of e's memory
        return View.whole(result, Cell(result, shares=[e.cell]))
    return View.whole(result)


def _reshape(tr, args, kwargs, node):
    a, shape, order = _bind(tr, args, kwargs, node, "np.reshape", ("a", "shape", "order"), (None,))
    _order(tr, order, node, "np.reshape")
    return reshape(tr, _expr(tr, a, node), shape, node)


def _ravel(tr, args, kwargs, node):
    a, order = _bind(tr, args, kwargs, node, "np.ravel", ("a", "order"), (None,))
    _order(tr, order, node, "np.ravel")
    return _flat(tr, _expr(tr, a, node), node)


def _flat(tr, e: Expr, node: ast.AST) -> Expr:
    return e if e.ndim == 1 else reshape(tr, e, (Affine(-1),), node)


def _dtype(tr, dtype: Any, node: ast.AST, default: str | None) -> str | None:
    if dtype is None:
        return default
    d = dtype_from_numpy(dtype)
    if d is None:
        raise tr.fail(f"unsupported dtype {dtype!r}", node)
    return d


def _fill(tr, number: Any, dtype: str, node: ast.AST) -> float | int | bool:
    """A constant fill value cast to `dtype` as NumPy casts it (floats to integers toward zero)."""
    try:
        return bool(number) if dtype == "i1" else float(number) if is_float(dtype) else int(number)
    except (ValueError, OverflowError):
        raise tr.fail(f"cannot fill an array of {dtype} with {number!r}", node) from None


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
            shape_arg, dtype = _bind(tr, args, kwargs, node, "np.zeros/ones/empty", ("shape", "dtype"), (None,))
        else:
            shape_arg, fill, dtype = _bind(tr, args, kwargs, node, "np.full", ("shape", "fill_value", "dtype"), (None,))
        shape = [Affine(d) for d in _shape_arg(tr, shape_arg, node)]
        if value is not None:
            d = _dtype(tr, dtype, node, "f64")
            return Const(_fill(tr, value, d, node), d, False, shape)
        number = _static(fill)
        if number is not _MISSING and number is not None and not isinstance(number, str):
            default = "i1" if isinstance(number, bool) else "i64" if isinstance(number, int) else "f64"
            if isinstance(fill, Const) and not fill.weak:
                default = fill.dtype
            d = _dtype(tr, dtype, node, default)
            return Const(_fill(tr, number, d, node), d, False, shape)
        e = _expr(tr, fill, node)  # a run-time value, broadcast
        return _broadcast(tr, e, shape, _dtype(tr, dtype, node, tr.em.concrete(e)), node)

    return handler


def _filled_like(value: float | None) -> Handler:
    def handler(tr, args, kwargs, node):
        if value is not None:
            a, dtype = _bind(tr, args, kwargs, node, "np.zeros_like/ones_like/empty_like", ("a", "dtype"), (None,))
        else:
            a, fill, dtype = _bind(tr, args, kwargs, node, "np.full_like", ("a", "fill_value", "dtype"), (None,))
        e = _expr(tr, a, node)
        d = _dtype(tr, dtype, node, tr.em.concrete(e))
        number = value if value is not None else _static(fill)
        if number is _MISSING or number is None:
            return _broadcast(tr, _expr(tr, fill, node), list(e.shape), d, node)  # a run-time fill value
        return Const(_fill(tr, number, d, node), d, False, list(e.shape))

    return handler


def _copy(tr, args, kwargs, node):
    a, _order_ignored = _bind(tr, args, kwargs, node, "np.copy", ("a", "order"), (None,))
    e = _expr(tr, a, node)
    return View.whole(tr.em.materialize(e))  # a value: later updates of either do not affect the other


def _array(tr, args, kwargs, node):
    a, dtype, _copy_flag, _order_ignored, ndmin = _bind(tr, args, kwargs, node, "np.array",
                                                         ("object", "dtype", "copy", "order", "ndmin"),
                                                         (None, True, None, 0))
    if _static(ndmin) != 0:
        raise tr.fail("np.array with ndmin is not supported", node)
    e = _expr(tr, a, node)
    d = _dtype(tr, dtype, node, None)
    return View.whole(tr.em.materialize(astype(tr, e, d, node) if d else e))


def _asarray(tr, args, kwargs, node):
    a, dtype, _order_ignored = _bind(tr, args, kwargs, node, "np.asarray", ("a", "dtype", "order"), (None, None))
    e = _expr(tr, a, node)
    d = _dtype(tr, dtype, node, None)
    return astype(tr, e, d, node) if d else e


def astype(tr, e: Expr, dtype: str, node: ast.AST) -> Expr:
    if e.dtype == dtype and not e.weak:
        return e
    if dtype == "i1" and e.dtype != "i1":  # nonzero (NaN too) is True
        return _cond(tr, tr.compare("ne", e, Const(0, "i64"), node), node)
    return tr.elementwise("convert", [e], node, dtype)


def _arange(tr, args, kwargs, node):
    _no_kwargs(tr, kwargs, node, ("dtype",))
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
    d = _dtype(tr, dtype, node, None)
    return astype(tr, e, d, node) if d else e


def _where(tr, args, kwargs, node):
    _no_kwargs(tr, kwargs, node)
    if len(args) != 3:
        raise tr.fail("np.where needs three arguments (the one-argument form gives data-dependent shapes)", node)
    c, x, y = (_expr(tr, a, node) for a in args)
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
    x, lo, hi = _bind(tr, args, kwargs, node, "np.clip", ("a", "a_min", "a_max"), (None, None))
    r = _fresh(_expr(tr, x, node))
    if lo is not None:
        r = tr.elementwise("maximum", [r, _expr(tr, lo, node)], node)
    if hi is not None:
        r = tr.elementwise("minimum", [r, _expr(tr, hi, node)], node)
    return r


def _square(tr, args, kwargs, node):
    (x,) = _bind(tr, args, kwargs, node, "np.square", ("x",))
    if _expr(tr, x, node).dtype == "i1":
        raise tr.fail("np.square of booleans (int8 in NumPy) is not supported", node)
    return tr.binop("mul", x, x, node)


def _reciprocal(tr, args, kwargs, node):
    (x,) = _bind(tr, args, kwargs, node, "np.reciprocal", ("x",))
    e = _expr(tr, x, node)
    if not is_float(e.dtype):
        raise tr.fail("np.reciprocal of integers is an integer division in NumPy; convert with .astype(float)", node)
    return tr.binop("div", Const(1.0, "f64"), e, node)


def _diag_args(tr, args, kwargs, node, what: str) -> tuple[Expr, int]:
    """(the matrix, the offset) of np.diagonal/np.trace-style arguments; axes (1, 0) transpose it."""
    a, offset, axis1, axis2 = _bind(tr, args, kwargs, node, what, ("a", "offset", "axis1", "axis2"), (0, 0, 1))
    e = _expr(tr, a, node)
    if e.ndim != 2:
        raise tr.fail(f"{what} of an array of rank other than 2 is not supported", node)
    first, second = (_axes(tr, x, 2, node)[0] for x in (axis1, axis2))
    if first == second:
        raise tr.fail(f"{what}: axis1 and axis2 are the same axis", node)
    k = tr.integer(offset, node).static
    if k is None:
        raise tr.fail(f"{what} needs a constant offset", node)
    return (transpose(tr, e, None, node) if first == 1 else e), k


def _diagonal(tr, e: Expr, node: ast.AST, k: int = 0) -> View:
    """The view of `e[i, i + k]` (a k-th diagonal of a matrix)."""
    if e.ndim != 2:
        raise tr.fail("the diagonal of an array of rank other than 2 is not supported", node)
    v = _view(tr, e)
    if k == 0 and v.shape[0] == v.shape[1]:
        size = v.shape[0]
    else:
        rows, cols = tr.em.static(v, "the array")
        size = Affine(max(0, min(rows + min(k, 0), cols - max(k, 0))))
    r0, c0 = max(-k, 0), max(k, 0)
    offset = [o + Affine(r0 * a + c0 * b) for o, a, b in zip(v.offset, v.column(0), v.column(1))]
    return v.columns([[a + b for a, b in zip(v.column(0), v.column(1))]], [size], offset)


def _diagonal_fn(tr, args, kwargs, node):
    e, k = _diag_args(tr, args, kwargs, node, "np.diagonal")
    return _diagonal(tr, e, node, k)


def _trace(tr, args, kwargs, node):
    e, k = _diag_args(tr, args, kwargs, node, "np.trace")
    return reduce(tr, "add", _diagonal(tr, e, node, k), None, False, node)


def _diag(tr, args, kwargs, node):
    """np.diag: the k-th diagonal of a matrix, or the square matrix with a vector on its k-th diagonal."""
    a, k = _bind(tr, args, kwargs, node, "np.diag", ("v", "k"), (0,))
    e = _expr(tr, a, node)
    k = tr.integer(k, node).static
    if k is None:
        raise tr.fail("np.diag needs a constant k", node)
    if e.ndim == 2:
        return _diagonal(tr, e, node, k)
    if e.ndim != 1:
        raise tr.fail("np.diag takes an array of rank 1 or 2", node)
    n = e.shape[0] + abs(k)
    target = Const(0, tr.em.concrete(e), False, [n, n])
    out = View.whole(tr.em.materialize(target))
    from dfc.frontend.arrays import Cell

    out.cell = Cell(out.source)
    tr.write(_diagonal(tr, out, node, k), e, node)
    return View.whole(out.cell.value)


def _concatenate(tr, args, kwargs, node):
    parts, axis = _bind(tr, args, kwargs, node, "np.concatenate", ("arrays", "axis"), (Affine(0),))
    if not isinstance(parts, tuple) or not parts:
        raise tr.fail("np.concatenate takes a non-empty list or tuple of arrays", node)
    exprs = [_expr(tr, p, node) for p in parts]
    if axis is None:  # the flattened arrays
        exprs, axis = [_flat(tr, e, node) for e in exprs], Affine(0)
    if isinstance(axis, tuple) or any(e.ndim != exprs[0].ndim for e in exprs) or exprs[0].ndim == 0:
        raise tr.fail("np.concatenate takes arrays of one rank (at least 1) and one integer axis", node)
    k = _axes(tr, axis, exprs[0].ndim, node)[0]
    shapes = [[d for j, d in enumerate(tr.em.static(e, "a concatenated array")) if j != k] for e in exprs]
    if any(s != shapes[0] for s in shapes):
        raise tr.fail(f"np.concatenate: the arrays' sizes differ outside axis {k}", node)
    dtype = result_dtype(exprs)
    if all(e.weak for e in exprs) and is_float(dtype):
        dtype = tr.default_float
    values = [tr.em.materialize(e, dtype) for e in exprs]
    return View.whole(tr.b.insert(ConcatenateOp(values, k)).result)


def _stack(tr, args, kwargs, node):
    parts, axis = _bind(tr, args, kwargs, node, "np.stack", ("arrays", "axis"), (Affine(0),))
    if not isinstance(parts, tuple) or not parts:
        raise tr.fail("np.stack takes a non-empty list or tuple of arrays", node)
    exprs = [_expr(tr, p, node) for p in parts]
    shapes = [tr.em.static(e, "a stacked array") for e in exprs]
    if any(s != shapes[0] for s in shapes):
        raise tr.fail("np.stack takes arrays of one shape", node)
    k = _axes(tr, axis, len(shapes[0]) + 1, node)[0]
    new = tuple(Affine(d) for d in shapes[0][:k] + [1] + shapes[0][k:])
    return _concatenate(tr, [tuple(reshape(tr, e, new, node) for e in exprs), Affine(k)], {}, node)


def _len(tr, args, kwargs, node):
    (e,) = _bind(tr, args, kwargs, node, "len()", ("obj",))
    if isinstance(e, tuple):
        return Affine(len(e))
    e = _expr(tr, e, node)
    if not e.ndim:
        raise tr.fail("len() of a scalar", node)
    return e.shape[0]


def _minmax(kind: str) -> Handler:
    """Python's max/min: of several numbers (or arrays, elementwise), of a tuple, or of a vector's
    elements. As in Python, an argument replaces the result only if greater (less): a NaN first stays."""

    def handler(tr, args, kwargs, node):
        _no_kwargs(tr, kwargs, node)
        if len(args) == 1 and isinstance(args[0], tuple):
            args = list(args[0])
        if not args:
            raise tr.fail(f"{kind[:3]}() of nothing", node)
        if len(args) == 1:
            e = _expr(tr, args[0], node)
            if e.ndim != 1:
                raise tr.fail(f"{kind[:3]}() of one argument takes a vector (or a tuple)", node)
            return reduce(tr, kind[:3], e, None, False, node)
        if all(isinstance(a, Affine) for a in args):
            if all(a.static is not None for a in args):
                return Affine((max if kind == "maximum" else min)(a.static for a in args))
        result = _expr(tr, args[0], node)
        for a in args[1:]:
            b = _expr(tr, a, node)
            if not is_float(result_dtype([result, b])):
                result = tr.elementwise(kind, [result, b], node)
                continue
            dtype = result_dtype([result, b])
            if result.weak and b.weak:
                dtype = tr.default_float
            replace = _cond(tr, tr.compare("gt" if kind == "maximum" else "lt", b, result, node), node)
            result = tr.elementwise("where", [replace, b, result], node, dtype)
        return result

    return handler


def _float(tr, args, kwargs, node):
    (x,) = _bind(tr, args, kwargs, node, "float()", ("x",))
    e = _expr(tr, x, node)
    if e.ndim:
        raise tr.fail("float() of an array", node)
    if isinstance(e, Const):
        return Const(float(e.value), "f64")
    return astype(tr, e, "f64" if not is_float(e.dtype) else e.dtype, node)


def _int(tr, args, kwargs, node):
    (v,) = _bind(tr, args, kwargs, node, "int()", ("x",))
    if isinstance(v, Affine):
        return v
    number = _static(v)
    if isinstance(number, bool | int | float):
        return Affine(int(number))
    raise tr.fail("int() of a run-time float is not supported (it would make a data-dependent index)", node)


def _norm(tr, args, kwargs, node):
    """np.linalg.norm without ord (or ord=2 of a vector, 'fro' of a matrix): sqrt(sum(x**2)) over all elements."""
    x, order, axis, keepdims = _bind(tr, args, kwargs, node, "np.linalg.norm", ("x", "ord", "axis", "keepdims"),
                                     (None, None, False))
    e = _expr(tr, x, node)
    o = _static(order)
    if not (o is None or o in (2, 2.0) and e.ndim == 1 or o == "fro" and e.ndim == 2):
        raise tr.fail(f"np.linalg.norm with ord={o if o is not _MISSING else '...'} of an array of rank {e.ndim} is not supported", node)
    if axis is not None or _keepdims(tr, keepdims, node):
        raise tr.fail("np.linalg.norm with axis or keepdims is not supported", node)
    return tr.elementwise("sqrt", [reduce(tr, "add", tr.binop("mul", e, e, node), None, False, node)], node)


def moment(tr, kind: str, e: Expr, axis: Any, ddof: Any, keepdims: Any, node: ast.AST) -> Expr:
    """np.var / np.std: sum((e - mean)**2) / (n - ddof), its square root."""
    if not is_float(e.dtype):
        e = astype(tr, e, "f64", node)
    dof = tr.integer(ddof, node).static
    if dof is None:
        raise tr.fail(f"np.{kind} needs a constant ddof", node)
    axes = _axes(tr, axis, e.ndim, node)
    d = tr.binop("sub", e, reduce(tr, "mean", e, axis, True, node), node)
    total = reduce(tr, "add", tr.binop("mul", d, d, node), axis, keepdims, node)
    var = tr.elementwise("div", [total, Const(max(_count(tr, e, axes, node, f"np.{kind}") - dof, 0), "i64")], node)
    return tr.elementwise("sqrt", [var], node) if kind == "std" else var


def _moment(kind: str) -> Handler:
    def handler(tr, args, kwargs, node):
        a, axis, ddof, keepdims = _bind(tr, args, kwargs, node, f"np.{kind}", ("a", "axis", "ddof", "keepdims"),
                                        (None, 0, False))
        if len(args) > 2:
            raise tr.fail(f"np.{kind} takes an array and an optional axis (ddof, keepdims by keyword)", node)
        return moment(tr, kind, _expr(tr, a, node), axis, ddof, keepdims, node)

    return handler


def _scaled_log(base: float) -> Handler:
    def handler(tr, args, kwargs, node):
        return tr.binop("div", _unary("log")(tr, args, kwargs, node), Const(math.log(base), "f64"), node)

    return handler


def _sinh(tr, args, kwargs, node):
    """tanh(x) * cosh(x): no cancellation near 0, where (exp(x) - exp(-x)) / 2 loses all digits."""
    (x,) = _bind(tr, args, kwargs, node, "np.sinh", ("x",))
    return tr.binop("mul", _unary("tanh")(tr, [x], {}, node), _cosh(tr, [x], {}, node), node)


def _cosh(tr, args, kwargs, node):
    (x,) = _bind(tr, args, kwargs, node, "np.cosh", ("x",))
    up = _unary("exp")(tr, [x], {}, node)
    down = _unary("exp")(tr, [tr.elementwise("neg", [_expr(tr, x, node)], node)], {}, node)
    return tr.binop("mul", tr.binop("add", up, down, node), Const(0.5, "f64"), node)


def _round(tr, args, kwargs, node):
    """np.round(a, decimals=0): NumPy's rint(a * 10**decimals) / 10**decimals (a division by 10**-decimals
    for negative decimals), halfway cases to even; integers stay integers when decimals >= 0."""
    a, decimals = _bind(tr, args, kwargs, node, "np.round", ("a", "decimals"), (0,))
    d = tr.integer(decimals, node).static
    if d is None:
        raise tr.fail("np.round's decimals must be a constant integer", node)
    e = _expr(tr, a, node)
    if not is_float(e.dtype):
        if d >= 0:
            return _fresh(e)
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


HANDLERS: dict[Any, Handler] = {
    **{f: _unary(n, f) for f, n in UNARY.items()},
    **{f: _binary(n) for f, n in BINARY.items()},
    np.fmax: _fmaxmin("maximum"), np.fmin: _fmaxmin("minimum"),
    **{f: _reduction(k) for f, k in REDUCTIONS.items()},
    np.dot: _dot, np.matmul: _matmul, np.inner: _inner, np.vdot: _vdot, np.outer: _outer, np.einsum: _einsum,
    np.transpose: _transpose, np.flip: _flip, np.reshape: _reshape, np.ravel: _ravel,
    np.zeros: _filled(0.0), np.ones: _filled(1.0), np.empty: _filled(0.0), np.full: _filled(None),
    np.zeros_like: _filled_like(0.0), np.ones_like: _filled_like(1.0), np.empty_like: _filled_like(0.0),
    np.full_like: _filled_like(None), np.copy: _copy, np.array: _array, np.asarray: _asarray,
    np.arange: _arange, np.where: _where, np.clip: _clip, np.square: _square, np.trace: _trace,
    np.diag: _diag, np.diagonal: _diagonal_fn,
    np.concatenate: _concatenate, np.stack: _stack, np.linalg.norm: _norm,
    np.var: _moment("var"), np.std: _moment("std"), np.log2: _scaled_log(2.0), np.log10: _scaled_log(10.0),
    np.sinh: _sinh, np.cosh: _cosh, np.reciprocal: _reciprocal, np.round: _round, np.around: _round,
    builtins.len: _len, builtins.min: _minmax("minimum"), builtins.max: _minmax("maximum"),
    builtins.float: _float, builtins.int: _int,
    builtins.range: _unsupported("range() is supported only as the iterable of a for loop"),
    builtins.print: _unsupported("print() is not supported in compiled functions"),
    np.nonzero: _unsupported("np.nonzero gives a data-dependent shape; it is not supported"),
    np.argwhere: _unsupported("np.argwhere gives a data-dependent shape; it is not supported"),
    np.unique: _unsupported("np.unique gives a data-dependent shape; it is not supported"),
}


def array_attribute(tr, e: Expr, name: str, node: ast.AST) -> Any:
    if name == "T":
        return transpose(tr, e, None, node)
    if name == "shape":
        return tuple(e.shape)
    if name == "ndim":
        return Affine(e.ndim)
    if name == "size":
        total = Affine(1)
        for d in e.shape:
            total = tr.int_binop("mul", total, d, node)
        return total
    if name == "dtype":
        return np.dtype({"f16": "float16", "f32": "float32", "f64": "float64", "i32": "int32", "i64": "int64",
                         "i1": "bool"}[tr.em.concrete(e)])
    if name in METHODS:
        return Method(e, name)
    raise tr.fail(f"unsupported array attribute '.{name}'", node)


def method(tr, e: Expr, name: str, args: list, kwargs: dict, node: ast.AST) -> Any:
    return METHODS[name](tr, e, args, kwargs, node)


def _method_reduction(kind: str) -> Handler:
    def handler(tr, e, args, kwargs, node):
        (axis, keepdims) = _bind(tr, args, kwargs, node, "an array reduction", ("axis", "keepdims"), (None, False))
        if len(args) > 1:
            raise tr.fail("an array reduction takes an optional axis (keepdims by keyword)", node)
        return reduce(tr, kind, e, axis, keepdims, node)

    return handler


def _method_moment(kind: str) -> Handler:
    def handler(tr, e, args, kwargs, node):
        axis, ddof, keepdims = _bind(tr, args, kwargs, node, f".{kind}()", ("axis", "ddof", "keepdims"), (None, 0, False))
        if len(args) > 1:
            raise tr.fail(f".{kind}() takes an optional axis (ddof, keepdims by keyword)", node)
        return moment(tr, kind, e, axis, ddof, keepdims, node)

    return handler


def _method_shape(tr, args: list, kwargs: dict, node: ast.AST, what: str) -> Any:
    """The shape of `.reshape(2, 3)` or `.reshape((2, 3))` (also for .transpose's axes); order='C' only."""
    _no_kwargs(tr, kwargs, node, ("order",) if what == ".reshape()" else ())
    _order(tr, kwargs.get("order"), node, what)
    return args[0] if len(args) == 1 and (isinstance(args[0], tuple) or args[0] is None) else tuple(args)


def _method_flat(what: str) -> Handler:
    def handler(tr, e, args, kwargs, node):
        (order,) = _bind(tr, args, kwargs, node, what, ("order",), (None,))
        _order(tr, order, node, what)
        return _fresh(_flat(tr, e, node)) if what == ".flatten()" else _flat(tr, e, node)  # flatten copies

    return handler


def _method_astype(tr, e, args, kwargs, node):
    dtype, _order_ignored, _copy_flag = _bind(tr, args, kwargs, node, ".astype()", ("dtype", "order", "copy"), (None, True))
    d = _dtype(tr, dtype, node, None)
    if d is None:
        raise tr.fail(".astype() needs a dtype", node)
    return _fresh(astype(tr, e, d, node))  # a copy, as NumPy's default copy=True


def _method_diagonal(tr, e, args, kwargs, node):
    matrix, k = _diag_args(tr, [e, *args], kwargs, node, ".diagonal()")
    return _diagonal(tr, matrix, node, k)


METHODS: dict[str, Handler] = {
    **{n: _method_reduction(k) for n, k in METHOD_REDUCTIONS.items()},
    **{m: _method_moment(m) for m in METHOD_MOMENTS},
    "dot": lambda tr, e, a, k, n: _dot(tr, [e, *a], k, n),
    "transpose": lambda tr, e, a, k, n: transpose(tr, e, _method_shape(tr, a, k, n, ".transpose()"), n),
    "reshape": lambda tr, e, a, k, n: reshape(tr, e, _method_shape(tr, a, k, n, ".reshape()"), n),
    "copy": lambda tr, e, a, k, n: _copy(tr, [e, *a], k, n),
    "ravel": _method_flat(".ravel()"),
    "flatten": _method_flat(".flatten()"),
    "astype": _method_astype,
    "diagonal": lambda tr, e, a, k, n: _method_diagonal(tr, e, a, k, n),
    "trace": lambda tr, e, a, k, n: _trace(tr, [e, *a], k, n),
}
