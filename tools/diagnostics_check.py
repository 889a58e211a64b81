"""MLIR-style `--verify-diagnostics`: match errors against `expected-error` notes.

An annotation `// expected-error {{text}}` expects an error containing `text`
on its own line; `@+N`/`@-N` shift that by N lines, `@above`/`@below` by one.
`expected-warning`, `-remark` and `-note` expect diagnostics of that kind:
dfc reports errors only (compilation stops at the first, so a chunk holds at
most one), so such an annotation is reported as a warning (remark, note)
that was not produced, never matched by an error. Every annotation of a
chunk is checked, and every diagnostic: one nobody expected is an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dfc.dialects.diagnostics import CompileError

_ANNOTATION = re.compile(
    r"//\s*expected-(error|warning|remark|note)\s*(@(?:above|below|[+-]\d+|\d+))?\s*\{\{(.*?)\}\}"
)


@dataclass
class Expectation:
    line: int
    text: str
    annotation_line: int
    kind: str = "error"
    seen: bool = False


def expectations(text: str, first_line: int) -> list[Expectation]:
    """The annotations in `text`, whose first line is `first_line` of the file."""
    found: list[Expectation] = []
    for k, source_line in enumerate(text.splitlines()):
        line = first_line + k
        for m in _ANNOTATION.finditer(source_line):
            shift = m.group(2)
            target = line
            if shift == "@above":
                target = line - 1
            elif shift == "@below":
                target = line + 1
            elif shift and shift[1] in "+-":
                target = line + int(shift[1:])
            elif shift:
                target = int(shift[1:])
            found.append(Expectation(target, m.group(3), line, m.group(1)))
    return found


def check(
    expected: list[Expectation], error: CompileError | None, filename: str
) -> list[str]:
    """Messages for every mismatch between `expected` and the one `error` raised."""
    problems: list[str] = []
    if error is not None:
        line = _line_of(error.location)
        match = next(
            (e for e in expected if not e.seen and e.kind == "error" and e.line == line and e.text in error.message),
            None,
        )
        if match is None:
            problems.append(f"{error.location or filename}: error: unexpected error: {error.message}")
        else:
            match.seen = True
    for e in expected:
        if not e.seen:
            problems.append(
                f"{filename}:{e.annotation_line}: error: expected {e.kind} \"{e.text}\" was not produced"
            )
    return problems


def _line_of(location: str | None) -> int | None:
    if location is None:
        return None
    parts = location.rsplit(":", 2)
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None
