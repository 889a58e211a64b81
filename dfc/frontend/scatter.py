"""Scatters of the NumPy frontend: assignment at integer index arrays and `ufunc.at`.

A target with gathers (`x[idx] = v`, `x[i, j] = v`, `x[idx, :] = rows`, mixed
with slices and integers; `indexing.py` wraps negative indices) is written as
NumPy writes it, in the row-major order of the indexed view, the last write
to an element winning:

- `replace`: a map over the view writes each element's row-major position
  into an int64 array of the target's shape with `wcr(max)` (the winner of
  each element, -1 where none), then a map over the target takes the value at
  the winner's position or keeps the old element. `x[idx] op= v` is
  `x[idx] = x[idx] op v` with `x[idx]` read before any write (NumPy's
  buffered semantics: a duplicate index is updated once, by its last value).
- `at`: `np.add.at(x, idx, v)` (also subtract, multiply, maximum, minimum)
  is one map over the view writing `v` into the old `x` with the `wcr` of the
  ufunc: every occurrence of an index combines (unbuffered).

An index out of range after the wrap is never written: the write is checked
at run time (`check-bounds`) and the call raises `IndexError`. Both forms are
maps of reads and writes, so autodiff differentiates them as it does any map
(the winner's value receives the gradient of its element; `at` of add passes
it to every occurrence).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, i64
from xdsl.ir import SSAValue

from dfc.dialects.df_builders import map_op, read, tasklet, write
from dfc.frontend import masks
from dfc.frontend.affine import Affine
from dfc.frontend.arrays import IR_TYPES, Const, Expr, View, is_float, is_unsigned
from dfc.frontend.emit import aligned, bound

AT_KINDS = {np.add: "add", np.subtract: "add", np.multiply: "mul", np.maximum: "max", np.minimum: "min"}
"""The ufuncs whose `.at` is a write with that wcr (subtract adds the negated values)."""


def _check_shapes(tr, target: View, value: Expr, node: ast.AST) -> None:
    """NumPy's broadcast of the assigned values to the indexed view's shape."""
    shown = f"({', '.join(map(str, value.shape))}) into shape ({', '.join(map(str, target.shape))})"
    if value.ndim > target.ndim or any(s.static != 1 and t != s for t, s in
                                       zip(target.shape[target.ndim - value.ndim:], value.shape)):
        raise tr.fail(f"shape mismatch: value array of shape {shown} cannot be broadcast to the indexing result", node)


def _index(mb: Builder, ivs: Sequence[SSAValue], shape: list[Affine]) -> SSAValue:
    """The row-major position of `ivs` in `shape`, as int64."""
    position: SSAValue | None = None
    for iv, size in zip(ivs, shape):
        if position is None:
            position = iv
        else:
            scaled = mb.insert(arith.MuliOp(position, size.emit(mb))).result
            position = mb.insert(arith.AddiOp(scaled, iv)).result
    if position is None:
        return mb.insert(arith.ConstantOp(IntegerAttr(0, i64))).result
    return mb.insert(arith.IndexCastOp(position, i64)).result


def _unravel(mb: Builder, position: SSAValue, shape: list[Affine]) -> list[SSAValue]:
    """The view index of a row-major `position` (index typed) in `shape`."""
    out: list[SSAValue] = []
    for size in reversed(shape[1:]):
        s = size.emit(mb)
        out.append(mb.insert(arith.RemSIOp(position, s)).result)
        position = mb.insert(arith.DivSIOp(position, s)).result
    return [position, *reversed(out)] if shape else []


def replace(tr, target: View, value: Expr, node: ast.AST) -> SSAValue:
    """`target.source` with `value` (broadcast to the view) written at the view's elements, the last one in
    the view's row-major order winning where indices repeat: the new value of the array."""
    _check_shapes(tr, target, value, node)
    if any(d.static == 0 for d in target.shape):
        return target.source  # nothing selected
    em, b = tr.em, tr.b
    whole = View.whole(target.source)
    winners_init = em.fresh("i64", whole.shape, -1)

    def winners_body(mb: Builder, ivs, outs) -> None:
        write(mb, _index(mb, list(ivs), target.shape), outs[0], em.view_index(mb, target, list(ivs)), "max")

    winners = map_op(b, [bound(b, d) for d in target.shape], [winners_init], winners_body).res[0]
    t = IR_TYPES[target.dtype]

    def body(mb: Builder, ivs, outs) -> None:
        w = read(mb, winners, list(ivs))
        zero = mb.insert(arith.ConstantOp(IntegerAttr(0, i64))).result
        won = mb.insert(arith.CmpiOp(w, zero, "sge")).result
        position = mb.insert(arith.IndexCastOp(mb.insert(arith.MaxSIOp(w, zero)).result, IndexType())).result
        at = _unravel(mb, position, target.shape)
        new = em.scalar(mb, value, aligned(at, target.shape, value.shape), target.dtype)
        old = read(mb, target.source, list(ivs))
        write(mb, tasklet(mb, [won, new, old], t, lambda s, v: s.select(v[0], v[1], v[2])), outs[0], list(ivs))

    return map_op(b, [bound(b, d) for d in whole.shape], [em.fresh(target.dtype, whole.shape)], body).res[0]


def ufunc_at(tr, ufunc: np.ufunc, args: list, kwargs: dict, node: ast.AST) -> None:
    """`np.add.at(x, indices, v)` (subtract, multiply, maximum, minimum): `x` updated in place, every
    occurrence of a repeated index combining."""
    what = f"np.{ufunc.__name__}.at"
    if kwargs or len(args) != 3:
        raise tr.fail(f"{what} takes three positional arguments (the array, the indices, the values)", node)
    if ufunc not in AT_KINDS:
        raise tr.fail(f"{what} is not supported (.at of add, subtract, multiply, maximum and minimum is)", node)
    x, indices, v = args
    if not isinstance(x, View) or x.cell is None or x.gathers:
        raise tr.fail(f"{what} updates a named array in place: its first argument must be one (or a view of one)",
                      node)
    parts = indices if isinstance(indices, tuple) else (indices,)
    if any(masks.is_mask(p) for p in parts):
        raise tr.fail(f"{what} with a boolean mask is not supported: use x[m] op= v (a mask selects each "
                      "element once)", node)
    kind = AT_KINDS[ufunc]
    target = tr.index(x, parts, node, keep_cell=True, scatter=True)
    assert isinstance(target, View)
    value = tr.as_expr(v, node)
    if ufunc is np.subtract:
        value = tr.as_expr(tr.binop("sub", Const(0, value.dtype, value.weak), value, node), node)
    if is_float(value.dtype) and not is_float(x.dtype):
        raise tr.fail(f"{what}: cannot cast the {value.dtype} values into an {x.dtype} array (NumPy's "
                      "'same_kind' casting)", node)
    if x.dtype == "i1" or (is_unsigned(x.dtype) and kind in ("max", "min")):
        raise tr.fail(f"{what} of a {x.dtype} array is not supported", node)
    _check_shapes(tr, target, value, node)
    tr.check_writable(target, node)
    em, b = tr.em, tr.b

    def body(mb: Builder, ivs, outs) -> None:
        scalar = em.scalar(mb, value, aligned(list(ivs), target.shape, value.shape), target.dtype)
        write(mb, scalar, outs[0], em.view_index(mb, target, list(ivs)), kind)

    cell = target.cell
    assert cell is not None
    if not any(d.static == 0 for d in target.shape):
        tr.update(cell, map_op(b, [bound(b, d) for d in target.shape], [cell.value], body).res[0])
