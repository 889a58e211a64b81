"""The pretty syntax the stablehlo dialect's ops share (`StableHLOOp`: operands,
`name = value` keyword items, attributes, types) and its parsing helpers; the
ops are in `stablehlo_elementwise.py`, `stablehlo_shape.py` and
`stablehlo_structured.py`, assembled by `stablehlo.py`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from xdsl.ir import Attribute, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarOperandDef,
    VarResultDef,
    traits_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.traits import Pure
from xdsl.utils.mlir_lexer import MLIRTokenKind


def parse_value(parser: Parser) -> Any:
    """A keyword item's value: an integer, a bare word, a (nested) list, a
    `[..] x [..]` pair, a `{key = value}` dictionary, or an attribute."""
    if parser.parse_optional_punctuation("[") is not None:
        items: list[Any] = []
        if parser.parse_optional_punctuation("]") is None:
            items.append(parse_value(parser))
            while parser.parse_optional_punctuation(",") is not None:
                items.append(parse_value(parser))
            parser.parse_punctuation("]")
        if parser.parse_optional_keyword("x") is not None:
            return (items, parse_value(parser))
        return items
    if parser.parse_optional_punctuation("{") is not None:
        entries: dict[str, Any] = {}
        if parser.parse_optional_punctuation("}") is None:
            while True:
                key = parser.parse_identifier()
                parser.parse_punctuation("=")
                entries[key] = parse_value(parser)
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


def parse_operand_list(parser: Parser) -> tuple[list[UnresolvedOperand], bool]:
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


def parse_items(parser: Parser) -> dict[str, Any]:
    """`name = value, ...` (after a comma has been read)."""
    items: dict[str, Any] = {}
    while True:
        start = parser.pos
        key = parser.parse_identifier()
        if key in items:
            parser.raise_error(f"'{key}' given twice", start, parser.pos)
        parser.parse_punctuation("=")
        items[key] = (parse_value(parser), start)
        if parser.parse_optional_punctuation(",") is None:
            return items


def parse_types(parser: Parser, n_operands: int) -> tuple[list[Attribute], list[Attribute]]:
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


def resolve_operands(parser: Parser, operands: Sequence[UnresolvedOperand], types: Sequence[Attribute]) -> list[SSAValue]:
    return list(parser.resolve_operands(operands, types, parser.pos))


class StableHLOOp(IRDLOperation):
    """An op with the common pretty form `operands (, name = value)* attr-dict :
    types`; `KEYWORDS` maps the keyword items it takes to property builders."""

    traits = traits_def(Pure())
    KEYWORDS: ClassVar[dict[str, tuple[str, Callable[[Any], Attribute]]]] = {}

    @classmethod
    def parse(cls, parser: Parser):
        operands, more = parse_operand_list(parser)
        properties = cls._keyword_properties(parser, parse_items(parser) if more else {})
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
        operand_types, result_types = parse_types(parser, len(operands))
        values = resolve_operands(parser, operands, operand_types)
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
