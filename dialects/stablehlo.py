"""The `stablehlo` dialect: the StableHLO ops JAX emits, as input to `convert-stablehlo`.

Each op reads in MLIR's generic form (`"stablehlo.add"(%a, %b) : (...) -> ...`,
properties in `<{...}>`) and in the pretty form `jax.jit(f).lower(*args).as_text()`
prints (`stablehlo.add %a, %b : tensor<4xf32>`, `stablehlo.reduce(%x init: %c)
applies stablehlo.add across dimensions = [1] : ...`, `stablehlo.while(%i = %c) :
tensor<i32> cond {...} do {...}`, `stablehlo.convolution(%x, %w) dim_numbers =
[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {...}`, ...). Ops print in the
generic form. Operands and properties are those of the StableHLO specification;
a property the op does not have is a verifier error naming it. The dialect
only describes the input: semantics come from the nn/scf ops the conversion
produces (`passes/convert_stablehlo.py`).

The ops are defined by family (`stablehlo_elementwise.py`, `stablehlo_shape.py`,
`stablehlo_structured.py`, `stablehlo_bits.py` and `stablehlo_fft.py`) on the shared pretty syntax of
`stablehlo_base.py`;
this module assembles the dialect and is where the other layers find the ops.
"""

from __future__ import annotations

from xdsl.ir import Dialect

from dfc.dialects.stablehlo_attrs import STABLEHLO_ATTRIBUTES
from dfc.dialects.stablehlo_base import StableHLOOp
from dfc.dialects.stablehlo_bits import (
    BitcastConvertOp,
    CountLeadingZerosOp,
    MapOp,
    PopcntOp,
    ReducePrecisionOp,
    TriangularSolveOp,
)
from dfc.dialects.stablehlo_custom_call import CustomCallOp
from dfc.dialects.stablehlo_dynamic import (
    DynamicBroadcastInDimOp,
    DynamicConvOp,
    DynamicGatherOp,
    DynamicIotaOp,
    DynamicPadOp,
    DynamicReshapeOp,
)
from dfc.dialects.stablehlo_elementwise import (
    BINARY_OPS,
    UNARY_OPS,
    BinaryOp,
    ClampOp,
    CompareOp,
    ComplexOp,
    ConvertOp,
    ImagOp,
    RealOp,
    SelectOp,
    UnaryOp,
)
from dfc.dialects.stablehlo_fft import FftOp
from dfc.dialects.stablehlo_shape import (
    BroadcastInDimOp,
    ConcatenateOp,
    ConstantOp,
    DynamicSliceOp,
    DynamicUpdateSliceOp,
    GetDimensionSizeOp,
    IotaOp,
    PadOp,
    ReshapeOp,
    ReverseOp,
    SliceOp,
    TransposeOp,
)
from dfc.dialects.stablehlo_sort import SortOp
from dfc.dialects.stablehlo_structured import (
    CaseOp,
    CompositeOp,
    ConvolutionOp,
    DotGeneralOp,
    DotOp,
    GatherOp,
    IfOp,
    OptimizationBarrierOp,
    ReduceOp,
    ReduceWindowOp,
    ReturnOp,
    ScatterOp,
    SelectAndScatterOp,
    WhileOp,
)

__all__ = ["StableHLO", "StableHLOOp", "UnaryOp", "BinaryOp", "UNARY_OPS", "BINARY_OPS"]

StableHLO = Dialect(
    "stablehlo",
    [
        *UNARY_OPS.values(),
        *BINARY_OPS.values(),
        ConvertOp, SelectOp, ClampOp, CompareOp, ComplexOp, RealOp, ImagOp, FftOp,
        ConstantOp, IotaOp, BroadcastInDimOp, ReshapeOp, TransposeOp,
        ReverseOp, SliceOp, DynamicSliceOp, DynamicUpdateSliceOp, ConcatenateOp, PadOp, GetDimensionSizeOp,
        DotGeneralOp, DotOp,
        ConvolutionOp, OptimizationBarrierOp, ReduceOp, ReduceWindowOp, GatherOp, ScatterOp, ReturnOp, WhileOp, CaseOp, IfOp,
        CompositeOp, SelectAndScatterOp,
        SortOp, DynamicIotaOp, DynamicReshapeOp, DynamicBroadcastInDimOp, DynamicPadOp, DynamicGatherOp, DynamicConvOp,
        PopcntOp, CountLeadingZerosOp, BitcastConvertOp, ReducePrecisionOp, TriangularSolveOp, MapOp, CustomCallOp,
    ],
    STABLEHLO_ATTRIBUTES,
)
