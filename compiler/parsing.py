"""Parsing MLIR text into verified modules."""

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import ParseError

from dfc.compiler.context import make_context
from dfc.compiler.location_aliases import has_location_aliases, resolve_locations
from dfc.dialects.diagnostics import CompileError, LocatingParser, parse_error, verify_located


def decode_source(data: bytes, filename: str) -> str:
    """`data` as UTF-8 text; bytes that are not UTF-8 raise `CompileError` at
    their line and column."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        before = data[: err.start].decode("utf-8", errors="replace")
        line = before.count("\n") + 1
        col = len(before) - (before.rfind("\n") + 1) + 1
        raise CompileError(f"invalid UTF-8 byte 0x{data[err.start]:02x}", f"{filename}:{line}:{col}") from None


def parse_module(text: str, filename: str = "<string>", *, allow_unregistered: bool = False) -> ModuleOp:
    """Parse `text` into a verified module with every project dialect loaded.

    Each op carries its source position (or the `"file":line:col` its
    debug location names: `#loc` aliases are resolved, see
    `compiler.location_aliases`); bad syntax or IR that does not verify raises
    `CompileError` naming `filename:line:col`.
    `allow_unregistered`: accept ops of dialects dfc does not know.
    """
    if has_location_aliases(text):
        text = resolve_locations(text)
    try:
        module = LocatingParser(make_context(allow_unregistered), text, filename).parse_module()
    except ParseError as err:
        raise parse_error(err) from None
    verify_located(module)
    return module
