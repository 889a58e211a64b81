"""Builders of Fourier transforms from `nn.dft` (`dialects.nn_fft`), shared by the ways in.

`dft_axes` chains transforms over several axes as NumPy's `fftn`/`rfftn`/`irfftn`, PyTorch's
`_fft_c2c`/`_fft_r2c`/`_fft_c2r` and StableHLO's `fft` (FFT, IFFT, RFFT, IRFFT over the trailing
`fft_length` axes) do: a real-to-complex transform on the last axis first, a complex-to-real
one on the last axis last, complex ones on the others. `fit_length` cuts or zero-pads a signal
to a transform's length. Both insert ops through `insert`, a function that inserts an op and
returns its result (`lambda op: builder.insert(op).results[0]`).

StableHLO's `fft` of `fft_length` [n_1, ..., n_k] over the last k axes of a rank-r operand is
`dft_axes(insert, x, range(r - k, r), kind, ...)` with FFT: `c2c`; IFFT: `c2c`, `inverse`,
`scale="n"`; RFFT: `r2c`; IRFFT: `c2r`, `inverse`, `scale="n"`, `length=n_k`, complex values
packed as a trailing dimension of 2.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import FloatAttr, TensorType
from xdsl.ir import Operation, SSAValue

from dfc.dialects.nn import FullOp
from dfc.dialects.nn_fft import DftOp
from dfc.dialects.nn_shape import PadOp

Insert = Callable[[Operation], SSAValue]


def dft_axes(insert: Insert, x: SSAValue, axes: Sequence[int], kind: str, *,
             inverse: bool = False, scale: str = "none", length: int | None = None,
             onesided: bool = True) -> SSAValue:
    """`x` transformed along each of `axes` (signal axes, in order) by `nn.dft`s built with `insert`
    (which inserts an op and returns its result). `r2c` transforms the last axis real to
    complex (one-sided unless `onesided` is False) and the others complex to complex; `c2r`
    the others complex to complex and the last one complex to real, of `length`. `scale` is per
    axis (each axis' own n), which composes to the whole transform's (NumPy's `norm`)."""
    axes = list(axes)
    if not axes:
        return x
    *rest, last = axes
    if kind == "r2c":
        x = insert(DftOp(x, last, "r2c", inverse=inverse, onesided=onesided, scale=scale))
        axes, kind = rest, "c2c"
    elif kind == "c2r":
        axes = rest
    for axis in axes:
        x = insert(DftOp(x, axis, "c2c", inverse=inverse, scale=scale))
    if kind == "c2r":
        x = insert(DftOp(x, last, "c2r", inverse=inverse, length=length, scale=scale))
    return x


def fit_length(insert: Callable[[Operation], SSAValue], x: SSAValue, axis: int, n: int) -> SSAValue:
    """`x` cut, or padded with zeros, at the end of dimension `axis` to `n` elements (the `n` of NumPy's
    transforms, ONNX's `dft_length`, StableHLO's `fft_length`)."""
    t = _float_tensor(x.type, "input")
    shape = t.get_shape()
    if shape[axis] == n:
        return x
    zero = insert(FullOp(FloatAttr(0.0, t.element_type), []))  # type: ignore[arg-type]
    high = [n - d if k == axis else 0 for k, d in enumerate(shape)]
    return insert(PadOp(x, zero, [0] * len(shape), high, [0] * len(shape)))



def fit_length(insert: Insert, x: SSAValue, axis: int, n: int) -> SSAValue:
    """`x` cut, or padded with zeros, at the end of dimension `axis` to `n` elements (the `n` of NumPy's
    transforms, ONNX's `dft_length`)."""
    assert isinstance(x.type, TensorType)
    shape = x.type.get_shape()
    if shape[axis] == n:
        return x
    zero = insert(FullOp(FloatAttr(0.0, x.type.element_type), []))  # type: ignore[arg-type]
    high = [n - d if k == axis else 0 for k, d in enumerate(shape)]
    return insert(PadOp(x, zero, [0] * len(shape), high, [0] * len(shape)))
