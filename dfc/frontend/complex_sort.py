"""Sorting complex values (complex_values.py): `np.sort`, `np.argsort` and the `.sort()` (in place) and
`.argsort()` methods, in NumPy's order: lexicographic (real part, then imaginary part), with the values
holding NaN last in the classes R + Rj < R + nanj < nan + Rj < nan + nanj (NumPy's npysort CLT).

That order is three stable `nn.argsort`s (NaN last) applied least significant key first: by the imaginary
part, then the real part, then the NaN class (2 * isnan(re) + isnan(im)); the values are gathers of the parts
by the final permutation (their gradient is the gather's). The permutation is the stable one, which NumPy's
unstable kinds may also return.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from dfc.dialects.nn_sort import ArgsortOp, take_along
from dfc.frontend.affine import Affine
from dfc.frontend.arrays import Const, View
from dfc.frontend.complex_values import Complex, lift, part_dtype, write
from dfc.frontend.numpy_args import astype, axes_of, bind, expr_of
from dfc.frontend.numpy_calls import call
from dfc.frontend.numpy_shapes import flat

_PARAMETERS = ("axis", "kind", "order", "stable")
_DEFAULTS = (Affine(-1), None, None, None)


def sorted_along(tr, z: Complex, axis: Any, node: ast.AST, what: str) -> tuple[Complex, View]:
    """(values, i64 indices) of the stable sort of `z` along `axis` (None: of the flattened array) in NumPy's
    complex order."""
    if axis is None:
        z, axis = Complex(flat(tr, expr_of(tr, z.re, node), node), flat(tr, expr_of(tr, z.im, node), node)), Affine(0)
    if z.ndim == 0:
        raise tr.fail(f"{what} of a 0-d array along an axis (NumPy's AxisError; axis=None sorts it as 1-d)", node)
    k = axes_of(tr, axis, z.ndim, node)[0]
    d = part_dtype(tr, z)
    re, im = (astype(tr, expr_of(tr, p, node), d, node) for p in (z.re, z.im))
    tr.em.static(re, f"the array {what} sorts")
    b = tr.em.b

    def gathered(x: SSAValue, order: SSAValue) -> SSAValue:
        return b.insert(take_along(x, order, k)).result

    def then_by(key: SSAValue, order: SSAValue | None) -> SSAValue:
        """`order` refined by a stable sort on `key` (read through `order`)."""
        step = b.insert(ArgsortOp(key if order is None else gathered(key, order), k)).result
        return step if order is None else gathered(order, step)

    parts = [tr.em.materialize(p, d) for p in (re, im)]
    nan = [astype(tr, call(tr, np.isnan, [View.whole(p)], {}, node), "i8", node) for p in parts]
    nan_class = tr.em.materialize(tr.binop("add", tr.binop("mul", nan[0], Const(2, "i8", False), node), nan[1], node),
                                  "i8")
    order = then_by(nan_class, then_by(parts[0], then_by(parts[1], None)))
    return Complex(View.whole(gathered(parts[0], order)), View.whole(gathered(parts[1], order))), View.whole(order)


def _no_order(tr, order: Any, what: str, node: ast.AST) -> None:
    if order is not None:
        raise tr.fail(f"{what} with order= (fields of a structured array) is not supported", node)


def _sort(tr, args: list, kwargs: dict, node: ast.AST) -> Complex:
    a, axis, _kind, order, _stable = bind(tr, args, kwargs, node, "np.sort", ("a", *_PARAMETERS), _DEFAULTS)
    _no_order(tr, order, "np.sort", node)
    return sorted_along(tr, lift(tr, a, node), axis, node, "np.sort")[0]


def _argsort(tr, args: list, kwargs: dict, node: ast.AST) -> View:
    a, axis, _kind, order, _stable = bind(tr, args, kwargs, node, "np.argsort", ("a", *_PARAMETERS), _DEFAULTS)
    _no_order(tr, order, "np.argsort", node)
    return sorted_along(tr, lift(tr, a, node), axis, node, "np.argsort")[1]


def sort_method(tr, z: Complex, args: list, kwargs: dict, node: ast.AST) -> None:
    """`z.sort()`: a named complex array (or a view of one) sorted in place; the call's value is None."""
    axis, _kind, order, _stable = bind(tr, args, kwargs, node, ".sort()", _PARAMETERS, _DEFAULTS)
    _no_order(tr, order, ".sort()", node)
    if not (isinstance(z.re, View) and isinstance(z.im, View)):
        raise tr.fail(".sort() of a temporary array (only named arrays and their views sort in place)", node)
    write(tr, z, sorted_along(tr, z, axis, node, ".sort()")[0], node)


def argsort_method(tr, z: Complex, args: list, kwargs: dict, node: ast.AST) -> View:
    axis, _kind, order, _stable = bind(tr, args, kwargs, node, ".argsort()", _PARAMETERS, _DEFAULTS)
    _no_order(tr, order, ".argsort()", node)
    return sorted_along(tr, z, axis, node, ".argsort()")[1]


HANDLERS = {np.sort: _sort, np.argsort: _argsort}
METHODS = {"sort": sort_method, "argsort": argsort_method}
