"""`bitcast_convert` and `reduce_precision` in `convert-stablehlo`, on the bits
of floats (`nn.bitcast_convert` reads them as integers of the same width).

* `bitcast_convert` between types of one width is `nn.bitcast_convert`; to a
  narrower type each element splits into a new last dimension of
  width-ratio elements, the lowest bits first (element k holds bits
  [k w, (k + 1) w)); to a wider type the last dimension joins the same way
  (the parts shifted into place and or-ed together). i1 counts as one bit.
* `reduce_precision` is the spec's reference algorithm on the bits: the
  mantissa rounded to `mantissa_bits` to nearest, ties to even (a bias of
  half an ulp less one, plus the lowest kept bit, then the rest masked off),
  then an exponent beyond the range of `exponent_bits` made infinity (with
  the sign) and one at or below its smallest normal exponent zero (with the
  sign); NaN stays NaN (infinity with no mantissa bits). Its gradient passes
  through unchanged, as `nn.convert`'s between floats does (JAX rounds the
  cotangent as well).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerType,
    TensorType,
)
from xdsl.ir import Attribute, SSAValue

from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_shape as nns
from dfc.dialects.diagnostics import CompileError
from dfc.dialects.nn_unsigned_builders import UnsignedArith
from dfc.dialects.stablehlo_bits import BitcastConvertOp, ReducePrecisionOp

FLOAT_FIELDS = {Float16Type: (5, 10), BFloat16Type: (8, 7), Float32Type: (8, 23), Float64Type: (11, 52)}
"""(exponent bits, mantissa bits) of each float type dfc computes with."""


def _width(e: Attribute) -> int:
    if isinstance(e, IntegerType):
        return e.width.data
    exponent, mantissa = FLOAT_FIELDS[type(e)]
    return 1 + exponent + mantissa


def _tensor(v: SSAValue) -> TensorType:
    assert isinstance(v.type, TensorType)
    return v.type


class BitConversions(UnsignedArith):
    """`on_bitcast_convert` and `on_reduce_precision`, mixed into the converter (with `pairwise_reduce`
    and `combiner` of `stablehlo_integers.IntegerConversions`)."""

    pairwise_reduce: Callable[..., SSAValue]
    combiner: Callable[[str, bool], Callable[[SSAValue, SSAValue], SSAValue]]

    def _as_int(self, x: SSAValue) -> SSAValue:
        """`x`'s bits as a signless integer of its width."""
        e = _tensor(x).element_type
        return x if isinstance(e, IntegerType) else self.ins(nne.BitcastConvertOp(x, IntegerType(_width(e))))

    def _from_int(self, bits: SSAValue, e: Attribute) -> SSAValue:
        return bits if isinstance(e, IntegerType) else self.ins(nne.BitcastConvertOp(bits, e))

    def on_bitcast_convert(self, op: BitcastConvertOp) -> Sequence[SSAValue]:
        x = op.operand
        source, target = _tensor(x).element_type, _tensor(op.result).element_type
        wi, wo = _width(source), _width(target)
        if source == target:
            return [x]
        if wi == wo:
            return [self.ins(nne.BitcastConvertOp(x, target))]
        shape = list(_tensor(x).get_shape())
        if wi > wo:  # split into a new last dimension, lowest bits first
            if wi % wo:
                raise CompileError.at(op, f"convert-stablehlo: bitcast_convert from {source} to {target}: the widths "
                                          "do not divide")
            bits = self._as_int(x)
            parts = [*shape, wi // wo]
            wide = self.ins(nns.BroadcastInDimOp(bits, parts, list(range(len(shape)))))
            shifts = self.ins(nn.MulOp(self.ins(nns.IotaOp(TensorType(bits.type.element_type, parts), len(shape))),
                                       self.int_full(wo, bits)))
            shifted = self.ins(nne.ShiftRightLogicalOp(wide, shifts))
            if wo == 1:
                one = self.int_full(1, shifted)
                return [self.ins(nne.CompareOp(self.ins(nne.AndOp(shifted, one)), self.int_full(0, shifted), "NE"))]
            return [self._from_int(self.ins(nne.ConvertOp(shifted, IntegerType(wo))), target)]
        if wo % wi:
            raise CompileError.at(op, f"convert-stablehlo: bitcast_convert from {source} to {target}: the widths "
                                      "do not divide")
        wide_type = IntegerType(wo)
        if wi == 1:
            parts = self.ins(nne.ConvertOp(x, wide_type))
        else:
            parts = self.ins(nne.ConvertOp(self._as_int(x), wide_type))
            parts = self.ins(nne.AndOp(parts, self.int_full((1 << wi) - 1, parts)))
        shifts = self.ins(nn.MulOp(self.ins(nns.IotaOp(TensorType(wide_type, shape), len(shape) - 1)),
                                   self.int_full(wi, parts)))
        placed = self.ins(nne.ShiftLeftOp(parts, shifts))
        joined = self.pairwise_reduce(placed, self.int_full(0, placed), [len(shape) - 1],
                                      self.combiner("stablehlo.or", False))
        return [self._from_int(joined, target)]

    def on_reduce_precision(self, op: ReducePrecisionOp) -> Sequence[SSAValue]:
        x = op.operand
        e = _tensor(x).element_type
        exponent, mantissa = op.exponent_bits.value.data, op.mantissa_bits.value.data
        if not isinstance(e, AnyFloat) or type(e) not in FLOAT_FIELDS or exponent < 1 or mantissa < 0:
            raise CompileError.at(op, f"convert-stablehlo: reduce_precision of {e} to e{exponent}m{mantissa} is not "
                                      "supported (a float with at least one exponent bit is)")
        src_exponent, src_mantissa = FLOAT_FIELDS[type(e)]
        bits = self._as_int(self.ins(nne.StopGradientOp(x)))  # the rounding has no gradient: _passing_gradient's
        width = _width(e)

        def full(value: int) -> SSAValue:
            return self.int_full(value, bits)

        if mantissa < src_mantissa:
            shift = src_mantissa - mantissa
            last = 1 << shift
            kept = self.ins(nne.AndOp(self.ins(nne.ShiftRightLogicalOp(bits, full(shift))), full(1)))
            bias = self.ins(nn.AddOp(kept, full((last >> 1) - 1)))
            bits = self.ins(nne.AndOp(self.ins(nn.AddOp(bits, bias)), full(~(last - 1))))
        if exponent < src_exponent:
            exponent_mask = ((1 << src_exponent) - 1) << src_mantissa
            bias, reduced_bias = (1 << (src_exponent - 1)) - 1, (1 << (exponent - 1)) - 1
            field = self.ins(nne.AndOp(bits, full(exponent_mask)))
            over = self.ins(nne.CompareOp(field, full((bias + reduced_bias) << src_mantissa), "GT"))
            under = self.ins(nne.CompareOp(field, full((bias - reduced_bias) << src_mantissa), "LE"))
            signed_zero = self.ins(nne.AndOp(bits, full(1 << (width - 1))))
            signed_inf = self.ins(nne.OrOp(signed_zero, full(exponent_mask)))
            bits = self.ins(nne.SelectOp(over, signed_inf, bits))
            bits = self.ins(nne.SelectOp(under, signed_zero, bits))
        result = self._from_int(bits, e)
        nan = self.ins(nne.CompareOp(x, x, "NE"))
        keep = self.ins(nne.StopGradientOp(x)) if mantissa > 0 else self.ins(nn.FullOp(FloatAttr(float("inf"), e), []))
        result = self.ins(nne.SelectOp(nan, keep, result))
        return [self._passing_gradient(x, result)]

    def _passing_gradient(self, x: SSAValue, rounded: SSAValue) -> SSAValue:
        """`rounded` (a rounding of `x` computed without a gradient) with `x`'s gradient passed through
        unchanged where `rounded` is finite (so `x` is) and not zero: rounded + (x - stop_gradient(x)), an
        exact 0 added there (elsewhere `rounded` itself, which inf - inf or -0.0 + 0.0 would change)."""
        e = _tensor(x).element_type
        zero = self.ins(nn.FullOp(FloatAttr(0.0, e), []))  # type: ignore[arg-type]
        finite = self.ins(nne.CompareOp(self.ins(nn.SubOp(rounded, rounded)), zero, "EQ"))
        nonzero = self.ins(nne.CompareOp(rounded, zero, "NE"))
        through = self.ins(nn.AddOp(rounded, self.ins(nn.SubOp(x, self.ins(nne.StopGradientOp(x))))))
        return self.ins(nne.SelectOp(self.ins(nne.AndOp(finite, nonzero)), through, rounded))
