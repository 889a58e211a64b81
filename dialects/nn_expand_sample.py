"""The expansions of `nn.grid_sample` and `nn.deform_conv` (`dialects.nn_sample`): composites of nn
ops, which the `expand-library` pass expands in turn and autodiff differentiates by their own rules.

Each axis' grid coordinate is unnormalised to pixels and padded (clamped, or reflected and
clamped) by elementwise ops; a neighbour's pixel is read by an `nn.gather` (take-along form)
of the image flattened to (N, C, D1 * ... * Dr) at the row-major index of its clamped integer
coordinates, and zeroed by a select where it lies outside the image (zeros padding); the
neighbours' weighted sum is separable, one axis at a time. The
weights come from the fractional part `t = x - floor(x)`: so the gradient with respect to the
grid flows through them (floor, round and the integer coordinates pass none), and the
gradient with respect to the image is the gathers'. A deformable convolution is one bilinear
`nn.grid_sample` (zeros padding) of its points, the offsets plus each tap's place, for each offset
group, the samples times the mask, contracted with the kernel per group (`nn.dot_general`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from xdsl.builder import Builder
from xdsl.dialects.builtin import AnyFloat, DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr, TensorType, i64
from xdsl.ir import Operation, SSAValue

from dfc.dialects import nn
from dfc.dialects import nn_elementwise as ew
from dfc.dialects.nn_contract import DotGeneralOp
from dfc.dialects.nn_sample import DeformConvOp, GridSampleOp
from dfc.dialects.nn_shape import ReverseOp, SliceOp
from dfc.dialects.nn_sort import take_along

if TYPE_CHECKING:
    import numpy as np

Operand = SSAValue | float

CUBIC_A = -0.75
"""The cubic convolution coefficient of PyTorch's (and ONNX's) bicubic sampling."""


class _Writer:
    """Inserts nn ops at a builder, numbers becoming 0-d tensors of the float type `real`."""

    def __init__(self, b: Builder, real: AnyFloat):
        self.b, self.real = b, real

    def ins(self, op: Operation) -> SSAValue:
        return self.b.insert(op).results[0]

    def value(self, x: Operand) -> SSAValue:
        return x if isinstance(x, SSAValue) else self.ins(nn.FullOp(FloatAttr(float(x), self.real), []))

    def add(self, x: Operand, y: Operand) -> SSAValue:
        return self.ins(nn.AddOp(self.value(x), self.value(y)))

    def sub(self, x: Operand, y: Operand) -> SSAValue:
        return self.ins(nn.SubOp(self.value(x), self.value(y)))

    def mul(self, x: Operand, y: Operand) -> SSAValue:
        return self.ins(nn.MulOp(self.value(x), self.value(y)))

    def div(self, x: Operand, y: Operand) -> SSAValue:
        return self.ins(nn.DivOp(self.value(x), self.value(y)))

    def compare(self, x: Operand, y: Operand, direction: str) -> SSAValue:
        return self.ins(ew.CompareOp(self.value(x), self.value(y), direction))

    def select(self, pred: SSAValue, x: Operand, y: Operand) -> SSAValue:
        return self.ins(ew.SelectOp(pred, self.value(x), self.value(y)))

    def clamp(self, x: SSAValue, low: float, high: float) -> SSAValue:
        """x within [low, high]; the gradient passes strictly inside only (PyTorch's clip)."""
        return self.ins(ew.ClampOp(self.value(low), x, self.value(high)))

    def integer(self, x: SSAValue) -> SSAValue:
        return self.ins(ew.ConvertOp(x, i64))


def _unnormalize(w: _Writer, coord: SSAValue, size: int, align_corners: bool) -> SSAValue:
    """A normalised coordinate in pixels: -1 and 1 the corner pixels' centres (align_corners) or outer edges."""
    if align_corners:
        return w.mul(w.div(w.add(coord, 1.0), 2.0), float(size - 1))
    return w.div(w.sub(w.mul(w.add(coord, 1.0), float(size)), 1.0), 2.0)


def _reflect(w: _Writer, x: SSAValue, twice_low: int, twice_high: int) -> SSAValue:
    """x reflected into [twice_low / 2, twice_high / 2] at its ends, as often as it takes."""
    shape = x.type.get_shape()  # type: ignore[attr-defined]
    if twice_low == twice_high:
        return w.ins(nn.FullOp(FloatAttr(0.0, w.real), shape))
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    distance = w.ins(ew.AbsOp(w.sub(x, low)))
    extra = w.ins(ew.RemainderOp(distance, w.value(span)))
    flips = w.ins(ew.FloorOp(w.div(distance, span)))
    even = w.compare(w.ins(ew.RemainderOp(flips, w.value(2.0))), 0.0, "EQ")
    return w.select(even, w.add(extra, low), w.add(w.sub(span, extra), low))


def _pad(w: _Writer, x: SSAValue, size: int, padding: str, align_corners: bool) -> SSAValue:
    """A pixel coordinate moved into the image by the padding mode (`zeros` leaves it)."""
    if padding == "zeros":
        return x
    if padding == "reflection":
        x = _reflect(w, x, 0, 2 * (size - 1)) if align_corners else _reflect(w, x, -1, 2 * size - 1)
    return w.clamp(x, 0.0, float(size - 1))


class _Image:
    """The image flattened to (N, C, D1 * ... * Dr), read at integer-valued pixel coordinates (N, 1, P), one per
    spatial axis in axis order."""

    def __init__(self, w: _Writer, image: SSAValue):
        self.w = w
        n, c, *self.sizes = image.type.get_shape()  # type: ignore[attr-defined]
        self.flat = w.ins(nn.ReshapeOp(image, [n, c, math.prod(self.sizes)]))

    def at(self, coords: list[SSAValue], check: bool) -> SSAValue:
        """The pixels at `coords`; with `check`, 0 where the point is outside the image."""
        w, (n, c, _) = self.w, self.flat.type.get_shape()  # type: ignore[attr-defined]
        index, stride = None, math.prod(self.sizes)
        for coord, size in zip(coords, self.sizes):
            stride //= size
            term = w.integer(w.clamp(coord, 0.0, float(size - 1)))
            if stride != 1:
                term = w.ins(nn.MulOp(term, w.ins(nn.FullOp(IntegerAttr(stride, i64), []))))
            index = term if index is None else w.ins(nn.AddOp(index, term))
        assert index is not None
        pixels = w.ins(take_along(self.flat, w.ins(nn.BroadcastOp(index, [n, c, coords[0].type.get_shape()[2]])), 2))  # type: ignore[attr-defined]
        if not check:
            return pixels
        inside = [w.compare(v, bound, direction) for v, size in zip(coords, self.sizes)
                  for bound, direction in ((0.0, "GE"), (float(size - 1), "LE"))]
        while len(inside) > 1:
            inside = [w.ins(ew.AndOp(inside[0], inside[1])), *inside[2:]]
        return w.select(inside[0], pixels, 0.0)


def _sum(w: _Writer, terms: list[SSAValue]) -> SSAValue:
    total = terms[0]
    for t in terms[1:]:
        total = w.add(total, t)
    return total


def _cubic_weights(w: _Writer, t: SSAValue) -> list[SSAValue]:
    """The cubic convolution weights of the neighbours at -1, 0, 1, 2 from a point t in [0, 1) past the 0th."""
    a = CUBIC_A

    def near(x: SSAValue) -> SSAValue:  # |x| <= 1
        return w.add(w.mul(w.mul(w.sub(w.mul(x, a + 2), a + 3), x), x), 1.0)

    def far(x: SSAValue) -> SSAValue:  # 1 < |x| < 2
        return w.sub(w.mul(w.add(w.mul(w.sub(w.mul(x, a), 5 * a), x), 8 * a), x), 4 * a)

    return [far(w.add(t, 1.0)), near(t), near(w.sub(1.0, t)), far(w.sub(2.0, t))]


def _interpolate(w: _Writer, image: _Image, positions: list[list[SSAValue]], weights: list[list[SSAValue]],
                 check: bool) -> SSAValue:
    """The weighted sum of the pixels at every combination of the axes' neighbour `positions`, each
    weighted by the product of its axes' `weights`: the last axis summed innermost, as a separable filter."""
    rank = len(positions)

    def combine(chosen: tuple[int, ...]) -> SSAValue:
        axis = len(chosen)
        if axis == rank - 1:
            return _sum(w, [w.mul(image.at([positions[a][k] for a, k in enumerate((*chosen, i))], check),
                                  weights[axis][i]) for i in range(len(positions[axis]))])
        return _sum(w, [w.mul(combine((*chosen, i)), weights[axis][i]) for i in range(len(positions[axis]))])

    return combine(())


def _grid_sample(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, GridSampleOp)
    result = op.result.type
    assert isinstance(result, TensorType) and isinstance(result.element_type, AnyFloat)
    w = _Writer(b, result.element_type)
    n, c, *out = result.get_shape()
    rank, points = len(out), math.prod(out)
    mode, padding, align = op.mode.data, op.padding_mode.data, op.align_corners is not None
    image = _Image(w, op.input)

    def coordinate(axis: int) -> SSAValue:
        k = rank - 1 - axis  # the grid lists x (the last axis) first
        part = w.ins(SliceOp(op.grid, [0] * (rank + 1) + [k], [n, *out, k + 1], [1] * (rank + 2)))
        return _unnormalize(w, w.ins(nn.ReshapeOp(part, [n, 1, points])), image.sizes[axis], align)

    coords = [coordinate(axis) for axis in range(rank)]
    zeros = padding == "zeros"
    if mode == "nearest":
        sampled = image.at([w.ins(ew.RoundEvenOp(_pad(w, v, size, padding, align)))
                            for v, size in zip(coords, image.sizes)], check=zeros)
    elif mode == "bilinear":
        coords = [_pad(w, v, size, padding, align) for v, size in zip(coords, image.sizes)]
        lows = [w.ins(ew.FloorOp(v)) for v in coords]
        fractions = [w.sub(v, low) for v, low in zip(coords, lows)]
        sampled = _interpolate(w, image, [[low, w.add(low, 1.0)] for low in lows],
                               [[w.sub(1.0, t), t] for t in fractions], check=True)
    else:
        lows = [w.ins(ew.FloorOp(v)) for v in coords]
        weights = [_cubic_weights(w, w.sub(v, low)) for v, low in zip(coords, lows)]
        positions = [[_pad(w, w.add(low, float(i - 1)), size, padding, align) for i in range(4)]
                     for low, size in zip(lows, image.sizes)]
        sampled = _interpolate(w, image, positions, weights, check=zeros)
    return w.ins(nn.ReshapeOp(sampled, [n, c, *out]))


def _deform_conv(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, DeformConvOp)
    result = op.result.type
    assert isinstance(result, TensorType) and isinstance(result.element_type, AnyFloat)
    w = _Writer(b, result.element_type)
    x, kernel, offset, mask, bias = op.operands
    (n, c, *spatial), (oc, cg, *taps_shape) = _shape(x), _shape(kernel)
    out, rank, taps = result.get_shape()[2:], len(spatial), math.prod(taps_shape)
    group, groups = op.group.value.data, op.offset_group.value.data
    grid = _deform_grid(w, offset, spatial, taps_shape, list(out), op.geometry(), n * groups)
    image = w.ins(nn.ReshapeOp(x, [n * groups, c // groups, *spatial]))
    sampled = w.ins(GridSampleOp(image, grid, "bilinear", "zeros", False))
    points = math.prod(out)
    sampled = w.ins(nn.ReshapeOp(sampled, [n, groups, c // groups, taps, points]))
    sampled = w.mul(sampled, w.ins(nn.ReshapeOp(mask, [n, groups, 1, taps, points])))
    columns = w.ins(nn.ReshapeOp(sampled, [n, group, cg * taps, points]))
    weights = w.ins(nn.ReshapeOp(kernel, [group, oc // group, cg * taps]))
    y = w.ins(DotGeneralOp(weights, columns, ((0,), (1,)), ((2,), (2,))))  # (group, oC / group, N, P)
    y = w.ins(nn.ReshapeOp(w.ins(nn.TransposeOp(y, [2, 0, 1, 3])), [n, oc, *out]))
    return w.add(y, w.ins(nn.ReshapeOp(bias, [oc] + [1] * rank)))


def _shape(v: SSAValue) -> list[int]:
    assert isinstance(v.type, TensorType)
    return list(v.type.get_shape())


def _deform_grid(w: _Writer, offset: SSAValue, spatial: list[int], kernel: list[int], out: list[int],
                 geometry: list[tuple[int, ...]], batch: int) -> SSAValue:
    """The sampling points as `nn.grid_sample`'s grid (batch, taps * O1, O2, ..., Or, r), normalised without
    align_corners: the offsets (N, groups * taps * r, O...) in pixels plus each tap's point."""
    import numpy as np  # here, not at the top: opt-tool's start-up does not pay for NumPy

    strides, pads, _, dilations = geometry
    rank, taps = len(spatial), math.prod(kernel)
    sizes = np.array(spatial, dtype=np.float64).reshape([1, rank] + [1] * rank)
    tap = np.stack(np.meshgrid(*(np.arange(k) * d for k, d in zip(kernel, dilations)), indexing="ij"))
    start = np.stack(np.meshgrid(*(np.arange(o) * s - p for o, s, p in zip(out, strides, pads)), indexing="ij"))
    points = tap.reshape(rank, taps).T.reshape([taps, rank] + [1] * rank) + start[None]

    def constant(array: np.ndarray) -> SSAValue:
        return w.ins(nn.ConstantOp(DenseIntOrFPElementsAttr.from_list(TensorType(w.real, array.shape),
                                                                      array.reshape(-1).tolist())))

    # a pixel coordinate p is (2 p + 1) / size - 1 in normalised coordinates
    moved = w.ins(nn.ReshapeOp(offset, [batch, taps, rank, *out]))
    normalised = w.add(w.mul(moved, constant(2.0 / sizes)), constant((2.0 * points + 1.0) / sizes - 1.0))
    grid = w.ins(nn.TransposeOp(normalised, [0, 1, *range(3, rank + 3), 2]))
    grid = w.ins(ReverseOp(grid, [rank + 2]))  # the grid lists x, the last axis, first
    return w.ins(nn.ReshapeOp(grid, [batch, taps * out[0], *out[1:], rank]))


SAMPLE_EXPANSIONS: dict[type[Operation], Callable[[Builder, Operation], SSAValue]] = {
    GridSampleOp: _grid_sample, DeformConvOp: _deform_conv,
}
