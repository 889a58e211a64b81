"""The ONNX importer's Fourier transforms: `DFT` (opset 17's `axis` attribute, opset 20's `axis`
input) and `STFT` as `nn.dft`, on ONNX's layout of complex values (a trailing dimension of 2; a
real signal has a trailing dimension of 1); and the windows `HannWindow`, `HammingWindow` and
`BlackmanWindow` and the filter bank `MelWeightMatrix`, constants of sizes known at import time."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from dfc.dialects import nn
from dfc.dialects.nn_fft import DftOp
from dfc.dialects.nn_fft_builders import fit_length
from dfc.importers.onnx_common import NodeError, tensor_of


class SpectralOps:
    """`op_DFT`, `op_STFT`, the window ops and `op_MelWeightMatrix`, mixed into `OnnxImporter` (whose `value`,
    `ins`, `known`, `constant`, `_reshape` and `_take` they use)."""

    def _window(self, node: Any, attrs: dict[str, Any], terms: tuple[float, ...]) -> list[SSAValue]:
        """sum_k terms[k] cos(2 pi k n / N) for n < size, N = size (`periodic`) or size - 1, in
        `output_datatype` (the generalised cosine window ONNX's three window operators define)."""
        from onnx import helper

        size = int(self.known(node.input[0]).reshape(()))
        if size < 1:
            raise NodeError(f"{node.op_type} of size {size}")
        dtype = helper.tensor_dtype_to_np_dtype(attrs["output_datatype"])
        if dtype.kind != "f":
            raise NodeError(f"{node.op_type} of output_datatype {dtype} (not float)")
        period = size if attrs["periodic"] else size - 1
        n = np.arange(size, dtype=np.float64)
        window = sum(a * np.cos(2 * np.pi * k * n / period) for k, a in enumerate(terms)) if period else \
            np.full(size, sum(terms))
        return [self.constant(window.astype(dtype))]

    def op_MelWeightMatrix(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The (dft_length // 2 + 1, num_mel_bins) triangular filter bank of `num_mel_bins` filters evenly
        spaced on the mel scale (2595 log10(1 + f / 700)) between the edge frequencies, each rising from 0 at
        its left edge's DFT bin to 1 at its centre's and falling to 0 at its right edge's (a filter of
        coincident left and centre bins is 1 there), in `output_datatype`; every input known at import time.
        The arithmetic is that of ONNX's reference, in the inputs' types (the bins are floors of it)."""
        from onnx import helper

        mels, length, rate, low, high = (self.known(name) for name in node.input)
        mels, length = int(mels.reshape(())), int(length.reshape(()))
        dtype = helper.tensor_dtype_to_np_dtype(attrs["output_datatype"])
        if mels < 1 or length < 1 or int(rate.reshape(())) < 1 or dtype.kind != "f":
            raise NodeError(f"MelWeightMatrix of {mels} mel bins, dft_length {length}, sample_rate {rate} and "
                            f"output_datatype {dtype} (positive sizes and a float type are needed)")
        low_mel, high_mel = (2595 * np.log1p(edge / 700) / np.log(10) for edge in (low, high))
        edges = np.arange(mels + 2) * ((high_mel - low_mel) / (mels + 2)) + low_mel
        edges = (((length + 1) * (700 * np.expm1(edges / 2595 * np.log(10)))) // rate).astype(np.int64)
        if edges.min() < 0 or edges.max() > length // 2:
            raise NodeError(f"MelWeightMatrix edges {low} to {high} Hz fall outside the {length // 2 + 1} DFT bins")
        bins = np.arange(length // 2 + 1)[:, None]
        left, centre, right = edges[:-2], edges[1:-1], edges[2:]
        rising = np.where(centre > left, (bins - left) / np.maximum(centre - left, 1), bins == centre)
        falling = (right - bins) / np.maximum(right - centre, 1)
        weights = np.where((bins >= left) & (bins <= centre), rising, 0.0)
        weights = np.where((bins >= centre) & (bins < right), falling, weights)
        return [self.constant(weights.astype(dtype))]

    def op_HannWindow(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._window(node, attrs, (0.5, -0.5))

    def op_HammingWindow(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._window(node, attrs, (25 / 46, -21 / 46))

    def op_BlackmanWindow(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._window(node, attrs, (0.42, -0.5, 0.08))

    def op_DFT(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The transform along `axis` of `dft_length` (the signal cut or zero-padded to it; by default the
        axis' size, or 2 (m - 1) for a one-sided inverse of m frequencies). Forward: complex to complex,
        or a real signal to complex; `onesided` keeps the first n // 2 + 1 frequencies. Inverse (divided
        by n): complex to complex, or with `onesided` the first n // 2 + 1 frequencies of a real signal
        to that signal (trailing dimension 1)."""
        x = self.value(node.input[0])
        shape = list(tensor_of(x).get_shape())
        rank = len(shape)
        if rank < 2 or shape[-1] not in (1, 2):
            raise NodeError(f"DFT input {tensor_of(x)} must end in a dimension of 1 (real) or 2 (complex)")
        if self.opset < 20:
            axis = attrs["axis"]
        elif len(node.input) > 2 and node.input[2]:
            axis = int(self.known(node.input[2]).reshape(()))
        else:
            axis = -2
        if not -rank <= axis < rank - 1 and axis != -1:
            raise NodeError(f"DFT axis {axis} is outside the signal dimensions of {tensor_of(x)}")
        axis %= rank
        if axis == rank - 1:
            raise NodeError(f"DFT axis {axis} is the (re, im) dimension of {tensor_of(x)}")
        inverse, onesided = bool(attrs["inverse"]), bool(attrs["onesided"])
        length = None
        if len(node.input) > 1 and node.input[1]:
            length = int(self.known(node.input[1]).reshape(()))
        if inverse and onesided:
            n = length if length is not None else 2 * (shape[axis] - 1)
            if n < 1:
                raise NodeError(f"DFT of length {n}")
            if shape[-1] == 1:
                raise NodeError("a one-sided inverse DFT of a real input (it takes the complex frequencies)")
            half = fit_length(self.ins, x, axis, n // 2 + 1)
            signal = self.ins(DftOp(half, axis, "c2r", inverse=True, length=n, scale="n"))
            return [self._reshape(signal, [*tensor_of(signal).get_shape(), 1])]
        n = length if length is not None else shape[axis]
        if n < 1:
            raise NodeError(f"DFT of length {n}")
        x = fit_length(self.ins, x, axis, n)
        scale = "n" if inverse else "none"
        if shape[-1] == 1:
            real = self._reshape(x, tensor_of(x).get_shape()[:-1])
            return [self.ins(DftOp(real, axis, "r2c", inverse=inverse, onesided=onesided, scale=scale))]
        y = self.ins(DftOp(x, axis, "c2c", inverse=inverse, scale=scale))
        return [fit_length(self.ins, y, axis, n // 2 + 1) if onesided else y]

    def op_STFT(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Frames of `frame_length` (or the window's length) every `frame_step` samples of a signal
        [batch, length, 1 or 2] (both known at import time), gathered as [batch, frames, frame_length,
        1 or 2], multiplied by `window` when given, and transformed along the frame (`onesided`: the
        first frame_length // 2 + 1 frequencies)."""
        x = self.value(node.input[0])
        shape = list(tensor_of(x).get_shape())
        if len(shape) != 3 or shape[-1] not in (1, 2):
            raise NodeError(f"STFT signal {tensor_of(x)} must be [batch, length, 1 or 2]")
        step = int(self.known(node.input[1]).reshape(()))
        window = self.value(node.input[2]) if len(node.input) > 2 and node.input[2] else None
        length = int(self.known(node.input[3]).reshape(())) if len(node.input) > 3 and node.input[3] else None
        if window is not None:
            size = tensor_of(window).get_shape()
            if len(size) != 1 or length is not None and size[0] != length:
                raise NodeError(f"STFT window {tensor_of(window)} must be 1-D of frame_length {length}")
            length = size[0]
        if length is None:
            raise NodeError("STFT needs a window or a frame_length")
        if step < 1 or not 1 <= length <= shape[1]:
            raise NodeError(f"STFT of frame_step {step} and frame_length {length} over {shape[1]} samples")
        frames = 1 + (shape[1] - length) // step
        starts = np.arange(frames, dtype=np.int64)[:, None] * step + np.arange(length, dtype=np.int64)[None, :]
        framed = self._reshape(self._take(x, 1, starts.reshape(-1)), [shape[0], frames, length, shape[-1]])
        if window is not None:
            framed = self.ins(nn.MulOp(framed, self._reshape(window, [1, 1, length, 1])))
        onesided = bool(attrs["onesided"])
        if shape[-1] == 1:
            real = self._reshape(framed, [shape[0], frames, length])
            return [self.ins(DftOp(real, 2, "r2c", onesided=onesided))]
        y = self.ins(DftOp(framed, 2, "c2c"))
        return [fit_length(self.ins, y, 2, length // 2 + 1) if onesided else y]
