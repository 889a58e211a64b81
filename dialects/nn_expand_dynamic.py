"""Pure expansions of `dialects.nn_dynamic`.

`nonzero` takes two passes: a map counts the nonzero elements (wcr(add) into
a 0-d i64), the result of that many rows is allocated (`tensor.empty` of a
dynamic size), and a serial `scf.for` over the input in row-major order
writes the coordinates of each nonzero element at the running count (a
serial exclusive prefix sum: simple, one pass, and no scan tree to build).
`gather_points` is one map over the result (dynamic bounds read with
`tensor.dim`) reading the point's coordinates, clamping them, and reading the
operand there; autodiff differentiates it as any map (a wcr(add) scatter).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, AnyFloat, FloatAttr, IndexType, IntegerAttr, TensorType, i64
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from dfc.dialects.df_builders import index_const, map_op, read, splat, tasklet, write
from dfc.dialects.nn_dynamic import GatherPointsOp, NonzeroOp
from dfc.dialects.nn_expand_shape import row_major_strides


def _t(v: SSAValue) -> TensorType:
    assert isinstance(v.type, TensorType)
    return v.type


def _is_nonzero(b: Builder, v: SSAValue) -> SSAValue:
    """`v != 0` (NaN counts as nonzero, -0.0 as zero)."""
    if isinstance(v.type, AnyFloat):
        zero = b.insert(arith.ConstantOp(FloatAttr(0.0, v.type))).result
        return b.insert(arith.CmpfOp(v, zero, "une")).result
    zero = b.insert(arith.ConstantOp(IntegerAttr(0, v.type))).result
    return b.insert(arith.CmpiOp(v, zero, "ne")).result


def _count(b: Builder, x: SSAValue) -> SSAValue:
    """The number of nonzero elements of `x`, as an index."""
    shape = list(_t(x).get_shape())

    def build(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        def one(s, v):
            flag = _is_nonzero(s.b, v[0])
            ones = [s.b.insert(arith.ConstantOp(IntegerAttr(c, i64))).result for c in (1, 0)]
            return s.select(flag, *ones)

        write(mb, tasklet(mb, [read(mb, x, ivs)], i64, one), outs[0], [], "add")

    counted = map_op(b, shape, [splat(b, TensorType(i64, []), 0)], build).res[0]
    n = b.insert(tensor.ExtractOp(counted, [], i64)).result
    return b.insert(arith.IndexCastOp(n, IndexType())).result


def _nonzero(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, NonzeroOp)
    x, out_type = op.input, _t(op.result)
    shape = list(_t(x).get_shape())
    transposed = op.transposed is not None
    n = _count(b, x)
    out = b.insert(tensor.EmptyOp([n], out_type)).tensor
    total = 1
    for d in shape:
        total *= d

    body = Block(arg_types=[IndexType(), out_type, IndexType()])
    lb = Builder(InsertPoint.at_end(body))
    i, acc, k = body.args
    coords = [
        lb.insert(arith.RemSIOp(lb.insert(arith.DivSIOp(i, index_const(lb, stride))).result, index_const(lb, size))).result
        for stride, size in zip(row_major_strides(shape), shape)
    ]
    flag = _is_nonzero(lb, lb.insert(tensor.ExtractOp(x, coords, _t(x).element_type)).result)
    row = lb.insert(arith.MinSIOp(k, lb.insert(arith.SubiOp(n, index_const(lb, 1))).result)).result
    filled: SSAValue = acc
    for d, c in enumerate(coords):
        at = [index_const(lb, d), row] if transposed else [row, index_const(lb, d)]
        kept = lb.insert(tensor.ExtractOp(filled, at, i64)).result
        value = lb.insert(arith.SelectOp(flag, lb.insert(arith.IndexCastOp(c, i64)).result, kept)).result
        filled = lb.insert(tensor.InsertOp(value, filled, at)).result
    step = lb.insert(arith.IndexCastOp(lb.insert(arith.ExtUIOp(flag, i64)).result, IndexType())).result
    lb.insert(scf.YieldOp(filled, lb.insert(arith.AddiOp(k, step)).result))

    zero = index_const(b, 0)
    ub = b.insert(arith.SelectOp(b.insert(arith.CmpiOp(n, zero, "sgt")).result, index_const(b, total), zero)).result
    loop = b.insert(scf.ForOp(zero, ub, index_const(b, 1), [out, zero], body))
    return loop.results[0]


def _size(b: Builder, v: SSAValue, dim: int) -> int | SSAValue:
    """Dimension `dim` of `v`: its static size, or a `tensor.dim`."""
    n = _t(v).get_shape()[dim]
    return b.insert(tensor.DimOp(v, index_const(b, dim))).result if n == DYNAMIC_INDEX else n


def _gather_points(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, GatherPointsOp)
    x, idx, axis = op.operand, op.indices, op.axis.value.data
    shape, points = _t(x).get_shape(), _t(idx).get_shape()
    k, p = points[-1], len(points) - 1
    sizes = [
        *(_size(b, x, d) for d in range(axis)),
        *(_size(b, idx, d) for d in range(p)),
        *(_size(b, x, d) for d in range(axis + k, len(shape))),
    ]
    out_type = _t(op.result)
    out = b.insert(tensor.EmptyOp([s for s in sizes if isinstance(s, SSAValue)], out_type)).tensor

    def build(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        point = ivs[axis : axis + p]
        coords = []
        for j in range(k):
            c = mb.insert(arith.IndexCastOp(read(mb, idx, [*point, index_const(mb, j)]), IndexType())).result
            c = mb.insert(arith.MaxSIOp(c, index_const(mb, 0))).result
            coords.append(mb.insert(arith.MinSIOp(c, index_const(mb, shape[axis + j] - 1))).result)
        index = [*ivs[:axis], *coords, *ivs[axis + p :]]
        write(mb, read(mb, x, index), outs[0], ivs)

    return map_op(b, sizes, [out], build).res[0]


DYNAMIC_EXPANSIONS: dict[type[Operation], Callable[[Builder, Operation], SSAValue]] = {
    NonzeroOp: _nonzero,
    GatherPointsOp: _gather_points,
}
