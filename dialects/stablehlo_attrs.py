"""The attributes of the `stablehlo` dialect, in the syntax JAX prints.

* Enums in the opaque form: `#stablehlo<precision DEFAULT>`,
  `#stablehlo<comparison_direction LT>`, `#stablehlo<comparison_type FLOAT>`,
  `#stablehlo<transpose TRANSPOSE>`, `#stablehlo<fft_type RFFT>`.
* Dimension-number structs: `#stablehlo.dot<lhs_contracting_dimensions = [1],
  rhs_contracting_dimensions = [0]>`, `#stablehlo.gather<...>`,
  `#stablehlo.scatter<...>`, each a dictionary of named fields (an integer list
  or an integer); a field the struct does not have is a parse error naming it.
* `#stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>`, the convolution's
  layout in StableHLO's compact form (`raw` followed by fields also parses).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import ClassVar

from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, IntegerAttr, i64
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, ParametrizedAttribute, SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer


class Precision(StrEnum):
    DEFAULT = "DEFAULT"
    HIGH = "HIGH"
    HIGHEST = "HIGHEST"


class ComparisonDirection(StrEnum):
    EQ = "EQ"
    NE = "NE"
    GE = "GE"
    GT = "GT"
    LE = "LE"
    LT = "LT"


class ComparisonType(StrEnum):
    NOTYPE = "NOTYPE"
    FLOAT = "FLOAT"
    TOTALORDER = "TOTALORDER"
    SIGNED = "SIGNED"
    UNSIGNED = "UNSIGNED"


class Transpose(StrEnum):
    NO_TRANSPOSE = "NO_TRANSPOSE"
    TRANSPOSE = "TRANSPOSE"
    ADJOINT = "ADJOINT"


@irdl_attr_definition
class TransposeAttr(EnumAttribute[Transpose], SpacedOpaqueSyntaxAttribute):
    """`#stablehlo<transpose TRANSPOSE>`: how triangular_solve uses its matrix."""

    name = "stablehlo.transpose"


class FftType(StrEnum):
    FFT = "FFT"
    IFFT = "IFFT"
    RFFT = "RFFT"
    IRFFT = "IRFFT"


@irdl_attr_definition
class FftTypeAttr(EnumAttribute[FftType], SpacedOpaqueSyntaxAttribute):
    """`#stablehlo<fft_type FFT>`: which transform `fft` computes."""

    name = "stablehlo.fft_type"


@irdl_attr_definition
class PrecisionAttr(EnumAttribute[Precision], SpacedOpaqueSyntaxAttribute):
    name = "stablehlo.precision"


@irdl_attr_definition
class ComparisonDirectionAttr(EnumAttribute[ComparisonDirection], SpacedOpaqueSyntaxAttribute):
    name = "stablehlo.comparison_direction"


@irdl_attr_definition
class ComparisonTypeAttr(EnumAttribute[ComparisonType], SpacedOpaqueSyntaxAttribute):
    name = "stablehlo.comparison_type"


def int_attr(value: int) -> IntegerAttr:
    """`value` as an i64 attribute; ValueError when it is not an integer."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"expected an integer, got '{value}'")
    return IntegerAttr(value, i64)


def int_array(values: Sequence[int]) -> DenseArrayBase:
    """`values` as an i64 array; ValueError (a located parse error) when one is not an integer."""
    items = list(values)
    for v in items:
        if not isinstance(v, int) or isinstance(v, bool):
            raise ValueError(f"expected an integer, got '{v}'")
    return DenseArrayBase.from_list(i64, items)


class DimensionNumbersAttr(ParametrizedAttribute):
    """A struct of named integer-list or integer fields (`FIELDS`)."""

    fields: DictionaryAttr
    FIELDS: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def from_fields(cls, **values: Sequence[int] | int):
        unknown = [k for k in values if k not in cls.FIELDS]
        if unknown:
            raise ValueError(f"#{cls.name} has no field '{unknown[0]}'")
        data = {k: IntegerAttr(v, i64) if isinstance(v, int) else int_array(v) for k, v in values.items()}
        return cls(DictionaryAttr(data))

    def ints(self, field: str) -> tuple[int, ...]:
        """The list field `field` (empty when absent)."""
        value = self.fields.data.get(field)
        return tuple(value.get_values()) if isinstance(value, DenseArrayBase) else ()

    def int(self, field: str, default: int = 0) -> int:
        value = self.fields.data.get(field)
        return value.value.data if isinstance(value, IntegerAttr) else default

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        return [cls._parse_fields(parser).fields]

    @classmethod
    def _parse_fields(cls, parser: AttrParser):
        values: dict[str, Sequence[int] | int] = {}

        def field() -> None:
            start = parser.pos
            key = parser.parse_identifier()
            if key not in cls.FIELDS:
                parser.raise_error(f"#{cls.name} has no field '{key}'", start, parser.pos)
            parser.parse_punctuation("=")
            if parser.parse_optional_punctuation("[") is not None:
                items: list[int] = []
                if parser.parse_optional_punctuation("]") is None:
                    items.append(parser.parse_integer())
                    while parser.parse_optional_punctuation(",") is not None:
                        items.append(parser.parse_integer())
                    parser.parse_punctuation("]")
                values[key] = items
            else:
                values[key] = parser.parse_integer()

        with parser.in_angle_brackets():
            raw = parser.parse_optional_keyword("raw") is not None
            if raw or not cls._parse_compact(parser, values):
                parser.parse_comma_separated_list(parser.Delimiter.NONE, field)
        return cls.from_fields(**values)

    @classmethod
    def _parse_compact(cls, parser: AttrParser, values: dict[str, Sequence[int] | int]) -> bool:
        return False

    def print_parameters(self, printer: Printer) -> None:
        parts = []
        for key, value in self.fields.data.items():
            text = f"[{', '.join(map(str, value.get_values()))}]" if isinstance(value, DenseArrayBase) else str(
                value.value.data  # type: ignore[union-attr]
            )
            parts.append(f"{key} = {text}")
        printer.print_string(f"<{self._raw_prefix()}{', '.join(parts)}>")

    def _raw_prefix(self) -> str:
        return ""


@irdl_attr_definition
class DotAttr(DimensionNumbersAttr):
    name = "stablehlo.dot"
    FIELDS = (
        "lhs_batching_dimensions",
        "rhs_batching_dimensions",
        "lhs_contracting_dimensions",
        "rhs_contracting_dimensions",
    )


@irdl_attr_definition
class GatherAttr(DimensionNumbersAttr):
    name = "stablehlo.gather"
    FIELDS = (
        "offset_dims",
        "collapsed_slice_dims",
        "operand_batching_dims",
        "start_indices_batching_dims",
        "start_index_map",
        "index_vector_dim",
    )


@irdl_attr_definition
class ScatterAttr(DimensionNumbersAttr):
    name = "stablehlo.scatter"
    FIELDS = (
        "update_window_dims",
        "inserted_window_dims",
        "input_batching_dims",
        "scatter_indices_batching_dims",
        "scatter_dims_to_operand_dims",
        "index_vector_dim",
    )


_CONV_GROUPS = (
    ("input", ("b", "f"), ("input_batch_dimension", "input_feature_dimension"), "input_spatial_dimensions"),
    ("kernel", ("i", "o"), ("kernel_input_feature_dimension", "kernel_output_feature_dimension"),
     "kernel_spatial_dimensions"),
    ("output", ("b", "f"), ("output_batch_dimension", "output_feature_dimension"), "output_spatial_dimensions"),
)


@irdl_attr_definition
class ConvAttr(DimensionNumbersAttr):
    """The roles of a convolution's dimensions: `[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]`
    lists, for each input, kernel and output dimension in order, its role (batch,
    feature, input/output feature, or the spatial dimension's number)."""

    name = "stablehlo.conv"
    FIELDS = tuple(f for _, _, named, spatial in _CONV_GROUPS for f in (*named, spatial))

    @classmethod
    def _parse_compact(cls, parser: AttrParser, values: dict[str, Sequence[int] | int]) -> bool:
        if parser._current_token.text != "[":  # pyright: ignore[reportPrivateUsage]
            return False
        for k, (_, letters, named, spatial_name) in enumerate(_CONV_GROUPS):
            if k == 1:
                parser.parse_keyword("x")
            if k == 2:
                parser.parse_punctuation("->")
            roles: list[str] = []

            def role() -> None:
                if (n := parser.parse_optional_integer()) is not None:
                    roles.append(str(n))
                else:
                    roles.append(parser.parse_identifier())

            parser.parse_comma_separated_list(parser.Delimiter.SQUARE, role)
            spatial: dict[int, int] = {}
            for pos, r in enumerate(roles):
                if r in letters:
                    values[named[letters.index(r)]] = pos
                elif r.isdigit():
                    spatial[int(r)] = pos
                else:
                    parser.raise_error(f"#stablehlo.conv: unknown dimension role '{r}'")
            values[spatial_name] = [spatial[i] for i in sorted(spatial)]
        return True

    def _raw_prefix(self) -> str:
        return "raw "


STABLEHLO_ATTRIBUTES = [
    PrecisionAttr,
    TransposeAttr,
    FftTypeAttr,
    ComparisonDirectionAttr,
    ComparisonTypeAttr,
    DotAttr,
    GatherAttr,
    ScatterAttr,
    ConvAttr,
]
