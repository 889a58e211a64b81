"""What the translation of one function keeps between statements: the parsed
source, run-time conditions, and what a loop or branch body changed."""

from __future__ import annotations

import ast
import itertools
import re
from dataclasses import dataclass
from typing import Any

from xdsl.ir import SSAValue

from dfc.frontend.arrays import Cell

cell_serial = itertools.count()
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class Source:
    """A parsed Python function and where its text lives."""

    tree: ast.FunctionDef
    filename: str
    line_offset: int
    col_offset: int
    scope: dict[str, Any]


@dataclass
class Cond:
    """A run-time boolean (i1) outside maps."""

    value: SSAValue


class Undefined:
    """A name without a value yet: the results of a `return` inside a loop (jumps.py) before it runs.
    A loop or branch carrying it takes `like` = (kind, type, weak) from the value the body assigns
    and starts from zeros of that type."""

    def __init__(self) -> None:
        self.like: tuple[str, Any, bool] | None = None


class Scope:
    """What a loop or branch body changed: cells it updated and names it rebound."""

    def __init__(self, first_cell: int):
        self.first_cell = first_cell
        self.cells: dict[Cell, None] = {}
        self.before: dict[Cell, SSAValue] = {}
        self.names: dict[str, None] = {}
