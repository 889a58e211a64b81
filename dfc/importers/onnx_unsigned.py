"""ONNX's unsigned integers (uint8/16/32/64) in the importer.

nn has signless integers only, so a uintN tensor is the iN tensor of the same
bits (graph inputs and outputs cross as those bits: `signless`, and
`OnnxFunction` views them back), and the importer remembers which ONNX values
are unsigned. Where the bits of the result do not depend on the sign (add,
sub, mul, equality, bitwise ops, the shape and indexing ops:
`SIGN_AGNOSTIC`) the signed op is the unsigned one; the ops whose results
differ build the unsigned form (`UNSIGNED_AWARE`): order comparisons flip the
sign bit first, Max/Min/Clip select by them, Div/Mod divide the zero-extended
values (uint64: Hacker's Delight's division by halves), Cast zero-extends,
BitShift shifts right logically. Any other operator of unsigned operands is
refused, naming it."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import AnyFloat, IntegerAttr, IntegerType, i64
from xdsl.ir import SSAValue

from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.importers.narrow_formats import E8M0, FLOAT_FORMATS, INT_FORMATS
from dfc.importers.onnx_common import NodeError, tensor_of

SIGN_AGNOSTIC = frozenset({
    "Add", "Sub", "Mul", "Neg", "Equal", "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose",
    "Concat", "Slice", "Gather", "GatherElements", "GatherND", "ScatterND", "ScatterElements", "Scatter", "Expand", "Tile", "Split", "Pad", "Where", "And",
    "Or", "Xor", "Not", "Trilu", "DepthToSpace", "SpaceToDepth", "Sum", "CumSum", "CumProd", "ReduceProd",
    "Dropout", "Shape", "Size", "EyeLike", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot",
})
"""Operators whose result bits are the same for signed and unsigned operands."""

UNSIGNED_AWARE = frozenset({
    "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Max", "Min", "Clip", "Div", "Mod", "Cast", "CastLike",
    "BitShift", "ArgMax", "ArgMin", "Abs", "TopK", "Pow", "QuantizeLinear", "DequantizeLinear",
    "MatMulInteger", "QLinearMatMul", "ConvInteger", "QLinearConv",
})
"""Operators with an unsigned form here."""


def signless(array: np.ndarray) -> np.ndarray:
    """An unsigned integer array as the signed integers of the same bits (how dfc passes ONNX's uintN), a
    narrow format's as the int8 of its codes (`narrow_formats`)."""
    array = np.asarray(array)
    if array.dtype.name in INT_FORMATS:
        return array.astype(np.int8)
    if array.dtype.name in FLOAT_FORMATS or array.dtype.name == E8M0:
        return array.view(np.int8)
    return array.view(f"int{array.dtype.itemsize * 8}") if array.dtype.kind == "u" else array


def with_onnx_dtype(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A result of dfc (signless bits, narrow codes) as the ONNX output's dtype (uintN from intN)."""
    array = np.asarray(array)
    dtype = np.dtype(dtype)
    if dtype.name in INT_FORMATS and array.dtype == np.int8:
        return array.astype(dtype)
    if (dtype.name in FLOAT_FORMATS or dtype.name == E8M0) and array.dtype == np.int8:
        return array.view(dtype)
    return array.view(dtype) if dtype.kind == "u" and array.dtype.itemsize == dtype.itemsize else array


class UnsignedOps:
    """Unsigned forms of the sign-sensitive operators, mixed into `OnnxImporter`; `unsigned_inputs` holds
    the indices of the current node's unsigned inputs and `unsigned_outputs`, when a handler sets it, the
    indices of its unsigned outputs."""

    unsigned: set[str]
    unsigned_inputs: set[int]
    unsigned_outputs: set[int] | None

    def is_unsigned(self, name: str) -> bool:
        return bool(name) and (name in self.unsigned or (name in self.consts and self.consts[name].dtype.kind == "u"))

    def _width(self, x: SSAValue) -> int:
        e = tensor_of(x).element_type
        assert isinstance(e, IntegerType)
        return e.width.data

    def _int(self, value: int, like: SSAValue) -> SSAValue:
        e = tensor_of(like).element_type
        bits = self._width(like)
        value = (value + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))  # as the signed value of the bits
        return self.ins(nn.FullOp(IntegerAttr(value, e), []))  # type: ignore[arg-type]

    def zero_extended(self, x: SSAValue) -> SSAValue:
        """An unsigned iN (N < 64) as the i64 of its value."""
        wide = self.ins(nne.ConvertOp(x, i64))
        return self.ins(nne.AndOp(wide, self.ins(nn.FullOp(IntegerAttr((1 << self._width(x)) - 1, i64), []))))

    def unsigned_compare(self, a: SSAValue, b: SSAValue, direction: str) -> SSAValue:
        """`a (direction) b` of unsigned bits: a signed compare after flipping the sign bits."""
        if direction in ("EQ", "NE"):
            return self.ins(nne.CompareOp(a, b, direction))
        flip = self._int(1 << (self._width(a) - 1), a)
        return self.ins(nne.CompareOp(self.ins(nne.XorOp(a, flip)), self.ins(nne.XorOp(b, flip)), direction))

    def unsigned_extreme(self, a: SSAValue, b: SSAValue, larger: bool) -> SSAValue:
        return self.ins(nne.SelectOp(self.unsigned_compare(a, b, "GT" if larger else "LT"), a, b))

    def unsigned_divide(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """floor(a / b) of unsigned bits: of the zero-extended values below 64 bits; for 64 bits, twice
        (a >> 1) / b (signed: both below 2^63), plus one where the remainder is still >= b; a divisor of
        2^63 or more gives a >= b."""
        bits = self._width(a)
        e = tensor_of(a).element_type
        if bits < 64:
            return self.ins(nne.ConvertOp(self.ins(nn.DivOp(self.zero_extended(a), self.zero_extended(b))), e))
        one = self._int(1, a)
        half = self.ins(nne.ShiftRightLogicalOp(a, one))
        q = self.ins(nne.ShiftLeftOp(self.ins(nn.DivOp(half, b)), one))
        r = self.ins(nn.SubOp(a, self.ins(nn.MulOp(q, b))))
        q = self.ins(nne.SelectOp(self.unsigned_compare(r, b, "GE"), self.ins(nn.AddOp(q, one)), q))
        big = self.ins(nne.CompareOp(b, self._int(0, b), "LT"))
        at_least = self.ins(nne.ConvertOp(self.unsigned_compare(a, b, "GE"), e))
        return self.ins(nne.SelectOp(big, at_least, q))

    def unsigned_to_float(self, x: SSAValue, e: Any) -> SSAValue:
        """The value of unsigned bits as the float type `e`: zero-extended below 64 bits; for 64 bits,
        twice the value halved (its lowest bit kept for the rounding) where the top bit is set."""
        if self._width(x) < 64:
            return self.ins(nne.ConvertOp(self.zero_extended(x), e))
        one = self._int(1, x)
        halved = self.ins(nne.OrOp(self.ins(nne.ShiftRightLogicalOp(x, one)), self.ins(nne.AndOp(x, one))))
        twice = self.ins(nn.MulOp(self.ins(nne.ConvertOp(halved, e)), self.ins(nn.FullOp(
            self._float_attr(2.0, e), []))))
        top = self.ins(nne.CompareOp(x, self._int(0, x), "LT"))
        return self.ins(nne.SelectOp(top, twice, self.ins(nne.ConvertOp(x, e))))

    @staticmethod
    def _float_attr(value: float, e: Any) -> Any:
        from xdsl.dialects.builtin import FloatAttr

        return FloatAttr(value, e)

    def float_to_unsigned(self, x: SSAValue, e: Any) -> SSAValue:
        """A float's value (in range) as the bits of an unsigned iN: through i64, values of 2^63 or more
        (64 bits) as the value less 2^63 with the top bit set."""
        bits = e.width.data
        direct = self.ins(nne.ConvertOp(x, i64))
        if bits < 64:
            return self.ins(nne.ConvertOp(direct, e))
        limit = self.ins(nn.FullOp(self._float_attr(2.0 ** 63, tensor_of(x).element_type), []))
        high = self.ins(nne.ConvertOp(self.ins(nn.SubOp(x, limit)), i64))
        high = self.ins(nne.XorOp(high, self.ins(nn.FullOp(IntegerAttr(-(1 << 63), i64), []))))
        return self.ins(nne.SelectOp(self.ins(nne.CompareOp(x, limit, "GE")), high, direct))

    def cast(self, x: SSAValue, source_unsigned: bool, e: Any, target_unsigned: bool) -> SSAValue:
        """`x` converted to element type `e` with ONNX's Cast semantics for unsigned sources or targets."""
        source = tensor_of(x).element_type
        if source == e:
            return x
        if source_unsigned and isinstance(e, AnyFloat):
            return self.unsigned_to_float(x, e)
        if source_unsigned and isinstance(e, IntegerType) and e.width.data > self._width(x):
            return self.ins(nne.ConvertOp(self.zero_extended(x), e))
        if target_unsigned and isinstance(source, AnyFloat):
            return self.float_to_unsigned(x, e)
        return self.ins(nne.ConvertOp(x, e))

    def op_BitShift(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """x << y or x >> y (`direction` LEFT or RIGHT): logical for unsigned, arithmetic for signed x; a
        shift by the bit width or more (or negative) gives 0, or the sign fill shifting a signed x right."""
        x, y = (self.value(n) for n in node.input)
        ops = {"LEFT": (nne.ShiftLeftOp,) * 2, "RIGHT": (nne.ShiftRightLogicalOp, nne.ShiftRightArithmeticOp)}
        if attrs["direction"] not in ops:
            raise NodeError(f"BitShift direction '{attrs['direction']}'")
        return [self.ins(ops[attrs["direction"]][0 if self.unsigned_inputs else 1](x, y))]

    def op_Abs(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x = self.value(node.input[0])
        return [x if self.unsigned_inputs else self.ins(nne.AbsOp(x))]
