"""NumPy's grids and the creation functions beyond zeros/ones/full: `np.histogram`, `np.linspace`,
`np.arange` with float steps, `np.meshgrid`, `np.mgrid[...]`/`np.ogrid[...]`
with constant bounds, `np.ndarray(shape, dtype)` (zero-filled, as `np.empty`),
and `np.cov`.

Sizes are compile-time constants (NumPy's, computed by NumPy's own rules);
values are `np.arange` index leaves scaled and shifted in the consuming map, so
a grid costs no memory until it is stored."""

from __future__ import annotations

import ast
import math
from typing import Any

import numpy as np

from dfc.frontend.affine import Affine
from dfc.frontend.arrays import Const, Expr, Iota, is_float, result_dtype
from dfc.frontend.numpy_api import _arange, _broadcast, _filled, astype, reduce
from dfc.frontend.numpy_args import Handler, bind, dtype_of, expr_of, fresh, static
from dfc.frontend.numpy_linalg import matmul
from dfc.frontend.numpy_shapes import transpose


def _ramp(tr, count: int, start: Any, step: Any, dtype: str, node: ast.AST) -> Expr:
    """`start + step * arange(count)` in `dtype` (start and step: numbers or 0-d arrays)."""
    k = astype(tr, Iota(Affine(0), 1, Affine(count)), dtype, node)
    return tr.binop("add", tr.binop("mul", k, step, node), start, node)


def linspace(tr, start: Any, stop: Any, num: int, endpoint: bool, dtype: str | None, node: ast.AST) -> tuple[Expr, Any]:
    """NumPy's linspace: start + k * step (the last element exactly `stop` with endpoint), and the step."""
    if num < 0:
        raise tr.fail(f"np.linspace: the number of samples must be non-negative, got {num}", node)
    a, b = expr_of(tr, start, node), expr_of(tr, stop, node)
    if a.ndim or b.ndim:
        raise tr.fail("np.linspace with array start or stop is not supported", node)
    d = result_dtype([a, b, Const(0.0, "f64")], floating=True)
    if a.weak and b.weak:
        d = "f64"
    div = (num - 1) if endpoint else num
    step = tr.binop("div", tr.binop("sub", b, a, node), Const(float(div), "f64") if div else Const(math.nan, "f64"), node)
    y = _ramp(tr, num, a, step if div else Const(0.0, "f64"), d, node)
    if endpoint and num > 1:  # NumPy sets the last sample to stop
        last = tr.compare("eq", Iota(Affine(0), 1, Affine(num)), Affine(num - 1), node)
        y = tr.elementwise("where", [last, astype(tr, b, d, node), y], node, d)
    return (astype(tr, y, dtype, node) if dtype else y), step


def _linspace(tr, args, kwargs, node):
    start, stop, num, endpoint, retstep, dtype, axis = bind(
        tr, args, kwargs, node, "np.linspace", ("start", "stop", "num", "endpoint", "retstep", "dtype", "axis"),
        (50, True, False, None, 0))
    n = tr.integer(num, node).static
    flags = [static(endpoint), static(retstep), static(axis)]
    if n is None or not all(isinstance(f, bool | int) for f in flags):
        raise tr.fail("np.linspace needs a constant num, endpoint, retstep and axis", node)
    if flags[2] not in (0, -1):
        raise tr.fail("np.linspace with axis is not supported (its start and stop are numbers)", node)
    y, step = linspace(tr, start, stop, n, bool(flags[0]), dtype_of(tr, dtype, node, None), node)
    return (y, step) if flags[1] else y


def _arange_float(tr, args, kwargs, node):
    """np.arange: integers as an index leaf; a float start, stop or step gives NumPy's
    ceil((stop - start) / step) float64 samples start + k * step."""
    values = [static(a) for a in args] + [static(v) for k, v in kwargs.items() if k != "dtype"]
    if not any(isinstance(v, float) for v in values):
        return _arange(tr, args, kwargs, node)
    start, stop, step, dtype = bind(tr, args, kwargs, node, "np.arange", ("start", "stop", "step", "dtype"),
                                    (None, 1, None))
    if stop is None:
        start, stop = 0, start
    a, b, s = (static(v) for v in (start, stop, step))
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (a, b, s)) or s == 0:
        raise tr.fail("np.arange with float arguments needs constant start, stop and a nonzero step", node)
    count = len(np.arange(a, b, s))
    y = _ramp(tr, count, Const(float(a), "f64"), Const(float(s), "f64"), "f64", node)
    d = dtype_of(tr, dtype, node, None)
    if d is not None and not is_float(d):  # NumPy casts start and start + step, then steps by their difference
        raise tr.fail("np.arange with float arguments and an integer dtype is not supported (use ints)", node)
    return astype(tr, y, d, node) if d else fresh(y)


def _grid_axis(tr, part: ast.expr, node: ast.AST) -> tuple[int, Any, Any, bool]:
    """(count, start, step, floating) of one `a:b:s` of np.mgrid/ogrid; a complex step `5j` is a sample count."""
    if not isinstance(part, ast.Slice):
        raise tr.fail("np.mgrid/np.ogrid take slices (a:b or a:b:step)", node)

    def value(x: ast.expr | None, default: Any) -> Any:
        if x is None:
            return default
        if isinstance(x, ast.Constant) and isinstance(x.value, complex):
            return x.value
        v = static(tr.expr(x))
        if not isinstance(v, int | float) or isinstance(v, bool):
            raise tr.fail("np.mgrid/np.ogrid need constant bounds and steps", x)
        return v

    a, b, s = value(part.lower, 0), value(part.upper, None), value(part.step, 1)
    if b is None or isinstance(a, complex) or isinstance(b, complex):
        raise tr.fail("np.mgrid/np.ogrid need a stop, and real start and stop", node)
    if isinstance(s, complex):  # NumPy: that many samples from a to b inclusive
        n = int(abs(s))
        return n, float(a), (b - a) / (n - 1) if n > 1 else 0.0, True
    if s == 0:
        raise tr.fail("np.mgrid/np.ogrid: a zero step", node)
    n = max(0, math.ceil((b - a) / s))
    return n, a, s, any(isinstance(v, float) for v in (a, b, s))


def grid(tr, sparse: bool, index: ast.expr, node: ast.AST) -> Any:
    """`np.mgrid[a:b, c:d]` (an array of shape (2, n, m)) or `np.ogrid[...]` (a list of broadcastable arrays)."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    axes = [_grid_axis(tr, p, node) for p in parts]
    floating = any(f for *_, f in axes)
    d = "f64" if floating else "i64"
    shape = [Affine(n) for n, *_ in axes]
    out = []
    for k, (n, a, s, _) in enumerate(axes):
        if floating:
            r = _ramp(tr, n, Const(float(a), "f64"), Const(float(s), "f64"), d, node)
        else:
            r = Iota(Affine(a), s, Affine(n))
        r = tr.index(r, tuple(slice(None) if j == k else None for j in range(len(axes))), node)
        out.append(r if sparse else _broadcast(tr, r, shape, d, node))
    if len(parts) == 1 and not isinstance(index, ast.Tuple):
        return fresh(tr.index(out[0], (slice(None),), node)) if sparse else out[0]
    if sparse:
        return tuple(out)
    from dfc.frontend.numpy_shapes import _stack

    return _stack(tr, [tuple(out)], {}, node)


def _meshgrid(tr, args, kwargs, node):
    extra = [k for k in kwargs if k not in ("indexing", "sparse", "copy")]
    if extra:
        raise tr.fail(f"unsupported keyword argument '{extra[0]}' of np.meshgrid", node)
    indexing, sparse = static(kwargs.get("indexing", "xy")), static(kwargs.get("sparse", False))
    if indexing not in ("xy", "ij") or not isinstance(sparse, bool):
        raise tr.fail("np.meshgrid takes indexing='xy' or 'ij' and a constant sparse", node)
    xs = [expr_of(tr, a, node) for a in args]
    xs = [x if x.ndim == 1 else _flat(tr, x, node) for x in xs]
    n = len(xs)
    shape = [x.shape[0] for x in xs]
    order = list(range(n))
    if indexing == "xy" and n > 1:
        shape[0], shape[1] = shape[1], shape[0]
        order[0], order[1] = 1, 0
    out = []
    for k, x in enumerate(xs):
        at = order.index(k)
        v = tr.index(x, tuple(slice(None) if j == at else None for j in range(n)), node)
        out.append(fresh(v) if sparse else _broadcast(tr, v, shape, tr.em.concrete(x), node))
    return tuple(out)


def _flat(tr, x: Expr, node: ast.AST) -> Expr:
    from dfc.frontend.numpy_shapes import flat

    return flat(tr, x, node)


def _ndarray(tr, args, kwargs, node):
    shape, dtype = bind(tr, args, kwargs, node, "np.ndarray", ("shape", "dtype"), (float,))
    return _filled(0.0)(tr, [shape], {"dtype": dtype}, node)


def _cov(tr, args, kwargs, node):
    """np.cov: rows are variables (rowvar=True), normalised by N - 1 (or N with bias, N - ddof)."""
    m, y, rowvar, bias, ddof = bind(tr, args, kwargs, node, "np.cov", ("m", "y", "rowvar", "bias", "ddof"),
                                    (None, True, False, None))
    if y is not None:
        raise tr.fail("np.cov with a second array y is not supported (stack the variables)", node)
    rv, b, dd = static(rowvar), static(bias), static(ddof)
    if not isinstance(rv, bool | int) or not isinstance(b, bool | int) or not (dd is None or isinstance(dd, int)):
        raise tr.fail("np.cov needs constant rowvar, bias and ddof", node)
    x = expr_of(tr, m, node)
    if x.ndim > 2:
        raise tr.fail("np.cov of an array of rank more than 2", node)
    if not is_float(x.dtype):
        x = astype(tr, x, "f64", node)
    if x.ndim == 1:
        x = tr.index(x, (None, slice(None)), node)
    elif not rv:
        x = transpose(tr, x, None, node)
    n = tr.em.static(x, "the observations")[1]
    dof = n - (dd if dd is not None else 0 if b else 1)
    centered = tr.binop("sub", x, reduce(tr, "mean", x, Affine(1), True, node), node)
    c = matmul(tr, centered, transpose(tr, centered, None, node), node)
    c = tr.elementwise("div", [c, Const(float(max(dof, 0)), "f64")], node)
    if tr.em.static(c, "the covariance") == [1, 1]:
        return tr.index(c, (Affine(0), Affine(0)), node)  # NumPy gives a 0-d array for one variable
    return c


def _triangle(tr, rows: int, cols: int, k: int, upper: bool, node: ast.AST) -> Expr:
    """The boolean (rows, cols) matrix of j - i >= k (upper) or j - i <= k."""
    i = tr.index(Iota(Affine(0), 1, Affine(rows)), (slice(None), None), node)
    j = tr.index(Iota(Affine(0), 1, Affine(cols)), (None, slice(None)), node)
    return tr.compare("ge" if upper else "le", tr.binop("sub", j, i, node), Affine(k), node)


def _constant_ints(tr, node: ast.AST, what: str, *values: Any) -> list[int]:
    out = []
    for v in values:
        n = tr.integer(v, node).static
        if n is None:
            raise tr.fail(f"{what} needs constant sizes and diagonal offset", node)
        out.append(n)
    return out


def _eye(tr, args, kwargs, node):
    n, m, k, dtype = bind(tr, args, kwargs, node, "np.eye", ("N", "M", "k", "dtype"), (None, 0, float))
    rows, cols, off = _constant_ints(tr, node, "np.eye", n, n if m is None else m, k)
    diagonal = tr.elementwise("and", [_triangle(tr, rows, cols, off, True, node),
                                      _triangle(tr, rows, cols, off, False, node)], node, "i1")
    return fresh(astype(tr, diagonal, dtype_of(tr, dtype, node, "f64"), node))


def _identity(tr, args, kwargs, node):
    n, dtype = bind(tr, args, kwargs, node, "np.identity", ("n", "dtype"), (float,))
    return _eye(tr, [n], {"dtype": dtype}, node)


def _tri(tr, args, kwargs, node):
    n, m, k, dtype = bind(tr, args, kwargs, node, "np.tri", ("N", "M", "k", "dtype"), (None, 0, float))
    rows, cols, off = _constant_ints(tr, node, "np.tri", n, n if m is None else m, k)
    return fresh(astype(tr, _triangle(tr, rows, cols, off, False, node), dtype_of(tr, dtype, node, "f64"), node))


def _tril_triu(upper: bool) -> Handler:
    what = "np.triu" if upper else "np.tril"

    def handler(tr, args, kwargs, node):
        m, k = bind(tr, args, kwargs, node, what, ("m", "k"), (0,))
        e = expr_of(tr, m, node)
        if e.ndim < 2:
            raise tr.fail(f"{what} of an array of rank less than 2 is not supported", node)
        rows, cols = tr.em.static(e, "the array")[-2:]
        (off,) = _constant_ints(tr, node, what, k)
        keep = _triangle(tr, rows, cols, off, upper, node)
        zero = Const(False if e.dtype == "i1" else 0, tr.em.concrete(e), False)
        return tr.elementwise("where", [keep, e, zero], node, tr.em.concrete(e))

    return handler


def _histogram(tr, args, kwargs, node):
    """np.histogram with a constant number of equal bins, or with explicit bin edges (a 1-d array, assumed
    increasing as NumPy requires; range= is then ignored, as NumPy ignores it): (counts, edges). Bin k holds
    the values with edges[k] <= x < edges[k + 1] (the last bin includes its right edge), which is what NumPy's
    index arithmetic and its corrections compute; a map over (bins, values) accumulates each test (no scatter)."""
    a, bins, range_, density, weights = bind(tr, args, kwargs, node, "np.histogram",
                                             ("a", "bins", "range", "density", "weights"), (10, None, None, None))
    edges_given = isinstance(bins, Expr) and bins.ndim == 1
    n = tr.integer(bins, node).static if not isinstance(bins, Expr) else None
    if edges_given:
        n = tr.em.static(bins, "np.histogram's bin edges")[0] - 1
    if n is None or n < 1:
        raise tr.fail("np.histogram needs a constant positive number of bins or a 1-d array of at least two "
                      "increasing bin edges", node)
    x = _flat(tr, expr_of(tr, a, node), node)
    if not is_float(x.dtype) and not edges_given:
        x = astype(tr, x, "f64", node)
    if edges_given:  # NumPy ignores range= then; the edges are assumed increasing (NumPy checks it)
        lo = hi = None
    elif range_ is None:
        lo, hi = reduce(tr, "min", x, None, False, node), reduce(tr, "max", x, None, False, node)
        same = tr.compare("eq", lo, hi, node)  # NumPy widens an empty range by 0.5 on each side
        lo = tr.elementwise("where", [same, tr.binop("sub", lo, Const(0.5, "f64"), node), lo], node, x.dtype)
        hi = tr.elementwise("where", [same, tr.binop("add", hi, Const(0.5, "f64"), node), hi], node, x.dtype)
    else:
        if not isinstance(range_, tuple) or len(range_) != 2:
            raise tr.fail("np.histogram's range is a pair (lower, upper)", node)
        lo, hi = (expr_of(tr, v, node) for v in range_)
    # NumPy: the edges computed in float64 from Python floats, then cast to the values' float type
    from dfc.frontend.arrays import View

    if edges_given:
        e = View.whole(tr.em.materialize(bins))
    else:
        lo, hi = (astype(tr, expr_of(tr, v, node), "f64", node) for v in (lo, hi))
        edges, _ = linspace(tr, lo, hi, n + 1, True, None, node)
        e = View.whole(tr.em.materialize(edges, tr.em.concrete(x)))
    left = tr.index(e, (slice(0, n), None), node)
    right = tr.index(e, (slice(1, n + 1), None), node)
    xs = tr.index(x, (None, slice(None)), node)
    last = tr.compare("eq", tr.index(Iota(Affine(0), 1, Affine(n)), (slice(None), None), node), Affine(n - 1), node)
    below = tr.elementwise("where", [last, tr.compare("le", xs, right, node), tr.compare("lt", xs, right, node)], node, "i1")
    inside = tr.elementwise("and", [tr.compare("ge", xs, left, node), below], node, "i1")
    if weights is None:
        counts = reduce(tr, "add", inside, Affine(1), False, node)
    else:
        w = tr.index(_flat(tr, expr_of(tr, weights, node), node), (None, slice(None)), node)
        zero = Const(0, tr.em.concrete(w), False)
        counts = reduce(tr, "add", tr.elementwise("where", [inside, w, zero], node, tr.em.concrete(w)), Affine(1),
                        False, node)
    if static(density):
        total = reduce(tr, "add", counts, None, False, node)
        width = tr.binop("sub", tr.index(e, (slice(1, n + 1),), node), tr.index(e, (slice(0, n),), node), node)
        counts = tr.elementwise("div", [counts, tr.binop("mul", width, total, node)], node)
    return View.whole(tr.em.materialize(counts)), e


CREATION_HANDLERS: dict[Any, Handler] = {
    np.histogram: _histogram,
    np.eye: _eye, np.identity: _identity, np.tri: _tri, np.tril: _tril_triu(False), np.triu: _tril_triu(True),
    np.linspace: _linspace, np.arange: _arange_float, np.meshgrid: _meshgrid, np.ndarray: _ndarray, np.cov: _cov,
}
