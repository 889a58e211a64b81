"""Elementwise nn ops beyond add/sub/mul/div: StableHLO's float unary and
binary ops, `clamp`, `compare`, `select`, `convert` and the bitwise
`and`, `or`, `xor`, `not` and shifts on booleans and integers.

Semantics follow the StableHLO spec. Binary, ternary and comparison ops
broadcast their operands like numpy (as `nn.add` does). NaN propagates
through `maximum`, `minimum` and `clamp`; `compare` is ordered except `NE`
(NaN != NaN holds). StableHLO's `exponential`, `log`, `sqrt`, `tanh` and
`logistic` are `nn.exp`, `nn.log`, `nn.sqrt`, `nn.tanh` and `nn.sigmoid`.
The expansions are in `dialects.nn_expand_elementwise`, the backward rules
in `passes.autodiff.rules_elementwise`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
    i1,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from dfc.dialects.nn_base import (
    ArithmeticBinaryOp,
    ElementwiseBinaryOp,
    ElementwiseUnaryOp,
    External,
    NNOp,
    _numeric_tensor,
    _static,
    broadcast_shapes,
)

COMPARE_DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")

CONVERT_WIDTHS = (1, 8, 16, 32, 64)
"""Integer widths `nn.convert` takes and produces (signless; i1 is boolean)."""


def _broadcast(types: Sequence[TensorType], names: Sequence[str]) -> tuple[int, ...]:
    shape: tuple[int, ...] = ()
    for t in types:
        try:
            shape = broadcast_shapes(shape, t.get_shape())
        except ValueError:
            shapes = ", ".join(f"{list(t.get_shape())}" for t in types)
            raise VerifyException(f"shapes of {', '.join(names)} ({shapes}) do not broadcast") from None
    return shape


class NumericUnaryOp(ElementwiseUnaryOp):
    """A function applied to each element of a float or signless integer tensor."""

    def __init__(self, input: SSAValue):
        super(ElementwiseUnaryOp, self).__init__(operands=[input], result_types=[_numeric_tensor(input.type, "input")])

    def infer_type(self) -> TensorType:
        return _numeric_tensor(self.input.type, "input")


@irdl_op_definition
class AbsOp(NumericUnaryOp):
    """Elementwise `|input|` (floats or signed integers; |MIN| wraps to MIN). Its derivative
    at 0 is 0 (as in PyTorch)."""

    name = "nn.abs"
    EXTERNAL: ClassVar[External] = External(stablehlo="abs", onnx="Abs")


@irdl_op_definition
class SignOp(NumericUnaryOp):
    """Elementwise sign: -1 below 0, 1 above, the input itself at +-0 and NaN (0 for
    integers). Derivative 0."""

    name = "nn.sign"
    EXTERNAL: ClassVar[External] = External(stablehlo="sign", onnx="Sign")


@irdl_op_definition
class FloorOp(ElementwiseUnaryOp):
    """Elementwise round toward -inf. Derivative 0."""

    name = "nn.floor"
    EXTERNAL: ClassVar[External] = External(stablehlo="floor", onnx="Floor")


@irdl_op_definition
class CeilOp(ElementwiseUnaryOp):
    """Elementwise round toward +inf. Derivative 0."""

    name = "nn.ceil"
    EXTERNAL: ClassVar[External] = External(stablehlo="ceil", onnx="Ceil")


@irdl_op_definition
class RoundOp(ElementwiseUnaryOp):
    """Elementwise round to nearest, halfway cases away from zero (StableHLO's
    `round_nearest_afz`, C `round`). Derivative 0."""

    name = "nn.round"
    EXTERNAL: ClassVar[External] = External(stablehlo="round_nearest_afz", onnx="- (Round is half to even)")


@irdl_op_definition
class StopGradientOp(ElementwiseUnaryOp):
    """Elementwise identity whose derivative is 0: no gradient (and no tangent)
    flows through it (JAX's `stop_gradient`, PyTorch's `detach`)."""

    name = "nn.stop_gradient"
    EXTERNAL: ClassVar[External] = External(aten=("detach",))


@irdl_op_definition
class RoundEvenOp(ElementwiseUnaryOp):
    """Elementwise round to nearest, halfway cases to even (IEEE's default,
    StableHLO's `round_nearest_even`, NumPy's `rint`). Derivative 0."""

    name = "nn.round_even"
    EXTERNAL: ClassVar[External] = External(stablehlo="round_nearest_even", onnx="Round", aten=("round",),
                                            numpy=("rint", "round"))


@irdl_op_definition
class Expm1Op(ElementwiseUnaryOp):
    """Elementwise `exp(input) - 1`, accurate near 0."""

    name = "nn.expm1"
    EXTERNAL: ClassVar[External] = External(stablehlo="exponential_minus_one", onnx="-")


@irdl_op_definition
class Log1pOp(ElementwiseUnaryOp):
    """Elementwise `log(1 + input)`, accurate near 0 (NaN below -1)."""

    name = "nn.log1p"
    EXTERNAL: ClassVar[External] = External(stablehlo="log_plus_one", onnx="-")


@irdl_op_definition
class RsqrtOp(ElementwiseUnaryOp):
    """Elementwise `1 / sqrt(input)` (inf at 0, NaN below 0)."""

    name = "nn.rsqrt"
    EXTERNAL: ClassVar[External] = External(stablehlo="rsqrt", onnx="-")


@irdl_op_definition
class CbrtOp(ElementwiseUnaryOp):
    """Elementwise real cube root (negative for negative inputs)."""

    name = "nn.cbrt"
    EXTERNAL: ClassVar[External] = External(stablehlo="cbrt", onnx="-")


@irdl_op_definition
class ErfOp(ElementwiseUnaryOp):
    """Elementwise error function `2/sqrt(pi) * integral_0^input exp(-t^2) dt` (exact GELU uses it).

    For f32 the expansion is a rational approximation within 5e-7 of erf (vectorised); other widths call libm."""

    name = "nn.erf"
    EXTERNAL: ClassVar[External] = External(stablehlo="- (chlo.erf)", onnx="Erf")


@irdl_op_definition
class SineOp(ElementwiseUnaryOp):
    """Elementwise `sin(input)` (radians)."""

    name = "nn.sine"
    EXTERNAL: ClassVar[External] = External(stablehlo="sine", onnx="Sin")


@irdl_op_definition
class CosineOp(ElementwiseUnaryOp):
    """Elementwise `cos(input)` (radians)."""

    name = "nn.cosine"
    EXTERNAL: ClassVar[External] = External(stablehlo="cosine", onnx="Cos")


@irdl_op_definition
class TanOp(ElementwiseUnaryOp):
    """Elementwise `tan(input)` (radians)."""

    name = "nn.tan"
    EXTERNAL: ClassVar[External] = External(stablehlo="tan", onnx="Tan")


@irdl_op_definition
class Atan2Op(ElementwiseBinaryOp):
    """Elementwise `atan2(lhs, rhs)`: the angle of the point (rhs, lhs), in [-pi, pi]."""

    name = "nn.atan2"
    EXTERNAL: ClassVar[External] = External(stablehlo="atan2", onnx="-")


@irdl_op_definition
class PowerOp(ElementwiseBinaryOp):
    """Elementwise `lhs ** rhs` (C `pow`: NaN for a negative base and a non-integer exponent).

    The derivative with respect to `rhs` is `result * log(lhs)`, and 0 where `lhs` is 0 (as in JAX).
    """

    name = "nn.power"
    EXTERNAL: ClassVar[External] = External(stablehlo="power", onnx="Pow")


@irdl_op_definition
class RemainderOp(ArithmeticBinaryOp):
    """Elementwise remainder of `lhs / rhs` with the sign of `lhs` (C `fmod`, StableHLO `remainder`).

    Floats or signed integers; for integers x % 0 = x and x % -1 = 0 (as XLA).
    """

    name = "nn.remainder"
    EXTERNAL: ClassVar[External] = External(stablehlo="remainder", onnx="Mod (fmod = 1)")


@irdl_op_definition
class MaximumOp(ArithmeticBinaryOp):
    """Elementwise maximum (floats or signed integers); NaN if either is NaN. A tie sends half
    the gradient to each operand (as in JAX)."""

    name = "nn.maximum"
    EXTERNAL: ClassVar[External] = External(stablehlo="maximum", onnx="Max (two inputs)")


@irdl_op_definition
class MinimumOp(ArithmeticBinaryOp):
    """Elementwise minimum (floats or signed integers); NaN if either is NaN. A tie sends half
    the gradient to each operand (as in JAX)."""

    name = "nn.minimum"
    EXTERNAL: ClassVar[External] = External(stablehlo="minimum", onnx="Min (two inputs)")


@irdl_op_definition
class ClampOp(NNOp):
    """`minimum(maximum(operand, min), max)` elementwise (StableHLO's `clamp`), the three broadcast like numpy.

    Float or signed integer tensors of one element type; NaN in any operand gives NaN. The gradient of
    `operand` flows where it lies strictly inside the bounds, that of a bound where it
    is strictly the one selected; ties get none (as in JAX).
    """

    name = "nn.clamp"
    EXTERNAL: ClassVar[External] = External(stablehlo="clamp", onnx="Clip")

    min = operand_def(TensorType)
    operand = operand_def(TensorType)
    max = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$min `,` $operand `,` $max attr-dict `:` functional-type(operands, results)"

    def __init__(self, min: SSAValue, operand: SSAValue, max: SSAValue):
        super().__init__(operands=[min, operand, max], result_types=[_clamp_type(min.type, operand.type, max.type)])

    def infer_type(self) -> TensorType:
        return _clamp_type(self.min.type, self.operand.type, self.max.type)


def _clamp_type(lo: Attribute, x: Attribute, hi: Attribute) -> TensorType:
    names = ("min", "operand", "max")
    types = [_numeric_tensor(t, n) for t, n in zip((lo, x, hi), names)]
    if len({t.element_type for t in types}) != 1:
        raise VerifyException(f"element types differ: {', '.join(str(t.element_type) for t in types)}")
    return TensorType(types[1].element_type, _broadcast(types, names))


def _is_integer(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.SIGNLESS


@irdl_op_definition
class CompareOp(NNOp):
    """Elementwise `lhs (direction) rhs` -> i1, `direction` one of EQ, NE, LT, LE, GT, GE.

    Float or signless integer operands (compared as signed) of one element type,
    broadcast like numpy. Float comparisons are false where an operand is NaN,
    except NE, which is true. Syntax:
    `%p = nn.compare %a, %b {direction = "LT"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>`.
    """

    name = "nn.compare"
    EXTERNAL: ClassVar[External] = External(stablehlo="compare", onnx="Equal, Less, LessOrEqual, Greater, GreaterOrEqual")

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    direction = prop_def(StringAttr)
    result = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, direction: str):
        super().__init__(
            operands=[lhs, rhs],
            result_types=[_compare_type(lhs.type, rhs.type)],
            properties={"direction": StringAttr(direction)},
        )

    def infer_type(self) -> TensorType:
        if self.direction.data not in COMPARE_DIRECTIONS:
            raise VerifyException(
                f"direction must be one of {', '.join(COMPARE_DIRECTIONS)}, got '{self.direction.data}'"
            )
        return _compare_type(self.lhs.type, self.rhs.type)


def _compare_type(lhs: Attribute, rhs: Attribute) -> TensorType:
    a, b = _static(lhs, "lhs"), _static(rhs, "rhs")
    if a.element_type != b.element_type:
        raise VerifyException(f"operand element types differ: {a.element_type} and {b.element_type}")
    if not (isinstance(a.element_type, AnyFloat) or _is_integer(a.element_type)):
        raise VerifyException(f"operands must have a float or signless integer element type, got {a}")
    return TensorType(i1, _broadcast([a, b], ("lhs", "rhs")))


@irdl_op_definition
class SelectOp(NNOp):
    """Elementwise `pred ? on_true : on_false`, the three broadcast like numpy.

    `pred` is an i1 tensor; `on_true` and `on_false` share any element type. The
    gradient goes to the selected operand.
    """

    name = "nn.select"
    EXTERNAL: ClassVar[External] = External(stablehlo="select", onnx="Where")

    pred = operand_def(TensorType)
    on_true = operand_def(TensorType)
    on_false = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$pred `,` $on_true `,` $on_false attr-dict `:` functional-type(operands, results)"

    def __init__(self, pred: SSAValue, on_true: SSAValue, on_false: SSAValue):
        super().__init__(
            operands=[pred, on_true, on_false],
            result_types=[_select_type(pred.type, on_true.type, on_false.type)],
        )

    def infer_type(self) -> TensorType:
        return _select_type(self.pred.type, self.on_true.type, self.on_false.type)


def _select_type(pred: Attribute, on_true: Attribute, on_false: Attribute) -> TensorType:
    names = ("pred", "on_true", "on_false")
    types = [_static(t, n) for t, n in zip((pred, on_true, on_false), names)]
    if types[0].element_type != i1:
        raise VerifyException(f"pred must be an i1 tensor, got {types[0]}")
    if types[1].element_type != types[2].element_type:
        raise VerifyException(f"on_true and on_false element types differ: {types[1].element_type} and {types[2].element_type}")
    return TensorType(types[1].element_type, _broadcast(types, names))


def convertible(t: Attribute) -> bool:
    """Whether `nn.convert` takes or produces the element type `t`."""
    if isinstance(t, Float16Type | BFloat16Type | Float32Type | Float64Type):
        return True
    return _is_integer(t) and t.width.data in CONVERT_WIDTHS


@irdl_op_definition
class ConvertOp(NNOp):
    """Elementwise conversion to the result's element type (f16, bf16, f32, f64, i1, i8, i16, i32, i64; integers signed).

    float -> float rounds to nearest; float -> integer rounds toward zero (undefined
    out of range); integer -> integer wraps or sign-extends; i1 converts as 0/1,
    and a conversion to i1 is `input != 0`. Only float -> float passes a gradient.
    """

    name = "nn.convert"
    EXTERNAL: ClassVar[External] = External(stablehlo="convert", onnx="Cast")

    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, element_type: Attribute):
        t = _static(input.type, "input")
        super().__init__(operands=[input], result_types=[TensorType(element_type, t.get_shape())])

    def infer_type(self) -> TensorType:
        t, out = _static(self.input.type, "input"), _static(self.result.type, "result")
        for what, x in (("input", t), ("result", out)):
            if not convertible(x.element_type):
                raise VerifyException(f"{what} element type must be f16, bf16, f32, f64, i1, i8, i16, i32 or i64, "
                                      f"got {x.element_type}")
        return TensorType(out.element_type, t.get_shape())


def _bit_width(t: Attribute) -> int | None:
    """The bits of a `convertible` element type other than i1 (None for i1)."""
    if isinstance(t, Float16Type | BFloat16Type):
        return 16
    if isinstance(t, Float32Type):
        return 32
    if isinstance(t, Float64Type):
        return 64
    return t.width.data if _is_integer(t) and t.width.data > 1 else None  # type: ignore[attr-defined]


@irdl_op_definition
class BitcastConvertOp(NNOp):
    """Each element's bits read as the result's element type, of the same width (f16, bf16, f32, f64, i8,
    i16, i32, i64). No gradient: one of the two types is an integer or both are 16-bit floats."""

    name = "nn.bitcast_convert"
    EXTERNAL: ClassVar[External] = External(stablehlo="bitcast_convert (same width; a handler splits or joins "
                                                      "elements of other widths)", onnx="-")

    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, element_type: Attribute):
        t = _static(input.type, "input")
        super().__init__(operands=[input], result_types=[TensorType(element_type, t.get_shape())])

    def infer_type(self) -> TensorType:
        t, out = _static(self.input.type, "input"), _static(self.result.type, "result")
        widths = [_bit_width(x.element_type) if convertible(x.element_type) else None for x in (t, out)]
        if None in widths or widths[0] != widths[1]:
            raise VerifyException(f"bitcast_convert needs element types of the same width (f16, bf16, f32, f64, "
                                  f"i8, i16, i32, i64), got {t.element_type} and {out.element_type}")
        return TensorType(out.element_type, t.get_shape())


class BitwiseBinaryOp(NNOp):
    """A bitwise op on i1 or signless integer tensors of one element type, broadcast like numpy."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs], result_types=[_bitwise_type(lhs.type, rhs.type)])

    def infer_type(self) -> TensorType:
        return _bitwise_type(self.lhs.type, self.rhs.type)


def _integer_tensor(t: Attribute, what: str) -> TensorType:
    t = _static(t, what)
    if not _is_integer(t.element_type):
        raise VerifyException(f"{what} must have an i1 or signless integer element type, got {t}")
    return t


def _bitwise_type(lhs: Attribute, rhs: Attribute) -> TensorType:
    a, b = _integer_tensor(lhs, "lhs"), _integer_tensor(rhs, "rhs")
    if a.element_type != b.element_type:
        raise VerifyException(f"operand element types differ: {a.element_type} and {b.element_type}")
    return TensorType(a.element_type, _broadcast([a, b], ("lhs", "rhs")))


@irdl_op_definition
class AndOp(BitwiseBinaryOp):
    """Elementwise bitwise `lhs & rhs` (logical and on i1)."""

    name = "nn.and"
    EXTERNAL: ClassVar[External] = External(stablehlo="and", onnx="And, BitwiseAnd")


@irdl_op_definition
class OrOp(BitwiseBinaryOp):
    """Elementwise bitwise `lhs | rhs` (logical or on i1)."""

    name = "nn.or"
    EXTERNAL: ClassVar[External] = External(stablehlo="or", onnx="Or, BitwiseOr")


@irdl_op_definition
class XorOp(BitwiseBinaryOp):
    """Elementwise bitwise `lhs ^ rhs` (logical xor on i1)."""

    name = "nn.xor"
    EXTERNAL: ClassVar[External] = External(stablehlo="xor", onnx="Xor, BitwiseXor")


@irdl_op_definition
class ShiftLeftOp(BitwiseBinaryOp):
    """Elementwise `lhs << rhs`; 0 where `rhs` (read as unsigned) is at least the bit width."""

    name = "nn.shift_left"
    EXTERNAL: ClassVar[External] = External(stablehlo="shift_left", onnx="BitShift (LEFT)")


@irdl_op_definition
class ShiftRightArithmeticOp(BitwiseBinaryOp):
    """Elementwise `lhs >> rhs` filling with the sign bit; where `rhs` (read as unsigned) is at
    least the bit width, -1 for negative `lhs` and 0 otherwise."""

    name = "nn.shift_right_arithmetic"
    EXTERNAL: ClassVar[External] = External(stablehlo="shift_right_arithmetic", onnx="-")


@irdl_op_definition
class ShiftRightLogicalOp(BitwiseBinaryOp):
    """Elementwise `lhs >> rhs` filling with zeros; 0 where `rhs` (read as unsigned) is at least
    the bit width."""

    name = "nn.shift_right_logical"
    EXTERNAL: ClassVar[External] = External(stablehlo="shift_right_logical", onnx="BitShift (RIGHT, unsigned)")


@irdl_op_definition
class NotOp(NNOp):
    """Elementwise bitwise complement `~input` (logical not on i1)."""

    name = "nn.not"
    EXTERNAL: ClassVar[External] = External(stablehlo="not", onnx="Not, BitwiseNot")

    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue):
        super().__init__(operands=[input], result_types=[_integer_tensor(input.type, "input")])

    def infer_type(self) -> TensorType:
        return _integer_tensor(self.input.type, "input")


ELEMENTWISE_OPS = [
    AbsOp, SignOp, FloorOp, CeilOp, RoundOp, RoundEvenOp, StopGradientOp, Expm1Op, Log1pOp, RsqrtOp, CbrtOp, ErfOp, SineOp, CosineOp,
    TanOp, Atan2Op, PowerOp, RemainderOp, MaximumOp, MinimumOp, ClampOp, CompareOp, SelectOp, ConvertOp,
    BitcastConvertOp, AndOp, OrOp, XorOp, NotOp, ShiftLeftOp, ShiftRightArithmeticOp, ShiftRightLogicalOp,
]  # fmt: skip
