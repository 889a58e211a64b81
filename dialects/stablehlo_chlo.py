"""The `chlo` dialect (XLA's client ops) as JAX emits it: the elementwise ops
(pretty form `chlo.square %x : tensor<3xf32> -> tensor<3xf32>`, binary ones
`chlo.zeta %q, %x : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>`, or the
generic form), with `top_k`, `mulhi` and `scan` from their families.
`convert-stablehlo` decomposes them (`passes/stablehlo_chlo.py`); one it does
not is an error at the op naming it."""

from __future__ import annotations

from xdsl.ir import Dialect
from xdsl.irdl import irdl_op_definition
from xdsl.parser import Parser

from dfc.dialects.stablehlo_base import parse_operand_list, resolve_operands
from dfc.dialects.stablehlo_bits import MulhiOp
from dfc.dialects.stablehlo_elementwise import BinaryOp, UnaryOp
from dfc.dialects.stablehlo_scan import ScanOp
from dfc.dialects.stablehlo_sort import TopKOp

CHLO_UNARY_NAMES = (
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "bessel_i1e", "conj", "cosh", "digamma", "erf", "erf_inv",
    "erfc", "is_inf", "is_neg_inf", "is_pos_inf", "lgamma", "sinh", "square", "tan",
)
CHLO_BINARY_NAMES = ("next_after", "polygamma", "zeta")


def _parse_chlo(cls, parser: Parser):
    """`%a (, %b)* attr-dict : T (, T)* -> R`, or the common stablehlo forms."""
    operands, _ = parse_operand_list(parser)
    extra = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    if parser._current_token.text == "(":  # pyright: ignore[reportPrivateUsage]
        ft = parser.parse_function_type()
        operand_types, result_type = list(ft.inputs.data), ft.outputs.data[0]
    else:
        operand_types = [parser.parse_type()]
        while parser.parse_optional_punctuation(",") is not None:
            operand_types.append(parser.parse_type())
        result_type = parser.parse_type() if parser.parse_optional_punctuation("->") else operand_types[-1]
        if len(operand_types) < len(operands):
            operand_types = operand_types[:1] * len(operands)
    values = resolve_operands(parser, operands, operand_types)
    return cls.build(operands=values, result_types=[result_type], attributes=extra)


def _chlo_op(op_name: str, base: type) -> type:
    name = "Chlo" + op_name.title().replace("_", "") + "Op"
    return irdl_op_definition(type(name, (base,), {"name": f"chlo.{op_name}", "parse": classmethod(_parse_chlo),
                                                   "__doc__": f"`chlo.{op_name}`, elementwise."}))


CHLO_UNARY_OPS = {n: _chlo_op(n, UnaryOp) for n in CHLO_UNARY_NAMES}
CHLO_BINARY_OPS = {n: _chlo_op(n, BinaryOp) for n in CHLO_BINARY_NAMES}

CHLO = Dialect("chlo", [*CHLO_UNARY_OPS.values(), *CHLO_BINARY_OPS.values(), TopKOp, MulhiOp, ScanOp])
"""The ops of XLA's client dialect that dfc reads."""
