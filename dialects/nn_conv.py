"""Convolution in the nn dialect: StableHLO's `convolution` without input
(lhs) dilation, window reversal or batch groups. The expansions (im2col, or a
direct map for few output features per group) are in
`dialects.nn_expand_conv`; autodiff differentiates the direct ones by the rule
in `passes.autodiff.rules_conv` (the input gradient a transposed convolution)
and the others through their expansion (maps that read the output gradient and
accumulate into the input's and kernel's with wcr(add)).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, TensorType, i64
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from dfc.dialects.nn_base import External, NNOp, _float_tensor

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


CONV_OPS = [ConvolutionOp]
