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
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from dfc.dialects import nn
from dfc.dialects.nn_shape import ConcatenateOp
from dfc.frontend.affine import Affine
from dfc.frontend.arrays import Const, Expr, Iota, View, is_float, result_dtype
from dfc.frontend.dtypes import dtype_from_numpy

Handler = Callable[..., Any]
UNARY = {
    np.exp: "exp", np.log: "log", np.sqrt: "sqrt", np.tanh: "tanh", np.sin: "sin", np.cos: "cos",
    np.abs: "abs", np.absolute: "abs", np.fabs: "abs", np.log1p: "log1p", np.floor: "floor", np.ceil: "ceil",
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
    from dfc.frontend.translate import Method

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


def _unary(name: str, function: Callable | None = None) -> Handler:
    def handler(tr, args, kwargs, node):
        _no_kwargs(tr, kwargs, node)
        if len(args) != 1:
            raise tr.fail(f"{name} takes one argument", node)
        if name == "abs" and isinstance(args[0], Affine) and args[0].static is not None:
            return Affine(abs(args[0].static))
        number = args[0].static if isinstance(args[0], Affine) else (
            args[0].value if isinstance(args[0], Const) and not args[0].shape and args[0].weak else None)
        if function is not None and number is not None:  # folded, with NumPy's result type
            value = function(number)
            weak = not isinstance(value, np.generic)
            return Const(float(value), "f64", weak) if isinstance(value, float | np.floating) else Affine(int(value))
        e = _expr(tr, args[0], node)
        floating = name not in ("abs", "neg", "sign") or is_float(e.dtype)
        dtype = result_dtype([e], floating)
        if e.weak and is_float(dtype):
            dtype = tr.default_float
        return tr.elementwise(name, [e], node, dtype)

    return handler


def _binary(name: str) -> Handler:
    def handler(tr, args, kwargs, node):
        _no_kwargs(tr, kwargs, node)
        if len(args) != 2:
            raise tr.fail(f"{name} takes two arguments", node)
        return tr.binop(name, args[0], args[1], node) if name in ("add", "sub", "mul", "div", "pow") else \
            tr.elementwise(name, [_expr(tr, a, node) for a in args], node)

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
    return sorted(out)


def reduce(tr, kind: str, e: Expr, axis: Any, keepdims: Any, node: ast.AST) -> Expr:
    axes = _axes(tr, axis, e.ndim, node)
    keep = bool(keepdims) if not isinstance(keepdims, Affine) else bool(keepdims.static)
    if not axes:
        return e
    if kind == "mean":
        count = Affine(1)
        for k in axes:
            count = tr.int_binop("mul", count, e.shape[k], node)
        if count.static is None:
            raise tr.fail("np.mean over a loop-dependent size is not supported; divide a sum", node)
        total = tr.em.reduce(e if is_float(e.dtype) else tr.elementwise("add", [e, Const(0.0, "f64")], node), axes, "add", keep)
        return tr.elementwise("div", [total, Const(count.static, "i64")], node)
    return tr.em.reduce(e, axes, kind, keep)


def _reduction(kind: str) -> Handler:
    def handler(tr, args, kwargs, node):
        _no_kwargs(tr, kwargs, node, ("axis", "keepdims"))
        if not 1 <= len(args) <= 2:
            raise tr.fail("a reduction takes an array and an optional axis", node)
        axis = args[1] if len(args) > 1 else kwargs.get("axis")
        return reduce(tr, kind, _expr(tr, args[0], node), axis, kwargs.get("keepdims", False), node)

    return handler


def matmul(tr, a: Expr, b: Expr, node: ast.AST) -> Expr:
    subs = {(1, 1): ("i", "i", ""), (2, 1): ("ij", "j", "i"), (1, 2): ("j", "jk", "k"), (2, 2): ("ij", "jk", "ik"),
            (3, 3): ("bij", "bjk", "bik")}.get((a.ndim, b.ndim))
    if subs is None:
        raise tr.fail(f"@ of arrays of ranks {a.ndim} and {b.ndim} is not supported", node)
    return tr.em.contract([a, b], [subs[0], subs[1]], subs[2])


def _dot(tr, args, kwargs, node):
    _no_kwargs(tr, kwargs, node)
    a, b = (_expr(tr, x, node) for x in args)
    if a.ndim == 0 or b.ndim == 0:
        return tr.binop("mul", a, b, node)
    return matmul(tr, a, b, node)


def _outer(tr, args, kwargs, node):
    a, b = (_expr(tr, x, node) for x in args)
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
    return tr.em.contract(operands, subscripts, out)


def _view(tr, e: Expr) -> View:
    return e if isinstance(e, View) and not e.gathers else View.whole(tr.em.materialize(e))


def transpose(tr, e: Expr, axes: Any, node: ast.AST) -> Expr:
    if e.ndim < 2:
        return e
    perm = list(range(e.ndim))[::-1] if axes is None or axes == () else [tr.integer(a, node).static for a in axes]
    if sorted(perm) != list(range(e.ndim)):
        raise tr.fail(f"axes {perm} are not a permutation of the array's dimensions", node)
    v = _view(tr, e)
    return v.columns([v.column(k) for k in perm], [v.shape[k] for k in perm])


def _transpose(tr, args, kwargs, node):
    axes = args[1] if len(args) > 1 else kwargs.get("axes")
    return transpose(tr, _expr(tr, args[0], node), axes, node)


def _flip(tr, args, kwargs, node):
    e = _expr(tr, args[0], node)
    axis = args[1] if len(args) > 1 else kwargs.get("axis")
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
        known = int(np.prod([d for d in dims if d != -1]) or 1)
        dims[dims.index(-1)] = total // known
    if int(np.prod(dims or [1])) != total:
        raise tr.fail(f"cannot reshape an array of {total} elements into shape {tuple(dims)}", node)
    src = tr.em.materialize(e)
    return View.whole(tr.b.insert(nn.ReshapeOp(src, dims)).result)


def _reshape(tr, args, kwargs, node):
    return reshape(tr, _expr(tr, args[0], node), args[1] if len(args) == 2 else tuple(args[1:]), node)


def _flat(tr, e: Expr, node: ast.AST) -> Expr:
    return e if e.ndim == 1 else reshape(tr, e, (Affine(-1),), node)


def _dtype_kw(tr, kwargs: dict, node: ast.AST, default: str | None) -> str | None:
    if "dtype" not in kwargs or kwargs["dtype"] is None:
        return default
    d = dtype_from_numpy(kwargs["dtype"])
    if d is None:
        raise tr.fail(f"unsupported dtype {kwargs['dtype']!r}", node)
    return d


def _filled(value: float | None) -> Handler:
    def handler(tr, args, kwargs, node):
        _no_kwargs(tr, kwargs, node, ("dtype",))
        shape = [Affine(d) for d in _shape_arg(tr, args[0], node)]
        if value is not None:
            return Const(value, _dtype_kw(tr, kwargs, node, "f64"), False, shape)
        fill = args[1]
        if isinstance(fill, Affine) and fill.static is not None or isinstance(fill, Const) and not fill.shape:
            number = fill.static if isinstance(fill, Affine) else fill.value
            default = "i1" if isinstance(number, bool) else "i64" if isinstance(number, int) else "f64"
            return Const(number, _dtype_kw(tr, kwargs, node, default), False, shape)
        e = _expr(tr, fill, node)  # a run-time scalar, broadcast
        if e.ndim:
            raise tr.fail("np.full needs a scalar fill value", node)
        dtype = _dtype_kw(tr, kwargs, node, tr.em.concrete(e))
        return tr.elementwise("add", [Const(0, dtype, False, shape), e], node, dtype)

    return handler


def _fill_value(tr, v: Any, node: ast.AST) -> float:
    if isinstance(v, Affine) and v.static is not None:
        return v.static
    if isinstance(v, Const) and not v.shape:
        return v.value  # type: ignore[return-value]
    raise tr.fail("np.full needs a constant fill value", node)


def _filled_like(value: float | None) -> Handler:
    def handler(tr, args, kwargs, node):
        _no_kwargs(tr, kwargs, node, ("dtype",))
        e = _expr(tr, args[0], node)
        fill = value if value is not None else _fill_value(tr, args[1], node)
        return Const(fill, _dtype_kw(tr, kwargs, node, tr.em.concrete(e)), False, list(e.shape))

    return handler


def _copy(tr, args, kwargs, node):
    e = _expr(tr, args[0], node)
    return View.whole(tr.em.materialize(e))  # a value: later updates of either do not affect the other


def _asarray(tr, args, kwargs, node):
    e = _expr(tr, args[0], node)
    d = _dtype_kw(tr, kwargs, node, None)
    return astype(tr, e, d, node) if d else e


def astype(tr, e: Expr, dtype: str, node: ast.AST) -> Expr:
    return e if e.dtype == dtype and not e.weak else tr.elementwise("convert", [e], node, dtype)


def _arange(tr, args, kwargs, node):
    _no_kwargs(tr, kwargs, node, ("dtype",))
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
    d = _dtype_kw(tr, kwargs, node, None)
    return astype(tr, e, d, node) if d else e


def _where(tr, args, kwargs, node):
    if len(args) != 3:
        raise tr.fail("np.where needs three arguments (the one-argument form gives data-dependent shapes)", node)
    c, x, y = (_expr(tr, a, node) for a in args)
    dtype = result_dtype([x, y])
    if x.weak and y.weak and is_float(dtype):
        dtype = tr.default_float
    if c.dtype != "i1":
        c = tr.compare("ne", c, Const(0, "i64"), node)
    return tr.elementwise("where", [c, x, y], node, dtype)


def _clip(tr, args, kwargs, node):
    x, lo, hi = args
    return tr.elementwise("minimum", [tr.elementwise("maximum", [_expr(tr, x, node), _expr(tr, lo, node)], node),
                                      _expr(tr, hi, node)], node)


def _square(tr, args, kwargs, node):
    return tr.binop("mul", args[0], args[0], node)


def _trace(tr, args, kwargs, node):
    return reduce(tr, "add", _diagonal(tr, _expr(tr, args[0], node), node), None, False, node)


def _diagonal(tr, e: Expr, node: ast.AST) -> View:
    if e.ndim != 2:
        raise tr.fail("the diagonal of an array of rank other than 2 is not supported", node)
    v = _view(tr, e)
    size = v.shape[0] if v.shape[0] == v.shape[1] else Affine(min(tr.em.static(v, "the array")))
    return v.columns([[a + b for a, b in zip(v.column(0), v.column(1))]], [size])


def _diag(tr, args, kwargs, node):
    e = _expr(tr, args[0], node)
    if e.ndim == 2:
        return _diagonal(tr, e, node)
    if e.ndim != 1:
        raise tr.fail("np.diag takes an array of rank 1 or 2", node)
    n = e.shape[0]
    target = Const(0, tr.em.concrete(e), False, [n, n])
    out = View.whole(tr.em.materialize(target))
    from dfc.frontend.arrays import Cell

    out.cell = Cell(out.source)
    tr.write(_diagonal(tr, out, node), e, node)
    return View.whole(out.cell.value)


def _concatenate(tr, args, kwargs, node):
    parts = args[0]
    if not isinstance(parts, tuple):
        raise tr.fail("np.concatenate takes a list or tuple of arrays", node)
    axis = args[1] if len(args) > 1 else kwargs.get("axis", Affine(0))
    exprs = [_expr(tr, p, node) for p in parts]
    dtype = result_dtype(exprs)
    values = [tr.em.materialize(e, dtype) for e in exprs]
    k = _axes(tr, axis, exprs[0].ndim, node)[0]
    return View.whole(tr.b.insert(ConcatenateOp(values, k)).result)


def _stack(tr, args, kwargs, node):
    parts = [_expr(tr, p, node) for p in args[0]]
    axis = tr.integer(args[1] if len(args) > 1 else kwargs.get("axis", Affine(0)), node).static
    expanded = []
    for p in parts:
        shape = [d.static for d in p.shape]
        shape.insert(axis % (p.ndim + 1), 1)  # type: ignore[arg-type]
        expanded.append(reshape(tr, p, tuple(Affine(d) for d in shape), node))
    return _concatenate(tr, [tuple(expanded), Affine(axis)], {}, node)


def _len(tr, args, kwargs, node):
    e = args[0]
    if isinstance(e, tuple):
        return Affine(len(e))
    e = _expr(tr, e, node)
    if not e.ndim:
        raise tr.fail("len() of a scalar", node)
    return e.shape[0]


def _minmax(kind: str) -> Handler:
    def handler(tr, args, kwargs, node):
        if len(args) == 1:
            return reduce(tr, "max" if kind == "maximum" else "min", _expr(tr, args[0], node), None, False, node)
        if all(isinstance(a, Affine) for a in args):
            if all(a.static is not None for a in args):
                return Affine((max if kind == "maximum" else min)(a.static for a in args))
        result = _expr(tr, args[0], node)
        for a in args[1:]:
            result = tr.elementwise(kind, [result, _expr(tr, a, node)], node)
        return result

    return handler


def _float(tr, args, kwargs, node):
    e = _expr(tr, args[0], node)
    if e.ndim:
        raise tr.fail("float() of an array", node)
    if isinstance(e, Const):
        return Const(float(e.value), "f64")
    return astype(tr, e, "f64" if not is_float(e.dtype) else e.dtype, node)


def _int(tr, args, kwargs, node):
    v = args[0]
    if isinstance(v, Affine):
        return v
    if isinstance(v, Const) and not v.shape:
        return Affine(int(v.value))
    raise tr.fail("int() of a run-time float is not supported (it would make a data-dependent index)", node)


def _norm(tr, args, kwargs, node):
    _no_kwargs(tr, kwargs, node)
    e = _expr(tr, args[0], node)
    return tr.elementwise("sqrt", [reduce(tr, "add", tr.binop("mul", e, e, node), None, False, node)], node)


def _moment(kind: str) -> Handler:
    """np.var / np.std: the mean of squared deviations (ddof=0), its square root."""

    def handler(tr, args, kwargs, node):
        _no_kwargs(tr, kwargs, node, ("axis", "keepdims"))
        e = _expr(tr, args[0], node)
        axis = args[1] if len(args) > 1 else kwargs.get("axis")
        keep = kwargs.get("keepdims", False)
        d = tr.binop("sub", e, reduce(tr, "mean", e, axis, True, node), node)
        var = reduce(tr, "mean", tr.binop("mul", d, d, node), axis, keep, node)
        return tr.elementwise("sqrt", [var], node) if kind == "std" else var

    return handler


def _scaled_log(base: float) -> Handler:
    def handler(tr, args, kwargs, node):
        return tr.binop("div", _unary("log")(tr, args, kwargs, node), Const(math.log(base), "f64"), node)

    return handler


def _hyperbolic(kind: str) -> Handler:
    def handler(tr, args, kwargs, node):
        e = _expr(tr, args[0], node)
        up = tr.elementwise("exp", [e], node)
        down = tr.elementwise("exp", [tr.elementwise("neg", [e], node)], node)
        return tr.binop("mul", tr.binop("sub" if kind == "sinh" else "add", up, down, node), Const(0.5, "f64"), node)

    return handler


def _unsupported(what: str) -> Handler:
    def handler(tr, args, kwargs, node):
        raise tr.fail(what, node)

    return handler


HANDLERS: dict[Any, Handler] = {
    **{f: _unary(n, f) for f, n in UNARY.items()},
    **{f: _binary(n) for f, n in BINARY.items()},
    **{f: _reduction(k) for f, k in REDUCTIONS.items()},
    np.dot: _dot, np.matmul: lambda tr, a, k, n: matmul(tr, _expr(tr, a[0], n), _expr(tr, a[1], n), n),
    np.inner: _dot, np.vdot: _dot, np.outer: _outer, np.einsum: _einsum, np.transpose: _transpose,
    np.flip: _flip, np.reshape: _reshape, np.ravel: lambda tr, a, k, n: _flat(tr, _expr(tr, a[0], n), n),
    np.zeros: _filled(0.0), np.ones: _filled(1.0), np.empty: _filled(0.0), np.full: _filled(None),
    np.zeros_like: _filled_like(0.0), np.ones_like: _filled_like(1.0), np.empty_like: _filled_like(0.0),
    np.full_like: _filled_like(None), np.copy: _copy, np.array: _copy, np.asarray: _asarray,
    np.arange: _arange, np.where: _where, np.clip: _clip, np.square: _square, np.trace: _trace,
    np.diag: _diag, np.diagonal: lambda tr, a, k, n: _diagonal(tr, _expr(tr, a[0], n), n),
    np.concatenate: _concatenate, np.stack: _stack, np.linalg.norm: _norm,
    np.var: _moment("var"), np.std: _moment("std"), np.log2: _scaled_log(2.0), np.log10: _scaled_log(10.0),
    np.sinh: _hyperbolic("sinh"), np.cosh: _hyperbolic("cosh"),
    np.reciprocal: lambda tr, a, k, n: tr.binop("div", Const(1.0, "f64"), a[0], n),
    builtins.len: _len, builtins.min: _minmax("minimum"), builtins.max: _minmax("maximum"),
    builtins.float: _float, builtins.int: _int,
    builtins.range: _unsupported("range() is supported only as the iterable of a for loop"),
    builtins.print: _unsupported("print() is not supported in compiled functions"),
    np.nonzero: _unsupported("np.nonzero gives a data-dependent shape; it is not supported"),
    np.argwhere: _unsupported("np.argwhere gives a data-dependent shape; it is not supported"),
    np.unique: _unsupported("np.unique gives a data-dependent shape; it is not supported"),
}


def array_attribute(tr, e: Expr, name: str, node: ast.AST) -> Any:
    from dfc.frontend.translate import Method

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
        _no_kwargs(tr, kwargs, node, ("axis", "keepdims"))
        axis = args[0] if args else kwargs.get("axis")
        return reduce(tr, kind, e, axis, kwargs.get("keepdims", False), node)

    return handler


METHODS: dict[str, Handler] = {
    **{n: _method_reduction(k) for n, k in METHOD_REDUCTIONS.items()},
    **{m: (lambda m: lambda tr, e, a, k, n: _moment(m)(tr, [e, *a], k, n))(m) for m in METHOD_MOMENTS},
    "dot": lambda tr, e, a, k, n: _dot(tr, [e, a[0]], k, n),
    "transpose": lambda tr, e, a, k, n: transpose(tr, e, tuple(a[0]) if len(a) == 1 and isinstance(a[0], tuple) else tuple(a), n),
    "reshape": lambda tr, e, a, k, n: reshape(tr, e, a[0] if len(a) == 1 else tuple(a), n),
    "copy": lambda tr, e, a, k, n: _copy(tr, [e], k, n),
    "ravel": lambda tr, e, a, k, n: _flat(tr, e, n),
    "flatten": lambda tr, e, a, k, n: _flat(tr, e, n),
    "astype": lambda tr, e, a, k, n: astype(tr, e, dtype_from_numpy(a[0]) or "f64", n),
    "diagonal": lambda tr, e, a, k, n: _diagonal(tr, e, n),
    "trace": lambda tr, e, a, k, n: _trace(tr, [e], k, n),
}
