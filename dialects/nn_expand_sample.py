"""The expansion of `nn.grid_sample` (`dialects.nn_sample`): a composite of nn ops, which the
`expand-library` pass expands in turn and autodiff differentiates by their own rules.

Each axis' grid coordinate is unnormalised to pixels and padded (clamped, or reflected and
clamped) by elementwise ops; a neighbour's pixel is read by an `nn.gather` (take-along form)
of the image flattened to (N, C, H * W) at the row-major index of its clamped integer
coordinates, and zeroed by a select where it lies outside the image (zeros padding). The
weights come from the fractional part `t = x - floor(x)`: so the gradient with respect to the
grid flows through them (floor, round and the integer coordinates pass none), and the
gradient with respect to the image is the gathers'.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.builder import Builder
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, TensorType, i64
from xdsl.ir import Operation, SSAValue

from dfc.dialects import nn
from dfc.dialects import nn_elementwise as ew
from dfc.dialects.nn_sample import GridSampleOp
from dfc.dialects.nn_shape import SliceOp
from dfc.dialects.nn_sort import take_along

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
    """The image flattened to (N, C, H * W), read at integer-valued pixel coordinates (N, 1, P)."""

    def __init__(self, w: _Writer, image: SSAValue):
        self.w = w
        n, c, self.height, self.width = image.type.get_shape()  # type: ignore[attr-defined]
        self.flat = w.ins(nn.ReshapeOp(image, [n, c, self.height * self.width]))

    def at(self, x: SSAValue, y: SSAValue, check: bool) -> SSAValue:
        """The pixels at (x, y); with `check`, 0 where (x, y) is outside the image."""
        w, (n, c, _) = self.w, self.flat.type.get_shape()  # type: ignore[attr-defined]
        cx, cy = w.clamp(x, 0.0, float(self.width - 1)), w.clamp(y, 0.0, float(self.height - 1))
        row = w.ins(nn.MulOp(w.integer(cy), w.ins(nn.FullOp(IntegerAttr(self.width, i64), []))))
        index = w.ins(nn.BroadcastOp(w.ins(nn.AddOp(row, w.integer(cx))), [n, c, x.type.get_shape()[2]]))  # type: ignore[attr-defined]
        pixels = w.ins(take_along(self.flat, index, 2))
        if not check:
            return pixels
        inside = [w.compare(x, 0.0, "GE"), w.compare(x, float(self.width - 1), "LE"), w.compare(y, 0.0, "GE"),
                  w.compare(y, float(self.height - 1), "LE")]
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


def _grid_sample(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, GridSampleOp)
    result = op.result.type
    assert isinstance(result, TensorType) and isinstance(result.element_type, AnyFloat)
    w = _Writer(b, result.element_type)
    n, c, ho, wo = result.get_shape()
    mode, padding, align = op.mode.data, op.padding_mode.data, op.align_corners is not None
    image = _Image(w, op.input)

    def coordinate(k: int, size: int) -> SSAValue:
        part = w.ins(SliceOp(op.grid, [0, 0, 0, k], [n, ho, wo, k + 1], [1, 1, 1, 1]))
        return _unnormalize(w, w.ins(nn.ReshapeOp(part, [n, 1, ho * wo])), size, align)

    x, y = coordinate(0, image.width), coordinate(1, image.height)
    zeros = padding == "zeros"
    if mode == "nearest":
        rounded = [w.ins(ew.RoundEvenOp(_pad(w, v, size, padding, align)))
                   for v, size in ((x, image.width), (y, image.height))]
        sampled = image.at(*rounded, check=zeros)
    elif mode == "bilinear":
        x, y = _pad(w, x, image.width, padding, align), _pad(w, y, image.height, padding, align)
        x0, y0 = w.ins(ew.FloorOp(x)), w.ins(ew.FloorOp(y))
        tx, ty = w.sub(x, x0), w.sub(y, y0)
        wx, wy = [w.sub(1.0, tx), tx], [w.sub(1.0, ty), ty]
        xs, ys = [x0, w.add(x0, 1.0)], [y0, w.add(y0, 1.0)]
        sampled = _sum(w, [w.mul(image.at(xs[i], ys[j], check=True), w.mul(wx[i], wy[j]))
                           for j in range(2) for i in range(2)])
    else:
        x0, y0 = w.ins(ew.FloorOp(x)), w.ins(ew.FloorOp(y))
        wx, wy = _cubic_weights(w, w.sub(x, x0)), _cubic_weights(w, w.sub(y, y0))
        xs = [_pad(w, w.add(x0, float(i - 1)), image.width, padding, align) for i in range(4)]
        ys = [_pad(w, w.add(y0, float(j - 1)), image.height, padding, align) for j in range(4)]
        rows = [_sum(w, [w.mul(image.at(xs[i], ys[j], check=zeros), wx[i]) for i in range(4)]) for j in range(4)]
        sampled = _sum(w, [w.mul(rows[j], wy[j]) for j in range(4)])
    return w.ins(nn.ReshapeOp(sampled, [n, c, ho, wo]))


SAMPLE_EXPANSIONS: dict[type[Operation], Callable[[Builder, Operation], SSAValue]] = {GridSampleOp: _grid_sample}
