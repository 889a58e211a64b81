"""The `chlo` dialect's `scan`: pretty form `chlo.scan(%x, ...) inits(%c, ...) dimension = 0
attributes {is_reverse = true} { ^bb0(slices..., carries...): ... stablehlo.return outputs...,
carries... } : (...) -> (outputs..., carries...)`. `convert-stablehlo` runs it as a loop
(`passes.stablehlo_scan`)."""

from __future__ import annotations

from xdsl.dialects.builtin import BoolAttr, FunctionType, IntegerAttr, TensorType, i64
from xdsl.irdl import (
    AttrSizedOperandSegments,
    AttrSizedResultSegments,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.traits import RecursiveMemoryEffect

from dfc.dialects.stablehlo_base import StableHLOOp, resolve_operands


@irdl_op_definition
class ScanOp(StableHLOOp):
    """The body applied along `dimension` of the `inputs` (from its end when `is_reverse`), one slice
    (the dimension dropped) of each at a time, with the carries (starting at `inits`): it returns one
    slice of each output and the next carries. Results: the outputs, stacked along `dimension`, then the
    last carries."""

    name = "chlo.scan"
    traits = traits_def(RecursiveMemoryEffect())
    inputs = var_operand_def(TensorType)
    inits = var_operand_def(TensorType)
    dimension = prop_def(IntegerAttr)
    is_reverse = opt_prop_def(BoolAttr)
    is_associative = opt_prop_def(BoolAttr)
    body = region_def("single_block")
    outputs = var_result_def(TensorType)
    carries = var_result_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True), AttrSizedResultSegments(as_property=True))

    @classmethod
    def parse(cls, parser: Parser):
        def operands():  # noqa: ANN202
            return parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)

        inputs = operands()
        parser.parse_keyword("inits")
        inits = operands()
        parser.parse_keyword("dimension")
        parser.parse_punctuation("=")
        properties = {"dimension": IntegerAttr(parser.parse_integer(), i64)}
        attributes = {}
        if parser.parse_optional_keyword("attributes") is not None:
            attributes = dict(parser.parse_optional_attr_dict())
        for key in ("is_reverse", "is_associative"):
            if key in attributes:
                properties[key] = attributes.pop(key)
        body = parser.parse_region()
        parser.parse_punctuation(":")
        start = parser.pos
        ft = parser.parse_function_type()
        if not isinstance(ft, FunctionType) or len(ft.inputs.data) != len(inputs) + len(inits):
            parser.raise_error("'chlo.scan': expected the types of its inputs and inits", start, parser.pos)
        values = resolve_operands(parser, [*inputs, *inits], ft.inputs.data)
        n_carries = len(inits)
        outs = list(ft.outputs.data)
        return cls.build(operands=[values[:len(inputs)], values[len(inputs):]],
                         result_types=[outs[:len(outs) - n_carries], outs[len(outs) - n_carries:]],
                         properties=properties, attributes=attributes, regions=[body])
