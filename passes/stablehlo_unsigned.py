"""Unsigned integers in `convert-stablehlo`.

nn computes with signless integers, so before the conversion
`make_signless` retypes every `uiN` value of a function (arguments, results,
block arguments of regions, op results, constants) to the `iN` of the same
bits, remembering which operands and results of each stablehlo op were
unsigned. The converter then builds an op of unsigned operands or results
as `unsigned_form` says: the ops whose result bits do not depend on the sign
(`SIGN_AGNOSTIC`: add, multiply, bitwise ops and shifts, shapes, indexing,
control flow, ...) convert as the signless ones; compare, maximum, minimum,
clamp, divide, remainder and convert build the unsigned form
(`dialects.nn_unsigned_builders`, shared with the ONNX importer); any other
op of unsigned operands (an index operand, a reduction by maximum, a
sort, ...) is a `CompileError` naming it. The function's signature becomes
signless too: its callers pass and receive the bits (`numpy` `uintN` arrays
viewed as `intN`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FunctionType, IntegerType, Signedness, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import Rewriter

from dfc.dialects import stablehlo as shlo
from dfc.dialects.diagnostics import CompileError
from dfc.dialects.nn_unsigned_builders import UnsignedArith

Flags = tuple[tuple[bool, ...], tuple[bool, ...]]
"""Which operands and which results of an op were unsigned."""

SIGN_AGNOSTIC = frozenset({
    "add", "subtract", "multiply", "negate", "and", "or", "xor", "not", "shift_left", "shift_right_arithmetic",
    "shift_right_logical", "popcnt", "count_leading_zeros", "constant", "iota", "broadcast_in_dim", "reshape",
    "transpose", "reverse", "slice", "concatenate", "pad", "select", "optimization_barrier", "bitcast_convert",
    "while", "if", "case", "map", "get_dimension_size", "dynamic_iota", "dynamic_reshape",
    "dynamic_broadcast_in_dim",
})
"""Ops whose result bits are the same for signed and unsigned operands (shifts read the bits, as the
spec's interpreter does)."""

INDEX_OPERANDS = {"dynamic_slice": 1, "dynamic_update_slice": 2, "gather": 1, "scatter": 1}
"""Ops that read indices from their operands from this position on; those must not be unsigned."""

UNSIGNED_IN_HANDLER = frozenset({"reduce", "mulhi", "power", "dot_general", "sort"})
"""Ops whose own conversion reads `unsigned_ops` (a reduction combines by maximum or minimum by value,
`chlo.mulhi` multiplies unsigned halves, an unsigned exponent is never negative, dot_general widens
unsigned operands by their values, sort orders by an unsigned key's compare)."""


def _is_unsigned(t: Attribute) -> bool:
    e = t.element_type if isinstance(t, TensorType) else t
    return isinstance(e, IntegerType) and e.signedness.data != Signedness.SIGNLESS


def _signless(t: Attribute) -> Attribute:
    if isinstance(t, TensorType) and _is_unsigned(t):
        return TensorType(IntegerType(t.element_type.width.data), t.get_shape())
    if isinstance(t, IntegerType) and _is_unsigned(t):
        return IntegerType(t.width.data)
    return t


def _signless_constant(value: DenseIntOrFPElementsAttr) -> DenseIntOrFPElementsAttr:
    """`value`'s elements as the signless integers of the same bits."""
    bits = value.get_element_type().width.data
    half = 1 << (bits - 1)
    wrapped = [(int(v) + half) % (2 * half) - half for v in value.get_values()]
    return DenseIntOrFPElementsAttr.from_list(_signless(value.type), wrapped)


def make_signless(f: func.FuncOp) -> dict[Operation, Flags]:
    """Retype `f`'s signed and unsigned integers (`siN`, `uiN`) as signless ones of the same bits; the
    unsigned operands and results of each op that had one."""
    flags: dict[Operation, Flags] = {}
    for op in f.walk():
        operands = tuple(_is_unsigned(v.type) for v in op.operands)
        results = tuple(_is_unsigned(v.type) for v in op.results)
        if any(operands) or any(results):
            flags[op] = (operands, results)
    for op in f.walk():
        for region in op.regions:
            for block in region.blocks:
                for arg in list(block.args):
                    if _signless(arg.type) != arg.type:
                        Rewriter.replace_value_with_new_type(arg, _signless(arg.type))
        for result in list(op.results):
            if _signless(result.type) != result.type:
                Rewriter.replace_value_with_new_type(result, _signless(result.type))
        if isinstance(op, shlo.ConstantOp) and _signless(op.value.type) != op.value.type:
            op.value = _signless_constant(op.value)
    f.function_type = FunctionType.from_lists([_signless(t) for t in f.function_type.inputs.data],
                                              [_signless(t) for t in f.function_type.outputs.data])
    return flags


class UnsignedConversions(UnsignedArith):
    """The unsigned forms of the sign-sensitive stablehlo ops (`as_unsigned_<op>`, given which operands
    and results were unsigned), mixed into the converter; `unsigned_ops` is what `make_signless` returned."""

    unsigned_ops: dict[Operation, Flags]

    def unsigned_form(self, op: Operation) -> Sequence[SSAValue] | None:
        """`op` converted for its unsigned operands or results, or None where the signless conversion is
        the same (no unsigned value, a sign-agnostic op); a `CompileError` at `op` where there is none."""
        flags = self.unsigned_ops.get(op)
        if flags is None:
            return None
        operands, results = flags
        short = op.name.split(".", 1)[1]
        if short in INDEX_OPERANDS:
            if any(operands[INDEX_OPERANDS[short]:]):
                raise CompileError.at(op, f"convert-stablehlo: '{op.name}' with unsigned indices is not supported")
            return None
        handler = getattr(self, f"as_unsigned_{short}", None)
        if handler is not None:
            return handler(op, operands, results)
        if short in SIGN_AGNOSTIC or short in UNSIGNED_IN_HANDLER:
            return None
        raise CompileError.at(op, f"convert-stablehlo: '{op.name}' of unsigned integers is not supported")

    def as_unsigned_compare(self, op: shlo.CompareOp, *_: tuple[bool, ...]) -> Sequence[SSAValue]:
        return [self.unsigned_compare(op.lhs, op.rhs, op.comparison_direction.data)]

    def as_unsigned_maximum(self, op: shlo.BinaryOp, *_: tuple[bool, ...]) -> Sequence[SSAValue]:
        return [self.unsigned_extreme(op.lhs, op.rhs, larger=True)]

    def as_unsigned_minimum(self, op: shlo.BinaryOp, *_: tuple[bool, ...]) -> Sequence[SSAValue]:
        return [self.unsigned_extreme(op.lhs, op.rhs, larger=False)]

    def as_unsigned_clamp(self, op: shlo.ClampOp, *_: tuple[bool, ...]) -> Sequence[SSAValue]:
        """min(max(operand, min), max), as the spec defines clamp."""
        low = self.unsigned_extreme(op.operand, op.min, larger=True)
        return [self.unsigned_extreme(low, op.max, larger=False)]

    def as_unsigned_divide(self, op: shlo.BinaryOp, *_: tuple[bool, ...]) -> Sequence[SSAValue]:
        return [self.unsigned_divide(op.lhs, op.rhs)]

    def as_unsigned_remainder(self, op: shlo.BinaryOp, *_: tuple[bool, ...]) -> Sequence[SSAValue]:
        return [self.unsigned_remainder(op.lhs, op.rhs)]

    def as_unsigned_convert(self, op: shlo.ConvertOp, operands: tuple[bool, ...],
                            results: tuple[bool, ...]) -> Sequence[SSAValue]:
        assert isinstance(op.result.type, TensorType)
        return [self.cast(op.operand, operands[0], op.result.type.element_type, results[0])]
