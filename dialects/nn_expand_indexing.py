"""Pure expansion of `nn.gather`: one map over the result that reads the start
index components from `start_indices` (at the element's batch index), clamps
them, and reads the operand at start + batch + offset."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue

from dfc.dialects.df_builders import empty, index_const, map_op, read, write
from dfc.dialects.nn_indexing import GatherOp


def _t(v: SSAValue) -> TensorType:
    assert isinstance(v.type, TensorType)
    return v.type


def _add(b: Builder, x: SSAValue | None, y: SSAValue) -> SSAValue:
    return y if x is None else b.insert(arith.AddiOp(x, y)).result


def _gather(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, GatherOp)
    dims, ivd = op.dims(), op.index_vector_dim.value.data
    shape, index_rank = _t(op.operand).get_shape(), len(_t(op.start_indices).get_shape())
    out_type = _t(op.result)
    offset_dims, start_map, sizes = dims["offset_dims"], dims["start_index_map"], dims["slice_sizes"]
    dropped = {*dims["collapsed_slice_dims"], *dims["operand_batching_dims"]}
    batching = dict(zip(dims["operand_batching_dims"], dims["start_indices_batching_dims"]))

    def build(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        batch = [iv for k, iv in enumerate(ivs) if k not in offset_dims]
        offsets = iter(iv for k, iv in enumerate(ivs) if k in offset_dims)
        index: list[SSAValue | None] = [None] * len(shape)
        for k, d in enumerate(start_map):
            at = list(batch)
            if ivd < index_rank:
                at.insert(ivd, index_const(mb, k))
            value = mb.insert(arith.IndexCastOp(read(mb, op.start_indices, at), IndexType())).result
            value = mb.insert(arith.MaxSIOp(value, index_const(mb, 0))).result
            index[d] = mb.insert(arith.MinSIOp(value, index_const(mb, shape[d] - sizes[d]))).result
        for d in range(len(shape)):
            if d in batching:
                s = batching[d]
                index[d] = _add(mb, index[d], batch[s - 1 if s > ivd else s])
            elif d not in dropped:
                index[d] = _add(mb, index[d], next(offsets))
        zero = index_const(mb, 0)
        write(mb, read(mb, op.operand, [i if i is not None else zero for i in index]), outs[0], ivs)

    return map_op(b, list(out_type.get_shape()), [empty(b, out_type)], build).res[0]


INDEXING_EXPANSIONS: dict[type[Operation], Callable[[Builder, Operation], SSAValue]] = {GatherOp: _gather}
