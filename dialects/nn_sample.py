"""Sampling in the nn dialect: `nn.grid_sample`, the spatial transformer's sampler that PyTorch
(`F.grid_sample`, `aten.grid_sampler_2d`/`_3d`) and ONNX (`GridSample`) share. Its expansion
(`dialects.nn_expand_sample`) is a composite of nn ops (coordinates by elementwise ops, the
neighbours read by `nn.gather`), so its gradients are theirs."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import StringAttr, TensorType, UnitAttr
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from dfc.dialects.nn_base import External, NNOp, _float_tensor

SAMPLE_MODES = ("bilinear", "nearest", "bicubic")
PADDING_MODES = ("zeros", "border", "reflection")


@irdl_op_definition
class GridSampleOp(NNOp):
    """`input` (N, C, D1, ..., Dr) sampled at the points of `grid` (N, O1, ..., Or, r), giving (N, C, O1, ..., Or).

    `grid[n, o1, ..., or]` is a point in normalised coordinates, its components in reverse axis
    order (x = the last axis, Dr; then y, z): -1 and 1 the centres of the corner pixels with
    `align_corners`, their outer edges without. `mode` interpolates multilinearly (the 2^r
    neighbours: bilinear, trilinear), takes the nearest pixel (halfway cases to even), or
    cubically (the 4^r neighbours, cubic convolution with A = -0.75 along each axis). `padding_mode`
    says what a point or neighbour outside the image reads: `zeros` 0, `border` the point clamped
    to the edge, `reflection` the point reflected at the edges (pixel centres with
    `align_corners`, outer edges without) then clamped; cubic pads each neighbour so. This is
    PyTorch's `grid_sampler_2d` and `grid_sampler_3d` (r = 2, 3; bicubic r = 2 only there) and
    ONNX's `GridSample` (any r), gradients included: to the input, and to the grid through the
    interpolation weights (none for `nearest`; clamping passes none at and beyond the edges). Syntax:
    `%y = nn.grid_sample %x, %g {mode = "bilinear", padding_mode = "zeros"} : (tensor<1x1x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>`.
    """

    name = "nn.grid_sample"
    EXTERNAL: ClassVar[External] = External(onnx="GridSample", aten=("grid_sampler_2d", "grid_sampler_3d"))

    input = operand_def(TensorType)
    grid = operand_def(TensorType)
    mode = prop_def(StringAttr)
    padding_mode = prop_def(StringAttr)
    align_corners = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    assembly_format = "$input `,` $grid attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, grid: SSAValue, mode: str, padding_mode: str, align_corners: bool):
        props = {"mode": StringAttr(mode), "padding_mode": StringAttr(padding_mode)}
        if align_corners:
            props["align_corners"] = UnitAttr()
        super().__init__(operands=[input, grid], result_types=[_result(input.type, grid.type)], properties=props)

    def infer_type(self) -> TensorType:
        if self.mode.data not in SAMPLE_MODES:
            raise VerifyException(f"mode must be one of {', '.join(SAMPLE_MODES)}, got '{self.mode.data}'")
        if self.padding_mode.data not in PADDING_MODES:
            raise VerifyException(f"padding_mode must be one of {', '.join(PADDING_MODES)}, "
                                  f"got '{self.padding_mode.data}'")
        return _result(self.input.type, self.grid.type)


def _result(input_type, grid_type) -> TensorType:
    x, g = _float_tensor(input_type, "input"), _float_tensor(grid_type, "grid")
    rank = x.get_num_dims()
    if rank < 3 or g.get_num_dims() != rank or g.get_shape()[-1] != rank - 2:
        raise VerifyException(f"input must be (N, C, D1, ..., Dr) and grid (N, O1, ..., Or, r), r >= 1, "
                              f"got {x} and {g}")
    if x.element_type != g.element_type or x.get_shape()[0] != g.get_shape()[0]:
        raise VerifyException(f"input and grid must share their element type and batch size, got {x} and {g}")
    n, c = x.get_shape()[:2]
    return TensorType(x.element_type, [n, c, *g.get_shape()[1:-1]])


SAMPLE_OPS = [GridSampleOp]
