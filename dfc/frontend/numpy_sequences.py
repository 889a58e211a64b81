"""NumPy's functions of sequences along an axis: `np.diff`, `np.ptp`, `np.trapezoid`, `np.convolve`,
`np.correlate`, `np.isclose`/`np.allclose`, and the repetitions `np.tile`, `np.repeat` (and `.repeat`),
`np.fliplr`/`np.flipud`.

Each is built from slices, elementwise functions, reductions and views, so both engines and autodiff
treat it as they treat those; sizes are compile-time constants (a result whose size depends on the data
is refused by name).
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from dfc.frontend.affine import Affine
from dfc.frontend.arrays import Const, Expr, View, is_float, result_dtype
from dfc.frontend.numpy_api import _broadcast, reduce
from dfc.frontend.numpy_args import Handler, astype, axes_of, bind, condition_of, expr_of, static
from dfc.frontend.numpy_shapes import SHAPE_HANDLERS, flat, reshape
from dfc.frontend.numpy_ufuncs import UFUNC_HANDLERS


def _axis(tr, axis: Any, e: Expr, node: ast.AST, what: str) -> int:
    if e.ndim == 0:
        raise tr.fail(f"{what} needs an array of rank 1 or more", node)
    if isinstance(axis, tuple):
        raise tr.fail(f"{what} takes one integer axis", node)
    return axes_of(tr, axis, e.ndim, node)[0]


def _along(ax: int, part: slice) -> tuple:
    return (slice(None),) * ax + (part,)


def _strong(tr, v: Any, node: ast.AST) -> Expr:
    """`np.asanyarray(v)`: a Python number becomes an int64/float64/bool array, as NumPy converts it."""
    e = expr_of(tr, v, node)
    return astype(tr, e, e.dtype if e.dtype in ("i1", "f64") or not is_float(e.dtype) else "f64", node) if e.weak \
        else e


def _concat(tr, parts: list[Expr], ax: int, node: ast.AST) -> Expr:
    return SHAPE_HANDLERS[np.concatenate](tr, [tuple(parts), Affine(ax)], {}, node)


def _edge(tr, v: Any, e: Expr, ax: int, node: ast.AST) -> Expr:
    """np.diff's prepend/append: a scalar is broadcast to `e`'s shape with size 1 along `ax`."""
    x = _strong(tr, v, node)
    if x.ndim == 0:
        shape = [Affine(1) if k == ax else d for k, d in enumerate(e.shape)]
        return _broadcast(tr, x, shape, x.dtype, node)
    return x


def diff(tr, e: Expr, n: int, ax: int, node: ast.AST) -> Expr:
    """The `n`-th difference along `ax` (booleans: `!=`, as NumPy's)."""
    for _ in range(n):
        hi, lo = tr.index(e, _along(ax, slice(1, None)), node), tr.index(e, _along(ax, slice(None, -1)), node)
        e = tr.elementwise("xor", [hi, lo], node, "i1") if e.dtype == "i1" else tr.binop("sub", hi, lo, node)
    return e


def _diff(tr, args, kwargs, node):
    """np.diff(a, n=1, axis=-1, prepend, append): prepend/append concatenated along the axis first."""
    a, n, axis, prepend, append = bind(tr, args, kwargs, node, "np.diff", ("a", "n", "axis", "prepend", "append"),
                                       (Affine(1), Affine(-1), None, None))
    e = expr_of(tr, a, node)
    ax = _axis(tr, axis, e, node, "np.diff")
    count = tr.integer(n, node).static
    if count is None or count < 0:
        raise tr.fail(f"np.diff's order n must be a constant >= 0, got {n}", node)
    if count == 0:
        return e
    parts = [_edge(tr, prepend, e, ax, node)] if prepend is not None else []
    parts.append(e)
    if append is not None:
        parts.append(_edge(tr, append, e, ax, node))
    return diff(tr, _concat(tr, parts, ax, node) if len(parts) > 1 else e, count, ax, node)


def _ptp(tr, args, kwargs, node):
    """np.ptp(a, axis=None, keepdims=False): max - min, in `a`'s dtype (integers wrap, as NumPy's)."""
    a, axis, keepdims = bind(tr, args, kwargs, node, "np.ptp", ("a", "axis", "keepdims"), (None, False))
    e = expr_of(tr, a, node)
    if e.dtype == "i1":
        raise tr.fail("np.ptp of booleans is not defined (NumPy: boolean subtract)", node)
    hi, lo = reduce(tr, "max", e, axis, keepdims, node), reduce(tr, "min", e, axis, keepdims, node)
    return tr.binop("sub", hi, lo, node)


def _trapezoid(tr, args, kwargs, node):
    """np.trapezoid(y, x=None, dx=1.0, axis=-1): sum(d * (y[1:] + y[:-1]) / 2.0) along the axis, `d` the
    differences of a 1-d `x` (laid along the axis), of an `x` of `y`'s shape, or `dx`."""
    y, x, dx, axis = bind(tr, args, kwargs, node, "np.trapezoid", ("y", "x", "dx", "axis"), (None, 1.0, Affine(-1)))
    e = expr_of(tr, y, node)
    ax = _axis(tr, axis, e, node, "np.trapezoid")
    if x is None:
        d: Any = dx
    else:
        xs = expr_of(tr, x, node)
        if xs.ndim == 1:
            d = diff(tr, xs, 1, 0, node)
            d = reshape(tr, d, tuple(d.shape[0] if k == ax else Affine(1) for k in range(e.ndim)), node)
        elif xs.ndim == e.ndim:
            d = diff(tr, xs, 1, ax, node)
        else:
            raise tr.fail("np.trapezoid's x must be 1-d or of y's rank", node)
    hi, lo = tr.index(e, _along(ax, slice(1, None)), node), tr.index(e, _along(ax, slice(None, -1)), node)
    pair = tr.elementwise("or", [hi, lo], node, "i1") if e.dtype == "i1" else tr.binop("add", hi, lo, node)  # NumPy's
    terms = tr.binop("div", tr.binop("mul", d, pair, node), 2.0, node)
    terms = expr_of(tr, terms, node)
    if terms.dtype == "i1":
        terms = astype(tr, terms, "f64", node)
    return reduce(tr, "add", terms, Affine(ax), False, node)


def _windows(tr, a: Expr, m: int, count: int, node: ast.AST) -> View:
    """The `count` x `m` sliding windows `a[k + j]` of a 1-d array (a view: NumPy's as_strided)."""
    v = View.whole(tr.em.materialize(a))
    return View(v.source, [Affine(count), Affine(m)], [Affine(0)], [[1, 1]], v.dtype)


def _sliding(correlate: bool) -> Handler:
    """np.convolve(a, v, mode='full') / np.correlate(a, v, mode='valid') of 1-d arrays: the full result
    `sum_j apad[k + j] * w[j]` (w: v, reversed for convolve; apad: a with len(v) - 1 zeros each side),
    then NumPy's 'same' or 'valid' part of it."""
    what = "np.correlate" if correlate else "np.convolve"

    def handler(tr, args, kwargs, node):
        a, v, mode = bind(tr, args, kwargs, node, what, ("a", "v", "mode"), ("valid" if correlate else "full",))
        x, w = expr_of(tr, a, node), expr_of(tr, v, node)
        mode = static(mode)
        if mode not in ("full", "same", "valid"):
            raise tr.fail(f"{what}'s mode must be 'full', 'same' or 'valid', got {mode!r}", node)
        if x.ndim != 1 or w.ndim != 1:
            raise tr.fail(f"{what} takes two 1-d arrays", node)
        n, m = tr.em.static(x, f"{what}'s first array")[0], tr.em.static(w, f"{what}'s second array")[0]
        if n == 0 or m == 0:
            raise tr.fail(f"{what} of an empty array is not defined (NumPy: ValueError)", node)
        dtype = result_dtype([x, w])
        if x.weak and w.weak and is_float(dtype):
            dtype = tr.default_float
        work = "i64" if dtype == "i1" else dtype
        x, w = astype(tr, x, work, node), astype(tr, w, work, node)
        if not correlate:
            w = tr.index(w, (slice(None, None, -1),), node)
        zeros = Const(0, work, False, [Affine(m - 1)])
        padded = _concat(tr, [zeros, x, zeros], 0, node) if m > 1 else x
        full = n + m - 1
        products = tr.elementwise("mul", [_windows(tr, padded, m, full, node), w], node, work)
        out = reduce(tr, "add", products, Affine(1), False, node)
        lo, hi = min(n, m), max(n, m)
        if mode == "same":
            start = (lo - 1) // 2 if not correlate or n >= m else n // 2
            out = tr.index(out, (slice(start, start + hi),), node)
        elif mode == "valid":
            out = tr.index(out, (slice(lo - 1, hi),), node)
        if dtype == "i1":
            return condition_of(tr, tr.compare("ne", out, Const(0, "i64"), node), node)
        return astype(tr, out, dtype, node)

    return handler


def isclose(tr, a: Any, b: Any, rtol: Any, atol: Any, equal_nan: Any, node: ast.AST) -> Expr:
    """NumPy's formula: |a - b| <= atol + rtol * |b| where b is finite, or a == b (infinities);
    equal_nan also takes NaN to be close to NaN. `b` is computed in float (`result_type(b, 1.0)`)."""
    x, y = expr_of(tr, a, node), expr_of(tr, b, node)
    if not is_float(y.dtype):
        y = astype(tr, y, "f64", node)
    nan_equal = static(equal_nan)
    if not isinstance(nan_equal, bool | int):
        raise tr.fail("np.isclose's equal_nan must be a constant True or False", node)
    diff_ = tr.elementwise("abs", [expr_of(tr, tr.binop("sub", x, y, node), node)], node)
    bound = tr.binop("add", atol, tr.binop("mul", rtol, tr.elementwise("abs", [y], node), node), node)
    close = condition_of(tr, tr.compare("le", diff_, bound, node), node)
    finite = UFUNC_HANDLERS[np.isfinite](tr, [y], {}, node)
    r = tr.elementwise("or", [tr.elementwise("and", [close, finite], node, "i1"),
                              condition_of(tr, tr.compare("eq", x, y, node), node)], node, "i1")
    if nan_equal:
        nans = [UFUNC_HANDLERS[np.isnan](tr, [e], {}, node) for e in (x, y)]
        r = tr.elementwise("or", [r, tr.elementwise("and", nans, node, "i1")], node, "i1")
    return r


def _isclose(tr, args, kwargs, node):
    a, b, rtol, atol, equal_nan = bind(tr, args, kwargs, node, "np.isclose", ("a", "b", "rtol", "atol", "equal_nan"),
                                       (1e-05, 1e-08, False))
    return isclose(tr, a, b, rtol, atol, equal_nan, node)


def _allclose(tr, args, kwargs, node):
    a, b, rtol, atol, equal_nan = bind(tr, args, kwargs, node, "np.allclose", ("a", "b", "rtol", "atol", "equal_nan"),
                                       (1e-05, 1e-08, False))
    return reduce(tr, "min", isclose(tr, a, b, rtol, atol, equal_nan, node), None, False, node)


def _tile(tr, args, kwargs, node):
    """np.tile(A, reps): A (its rank raised to len(reps) with leading 1s) read as (1, s0, 1, s1, ...),
    broadcast to (r0, s0, r1, s1, ...) and reshaped to (r0 * s0, r1 * s1, ...)."""
    a, reps = bind(tr, args, kwargs, node, "np.tile", ("A", "reps"))
    e = expr_of(tr, a, node)
    counts = [tr.integer(r, node).static for r in (reps if isinstance(reps, tuple) else (reps,))]
    if any(c is None or c < 0 for c in counts):
        raise tr.fail("np.tile needs constant repetitions >= 0", node)
    rank = max(len(counts), e.ndim)
    counts = [1] * (rank - len(counts)) + counts  # type: ignore[operator]
    sizes = [1] * (rank - e.ndim) + tr.em.static(e, "the tiled array")
    read = reshape(tr, e, tuple(Affine(x) for s in sizes for x in (1, s)), node)
    wide = _broadcast(tr, read, [Affine(x) for c, s in zip(counts, sizes) for x in (c, s)], e.dtype, node)
    return reshape(tr, wide, tuple(Affine(c * s) for c, s in zip(counts, sizes)), node)


def repeat(tr, a: Any, repeats: Any, axis: Any, node: ast.AST) -> Expr:
    """np.repeat with one constant count: each element read as (..., s, 1, ...), broadcast to (..., s, r, ...)
    and reshaped to (..., s * r, ...). Per-element counts are refused (a size read from the data)."""
    e = expr_of(tr, a, node)
    r = static(repeats)
    if not isinstance(r, int) or isinstance(r, bool) or r < 0:
        raise tr.fail("np.repeat needs one constant count >= 0 (per-element counts, or counts read from the data, "
                      "give a result size that is not known when compiling)", node)
    if axis is None:
        e, ax = flat(tr, e, node), 0
    else:
        ax = _axis(tr, axis, e, node, "np.repeat")
    sizes = tr.em.static(e, "the repeated array")
    read = reshape(tr, e, tuple(Affine(x) for x in sizes[:ax + 1] + [1] + sizes[ax + 1:]), node)
    wide = _broadcast(tr, read, [Affine(x) for x in sizes[:ax + 1] + [r] + sizes[ax + 1:]], e.dtype, node)
    return reshape(tr, wide, tuple(Affine(x) for x in sizes[:ax] + [sizes[ax] * r] + sizes[ax + 1:]), node)


def _repeat(tr, args, kwargs, node):
    a, repeats, axis = bind(tr, args, kwargs, node, "np.repeat", ("a", "repeats", "axis"), (None,))
    return repeat(tr, a, repeats, axis, node)


def _repeat_method(tr, e, args, kwargs, node):
    repeats, axis = bind(tr, args, kwargs, node, ".repeat()", ("repeats", "axis"), (None,))
    return repeat(tr, e, repeats, axis, node)


def _flip_axis(ax: int, name: str, rank: int) -> Handler:
    def handler(tr, args, kwargs, node):
        (m,) = bind(tr, args, kwargs, node, f"np.{name}", ("m",))
        e = expr_of(tr, m, node)
        if e.ndim < rank:
            raise tr.fail(f"np.{name} needs an array of rank {rank} or more", node)
        return SHAPE_HANDLERS[np.flip](tr, [e, Affine(ax)], {}, node)

    return handler


SEQUENCE_HANDLERS: dict[Any, Handler] = {
    np.diff: _diff, np.ptp: _ptp, np.trapezoid: _trapezoid, np.convolve: _sliding(False),
    np.correlate: _sliding(True), np.isclose: _isclose, np.allclose: _allclose, np.tile: _tile, np.repeat: _repeat,
    np.fliplr: _flip_axis(1, "fliplr", 2), np.flipud: _flip_axis(0, "flipud", 1),
}
"""The functions of this module, by the NumPy function."""

SEQUENCE_METHODS: dict[str, Handler] = {"repeat": _repeat_method}
