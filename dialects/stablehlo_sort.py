"""Sorting as JAX emits it: `stablehlo.sort` (generic form, a comparator
region) and the `chlo` dialect's `top_k` (pretty form `chlo.top_k(%x, k = 2) :
tensor<3x4xf32> -> (tensor<3x2xf32>, tensor<3x2xi32>)`). `convert-stablehlo`
turns both into `nn.argsort` and gathers (`passes.stablehlo_sort`)."""

from __future__ import annotations

from xdsl.dialects.builtin import BoolAttr, IntegerAttr, TensorType, i64
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.traits import RecursiveMemoryEffect

from dfc.dialects.stablehlo_base import StableHLOOp, resolve_operands


@irdl_op_definition
class SortOp(StableHLOOp):
    """Generic form only (as JAX prints it): the operands sorted together along
    `dimension` (default -1) in the order the `comparator` region (a less-than of
    the two elements of each operand, as block arguments 2k and 2k + 1) defines."""

    name = "stablehlo.sort"
    traits = traits_def(RecursiveMemoryEffect())
    inputs = var_operand_def(TensorType)
    dimension = opt_prop_def(IntegerAttr)
    is_stable = opt_prop_def(BoolAttr)
    comparator = region_def("single_block")
    results_ = var_result_def(TensorType)


@irdl_op_definition
class TopKOp(StableHLOOp):
    """`chlo.top_k`: the `k` largest elements along the last dimension, in order
    (the lower index first among equal ones), and their indices."""

    name = "chlo.top_k"
    operand = operand_def(TensorType)
    k = prop_def(IntegerAttr)
    values = result_def(TensorType)
    indices = result_def(TensorType)

    @classmethod
    def parse(cls, parser: Parser):
        parser.parse_punctuation("(")
        operand = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        parser.parse_keyword("k")
        parser.parse_punctuation("=")
        k = parser.parse_integer()
        parser.parse_punctuation(")")
        extra = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        operand_type = parser.parse_type()
        parser.parse_punctuation("->")
        parser.parse_punctuation("(")
        values_type = parser.parse_type()
        parser.parse_punctuation(",")
        indices_type = parser.parse_type()
        parser.parse_punctuation(")")
        (x,) = resolve_operands(parser, [operand], [operand_type])
        return cls.build(operands=[x], result_types=[values_type, indices_type], properties={"k": IntegerAttr(k, i64)},
                         attributes=extra)
