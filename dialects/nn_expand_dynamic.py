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
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    TensorType,
    i64,
)
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from dfc.dialects.df_builders import index_const, map_op, read, sizes, splat, tasklet, write
from dfc.dialects.nn_dynamic import GatherPointsOp, NonzeroOp, UniqueOp
from dfc.dialects.nn_sort import ArgsortOp


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
    shape = sizes(b, x)

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
    shape = [index_const(b, d) if isinstance(d, int) else d for d in sizes(b, x)]
    transposed = op.transposed is not None
    n = _count(b, x)
    out = b.insert(tensor.EmptyOp([n], out_type)).tensor
    total, strides = index_const(b, 1), []  # row-major strides (run-time sizes: index values)
    for d in reversed(shape):
        strides.insert(0, total)
        total = b.insert(arith.MuliOp(total, d)).result

    body = Block(arg_types=[IndexType(), out_type, IndexType()])
    lb = Builder(InsertPoint.at_end(body))
    i, acc, k = body.args
    coords = []
    for stride, size in zip(strides, shape):
        q = lb.insert(arith.DivSIOp(i, stride)).result
        coords.append(lb.insert(arith.RemSIOp(q, size)).result)
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
    ub = b.insert(arith.SelectOp(b.insert(arith.CmpiOp(n, zero, "sgt")).result, total, zero)).result
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
    extents = [
        *(_size(b, x, d) for d in range(axis)),
        *(_size(b, idx, d) for d in range(p)),
        *(_size(b, x, d) for d in range(axis + k, len(shape))),
    ]
    out_type = _t(op.result)
    out = b.insert(tensor.EmptyOp([s for s in extents if isinstance(s, SSAValue)], out_type)).tensor
    operand_sizes = [_size(b, x, d) for d in range(len(shape))]

    def bound_of(mb: Builder, d: int) -> SSAValue:
        size = operand_sizes[d]
        return index_const(mb, size) if isinstance(size, int) else size

    def build(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        point = ivs[axis : axis + p]
        coords = []
        for j in range(k):
            c = mb.insert(arith.IndexCastOp(read(mb, idx, [*point, index_const(mb, j)]), IndexType())).result
            c = mb.insert(arith.MaxSIOp(c, index_const(mb, 0))).result
            last = mb.insert(arith.SubiOp(bound_of(mb, axis + j), index_const(mb, 1))).result
            coords.append(mb.insert(arith.MinSIOp(c, last)).result)
        index = [*ivs[:axis], *coords, *ivs[axis + p :]]
        write(mb, read(mb, x, index), outs[0], ivs)

    return map_op(b, extents, [out], build).res[0]


class _Loop:
    """The body of an `scf.for` over [0, n) carrying an index and i64 tensors, with in-place element updates."""

    def __init__(self, carried: Sequence[SSAValue]):
        self.body = Block(arg_types=[IndexType(), IndexType(), *(v.type for v in carried)])
        self.b = Builder(InsertPoint.at_end(self.body))
        self.i, self.k, *self.tensors = self.body.args

    def get(self, t: SSAValue, at: SSAValue) -> SSAValue:
        return self.b.insert(tensor.ExtractOp(t, [at], _t(t).element_type)).result

    def idx(self, t: SSAValue, at: SSAValue) -> SSAValue:
        return self.b.insert(arith.IndexCastOp(self.get(t, at), IndexType())).result

    def i64(self, v: SSAValue) -> SSAValue:
        return self.b.insert(arith.IndexCastOp(v, i64)).result

    def put(self, k: int, at: SSAValue, value: SSAValue) -> None:
        self.tensors[k] = self.b.insert(tensor.InsertOp(value, self.tensors[k], [at])).result

    def select(self, c: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.b.insert(arith.SelectOp(c, x, y)).result

    def run(self, b: Builder, n: int, k: SSAValue, carried: Sequence[SSAValue], step: SSAValue) -> list[SSAValue]:
        """Ends the body (the index advances by `step`) and inserts the loop; its results."""
        self.b.insert(scf.YieldOp(self.b.insert(arith.AddiOp(self.k, step)).result, *self.tensors))
        return list(b.insert(scf.ForOp(index_const(b, 0), index_const(b, n), index_const(b, 1), [k, *carried],
                                       self.body)).results)


def _equal(b: Builder, x: SSAValue, y: SSAValue, equal_nan: bool) -> SSAValue:
    """`x == y` (floats: -0.0 equals 0.0; NaN equals NaN with `equal_nan`)."""
    if not isinstance(x.type, AnyFloat):
        return b.insert(arith.CmpiOp(x, y, "eq")).result
    same = b.insert(arith.CmpfOp(x, y, "oeq")).result
    if not equal_nan:
        return same
    nans = b.insert(arith.AndIOp(b.insert(arith.CmpfOp(x, x, "uno")).result,
                                 b.insert(arith.CmpfOp(y, y, "uno")).result)).result
    return b.insert(arith.OrIOp(same, nans)).result


def _unique(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, UniqueOp)
    x, part = op.input, op.part.data
    (n,) = _t(x).get_shape()
    if n == 0:  # nothing to number (and no element to read)
        return b.insert(tensor.EmptyOp([] if part == "inverse" else [index_const(b, 0)], _t(op.result))).tensor
    perm = b.insert(ArgsortOp(x, 0)).result
    zeros = [splat(b, TensorType(i64, [n]), 0) for _ in range(3)]

    # runs of equal sorted elements: inverse (sorted numbering), each run's start in the sorted order, its count
    lp = _Loop(zeros)
    p = lp.idx(perm, lp.i)
    before = lp.idx(perm, lp.b.insert(arith.MaxSIOp(lp.b.insert(arith.SubiOp(lp.i, index_const(lp.b, 1))).result,
                                                    index_const(lp.b, 0))).result)
    repeated = _equal(lp.b, lp.get(x, p), lp.get(x, before), op.equal_nan is not None)
    first = lp.b.insert(arith.CmpiOp(lp.i, index_const(lp.b, 0), "eq")).result
    new = lp.b.insert(arith.OrIOp(first, lp.b.insert(arith.XOrIOp(repeated, lp.b.insert(
        arith.ConstantOp(IntegerAttr(1, IntegerType(1)))).result)).result)).result
    step = lp.b.insert(arith.IndexCastOp(lp.b.insert(arith.ExtUIOp(new, i64)).result, IndexType())).result
    run = lp.b.insert(arith.SubiOp(lp.b.insert(arith.AddiOp(lp.k, step)).result, index_const(lp.b, 1))).result
    lp.put(0, p, lp.i64(run))
    lp.put(1, run, lp.select(new, lp.i64(lp.i), lp.get(lp.tensors[1], run)))
    lp.put(2, run, lp.b.insert(arith.AddiOp(lp.get(lp.tensors[2], run),
                                            lp.b.insert(arith.ConstantOp(IntegerAttr(1, i64))).result)).result)
    count, inverse, starts, counts = lp.run(b, n, index_const(b, 0), zeros, step)

    order = None  # run of each output position (None: the runs' own, sorted, order)
    if op.first_occurrence is not None:
        lp = _Loop(zeros[:2])
        r = lp.idx(inverse, lp.i)
        is_first = lp.b.insert(arith.CmpiOp(lp.idx(perm, lp.idx(starts, r)), lp.i, "eq")).result
        at = lp.b.insert(arith.MinSIOp(lp.k, index_const(lp.b, max(n - 1, 0)))).result
        lp.put(0, at, lp.select(is_first, lp.i64(r), lp.get(lp.tensors[0], at)))
        lp.put(1, r, lp.select(is_first, lp.i64(lp.k), lp.get(lp.tensors[1], r)))
        step = lp.b.insert(arith.IndexCastOp(lp.b.insert(arith.ExtUIOp(is_first, i64)).result, IndexType())).result
        _, order, rank = lp.run(b, n, index_const(b, 0), zeros[:2], step)

    if part == "inverse":
        if order is None:
            return inverse

        def renumber(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
            r = mb.insert(arith.IndexCastOp(read(mb, inverse, ivs), IndexType())).result
            write(mb, read(mb, rank, [r]), outs[0], ivs)

        return map_op(b, [n], [splat(b, TensorType(i64, [n]), 0)], renumber).res[0]

    out_type = _t(op.result)

    def fill(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        r = ivs[0] if order is None else mb.insert(arith.IndexCastOp(read(mb, order, ivs), IndexType())).result
        if part == "counts":
            write(mb, read(mb, counts, [r]), outs[0], ivs)
            return
        start = mb.insert(arith.IndexCastOp(read(mb, starts, [r]), IndexType())).result
        position = read(mb, perm, [start])
        if part == "indices":
            write(mb, position, outs[0], ivs)
            return
        write(mb, read(mb, x, [mb.insert(arith.IndexCastOp(position, IndexType())).result]), outs[0], ivs)

    return map_op(b, [count], [b.insert(tensor.EmptyOp([count], out_type)).tensor], fill).res[0]


DYNAMIC_EXPANSIONS: dict[type[Operation], Callable[[Builder, Operation], SSAValue]] = {
    NonzeroOp: _nonzero,
    GatherPointsOp: _gather_points,
    UniqueOp: _unique,
}
