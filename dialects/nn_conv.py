"""Convolution in the nn dialect: StableHLO's `convolution` without input
(lhs) dilation, window reversal or batch groups. The expansions (im2col, or a
direct map for few output features per group) are in
`dialects.nn_expand_conv`; autodiff differentiates the direct ones by the rule
in `passes.autodiff.rules_conv` (the input gradient a transposed convolution)
and the others through their expansion (maps that read the output gradient and
accumulate into the input's and kernel's with wcr(add)).

`nn.col2im` sums columns of patches back into an image (the adjoint of the
unfolding im2col does); its expansion is one map adding each column value into
the padded image with wcr(add), and autodiff differentiates it through that
(each column value's gradient read from the image's).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, TensorType, i1, i64
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from dfc.dialects.nn_base import External, NNOp, _float_tensor, _static

LAYOUTS = {
    "NCHW": (0, 1, 2, 3), "NHWC": (0, 3, 1, 2), "OIHW": (0, 1, 2, 3), "HWIO": (3, 2, 0, 1),
    "NCW": (0, 1, 2), "NWC": (0, 2, 1), "OIW": (0, 1, 2), "WIO": (2, 1, 0),
}  # fmt: skip
"""Common layouts as `*_dimensions` values: (batch or output feature, feature or input feature, spatial...)."""

_GEOMETRY = ("window_strides", "padding_low", "padding_high", "rhs_dilation")
_LAYOUT = ("input_dimensions", "kernel_dimensions", "output_dimensions")


@irdl_op_definition
class ConvolutionOp(NNOp):
    """Cross-correlation of `input` with `kernel` (StableHLO's `convolution`), any spatial rank.

    `input_dimensions` = [batch, feature, spatial...] names which input dimension plays
    each role (NCHW: `array<i64: 0, 1, 2, 3>`, NHWC: `0, 3, 1, 2`); `kernel_dimensions`
    = [output feature, input feature, spatial...] (OIHW: `0, 1, 2, 3`, HWIO: `3, 2, 0, 1`);
    `output_dimensions` = [batch, feature, spatial...]. Per spatial dimension: the input
    is padded with `padding_low`/`padding_high` zeros (non-negative), the kernel's taps
    are `rhs_dilation` apart, and the window moves by `window_strides`; the output has
    `(d + low + high - (k - 1) * dilation - 1) // stride + 1` positions. With
    `feature_group_count` G, the input features split into G groups of
    `kernel input features` each, and output feature o uses group `o // (O / G)`.
    """

    name = "nn.convolution"
    EXTERNAL: ClassVar[External] = External(stablehlo="convolution", onnx="Conv")

    input = operand_def(TensorType)
    kernel = operand_def(TensorType)
    input_dimensions = prop_def(DenseArrayBase.constr(i64))
    kernel_dimensions = prop_def(DenseArrayBase.constr(i64))
    output_dimensions = prop_def(DenseArrayBase.constr(i64))
    window_strides = prop_def(DenseArrayBase.constr(i64))
    padding_low = prop_def(DenseArrayBase.constr(i64))
    padding_high = prop_def(DenseArrayBase.constr(i64))
    rhs_dilation = prop_def(DenseArrayBase.constr(i64))
    feature_group_count = prop_def(IntegerAttr)
    result = result_def(TensorType)
    assembly_format = "$input `,` $kernel attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        input: SSAValue,
        kernel: SSAValue,
        layout: tuple[Sequence[int], Sequence[int], Sequence[int]],
        geometry: tuple[Sequence[int], Sequence[int], Sequence[int], Sequence[int]],
        feature_group_count: int = 1,
    ):
        props: dict = {n: DenseArrayBase.from_list(i64, v) for n, v in zip((*_LAYOUT, *_GEOMETRY), (*layout, *geometry))}
        props["feature_group_count"] = IntegerAttr(feature_group_count, i64)
        x, k = _float_tensor(input.type, "input"), _float_tensor(kernel.type, "kernel")
        layout_ = tuple(tuple(v) for v in layout)
        geometry_ = tuple(tuple(v) for v in geometry)
        shape = _conv_shape(x.get_shape(), k.get_shape(), layout_, geometry_, feature_group_count)  # type: ignore[arg-type]
        super().__init__(operands=[input, kernel], result_types=[TensorType(x.element_type, shape)], properties=props)

    def layout(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """(input, kernel, output) dimension roles."""
        return tuple(tuple(getattr(self, n).get_values()) for n in _LAYOUT)  # type: ignore[return-value]

    def geometry(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """(strides, padding low, padding high, kernel dilation), one entry per spatial dimension."""
        return tuple(tuple(getattr(self, n).get_values()) for n in _GEOMETRY)  # type: ignore[return-value]

    def infer_type(self) -> TensorType:
        x, k = _float_tensor(self.input.type, "input"), _float_tensor(self.kernel.type, "kernel")
        if x.element_type != k.element_type:
            raise VerifyException(f"input and kernel element types differ: {x.element_type} and {k.element_type}")
        shape = _conv_shape(x.get_shape(), k.get_shape(), self.layout(), self.geometry(), self.feature_group_count.value.data)
        return TensorType(x.element_type, shape)


def _conv_shape(x, k, layout, geometry, groups: int) -> list[int]:
    rank = len(x)
    if rank < 3 or len(k) != rank:
        raise VerifyException(f"input and kernel must have one rank of at least 3, got {rank} and {len(k)}")
    for name, dims in zip(_LAYOUT, layout):
        if sorted(dims) != list(range(rank)):
            raise VerifyException(f"{name} {list(dims)} is not a permutation of {rank} dimensions")
    for name, values in zip(_GEOMETRY, geometry):
        if len(values) != rank - 2:
            raise VerifyException(f"{name} has {len(values)} elements, expected one per spatial dimension ({rank - 2})")
    (xb, xf, *xs), (ko, ki, *ks), (ob, of, *os_) = layout
    if groups < 1 or x[xf] != k[ki] * groups or k[ko] % groups:
        raise VerifyException(
            f"input features ({x[xf]}) must be kernel input features ({k[ki]}) times feature_group_count ({groups}), "
            f"which divides the output features ({k[ko]})"
        )
    out = [0] * rank
    out[ob], out[of] = x[xb], k[ko]
    for j, (s, lo, hi, r) in enumerate(zip(*geometry)):
        if s < 1 or r < 1 or lo < 0 or hi < 0:
            raise VerifyException(f"spatial dimension {j}: strides and dilations must be at least 1, padding non-negative")
        d, size = x[xs[j]] + lo + hi, (k[ks[j]] - 1) * r + 1
        if d < size:
            raise VerifyException(f"spatial dimension {j}: the kernel spans {size} elements, more than the padded input's {d}")
        out[os_[j]] = (d - size) // s + 1
    return out


_FOLD = ("image_shape", "block_shape", "strides", "padding_low", "padding_high", "dilations")


@irdl_op_definition
class Col2ImOp(NNOp):
    """Columns of patches summed back into images (ONNX's `Col2Im`, PyTorch's `col2im` and `nn.Fold`).

    `input` is (N, C * K, L): for each of the L block positions, the K = prod(`block_shape`)
    values of each of C features (feature-major, then the block's taps in row-major order).
    The result is (N, C, *`image_shape`): element (n, c, x) is the sum of the values whose tap
    lands on x. Per spatial dimension, the image is padded with `padding_low`/`padding_high`
    (the padding is dropped), the taps are `dilations` apart and the block moves by `strides`,
    so that there are `(size + low + high - (k - 1) * dilation - 1) // stride + 1` positions
    per dimension, whose product must be L (the unfolding im2col does gives such columns;
    `nn.col2im` is its adjoint). Float or integer elements. Syntax:
    `%y = nn.col2im %x {image_shape = array<i64: 3, 3>, block_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>,
    padding_low = array<i64: 0, 0>, padding_high = array<i64: 0, 0>, dilations = array<i64: 1, 1>}
    : (tensor<1x4x4xf32>) -> tensor<1x1x3x3xf32>`.
    """

    name = "nn.col2im"
    EXTERNAL: ClassVar[External] = External(onnx="Col2Im (constant image and block shapes)", aten=("col2im",))

    input = operand_def(TensorType)
    image_shape = prop_def(DenseArrayBase.constr(i64))
    block_shape = prop_def(DenseArrayBase.constr(i64))
    strides = prop_def(DenseArrayBase.constr(i64))
    padding_low = prop_def(DenseArrayBase.constr(i64))
    padding_high = prop_def(DenseArrayBase.constr(i64))
    dilations = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, image_shape: Sequence[int], block_shape: Sequence[int], strides: Sequence[int],
                 padding_low: Sequence[int], padding_high: Sequence[int], dilations: Sequence[int]):
        values = (image_shape, block_shape, strides, padding_low, padding_high, dilations)
        props = {n: DenseArrayBase.from_list(i64, list(v)) for n, v in zip(_FOLD, values)}
        t = _static(input.type, "input")
        shape = _col2im_shape(t, *(tuple(v) for v in values))
        super().__init__(operands=[input], result_types=[TensorType(t.element_type, shape)], properties=props)

    def geometry(self) -> tuple[tuple[int, ...], ...]:
        """(image_shape, block_shape, strides, padding_low, padding_high, dilations)."""
        return tuple(tuple(getattr(self, n).get_values()) for n in _FOLD)

    def positions(self) -> list[int]:
        """The block positions along each spatial dimension (their product is L)."""
        return _positions(*self.geometry())

    def infer_type(self) -> TensorType:
        t = _static(self.input.type, "input")
        return TensorType(t.element_type, _col2im_shape(t, *self.geometry()))


def _positions(image, block, strides, low, high, dilations) -> list[int]:
    out = []
    for j, (d, k, s, lo, hi, r) in enumerate(zip(image, block, strides, low, high, dilations)):
        if k < 1 or s < 1 or r < 1 or lo < 0 or hi < 0:
            raise VerifyException(f"spatial dimension {j}: block sizes, strides and dilations must be at least 1, "
                                  "padding non-negative")
        span = (k - 1) * r + 1
        if d + lo + hi < span:
            raise VerifyException(f"spatial dimension {j}: the block spans {span} elements, more than the padded "
                                  f"image's {d + lo + hi}")
        out.append((d + lo + hi - span) // s + 1)
    return out


def _col2im_shape(t: TensorType, image, block, strides, low, high, dilations) -> list[int]:
    if t.element_type == i1:
        raise VerifyException(f"input must have a float or integer element type other than i1, got {t}")
    if t.get_num_dims() != 3:
        raise VerifyException(f"input must be (N, C * K, L), got {t}")
    if not image or any(len(v) != len(image) for v in (block, strides, low, high, dilations)):
        raise VerifyException("image_shape, block_shape, strides, paddings and dilations need one entry per spatial "
                              "dimension (at least one)")
    n, ck, blocks = t.get_shape()
    taps, positions = math.prod(block), _positions(image, block, strides, low, high, dilations)
    if ck % taps or blocks != math.prod(positions):
        raise VerifyException(f"input (N, C * K, L) = {t.get_shape()} does not fit blocks of {list(block)} (K = {taps}) "
                              f"at {positions} positions (L = {math.prod(positions)})")
    return [n, ck // taps, *image]


CONV_OPS = [ConvolutionOp, Col2ImOp]
