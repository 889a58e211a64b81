"""NumPy's searches in sorted sequences: `np.searchsorted`, `np.digitize`, `np.interp` and `np.bincount`.

A search is a count: `searchsorted(a, v, 'left')` is the number of elements of the sorted `a` that sort
before `v` (NaN last, as NumPy sorts), found by a binary search of ceil(log2(len(a) + 1)) steps per element
of `v`, each step one map over `v` (no data-dependent control flow): len(v) * log2(len(a)) comparisons, and
NumPy's result whenever `a` is sorted (NumPy does not check that either). `interp` reads its interval's
ends at the found index (a gather, differentiable in `x`, `xp` and `fp`).
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from dfc.frontend.affine import Affine
from dfc.frontend.arrays import Const, Expr, Iota, Op, View, is_float
from dfc.frontend.numpy_api import reduce
from dfc.frontend.numpy_args import Handler, astype, bind, condition_of, expr_of, static
from dfc.frontend.numpy_shapes import flat
from dfc.frontend.numpy_ufuncs import UFUNC_HANDLERS


def _bool(tr, name: str, a: Any, b: Any, node: ast.AST) -> Expr:
    return condition_of(tr, tr.compare(name, a, b, node), node)


def _or(tr, a: Expr, b: Expr, node: ast.AST) -> Expr:
    return tr.elementwise("or", [a, b], node, "i1")


def _isnan(tr, e: Expr, node: ast.AST) -> Expr:
    return UFUNC_HANDLERS[np.isnan](tr, [e], {}, node)


def before(tr, a: Expr, v: Expr, right: bool, node: ast.AST) -> Expr:
    """`a` sorts before `v` in NumPy's order (NaN after every number): `a < v`, or `a <= v` when `right`."""
    r = _bool(tr, "le" if right else "lt", a, v, node)
    if not (is_float(a.dtype) or is_float(v.dtype)):
        return r
    v_nan = _isnan(tr, v, node)
    if right:
        return _or(tr, r, v_nan, node)
    a_number = tr.elementwise("not", [_isnan(tr, a, node)], node, "i1")
    return _or(tr, r, tr.elementwise("and", [v_nan, a_number], node, "i1"), node)


def count_before(tr, a: Expr, v: Expr, right: bool, node: ast.AST) -> Expr:
    """For each element of `v` (any static shape), how many elements of the sorted 1-d `a` sort before it
    (int64): a branch-free binary search. Step k (k = 2^(K-1), ..., 2, 1 with K = n.bit_length(), so the
    steps add up to at least n) moves the count `pos` to `pos + k` when `a[pos + k - 1]` sorts before `v`;
    by induction `pos` stays a count of elements before `v`, and after the last step no further one is."""
    a, v = (astype(tr, e, "i8", node) if e.dtype == "i1" else e for e in (a, v))  # False < True
    n = tr.em.static(a, "np.searchsorted's array")[0]
    if isinstance(v, Op | Const):
        v = View.whole(tr.em.materialize(v))  # read by every step (a constant: not folded into Python values)
    zero = Const(0, "i64", False)
    pos: Expr = tr.elementwise("where", [_bool(tr, "eq", v, v, node), zero, zero], node, "i64") if n == 0 else zero
    for step in reversed(range(n.bit_length())):
        moved = expr_of(tr, tr.binop("add", pos, 1 << step, node), node)
        last = tr.elementwise("minimum", [expr_of(tr, tr.binop("sub", moved, 1, node), node), Const(n - 1, "i64")],
                              node)
        fits = tr.elementwise("and", [expr_of(tr, _bool(tr, "le", moved, n, node), node),
                                      before(tr, tr.index(a, (last,), node), v, right, node)], node, "i1")
        step_taken = tr.binop("mul", astype(tr, fits, "i64", node), 1 << step, node)  # one map a step (no select)
        pos = View.whole(tr.em.materialize(expr_of(tr, tr.binop("add", pos, step_taken, node), node), "i64"))
    return pos


def _side(tr, side: Any, node: ast.AST) -> bool:
    s = static(side)
    if s not in ("left", "right"):
        raise tr.fail(f"np.searchsorted's side must be 'left' or 'right', got {s!r}", node)
    return s == "right"


def _one_d(tr, v: Any, node: ast.AST, what: str) -> Expr:
    e = expr_of(tr, v, node)
    if e.ndim != 1:
        raise tr.fail(f"{what} must be 1-d", node)
    tr.em.static(e, what)
    return e


def _searchsorted(tr, args, kwargs, node):
    """np.searchsorted(a, v, side='left', sorter=None): `a[sorter]` when a sorter is given."""
    a, v, side, sorter = bind(tr, args, kwargs, node, "np.searchsorted", ("a", "v", "side", "sorter"), ("left", None))
    x = _one_d(tr, a, node, "np.searchsorted's array")
    if sorter is not None:
        x = tr.index(x, (_one_d(tr, sorter, node, "np.searchsorted's sorter"),), node)
    return count_before(tr, x, expr_of(tr, v, node), _side(tr, side, node), node)


def _searchsorted_method(tr, e, args, kwargs, node):
    v, side, sorter = bind(tr, args, kwargs, node, ".searchsorted()", ("v", "side", "sorter"), ("left", None))
    return _searchsorted(tr, [e, v, side, sorter], {}, node)


def _digitize(tr, args, kwargs, node):
    """np.digitize(x, bins, right=False): the count of bins <= x (< x when `right`) for increasing bins,
    len(bins) minus it for decreasing ones (bins[-1] < bins[0]). NumPy refuses bins that are not monotonic;
    here they are assumed monotonic, as searchsorted assumes its array sorted."""
    x, bins, right = bind(tr, args, kwargs, node, "np.digitize", ("x", "bins", "right"), (False,))
    b = _one_d(tr, bins, node, "np.digitize's bins")
    b = astype(tr, b, "i8", node) if b.dtype == "i1" else b  # False < True
    e = expr_of(tr, x, node)
    closed = static(right)
    if not isinstance(closed, bool | int):
        raise tr.fail("np.digitize's right must be a constant True or False", node)
    n = tr.em.static(b, "np.digitize's bins")[0]
    up = count_before(tr, b, e, not closed, node)  # searchsorted(bins, x, side='right' unless right)
    if n < 2:
        return up
    # decreasing: len - searchsorted(bins[::-1], x, side), the same count of the reversed bins
    down = tr.binop("sub", Const(n, "i64", False), count_before(tr, tr.index(b, (slice(None, None, -1),), node), e,
                                                                 not closed, node), node)
    decreasing = _bool(tr, "lt", tr.index(b, (Affine(n - 1),), node), tr.index(b, (Affine(0),), node), node)
    return tr.elementwise("where", [decreasing, expr_of(tr, down, node), up], node, "i64")


def _interp(tr, args, kwargs, node):
    """np.interp(x, xp, fp, left=None, right=None): NumPy's formula (its C loop), in float64: fp[j] at
    x == xp[j], else slope * (x - xp[j]) + fp[j] (from the right end when that is NaN, fp[j] when both
    ends are equal), with j the interval holding x; left/right (fp's ends by default) outside xp; NaN at
    NaN. `xp` is assumed increasing (NumPy does not check it)."""
    x, xp, fp, left, right, period = bind(tr, args, kwargs, node, "np.interp", ("x", "xp", "fp", "left", "right",
                                                                                "period"), (None, None, None))
    if period is not None:
        raise tr.fail("np.interp with period= is not supported (it sorts xp modulo the period)", node)
    xs, ps = (astype(tr, _one_d(tr, v, node, f"np.interp's {w}"), "f64", node) for v, w in ((xp, "xp"), (fp, "fp")))
    if ps.dtype != "f64" or xs.shape[0].static != ps.shape[0].static or xs.shape[0].static == 0:
        raise tr.fail("np.interp's xp and fp must be non-empty and of one length", node)
    e = astype(tr, expr_of(tr, x, node), "f64", node)
    n = xs.shape[0].static
    x0, xn = tr.index(xs, (Affine(0),), node), tr.index(xs, (Affine(n - 1),), node)
    f0, fn = tr.index(ps, (Affine(0),), node), tr.index(ps, (Affine(n - 1),), node)
    lo = f0 if left is None else astype(tr, expr_of(tr, left, node), "f64", node)
    hi = fn if right is None else astype(tr, expr_of(tr, right, node), "f64", node)
    if n == 1:
        inside: Expr = f0
    else:
        j = tr.binop("sub", count_before(tr, xs, e, True, node), 1, node)
        j = tr.elementwise("minimum", [tr.elementwise("maximum", [expr_of(tr, j, node), Const(0, "i64")], node),
                                       Const(n - 2, "i64")], node)
        xa, xb = tr.index(xs, (j,), node), tr.index(xs, (tr.binop("add", j, 1, node),), node)
        ya, yb = tr.index(ps, (j,), node), tr.index(ps, (tr.binop("add", j, 1, node),), node)
        slope = tr.binop("div", tr.binop("sub", yb, ya, node), tr.binop("sub", xb, xa, node), node)

        def line(x_end: Expr, y_end: Expr) -> Expr:
            return expr_of(tr, tr.binop("add", tr.binop("mul", slope, tr.binop("sub", e, x_end, node), node), y_end,
                                        node), node)

        inside, again = line(xa, ya), line(xb, yb)
        again = tr.elementwise("where", [tr.elementwise("and", [_isnan(tr, again, node), _bool(tr, "eq", ya, yb, node)],
                                                        node, "i1"), ya, again], node, "f64")
        inside = tr.elementwise("where", [_isnan(tr, inside, node), again, inside], node, "f64")
        inside = tr.elementwise("where", [_bool(tr, "eq", e, xa, node), ya, inside], node, "f64")
        inside = tr.elementwise("where", [_bool(tr, "eq", e, xn, node), fn, inside], node, "f64")
    out = tr.elementwise("where", [_bool(tr, "gt", e, xn, node), hi, inside], node, "f64")
    out = tr.elementwise("where", [_bool(tr, "lt", e, x0, node), lo, out], node, "f64")
    return tr.elementwise("where", [_isnan(tr, e, node), e, out], node, "f64")


def _bincount(tr, args, kwargs, node):
    """np.bincount(x, weights=None, minlength=0) with a constant minlength >= 1: minlength bins, bin k the
    count (the weights' sum, float64) of the elements equal to k. NumPy's result has max(x) + 1 bins when
    that is more, a size read from the data: here each element is read once at its index into the
    minlength bins, so compiled code raises IndexError at the call for a value >= minlength (or negative:
    NumPy's ValueError), never a shorter result; without minlength the call is refused."""
    x, weights, minlength = bind(tr, args, kwargs, node, "np.bincount", ("x", "weights", "minlength"),
                                 (None, Affine(0)))
    e = _one_d(tr, x, node, "np.bincount's input")
    if is_float(e.dtype):
        raise tr.fail(f"np.bincount takes non-negative integers, not {e.dtype} values (NumPy: TypeError)", node)
    size = tr.integer(minlength, node).static
    if size is None or size < 1:
        raise tr.fail("np.bincount without a constant minlength >= 1 has max(x) + 1 bins, a size read from the data: "
                      "pass minlength= (an upper bound of the values plus one)", node)
    keys = astype(tr, e, "i64", node)
    bins = tr.index(Iota(Affine(0), 1, Affine(size)), (slice(None), None), node)
    hits = _bool(tr, "eq", bins, tr.index(keys, (None, slice(None)), node), node)
    if weights is None:
        counts, zero = reduce(tr, "add", hits, Affine(1), False, node), Const(0, "i64", False)
    else:
        w = astype(tr, flat(tr, expr_of(tr, weights, node), node), "f64", node)
        if w.shape[0].static != e.shape[0].static:
            raise tr.fail("np.bincount's weights must have x's length", node)
        zero = Const(0.0, "f64", False)
        counts = reduce(tr, "add", tr.elementwise("where", [hits, tr.index(w, (None, slice(None)), node), zero], node,
                                                  "f64"), Affine(1), False, node)
    # each value's own bin read back (a gather the engine bounds-checks); it holds a hit whenever it exists
    found = reduce(tr, "add", hits, Affine(1), False, node) if weights is not None else counts
    missing = reduce(tr, "add", _bool(tr, "lt", tr.index(found, (keys,), node, wrap=False), 1, node), None, False,
                     node)
    return tr.elementwise("where", [_bool(tr, "eq", missing, 0, node), counts, zero], node, counts.dtype)


SEARCH_HANDLERS: dict[Any, Handler] = {
    np.searchsorted: _searchsorted, np.digitize: _digitize, np.interp: _interp, np.bincount: _bincount,
}
"""The functions of this module, by the NumPy function."""

SEARCH_METHODS: dict[str, Handler] = {"searchsorted": _searchsorted_method}
