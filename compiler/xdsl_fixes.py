"""Fixes to xDSL 0.74 behaviour the project depends on, applied on import.

* `dense<0xFF800000> : tensor<4xf32>`: MLIR reads a hexadecimal element of a
  float dense literal as the bit pattern of the float (here -inf), and xDSL
  prints non-finite splats that way, but xDSL 0.74 parses it as the integer
  4286578688 converted to float, so a printed -inf does not round-trip. The
  fix reinterprets hexadecimal float elements as bits, as MLIR does (bf16
  included: the upper half of an f32).
* `DenseIntOrFPElementsAttr.is_splat` unpacks every element into a Python
  object (seconds for a 2048x2048 zero tensor, which autodiff creates); the
  replacement compares the raw bytes shifted by one element.
* An unterminated string literal made xDSL's lexer backtrack exponentially
  (`"(?:[^"...]+|...)*"`: 27 characters took 15 s, 40 never ended); the
  string pattern here has one way to match each character and a possessive
  repetition, so a failed match is linear.
* A float literal out of its type's range (`1.0e308 : f32`, also as a dense
  element), or a real element of a complex literal, is a parse error (xDSL
  raised `OverflowError` or failed an assertion).
* Shapes and dense literals beyond `compiler.limits` are parse errors at the
  type (xDSL would build a list of 2**32 elements for
  `dense<1.0> : tensor<4294967296xf32>`).
* `cse` keys ops by a hash that ignores their regions, so all maps over one
  space with the same (CSE'd) `tensor.empty` outputs collide and are compared
  structurally pairwise: quadratic in the maps of a block (13 s of 35 for a
  gradient of 60 stencil maps). The hash now also covers a fingerprint of the
  regions: the nested ops' names and the values they use from outside, which
  structurally equivalent ops share.
* Dead-code elimination (in every `canonicalize`) asks of each op whether it
  would be dead without uses: xDSL collects every effect of every op nested
  in it first, so a loop nest was walked whole once per op above it, on every
  round (5.9 s of a ResNet gradient's 25 s compile was the `canonicalize` after
  lowering). `_result_only_effects` stops at the first effect that answers.
* xDSL 0.74 has no `arith.remf` (MLIR's C `fmod`: the remainder of
  `lhs / rhs` with the sign of `lhs`); `RemFOp` defines it in the arith
  dialect (the LLVM backend emits `frem`).
"""

from __future__ import annotations

import functools
import math
import re
import struct

from xdsl.dialects.arith import Arith, FloatingPointLikeBinaryOperation
from xdsl.dialects.builtin import (
    BFloat16Type,
    ComplexType,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.irdl import irdl_op_definition, traits_def
from xdsl.parser.attribute_parser import AttrParser
from xdsl.traits import MemoryEffect, MemoryEffectKind, Pure, RecursiveMemoryEffect
from xdsl.transforms import dead_code_elimination
from xdsl.transforms.common_subexpression_elimination import OperationInfo
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRLexer

from dfc.compiler.limits import dense_problem, shape_problem

MLIRLexer._unescaped_characters_regex = re.compile(  # pyright: ignore[reportPrivateUsage]
    r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"'
)

_BIT_FORMATS = {
    Float16Type: ("<H", "<e"),
    BFloat16Type: ("<H", ""),
    Float32Type: ("<I", "<f"),
    Float64Type: ("<Q", "<d"),
}

_Element = AttrParser._TensorLiteralElement  # pyright: ignore[reportPrivateUsage]
_original_to_type = _Element.to_type


def _to_type(self: _Element, parser: AttrParser, type):  # type: ignore[no-untyped-def]
    formats = _BIT_FORMATS.get(type.__class__)
    text = self.span.text.lstrip("-").lower()
    if formats is not None and text.startswith("0x") and isinstance(self.value, int):
        if self.is_negative:
            parser.raise_error("hexadecimal float literal cannot be negative", at_position=self.span)
        int_format, float_format = formats
        try:
            if isinstance(type, BFloat16Type):  # the upper half of an f32
                return struct.unpack("<f", b"\0\0" + struct.pack("<H", self.value))[0]
            return struct.unpack(float_format, struct.pack(int_format, self.value))[0]
        except struct.error:
            parser.raise_error(f"hexadecimal literal does not fit {type}", at_position=self.span)
    if isinstance(type, ComplexType) and not isinstance(self.value, tuple):
        parser.raise_error(f"expected a (real, imaginary) pair for an element of {type}", at_position=self.span)
    value = _original_to_type(self, parser, type)
    if isinstance(value, float) and math.isfinite(value) and type.__class__ in _BIT_FORMATS:
        try:
            type.pack([value])
        except (OverflowError, struct.error):
            parser.raise_error(f"floating point value too large for {type}", at_position=self.span)
    return value


_Element.to_type = _to_type  # type: ignore[method-assign]


def _is_splat(self: DenseIntOrFPElementsAttr) -> bool:
    return _all_elements_equal(self.data.data, math.prod(self.get_shape()))


@functools.lru_cache(maxsize=64)
def _all_elements_equal(data: bytes, n: int) -> bool:
    """Whether the `n` equal-sized elements packed in `data` are all equal
    (cached: canonicalize asks again for every use of a large constant)."""
    if n <= 1:
        return True
    k = len(data) // n
    return data[k:] == data[:-k]


DenseIntOrFPElementsAttr.is_splat = _is_splat  # type: ignore[method-assign]


_original_parse_ranked_shape = AttrParser.parse_ranked_shape


def _parse_ranked_shape(self: AttrParser):  # type: ignore[no-untyped-def]
    start = self._current_token.span.start  # pyright: ignore[reportPrivateUsage]
    dims, type = _original_parse_ranked_shape(self)
    if (problem := shape_problem(dims)) is not None:
        self.raise_error(problem, Span(start, self._current_token.span.start, self.lexer.input))  # pyright: ignore[reportPrivateUsage]
    return dims, type


AttrParser.parse_ranked_shape = _parse_ranked_shape  # type: ignore[method-assign]

_original_dense_literal_type = AttrParser._parse_dense_literal_type  # pyright: ignore[reportPrivateUsage]


def _parse_dense_literal_type(self: AttrParser):  # type: ignore[no-untyped-def]
    start = self._current_token.span.start  # pyright: ignore[reportPrivateUsage]
    type = _original_dense_literal_type(self)
    if (problem := dense_problem(type.get_shape())) is not None:
        self.raise_error(problem, Span(start, self._current_token.span.start, self.lexer.input))  # pyright: ignore[reportPrivateUsage]
    return type


AttrParser._parse_dense_literal_type = _parse_dense_literal_type  # type: ignore[method-assign]


_original_int_or_float_attr = AttrParser.parse_optional_builtin_int_or_float_attr


def _parse_optional_builtin_int_or_float_attr(self: AttrParser):  # type: ignore[no-untyped-def]
    start = self._current_token.span.start  # pyright: ignore[reportPrivateUsage]
    try:
        return _original_int_or_float_attr(self)
    except OverflowError:
        self.raise_error("floating point value too large for its type", Span(start, self.pos, self.lexer.input))


AttrParser.parse_optional_builtin_int_or_float_attr = _parse_optional_builtin_int_or_float_attr  # type: ignore[method-assign]


_original_info_hash = OperationInfo.__hash__


def _region_fingerprint(op: Operation) -> int:
    """A hash of what structural equivalence compares in `op`'s regions: each
    nested op's name, and the values it uses that are defined outside `op`."""
    parts: list[object] = []
    for region in op.regions:
        for inner in region.walk():
            parts.append(inner.name)
            for v in inner.operands:
                owner = v.owner
                where = owner.parent_op() if isinstance(owner, Block) else owner
                if where is not op and (where is None or not op.is_ancestor(where)):
                    parts.append(v)
    return hash(tuple(parts))


def _info_hash(self: OperationInfo) -> int:
    if not self.op.regions:
        return _original_info_hash(self)
    return hash((_original_info_hash(self), _region_fingerprint(self.op)))


OperationInfo.__hash__ = _info_hash  # type: ignore[method-assign]


_original_result_only_effects = dead_code_elimination.result_only_effects


def _result_only_effects(root: Operation) -> bool:
    """xDSL's `result_only_effects` (whether `root` affects nothing but its
    results: reads, and allocations of values defined inside it), decided by
    the first other effect found, where xDSL collects every effect of every
    nested op first. Ops with `RecursiveMemoryEffect` are looked into; any
    other effect trait answers for its op and what it holds."""

    def quiet(op: Operation) -> bool:
        interfaces = op.get_traits_of_type(MemoryEffect)
        if not interfaces:
            return False
        for interface in interfaces:
            if isinstance(interface, RecursiveMemoryEffect):
                if not all(quiet(child) for region in op.regions for block in region.blocks for child in block.ops):
                    return False
                continue
            effects = interface.get_effects(op)
            if effects is None or not all(
                e.kind == MemoryEffectKind.READ
                or (e.kind == MemoryEffectKind.ALLOC and isinstance(v := e.value, SSAValue) and root.is_ancestor(v.owner))
                for e in effects
            ):
                return False
        return True

    return quiet(root)


dead_code_elimination.result_only_effects = _result_only_effects


@irdl_op_definition
class RemFOp(FloatingPointLikeBinaryOperation):
    """The remainder of `lhs / rhs`, with the sign of `lhs` (C `fmod`)."""

    name = "arith.remf"

    traits = traits_def(Pure())


if RemFOp not in Arith._operations:  # pyright: ignore[reportPrivateUsage]
    Arith._operations.append(RemFOp)  # pyright: ignore[reportPrivateUsage]
