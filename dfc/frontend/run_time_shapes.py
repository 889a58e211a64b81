"""Reshape and concatenation of arrays whose sizes are known only at run time (`x[m]`, `np.nonzero`,
`np.unique`, a loop variable's slice).

`reshape` (row-major, NumPy's order 'C') of an array with one run-time dimension into a shape with one
-1: the -1 is that dimension times the product of the static sizes over the product of the static new
ones, which must divide (else a located refusal: NumPy checks the count at run time). The result reads
the array at the row-major position of each new index: a gather by integer index arrays (`np.arange`
of each new dimension, their linear position, its quotients and remainders by the old sizes), so its
gradient is the gather's. `concatenate` writes each part into its slice of a new array of the summed
size (its gradient: each part's slice of the cotangent); the sizes off the axis must be the same
symbols (`run_time_sizes`).
"""

from __future__ import annotations

import ast
import math

from dfc.frontend.affine import Affine
from dfc.frontend.arrays import Expr, Index, Iota, View


def reshape(tr, e: Expr, dims: list[int], node: ast.AST) -> Expr:
    """`e` (one run-time dimension) in the shape `dims` (ints, one of them -1)."""
    dynamic = [k for k, d in enumerate(e.shape) if d.static is None]
    shown = f"shape ({', '.join(map(str, e.shape))})"
    if len(dynamic) != 1:
        raise tr.fail(f"reshape of an array of {len(dynamic)} run-time sizes ({shown}) is not supported", node)
    if dims.count(-1) != 1 or any(d < -1 for d in dims):
        raise tr.fail(f"reshape of an array of run-time size ({shown}) into {tuple(dims)}: give the run-time "
                      "dimension as -1 (one -1, the other sizes constants)", node)
    old = math.prod(d.static for d in e.shape if d.static is not None)  # type: ignore[misc]
    new = math.prod(d for d in dims if d != -1)
    if new == 0 or old % new:
        raise tr.fail(f"reshape of an array of run-time size ({shown}) into {tuple(dims)}: the static sizes "
                      f"({old} per run-time row) must be a multiple of the new ones ({new}), as NumPy checks "
                      "the count only at run time", node)
    shape = [e.shape[dynamic[0]].scale(old // new) if d == -1 else Affine(d) for d in dims]
    return gather_row_major(tr, e, shape, node)


def gather_row_major(tr, e: Expr, shape: list[Affine], node: ast.AST) -> Expr:
    """The elements of `e` in row-major order laid out in `shape` (of as many elements)."""
    rank = len(shape)
    linear: Expr | None = None
    stride: Affine | Expr = Affine(1)
    for k in reversed(range(rank)):  # the position of each new index, in elements
        axis = tr.index(Iota(Affine(0), 1, shape[k]), (slice(None),) + (None,) * (rank - 1 - k), node)
        term = axis if linear is None else tr.elementwise("mul", [axis, _number(stride)], node, "i64")
        linear = term if linear is None else tr.elementwise("add", [linear, term], node, "i64")
        stride = _times(tr, stride, shape[k], node)
    assert linear is not None
    parts: list[Expr] = []
    for k in reversed(range(e.ndim)):  # the old index of that position: quotients and remainders
        size = _number(e.shape[k])
        parts.insert(0, linear if k == 0 else tr.elementwise("mod", [linear, size], node, "i64"))
        if k:
            linear = tr.elementwise("floordiv", [linear, size], node, "i64")
    base = e if isinstance(e, View) and not e.gathers else View.whole(tr.em.materialize(e))
    return tr.index(base, tuple(parts), node)


def _number(size: Affine | Expr) -> Expr:
    return Index(size) if isinstance(size, Affine) else size


def _times(tr, stride: Affine | Expr, size: Affine, node: ast.AST) -> Affine | Expr:
    """stride * size, an `Affine` while one factor is a constant."""
    if isinstance(stride, Affine) and (stride.static is not None or size.static is not None):
        return size.scale(stride.static) if stride.static is not None else stride.scale(size.static)  # type: ignore[arg-type]
    return tr.elementwise("mul", [_number(stride), Index(size)], node, "i64")


def concatenate(tr, exprs: list[Expr], k: int, dtype: str, node: ast.AST) -> View:
    """The arrays `exprs` (one rank, the same sizes off axis `k`) joined along axis `k`, as `dtype`."""
    others = [[d for j, d in enumerate(e.shape) if j != k] for e in exprs]
    if any(o != others[0] for o in others):
        sizes = "; ".join(f"({', '.join(map(str, e.shape))})" for e in exprs)
        raise tr.fail(f"np.concatenate: the arrays' sizes differ outside axis {k} ({sizes}; a size known only at "
                      "run time is the same only where it comes from the same selection)", node)
    total = Affine(0)
    for e in exprs:
        total = total + e.shape[k]
    shape = [total if j == k else d for j, d in enumerate(exprs[0].shape)]
    out = tr.em.fresh(dtype, shape)
    offset = Affine(0)
    rank = len(shape)
    for e in exprs:  # out[..., offset:offset + size, ...] = e (its sizes: the slice's)
        target = View(out, list(e.shape), [offset if j == k else Affine(0) for j in range(rank)],
                      [[int(r == c) for c in range(rank)] for r in range(rank)], dtype)
        out = tr.em.assign(target, e)
        offset = offset + e.shape[k]
    return View.whole(out)
