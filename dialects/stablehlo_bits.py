"""The stablehlo ops on the bits of numbers and on whole matrices that
`convert-stablehlo` builds from nn ops (`passes/stablehlo_integers.py`,
`passes/stablehlo_linalg.py`): `popcnt`, `count_leading_zeros`, `chlo.mulhi`,
`bitcast_convert`, `reduce_precision` (pretty form `stablehlo.reduce_precision
%x, format = e5m10 : tensor<4xf32>`), `triangular_solve` and `map` (generic
form, as the spec's tests write them)."""

from __future__ import annotations

import re
from typing import Any

from xdsl.dialects.builtin import BoolAttr, DenseArrayBase, IntegerAttr, TensorType, i32
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.traits import RecursiveMemoryEffect

from dfc.dialects.stablehlo_attrs import TransposeAttr
from dfc.dialects.stablehlo_base import StableHLOOp, parse_operand_list, parse_value
from dfc.dialects.stablehlo_elementwise import BinaryOp, UnaryOp


@irdl_op_definition
class PopcntOp(UnaryOp):
    """The number of bits set in each element."""

    name = "stablehlo.popcnt"


@irdl_op_definition
class CountLeadingZerosOp(UnaryOp):
    """The number of leading zero bits of each element."""

    name = "stablehlo.count_leading_zeros"


@irdl_op_definition
class MulhiOp(BinaryOp):
    """`chlo.mulhi`: the high half of the double-width product of each pair of elements."""

    name = "chlo.mulhi"


@irdl_op_definition
class BitcastConvertOp(UnaryOp):
    """Each element's bits read as the result's element type."""

    name = "stablehlo.bitcast_convert"


_FORMAT = re.compile(r"e(\d+)m(\d+)")


@irdl_op_definition
class ReducePrecisionOp(StableHLOOp):
    """Each element rounded to the float format of `exponent_bits` and `mantissa_bits` (ties to even,
    overflow to infinity), kept in its own type."""

    name = "stablehlo.reduce_precision"
    operand = operand_def(TensorType)
    exponent_bits = prop_def(IntegerAttr)
    mantissa_bits = prop_def(IntegerAttr)
    output = result_def(TensorType)

    @classmethod
    def parse(cls, parser: Parser):
        operands, more = parse_operand_list(parser)
        properties: dict[str, Any] = {}
        if more:
            start = parser.pos
            parser.parse_keyword("format")
            parser.parse_punctuation("=")
            fmt = parse_value(parser)
            m = _FORMAT.fullmatch(str(fmt))
            if m is None:
                parser.raise_error(f"'stablehlo.reduce_precision': bad format '{fmt}' (eXmY expected)", start,
                                   parser.pos)
            properties = {"exponent_bits": IntegerAttr(int(m.group(1)), i32),
                          "mantissa_bits": IntegerAttr(int(m.group(2)), i32)}
        return cls._finish(parser, operands, properties)


@irdl_op_definition
class TriangularSolveOp(StableHLOOp):
    """Generic form only: x with op(a) x = b (`left_side`) or x op(a) = b, a's `lower` or upper triangle
    used (its diagonal taken as ones with `unit_diagonal`), op(a) = a, its transpose or its adjoint
    (`transpose_a`); batch dimensions lead."""

    name = "stablehlo.triangular_solve"
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    left_side = prop_def(BoolAttr)
    lower = prop_def(BoolAttr)
    unit_diagonal = prop_def(BoolAttr)
    transpose_a = prop_def(TransposeAttr)
    result = result_def(TensorType)


@irdl_op_definition
class MapOp(StableHLOOp):
    """Generic form only: the `computation` region (on 0-d tensors) applied elementwise to the inputs
    over all `dimensions`."""

    name = "stablehlo.map"
    traits = traits_def(RecursiveMemoryEffect())
    inputs = var_operand_def(TensorType)
    dimensions = prop_def(DenseArrayBase)
    computation = region_def("single_block")
    result = result_def(TensorType)


