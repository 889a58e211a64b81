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
from xdsl.ir import SSAValue

from dfc.dialects import nn_elementwise as nne
from dfc.dialects.nn_unsigned_builders import UnsignedArith
from dfc.importers.narrow_formats import E8M0, FLOAT_FORMATS, INT_FORMATS
from dfc.importers.onnx_common import NodeError

SIGN_AGNOSTIC = frozenset({
    "Add", "Sub", "Mul", "Neg", "Equal", "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose",
    "Concat", "Slice", "Gather", "GatherElements", "GatherND", "ScatterND", "ScatterElements", "Scatter", "Expand", "Tile", "Split", "Pad", "Where", "And",
    "Or", "Xor", "Not", "Trilu", "DepthToSpace", "SpaceToDepth", "Sum", "CumSum", "CumProd", "ReduceProd",
    "Dropout", "Shape", "Size", "EyeLike", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot", "CenterCropPad",
    "Col2Im",
})
"""Operators whose result bits are the same for signed and unsigned operands."""

UNSIGNED_AWARE = frozenset({
    "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Max", "Min", "Clip", "Div", "Mod", "Cast", "CastLike",
    "BitShift", "ArgMax", "ArgMin", "Abs", "TopK", "Pow", "QuantizeLinear", "DequantizeLinear",
    "MatMulInteger", "QLinearMatMul", "ConvInteger", "QLinearConv", "MaxPool", "BitCast",
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


class UnsignedOps(UnsignedArith):
    """Unsigned forms of the sign-sensitive operators (on `UnsignedArith`, shared with `convert-stablehlo`),
    mixed into `OnnxImporter`; `unsigned_inputs` holds
    the indices of the current node's unsigned inputs and `unsigned_outputs`, when a handler sets it, the
    indices of its unsigned outputs."""

    unsigned: set[str]
    unsigned_inputs: set[int]
    unsigned_outputs: set[int] | None

    def is_unsigned(self, name: str) -> bool:
        return bool(name) and (name in self.unsigned or (name in self.consts and self.consts[name].dtype.kind == "u"))

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
