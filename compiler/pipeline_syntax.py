"""Pass pipeline text: MLIR's textual form, read into xDSL pass specs.

    cse,autodiff{wrt=0,1},default
    builtin.module(func.func(cse,canonicalize),fuse)

An element is a pass (with `{options}`), a named pipeline (`PIPELINES`), or an
op anchor `NAME(...)` as mlir-opt writes nested pass managers. Every project
pass is a module pass, so an anchor's passes run on the whole module, in
order: for the function-local passes people nest (`cse`, `canonicalize`,
`dce`, `fuse`) that is the same result. Errors are `CompileError`s whose
message shows the pipeline with a caret under the problem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xdsl.utils.arg_spec import ArgSpec, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError

from dfc.dialects.diagnostics import CompileError
from dfc.passes import PIPELINES

_ANCHOR = re.compile(r"\s*([A-Za-z_][\w$]*(?:\.[\w$]+)*)\s*\(")
_XDSL_COLUMN = re.compile(r"pass-pipeline:1:(\d+)")


@dataclass(frozen=True)
class PipelineElement:
    """One pass of a pipeline, with the anchors it was nested in."""

    spec: ArgSpec
    anchors: tuple[str, ...] = ()


def pipeline_error(text: str, column: int, message: str) -> CompileError:
    """`bad pass pipeline` with `text` and a caret under 0-based `column`."""
    return CompileError(f"bad pass pipeline: {message}\n  {text}\n  {' ' * column}^")


def parse_elements(text: str) -> list[PipelineElement]:
    """The passes `text` names, named pipelines expanded, anchors flattened."""
    return _parse(text, text, 0, ())


def _parse(full: str, text: str, offset: int, anchors: tuple[str, ...]) -> list[PipelineElement]:
    out: list[PipelineElement] = []
    for start, piece in _split_top_level(full, text, offset):
        stripped = piece.strip()
        if not stripped:
            raise pipeline_error(full, start, "expected a pass name")
        lead = len(piece) - len(piece.lstrip())
        if (m := _ANCHOR.match(piece)) and not _is_pass_with_options(piece):
            if not stripped.endswith(")"):
                raise pipeline_error(full, start + len(piece.rstrip()), "expected ')' closing the op anchor")
            inner_start = start + m.end()
            inner = piece[m.end() : len(piece.rstrip()) - 1]
            out += _parse(full, inner, inner_start, (*anchors, m.group(1)))
            continue
        out += _parse_pass(full, stripped, start + lead, anchors)
    return out


def _is_pass_with_options(piece: str) -> bool:
    brace, paren = piece.find("{"), piece.find("(")
    return brace != -1 and brace < paren


def _parse_pass(full: str, text: str, offset: int, anchors: tuple[str, ...]) -> list[PipelineElement]:
    try:
        specs = list(parse_pipeline(text))
    except ArgSpecParseError as err:
        lines = str(err).strip().splitlines()
        m = _XDSL_COLUMN.search(str(err))
        column = offset + (int(m.group(1)) - 1 if m else 0)
        raise pipeline_error(full, min(column, len(full)), lines[-1].strip()) from None
    except ValueError as err:
        raise pipeline_error(full, offset, str(err)) from None
    out: list[PipelineElement] = []
    for spec in specs:
        if spec.name in PIPELINES and not spec.parameters:
            out += _parse(PIPELINES[spec.name], PIPELINES[spec.name], 0, anchors)
        else:
            out.append(PipelineElement(spec, anchors))
    return out


def _split_top_level(full: str, text: str, offset: int) -> list[tuple[int, str]]:
    """`text` split at commas outside braces and parentheses, with each
    piece's 0-based column in `full`."""
    pieces: list[tuple[int, str]] = []
    stack: list[tuple[str, int]] = []
    begin = 0
    closing = {"(": ")", "{": "}"}
    for k, c in enumerate(text):
        if c in closing:
            stack.append((c, k))
        elif c in ")}":
            if not stack or closing[stack[-1][0]] != c:
                raise pipeline_error(full, offset + k, f"unbalanced '{c}'")
            stack.pop()
        elif c == "," and not stack:
            pieces.append((offset + begin, text[begin:k]))
            begin = k + 1
    if stack:
        opener, k = stack[-1]
        raise pipeline_error(full, offset + k, f"'{opener}' is not closed")
    pieces.append((offset + begin, text[begin:]))
    return pieces


def format_pipeline(elements: list[PipelineElement]) -> str:
    """The textual pipeline of `elements`, anchored as mlir-opt prints it:
    `builtin.module(cse,func.func(canonicalize))`."""
    parts: list[str] = []
    k = 0
    while k < len(elements):
        anchors = elements[k].anchors
        group = []
        while k < len(elements) and elements[k].anchors == anchors:
            group.append(str(elements[k].spec))
            k += 1
        body = ",".join(group)
        for anchor in reversed([a for a in anchors if a != "builtin.module"]):
            body = f"{anchor}({body})"
        parts.append(body)
    return f"builtin.module({','.join(parts)})"
