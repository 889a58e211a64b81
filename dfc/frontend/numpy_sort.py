"""NumPy's sorting: `np.sort`, `np.argsort`, the `.sort()` (in place) and
`.argsort()` methods and `np.median`, on the library's stable `nn.argsort`
(NaN last, as NumPy) and a gather of the values by its permutation (their
gradient is the gather's). Every `kind` gives the stable order, which is one
of the orders NumPy's unstable kinds may return; `order=` (structured arrays)
is refused."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from dfc.dialects.nn_sort import ArgsortOp, take_along
from dfc.frontend.affine import Affine
from dfc.frontend.arrays import Const, Expr, View, is_float
from dfc.frontend.numpy_args import Handler, astype, axes_of, bind, expr_of, keepdims_of
from dfc.frontend.numpy_shapes import flat


def sorted_along(tr, e: Expr, axis: Any, node: ast.AST, what: str) -> tuple[View, View, int]:
    """(values, i64 indices, the axis) of the stable ascending sort of `e` along `axis` (None: of the
    flattened array)."""
    if axis is None:
        e, axis = flat(tr, e, node), Affine(0)
    if e.ndim == 0:
        raise tr.fail(f"{what} of a 0-d array along an axis (NumPy's AxisError; axis=None sorts it as 1-d)", node)
    k = axes_of(tr, axis, e.ndim, node)[0]
    tr.em.static(e, f"the array {what} sorts")
    x = tr.em.materialize(e)
    order = tr.em.b.insert(ArgsortOp(x, k)).result
    return View.whole(tr.em.b.insert(take_along(x, order, k)).result), View.whole(order), k


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


def _median(tr, args, kwargs, node):
    """np.median: the middle element of the sorted values, or the mean of the two middle ones; NaN where
    the values hold one (the last sorted one is NaN). One axis or all (None)."""
    a, axis, out, overwrite, keepdims = bind(tr, args, kwargs, node, "np.median",
                                             ("a", "axis", "out", "overwrite_input", "keepdims"),
                                             (None, None, False, False))
    if out is not None:
        raise tr.fail("np.median with out= is not supported (assign the result)", node)
    e = expr_of(tr, a, node)
    if isinstance(axis, tuple):
        raise tr.fail("np.median over several axes (one axis or None is supported)", node)
    keep = keepdims_of(tr, keepdims, node)
    rank = e.ndim
    values, _, k = sorted_along(tr, e, axis, node, "np.median")
    n = tr.em.static(values, "the array np.median sorts")[k]
    if n == 0:
        raise tr.fail("np.median of an empty array (NumPy gives NaN with a warning)", node)

    def at(i: int) -> Expr:
        """The sorted values at position i, as floats (integers and booleans as f64, as NumPy's mean)."""
        e = tr.index(values, tuple(i if j == k else slice(None) for j in range(values.ndim)), node)
        return e if is_float(e.dtype) else astype(tr, e, "f64", node)

    middle = at(n // 2) if n % 2 else tr.elementwise(
        "div", [tr.elementwise("add", [at(n // 2 - 1), at(n // 2)], node), Const(2.0, "f64", True)], node)
    if is_float(values.dtype):
        last = at(n - 1)
        middle = tr.elementwise("where", [tr.compare("ne", last, last, node), last, middle], node, middle.dtype)
    if keep:
        shape = tuple(None if axis is None or j == k else slice(None) for j in range(rank)) if rank else ()
        middle = tr.index(middle, shape, node)
    return middle


SORT_HANDLERS: dict[Any, Handler] = {np.sort: _sort, np.argsort: _argsort, np.median: _median}
SORT_METHODS: dict[str, Handler] = {"sort": _sort_method, "argsort": _argsort_method}
