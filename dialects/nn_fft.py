"""The discrete Fourier transform in the nn dialect: `nn.dft`, one axis at a time, on complex
numbers laid out as a trailing dimension of 2 (re, im), the layout of ONNX's `DFT` and of dfc's
NumPy frontend. Its expansion (`dialects.nn_expand_fft`) is a composite of nn ops (a radix-2
FFT for long powers of two, else a product by a twiddle matrix the ops compute), so its
gradients are theirs; `nn.dft` of complex input has a backward rule of its own (the conjugate
transform).

`dialects.nn_fft_builders` builds transforms over several axes and fits signal lengths, for
every way in."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import IntegerAttr, StringAttr, TensorType, UnitAttr, i64
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from dfc.dialects.nn_base import External, NNOp, _float_tensor

DFT_KINDS = ("c2c", "r2c", "c2r")
"""complex to complex, real to complex, complex (the half spectrum of a real signal) to real."""
DFT_SCALES = ("none", "sqrt", "n")
"""The result divided by 1, sqrt(n) or n, n the signal length."""


@irdl_op_definition
class DftOp(NNOp):
    """The discrete Fourier transform of `input` along `axis`:
    `y[k] = sum_j x[j] exp(-+2 pi i j k / n) / scale`, the sign + with `inverse`.

    A complex tensor is a float tensor whose trailing dimension of 2 holds (re, im); `axis`
    counts the dimensions before it. `kind` says what goes in and out: `c2c` complex to
    complex (n = the axis' size); `r2c` a real input (n = the axis' size) to the complex
    result, its first n // 2 + 1 frequencies with `onesided` (the others are their
    conjugates), all n without; `c2r` the first n // 2 + 1 frequencies of a signal of real
    `length` = n, the rest their conjugates, to that real signal (the imaginary parts of
    frequency 0 and, for an even n, n / 2 are ignored, as NumPy's `irfft` does). `scale`
    divides the sum by 1 (`none`), sqrt(n) (`sqrt`) or n (`n`): NumPy's `norm` "backward" is
    `none` forward and `n` inverse, "ortho" `sqrt` both ways, "forward" the reverse. Syntax:
    `%y = nn.dft %x {axis = 0 : i64, kind = "c2c", scale = "none"} : (tensor<8x2xf32>) -> tensor<8x2xf32>`,
    with `inverse`, `onesided` and `length = 8 : i64` where they apply.
    """

    name = "nn.dft"
    EXTERNAL: ClassVar[External] = External(stablehlo="fft (one axis per op)", onnx="DFT",
                                            aten=("_fft_c2c", "_fft_r2c", "_fft_c2r"),
                                            numpy=("fft.fft", "fft.ifft", "fft.rfft", "fft.irfft", "fft.fftn"))

    input = operand_def(TensorType)
    axis = prop_def(IntegerAttr)
    kind = prop_def(StringAttr)
    scale = prop_def(StringAttr)
    inverse = opt_prop_def(UnitAttr)
    onesided = opt_prop_def(UnitAttr)
    length = opt_prop_def(IntegerAttr)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, axis: int, kind: str, *, inverse: bool = False, onesided: bool = False,
                 length: int | None = None, scale: str = "none"):
        props: dict = {"axis": IntegerAttr(axis, i64), "kind": StringAttr(kind), "scale": StringAttr(scale)}
        if inverse:
            props["inverse"] = UnitAttr()
        if onesided:
            props["onesided"] = UnitAttr()
        if length is not None:
            props["length"] = IntegerAttr(length, i64)
        super().__init__(operands=[input], result_types=[_result(input.type, axis, kind, onesided, length)],
                         properties=props)

    @property
    def signal_length(self) -> int:
        """n: the length of the (real or complex) signal in the time domain."""
        if self.length is not None:
            return self.length.value.data
        return _float_tensor(self.input.type, "input").get_shape()[self.axis.value.data]

    def infer_type(self) -> TensorType:
        if self.kind.data not in DFT_KINDS:
            raise VerifyException(f"kind must be one of {', '.join(DFT_KINDS)}, got '{self.kind.data}'")
        if self.scale.data not in DFT_SCALES:
            raise VerifyException(f"scale must be one of {', '.join(DFT_SCALES)}, got '{self.scale.data}'")
        length = None if self.length is None else self.length.value.data
        return _result(self.input.type, self.axis.value.data, self.kind.data, self.onesided is not None, length)


def _result(input_type, axis: int, kind: str, onesided: bool, length: int | None) -> TensorType:
    x = _float_tensor(input_type, "input")
    shape = list(x.get_shape())
    complex_in = kind in ("c2c", "c2r")
    if complex_in and (not shape or shape[-1] != 2):
        raise VerifyException(f"a {kind} input must be complex, a trailing dimension of 2 (re, im), got {x}")
    signal_rank = len(shape) - complex_in
    if not 0 <= axis < signal_rank:
        raise VerifyException(f"axis {axis} is outside the {signal_rank} signal dimensions of {x}")
    if onesided and kind != "r2c":
        raise VerifyException("onesided applies to r2c only (a c2r input is always one-sided)")
    if (length is None) != (kind != "c2r"):
        raise VerifyException("length is required by c2r and applies to it only")
    n = int(length if length is not None else shape[axis])
    if n < 1:
        raise VerifyException(f"the signal length must be at least 1, got {n}")
    if kind == "c2r":
        if shape[axis] != n // 2 + 1:
            raise VerifyException(f"a c2r input of length {n} has {n // 2 + 1} frequencies along axis {axis}, "
                                  f"got {shape[axis]}")
        return TensorType(x.element_type, shape[:axis] + [n] + shape[axis + 1:-1])
    if kind == "r2c":
        shape = shape[:axis] + [n // 2 + 1 if onesided else n] + shape[axis + 1:] + [2]
    return TensorType(x.element_type, shape)


FFT_OPS = [DftOp]
