"""The ONNX importer's Fourier transform: `DFT` (opset 17's `axis` attribute, opset 20's `axis`
input) as `nn.dft`, on ONNX's layout of complex values (a trailing dimension of 2; a real
signal has a trailing dimension of 1)."""

from __future__ import annotations

from typing import Any

from xdsl.ir import SSAValue

from dfc.dialects.nn_fft import DftOp
from dfc.dialects.nn_fft_builders import fit_length
from dfc.importers.onnx_common import NodeError, tensor_of


class SpectralOps:
    """`op_DFT`, mixed into `OnnxImporter` (whose `value`, `ins`, `known` and `_reshape` it uses)."""

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
