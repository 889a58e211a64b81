"""User-facing errors with MLIR-style `file:line:col: error: message` locations.

The parser stamps every op with a `FileLineColLoc` of where it was written, so
that a verifier, a pass or the engine can point back at the source line.
"""

from __future__ import annotations

import linecache
import re
from collections.abc import Iterable

from xdsl.dialects import tensor
from xdsl.dialects.builtin import (
    FileLineColLoc,
    Float80Type,
    Float128Type,
    IntAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Location, Span
from xdsl.utils.mlir_lexer import MLIRTokenKind

from dfc.dialects.dominance import dominance_problem
from dfc.dialects.xdsl_fixes import DfcParser


class CompileError(Exception):
    """An error in the user's program or command, with its source location.

    `str()` is `file:line:col: error: message`, followed, once `with_source`
    has found the location's line, by that line and a caret under the column,
    as mlir-opt prints diagnostics."""

    def __init__(self, message: str, location: str | None = None):
        super().__init__(message)
        self.message = message
        self.location = location
        self.source_line: str | None = None
        """The text of the location's line (set by `with_source`)."""

    def __str__(self) -> str:
        prefix = f"{self.location}: " if self.location else ""
        text = f"{prefix}error: {self.message}"
        position = _position(self.location)
        if self.source_line is not None and position is not None:
            indent = "".join(c if c == "\t" else " " for c in self.source_line[: position[2] - 1])
            text += f"\n{self.source_line}\n{indent}^"
        return text

    def with_source(self, text: str | None = None) -> CompileError:
        """Attach the line the location names: from `text` (the source that was
        compiled) when given, else from the file (`linecache`: also notebook cells
        and other sources the interpreter registered). Returns self."""
        position = _position(self.location)
        if position is None or self.source_line is not None:
            return self
        filename, line, _ = position
        if text is not None:
            lines = text.splitlines()
            found = lines[line - 1] if 0 < line <= len(lines) else ""
        else:
            found = linecache.getline(filename, line)
        if found.strip():
            self.source_line = found.rstrip("\r\n")
        return self

    @classmethod
    def at(cls, op: Operation | None, message: str) -> CompileError:
        """An error reported at `op`'s source location (or its nearest located parent's)."""
        return cls(message, location_of(op))


def _position(location: str | None) -> tuple[str, int, int] | None:
    """(file, line, column) of a `file:line:col` location, else None."""
    m = re.fullmatch(r"(.+):(\d+):(\d+)", location or "")
    return (m.group(1), int(m.group(2)), int(m.group(3))) if m and int(m.group(2)) > 0 else None


def location_of(op: Operation | None) -> str | None:
    """`file:line:col` of `op`, or of its closest enclosing op that has one."""
    while op is not None:
        loc = op.location
        if isinstance(loc, FileLineColLoc):
            return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
        op = op.parent_op()
    return None


UNSUPPORTED_TYPES = (Float80Type, Float128Type)
"""Types the parser rejects: no op of the compiler computes in them."""


class LocatingParser(DfcParser):
    """A parser that records each op's position as its `FileLineColLoc`, and
    says where a region is left open or an undefined value is used."""

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        """The module; a use of a value never defined is reported at that use."""
        self._first_uses: dict[str, Span] = {}
        self._open_regions: list[Span] = []
        try:
            return super().parse_module(allow_implicit_module)
        except ParseError as err:
            undefined = [self._first_uses[n] for n in self.forward_ssa_references if n in self._first_uses]
            if not err.msg.startswith("values used but not defined") or not undefined:
                raise
            span = min(undefined, key=lambda s: s.start)
            raise ParseError(span, f"use of undeclared SSA value name '{span.text}'") from None

    def resolve_operand(self, operand: UnresolvedOperand, type: Attribute) -> SSAValue:
        if operand.operand_name not in self.ssa_values:
            self._first_uses.setdefault(operand.operand_name, operand.span)
        return super().resolve_operand(operand, type)

    def parse_optional_region(self, arguments: Iterable[Parser.Argument] | None = None) -> Region | None:
        self._open_regions.append(self._current_token.span)
        try:
            return super().parse_optional_region(arguments)
        finally:
            self._open_regions.pop()

    def _parse_block(self) -> Block:
        """A labelled block; anything else where one may start means the region was not closed."""
        token = self._current_token
        if token.kind == MLIRTokenKind.EOF:
            opened = self._open_regions[-1].get_location() if self._open_regions else None
            where = f" opened at line {opened.line}, column {opened.col}" if opened else ""
            self.raise_error(f"end of input: expected '}}' closing the region{where}", token.span)
        if token.kind != MLIRTokenKind.CARET_IDENT:
            self.raise_error(f"expected an operation, a block label or '}}', got '{token.text}'", token.span)
        return super()._parse_block()

    def parse_operation(self) -> Operation:
        start = self._op_name_location()
        begin = self._current_token.span.start
        try:
            op = super().parse_operation()
        except ParseError as err:
            m = re.fullmatch(r"Operation (\S+) is not registered", err.msg)
            if m is None:
                raise
            name = m.group(1)
            dialect = name.split(".")[0]
            if dialect in self.ctx.registered_dialect_names or dialect in {d.name for d in self.ctx.loaded_dialects}:
                hint = f"the {dialect} dialect has no such op"
            else:
                hint = f"dialect '{dialect}' is not loaded; --allow-unregistered-dialect accepts it"
            raise ParseError(Span(begin, begin + 1, self.lexer.input), f"unregistered operation '{name}' ({hint})") from None
        except (VerifyException, ValueError, OverflowError) as err:  # raised building the op's attributes
            message = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise ParseError(Span(begin, self.pos, self.lexer.input), message) from err
        if not isinstance(op.location, FileLineColLoc):
            op.location = FileLineColLoc(
                StringAttr(start.file), IntAttr(start.line), IntAttr(int(start.col))
            )
        return op

    def parse_optional_type(self) -> Attribute | None:
        """Also rejects the types the compiler has no arithmetic for: `UNSUPPORTED_TYPES`
        and integers wider than 64 bits (xDSL cannot pack them into literals either)."""
        start = self._current_token.span.start
        t = super().parse_optional_type()
        if isinstance(t, UNSUPPORTED_TYPES) or (isinstance(t, IntegerType) and t.width.data > 64):
            self.raise_error(f"type {t} is not supported by dfc",
                             Span(start, self.pos, self.lexer.input))
        return t

    def _op_name_location(self) -> Location:
        """Where the op's name starts (after `%r = `), as MLIR reports it."""
        span = self._current_token.span
        text, pos = span.input.content, span.start
        if text.startswith("%", pos) and (eq := text.find("=", pos)) != -1:
            pos = eq + 1
            while pos < len(text) and text[pos].isspace():
                pos += 1
        return Span(pos, pos, span.input).get_location()


def parse_error(err: ParseError) -> CompileError:
    """The `CompileError` of an xDSL parse error, keeping its position."""
    return CompileError(err.msg, str(err.span.get_location()))


def verify_located(root: Operation) -> None:
    """Verify `root` and everything nested, raising a `CompileError` at the
    first op that does not verify (outermost first, as MLIR does); an operand
    that is undefined or does not dominate its use is checked first
    (`dialects.dominance`), as op verifiers may rely on it."""
    if (found := dominance_problem(root)) is not None:
        op, message = found
        raise CompileError.at(op, f"'{op.name}' op {message}")
    for op in root.walk():
        try:
            op.verify(verify_nested_ops=False)
        except (VerifyException, DiagnosticException) as err:
            cause = err.__cause__ if isinstance(err.__cause__, VerifyException) else err
            message = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
            raise CompileError.at(op, f"'{op.name}' op {message}") from None
        except Exception as err:  # xDSL's memref verifiers raise plain `Exception`
            if type(err) is not Exception:
                raise
            raise CompileError.at(op, f"'{op.name}' op {str(err).strip() or 'does not verify'}") from None
        if not op.has_trait(NoTerminator) and any(b.first_op is None for r in op.regions for b in r.blocks):
            raise CompileError.at(op, f"'{op.name}' op empty block: expect at least a terminator")
        if (message := _upstream_problem(op)) is not None:
            raise CompileError.at(op, f"'{op.name}' op {message}")


def _upstream_problem(op: Operation) -> str | None:
    """What dfc requires of an upstream op that xDSL's verifier does not check
    (the index analysis relies on it)."""
    if isinstance(op, tensor.EmptyOp):
        dynamic = sum(d < 0 for d in op.tensor.type.get_shape())
        if len(op.dynamic_sizes) != dynamic:
            return f"expected {dynamic} size operand(s), one per dynamic dimension of {op.tensor.type}, " \
                   f"got {len(op.dynamic_sizes)}"
    return None
