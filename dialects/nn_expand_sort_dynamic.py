"""Pure expansion of an `nn.argsort` whose input has a run-time (`?`) dimension: a bitonic network.

Each row along the axis (n elements, n known at run time) is padded to P, the least power of two
>= n (0 when n = 0), and sorted as (order key, index) pairs: the i64 `order_key` of each element (equal
keys exactly where `nn.argsort` ties) and its position, padding positions holding the largest key and
an index >= n, so they sort after every element. The pairs are distinct, so sorting them is the stable
order, and the padding is last. The network is Batcher's: stages s = 1..log2 P, steps
j = 2^(s-1), ..., 1; in each step position i and its partner i ^ j exchange so that the pair is
ascending where bit s of i is 0 and descending where it is 1. Each step is one map over the padded
rows that reads both pairs and writes the one position i keeps (no wcr: every position written once);
the steps are an `scf.for` of stages around an `scf.for` of steps carrying the keys and indices, and
log2 P is counted by an `scf.while` at run time. O(n log^2 n) comparisons per row, all of a step
independent (the rank counting it replaces was O(n^2)). The result is the first n (or k) indices.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr, TensorType, i1, i64
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from dfc.dialects.df_builders import Scalar, index_const, map_op, read, sizes, tasklet, write
from dfc.dialects.nn_expand_sort import I64_MAX, order_key, static_argsort
from dfc.dialects.nn_sort import ArgsortOp


def _ins(b: Builder, op: Operation) -> SSAValue:
    return b.insert(op).results[0]


def _stages(b: Builder, n: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(P, log2 P) for the row length `n`: P the least power of two >= n, and 0 when n = 0."""
    before = Block(arg_types=[IndexType(), IndexType()])
    bb = Builder(InsertPoint.at_end(before))
    bb.insert(scf.ConditionOp(_ins(bb, arith.CmpiOp(before.args[0], n, "ult")), *before.args))
    after = Block(arg_types=[IndexType(), IndexType()])
    ab = Builder(InsertPoint.at_end(after))
    one = index_const(ab, 1)
    ab.insert(scf.YieldOp(_ins(ab, arith.ShLIOp(after.args[0], one)), _ins(ab, arith.AddiOp(after.args[1], one))))
    p, log = b.insert(scf.WhileOp([index_const(b, 1), index_const(b, 0)], [IndexType(), IndexType()],
                                  Region(before), Region(after))).results
    empty = _ins(b, arith.CmpiOp(n, index_const(b, 0), "eq"))
    return _ins(b, arith.SelectOp(empty, index_const(b, 0), p)), log


def _for(b: Builder, lb: SSAValue, ub: SSAValue, carried: Sequence[SSAValue]) -> tuple[scf.ForOp, Builder]:
    body = Block(arg_types=[IndexType(), *(v.type for v in carried)])
    loop = b.insert(scf.ForOp(lb, ub, index_const(b, 1), list(carried), Region(body)))
    return loop, Builder(InsertPoint.at_end(body))


def bitonic_argsort(b: Builder, op: ArgsortOp) -> SSAValue:
    """The indices `op` means, for an input with a run-time dimension (any rank, any axis)."""
    x, out_type = op.input, op.result.type
    assert isinstance(x.type, TensorType) and isinstance(out_type, TensorType)
    axis, descending, unsigned = op.normalized_axis, op.descending is not None, op.unsigned is not None
    shape = [index_const(b, d) if isinstance(d, int) else d for d in sizes(b, x)]
    n = shape[axis]
    padded_size, log = _stages(b, n)
    padded = [padded_size if d == axis else s for d, s in enumerate(shape)]
    dims = [DYNAMIC_INDEX if d == axis else s for d, s in enumerate(x.type.get_shape())]
    pair_type = TensorType(i64, dims)

    def empty_pair(b: Builder) -> SSAValue:
        return b.insert(tensor.EmptyOp([s for d, s in enumerate(padded) if dims[d] == DYNAMIC_INDEX],
                                       pair_type)).tensor

    def start(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        i = ivs[axis]
        inside = _ins(mb, arith.CmpiOp(i, n, "ult"))
        last = _ins(mb, arith.SubiOp(n, index_const(mb, 1)))  # n >= 1 where the map runs
        value = read(mb, x, [_ins(mb, arith.MinUIOp(i, last)) if d == axis else iv for d, iv in enumerate(ivs)])

        def key(s: Scalar, v: Sequence[SSAValue]) -> SSAValue:
            top = s.b.insert(arith.ConstantOp(IntegerAttr(I64_MAX, i64))).result
            return s.select(v[1], order_key(s, v[0], descending, unsigned), top)

        write(mb, tasklet(mb, [value, inside], i64, key), outs[0], ivs)
        write(mb, _ins(mb, arith.IndexCastOp(i, i64)), outs[1], ivs)

    keys, perm = map_op(b, padded, [empty_pair(b), empty_pair(b)], start).res

    one = index_const(b, 1)
    stages, sb = _for(b, one, _ins(b, arith.AddiOp(log, one)), [keys, perm])
    s = stages.body.block.args[0]
    block = _ins(sb, arith.ShLIOp(index_const(sb, 1), s))
    steps, tb = _for(sb, index_const(sb, 0), s, list(stages.body.block.args[1:]))
    t = steps.body.block.args[0]
    keys_in, perm_in = steps.body.block.args[1:]
    last_step = _ins(tb, arith.SubiOp(_ins(tb, arith.SubiOp(s, t)), index_const(tb, 1)))
    j = _ins(tb, arith.ShLIOp(index_const(tb, 1), last_step))

    def exchange(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        i = ivs[axis]
        partner = _ins(mb, arith.XOrIOp(i, j))
        lower = _ins(mb, arith.CmpiOp(i, partner, "ult"))
        rising = _ins(mb, arith.CmpiOp(_ins(mb, arith.AndIOp(i, block)), index_const(mb, 0), "eq"))
        keep_less = _ins(mb, arith.CmpiOp(lower, rising, "eq"))  # i keeps the pair's lesser one

        def at(q: SSAValue) -> list[SSAValue]:
            return [q if d == axis else iv for d, iv in enumerate(ivs)]

        mine = [read(mb, keys_in, ivs), read(mb, perm_in, ivs)]
        theirs = [read(mb, keys_in, at(partner)), read(mb, perm_in, at(partner))]

        def take(s: Scalar, v: Sequence[SSAValue]) -> SSAValue:
            """Whether i takes its partner's pair: the partner's is the lesser one exactly when i keeps it."""
            key, index, other_key, other_index, less = v
            below = _ins(s.b, arith.OrIOp(_ins(s.b, arith.CmpiOp(other_key, key, "slt")), _ins(s.b, arith.AndIOp(
                _ins(s.b, arith.CmpiOp(other_key, key, "eq")), _ins(s.b, arith.CmpiOp(other_index, index, "slt"))))))
            return _ins(s.b, arith.CmpiOp(below, less, "eq"))

        source = _ins(mb, arith.SelectOp(tasklet(mb, [*mine, *theirs, keep_less], i1, take), partner, i))
        write(mb, read(mb, keys_in, at(source)), outs[0], ivs)
        write(mb, read(mb, perm_in, at(source)), outs[1], ivs)

    exchanged = map_op(tb, padded, [empty_pair(tb), empty_pair(tb)], exchange).res
    tb.insert(scf.YieldOp(*exchanged))
    sb.insert(scf.YieldOp(*steps.results))
    ordered = stages.results[1]

    extents = [index_const(b, op.count) if d == axis and op.k is not None else e for d, e in enumerate(shape)]
    result = b.insert(tensor.EmptyOp([e for d, e in enumerate(extents) if out_type.get_shape()[d] == DYNAMIC_INDEX],
                                     out_type)).tensor

    def first(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        write(mb, read(mb, ordered, ivs), outs[0], ivs)

    return map_op(b, extents, [result], first).res[0]


def expand_argsort(b: Builder, op: Operation) -> SSAValue:
    """`nn.argsort`'s expansion: the network above for run-time sizes, else `nn_expand_sort`'s."""
    assert isinstance(op, ArgsortOp)
    if DYNAMIC_INDEX in op.input.type.get_shape():  # type: ignore[attr-defined]
        return bitonic_argsort(b, op)
    return static_argsort(b, op)


SORT_EXPANSIONS: dict[type[Operation], Callable[[Builder, Operation], SSAValue]] = {ArgsortOp: expand_argsort}
