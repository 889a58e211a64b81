"""The stablehlo dialect's `fft`: pretty form `stablehlo.fft %x, type = RFFT, length = [4, 8] :
(tensor<4x8xf32>) -> tensor<4x5xcomplex<f32>>`, generic form with `fft_type =
#stablehlo<fft_type RFFT>` and `fft_length = array<i64: 4, 8>`."""

from __future__ import annotations

from typing import Any, ClassVar

from xdsl.dialects.builtin import DenseArrayBase, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def

from dfc.dialects.stablehlo_attrs import FftType, FftTypeAttr, int_array
from dfc.dialects.stablehlo_base import StableHLOOp


@irdl_op_definition
class FftOp(StableHLOOp):
    """The discrete Fourier transform over the trailing `len(fft_length)` dimensions: FFT and IFFT
    (scaled by 1/n) of complex numbers, RFFT of real ones (the first n // 2 + 1 frequencies of the
    last dimension), IRFFT back to real numbers of the lengths `fft_length`."""

    name = "stablehlo.fft"
    operand = operand_def(TensorType)
    fft_type = prop_def(FftTypeAttr)
    fft_length = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    KEYWORDS: ClassVar[dict[str, Any]] = {"type": ("fft_type", lambda v: FftTypeAttr(FftType(v))),
                                          "length": ("fft_length", int_array)}
