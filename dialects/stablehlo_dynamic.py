"""The stablehlo dialect's dynamic shape ops: dynamic_iota, dynamic_reshape,
dynamic_broadcast_in_dim and dynamic_pad, whose shape or padding is an operand.
`convert-stablehlo` takes them where that operand is a constant agreeing with a
static result type."""

from __future__ import annotations

from typing import Any, ClassVar

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def

from dfc.dialects.stablehlo_attrs import int_array, int_attr
from dfc.dialects.stablehlo_base import StableHLOOp


@irdl_op_definition
class DynamicIotaOp(StableHLOOp):
    """Pretty form: `stablehlo.dynamic_iota %shape, dim = 0 : (tensor<2xi64>) -> tensor<3x4xi64>`."""

    name = "stablehlo.dynamic_iota"
    output_shape = operand_def(TensorType)
    iota_dimension = prop_def(IntegerAttr)
    result = result_def(TensorType)
    KEYWORDS: ClassVar[dict[str, Any]] = {"dim": ("iota_dimension", int_attr)}


@irdl_op_definition
class DynamicReshapeOp(StableHLOOp):
    name = "stablehlo.dynamic_reshape"
    operand = operand_def(TensorType)
    output_shape = operand_def(TensorType)
    result = result_def(TensorType)


@irdl_op_definition
class DynamicBroadcastInDimOp(StableHLOOp):
    name = "stablehlo.dynamic_broadcast_in_dim"
    operand = operand_def(TensorType)
    output_dimensions = operand_def(TensorType)
    broadcast_dimensions = prop_def(DenseArrayBase)
    known_expanding_dimensions = opt_prop_def(DenseArrayBase)
    known_nonexpanding_dimensions = opt_prop_def(DenseArrayBase)
    result = result_def(TensorType)
    KEYWORDS: ClassVar[dict[str, Any]] = {"dims": ("broadcast_dimensions", int_array)}


@irdl_op_definition
class DynamicPadOp(StableHLOOp):
    name = "stablehlo.dynamic_pad"
    operand = operand_def(TensorType)
    padding_value = operand_def(TensorType)
    edge_padding_low = operand_def(TensorType)
    edge_padding_high = operand_def(TensorType)
    interior_padding = operand_def(TensorType)
    result = result_def(TensorType)
