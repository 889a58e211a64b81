"""Parsing MLIR text into verified modules."""

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import ParseError

from dfc.compiler.context import make_context
from dfc.compiler.diagnostics import LocatingParser, parse_error, verify_located


def parse_module(text: str, filename: str = "<string>") -> ModuleOp:
    """Parse `text` into a verified module with every project dialect loaded.

    Each op carries its source position; bad syntax or IR that does not
    verify raises `CompileError` naming `filename:line:col`.
    """
    try:
        module = LocatingParser(make_context(), text, filename).parse_module()
    except ParseError as err:
        raise parse_error(err) from None
    verify_located(module)
    return module
