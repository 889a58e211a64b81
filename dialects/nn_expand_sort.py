"""Pure expansion of `nn.argsort` by rank counting: element i of a row has rank
r_i = #{j : x_j precedes x_i, or x_j ties x_i and j < i} (one map over the
input and a second position j along the axis, adding 0/1 into r with
wcr(add)), and a second map writes i at position r_i of its row. O(n^2)
comparisons per row of n, all independent; the ranks are a permutation, so
each position is written once (the wcr(add) into zeros says so to every
analysis without relying on it)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat, IndexType, IntegerType, TensorType, i64
from xdsl.ir import BlockArgument, Operation, SSAValue

from dfc.dialects.df_builders import Scalar, map_op, read, splat, tasklet, write
from dfc.dialects.nn_sort import ArgsortOp


def _ins(s: Scalar, op: Operation) -> SSAValue:
    return s.b.insert(op).results[0]


def precedes(s: Scalar, a: SSAValue, b: SSAValue, descending: bool, unsigned: bool) -> tuple[SSAValue, SSAValue]:
    """(`a` sorts strictly before `b`, `a` ties `b`) in `nn.argsort`'s order."""
    if isinstance(a.type, AnyFloat):
        a_nan, b_nan = _ins(s, arith.CmpfOp(a, a, "uno")), _ins(s, arith.CmpfOp(b, b, "uno"))
        if descending:  # a NaN first: a > b, or a is NaN and b is not
            number = _ins(s, arith.CmpfOp(a, b, "ogt"))
            nan_first = _ins(s, arith.AndIOp(a_nan, _ins(s, arith.XOrIOp(b_nan, _true(s)))))
        else:  # a NaN last: a < b, or b is NaN and a is not
            number = _ins(s, arith.CmpfOp(a, b, "olt"))
            nan_first = _ins(s, arith.AndIOp(b_nan, _ins(s, arith.XOrIOp(a_nan, _true(s)))))
        before = _ins(s, arith.OrIOp(number, nan_first))
        tie = _ins(s, arith.OrIOp(_ins(s, arith.CmpfOp(a, b, "oeq")), _ins(s, arith.AndIOp(a_nan, b_nan))))
        return before, tie
    assert isinstance(a.type, IntegerType)
    as_unsigned = unsigned or a.type.width.data == 1
    predicate = ("u" if as_unsigned else "s") + ("gt" if descending else "lt")
    return _ins(s, arith.CmpiOp(a, b, predicate)), _ins(s, arith.CmpiOp(a, b, "eq"))


def _true(s: Scalar) -> SSAValue:
    return _ins(s, arith.ConstantOp.from_int_and_width(1, 1))


def _argsort(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, ArgsortOp)
    x, out_type = op.input, op.result.type
    assert isinstance(x.type, TensorType) and isinstance(out_type, TensorType)
    shape, axis = list(x.type.get_shape()), op.normalized_axis
    if not shape:
        return splat(b, out_type, 0)
    descending, unsigned = op.descending is not None, op.unsigned is not None

    def count(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        i, j = list(ivs[:-1]), ivs[-1]
        x_i, x_j = read(mb, x, i), read(mb, x, [j if k == axis else iv for k, iv in enumerate(i)])
        earlier = mb.insert(arith.CmpiOp(j, i[axis], "ult")).result

        def body(s: Scalar, v: Sequence[SSAValue]) -> SSAValue:
            before, tie = precedes(s, v[0], v[1], descending, unsigned)
            first = _ins(s, arith.OrIOp(before, _ins(s, arith.AndIOp(tie, v[2]))))
            return _ins(s, arith.ExtUIOp(first, i64))

        write(mb, tasklet(mb, [x_j, x_i, earlier], i64, body), outs[0], i, "add")

    ranks = map_op(b, [*shape, shape[axis]], [splat(b, out_type, 0)], count).res[0]

    def place(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        rank = mb.insert(arith.IndexCastOp(read(mb, ranks, ivs), IndexType())).result
        position = mb.insert(arith.IndexCastOp(ivs[axis], i64)).result
        write(mb, position, outs[0], [rank if k == axis else iv for k, iv in enumerate(ivs)], "add")

    return map_op(b, shape, [splat(b, out_type, 0)], place).res[0]


SORT_EXPANSIONS: dict[type[Operation], Callable[[Builder, Operation], SSAValue]] = {ArgsortOp: _argsort}
