"""Unsigned integer arithmetic built from nn ops on signless integers.

nn has signless integers only: an unsigned uintN value is the iN of the same
bits. Where the result bits do not depend on the sign (add, sub, mul,
equality, bitwise ops, shapes and indexing) the signless op is the unsigned
one; `UnsignedArith` builds the others: order comparisons flip the sign bit
first, max/min select by them, division divides the zero-extended values
(64 bits: Hacker's Delight's division by halves), conversions zero-extend.
The ONNX importer (`dfc.importers.onnx_unsigned`) and `convert-stablehlo`
(`passes.stablehlo_unsigned`) share it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, IntegerType, TensorType, i64
from xdsl.ir import Operation, SSAValue

from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne


def int_width(x: SSAValue) -> int:
    """The bit width of the integer tensor `x`'s elements."""
    assert isinstance(x.type, TensorType) and isinstance(x.type.element_type, IntegerType)
    return x.type.element_type.width.data


class UnsignedArith:
    """Mixin: the unsigned forms of the sign-sensitive integer ops; `ins(op)` inserts an op and
    returns its first result."""

    ins: Callable[[Operation], SSAValue]

    def int_full(self, value: int, like: SSAValue) -> SSAValue:
        """A scalar of `like`'s integer element type holding the bits of `value` (taken modulo 2^N)."""
        assert isinstance(like.type, TensorType)
        bits = int_width(like)
        value = (value + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))  # as the signed value of the bits
        return self.ins(nn.FullOp(IntegerAttr(value, like.type.element_type), []))  # type: ignore[arg-type]

    def zero_extended(self, x: SSAValue) -> SSAValue:
        """An unsigned iN (N < 64) as the i64 of its value."""
        wide = self.ins(nne.ConvertOp(x, i64))
        return self.ins(nne.AndOp(wide, self.ins(nn.FullOp(IntegerAttr((1 << int_width(x)) - 1, i64), []))))

    def unsigned_compare(self, a: SSAValue, b: SSAValue, direction: str) -> SSAValue:
        """`a (direction) b` of unsigned bits: a signed compare after flipping the sign bits."""
        if direction in ("EQ", "NE"):
            return self.ins(nne.CompareOp(a, b, direction))
        flip = self.int_full(1 << (int_width(a) - 1), a)
        return self.ins(nne.CompareOp(self.ins(nne.XorOp(a, flip)), self.ins(nne.XorOp(b, flip)), direction))

    def unsigned_extreme(self, a: SSAValue, b: SSAValue, larger: bool) -> SSAValue:
        """The larger (or smaller) of the unsigned `a` and `b`, elementwise."""
        return self.ins(nne.SelectOp(self.unsigned_compare(a, b, "GT" if larger else "LT"), a, b))

    def unsigned_divide(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """floor(a / b) of unsigned bits: of the zero-extended values below 64 bits; for 64 bits, twice
        (a >> 1) / b (signed: both below 2^63), plus one where the remainder is still >= b; a divisor of
        2^63 or more gives a >= b."""
        bits = int_width(a)
        assert isinstance(a.type, TensorType)
        e = a.type.element_type
        if bits < 64:
            return self.ins(nne.ConvertOp(self.ins(nn.DivOp(self.zero_extended(a), self.zero_extended(b))), e))
        one = self.int_full(1, a)
        half = self.ins(nne.ShiftRightLogicalOp(a, one))
        q = self.ins(nne.ShiftLeftOp(self.ins(nn.DivOp(half, b)), one))
        r = self.ins(nn.SubOp(a, self.ins(nn.MulOp(q, b))))
        q = self.ins(nne.SelectOp(self.unsigned_compare(r, b, "GE"), self.ins(nn.AddOp(q, one)), q))
        big = self.ins(nne.CompareOp(b, self.int_full(0, b), "LT"))
        at_least = self.ins(nne.ConvertOp(self.unsigned_compare(a, b, "GE"), e))
        return self.ins(nne.SelectOp(big, at_least, q))

    def unsigned_remainder(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """a - floor(a / b) * b of unsigned bits."""
        return self.ins(nn.SubOp(a, self.ins(nn.MulOp(self.unsigned_divide(a, b), b))))

    def unsigned_to_float(self, x: SSAValue, e: Any) -> SSAValue:
        """The value of unsigned bits as the float type `e`: zero-extended below 64 bits; for 64 bits,
        twice the value halved (its lowest bit kept for the rounding) where the top bit is set."""
        if int_width(x) < 64:
            return self.ins(nne.ConvertOp(self.zero_extended(x), e))
        one = self.int_full(1, x)
        halved = self.ins(nne.OrOp(self.ins(nne.ShiftRightLogicalOp(x, one)), self.ins(nne.AndOp(x, one))))
        twice = self.ins(nn.MulOp(self.ins(nne.ConvertOp(halved, e)), self.ins(nn.FullOp(FloatAttr(2.0, e), []))))
        top = self.ins(nne.CompareOp(x, self.int_full(0, x), "LT"))
        return self.ins(nne.SelectOp(top, twice, self.ins(nne.ConvertOp(x, e))))

    def float_to_unsigned(self, x: SSAValue, e: Any) -> SSAValue:
        """A float's value (in range) as the bits of an unsigned iN: through i64, values of 2^63 or more
        (64 bits) as the value less 2^63 with the top bit set."""
        bits = e.width.data
        direct = self.ins(nne.ConvertOp(x, i64))
        if bits < 64:
            return self.ins(nne.ConvertOp(direct, e))
        assert isinstance(x.type, TensorType)
        limit = self.ins(nn.FullOp(FloatAttr(2.0 ** 63, x.type.element_type), []))  # type: ignore[arg-type]
        high = self.ins(nne.ConvertOp(self.ins(nn.SubOp(x, limit)), i64))
        high = self.ins(nne.XorOp(high, self.ins(nn.FullOp(IntegerAttr(-(1 << 63), i64), []))))
        return self.ins(nne.SelectOp(self.ins(nne.CompareOp(x, limit, "GE")), high, direct))

    def cast(self, x: SSAValue, source_unsigned: bool, e: Any, target_unsigned: bool) -> SSAValue:
        """`x` converted to element type `e` by value where the source or the target is unsigned: an
        unsigned source zero-extends (or becomes the float of its value), a float becomes the unsigned
        bits of its value; otherwise (narrowing, same width) the signless conversion."""
        assert isinstance(x.type, TensorType)
        source = x.type.element_type
        if source == e:
            return x
        if source_unsigned and isinstance(e, AnyFloat):
            return self.unsigned_to_float(x, e)
        if source_unsigned and isinstance(e, IntegerType) and e.width.data > int_width(x):
            return self.ins(nne.ConvertOp(self.zero_extended(x), e))
        if target_unsigned and isinstance(source, AnyFloat):
            return self.float_to_unsigned(x, e)
        return self.ins(nne.ConvertOp(x, e))
