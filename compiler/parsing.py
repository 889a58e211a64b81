"""Parsing MLIR text into verified modules."""

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from compiler.context import make_context


def parse_module(text: str, filename: str = "<string>") -> ModuleOp:
    """Parse `text` into a verified module with every project dialect loaded.

    Raises xDSL's `ParseError` or `VerifyException` on bad input.
    """
    module = Parser(make_context(), text, filename).parse_module()
    module.verify()
    return module
