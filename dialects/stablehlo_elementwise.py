"""The stablehlo dialect's elementwise ops: the unary and binary ones (generated
from their names), convert, select, clamp, compare, and complex, real and imag
(the complex numbers' parts)."""

from __future__ import annotations

from xdsl.dialects.builtin import (
    ComplexType,
    TensorType,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)
from xdsl.parser import Parser

from dfc.dialects.stablehlo_attrs import (
    ComparisonDirection,
    ComparisonDirectionAttr,
    ComparisonType,
    ComparisonTypeAttr,
)
from dfc.dialects.stablehlo_base import (
    StableHLOOp,
    parse_operand_list,
    resolve_operands,
)


class UnaryOp(StableHLOOp):
    operand = operand_def(TensorType)
    result = result_def(TensorType)


class BinaryOp(StableHLOOp):
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)


def _unary(op_name: str) -> type[UnaryOp]:
    return irdl_op_definition(type(f"{op_name.title().replace('_', '')}Op", (UnaryOp,), {"name": f"stablehlo.{op_name}"}))


def _binary(op_name: str) -> type[BinaryOp]:
    return irdl_op_definition(type(f"{op_name.title().replace('_', '')}Op", (BinaryOp,), {"name": f"stablehlo.{op_name}"}))


UNARY_NAMES = (
    "abs", "cbrt", "ceil", "cosine", "exponential", "exponential_minus_one", "floor",
    "is_finite", "log", "log_plus_one", "logistic", "negate", "not", "round_nearest_afz",
    "round_nearest_even", "rsqrt", "sign", "sine", "sqrt", "tan", "tanh",
)
BINARY_NAMES = (
    "add", "subtract", "multiply", "divide", "remainder", "power", "maximum", "minimum", "atan2",
    "and", "or", "xor", "shift_left", "shift_right_arithmetic", "shift_right_logical",
)
UNARY_OPS = {n: _unary(n) for n in UNARY_NAMES}
BINARY_OPS = {n: _binary(n) for n in BINARY_NAMES}


@irdl_op_definition
class ConvertOp(UnaryOp):
    """Elementwise conversion to the result's element type."""

    name = "stablehlo.convert"


@irdl_op_definition
class SelectOp(StableHLOOp):
    name = "stablehlo.select"
    pred = operand_def(TensorType)
    on_true = operand_def(TensorType)
    on_false = operand_def(TensorType)
    result = result_def(TensorType)


@irdl_op_definition
class ClampOp(StableHLOOp):
    name = "stablehlo.clamp"
    min = operand_def(TensorType)
    operand = operand_def(TensorType)
    max = operand_def(TensorType)
    result = result_def(TensorType)


@irdl_op_definition
class CompareOp(StableHLOOp):
    """Pretty form: `stablehlo.compare LT, %a, %b, SIGNED : (...) -> ...`."""

    name = "stablehlo.compare"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    comparison_direction = prop_def(ComparisonDirectionAttr)
    compare_type = opt_prop_def(ComparisonTypeAttr)
    result = result_def(TensorType)

    @classmethod
    def parse(cls, parser: Parser):
        direction = parser.parse_str_enum(ComparisonDirection)
        parser.parse_punctuation(",")
        operands, more = parse_operand_list(parser)
        properties: dict[str, Attribute] = {"comparison_direction": ComparisonDirectionAttr(direction)}
        if more:
            properties["compare_type"] = ComparisonTypeAttr(parser.parse_str_enum(ComparisonType))
        return cls._finish(parser, operands, properties)


def _parts(t: Attribute) -> Attribute:
    """The tensor type of the real parts of complex tensor type `t` (`t` when it is not complex)."""
    if isinstance(t, TensorType) and isinstance(t.element_type, ComplexType):
        return TensorType(t.element_type.element_type, t.get_shape())
    return t


class _PartsOp(StableHLOOp):
    """Pretty form `%a(, %b) : T` names the complex type only (the result of complex, the operand of
    real and imag), as MLIR's `ComplexOpType` does; the functional form gives every type."""

    @classmethod
    def parse(cls, parser: Parser):
        operands, _ = parse_operand_list(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        if parser._current_token.text == "(":  # pyright: ignore[reportPrivateUsage]
            ft = parser.parse_function_type()
            operand_types, result_types = list(ft.inputs.data), list(ft.outputs.data)
        else:
            t = parser.parse_type()
            parts = _parts(t)
            operand_types, result_types = ([parts] * len(operands), [t]) if cls is ComplexOp else ([t], [parts])
        values = resolve_operands(parser, operands, operand_types)
        return cls.build(operands=values, result_types=result_types, attributes=attributes)


@irdl_op_definition
class ComplexOp(_PartsOp):
    """The complex numbers of real parts `lhs` and imaginary parts `rhs`."""

    name = "stablehlo.complex"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)


@irdl_op_definition
class RealOp(_PartsOp):
    """The real part of each element (a real operand is its own real part)."""

    name = "stablehlo.real"
    operand = operand_def(TensorType)
    result = result_def(TensorType)


@irdl_op_definition
class ImagOp(_PartsOp):
    """The imaginary part of each element (0 for a real operand)."""

    name = "stablehlo.imag"
    operand = operand_def(TensorType)
    result = result_def(TensorType)
