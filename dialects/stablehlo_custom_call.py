"""`stablehlo.custom_call` as JAX prints it: `stablehlo.custom_call
@lapack_dpotrf_ffi(%x) {backend_config = "", ...} : (tensor<3x3xf64>) ->
(tensor<3x3xf64>, tensor<i32>)`. The attribute dictionary (layouts, Shardy
rules, attributes of dialects dfc does not define) is skipped but for the
integer options of LAPACK's calls (`uplo = 76 : ui8`, the character's code),
kept as `options`; the op keeps its target's name, so `convert-stablehlo`
can name it in its error."""

from __future__ import annotations

import re

from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, StringAttr, i64
from xdsl.irdl import irdl_op_definition, opt_prop_def, prop_def, var_operand_def, var_result_def
from xdsl.parser import Parser

from dfc.dialects.stablehlo_base import StableHLOOp, parse_operand_list, resolve_operands

_OPTION = re.compile(r"\b(uplo|side|trans_x|diag|mode) = (\d+) : ui8")


@irdl_op_definition
class CustomCallOp(StableHLOOp):
    """A call of `call_target_name`, a function of the runtime the program was lowered for."""

    name = "stablehlo.custom_call"
    inputs = var_operand_def()
    call_target_name = prop_def(StringAttr)
    options = opt_prop_def(DictionaryAttr)
    outputs = var_result_def()

    @classmethod
    def parse(cls, parser: Parser):
        target = parser.parse_symbol_name()
        parser.parse_punctuation("(")
        operands, _ = parse_operand_list(parser)
        parser.parse_punctuation(")")
        texts: list[str] = []
        if parser.parse_optional_punctuation("{") is not None:
            depth = 1
            while depth:
                text = parser._current_token.text  # pyright: ignore[reportPrivateUsage]
                if not text:
                    parser.raise_error("'stablehlo.custom_call': its attribute dictionary does not end")
                depth += {"{": 1, "}": -1}.get(text, 0)
                texts.append(text)
                parser._consume_token()  # pyright: ignore[reportPrivateUsage]
        options = {k: IntegerAttr(int(v), i64) for k, v in _OPTION.findall(" ".join(texts))}
        parser.parse_punctuation(":")
        ft = parser.parse_function_type()
        values = resolve_operands(parser, operands, list(ft.inputs.data))
        properties = {"call_target_name": target, "options": DictionaryAttr(options)}
        return cls.build(operands=[values], result_types=[list(ft.outputs.data)], properties=properties)


LAPACK_ROUTINES = {"potrf": "Cholesky factorization", "getrf": "LU factorization", "geqrf": "QR factorization",
                   "geqp3": "pivoted QR factorization", "orgqr": "QR's Q", "ungqr": "QR's Q",
                   "syevd": "symmetric eigendecomposition", "heevd": "Hermitian eigendecomposition",
                   "gesdd": "singular value decomposition", "gesvd": "singular value decomposition",
                   "geev": "eigendecomposition", "trsm": "triangular solve", "gees": "Schur decomposition",
                   "gehrd": "Hessenberg reduction", "sytrd": "tridiagonal reduction", "hetrd": "tridiagonal reduction"}
"""What JAX's CPU targets `lapack_<type><routine>[_ffi]` compute (for the error naming one)."""


def describe(op: CustomCallOp) -> str:
    """`@target`, with what it computes when it is a LAPACK routine JAX calls."""
    target = op.call_target_name.data
    parts = target.split("_")
    routine = parts[1][1:] if len(parts) > 1 and parts[0] == "lapack" else ""
    what = f" (LAPACK's {LAPACK_ROUTINES[routine]})" if routine in LAPACK_ROUTINES else ""
    return f"@{target}{what}"
