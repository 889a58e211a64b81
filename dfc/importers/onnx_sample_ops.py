"""The ONNX importer's sampling operators: GridSample, AffineGrid and DeformConv, all of them on
`nn.grid_sample` or beside it. AffineGrid is a product of theta with the constant grid of the
output's points; DeformConv is `nn.deform_conv` (which samples the input bilinearly with `nn.grid_sample` at
each kernel tap's offset points, weights the samples by the mask and contracts them with the
kernel), an absent mask ones and an absent bias zeros."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from dfc.compiler.interpreter import dtype_of
from dfc.dialects import nn
from dfc.dialects import nn_contract as nnc
from dfc.dialects import nn_elementwise as nne
from dfc.dialects.nn_sample import PADDING_MODES, SAMPLE_MODES, DeformConvOp, GridSampleOp
from dfc.importers.onnx_common import NodeError, tensor_of


def affine_base_grid(sizes: list[int], align_corners: bool) -> np.ndarray:
    """The points of an output of spatial `sizes` in normalised coordinates, homogeneous, in float64:
    (prod(sizes), r + 1), each row (x, y, ..., 1) with x along the last axis. An axis of size 1 is at 0
    (PyTorch's affine_grid)."""
    axes = []
    for size in sizes:
        centres = np.linspace(-1.0, 1.0, size) if size > 1 else np.zeros(1)
        axes.append(centres if align_corners else centres * (size - 1) / size)
    points = np.meshgrid(*axes, indexing="ij")
    return np.stack([p.reshape(-1) for p in reversed(points)] + [np.ones(math.prod(sizes))], axis=1)


class SampleOps:
    """Sampling `op_<Type>` methods, mixed into `OnnxImporter` (whose `value`, `ins`, `constant`, `known` and
    `_reshape` they use)."""

    def op_GridSample(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """`nn.grid_sample` of an input of any spatial rank (opset 16's mode names and opset 20's
        `linear`/`cubic`); cubic with `border` padding first moves the points outside (`_border_points`)."""
        x, grid = (self.value(n) for n in node.input)
        if tensor_of(x).get_num_dims() < 3:
            raise NodeError(f"GridSample of a rank-{tensor_of(x).get_num_dims()} input (N x C x D1 x ... x Dr, "
                            "r >= 1, is needed)")
        mode = {"linear": "bilinear", "cubic": "bicubic"}.get(attrs["mode"], attrs["mode"])
        if mode not in SAMPLE_MODES or attrs["padding_mode"] not in PADDING_MODES:
            raise NodeError(f"GridSample with mode '{attrs['mode']}' and padding_mode '{attrs['padding_mode']}'")
        align = bool(attrs["align_corners"])
        if mode == "bicubic" and attrs["padding_mode"] == "border":
            grid = self._border_points(grid, tensor_of(x).get_shape()[2:], align)
        return [self.ins(GridSampleOp(x, grid, mode, attrs["padding_mode"], align))]

    def _border_points(self, grid: SSAValue, sizes: list[int], align_corners: bool) -> SSAValue:
        """The grid with each point outside [-1, 1] clamped to the centres of the edge pixels, as ONNX's cubic
        `border` does before it clamps the neighbours (PyTorch's, which `nn.grid_sample` is, clamps only the
        neighbours; the two agree for the other modes)."""
        real = dtype_of(tensor_of(grid).element_type)
        inset = np.array([0.0 if align_corners else 1.0 / d for d in reversed(sizes)])
        low, high = self.constant((inset - 1.0).astype(real)), self.constant((1.0 - inset).astype(real))
        outside = self.ins(nne.OrOp(self.ins(nne.CompareOp(grid, self.scalar(-1.0, grid), "LT")),
                                    self.ins(nne.CompareOp(grid, self.scalar(1.0, grid), "GT"))))
        return self.ins(nne.SelectOp(outside, self.ins(nne.ClampOp(low, grid, high)), grid))

    def op_AffineGrid(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The grid (N, D1, ..., Dr, r) of theta (N, r, r + 1) applied to each output point
        (`affine_base_grid`); `size` (N, C, D1, ..., Dr) must be known at import time."""
        theta = self.value(node.input[0])
        shape, sizes = list(tensor_of(theta).get_shape()), [int(s) for s in self.known(node.input[1]).reshape(-1)]
        n, rank = sizes[0] if sizes else 0, len(sizes) - 2
        if rank not in (2, 3) or shape != [n, rank, rank + 1]:
            raise NodeError(f"AffineGrid of theta {shape} and size {sizes} (theta must be (N, 2, 3) with size "
                            "(N, C, H, W), or (N, 3, 4) with size (N, C, D, H, W))")
        base = affine_base_grid(sizes[2:], bool(attrs["align_corners"]))
        base = self.constant(base.astype(dtype_of(tensor_of(theta).element_type)))
        points = self.ins(nnc.DotGeneralOp(theta, base, ((), ()), ((2,), (1,))))  # (N, r, P)
        return [self._reshape(self.ins(nn.TransposeOp(points, [0, 2, 1])), [n, *sizes[2:], rank])]

    def op_DeformConv(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """`nn.deform_conv` of any spatial rank r (tap k of the kernel reads the input at
        `o * strides - pads_begin + k * dilations + offset`, bilinearly, 0 outside, times the mask), its
        operands' shapes checked here so that a mismatch names the node."""
        names = list(node.input) + [""] * (5 - len(node.input))
        x, w, offset = (self.value(n) for n in names[:3])
        bias = self.value(names[3]) if names[3] else None
        mask = self.value(names[4]) if names[4] else None
        (n, c, *spatial), (oc, cg, *kernel) = tensor_of(x).get_shape(), tensor_of(w).get_shape()
        rank, out = len(spatial), list(tensor_of(offset).get_shape()[2:])
        group, groups = attrs["group"], attrs["offset_group"]
        strides = list(attrs.get("strides", [1] * rank))
        dilations = list(attrs.get("dilations", [1] * rank))
        pads = list(attrs.get("pads", [0] * (2 * rank)))
        taps = math.prod(kernel)
        expected = [(s + pads[a] + pads[a + rank] - (k - 1) * d - 1) // st + 1
                    for a, (s, k, d, st) in enumerate(zip(spatial, kernel, dilations, strides))]
        shapes = {"offset": [n, groups * taps * rank, *expected], "B": [oc], "mask": [n, groups * taps, *expected]}
        given = {k: list(tensor_of(v).get_shape()) for k, v in (("offset", offset), ("B", bias), ("mask", mask))
                 if v is not None}
        if rank < 1 or list(attrs.get("kernel_shape", kernel)) != kernel or c != cg * group or oc % group \
                or c % groups or any(shape != shapes[k] for k, shape in given.items()):
            raise NodeError(f"DeformConv of X {[n, c, *spatial]}, W {[oc, cg, *kernel]} and "
                            f"{', '.join(f'{k} {v}' for k, v in given.items())} with group {group}, offset_group "
                            f"{groups}, kernel_shape {attrs.get('kernel_shape')}: the shapes do not agree")
        real = dtype_of(tensor_of(x).element_type)
        mask = mask if mask is not None else self.constant(np.ones([n, groups * taps, *expected], real))
        bias = bias if bias is not None else self.constant(np.zeros([oc], real))
        geometry = (strides, pads[:rank], pads[rank:], dilations)
        return [self.ins(DeformConvOp([x, w, offset, mask, bias], geometry, group, groups))]
