"""Sampling in the nn dialect: `nn.grid_sample`, the spatial transformer's sampler that PyTorch
(`F.grid_sample`, `aten.grid_sampler_2d`/`_3d`) and ONNX (`GridSample`) share, and `nn.deform_conv`,
the deformable convolution of ONNX's `DeformConv` and torchvision's `deform_conv2d`, which samples
with it. Their expansions (`dialects.nn_expand_sample`) are composites of nn ops (coordinates by
elementwise ops, the neighbours read by `nn.gather`; the samples contracted by `nn.dot_general`), so
their gradients are those ops'."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, StringAttr, TensorType, UnitAttr, i64
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


@irdl_op_definition
class DeformConvOp(NNOp):
    """Deformable convolution of `input` (N, C, D1, ..., Dr) with `kernel` (oC, C / group, K1, ..., Kr), r >= 1.

    Output point o reads, at kernel tap k, the input at `o * strides - padding_low + k * dilations + offset`
    (pixel coordinates, bilinearly; a neighbour outside the image reads 0), times `mask`; the samples of
    each `group` of channels are contracted with the kernel and `bias` (oC) added. `offset` is
    (N, offset_group * taps * r, O1, ..., Or), the r components of each tap's offset (along D1 first) for
    each of `offset_group` groups of channels; `mask` is (N, offset_group * taps, O1, ..., Or); the output
    (N, oC, O1, ..., Or) has `(d + low + high - (k - 1) * dilation - 1) // stride + 1` points per axis.
    This is ONNX's `DeformConv` (an absent mask is ones, an absent bias zeros) and torchvision's
    `deform_conv2d` (r = 2; without `use_mask` the mask is ones). Syntax:
    `%y = nn.deform_conv %x, %w, %offset, %mask, %bias {strides = array<i64: 1, 1>, padding_low = ...,
    padding_high = ..., dilations = ..., group = 1 : i64, offset_group = 1 : i64} : (...) -> tensor<...>`.
    """

    name = "nn.deform_conv"
    EXTERNAL: ClassVar[External] = External(onnx="DeformConv (absent mask: ones, bias: zeros)")
    """(torchvision's `deform_conv2d` is no ATen op: dfc/torch/vision_ops.py handles it.)"""

    input = operand_def(TensorType)
    kernel = operand_def(TensorType)
    offset = operand_def(TensorType)
    mask = operand_def(TensorType)
    bias = operand_def(TensorType)
    strides = prop_def(DenseArrayBase.constr(i64))
    padding_low = prop_def(DenseArrayBase.constr(i64))
    padding_high = prop_def(DenseArrayBase.constr(i64))
    dilations = prop_def(DenseArrayBase.constr(i64))
    group = prop_def(IntegerAttr)
    offset_group = prop_def(IntegerAttr)
    result = result_def(TensorType)
    assembly_format = ("$input `,` $kernel `,` $offset `,` $mask `,` $bias attr-dict `:` "
                       "functional-type(operands, results)")

    def __init__(self, operands: Sequence[SSAValue], geometry: tuple[Sequence[int], Sequence[int], Sequence[int],
                 Sequence[int]], group: int = 1, offset_group: int = 1):
        """`operands`: input, kernel, offset, mask, bias; `geometry`: strides, padding low, padding high and
        dilations, one entry per spatial axis."""
        props: dict = {n: DenseArrayBase.from_list(i64, list(v)) for n, v in zip(DEFORM_GEOMETRY, geometry)}
        props["group"], props["offset_group"] = IntegerAttr(group, i64), IntegerAttr(offset_group, i64)
        shapes = [_float_tensor(v.type, n) for v, n in zip(operands, _DEFORM_OPERANDS)]
        result = _deform_result(shapes, [tuple(v) for v in geometry], group, offset_group)
        super().__init__(operands=list(operands), result_types=[result], properties=props)

    def geometry(self) -> list[tuple[int, ...]]:
        """(strides, padding low, padding high, dilations), one entry per spatial axis."""
        return [tuple(getattr(self, n).get_values()) for n in DEFORM_GEOMETRY]

    def infer_type(self) -> TensorType:
        shapes = [_float_tensor(v.type, n) for v, n in zip(self.operands, _DEFORM_OPERANDS)]
        return _deform_result(shapes, self.geometry(), self.group.value.data, self.offset_group.value.data)


DEFORM_GEOMETRY = ("strides", "padding_low", "padding_high", "dilations")
_DEFORM_OPERANDS = ("input", "kernel", "offset", "mask", "bias")


def _deform_result(types: list[TensorType], geometry: list[tuple[int, ...]], group: int,
                   offset_group: int) -> TensorType:
    (n, c, *spatial), (oc, cg, *kernel) = types[0].get_shape(), types[1].get_shape()
    rank, taps = len(spatial), math.prod(kernel)
    if rank < 1 or len(kernel) != rank or any(len(g) != rank for g in geometry):
        raise VerifyException(f"input (N, C, D1, ..., Dr), kernel (oC, C / group, K1, ..., Kr) and r strides, pads "
                              f"and dilations are needed, got {types[0]}, {types[1]} and {geometry}")
    strides, low, high, dilations = geometry
    out = [(d + lo + hi - (k - 1) * dil - 1) // st + 1 if st > 0 else 0
           for d, k, st, lo, hi, dil in zip(spatial, kernel, strides, low, high, dilations)]
    expected = {"offset": [n, offset_group * taps * rank, *out], "mask": [n, offset_group * taps, *out], "bias": [oc]}
    given = {name: list(t.get_shape()) for name, t in zip(_DEFORM_OPERANDS[2:], types[2:])}
    if group < 1 or offset_group < 1 or c != cg * group or oc % group or c % offset_group or min(out) < 1 \
            or given != expected or len({t.element_type for t in types}) != 1:
        raise VerifyException(f"nn.deform_conv of input {types[0]} and kernel {types[1]} with group {group} and "
                              f"offset_group {offset_group} needs offset, mask and bias of {expected} and one "
                              f"element type, got {', '.join(map(str, types[2:]))}")
    return TensorType(types[0].element_type, [n, oc, *out])


SAMPLE_OPS = [GridSampleOp, DeformConvOp]
