"""Backward rules of `dialects.nn_dynamic`: `nonzero`'s integer coordinates pass
no gradient (`gather_points` by them is differentiated through its expansion,
a scatter-add of the cotangent back to the points); of `unique`, only the
`values` part has one: each distinct value's cotangent goes to its first
occurrence (the element the value was read from)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import IndexType, TensorType
from xdsl.ir import BlockArgument

from dfc.dialects.df_builders import index_const, map_op, read, splat, write
from dfc.dialects.nn_dynamic import UniqueOp
from dfc.passes.autodiff.rule_table import RuleTable

DYNAMIC_BACKWARD = RuleTable()


@DYNAMIC_BACKWARD.rule("nn.nonzero")
def _nonzero(b, op, grads, required):
    return [None]


@DYNAMIC_BACKWARD.rule("nn.unique")
def _unique(b: Builder, op, grads, required):
    assert isinstance(op, UniqueOp)
    if op.part.data != "values":
        return [None]
    (g,) = grads
    x_type = op.input.type
    assert isinstance(x_type, TensorType)
    first = b.insert(UniqueOp(op.input, "indices", op.first_occurrence is not None, op.equal_nan is not None)).result
    count = b.insert(tensor.DimOp(g, index_const(b, 0))).result

    def spread(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        at = mb.insert(arith.IndexCastOp(read(mb, first, ivs), IndexType())).result
        write(mb, read(mb, g, ivs), outs[0], [at], "add")

    return [map_op(b, [count], [splat(b, x_type, 0.0)], spread).res[0]]
