"""The ONNX importer's RoiAlign: each region of interest's bins sampled at a grid of points, each point's
four neighbours read by one `nn.grid_sample` (nearest, at their integer pixels) and weighted as ONNX's
bilinear interpolation weights them (a point clamped into the image first, 0 outside [-1, size]); a bin the
mean of its points (`avg`) or the largest weighted neighbour (`max`). Its gradient to X is the reads'
(a scatter of the weights); the regions' sampling counts and neighbours pass none."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from dfc.compiler.interpreter import dtype_of
from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_shape as nns
from dfc.dialects.nn_sample import GridSampleOp
from dfc.importers.onnx_common import NodeError, tensor_of


def roi_sample_fractions(counts: np.ndarray, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """RoiAlign's sampling points along one axis as fractions of the region, (R, bins * G) for the
    per-region sample counts `counts` (R,) and G their largest (at least 1): bin b's sample i is at
    (b + (i + 0.5) / count) / bins; a region of fewer samples repeats its first in the rest. With them
    the (R, G) mask of the samples that exist."""
    width = max(int(counts.max()), 1)
    index = np.arange(width)
    exists = index[None, :] < counts[:, None]
    samples = np.where(exists, index[None, :], 0) + 0.5
    per_bin = samples / np.maximum(counts, 1)[:, None]
    fractions = (np.arange(bins)[None, :, None] + per_bin[:, None, :]) / bins
    return fractions.reshape(len(counts), bins * width), exists


class RoiOps:
    """`op_RoiAlign`, mixed into `OnnxImporter` (whose `value`, `ins`, `constant`, `scalar`, `known`,
    `gather_along`, `_cut` and `_reshape` it uses)."""

    def op_RoiAlign(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Each region of interest (x1, y1, x2, y2) of `rois` (R, 4), times `spatial_scale` (less 0.5 for
        `half_pixel`; `output_half_pixel`, opset 10's, keeps it and makes a region at least 1 x 1), cut into
        output_height x output_width bins of `sampling_ratio`^2 points each (0: ceil(region / bins) per
        axis, which needs the rois at import time), of the image `batch_indices[r]` of X (N, C, H, W).
        A point outside [-1, size] reads 0; inside, it is clamped into the image and its four neighbours
        weighted as bilinear interpolation; a bin is the mean of its points' interpolations (`avg`), or
        the largest of every weighted neighbour of its points (`max`, as ONNX's reference and ONNX Runtime
        define it)."""
        x, rois = self.value(node.input[0]), self.value(node.input[1])
        (n, c, *spatial), real = tensor_of(x).get_shape(), dtype_of(tensor_of(x).element_type)
        regions = tensor_of(rois).get_shape()
        mode, transform = attrs["mode"], attrs.get("coordinate_transformation_mode", "output_half_pixel")
        bins = [int(attrs["output_height"]), int(attrs["output_width"])]
        if len(spatial) != 2 or list(regions[1:]) != [4] or mode not in ("avg", "max") \
                or transform not in ("half_pixel", "output_half_pixel") or min(bins) < 1:
            raise NodeError(f"RoiAlign of X {[n, c, *spatial]} and rois {list(regions)}, mode '{mode}', "
                            f"coordinate_transformation_mode '{transform}', output {bins} (X must be (N, C, H, W) "
                            "and rois (R, 4))")
        scale, shift, ratio = float(attrs["spatial_scale"]), 0.5 if transform == "half_pixel" else 0.0, \
            int(attrs["sampling_ratio"])
        if ratio > 0:
            counts = np.full((1, 2), ratio)
        else:  # the counts depend on the regions' sizes
            known = self.known(node.input[1]).astype(real) * real.type(scale) - real.type(shift)
            sizes = known[:, 2:] - known[:, :2]
            sizes = sizes if shift else np.maximum(sizes, 1)
            counts = np.ceil(sizes[:, ::-1] / np.array(bins, real)).astype(np.int64)  # (R, [h, w])
        scaled = self.ins(nn.SubOp(self.ins(nn.MulOp(rois, self.scalar(scale, rois))), self.scalar(shift, rois)))
        start = self.ins(nns.SliceOp(scaled, [0, 0], [regions[0], 2], [1, 1]))
        size = self.ins(nn.SubOp(self.ins(nns.SliceOp(scaled, [0, 2], [regions[0], 4], [1, 1])), start))
        if not shift:
            size = self.ins(nne.MaximumOp(size, self.scalar(1.0, size)))
        points, weights = [], []
        for axis in (0, 1):  # y, then x (the rois list x first)
            column = 1 - axis
            fractions, exists = roi_sample_fractions(counts[:, axis], bins[axis])
            at = self.ins(nn.AddOp(self._cut(start, 1, column, column + 1), self.ins(nn.MulOp(
                self._cut(size, 1, column, column + 1), self.constant(fractions.astype(real))))))
            kept = exists if mode == "avg" else np.broadcast_to(counts[:, axis:axis + 1] > 0, exists.shape)
            low, high, near, far = self._roi_neighbours(at, spatial[axis], kept, bins[axis])
            pixels = self.ins(nns.ConcatenateOp([low, high], 1))  # (R, 2, bins, G)
            points.append(self._reshape(pixels, [regions[0], 2 * fractions.shape[1]]))
            weights.append(self.ins(nns.ConcatenateOp([near, far], 1)))  # (R, 2, bins, G)
        image = self.gather_along(x, node.input[2], 0)  # (R, C, H, W)
        sampled = self.ins(GridSampleOp(image, self._roi_grid(points, spatial, real), "nearest", "border", False))
        gh, gw = (tensor_of(w).get_shape()[3] for w in weights)
        sampled = self._reshape(sampled, [regions[0], c, 2, bins[0], gh, 2, bins[1], gw])
        wy = self._reshape(weights[0], [regions[0], 1, 2, bins[0], gh, 1, 1, 1])
        wx = self._reshape(weights[1], [regions[0], 1, 1, 1, 1, 2, bins[1], gw])
        terms = self.ins(nn.MulOp(self.ins(nn.MulOp(sampled, wy)), wx))
        y = self.ins(nn.ReduceOp(terms, "sum" if mode == "avg" else "max", [2, 4, 5, 7]))
        if mode == "avg":
            y = self.ins(nn.DivOp(y, self.constant(np.maximum(counts.prod(1), 1).astype(real).reshape(-1, 1, 1, 1))))
        return [y]

    def _roi_neighbours(self, at: SSAValue, size: int, kept: np.ndarray, bins: int) -> tuple[SSAValue, ...]:
        """RoiAlign's neighbours along one axis of the points `at` (R, bins * G): the lower and upper pixel
        (R, 1, bins, G, as floats) and their weights (1 - t, t), 0 for a point outside [-1, size] or not
        `kept` (R, G)."""
        shape = [tensor_of(at).get_shape()[0], 1, bins, kept.shape[1]]
        inside = self.ins(nne.AndOp(self.ins(nne.CompareOp(at, self.scalar(-1.0, at), "GE")),
                                    self.ins(nne.CompareOp(at, self.scalar(float(size), at), "LE"))))
        inside = self.ins(nne.AndOp(self._reshape(inside, shape), self.constant(kept[:, None, None, :])))
        clamped = self.ins(nne.ClampOp(self.scalar(0.0, at), at, self.scalar(float(size - 1), at)))
        low = self.ins(nne.FloorOp(clamped))
        last = self.scalar(float(size - 1), low)
        high = self.ins(nne.MinimumOp(self.ins(nn.AddOp(low, self.scalar(1.0, low))), last))
        t = self._reshape(self.ins(nn.SubOp(clamped, low)), shape)
        zero = self.scalar(0.0, t)
        near = self.ins(nne.SelectOp(inside, self.ins(nn.SubOp(self.scalar(1.0, t), t)), zero))
        return self._reshape(low, shape), self._reshape(high, shape), near, self.ins(nne.SelectOp(inside, t, zero))

    def _roi_grid(self, points: list[SSAValue], spatial: list[int], real: np.dtype) -> SSAValue:
        """`nn.grid_sample`'s grid (R, Py, Px, 2) of every pair of the pixel rows `points[0]` (R, Py) and
        columns `points[1]` (R, Px), normalised without align_corners (pixel p at (2 p + 1) / size - 1)."""
        (regions, py), px = tensor_of(points[0]).get_shape(), tensor_of(points[1]).get_shape()[1]
        normal = [self.ins(nn.SubOp(self.ins(nn.MulOp(p, self.constant(np.array(2.0 / size, real)))),
                                    self.constant(np.array(1.0 - 1.0 / size, real))))
                  for p, size in zip(points, spatial)]
        rows = self.ins(nn.BroadcastOp(self._reshape(normal[0], [regions, py, 1, 1]), [regions, py, px, 1]))
        columns = self.ins(nn.BroadcastOp(self._reshape(normal[1], [regions, 1, px, 1]), [regions, py, px, 1]))
        return self.ins(nns.ConcatenateOp([columns, rows], 3))
