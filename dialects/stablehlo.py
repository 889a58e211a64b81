"""The `stablehlo` dialect: the StableHLO ops JAX emits, as input to `convert-stablehlo`.

Each op reads in MLIR's generic form (`"stablehlo.add"(%a, %b) : (...) -> ...`,
properties in `<{...}>`) and in the pretty form `jax.jit(f).lower(*args).as_text()`
prints (`stablehlo.add %a, %b : tensor<4xf32>`, `stablehlo.reduce(%x init: %c)
applies stablehlo.add across dimensions = [1] : ...`, `stablehlo.while(%i = %c) :
tensor<i32> cond {...} do {...}`, `stablehlo.convolution(%x, %w) dim_numbers =
[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {...}`, ...). Ops print in the
generic form. Operands and properties are those of the StableHLO specification;
a property the op does not have is a verifier error naming it. The dialect
only describes the input: semantics come from the nn/scf ops the conversion
produces (`passes/convert_stablehlo.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Dialect, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarOperandDef,
    VarResultDef,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_region_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.traits import IsTerminator, Pure, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.mlir_lexer import MLIRTokenKind

from dfc.dialects.stablehlo_attrs import (
    STABLEHLO_ATTRIBUTES,
    ComparisonDirection,
    ComparisonDirectionAttr,
    ComparisonType,
    ComparisonTypeAttr,
    ConvAttr,
    DotAttr,
    GatherAttr,
    Precision,
    PrecisionAttr,
    ScatterAttr,
    int_array,
    int_attr,
)


# ---------------------------------------------------------------- pretty syntax


def _parse_value(parser: Parser) -> Any:
    """A keyword item's value: an integer, a bare word, a (nested) list, a
    `[..] x [..]` pair, a `{key = value}` dictionary, or an attribute."""
    if parser.parse_optional_punctuation("[") is not None:
        items: list[Any] = []
        if parser.parse_optional_punctuation("]") is None:
            items.append(_parse_value(parser))
            while parser.parse_optional_punctuation(",") is not None:
                items.append(_parse_value(parser))
            parser.parse_punctuation("]")
        if parser.parse_optional_keyword("x") is not None:
            return (items, _parse_value(parser))
        return items
    if parser.parse_optional_punctuation("{") is not None:
        entries: dict[str, Any] = {}
        if parser.parse_optional_punctuation("}") is None:
            while True:
                key = parser.parse_identifier()
                parser.parse_punctuation("=")
                entries[key] = _parse_value(parser)
                if parser.parse_optional_punctuation(",") is None:
                    break
            parser.parse_punctuation("}")
        return entries
    if (n := parser.parse_optional_integer()) is not None:
        return n
    if (b := parser.parse_optional_boolean()) is not None:
        return b
    if parser._current_token.kind == MLIRTokenKind.BARE_IDENT:  # pyright: ignore[reportPrivateUsage]
        return parser.parse_identifier()
    return parser.parse_attribute()


def _parse_operand_list(parser: Parser) -> tuple[list[UnresolvedOperand], bool]:
    """`%a, %b, ...`; the flag tells whether a comma followed the last operand
    (keyword items come next)."""
    operands: list[UnresolvedOperand] = []
    first = parser.parse_optional_unresolved_operand()
    if first is None:
        return operands, False
    operands.append(first)
    while parser.parse_optional_punctuation(",") is not None:
        nxt = parser.parse_optional_unresolved_operand()
        if nxt is None:
            return operands, True
        operands.append(nxt)
    return operands, False


def _parse_items(parser: Parser) -> dict[str, Any]:
    """`name = value, ...` (after a comma has been read)."""
    items: dict[str, Any] = {}
    while True:
        start = parser.pos
        key = parser.parse_identifier()
        if key in items:
            parser.raise_error(f"'{key}' given twice", start, parser.pos)
        parser.parse_punctuation("=")
        items[key] = (_parse_value(parser), start)
        if parser.parse_optional_punctuation(",") is None:
            return items


def _parse_types(parser: Parser, n_operands: int) -> tuple[list[Attribute], list[Attribute]]:
    """`: (T, ...) -> R` or `: T` (every operand and the result) or, for select,
    `: P, T` (the predicate, then every other operand and the result)."""
    parser.parse_punctuation(":")
    if parser._current_token.text == "(":  # pyright: ignore[reportPrivateUsage]
        ft = parser.parse_function_type()
        return list(ft.inputs.data), list(ft.outputs.data)
    types = [parser.parse_type()]
    while parser.parse_optional_punctuation(",") is not None:
        types.append(parser.parse_type())
    if len(types) == 1:
        return types * n_operands, types
    if len(types) == 2:
        return [types[0]] + [types[1]] * (n_operands - 1), [types[1]]
    return types[:n_operands], types[n_operands:]


def _resolve(parser: Parser, operands: Sequence[UnresolvedOperand], types: Sequence[Attribute]) -> list[SSAValue]:
    return list(parser.resolve_operands(operands, types, parser.pos))


class StableHLOOp(IRDLOperation):
    """An op with the common pretty form `operands (, name = value)* attr-dict :
    types`; `KEYWORDS` maps the keyword items it takes to property builders."""

    traits = traits_def(Pure())
    KEYWORDS: ClassVar[dict[str, tuple[str, Callable[[Any], Attribute]]]] = {}

    @classmethod
    def parse(cls, parser: Parser):
        operands, more = _parse_operand_list(parser)
        properties = cls._keyword_properties(parser, _parse_items(parser) if more else {})
        return cls._finish(parser, operands, properties)

    @classmethod
    def _keyword_properties(cls, parser: Parser, items: dict[str, Any]) -> dict[str, Attribute]:
        properties: dict[str, Attribute] = {}
        for key, (value, start) in items.items():
            if key not in cls.KEYWORDS:
                parser.raise_error(f"'{cls.name}' has no keyword '{key}'", start, start + len(key))
            prop, build = cls.KEYWORDS[key]
            try:
                properties[prop] = build(value)
            except (TypeError, ValueError, KeyError, AttributeError) as err:  # a word or list where an integer belongs
                parser.raise_error(f"'{cls.name}': bad value for '{key}' ({err})", start, parser.pos)
        return properties

    @classmethod
    def _finish(cls, parser: Parser, operands: Sequence[UnresolvedOperand], properties: dict[str, Attribute],
                regions: Sequence[Region] = ()):
        extra = parser.parse_optional_attr_dict()
        defined = cls.get_irdl_definition().properties
        for key in [k for k in extra if k in defined]:
            properties[key] = extra.pop(key)
        operand_types, result_types = _parse_types(parser, len(operands))
        values = _resolve(parser, operands, operand_types)
        return cls.build(operands=cls._group(values), result_types=cls._group_results(result_types),
                         properties=properties, attributes=extra, regions=list(regions))

    @classmethod
    def _group(cls, values: Sequence[SSAValue]) -> list[SSAValue | list[SSAValue]]:
        """The flat operand list grouped as the op's operand definitions (one variadic at most)."""
        defs = [d for _, d in cls.get_irdl_definition().operands]
        if not any(isinstance(d, VarOperandDef) for d in defs):
            return list(values)
        n_var = len(values) - (len(defs) - 1)
        out: list[SSAValue | list[SSAValue]] = []
        i = 0
        for d in defs:
            if isinstance(d, VarOperandDef):
                out.append(list(values[i:i + n_var]))
                i += n_var
            else:
                out.append(values[i])
                i += 1
        return out

    @classmethod
    def _group_results(cls, types: Sequence[Attribute]) -> list[Attribute | list[Attribute]]:
        defs = [d for _, d in cls.get_irdl_definition().results]
        return [list(types)] if any(isinstance(d, VarResultDef) for d in defs) else list(types)


# ---------------------------------------------------------------- elementwise


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
        operands, more = _parse_operand_list(parser)
        properties: dict[str, Attribute] = {"comparison_direction": ComparisonDirectionAttr(direction)}
        if more:
            properties["compare_type"] = ComparisonTypeAttr(parser.parse_str_enum(ComparisonType))
        return cls._finish(parser, operands, properties)


# ---------------------------------------------------------------- constants and shapes


@irdl_op_definition
class ConstantOp(StableHLOOp):
    """Pretty form: `stablehlo.constant dense<...> : tensor<...>`."""

    name = "stablehlo.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    output = result_def(TensorType)

    @classmethod
    def parse(cls, parser: Parser):
        extra = parser.parse_optional_attr_dict()
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr):
            parser.raise_error(f"'stablehlo.constant' expects a dense elements attribute, got {value}")
        return cls.build(properties={"value": value}, result_types=[value.type], attributes=extra)


@irdl_op_definition
class IotaOp(StableHLOOp):
    """Pretty form: `stablehlo.iota dim = 0 : tensor<4xi32>`."""

    name = "stablehlo.iota"
    iota_dimension = prop_def(IntegerAttr)
    output = result_def(TensorType)
    KEYWORDS: ClassVar[dict[str, Any]] = {"dim": ("iota_dimension", int_attr)}

    @classmethod
    def parse(cls, parser: Parser):
        properties = cls._keyword_properties(parser, _parse_items(parser))
        return cls._finish(parser, [], properties)


@irdl_op_definition
class BroadcastInDimOp(StableHLOOp):
    name = "stablehlo.broadcast_in_dim"
    operand = operand_def(TensorType)
    broadcast_dimensions = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    KEYWORDS: ClassVar[dict[str, Any]] = {"dims": ("broadcast_dimensions", int_array)}


@irdl_op_definition
class ReshapeOp(StableHLOOp):
    name = "stablehlo.reshape"
    operand = operand_def(TensorType)
    result = result_def(TensorType)


@irdl_op_definition
class TransposeOp(StableHLOOp):
    name = "stablehlo.transpose"
    operand = operand_def(TensorType)
    permutation = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    KEYWORDS: ClassVar[dict[str, Any]] = {"dims": ("permutation", int_array)}


@irdl_op_definition
class ReverseOp(StableHLOOp):
    name = "stablehlo.reverse"
    operand = operand_def(TensorType)
    dimensions = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    KEYWORDS: ClassVar[dict[str, Any]] = {"dims": ("dimensions", int_array)}


@irdl_op_definition
class SliceOp(StableHLOOp):
    """Pretty form: `stablehlo.slice %x [0:4, 1:5:2] : (...) -> ...`."""

    name = "stablehlo.slice"
    operand = operand_def(TensorType)
    start_indices = prop_def(DenseArrayBase)
    limit_indices = prop_def(DenseArrayBase)
    strides = prop_def(DenseArrayBase)
    result = result_def(TensorType)

    @classmethod
    def parse(cls, parser: Parser):
        operand = parser.parse_unresolved_operand()
        starts: list[int] = []
        limits: list[int] = []
        strides: list[int] = []

        def dim() -> None:
            starts.append(parser.parse_integer())
            parser.parse_punctuation(":")
            limits.append(parser.parse_integer())
            strides.append(parser.parse_integer() if parser.parse_optional_punctuation(":") is not None else 1)

        parser.parse_comma_separated_list(parser.Delimiter.SQUARE, dim)
        properties = {"start_indices": int_array(starts), "limit_indices": int_array(limits), "strides": int_array(strides)}
        return cls._finish(parser, [operand], properties)


@irdl_op_definition
class DynamicSliceOp(StableHLOOp):
    name = "stablehlo.dynamic_slice"
    operand = operand_def(TensorType)
    start_indices = var_operand_def(TensorType)
    slice_sizes = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    KEYWORDS: ClassVar[dict[str, Any]] = {"sizes": ("slice_sizes", int_array)}


@irdl_op_definition
class DynamicUpdateSliceOp(StableHLOOp):
    name = "stablehlo.dynamic_update_slice"
    operand = operand_def(TensorType)
    update = operand_def(TensorType)
    start_indices = var_operand_def(TensorType)
    result = result_def(TensorType)


@irdl_op_definition
class ConcatenateOp(StableHLOOp):
    name = "stablehlo.concatenate"
    inputs = var_operand_def(TensorType)
    dimension = prop_def(IntegerAttr)
    result = result_def(TensorType)
    KEYWORDS: ClassVar[dict[str, Any]] = {"dim": ("dimension", int_attr)}


@irdl_op_definition
class PadOp(StableHLOOp):
    name = "stablehlo.pad"
    operand = operand_def(TensorType)
    padding_value = operand_def(TensorType)
    edge_padding_low = prop_def(DenseArrayBase)
    edge_padding_high = prop_def(DenseArrayBase)
    interior_padding = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    KEYWORDS: ClassVar[dict[str, Any]] = {
        "low": ("edge_padding_low", int_array),
        "high": ("edge_padding_high", int_array),
        "interior": ("interior_padding", int_array),
    }


# ---------------------------------------------------------------- contractions


def _precision(values: Sequence[str]) -> ArrayAttr:
    return ArrayAttr([PrecisionAttr(Precision(v)) for v in values])


def _dims_pair(value: Any) -> tuple[list[int], list[int]]:
    """`[..] x [..]`: the lhs and rhs dimension lists; ValueError otherwise."""
    if not (isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, list) for v in value)):
        raise ValueError(f"expected '[dims] x [dims]', got '{value}'")
    return value


def _dot_numbers(batching: Any = ([], []), contracting: Any = ([], [])) -> DotAttr:
    return DotAttr.from_fields(
        lhs_batching_dimensions=batching[0], rhs_batching_dimensions=batching[1],
        lhs_contracting_dimensions=contracting[0], rhs_contracting_dimensions=contracting[1],
    )


@irdl_op_definition
class DotGeneralOp(StableHLOOp):
    """Pretty form: `stablehlo.dot_general %a, %b, batching_dims = [0] x [0],
    contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (...) -> ...`."""

    name = "stablehlo.dot_general"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    dot_dimension_numbers = prop_def(DotAttr)
    precision_config = opt_prop_def(ArrayAttr)
    result = result_def(TensorType)
    KEYWORDS: ClassVar[dict[str, Any]] = {
        "batching_dims": ("batching_dims", _dims_pair),
        "contracting_dims": ("contracting_dims", _dims_pair),
        "precision": ("precision_config", _precision),
    }

    @classmethod
    def _keyword_properties(cls, parser: Parser, items: dict[str, Any]) -> dict[str, Attribute]:
        properties = super()._keyword_properties(parser, items)
        batching = properties.pop("batching_dims", ([], []))
        contracting = properties.pop("contracting_dims", ([], []))
        return {"dot_dimension_numbers": _dot_numbers(batching, contracting), **properties}  # type: ignore[arg-type]


@irdl_op_definition
class DotOp(StableHLOOp):
    """Pretty form: `stablehlo.dot %a, %b, precision = [...] : (...) -> ...`: a
    matrix/vector product contracting lhs's last and rhs's first dimension."""

    name = "stablehlo.dot"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    precision_config = opt_prop_def(ArrayAttr)
    result = result_def(TensorType)
    KEYWORDS: ClassVar[dict[str, Any]] = {"precision": ("precision_config", _precision)}


@irdl_op_definition
class ConvolutionOp(StableHLOOp):
    """Pretty form: `stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0,
    1]->[b, f, 0, 1], window = {stride = [..], pad = [[..], ..], lhs_dilate = [..],
    rhs_dilate = [..], reverse = [..]} {feature_group_count = 1 : i64, ...} : (...) -> ...`."""

    name = "stablehlo.convolution"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    window_strides = opt_prop_def(DenseArrayBase)
    padding = opt_prop_def(DenseIntOrFPElementsAttr)
    lhs_dilation = opt_prop_def(DenseArrayBase)
    rhs_dilation = opt_prop_def(DenseArrayBase)
    window_reversal = opt_prop_def(DenseArrayBase)
    dimension_numbers = prop_def(ConvAttr)
    feature_group_count = prop_def(IntegerAttr)
    batch_group_count = prop_def(IntegerAttr)
    precision_config = opt_prop_def(ArrayAttr)
    result = result_def(TensorType)

    WINDOW: ClassVar[dict[str, str]] = {
        "stride": "window_strides", "lhs_dilate": "lhs_dilation", "rhs_dilate": "rhs_dilation",
        "pad": "padding", "reverse": "window_reversal",
    }

    @classmethod
    def parse(cls, parser: Parser):
        lhs, rhs = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)
        parser.parse_keyword("dim_numbers")
        parser.parse_punctuation("=")
        values: dict[str, Any] = {}
        ConvAttr._parse_compact(parser, values)  # pyright: ignore[reportPrivateUsage]
        properties: dict[str, Attribute] = {"dimension_numbers": ConvAttr.from_fields(**values)}
        if parser.parse_optional_punctuation(",") is not None:
            parser.parse_keyword("window")
            parser.parse_punctuation("=")
            start = parser.pos
            window = _parse_value(parser)
            if not isinstance(window, dict):
                parser.raise_error("'stablehlo.convolution' window must be a {key = value, ...} dictionary", start,
                                   parser.pos)
            for key, value in window.items():
                if key not in cls.WINDOW:
                    parser.raise_error(f"'stablehlo.convolution' window has no field '{key}'", start, parser.pos)
                if key == "pad":
                    if not isinstance(value, list) or not all(isinstance(p, list) and len(p) == 2 for p in value):
                        parser.raise_error("'stablehlo.convolution' window pad must be a list of [low, high] pairs",
                                           start, parser.pos)
                    flat = list(int_array([x for pair in value for x in pair]).get_values())
                    properties["padding"] = DenseIntOrFPElementsAttr.from_list(TensorType(i64, [len(value), 2]), flat)
                elif key == "reverse":
                    if not isinstance(value, list):
                        parser.raise_error("'stablehlo.convolution' window reverse must be a list", start, parser.pos)
                    properties["window_reversal"] = DenseArrayBase.from_list(i1, [int(bool(v)) for v in value])
                else:
                    properties[cls.WINDOW[key]] = int_array(value)
        return cls._finish(parser, [lhs, rhs], properties)


# ---------------------------------------------------------------- reductions and indexing


@irdl_op_definition
class ReduceOp(StableHLOOp):
    """Pretty forms: `stablehlo.reduce(%x init: %c) applies stablehlo.add across
    dimensions = [1] : (...) -> ...`, and with several inputs `stablehlo.reduce(%x
    init: %c), (%i init: %d) across dimensions = [0] : (...) -> (...) reducer(%a: T,
    %b: T) (%c: U, %d: U) { ... }`. Operands are the inputs, then the init values."""

    name = "stablehlo.reduce"
    traits = traits_def(RecursiveMemoryEffect())
    inputs_and_inits = var_operand_def(TensorType)
    dimensions = prop_def(DenseArrayBase)
    body = region_def("single_block")
    results_ = var_result_def(TensorType)

    @property
    def inputs(self) -> Sequence[SSAValue]:
        return self.inputs_and_inits[: len(self.inputs_and_inits) // 2]

    @property
    def init_values(self) -> Sequence[SSAValue]:
        return self.inputs_and_inits[len(self.inputs_and_inits) // 2:]

    @classmethod
    def parse(cls, parser: Parser):
        pairs: list[tuple[UnresolvedOperand, UnresolvedOperand]] = []
        while True:
            parser.parse_punctuation("(")
            x = parser.parse_unresolved_operand()
            parser.parse_keyword("init")
            parser.parse_punctuation(":")
            pairs.append((x, parser.parse_unresolved_operand()))
            parser.parse_punctuation(")")
            if parser.parse_optional_punctuation(",") is None:
                break
        body_op = None
        if parser.parse_optional_keyword("applies") is not None:
            start = parser.pos
            body_op = parser.parse_identifier() if parser._current_token.kind == MLIRTokenKind.BARE_IDENT else None  # pyright: ignore[reportPrivateUsage]
            if body_op is None or body_op.removeprefix("stablehlo.") not in BINARY_OPS:
                parser.raise_error(f"'stablehlo.reduce' cannot apply '{body_op}'", start, parser.pos)
        parser.parse_keyword("across")
        parser.parse_keyword("dimensions")
        parser.parse_punctuation("=")
        start = parser.pos
        dims = _parse_value(parser)
        if not isinstance(dims, list):
            parser.raise_error("'stablehlo.reduce' dimensions must be a list", start, parser.pos)
        extra = parser.parse_optional_attr_dict()
        operands = [x for x, _ in pairs] + [c for _, c in pairs]
        operand_types, result_types = _parse_types(parser, len(operands))
        values = _resolve(parser, operands, operand_types)
        n = len(pairs)
        if body_op is not None:
            t = values[n].type
            block = Block(arg_types=[t, t])
            combined = BINARY_OPS[body_op.removeprefix("stablehlo.")].build(
                operands=list(block.args), result_types=[t])
            block.add_ops([combined, ReturnOp.build(operands=[[combined.results[0]]])])
            region = Region(block)
        else:
            parser.parse_keyword("reducer")
            lhs_args: list[Parser.Argument] = []
            rhs_args: list[Parser.Argument] = []
            for _ in range(n):
                parser.parse_punctuation("(")
                lhs_args.append(parser.parse_argument())
                parser.parse_punctuation(",")
                rhs_args.append(parser.parse_argument())
                parser.parse_punctuation(")")
            region = parser.parse_region(lhs_args + rhs_args)
        return cls.build(operands=[values], result_types=[result_types], properties={"dimensions": int_array(dims)},
                         attributes=extra, regions=[region])


@irdl_op_definition
class ReduceWindowOp(StableHLOOp):
    """Generic form only (as JAX prints it). Operands: the inputs, then the init values."""

    name = "stablehlo.reduce_window"
    traits = traits_def(RecursiveMemoryEffect())
    inputs_and_inits = var_operand_def(TensorType)
    window_dimensions = prop_def(DenseArrayBase)
    window_strides = opt_prop_def(DenseArrayBase)
    base_dilations = opt_prop_def(DenseArrayBase)
    window_dilations = opt_prop_def(DenseArrayBase)
    padding = opt_prop_def(DenseIntOrFPElementsAttr)
    body = region_def("single_block")
    results_ = var_result_def(TensorType)


@irdl_op_definition
class GatherOp(StableHLOOp):
    """Generic form only (as JAX prints it)."""

    name = "stablehlo.gather"
    operand = operand_def(TensorType)
    start_indices = operand_def(TensorType)
    dimension_numbers = prop_def(GatherAttr)
    slice_sizes = prop_def(DenseArrayBase)
    indices_are_sorted = opt_prop_def(BoolAttr)
    result = result_def(TensorType)


@irdl_op_definition
class ScatterOp(StableHLOOp):
    """Generic form only (as JAX prints it). Operands: the inputs, the indices, the updates."""

    name = "stablehlo.scatter"
    traits = traits_def(RecursiveMemoryEffect())
    all_operands = var_operand_def(TensorType)
    scatter_dimension_numbers = prop_def(ScatterAttr)
    indices_are_sorted = opt_prop_def(BoolAttr)
    unique_indices = opt_prop_def(BoolAttr)
    update_computation = region_def("single_block")
    results_ = var_result_def(TensorType)


# ---------------------------------------------------------------- control flow


@irdl_op_definition
class ReturnOp(StableHLOOp):
    """`stablehlo.return %a, %b : T, U`: ends a region of reduce, while, case, if, scatter."""

    name = "stablehlo.return"
    traits = traits_def(IsTerminator(), Pure())
    results_ = var_operand_def()

    @classmethod
    def parse(cls, parser: Parser):
        operands, _ = _parse_operand_list(parser)
        extra = parser.parse_optional_attr_dict()
        types: list[Attribute] = []
        if operands:
            parser.parse_punctuation(":")
            types = [parser.parse_type()]
            while parser.parse_optional_punctuation(",") is not None:
                types.append(parser.parse_type())
        return cls.build(operands=[_resolve(parser, operands, types)], attributes=extra)


@irdl_op_definition
class OptimizationBarrierOp(StableHLOOp):
    """`stablehlo.optimization_barrier %a, %b : T, U`: its operands, unchanged
    (a scheduling hint to XLA)."""

    name = "stablehlo.optimization_barrier"
    operand = var_operand_def(TensorType)
    results_ = var_result_def(TensorType)

    @classmethod
    def parse(cls, parser: Parser):
        operands, _ = _parse_operand_list(parser)
        extra = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = [parser.parse_type()]
        while parser.parse_optional_punctuation(",") is not None:
            types.append(parser.parse_type())
        values = _resolve(parser, operands, types)
        return cls.build(operands=[values], result_types=[types], attributes=extra)


@irdl_op_definition
class WhileOp(StableHLOOp):
    """Pretty form: `stablehlo.while(%i = %c, %x = %a) : tensor<i32>, tensor<..>
    cond { ... stablehlo.return %p : tensor<i1> } do { ... stablehlo.return %i2, %x2 : ... }`."""

    name = "stablehlo.while"
    traits = traits_def(RecursiveMemoryEffect())
    operand = var_operand_def(TensorType)
    cond = region_def("single_block")
    body = region_def("single_block")
    results_ = var_result_def(TensorType)

    @classmethod
    def parse(cls, parser: Parser):
        names: list[Any] = []
        inits: list[UnresolvedOperand] = []

        def carried() -> None:
            names.append(parser.parse_argument(expect_type=False))
            parser.parse_punctuation("=")
            inits.append(parser.parse_unresolved_operand())

        parser.parse_comma_separated_list(parser.Delimiter.PAREN, carried)
        types: list[Attribute] = []
        if inits:
            parser.parse_punctuation(":")
            types = [parser.parse_type()]
            while parser.parse_optional_punctuation(",") is not None:
                types.append(parser.parse_type())
        extra = parser.parse_optional_attr_dict()
        values = _resolve(parser, inits, types)
        parser.parse_keyword("cond")
        cond = parser.parse_region([n.resolve(t) for n, t in zip(names, types)])
        parser.parse_keyword("do")
        body = parser.parse_region([n.resolve(t) for n, t in zip(names, types)])
        return cls.build(operands=[values], result_types=[types], attributes=extra, regions=[cond, body])


@irdl_op_definition
class CaseOp(StableHLOOp):
    """Generic form only: `"stablehlo.case"(%index) ({...}, {...}) : (tensor<i32>) -> ...`;
    an index out of range runs the last branch."""

    name = "stablehlo.case"
    traits = traits_def(RecursiveMemoryEffect())
    index = operand_def(TensorType)
    branches = var_region_def("single_block")
    results_ = var_result_def(TensorType)

    def verify_(self) -> None:
        t = self.index.type
        if not (isinstance(t, TensorType) and not t.get_shape() and isinstance(t.element_type, IntegerType)):
            raise VerifyException(f"index must be a 0-d tensor of integers, got {t}")


@irdl_op_definition
class IfOp(StableHLOOp):
    """Generic form only: `"stablehlo.if"(%pred) ({...}, {...}) : (tensor<i1>) -> ...`."""

    name = "stablehlo.if"
    traits = traits_def(RecursiveMemoryEffect())
    pred = operand_def(TensorType)
    true_branch = region_def("single_block")
    false_branch = region_def("single_block")
    results_ = var_result_def(TensorType)

    def verify_(self) -> None:
        t = self.pred.type
        if not (isinstance(t, TensorType) and not t.get_shape() and t.element_type == i1):
            raise VerifyException(f"pred must be a 0-d tensor of i1, got {t}")


StableHLO = Dialect(
    "stablehlo",
    [
        *UNARY_OPS.values(),
        *BINARY_OPS.values(),
        ConvertOp, SelectOp, ClampOp, CompareOp, ConstantOp, IotaOp, BroadcastInDimOp, ReshapeOp, TransposeOp,
        ReverseOp, SliceOp, DynamicSliceOp, DynamicUpdateSliceOp, ConcatenateOp, PadOp, DotGeneralOp, DotOp,
        ConvolutionOp, OptimizationBarrierOp, ReduceOp, ReduceWindowOp, GatherOp, ScatterOp, ReturnOp, WhileOp, CaseOp, IfOp,
    ],
    STABLEHLO_ATTRIBUTES,
)
