"""Arrays whose size depends on the data: `np.nonzero`, `np.argwhere`,
`np.flatnonzero`, `np.extract`, `np.compress`, `np.unique` and a boolean-masked
read `x[m]` used as an array of its own.

Each is built at once (`nn.nonzero`, `nn.gather_points`, `nn.unique`) as a
tensor whose leading dimension is `?`, and read as an ordinary `View`: its
size is the `Affine` symbol of the run-time extent (`run_time_sizes`), so the
frontend computes with it as with any other array: elementwise maps and
reductions over the run-time extent, slices, sorts, products, gathers and
scatters by it. Sizes equal by construction are the same symbol (the columns
of one `np.nonzero`, reads `x[m]` and `y[m]` of one mask); arrays whose sizes
only happen to agree at run time do not broadcast together (a located error).
A masked read that is only reduced or combined elementwise stays lazy
(`masks`), as before.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np
from xdsl.ir import Block, OpResult, SSAValue

from dfc.dialects.nn_dynamic import GatherPointsOp, NonzeroOp, UniqueOp
from dfc.frontend import masks
from dfc.frontend.affine import Affine
from dfc.frontend.arrays import Const, Expr, View
from dfc.frontend.numpy_args import MISSING, bind, expr_of, static
from dfc.frontend.numpy_shapes import flat, reshape


def _ins(tr, op) -> SSAValue:
    return tr.b.insert(op).results[0]


def _points(tr, e: Expr) -> SSAValue:
    """The coordinates of `e`'s nonzero elements, (count, ndim) int64."""
    return _ins(tr, NonzeroOp(tr.em.materialize(e)))


def _column(tr, points: SSAValue, d: int) -> View:
    """Column `d` of (count, ndim) coordinates, (count,)."""
    at = tr.em.materialize(Const(d, "i64", False, [Affine(1)]))
    return View.whole(_ins(tr, GatherPointsOp(points, at, 1)))


def _dominates(value: SSAValue, block: Block | None) -> bool:
    """Whether `value` (an op result) is defined in `block` or a block around it."""
    home = value.op.parent_block() if isinstance(value, OpResult) else value.owner
    while block is not None:
        if block is home:
            return True
        parent = block.parent_op()
        block = parent.parent_block() if parent is not None else None
    return False


def _mask_points(tr, m: masks.Masked, base: Expr, node: ast.AST) -> SSAValue:
    """The points of `m`'s mask, shared by the reads of one mask (`x[m]`, `y[m]`) where they are in scope, so
    that their sizes are one symbol."""
    cache = tr.__dict__.setdefault("_mask_points", [])
    here = tr.b.insertion_point.block
    for known, lead, points in cache:
        if lead == m.lead and masks.same(known, m.mask) and _dominates(points, here):
            return points
    mask = tr.index(m.mask, (slice(None),) * m.lead + (Affine(0),) * (base.ndim - m.lead), node)
    points = _points(tr, mask)
    cache.append((m.mask, m.lead, points))
    return points


def masked(tr, m: masks.Masked, node: ast.AST) -> View:
    """`x[m]` built: the rows (or elements) of the base at the mask's nonzero positions."""
    if m.lead is None:
        raise tr.fail(masks.SHAPE_MESSAGE.format(what="this boolean-masked array"), node)
    base = tr.as_expr(m.base, node)
    return View.whole(_ins(tr, GatherPointsOp(tr.em.materialize(base), _mask_points(tr, m, base, node), 0)))


def _array(tr, a: Any, node: ast.AST, what: str) -> Expr:
    if isinstance(a, masks.Masked):
        return masked(tr, a, node)
    return expr_of(tr, a, node)


def _nonzero(tr, args, kwargs, node):
    (a,) = bind(tr, args, kwargs, node, "np.nonzero", ("a",))
    e = _array(tr, a, node, "np.nonzero")
    if e.ndim == 0:
        raise tr.fail("np.nonzero of a 0-d array is not supported (NumPy deprecates it); use np.atleast_1d", node)
    points = _points(tr, e)
    return tuple(_column(tr, points, d) for d in range(e.ndim))


def _argwhere(tr, args, kwargs, node):
    (a,) = bind(tr, args, kwargs, node, "np.argwhere", ("a",))
    return View.whole(_points(tr, _array(tr, a, node, "np.argwhere")))


def _flatnonzero(tr, args, kwargs, node):
    (a,) = bind(tr, args, kwargs, node, "np.flatnonzero", ("a",))
    return _column(tr, _points(tr, flat(tr, _array(tr, a, node, "np.flatnonzero"), node)), 0)


def _selected(tr, condition: Expr, a: Expr, axis: int, node: ast.AST) -> View:
    """The entries of `a` along `axis` where `condition` (1-D, at most that long) is nonzero."""
    if condition.ndim != 1 or (size := condition.shape[0].static) is None:
        raise tr.fail("the condition must be a 1-D array", node)
    length = a.shape[axis].static
    if size > length:
        raise tr.fail(f"the condition has {size} entries, more than the {length} of axis {axis}", node)
    if size < length:
        a = tr.index(a, (slice(None),) * axis + (slice(0, size),), node)
    return View.whole(_ins(tr, GatherPointsOp(tr.em.materialize(a), _points(tr, condition), axis)))


def _compress(tr, args, kwargs, node):
    condition, a, axis = bind(tr, args, kwargs, node, "np.compress", ("condition", "a", "axis"), (None,))
    a = _array(tr, a, node, "np.compress")
    if axis is None:
        a, axis = flat(tr, a, node), 0
    if not isinstance(axis, int | np.integer) and getattr(axis, "static", None) is None:
        raise tr.fail("np.compress's axis must be a constant", node)
    axis = int(getattr(axis, "static", axis))
    if not -a.ndim <= axis < a.ndim:
        raise tr.fail(f"axis {axis} is out of range for an array of {a.ndim} dimensions", node)
    return _selected(tr, _array(tr, condition, node, "np.compress"), a, axis % a.ndim, node)


def _extract(tr, args, kwargs, node):
    condition, arr = bind(tr, args, kwargs, node, "np.extract", ("condition", "arr"))
    a = flat(tr, _array(tr, arr, node, "np.extract"), node)
    c = flat(tr, _array(tr, condition, node, "np.extract"), node)
    if c.shape[0].static != a.shape[0].static:
        raise tr.fail("np.extract needs a condition of as many elements as the array", node)
    return _selected(tr, c, a, 0, node)


def _unique(tr, args, kwargs, node):
    """The sorted distinct elements of the flattened array (NaN last; NaNs one element, `equal_nan`), and
    as asked the first indices, the inverse (of the input's shape, as NumPy 2) and the counts."""
    ar, index, inverse, counts, axis, equal_nan = bind(
        tr, args, kwargs, node, "np.unique", ("ar", "return_index", "return_inverse", "return_counts", "axis",
                                              "equal_nan"), (False, False, False, None, True))
    if axis is not None:
        raise tr.fail("np.unique with an axis (distinct slices) is not supported", node)
    flags = [static(f) for f in (index, inverse, counts, equal_nan)]
    if any(f is MISSING for f in flags):
        raise tr.fail("np.unique's return_index, return_inverse, return_counts and equal_nan must be constants", node)
    e = _array(tr, ar, node, "np.unique")
    x = tr.em.materialize(flat(tr, e, node) if e.ndim != 1 else e)
    out: list = [View.whole(_ins(tr, UniqueOp(x, "values", equal_nan=bool(flags[3]))))]
    for part, wanted in zip(("indices", "inverse", "counts"), flags[:3]):
        if not wanted:
            continue
        value = _ins(tr, UniqueOp(x, part, equal_nan=bool(flags[3])))
        if part == "inverse":
            out.append(reshape(tr, View.whole(value), tuple(e.shape), node))
        else:
            out.append(View.whole(value))
    return out[0] if len(out) == 1 else tuple(out)


DYNAMIC_HANDLERS = {
    np.nonzero: _nonzero, np.argwhere: _argwhere, np.flatnonzero: _flatnonzero, np.compress: _compress,
    np.extract: _extract, np.unique: _unique,
}
