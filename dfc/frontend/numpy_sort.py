"""NumPy's sorting: `np.sort`, `np.argsort`, the `.sort()` (in place) and
`.argsort()` methods, and the order statistics `np.median`, `np.quantile` and
`np.percentile`, on the library's stable `nn.argsort` (NaN last, as NumPy)
and a gather of the values by its permutation (their gradient is the
gather's). Every `kind` gives the stable order, which is one
of the orders NumPy's unstable kinds may return; `order=` (structured arrays)
is refused."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from dfc.dialects.nn_sort import ArgsortOp, take_along
from dfc.frontend.affine import Affine
from dfc.frontend.arrays import Const, Expr, Gather, Op, View, is_float, is_unsigned
from dfc.frontend.numpy_args import Handler, astype, axes_of, bind, expr_of, keepdims_of, static
from dfc.frontend.numpy_shapes import flat
from dfc.frontend.order_statistics import at_fraction


def sorted_along(tr, e: Expr, axis: Any, node: ast.AST, what: str) -> tuple[View, View, int]:
    """(values, i64 indices, the axis) of the stable ascending sort of `e` along `axis` (None: of the
    flattened array)."""
    if axis is None:
        e, axis = flat(tr, e, node), Affine(0)
    if e.ndim == 0:
        raise tr.fail(f"{what} of a 0-d array along an axis (NumPy's AxisError; axis=None sorts it as 1-d)", node)
    k = axes_of(tr, axis, e.ndim, node)[0]
    x = tr.em.materialize(e)
    key = x
    if is_unsigned(e.dtype):  # sorted by the signed order of the values with their top bit flipped
        flip = Const(1 << (int(e.dtype[1:]) - 1), e.dtype, False)
        key = tr.em.materialize(Op("xor", [View.whole(x), flip], e.shape, e.dtype), f"i{e.dtype[1:]}")
    order = tr.em.b.insert(ArgsortOp(key, k)).result
    if e.static_shape is None:  # the values gathered by the frontend (nn.gather's sizes are static)
        return _take_along(View.whole(x), View.whole(order), k), View.whole(order), k
    return View.whole(tr.em.b.insert(take_along(x, order, k)).result), View.whole(order), k


def _take_along(x: View, order: View, k: int) -> View:
    """`np.take_along_axis(x, order, k)` as a view of `x` reading along axis k at `order` (same shape)."""
    n = x.ndim
    coef = [[int(r == c and r != k) for c in range(n)] for r in range(n)]
    return View(x.source, list(order.shape), [Affine(0)] * n, coef, x.dtype,
                gathers=[Gather([int(r == k) for r in range(n)], order, list(range(n)))])


def _no_order(tr, order: Any, what: str, node: ast.AST) -> None:
    if order is not None:
        raise tr.fail(f"{what} with order= (fields of a structured array) is not supported", node)


def _sort(tr, args, kwargs, node):
    a, axis, _kind, order, _stable = bind(tr, args, kwargs, node, "np.sort", ("a", "axis", "kind", "order", "stable"),
                                          (Affine(-1), None, None, None))
    _no_order(tr, order, "np.sort", node)
    return sorted_along(tr, expr_of(tr, a, node), axis, node, "np.sort")[0]


def _argsort(tr, args, kwargs, node):
    a, axis, _kind, order, _stable = bind(tr, args, kwargs, node, "np.argsort",
                                          ("a", "axis", "kind", "order", "stable"), (Affine(-1), None, None, None))
    _no_order(tr, order, "np.argsort", node)
    return sorted_along(tr, expr_of(tr, a, node), axis, node, "np.argsort")[1]


def _sort_method(tr, e, args, kwargs, node):
    """`a.sort()`: `a` sorted in place (a named array or a view of one); the call's value is None."""
    axis, _kind, order, _stable = bind(tr, args, kwargs, node, ".sort()", ("axis", "kind", "order", "stable"),
                                       (Affine(-1), None, None, None))
    _no_order(tr, order, ".sort()", node)
    if not isinstance(e, View):
        raise tr.fail(".sort() of a temporary array (only named arrays and their views sort in place)", node)
    tr.write(e, sorted_along(tr, e, axis, node, ".sort()")[0], node)


def _argsort_method(tr, e, args, kwargs, node):
    axis, _kind, order, _stable = bind(tr, args, kwargs, node, ".argsort()", ("axis", "kind", "order", "stable"),
                                       (Affine(-1), None, None, None))
    _no_order(tr, order, ".argsort()", node)
    return sorted_along(tr, e, axis, node, ".argsort()")[1]


def _order_statistic(tr, e: Expr, axis: Any, q: float, keepdims: Any, node: ast.AST, what: str,
                     mean_of_two: bool = False) -> Expr:
    """The value at fraction `q` of the sorted values along `axis` (None: all), as NumPy's median
    (`mean_of_two`) or linear quantile computes it (`order_statistics`; the count may be a run-time size), in
    f64 for integers and booleans; NaN where the values hold one (the last sorted one is NaN)."""
    if isinstance(axis, tuple):
        raise tr.fail(f"{what} over several axes (one axis or None is supported)", node)
    keep = keepdims_of(tr, keepdims, node)
    rank = e.ndim
    values, _, k = sorted_along(tr, e, axis, node, what)
    n = values.shape[k].static
    if n == 0:
        raise tr.fail(f"{what} of an empty array (NumPy gives NaN with a warning)", node)
    if values.gathers:  # read at several positions: sorted once
        values = View.whole(tr.em.materialize(values))

    def at(i: int | Affine) -> Expr:
        """The sorted values at position i, as floats (integers and booleans as f64, as NumPy)."""
        e = tr.index(values, tuple(i if j == k else slice(None) for j in range(values.ndim)), node)
        return e if is_float(e.dtype) else astype(tr, e, "f64", node)

    result = at_fraction(tr, at, values.shape[k], q, mean_of_two, node)
    if is_float(values.dtype):
        last = at(values.shape[k] - 1)
        result = tr.elementwise("where", [tr.compare("ne", last, last, node), last, result], node, result.dtype)
    if keep:
        result = tr.index(result, tuple(None if axis is None or j == k else slice(None) for j in range(rank)), node)
    return result


def _median(tr, args, kwargs, node):
    """np.median: the middle sorted value, or the mean of the two middle ones."""
    a, axis, out, _overwrite, keepdims = bind(tr, args, kwargs, node, "np.median",
                                              ("a", "axis", "out", "overwrite_input", "keepdims"),
                                              (None, None, False, False))
    if out is not None:
        raise tr.fail("np.median with out= is not supported (assign the result)", node)
    return _order_statistic(tr, expr_of(tr, a, node), axis, 0.5, keepdims, node, "np.median", mean_of_two=True)


def _quantile(scale: float, what: str) -> Handler:
    """np.quantile (q in [0, 1]) or np.percentile (q in [0, 100]) of one constant q, method 'linear'."""

    def handler(tr, args, kwargs, node):
        a, q, axis, out, _overwrite, method, keepdims = bind(
            tr, args, kwargs, node, what, ("a", "q", "axis", "out", "overwrite_input", "method", "keepdims"),
            (None, None, False, "linear", False))
        if out is not None:
            raise tr.fail(f"{what} with out= is not supported (assign the result)", node)
        if static(method) != "linear":
            raise tr.fail(f"{what} with method={static(method)!r} is not supported (only 'linear')", node)
        value = static(q)
        if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= scale:
            raise tr.fail(f"{what} needs q to be one constant number in [0, {scale:g}]", node)
        return _order_statistic(tr, expr_of(tr, a, node), axis, value / scale, keepdims, node, what)

    return handler


SORT_HANDLERS: dict[Any, Handler] = {np.sort: _sort, np.argsort: _argsort, np.median: _median,
                                     np.quantile: _quantile(1.0, "np.quantile"),
                                     np.percentile: _quantile(100.0, "np.percentile")}
SORT_METHODS: dict[str, Handler] = {"sort": _sort_method, "argsort": _argsort_method}
