"""The stablehlo dialect's dynamic shape ops: dynamic_iota, dynamic_reshape,
dynamic_broadcast_in_dim, dynamic_pad, dynamic_gather and dynamic_conv, whose
shape, padding or slice sizes are an operand. `convert-stablehlo` takes them
where that operand is a constant agreeing with a static result type."""

from __future__ import annotations

from typing import Any, ClassVar

from xdsl.dialects.builtin import ArrayAttr, BoolAttr, DenseArrayBase, IntegerAttr, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def

from dfc.dialects.stablehlo_attrs import ConvAttr, GatherAttr, int_array, int_attr
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


@irdl_op_definition
class DynamicGatherOp(StableHLOOp):
    """`gather` whose slice sizes are an operand. Generic form only."""

    name = "stablehlo.dynamic_gather"
    operand = operand_def(TensorType)
    start_indices = operand_def(TensorType)
    slice_sizes = operand_def(TensorType)
    dimension_numbers = prop_def(GatherAttr)
    indices_are_sorted = opt_prop_def(BoolAttr)
    result = result_def(TensorType)


@irdl_op_definition
class DynamicConvOp(StableHLOOp):
    """`convolution` whose padding (a tensor<Sx2xi64> of (low, high) pairs) is an operand. Generic form only."""

    name = "stablehlo.dynamic_conv"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    padding = operand_def(TensorType)
    window_strides = opt_prop_def(DenseArrayBase)
    lhs_dilation = opt_prop_def(DenseArrayBase)
    rhs_dilation = opt_prop_def(DenseArrayBase)
    window_reversal = opt_prop_def(DenseArrayBase)
    dimension_numbers = prop_def(ConvAttr)
    feature_group_count = prop_def(IntegerAttr)
    batch_group_count = prop_def(IntegerAttr)
    precision_config = opt_prop_def(ArrayAttr)
    result = result_def(TensorType)
