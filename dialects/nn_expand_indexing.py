"""Pure expansions of `dialects.nn_indexing`. `gather` is one map over the
result that reads the start index components from `start_indices` (at the
element's batch index), clamps them, and reads the operand at start + batch +
offset. `scatter` maps over the updates writing each at its operand index (or,
for a window that does not fit, at an extra corner element) into a tensor one
element larger in each dimension: for `add`, `mul`, `max` and `min` the operand's
copy with the wcr of that kind, sliced back; for `replace` the position of the update with wcr(max), then a
map over the operand takes the last update written to each element, or keeps
the operand's."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, TensorType, i64
from xdsl.ir import BlockArgument, Operation, SSAValue

from dfc.dialects.df_builders import empty, index_const, map_op, read, splat, tasklet, write
from dfc.dialects.nn_expand_shape import gather, linear_index, row_major_strides
from dfc.dialects.nn_expand_window import padded
from dfc.dialects.nn_indexing import GatherOp, ScatterOp


def _t(v: SSAValue) -> TensorType:
    assert isinstance(v.type, TensorType)
    return v.type


def _add(b: Builder, x: SSAValue | None, y: SSAValue) -> SSAValue:
    return y if x is None else b.insert(arith.AddiOp(x, y)).result


def _and(b: Builder, x: SSAValue | None, y: SSAValue) -> SSAValue:
    return y if x is None else b.insert(arith.AndIOp(x, y)).result


def operand_index(
    b: Builder,
    dims: dict[str, tuple[int, ...]],
    index_vector_dim: int,
    shape: Sequence[int],
    indices: SSAValue,
    ivs: Sequence[SSAValue],
    clamp: bool,
) -> tuple[list[SSAValue], SSAValue | None]:
    """The operand index of the gather result (or scatter update) element at `ivs`,
    in gather's terms (starts clamped into range with `clamp`), and whether the
    element's whole window fits at its unclamped start (None: no start components)."""
    index_rank = len(_t(indices).get_shape())
    offset_dims, start_map, sizes = dims["offset_dims"], dims["start_index_map"], dims["slice_sizes"]
    dropped = {*dims["collapsed_slice_dims"], *dims["operand_batching_dims"]}
    batching = dict(zip(dims["operand_batching_dims"], dims["start_indices_batching_dims"]))
    batch = [iv for k, iv in enumerate(ivs) if k not in offset_dims]
    offsets = iter(iv for k, iv in enumerate(ivs) if k in offset_dims)
    index: list[SSAValue | None] = [None] * len(shape)
    fits: SSAValue | None = None
    for k, d in enumerate(start_map):
        at = list(batch)
        if index_vector_dim < index_rank:
            at.insert(index_vector_dim, index_const(b, k))
        value = b.insert(arith.IndexCastOp(read(b, indices, at), IndexType())).result
        low, high = index_const(b, 0), index_const(b, shape[d] - sizes[d])
        inside = b.insert(arith.AndIOp(
            b.insert(arith.CmpiOp(value, low, "sge")).result, b.insert(arith.CmpiOp(value, high, "sle")).result
        )).result  # fmt: skip
        fits = _and(b, fits, inside)
        if clamp:
            value = b.insert(arith.MinSIOp(b.insert(arith.MaxSIOp(value, low)).result, high)).result
        index[d] = value
    for d in range(len(shape)):
        if d in batching:
            s = batching[d]
            index[d] = _add(b, index[d], batch[s - 1 if s > index_vector_dim else s])
        elif d not in dropped:
            index[d] = _add(b, index[d], next(offsets))
    zero = index_const(b, 0)
    return [i if i is not None else zero for i in index], fits


def scatter_targets(b: Builder, op: ScatterOp, value_of, init: SSAValue, wcr: str | None) -> SSAValue:
    """A map over the updates writing `value_of(builder, update ivs)` at each update's
    operand index into `init` (one element larger in each dimension); an update whose
    window does not fit goes to the extra corner element."""
    dims, ivd, shape = op.gather_dims(), op.index_vector_dim.value.data, _t(op.result).get_shape()

    def build(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        index, fits = operand_index(mb, dims, ivd, shape, op.scatter_indices, ivs, clamp=False)
        if fits is not None:
            index = [mb.insert(arith.SelectOp(fits, i, index_const(mb, d))).result for i, d in zip(index, shape)]
        write(mb, value_of(mb, ivs), outs[0], index, wcr)

    return map_op(b, list(_t(op.updates).get_shape()), [init], build).res[0]


def scatter_winners(b: Builder, op: ScatterOp) -> SSAValue:
    """For each operand element (plus the extra corner), the row-major position of
    the last update written to it, or -1."""
    shape, u_shape = _t(op.result).get_shape(), _t(op.updates).get_shape()
    init = splat(b, TensorType(i64, [d + 1 for d in shape]), -1)
    return scatter_targets(b, op, lambda mb, ivs: linear_index(mb, ivs, u_shape), init, "max")


def _gather(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, GatherOp)
    dims, ivd, shape = op.dims(), op.index_vector_dim.value.data, _t(op.operand).get_shape()
    out_type = _t(op.result)

    def build(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        index, _ = operand_index(mb, dims, ivd, shape, op.start_indices, ivs, clamp=True)
        write(mb, read(mb, op.operand, index), outs[0], ivs)

    return map_op(b, list(out_type.get_shape()), [empty(b, out_type)], build).res[0]


def _scatter(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, ScatterOp)
    out_type = _t(op.result)
    shape = out_type.get_shape()
    if op.kind.data != "replace":
        extended = padded(b, op.operand, [0] * len(shape), [1] * len(shape), 0)
        combined = scatter_targets(b, op, lambda mb, ivs: read(mb, op.updates, ivs), extended, op.kind.data)
        return gather(b, combined, out_type, lambda mb, ivs: list(ivs))
    winners = scatter_winners(b, op)
    u_shape = _t(op.updates).get_shape()

    def build(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        winner = read(mb, winners, ivs)
        position = mb.insert(arith.IndexCastOp(winner, IndexType())).result
        position = mb.insert(arith.MaxSIOp(position, index_const(mb, 0))).result
        u_index = []
        for stride, size in zip(row_major_strides(u_shape), u_shape):
            q = mb.insert(arith.DivSIOp(position, index_const(mb, stride))).result
            u_index.append(mb.insert(arith.RemSIOp(q, index_const(mb, size))).result)
        replaced = mb.insert(arith.CmpiOp(winner, mb.insert(arith.ConstantOp(IntegerAttr(0, i64))).result, "sge")).result
        update, kept = read(mb, op.updates, u_index), read(mb, op.operand, ivs)
        write(mb, tasklet(mb, [replaced, update, kept], kept.type, lambda s, v: s.select(v[0], v[1], v[2])), outs[0], ivs)

    return map_op(b, list(shape), [empty(b, out_type)], build).res[0]


INDEXING_EXPANSIONS: dict[type[Operation], Callable[[Builder, Operation], SSAValue]] = {
    GatherOp: _gather,
    ScatterOp: _scatter,
}
