"""The stablehlo dialect's constants and shape ops: constant, iota,
broadcast_in_dim, reshape, transpose, reverse, the slices, concatenate, pad,
get_dimension_size."""

from __future__ import annotations

from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    TensorType,
)
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.parser import Parser

from dfc.dialects.stablehlo_attrs import (
    int_array,
    int_attr,
)
from dfc.dialects.stablehlo_base import (
    StableHLOOp,
    parse_items,
)


@irdl_op_definition
class ConstantOp(StableHLOOp):
    """Pretty form: `stablehlo.constant dense<...> : tensor<...>`."""

    name = "stablehlo.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    output = result_def(TensorType)

    @classmethod
    def parse(cls, parser: Parser):
        extra = parser.parse_optional_attr_dict()
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr):
            parser.raise_error(f"'stablehlo.constant' expects a dense elements attribute, got {value}")
        return cls.build(properties={"value": value}, result_types=[value.type], attributes=extra)


@irdl_op_definition
class IotaOp(StableHLOOp):
    """Pretty form: `stablehlo.iota dim = 0 : tensor<4xi32>`."""

    name = "stablehlo.iota"
    iota_dimension = prop_def(IntegerAttr)
    output = result_def(TensorType)
    KEYWORDS: ClassVar[dict[str, Any]] = {"dim": ("iota_dimension", int_attr)}

    @classmethod
    def parse(cls, parser: Parser):
        properties = cls._keyword_properties(parser, parse_items(parser))
        return cls._finish(parser, [], properties)


@irdl_op_definition
class BroadcastInDimOp(StableHLOOp):
    name = "stablehlo.broadcast_in_dim"
    operand = operand_def(TensorType)
    broadcast_dimensions = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    KEYWORDS: ClassVar[dict[str, Any]] = {"dims": ("broadcast_dimensions", int_array)}


@irdl_op_definition
class ReshapeOp(StableHLOOp):
    name = "stablehlo.reshape"
    operand = operand_def(TensorType)
    result = result_def(TensorType)


@irdl_op_definition
class GetDimensionSizeOp(StableHLOOp):
    """Pretty form: `stablehlo.get_dimension_size %x, dim = 1 : (tensor<2x3xf32>) -> tensor<i32>`."""

    name = "stablehlo.get_dimension_size"
    operand = operand_def(TensorType)
    dimension = prop_def(IntegerAttr)
    result = result_def(TensorType)
    KEYWORDS: ClassVar[dict[str, Any]] = {"dim": ("dimension", int_attr)}


@irdl_op_definition
class TransposeOp(StableHLOOp):
    name = "stablehlo.transpose"
    operand = operand_def(TensorType)
    permutation = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    KEYWORDS: ClassVar[dict[str, Any]] = {"dims": ("permutation", int_array)}


@irdl_op_definition
class ReverseOp(StableHLOOp):
    name = "stablehlo.reverse"
    operand = operand_def(TensorType)
    dimensions = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    KEYWORDS: ClassVar[dict[str, Any]] = {"dims": ("dimensions", int_array)}


@irdl_op_definition
class SliceOp(StableHLOOp):
    """Pretty form: `stablehlo.slice %x [0:4, 1:5:2] : (...) -> ...`."""

    name = "stablehlo.slice"
    operand = operand_def(TensorType)
    start_indices = prop_def(DenseArrayBase)
    limit_indices = prop_def(DenseArrayBase)
    strides = prop_def(DenseArrayBase)
    result = result_def(TensorType)

    @classmethod
    def parse(cls, parser: Parser):
        operand = parser.parse_unresolved_operand()
        starts: list[int] = []
        limits: list[int] = []
        strides: list[int] = []

        def dim() -> None:
            starts.append(parser.parse_integer())
            parser.parse_punctuation(":")
            limits.append(parser.parse_integer())
            strides.append(parser.parse_integer() if parser.parse_optional_punctuation(":") is not None else 1)

        parser.parse_comma_separated_list(parser.Delimiter.SQUARE, dim)
        properties = {"start_indices": int_array(starts), "limit_indices": int_array(limits), "strides": int_array(strides)}
        return cls._finish(parser, [operand], properties)


@irdl_op_definition
class DynamicSliceOp(StableHLOOp):
    name = "stablehlo.dynamic_slice"
    operand = operand_def(TensorType)
    start_indices = var_operand_def(TensorType)
    slice_sizes = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    KEYWORDS: ClassVar[dict[str, Any]] = {"sizes": ("slice_sizes", int_array)}


@irdl_op_definition
class DynamicUpdateSliceOp(StableHLOOp):
    name = "stablehlo.dynamic_update_slice"
    operand = operand_def(TensorType)
    update = operand_def(TensorType)
    start_indices = var_operand_def(TensorType)
    result = result_def(TensorType)


@irdl_op_definition
class ConcatenateOp(StableHLOOp):
    name = "stablehlo.concatenate"
    inputs = var_operand_def(TensorType)
    dimension = prop_def(IntegerAttr)
    result = result_def(TensorType)
    KEYWORDS: ClassVar[dict[str, Any]] = {"dim": ("dimension", int_attr)}


@irdl_op_definition
class PadOp(StableHLOOp):
    name = "stablehlo.pad"
    operand = operand_def(TensorType)
    padding_value = operand_def(TensorType)
    edge_padding_low = prop_def(DenseArrayBase)
    edge_padding_high = prop_def(DenseArrayBase)
    interior_padding = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    KEYWORDS: ClassVar[dict[str, Any]] = {
        "low": ("edge_padding_low", int_array),
        "high": ("edge_padding_high", int_array),
        "interior": ("interior_padding", int_array),
    }
