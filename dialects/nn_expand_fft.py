"""The expansion of `nn.dft` (`dialects.nn_fft`): a composite of nn ops, which `expand-library`
expands in turn and autodiff differentiates by their own rules.

The signal axis (with the (re, im) pair, for complex input) is moved last and the other
dimensions flattened into rows. A c2c or r2c transform of a power-of-two length from
RADIX2_MIN on is a radix-2 FFT (`_radix2`: O(n log n) work, O(n) twiddle constants, log2 n
stages of nn ops, so its IR grows with log2 n). Any other is one real matrix product, O(n^2)
per signal: the rows multiplied by a twiddle matrix, (2 m_in, 2 m_out) for c2c, (n, 2 m_out)
for r2c, (2 m_in, n) for c2r, which `contraction-to-blas` runs as a GEMM. That matrix is
computed by nn ops, not stored: the angle of entry (j, k) is 2 pi ((j k) mod n) / n, the
product reduced exactly in integers so that the angle stays in [0, 2 pi) whatever n, then
cosines and sines in f64 (exact zeros where they are 0), the Hermitian weights of c2r (1 for
frequency 0 and n / 2, 2 for the others) folded in, and the whole converted to the element
type once, so its IR is the same size for every n. Either way the result is multiplied by
1 / scale afterwards, as NumPy scales.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from xdsl.builder import Builder
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr, TensorType, f64, i64
from xdsl.ir import Operation, SSAValue

from dfc.dialects import nn
from dfc.dialects import nn_elementwise as ew
from dfc.dialects import nn_shape as sh
from dfc.dialects.nn_fft import DftOp

if TYPE_CHECKING:
    import numpy as np


def _ins(b: Builder, op: Operation) -> SSAValue:
    return b.insert(op).results[0]


def _t(v: SSAValue) -> TensorType:
    assert isinstance(v.type, TensorType)
    return v.type


def _reshape(b: Builder, x: SSAValue, shape: Sequence[int]) -> SSAValue:
    return x if list(_t(x).get_shape()) == list(shape) else _ins(b, nn.ReshapeOp(x, list(shape)))


def _transpose(b: Builder, x: SSAValue, perm: Sequence[int]) -> SSAValue:
    return x if list(perm) == sorted(perm) else _ins(b, nn.TransposeOp(x, list(perm)))


def _scalar(b: Builder, value: float) -> SSAValue:
    return _ins(b, nn.FullOp(FloatAttr(value, f64), []))


def _int(b: Builder, value: int) -> SSAValue:
    return _ins(b, nn.FullOp(IntegerAttr(value, i64), []))


def _zero_where(b: Builder, v: SSAValue, r: SSAValue, times: int, modulus: int, rest: int) -> SSAValue:
    """`v`, with 0 where (times r) mod modulus == rest."""
    product = _ins(b, ew.RemainderOp(_ins(b, nn.MulOp(r, _int(b, times))), _int(b, modulus)))
    return _ins(b, ew.SelectOp(_ins(b, ew.CompareOp(product, _int(b, rest), "EQ")), _scalar(b, 0.0), v))


def _angles(b: Builder, rows: int, cols: int, n: int) -> tuple[SSAValue, SSAValue]:
    """cos and sin (f64, rows x cols) of 2 pi r / n, r = (j k) mod n, j the row and k the column; exactly 0
    where they are (the sine at multiples of pi, 2 r mod n = 0; the cosine at odd multiples of pi / 2,
    4 r mod 2 n = n), as NumPy's (pocketfft's) twiddles are."""
    shape = TensorType(i64, [rows, cols])
    j, k = _ins(b, sh.IotaOp(shape, 0)), _ins(b, sh.IotaOp(shape, 1))
    r = _ins(b, ew.RemainderOp(_ins(b, nn.MulOp(j, k)), _int(b, n)))
    theta = _ins(b, nn.MulOp(_ins(b, ew.ConvertOp(r, f64)), _scalar(b, 2 * math.pi / n)))
    cos = _zero_where(b, _ins(b, ew.CosineOp(theta)), r, 4, 2 * n, n)
    return cos, _zero_where(b, _ins(b, ew.SineOp(theta)), r, 2, n, 0)


def _stack(b: Builder, parts: Sequence[SSAValue], axis: int) -> SSAValue:
    """`parts` (of equal shape) stacked along a new dimension `axis`."""
    shape = list(_t(parts[0]).get_shape())
    grown = [_reshape(b, p, shape[:axis] + [1] + shape[axis:]) for p in parts]
    return _ins(b, sh.ConcatenateOp(grown, axis))


def _twiddles(b: Builder, op: DftOp, m_in: int, m_out: int) -> SSAValue:
    """The real matrix the flattened rows are multiplied by, in f64 (see the module docstring)."""
    n, kind = op.signal_length, op.kind.data
    sign = 1.0 if op.inverse is not None else -1.0
    if kind == "c2r":  # rows: frequencies k (re, im); columns: samples j
        cos, sin = _angles(b, m_in, n, n)
        weights = [1.0 if k == 0 or 2 * k == n else 2.0 for k in range(m_in)]
        w = _ins(b, nn.ConstantOp(DenseIntOrFPElementsAttr.from_list(TensorType(f64, [m_in, 1]), weights)))
        cos, sin = _ins(b, nn.MulOp(cos, w)), _ins(b, nn.MulOp(sin, w))
        matrix = _stack(b, [cos, _ins(b, nn.MulOp(sin, _scalar(b, -sign)))], 1)
        return _reshape(b, matrix, [2 * m_in, n])
    cos, sin = _angles(b, m_in, m_out, n)
    signed = _ins(b, nn.MulOp(sin, _scalar(b, sign)))
    if kind == "r2c":  # rows: samples j; columns: frequencies k (re, im)
        return _reshape(b, _stack(b, [cos, signed], 2), [m_in, 2 * m_out])
    # c2c: y_re = sum x_re cos - sign x_im sin, y_im = sum x_re sign sin + x_im cos
    real_row = _stack(b, [cos, signed], 2)
    imag_row = _stack(b, [_ins(b, nn.NegOp(signed)), cos], 2)
    return _reshape(b, _stack(b, [real_row, imag_row], 1), [2 * m_in, 2 * m_out])


RADIX2_MIN = 512
"""From this power-of-two length on, c2c and r2c transforms are radix-2 FFTs (`_radix2`)."""


def _slice(b: Builder, x: SSAValue, start: Sequence[int], limit: Sequence[int]) -> SSAValue:
    return _ins(b, sh.SliceOp(x, list(start), list(limit), [1] * len(start)))


def _constant(b: Builder, values: np.ndarray, element_type) -> SSAValue:
    attr = DenseIntOrFPElementsAttr.from_list(TensorType(element_type, list(values.shape)), values.ravel().tolist())
    return _ins(b, nn.ConstantOp(attr))


def _radix2(b: Builder, re: SSAValue, im: SSAValue, sign: float) -> tuple[SSAValue, SSAValue]:
    """The unscaled DFT of the rows of (re, im) (R x n, n a power of two): the rows' elements in
    bit-reversed order (a transpose of their binary digits), then log2 n butterfly stages; stage L
    combines each pair of adjacent half blocks (E, O) of length L / 2 into E + w O, E - w O with the
    twiddles w_k = exp(sign 2 pi i k / L), constants of L / 2 values (cos exactly 0 at k = L / 4)."""
    import numpy as np  # here, not at the top: opt-tool's start-up does not pay for NumPy

    rows, n = _t(re).get_shape()
    p = n.bit_length() - 1
    e = _t(re).element_type

    def reversed_bits(v: SSAValue) -> SSAValue:
        digits = _reshape(b, v, [rows] + [2] * p)
        return _reshape(b, _transpose(b, digits, [0, *range(p, 0, -1)]), [rows, n])

    re, im = reversed_bits(re), reversed_bits(im)
    for stage in range(1, p + 1):
        length = 1 << stage
        half, blocks = length // 2, n // length
        k = np.arange(half)
        cos = np.where(4 * k == length, 0.0, np.cos(2 * np.pi * k / length)).reshape(1, 1, 1, half)
        cos_w, sin_w = _constant(b, cos, e), _constant(b, sign * np.sin(2 * np.pi * k / length).reshape(cos.shape), e)

        def halves(v: SSAValue) -> tuple[SSAValue, SSAValue]:
            v = _reshape(b, v, [rows, blocks, 2, half])
            return (_slice(b, v, [0, 0, 0, 0], [rows, blocks, 1, half]),
                    _slice(b, v, [0, 0, 1, 0], [rows, blocks, 2, half]))

        (er, odd_r), (ei, odd_i) = halves(re), halves(im)
        tr = _ins(b, nn.SubOp(_ins(b, nn.MulOp(cos_w, odd_r)), _ins(b, nn.MulOp(sin_w, odd_i))))
        ti = _ins(b, nn.AddOp(_ins(b, nn.MulOp(cos_w, odd_i)), _ins(b, nn.MulOp(sin_w, odd_r))))
        re, im = (_reshape(b, _ins(b, sh.ConcatenateOp([_ins(b, nn.AddOp(u, t)), _ins(b, nn.SubOp(u, t))], 2)),
                           [rows, n]) for u, t in ((er, tr), (ei, ti)))
    return re, im


def _by_radix2(b: Builder, op: DftOp, rows: SSAValue, m_out: int) -> SSAValue:
    """A c2c or r2c transform of `rows` (R x 2n interleaved, or R x n real) by `_radix2`, as R x 2 m_out."""
    n, e = op.signal_length, _t(rows).element_type
    count = _t(rows).get_shape()[0]
    if op.kind.data == "c2c":
        packed = _reshape(b, rows, [count, n, 2])
        re, im = (_reshape(b, _slice(b, packed, [0, 0, c], [count, n, c + 1]), [count, n]) for c in (0, 1))
    else:
        re, im = rows, _ins(b, nn.FullOp(FloatAttr(0.0, e), [count, n]))  # type: ignore[arg-type]
    re, im = _radix2(b, re, im, 1.0 if op.inverse is not None else -1.0)
    if m_out != n:
        re, im = (_slice(b, v, [0, 0], [count, m_out]) for v in (re, im))
    parts = [_reshape(b, v, [count, m_out, 1]) for v in (re, im)]
    return _reshape(b, _ins(b, sh.ConcatenateOp(parts, 2)), [count, 2 * m_out])


def _dft(b: Builder, op: Operation) -> SSAValue:
    """The signal axis moved last and the rest flattened into rows; the rows transformed by `_radix2`
    (c2c and r2c of a power-of-two length from RADIX2_MIN on) or by one product with the twiddle matrix;
    scaled; laid out back."""
    assert isinstance(op, DftOp)
    x, out = op.input, _t(op.result)
    axis, kind = op.axis.value.data, op.kind.data
    shape = list(_t(x).get_shape())
    complex_in, complex_out = kind != "r2c", kind != "c2r"
    signal_rank = len(shape) - complex_in
    perm = [d for d in range(signal_rank) if d != axis] + [axis] + [signal_rank] * complex_in
    batch = [shape[d] for d in perm[:signal_rank - 1]]
    m_in, m_out = shape[axis], out.get_shape()[axis]
    if math.prod(batch) == 0:
        return _ins(b, nn.FullOp(FloatAttr(0.0, out.element_type), list(out.get_shape())))  # type: ignore[arg-type]
    rows = _reshape(b, _transpose(b, x, perm), [math.prod(batch), m_in * (1 + complex_in)])
    n = op.signal_length
    if kind != "c2r" and n >= RADIX2_MIN and n & (n - 1) == 0:
        product = _by_radix2(b, op, rows, m_out)
    else:
        matrix = _twiddles(b, op, m_in, m_out)
        if out.element_type != f64:
            matrix = _ins(b, ew.ConvertOp(matrix, out.element_type))
        product = _ins(b, nn.MatmulOp(rows, matrix))
    scale = {"none": 1.0, "sqrt": math.sqrt(n), "n": float(n)}[op.scale.data]
    if scale != 1.0:  # after the sum, as NumPy (pocketfft) scales
        factor = _ins(b, nn.FullOp(FloatAttr(1 / scale, out.element_type), []))  # type: ignore[arg-type]
        product = _ins(b, nn.MulOp(product, factor))
    moved = _reshape(b, product, batch + [m_out] + [2] * complex_out)
    out_rank = signal_rank + complex_out
    back = [d for d in range(signal_rank) if d != axis] + [axis] + [signal_rank] * complex_out
    return _transpose(b, moved, [back.index(d) for d in range(out_rank)])


FFT_EXPANSIONS: dict[type[Operation], Callable[[Builder, Operation], SSAValue]] = {DftOp: _dft}
