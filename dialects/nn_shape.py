"""Shape nn ops with StableHLO's semantics: `slice`, `pad`, `concatenate`,
`reverse`, `iota`, `broadcast_in_dim`, `dynamic_slice` and
`dynamic_update_slice`.

They move elements without arithmetic, so they take any element type (a
gradient flows only through floats). Static sizes are properties (`array<i64:
...>`); the dynamic start indices are 0-d integer tensors, clamped so that
the slice stays inside the operand, as StableHLO specifies. The expansions
are in `dialects.nn_expand_shape`, the backward rules in
`passes.autodiff.rules_shape`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyFloat,
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    Signedness,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException

from dfc.dialects.nn_base import External, NNOp, _static

_INDEX_FORMAT = "$operand `,` $start_indices attr-dict `:` functional-type(operands, results)"


def _ints(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, values)


def _per_dim(name: str, values: Sequence[int], rank: int) -> tuple[int, ...]:
    if len(values) != rank:
        raise VerifyException(f"{name} has {len(values)} elements, expected one per dimension ({rank})")
    return tuple(values)


def _dimension(value: int, rank: int, what: str = "dimension") -> int:
    if not 0 <= value < rank:
        raise VerifyException(f"{what} {value} is out of range for rank {rank}")
    return value


@irdl_op_definition
class SliceOp(NNOp):
    """`operand[start:limit:stride]` in every dimension (StableHLO's `slice`).

    Result dimension k has `ceil((limit[k] - start[k]) / strides[k])` elements; it
    needs `0 <= start <= limit <= dim` and `strides >= 1`.
    """

    name = "nn.slice"
    EXTERNAL: ClassVar[External] = External(stablehlo="slice", onnx="Slice (constant starts)")

    operand = operand_def(TensorType)
    start_indices = prop_def(DenseArrayBase.constr(i64))
    limit_indices = prop_def(DenseArrayBase.constr(i64))
    strides = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)
    assembly_format = "$operand attr-dict `:` functional-type(operands, results)"

    def __init__(self, operand: SSAValue, start: Sequence[int], limit: Sequence[int], strides: Sequence[int]):
        props = {"start_indices": _ints(start), "limit_indices": _ints(limit), "strides": _ints(strides)}
        t = _static(operand.type, "operand")
        shape = [-(-(hi - lo) // s) for lo, hi, s in zip(start, limit, strides)]
        super().__init__(operands=[operand], result_types=[TensorType(t.element_type, shape)], properties=props)

    def infer_type(self) -> TensorType:
        t = _static(self.operand.type, "operand")
        rank, shape = t.get_num_dims(), t.get_shape()
        start = _per_dim("start_indices", self.start_indices.get_values(), rank)
        limit = _per_dim("limit_indices", self.limit_indices.get_values(), rank)
        strides = _per_dim("strides", self.strides.get_values(), rank)
        out = []
        for k, (lo, hi, s, d) in enumerate(zip(start, limit, strides, shape)):
            if not 0 <= lo <= hi <= d:
                raise VerifyException(f"dimension {k}: need 0 <= start ({lo}) <= limit ({hi}) <= size ({d})")
            if s < 1:
                raise VerifyException(f"dimension {k}: stride {s} must be at least 1")
            out.append(-(-(hi - lo) // s))
        return TensorType(t.element_type, out)


@irdl_op_definition
class PadOp(NNOp):
    """`operand` with `edge_padding_low`/`high` elements of `padding_value` at the
    ends of each dimension and `interior_padding` between neighbours (StableHLO's `pad`).

    Result dimension k has `low + high + d + (d - 1) * interior` elements. Negative
    edge padding removes elements; interior padding is non-negative. `padding_value`
    is a 0-d tensor of the operand's element type.
    """

    name = "nn.pad"
    EXTERNAL: ClassVar[External] = External(stablehlo="pad", onnx="Pad (constant mode)")

    operand = operand_def(TensorType)
    padding_value = operand_def(TensorType)
    edge_padding_low = prop_def(DenseArrayBase.constr(i64))
    edge_padding_high = prop_def(DenseArrayBase.constr(i64))
    interior_padding = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)
    assembly_format = "$operand `,` $padding_value attr-dict `:` functional-type(operands, results)"

    def __init__(
        self, operand: SSAValue, padding_value: SSAValue, low: Sequence[int], high: Sequence[int], interior: Sequence[int]
    ):
        props = {"edge_padding_low": _ints(low), "edge_padding_high": _ints(high), "interior_padding": _ints(interior)}
        t = _static(operand.type, "operand")
        shape = [lo + hi + d + max(d - 1, 0) * i for lo, hi, d, i in zip(low, high, t.get_shape(), interior)]
        super().__init__(
            operands=[operand, padding_value], result_types=[TensorType(t.element_type, shape)], properties=props
        )

    def padding(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """(low, high, interior), one entry per dimension."""
        return (
            tuple(self.edge_padding_low.get_values()),
            tuple(self.edge_padding_high.get_values()),
            tuple(self.interior_padding.get_values()),
        )

    def infer_type(self) -> TensorType:
        t, v = _static(self.operand.type, "operand"), _static(self.padding_value.type, "padding_value")
        if v.get_num_dims() != 0 or v.element_type != t.element_type:
            raise VerifyException(f"padding_value must be a 0-d tensor of {t.element_type}, got {v}")
        rank = t.get_num_dims()
        low, high, interior = self.padding()
        for name, values in (("edge_padding_low", low), ("edge_padding_high", high), ("interior_padding", interior)):
            _per_dim(name, values, rank)
        out = []
        for k, (lo, hi, i, d) in enumerate(zip(low, high, interior, t.get_shape())):
            if i < 0:
                raise VerifyException(f"dimension {k}: interior padding {i} is negative")
            size = lo + hi + d + max(d - 1, 0) * i
            if size < 0:
                raise VerifyException(f"dimension {k}: padding gives a negative size {size}")
            out.append(size)
        return TensorType(t.element_type, out)


@irdl_op_definition
class ConcatenateOp(NNOp):
    """The inputs joined along `dimension` (StableHLO's `concatenate`); all other sizes must agree."""

    name = "nn.concatenate"
    EXTERNAL: ClassVar[External] = External(stablehlo="concatenate", onnx="Concat")

    inputs = var_operand_def(TensorType)
    dimension = prop_def(IntegerAttr)
    result = result_def(TensorType)
    assembly_format = "$inputs attr-dict `:` functional-type(operands, results)"

    def __init__(self, inputs: Sequence[SSAValue], dimension: int):
        types = [_static(v.type, "input") for v in inputs]
        shape = list(types[0].get_shape())
        shape[dimension] = sum(t.get_shape()[dimension] for t in types)
        super().__init__(
            operands=[list(inputs)],
            result_types=[TensorType(types[0].element_type, shape)],
            properties={"dimension": IntegerAttr(dimension, i64)},
        )

    def infer_type(self) -> TensorType:
        if not self.inputs:
            raise VerifyException("needs at least one input")
        types = [_static(v.type, f"input {k}") for k, v in enumerate(self.inputs)]
        first = types[0]
        dim = _dimension(self.dimension.value.data, first.get_num_dims())
        for k, t in enumerate(types[1:], 1):
            if t.element_type != first.element_type:
                raise VerifyException(f"input {k} has element type {t.element_type}, not {first.element_type}")
            same = t.get_num_dims() == first.get_num_dims() and all(
                a == b for j, (a, b) in enumerate(zip(t.get_shape(), first.get_shape())) if j != dim
            )
            if not same:
                raise VerifyException(f"input {k} ({t}) does not match input 0 ({first}) outside dimension {dim}")
        shape = list(first.get_shape())
        shape[dim] = sum(t.get_shape()[dim] for t in types)
        return TensorType(first.element_type, shape)


@irdl_op_definition
class ReverseOp(NNOp):
    """`operand` with the order of elements reversed along each of `dimensions`."""

    name = "nn.reverse"
    EXTERNAL: ClassVar[External] = External(stablehlo="reverse", onnx="-")

    operand = operand_def(TensorType)
    dimensions = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)
    assembly_format = "$operand attr-dict `:` functional-type(operands, results)"

    def __init__(self, operand: SSAValue, dimensions: Sequence[int]):
        super().__init__(
            operands=[operand], result_types=[operand.type], properties={"dimensions": _ints(dimensions)}
        )

    def infer_type(self) -> TensorType:
        t = _static(self.operand.type, "operand")
        dims = self.dimensions.get_values()
        for d in dims:
            _dimension(d, t.get_num_dims())
        if len(set(dims)) != len(dims):
            raise VerifyException(f"dimensions {list(dims)} repeat a dimension")
        return t


def _is_integer(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.SIGNLESS and t.width.data > 1


@irdl_op_definition
class IotaOp(NNOp):
    """A tensor whose element at index i is `i[iota_dimension]`: `nn.iota {iota_dimension = 0 : i64} : tensor<4x3xf32>`."""

    name = "nn.iota"
    EXTERNAL: ClassVar[External] = External(stablehlo="iota", onnx="Range (1-D)")

    iota_dimension = prop_def(IntegerAttr)
    result = result_def(TensorType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, result_type: TensorType, iota_dimension: int):
        super().__init__(result_types=[result_type], properties={"iota_dimension": IntegerAttr(iota_dimension, i64)})

    def infer_type(self) -> TensorType:
        out = _static(self.result.type, "result")
        if not (isinstance(out.element_type, AnyFloat) or _is_integer(out.element_type)):
            raise VerifyException(f"result must have a float or integer element type, got {out}")
        _dimension(self.iota_dimension.value.data, out.get_num_dims(), "iota_dimension")
        return out


@irdl_op_definition
class BroadcastInDimOp(NNOp):
    """`operand` broadcast to the result's shape, its dimension k becoming result
    dimension `broadcast_dimensions[k]` (StableHLO's `broadcast_in_dim`).

    Each operand dimension has size 1 (broadcast) or the size of the result dimension
    it maps to; unmapped result dimensions are new. The mapping may permute.
    """

    name = "nn.broadcast_in_dim"
    EXTERNAL: ClassVar[External] = External(stablehlo="broadcast_in_dim", onnx="Expand, Unsqueeze")

    operand = operand_def(TensorType)
    broadcast_dimensions = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)
    assembly_format = "$operand attr-dict `:` functional-type(operands, results)"

    def __init__(self, operand: SSAValue, shape: Sequence[int], broadcast_dimensions: Sequence[int]):
        t = _static(operand.type, "operand")
        super().__init__(
            operands=[operand],
            result_types=[TensorType(t.element_type, shape)],
            properties={"broadcast_dimensions": _ints(broadcast_dimensions)},
        )

    def infer_type(self) -> TensorType:
        t, out = _static(self.operand.type, "operand"), _static(self.result.type, "result")
        dims = _per_dim("broadcast_dimensions", self.broadcast_dimensions.get_values(), t.get_num_dims())
        if len(set(dims)) != len(dims):
            raise VerifyException(f"broadcast_dimensions {list(dims)} repeat a dimension")
        for k, (d, size) in enumerate(zip(dims, t.get_shape())):
            _dimension(d, out.get_num_dims(), "broadcast dimension")
            if size not in (1, out.get_shape()[d]):
                raise VerifyException(f"operand dimension {k} (size {size}) does not broadcast to result dimension {d} ({out})")
        return TensorType(t.element_type, out.get_shape())


def _start_indices(values: Sequence[SSAValue], rank: int) -> None:
    if len(values) != rank:
        raise VerifyException(f"{len(values)} start indices given, expected one per dimension ({rank})")
    for k, v in enumerate(values):
        t = _static(v.type, f"start index {k}")
        if t.get_num_dims() != 0 or not _is_integer(t.element_type):
            raise VerifyException(f"start index {k} must be a 0-d integer tensor, got {t}")


@irdl_op_definition
class DynamicSliceOp(NNOp):
    """A `slice_sizes` block of `operand` starting at the given indices (0-d integer
    tensors, one per dimension), each clamped to `[0, size - slice_size]` (StableHLO's `dynamic_slice`)."""

    name = "nn.dynamic_slice"
    EXTERNAL: ClassVar[External] = External(stablehlo="dynamic_slice", onnx="Slice (tensor starts)")

    operand = operand_def(TensorType)
    start_indices = var_operand_def(TensorType)
    slice_sizes = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)
    assembly_format = _INDEX_FORMAT

    def __init__(self, operand: SSAValue, start_indices: Sequence[SSAValue], slice_sizes: Sequence[int]):
        t = _static(operand.type, "operand")
        super().__init__(
            operands=[operand, list(start_indices)],
            result_types=[TensorType(t.element_type, slice_sizes)],
            properties={"slice_sizes": _ints(slice_sizes)},
        )

    def infer_type(self) -> TensorType:
        t = _static(self.operand.type, "operand")
        _start_indices(self.start_indices, t.get_num_dims())
        sizes = _per_dim("slice_sizes", self.slice_sizes.get_values(), t.get_num_dims())
        for k, (s, d) in enumerate(zip(sizes, t.get_shape())):
            if not 0 <= s <= d:
                raise VerifyException(f"dimension {k}: slice size {s} is not in [0, {d}]")
        return TensorType(t.element_type, sizes)


@irdl_op_definition
class DynamicUpdateSliceOp(NNOp):
    """`operand` with `update` written at the given start indices (0-d integer tensors,
    one per dimension), each clamped to `[0, size - update size]` (StableHLO's `dynamic_update_slice`)."""

    name = "nn.dynamic_update_slice"
    EXTERNAL: ClassVar[External] = External(stablehlo="dynamic_update_slice", onnx="-")

    operand = operand_def(TensorType)
    update = operand_def(TensorType)
    start_indices = var_operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$operand `,` $update `,` $start_indices attr-dict `:` functional-type(operands, results)"

    def __init__(self, operand: SSAValue, update: SSAValue, start_indices: Sequence[SSAValue]):
        super().__init__(operands=[operand, update, list(start_indices)], result_types=[operand.type])

    def infer_type(self) -> TensorType:
        t, u = _static(self.operand.type, "operand"), _static(self.update.type, "update")
        if u.element_type != t.element_type or u.get_num_dims() != t.get_num_dims():
            raise VerifyException(f"update {u} must have the rank and element type of the operand {t}")
        if any(a > b for a, b in zip(u.get_shape(), t.get_shape())):
            raise VerifyException(f"update {u} is larger than the operand {t}")
        _start_indices(self.start_indices, t.get_num_dims())
        return t


SHAPE_OPS = [
    SliceOp, PadOp, ConcatenateOp, ReverseOp, IotaOp, BroadcastInDimOp, DynamicSliceOp, DynamicUpdateSliceOp,
]  # fmt: skip
