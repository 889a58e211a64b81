"""Whether a name may be read after the statement being translated.

The translator keeps the statements still to run as a stack of `Future`s
(innermost last): the rest of each enclosing block, the remaining copies of
an unrolled loop body, and the body of each enclosing compiled loop (run again
on the next iteration, or not at all when the loop ends). A name is read
later when some path reads it before a plain assignment rebinds it. Used to
refuse an update of an array a live reshape shares (NumPy's view would see
it) only where that reshape is still read.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class Future:
    """Statements still to run: in order (`again` False), or a loop body that may run again (`again` True)."""

    statements: list[ast.stmt]
    again: bool = False


def _reads(stmt: ast.stmt, name: str) -> bool:
    for n in ast.walk(stmt):
        if isinstance(n, ast.Name) and n.id == name and (isinstance(n.ctx, ast.Load) or isinstance(stmt, ast.AugAssign)):
            return True
    return False


def _rebinds(stmt: ast.stmt, name: str) -> bool:
    """A plain assignment to `name` (also in a tuple target) at this level: it always runs."""
    if not isinstance(stmt, ast.Assign):
        return False
    stack = list(stmt.targets)
    while stack:
        t = stack.pop()
        if isinstance(t, ast.Name) and t.id == name:
            return True
        if isinstance(t, ast.Tuple | ast.List):
            stack.extend(t.elts)
    return False


def _scan(statements: list[ast.stmt], name: str) -> bool | None:
    """True: read first; False: rebound first; None: neither."""
    for stmt in statements:
        if _reads(stmt, name):
            return True
        if _rebinds(stmt, name):
            return False
    return None


def read_later(future: list[Future], name: str) -> bool:
    """Whether `name` may be read after the current statement."""
    for part in reversed(future):
        found = _scan(part.statements, name)
        if part.again:
            if found:
                return True
            continue  # the loop may end here: what follows it runs next
        if found is not None:
            return found
    return False
