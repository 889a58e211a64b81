"""Pure expansions of `dialects.nn_contract`: `dot_general` is one map over
(batch, lhs free, contracting, rhs free) accumulating products with
wcr(add), as `matmul`'s (i, k, j); `argmax`/`argmin` reduce the extremum with
wcr(max|min), then the smallest index holding it with an integer wcr(min)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue

from dfc.dialects import nn_contract as nc
from dfc.dialects.df_builders import Scalar, index_const, map_op, read, reduce, splat, tasklet, write


def _t(v: SSAValue) -> TensorType:
    assert isinstance(v.type, TensorType)
    return v.type


def _dot_general(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, nc.DotGeneralOp)
    (lb, rb), (lc, rc) = op.dimensions()
    lhs_shape, rhs_shape = _t(op.lhs).get_shape(), _t(op.rhs).get_shape()
    lf, rf = nc.free_dimensions(len(lhs_shape), lb, lc), nc.free_dimensions(len(rhs_shape), rb, rc)
    bounds = [lhs_shape[d] for d in (*lb, *lf, *lc)] + [rhs_shape[d] for d in rf]
    nb, nlf, nc_ = len(lb), len(lf), len(lc)

    def build(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        batch, lhs_free = ivs[:nb], ivs[nb : nb + nlf]
        contract, rhs_free = ivs[nb + nlf : nb + nlf + nc_], ivs[nb + nlf + nc_ :]

        def index(rank: int, batched: Sequence[int], contracted: Sequence[int], free: Sequence[int], free_ivs) -> list:
            """The operand index: each dimension takes its batch, contracting or free variable."""
            return [
                batch[batched.index(d)] if d in batched
                else contract[contracted.index(d)] if d in contracted
                else free_ivs[free.index(d)]
                for d in range(rank)
            ]  # fmt: skip

        x = read(mb, op.lhs, index(len(lhs_shape), lb, lc, lf, lhs_free))
        y = read(mb, op.rhs, index(len(rhs_shape), rb, rc, rf, rhs_free))
        product = tasklet(mb, [x, y], x.type, lambda s, v: s.mul(v[0], v[1]))
        write(mb, product, outs[0], [*batch, *lhs_free, *rhs_free], "add")

    return map_op(b, bounds, [splat(b, _t(op.result), 0.0)], build).res[0]


def _arg(kind: str) -> Callable[[Builder, Operation], SSAValue]:
    def expand(b: Builder, op: Operation) -> SSAValue:
        assert isinstance(op, nc.ArgOp)
        x, axis, out_type = op.input, op.normalized_axis, _t(op.result)
        element, size = out_type.element_type, _t(x).get_shape()[axis]
        extreme = reduce(b, x, [axis], kind, True)

        def hit_index(s: Scalar, v: Sequence[SSAValue]) -> SSAValue:
            """i where x equals the extremum or is NaN, else `size` (larger than any index)."""
            value, m, i = v
            equal = s.eq(value, m)
            nan = s.b.insert(arith.CmpfOp(value, value, "uno")).result
            hit = s.b.insert(arith.OrIOp(equal, nan)).result
            return s.select(hit, i, s.b.insert(arith.ConstantOp(IntegerAttr(size, element))).result)

        def build(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
            value = read(mb, x, ivs)
            m = read(mb, extreme, [index_const(mb, 0) if k == axis else iv for k, iv in enumerate(ivs)])
            i = mb.insert(arith.IndexCastOp(ivs[axis], element)).result
            found = tasklet(mb, [value, m, i], element, hit_index)
            write(mb, found, outs[0], [iv for k, iv in enumerate(ivs) if k != axis], "min")

        return map_op(b, list(_t(x).get_shape()), [splat(b, out_type, size)], build).res[0]

    return expand


CONTRACT_EXPANSIONS: dict[type[Operation], Callable[[Builder, Operation], SSAValue]] = {
    nc.DotGeneralOp: _dot_general,
    nc.ArgMaxOp: _arg("max"),
    nc.ArgMinOp: _arg("min"),
}
