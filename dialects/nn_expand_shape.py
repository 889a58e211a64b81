"""Pure expansions of the shape nn ops of `dialects.nn_shape`.

Each is a df map of copies with affine indices: gathers (`slice`, `reverse`,
`broadcast_in_dim`, `dynamic_slice`) map over the result and read where the
element comes from; scatters (`pad`, `concatenate`, `dynamic_update_slice`)
map over the source and write where it goes, into a tensor that already holds
the rest. Dynamic start indices are read and clamped once, outside the map.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import AnyFloat, IndexType, TensorType, i64
from xdsl.ir import BlockArgument, Operation, SSAValue

from dfc.dialects import nn_shape as sh
from dfc.dialects.df_builders import elementwise, empty, index_const, map_op, read, write

IndexFn = Callable[[Builder, Sequence[SSAValue]], list[SSAValue]]


def _t(v: SSAValue) -> TensorType:
    assert isinstance(v.type, TensorType)
    return v.type


def affine(b: Builder, iv: SSAValue, scale: int, offset: int | SSAValue) -> SSAValue:
    """offset + scale * iv as index arithmetic (constants folded away)."""
    value = iv if scale == 1 else b.insert(arith.MuliOp(iv, index_const(b, scale))).result
    if isinstance(offset, int):
        if offset == 0:
            return value
        offset = index_const(b, offset)
    return b.insert(arith.AddiOp(value, offset)).result


def linear_index(b: Builder, ivs: Sequence[SSAValue], shape: Sequence[int]) -> SSAValue:
    """The row-major position of `ivs` in `shape`, as an i64."""
    linear: SSAValue = index_const(b, 0)
    for iv, size in zip(ivs, shape):
        linear = b.insert(arith.AddiOp(b.insert(arith.MuliOp(linear, index_const(b, size))).result, iv)).result
    return b.insert(arith.IndexCastOp(linear, i64)).result


def row_major_strides(shape: Sequence[int]) -> list[int]:
    """The row-major strides (in elements) of `shape`."""
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return strides[::-1]


def gather(b: Builder, source: SSAValue, out_type: TensorType, index_of: IndexFn) -> SSAValue:
    """out[ivs] = source[index_of(ivs)] over the shape of `out_type`."""

    def build(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        write(mb, read(mb, source, index_of(mb, ivs)), outs[0], ivs)

    return map_op(b, list(out_type.get_shape()), [empty(b, out_type)], build).res[0]


def scatter(b: Builder, source: SSAValue, bounds: Sequence[int], into: SSAValue, src_of: IndexFn, dst_of: IndexFn) -> SSAValue:
    """`into` with into[dst_of(ivs)] = source[src_of(ivs)] over `bounds`."""

    def build(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        write(mb, read(mb, source, src_of(mb, ivs)), outs[0], dst_of(mb, ivs))

    return map_op(b, list(bounds), [into], build).res[0]


def _slice(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, sh.SliceOp)
    start, strides = op.start_indices.get_values(), op.strides.get_values()
    return gather(
        b, op.operand, _t(op.result), lambda mb, ivs: [affine(mb, iv, s, lo) for iv, s, lo in zip(ivs, strides, start)]
    )


def _reverse(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, sh.ReverseOp)
    dims, shape = set(op.dimensions.get_values()), _t(op.operand).get_shape()
    return gather(
        b,
        op.operand,
        _t(op.result),
        lambda mb, ivs: [affine(mb, iv, -1, shape[k] - 1) if k in dims else iv for k, iv in enumerate(ivs)],
    )


def _broadcast_in_dim(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, sh.BroadcastInDimOp)
    dims, shape = op.broadcast_dimensions.get_values(), _t(op.operand).get_shape()
    out_shape = _t(op.result).get_shape()

    def index_of(mb: Builder, ivs: Sequence[SSAValue]) -> list[SSAValue]:
        return [ivs[d] if size == out_shape[d] else index_const(mb, 0) for d, size in zip(dims, shape)]

    return gather(b, op.operand, _t(op.result), index_of)


def _iota(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, sh.IotaOp)
    out_type, dim = _t(op.result), op.iota_dimension.value.data
    element = out_type.element_type

    def build(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        if isinstance(element, AnyFloat):
            as_int = mb.insert(arith.IndexCastOp(ivs[dim], i64)).result
            value = mb.insert(arith.SIToFPOp(as_int, element)).result
        else:
            value = mb.insert(arith.IndexCastOp(ivs[dim], element)).result
        write(mb, value, outs[0], ivs)

    return map_op(b, list(out_type.get_shape()), [empty(b, out_type)], build).res[0]


def _pad(b: Builder, op: Operation) -> SSAValue:
    """Fill with the padding value, then write the operand elements that land
    inside: element i of dimension k goes to low + i * (interior + 1)."""
    assert isinstance(op, sh.PadOp)
    out_type = _t(op.result)
    filled = elementwise(b, out_type, [op.padding_value], lambda s, a: a[0])
    low, _, interior = op.padding()
    first, counts = [], []
    for lo, step, d, size in zip(low, interior, _t(op.operand).get_shape(), out_type.get_shape()):
        step += 1
        i0 = max(0, -(lo // step)) if lo < 0 else 0  # first i with lo + i * step >= 0
        i1 = min(d, (size - 1 - lo) // step + 1) if size > lo else 0  # first i landing past the end
        first.append(i0)
        counts.append(max(i1 - i0, 0))
    if 0 in counts:
        return filled
    steps = [i + 1 for i in interior]
    return scatter(
        b,
        op.operand,
        counts,
        filled,
        lambda mb, ivs: [affine(mb, iv, 1, i0) for iv, i0 in zip(ivs, first)],
        lambda mb, ivs: [affine(mb, iv, s, lo + i0 * s) for iv, s, lo, i0 in zip(ivs, steps, low, first)],
    )


def _concatenate(b: Builder, op: Operation) -> SSAValue:
    """One map per input, each writing its block into the previous one's result."""
    assert isinstance(op, sh.ConcatenateOp)
    dim = op.dimension.value.data
    out = empty(b, _t(op.result))
    offset = 0
    for x in op.inputs:
        shape = _t(x).get_shape()
        if shape[dim]:
            out = scatter(
                b,
                x,
                shape,
                out,
                lambda mb, ivs: list(ivs),
                lambda mb, ivs, at=offset: [affine(mb, iv, 1, at) if k == dim else iv for k, iv in enumerate(ivs)],
            )
        offset += shape[dim]
    return out


def clamped_starts(b: Builder, starts: Sequence[SSAValue], sizes: Sequence[int], limits: Sequence[int]) -> list[SSAValue]:
    """Each start index read, as an index, clamped to [0, limit - size]."""
    out = []
    for s, size, limit in zip(starts, sizes, limits):
        value = b.insert(tensor.ExtractOp(s, [], _t(s).element_type)).result
        value = b.insert(arith.IndexCastOp(value, IndexType())).result
        value = b.insert(arith.MaxSIOp(value, index_const(b, 0))).result
        out.append(b.insert(arith.MinSIOp(value, index_const(b, limit - size))).result)
    return out


def _dynamic_slice(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, sh.DynamicSliceOp)
    out_type = _t(op.result)
    starts = clamped_starts(b, op.start_indices, out_type.get_shape(), _t(op.operand).get_shape())
    return gather(b, op.operand, out_type, lambda mb, ivs: [affine(mb, iv, 1, s) for iv, s in zip(ivs, starts)])


def _dynamic_update_slice(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, sh.DynamicUpdateSliceOp)
    shape = _t(op.update).get_shape()
    if 0 in shape:
        return op.operand
    starts = clamped_starts(b, op.start_indices, shape, _t(op.operand).get_shape())
    return scatter(
        b,
        op.update,
        shape,
        op.operand,
        lambda mb, ivs: list(ivs),
        lambda mb, ivs: [affine(mb, iv, 1, s) for iv, s in zip(ivs, starts)],
    )


SHAPE_EXPANSIONS: dict[type[Operation], Callable[[Builder, Operation], SSAValue]] = {
    sh.SliceOp: _slice,
    sh.PadOp: _pad,
    sh.ConcatenateOp: _concatenate,
    sh.ReverseOp: _reverse,
    sh.IotaOp: _iota,
    sh.BroadcastInDimOp: _broadcast_in_dim,
    sh.DynamicSliceOp: _dynamic_slice,
    sh.DynamicUpdateSliceOp: _dynamic_update_slice,
}
