"""The stablehlo dialect's structured ops: contractions (dot_general, dot,
convolution), reductions (reduce, reduce_window), indexing (gather, scatter)
and control flow (return, optimization_barrier, while, case, if)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import (
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
    ConvAttr,
    DotAttr,
    GatherAttr,
    Precision,
    PrecisionAttr,
    ScatterAttr,
    int_array,
)
from dfc.dialects.stablehlo_base import (
    StableHLOOp,
    parse_operand_list,
    parse_types,
    parse_value,
    resolve_operands,
)
from dfc.dialects.stablehlo_elementwise import BINARY_OPS

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
            window = parse_value(parser)
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
        dims = parse_value(parser)
        if not isinstance(dims, list):
            parser.raise_error("'stablehlo.reduce' dimensions must be a list", start, parser.pos)
        extra = parser.parse_optional_attr_dict()
        operands = [x for x, _ in pairs] + [c for _, c in pairs]
        operand_types, result_types = parse_types(parser, len(operands))
        values = resolve_operands(parser, operands, operand_types)
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
class SelectAndScatterOp(StableHLOOp):
    """Generic form only (as JAX prints it for the gradient of a max pool): in each window of `operand`
    the element `select` picks, `scatter` combines `source`'s element into a tensor of `init_value`s."""

    name = "stablehlo.select_and_scatter"
    traits = traits_def(RecursiveMemoryEffect())
    operand = operand_def(TensorType)
    source = operand_def(TensorType)
    init_value = operand_def(TensorType)
    window_dimensions = opt_prop_def(DenseArrayBase)
    window_strides = opt_prop_def(DenseArrayBase)
    padding = opt_prop_def(DenseIntOrFPElementsAttr)
    select = region_def("single_block")
    scatter = region_def("single_block")
    result = result_def(TensorType)


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
        operands, _ = parse_operand_list(parser)
        extra = parser.parse_optional_attr_dict()
        types: list[Attribute] = []
        if operands:
            parser.parse_punctuation(":")
            types = [parser.parse_type()]
            while parser.parse_optional_punctuation(",") is not None:
                types.append(parser.parse_type())
        return cls.build(operands=[resolve_operands(parser, operands, types)], attributes=extra)


@irdl_op_definition
class CompositeOp(StableHLOOp):
    """`stablehlo.composite "name" %a, %b {composite_attributes = {...}, decomposition = @f} : (T, U) -> R`:
    a named op whose meaning is the call of its `decomposition`."""

    name = "stablehlo.composite"
    traits = traits_def(RecursiveMemoryEffect())
    inputs = var_operand_def(TensorType)
    composite_name = prop_def(StringAttr, prop_name="name")
    decomposition = prop_def(SymbolRefAttr)
    composite_attributes = opt_prop_def(DictionaryAttr)
    version = opt_prop_def(IntegerAttr)
    results_ = var_result_def()

    @classmethod
    def parse(cls, parser: Parser):
        name = parser.parse_str_literal()
        operands, _ = parse_operand_list(parser)
        properties: dict[str, Attribute] = {"name": StringAttr(name)}
        extra = parser.parse_optional_attr_dict()
        for key in ("composite_attributes", "decomposition", "version"):
            if key in extra:
                properties[key] = extra.pop(key)
        operand_types, result_types = parse_types(parser, len(operands))
        return cls.build(operands=[resolve_operands(parser, operands, operand_types)], result_types=[result_types],
                         properties=properties, attributes=extra)


@irdl_op_definition
class OptimizationBarrierOp(StableHLOOp):
    """`stablehlo.optimization_barrier %a, %b : T, U`: its operands, unchanged
    (a scheduling hint to XLA)."""

    name = "stablehlo.optimization_barrier"
    operand = var_operand_def(TensorType)
    results_ = var_result_def(TensorType)

    @classmethod
    def parse(cls, parser: Parser):
        operands, _ = parse_operand_list(parser)
        extra = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = [parser.parse_type()]
        while parser.parse_optional_punctuation(",") is not None:
            types.append(parser.parse_type())
        values = resolve_operands(parser, operands, types)
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
        values = resolve_operands(parser, inits, types)
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
