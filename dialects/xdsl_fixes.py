"""dfc's fixes to xDSL 0.74, as subclasses and functions of its own.

Importing dfc changes nothing in xDSL (`tests/test_xdsl_untouched.py` checks
it): each fix below is a class or function dfc uses instead of xDSL's, and
names the upstream xDSL behaviour it works around, so that it can go when
xDSL fixes it. The one patch dfc cannot avoid (location inheritance on
insertion) is in `compiler/locations.py`, applied only while a
`PassManager` runs.

Parsing: `DfcParser` (with its lexer `DfcLexer`), the base of
`diagnostics.LocatingParser`, which `compiler.parsing.parse_module` (every
dfc entry point that reads MLIR text) uses.

* `dense<0xFF800000> : tensor<4xf32>`: MLIR reads a hexadecimal element of a
  float dense literal (or part of a complex one) as the bit pattern of the float (here -inf), and xDSL
  prints non-finite splats that way, but xDSL 0.74 parses it as the integer
  4286578688 converted to float, so a printed -inf does not round-trip. The
  fix reinterprets hexadecimal float elements as bits, as MLIR does (bf16
  included: the upper half of an f32; the 4-, 6- and 8-bit floats by their
  types' own codecs).
* An unterminated string literal made xDSL's lexer backtrack exponentially
  (`"(?:[^"...]+|...)*"`: exponential in the literal's length); the
  string pattern here has one way to match each character and a possessive
  repetition, so a failed match is linear.
* A float literal out of its type's range (`1.0e308 : f32`, also as a dense
  element), or a real element of a complex literal, is a parse error (xDSL
  raised `OverflowError` or failed an assertion).
* A splat literal (`dense<1.0> : tensor<4096x4096xf32>`, or a hexadecimal
  string of one element) holds its one element (`splat_attr`), where xDSL
  packs it once per element of the type; shapes, and literals listing more
  elements than `dialects.limits` allows, are parse errors.

Attributes: splat constants keep one element from the builders
(`df_builders.splat`) and the parser to the LLVM IR (`bufferize` fills a
buffer with it), so no stage's work grows with a tensor's size: the splat
form is a `DenseIntOrFPElementsAttr` of the full type holding one element,
which xDSL verifies and prints as `dense<v>` (`splat_attr`; `splat_element`
reads it; `dense_values` repeats it for the few readers of every element).
`is_splat(attr)` answers at once for it, and for other literals compares the
raw bytes shifted by one element, where `DenseIntOrFPElementsAttr.is_splat`
unpacks every element into a Python object. `DfcPrinter` (and
`module_text(op)`, `str(op)` with it) prints a splat dense literal from its
first element, where xDSL's printer unpacks every element and asks
`is_splat`; the engine keys its cache by that text, the pass manager's dumps
and opt-tool print with it.

Dialects: `ARITH`, xDSL's arith dialect plus `arith.remf` (`RemFOp`), which
xDSL 0.74 lacks (MLIR's C `fmod`: the remainder of `lhs / rhs` with the sign
of `lhs`; the LLVM backend emits `frem`). `compiler.context` loads it in
place of xDSL's `Arith`.

Passes: `CanonicalizePass`, `CommonSubexpressionElimination` and
`DeadCodeElimination` are registered under xDSL's names (`canonicalize`,
`cse`, `dce`) in dfc's pass registry (`passes.XDSL_REPLACEMENTS`); they give
xDSL's answers, faster:

* Dead-code elimination (in every `canonicalize` and `cse`) asks of each op
  whether it would be dead without uses: xDSL's `result_only_effects`
  collects every effect of every op nested in it first, so a loop nest was
  walked whole once per op above it, on every round (quadratic in the
  nesting depth).
  `result_only_effects` here stops at the first effect that answers;
  `is_trivially_dead` and `region_dce` use it.
* `canonicalize` and dead-code elimination asked each op's class for its
  traits (terminator, symbol, effects, folder, patterns: scans of the
  class's trait set) on every visit of every round, and `canonicalize`
  built a pattern applier per op; here a class's answers are looked up once
  (`op_effects.op_class`): a third less time for the same IR.
* xDSL's `cse` keys ops by a hash that ignores their regions, so all maps
  over one space with the same (CSE'd) `tensor.empty` outputs collide and
  are compared structurally pairwise: quadratic in the maps of a block. The hash here also covers a
  fingerprint of the regions: the nested ops' names and the values they use
  from outside, which structurally equivalent ops share.
"""

from __future__ import annotations

import functools
import io
import math
import re
import struct
from dataclasses import dataclass, field
from typing import Any

from xdsl.context import Context
from xdsl.dialects.arith import Arith, FloatingPointLikeBinaryOperation
from xdsl.dialects.builtin import (
    BFloat16Type,
    BytesAttr,
    ComplexType,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    ModuleOp,
    RankedStructure,
    ReducedPrecisionFloatType,
)
from xdsl.folder import Folder
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import irdl_op_definition, traits_def
from xdsl.parser import Parser
from xdsl.parser.attribute_parser import AttrParser
from xdsl.parser.generic_parser import ParserState
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriterListener,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.printer import Printer
from xdsl.rewriter import Rewriter
from xdsl.traits import (
    IsolatedFromAbove,
    Pure,
)
from xdsl.transforms import canonicalize as xdsl_canonicalize
from xdsl.transforms import common_subexpression_elimination as xdsl_cse
from xdsl.transforms import dead_code_elimination as xdsl_dce
from xdsl.utils.lexer import Input, Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

from dfc.dialects.limits import dense_problem, shape_problem
from dfc.dialects.op_effects import EffectsKind, effects_kind, is_trivially_dead, op_class, would_be_trivially_dead

# -- parsing ------------------------------------------------------------------------------


class DfcLexer(MLIRLexer):
    """xDSL's MLIR lexer with a string pattern that fails in linear time.

    Upstream: `MLIRLexer._unescaped_characters_regex` nests a `+` inside a
    `*` (`"(?:[^"\\\\...]+|\\\\...)*"`), so an unterminated string literal
    backtracks exponentially in its length."""

    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')


_BIT_FORMATS = {
    Float16Type: ("<H", "<e"),
    BFloat16Type: ("<H", ""),
    Float32Type: ("<I", "<f"),
    Float64Type: ("<Q", "<d"),
}


class DfcParser(Parser):
    """xDSL's parser, reading with `DfcLexer`, with the checks and the
    hexadecimal float elements described in this module's docstring."""

    def __init__(self, ctx: Context, input: str | bytes, name: str = "<unknown>") -> None:
        super().__init__(ctx, "", name)
        text = input.decode("utf-8") if isinstance(input, bytes) else input
        self._parser_state = ParserState(DfcLexer(Input(text, name)))

    class _TensorLiteralElement(AttrParser._TensorLiteralElement):  # pyright: ignore[reportPrivateUsage]
        """An element of a dense literal; `to_type` as MLIR converts it.

        Upstream: xDSL converts a hexadecimal element of a float literal as an
        integer (MLIR: a bit pattern), lets an out-of-range float become inf
        (`OverflowError` when packed later), and asserts that an element of a
        complex literal is a pair."""

        def to_type(self, parser: AttrParser, type):  # type: ignore[no-untyped-def]
            if isinstance(type, ComplexType) and not isinstance(self.value, tuple):
                parser.raise_error(f"expected a (real, imaginary) pair for an element of {type}", at_position=self.span)
            if isinstance(type, ComplexType) and type.element_type.__class__ in _BIT_FORMATS:
                texts = self.span.text.strip().removeprefix("(").removesuffix(")").split(",")
                re_part, im_part = (self._float(parser, text.strip(), value, type.element_type)
                                    for text, value in zip(texts, self.value))  # type: ignore[arg-type]
                return re_part, im_part
            if (value := self._float(parser, self.span.text, self.value, type)) is not None:
                return value
            return super().to_type(parser, type)

        def _float(self, parser: AttrParser, text: str, value, type):  # type: ignore[no-untyped-def]
            """`value` (whose literal is `text`) as an element of float `type` (a hexadecimal literal
            is a bit pattern, a value out of range an error); None when `type` is not a float type."""
            digits = text.lstrip("-").lower()
            if isinstance(type, ReducedPrecisionFloatType) and digits.startswith("0x") and isinstance(value, int):
                if text.startswith("-") or value >= 1 << type.bitwidth:
                    parser.raise_error(f"hexadecimal literal does not fit {type}", at_position=self.span)
                return type.decode_bits(value)
            formats = _BIT_FORMATS.get(type.__class__)
            if formats is None:
                return None
            if digits.startswith("0x") and isinstance(value, int):
                if text.startswith("-"):
                    parser.raise_error("hexadecimal float literal cannot be negative", at_position=self.span)
                int_format, float_format = formats
                try:
                    if isinstance(type, BFloat16Type):  # the upper half of an f32
                        return struct.unpack("<f", b"\0\0" + struct.pack("<H", value))[0]
                    return struct.unpack(float_format, struct.pack(int_format, value))[0]
                except struct.error:
                    parser.raise_error(f"hexadecimal literal does not fit {type}", at_position=self.span)
            if isinstance(value, tuple):
                parser.raise_error("No conversion from complex to float", at_position=self.span)
            value = float(value)
            if math.isfinite(value):
                try:
                    type.pack([value])
                except (OverflowError, struct.error):
                    parser.raise_error(f"floating point value too large for {type}", at_position=self.span)
            return value

    def _parse_optional_complex(self):  # type: ignore[no-untyped-def]
        """A `(real, imaginary)` element of a complex literal.

        Upstream: xDSL refuses a pair of an integer and a float, which is how MLIR prints a
        hexadecimal (bit pattern) part next to a decimal one (JAX's complex -inf init:
        `(0xFFF0000000000000,0.000000e+00)`); here a hexadecimal part may pair with a float
        (`to_type` reads its bits)."""
        if self._current_token.kind != MLIRTokenKind.L_PAREN:  # pyright: ignore[reportPrivateUsage]
            return None
        start = self._consume_token(MLIRTokenKind.L_PAREN).span.start  # pyright: ignore[reportPrivateUsage]
        parts = [self._parse_bool_int_or_float()]
        self.parse_punctuation(",")
        parts.append(self._parse_bool_int_or_float())
        if type(parts[0][0]) is not type(parts[1][0]) and not all(
                isinstance(v, float) or type(v) is int and span.text.lstrip("-").lower().startswith("0x")
                for v, span in parts):
            self.raise_error("Complex value must be either (float, float) or (int, int)")
        end = self._consume_token(MLIRTokenKind.R_PAREN).span.end  # pyright: ignore[reportPrivateUsage]
        return (parts[0][0], parts[1][0]), Span(start, end, self.lexer.input)

    def _span_from(self, start: int) -> Span:
        return Span(start, self._current_token.span.start, self.lexer.input)  # pyright: ignore[reportPrivateUsage]

    def parse_ranked_shape(self):  # type: ignore[no-untyped-def]
        """Upstream: xDSL accepts any size, and a later dense literal of it
        builds a list of every element."""
        start = self._current_token.span.start  # pyright: ignore[reportPrivateUsage]
        dims, type = super().parse_ranked_shape()
        if (problem := shape_problem(dims)) is not None:
            self.raise_error(problem, self._span_from(start))
        return dims, type

    def parse_dense_int_or_fp_elements_attr(self, type):  # type: ignore[no-untyped-def]
        """A dense literal; a splat (`dense<v>`, or a hexadecimal string of
        one element) in the splat form of `splat_attr`, and a literal of more
        elements than `dialects.limits` allows a located error.

        Upstream: xDSL expands a splat to every element of its type, however
        many (a list and a packed copy of 16 M floats for a 4096x4096 zero)."""
        self.parse_punctuation("<", " in dense attribute")
        contents: tuple[list, list[int]] | str | None = None
        if self.parse_optional_punctuation(">") is None:
            contents = self.parse_optional_str_literal()
            if contents is None:
                contents = self._parse_tensor_literal()
            self.parse_punctuation(">", " in dense attribute")
        if type is None:
            self.parse_punctuation(":", " in dense attribute")
        start = self._current_token.span.start  # pyright: ignore[reportPrivateUsage]
        if type is None:
            type = self._parse_dense_literal_type()
        count = math.prod(type.get_shape())
        if isinstance(contents, str):
            try:
                data = bytes.fromhex(contents[2:])
            except ValueError:
                self.raise_error("Hex string in denseAttr is invalid")
            if len(data) == type.element_type.compile_time_size:
                return DenseIntOrFPElementsAttr(type, BytesAttr(data if count else b""))
        elif contents is not None and not contents[1]:
            return splat_attr(type, contents[0][0].to_type(self, type.element_type))
        if (problem := dense_problem(type.get_shape())) is not None:
            self.raise_error(problem, self._span_from(start))
        if isinstance(contents, str):
            attr = DenseIntOrFPElementsAttr(type, BytesAttr(data))
            if len(attr) != count:
                self.raise_error(f"Shape mismatch in dense literal. Expected {count} elements from the type, "
                                 f"but got {len(attr)} elements.")
            return attr
        if contents is None:
            if count != 0:
                self.raise_error("Expected at least one element in the dense literal, but got None")
            return DenseIntOrFPElementsAttr.from_list(type, [])
        elements, shape = contents
        if list(type.get_shape()) != shape:
            self.raise_error(f"Shape mismatch in dense literal. Expected {list(type.get_shape())} shape from the "
                             f"type, but got {shape} shape.")
        return DenseIntOrFPElementsAttr.from_list(type, [e.to_type(self, type.element_type) for e in elements])

    def parse_optional_builtin_int_or_float_attr(self):  # type: ignore[no-untyped-def]
        """Upstream: `1.0e308 : f32` raises `OverflowError` out of the parser."""
        start = self._current_token.span.start  # pyright: ignore[reportPrivateUsage]
        try:
            return super().parse_optional_builtin_int_or_float_attr()
        except OverflowError:
            self.raise_error("floating point value too large for its type", Span(start, self.pos, self.lexer.input))


# -- attributes ---------------------------------------------------------------------------


def splat_attr(type: RankedStructure, value: float | int) -> DenseIntOrFPElementsAttr:
    """The dense literal of `type` with every element `value`, holding that
    one element (the splat form dfc builds and parses; xDSL accepts it, and
    prints it as `dense<value>`), whatever the number of elements (none for
    a type of no elements).

    Upstream: `DenseIntOrFPElementsAttr.from_list(type, [value])` packs the
    element once per element of `type` (64 MB for a 4096x4096 f32 zero)."""
    element = type.get_element_type()
    if isinstance(element, IntegerType):
        value = element.get_normalized_value(int(value))
    elif isinstance(element, IndexType):
        value = int(value)
    data = element.pack([value]) if math.prod(type.get_shape()) else b""  # pyright: ignore[reportArgumentType]
    return DenseIntOrFPElementsAttr(type, BytesAttr(data))


def is_splat(attr: DenseIntOrFPElementsAttr) -> bool:
    """Whether every element of `attr` is the same (`attr.is_splat()`): at
    once for the splat form, else in time linear in its bytes, without
    unpacking them.

    Upstream: `DenseIntOrFPElementsAttr.is_splat` unpacks every element into
    a Python object and counts the first."""
    if len(attr.data.data) == attr.get_element_type().compile_time_size:
        return True
    return _all_elements_equal(attr.data.data, math.prod(attr.get_shape()))


def splat_element(attr: DenseIntOrFPElementsAttr) -> Any:
    """The value every element of `attr` holds when it is a splat (its first
    element), else None; None too for a literal of no elements."""
    if not attr.data.data or not is_splat(attr):
        return None
    return next(attr.iter_values())


def dense_values(attr: DenseIntOrFPElementsAttr) -> tuple:
    """Every element of `attr` in row-major order (`attr.get_values()`, the
    splat form's element repeated): for small literals whose elements are
    read one by one (padding widths)."""
    values = attr.get_values()
    n = math.prod(attr.get_shape())
    return values * n if len(values) == 1 else values


@functools.lru_cache(maxsize=64)
def _all_elements_equal(data: bytes, n: int) -> bool:
    """Whether the `n` equal-sized elements packed in `data` are all equal
    (cached: canonicalize asks again for every use of a large constant)."""
    if n <= 1:
        return True
    k = len(data) // n
    return data[k:] == data[:-k]


class DfcPrinter(Printer):
    """xDSL's printer; a splat dense literal is printed from its first element.

    Upstream: `DenseIntOrFPElementsAttr.print_without_type` unpacks every
    element and asks `is_splat` (unpacking them again) before printing one."""

    def print_attribute(self, attribute: Attribute) -> None:
        if isinstance(attribute, DenseIntOrFPElementsAttr) and len(attribute) > 0 and is_splat(attribute):
            self.print_string("dense<")
            attribute._print_one_elem(next(attribute.iter_values()), self)  # pyright: ignore[reportPrivateUsage]
            self.print_string("> : ")
            self.print_attribute(attribute.get_type())
            return
        super().print_attribute(attribute)


def module_text(op: Operation) -> str:
    """`str(op)`, printed by `DfcPrinter`."""
    out = io.StringIO()
    DfcPrinter(stream=out).print_op(op)
    return out.getvalue()


# -- dialects -----------------------------------------------------------------------------


@irdl_op_definition
class RemFOp(FloatingPointLikeBinaryOperation):
    """The remainder of `lhs / rhs`, with the sign of `lhs` (C `fmod`)."""

    name = "arith.remf"

    traits = traits_def(Pure())


ARITH = Dialect(
    "arith",
    [*Arith.operations, RemFOp],
    [*Arith.attributes],
    list(Arith._interfaces),  # pyright: ignore[reportPrivateUsage]
)
"""xDSL's arith dialect and `arith.remf` (upstream: xDSL 0.74 has no `remf`)."""


# -- dead-code elimination ----------------------------------------------------------------


class _LiveSet(xdsl_dce.LiveSet):
    def propagate_op_liveness(self, op: Operation) -> None:
        # A live user decides first: the ops are visited users first (each
        # block in reverse), and the dead-op test walks the op's regions.
        for region in op.regions:
            self.propagate_region_liveness(region)
        if self.is_live(op):
            return
        if any(self.is_live(use.operation) for result in op.results for use in result.uses) or not (
            would_be_trivially_dead(op)
        ):
            self.set_live(op)


def region_dce(region: Region, listener: PatternRewriterListener | None = None) -> bool:
    """xDSL's `region_dce`, with `would_be_trivially_dead` above."""
    live_set = _LiveSet()
    while live_set.changed:
        live_set.changed = False
        live_set.propagate_region_liveness(region)
    live_set.delete_dead(region, listener)
    return live_set.changed


class DeadCodeElimination(xdsl_dce.DeadCodeElimination):
    """xDSL's `dce`, with `region_dce` above."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        region_dce(op.body)


# -- canonicalize -------------------------------------------------------------------------


@dataclass(eq=False, repr=False)
class _Canonicalize(RewritePattern):
    """What xDSL's `canonicalize` does to one op, with the dead-code test
    above and the op's class looked up once (`op_effects.op_class`): erase the op if
    it is trivially dead, else fold it (`ctx` materialises constants), else
    apply its canonicalization patterns in order until one acts."""

    ctx: Context
    changed: bool = False
    """Whether an op was changed since `dce_if_changed` last ran."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        self._rewrite(op, rewriter)
        self.changed |= rewriter.has_done_action

    def _rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if is_trivially_dead(op):
            rewriter.erase(op)
            return
        info = op_class(op)
        if info.foldable:
            folded = Folder(self.ctx).try_fold(op)
            if folded is not None:
                folded_values, folded_ops = folded
                rewriter.replace(op, new_ops=folded_ops, new_results=folded_values)
                return
        for pattern in info.patterns:
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return

    def dce_if_changed(self, region: Region, listener: PatternRewriterListener | None = None) -> bool:
        """`region_dce` after a round of the walk that changed an op. After a
        round that changed nothing it would find nothing: every op was just
        found not trivially dead, and an op that is dead only through its
        users would have a chain of dead users ending in one without uses
        (use-def chains have no cycles in SSA regions)."""
        if not self.changed:
            return False
        self.changed = False
        return region_dce(region, listener)


class CanonicalizePass(xdsl_canonicalize.CanonicalizePass):
    """xDSL's `canonicalize`, with the dead-code tests above."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pattern = _Canonicalize(ctx)
        PatternRewriteWalker(pattern, post_walk_func=pattern.dce_if_changed).rewrite_module(op)


# -- common subexpression elimination -----------------------------------------------------


def _region_fingerprint(op: Operation) -> int:
    """A hash of what structural equivalence compares in `op`'s regions: each
    nested op's name, and the values it uses that are defined outside `op`."""
    inner_ops = [inner for region in op.regions for inner in region.walk()]
    inside: set[SSAValue] = {r for inner in [op, *inner_ops] for r in inner.results}
    inside.update(a for region in op.regions for block in region.blocks for a in block.args)
    inside.update(a for inner in inner_ops for region in inner.regions for block in region.blocks for a in block.args)
    parts: list[object] = []
    for inner in inner_ops:
        parts.append(inner.name)
        parts.extend(v for v in inner.operands if v not in inside)
    return hash(tuple(parts))


class OperationInfo(xdsl_cse.OperationInfo):
    """xDSL's CSE key, its hash also covering the op's regions.

    Upstream: `OperationInfo.__hash__` ignores regions, so ops that differ
    only in their regions collide and are compared structurally pairwise.
    The hash is computed once per key (upstream's `__eq__` hashes both sides
    again, and the fingerprint walks the regions)."""

    @functools.cached_property
    def _hash(self) -> int:
        if not self.op.regions:
            return super().__hash__()
        return hash((super().__hash__(), _region_fingerprint(self.op)))

    def __hash__(self) -> int:
        return self._hash


class _KnownOps(xdsl_cse.KnownOps):
    """xDSL's `KnownOps`, keyed by `OperationInfo` above."""

    def __getitem__(self, k: Operation) -> Operation:
        return self._known_ops[OperationInfo(k)]

    def __setitem__(self, k: Operation, v: Operation) -> None:
        self._known_ops[OperationInfo(k)] = v

    def __contains__(self, k: Operation) -> bool:
        return OperationInfo(k) in self._known_ops

    def get(self, k: Operation, default=None):  # type: ignore[no-untyped-def]
        return self._known_ops.get(OperationInfo(k), default)

    def pop(self, k: Operation) -> Operation:
        return self._known_ops.pop(OperationInfo(k))

    def known_or_add(self, k: Operation) -> Operation | None:
        """The known op equal to `k`, else None after recording `k` (one key, hashed once)."""
        key = OperationInfo(k)
        existing = self._known_ops.get(key)
        if existing is None:
            self._known_ops[key] = k
        return existing


@dataclass
class _CSEDriver(xdsl_cse.CSEDriver):
    """xDSL's CSE driver with `_KnownOps` and `is_trivially_dead` above (its
    scoping methods copied from xDSL 0.74, which names `KnownOps` and
    `is_trivially_dead` directly)."""

    _known_ops: _KnownOps = field(default_factory=_KnownOps)

    def _simplify_operation(self, op: Operation) -> None:
        info = op_class(op)
        if info.terminator:
            return
        if is_trivially_dead(op):
            self._mark_erasure(op)
            return
        if any(len(region.blocks) > 1 for region in op.regions):
            return
        if not info.no_effects and (kind := effects_kind(op)) is not EffectsKind.NONE:
            if kind is not EffectsKind.READS:
                return
            existing = self._known_ops.get(op)
            if (
                existing is not None
                and op.parent_block() is existing.parent_block()
                and not xdsl_cse.has_other_side_effecting_op_in_between(existing, op)
            ):
                self._replace_and_delete(op, existing)
                return
            self._known_ops[op] = op
            return
        if existing := self._known_ops.known_or_add(op):
            self._replace_and_delete(op, existing)

    def _replace_and_delete(self, op: Operation, existing: Operation) -> None:
        """MLIR's `replaceUsesAndDelete`: where values dominate their uses, no
        user of `op` has been visited, so every use goes to `existing` and `op`
        is erased. Upstream xDSL asks of each user whether an equal op is known
        (a region fingerprint per user with regions: half of `cse` on a ResNet
        gradient), which MLIR does only in graph regions: a module's body."""
        if isinstance(op.parent_op(), ModuleOp):
            super()._replace_and_delete(op, existing)
            return
        for old, new in zip(op.results, existing.results, strict=True):
            old.replace_all_uses_with(new)
        self._mark_erasure(op)

    def _simplify_block(self, block: Block) -> None:
        for op in block.ops:
            if op.regions:
                if op.has_trait(IsolatedFromAbove, value_if_unregistered=True):
                    old_scope = self._known_ops
                    self._known_ops = _KnownOps()
                    for region in op.regions:
                        self._simplify_region(region)
                    self._known_ops = old_scope
                else:
                    for region in op.regions:
                        self._simplify_region(region)
            self._simplify_operation(op)

    def _simplify_region(self, region: Region) -> None:
        if len(region.blocks) == 1:
            old_scope = self._known_ops
            self._known_ops = _KnownOps(self._known_ops)
            self._simplify_block(region.block)
            self._known_ops = old_scope


def cse(thing: Operation | Block | Region, rewriter: Rewriter | PatternRewriter | None = None) -> None:
    """xDSL's `cse`, with the driver above."""
    driver = _CSEDriver() if rewriter is None else _CSEDriver(_rewriter=rewriter)
    driver.simplify(thing)


class CommonSubexpressionElimination(xdsl_cse.CommonSubexpressionElimination):
    """xDSL's `cse`, with the region-aware hash and the dead-code test above."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        cse(op)
