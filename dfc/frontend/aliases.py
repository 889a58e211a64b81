"""Arrays that may share memory in NumPy but are separate values here.

A value chosen at run time between arrays (`v = x.reshape(2, 3) if c else y`,
`if c: v = x[...]` merged by an `if`, a name a loop carries) is a new value
in the IR: NumPy's result would be a view of whichever array was chosen. Its
cell therefore `shares` the cells it may view (as a reshape's does,
`Cell.shares`), so an update of one while the other is still read is refused
by name (`Translator.write`) instead of leaving the other stale.
"""

from __future__ import annotations

from typing import Any

from dfc.frontend.arrays import Cell, View
from dfc.frontend.complex_values import Complex


def alias_cells(value: Any) -> list[Cell]:
    """The cells of named arrays whose memory `value` may be (a view of) in NumPy: its own and those it shares."""
    cell = value.cell if isinstance(value, View | Complex) else None
    return [] if cell is None else [cell, *cell.shares]


def share(cell: Cell, others: list[Cell]) -> Cell:
    """Record that `cell` may share memory with each of `others` (both ways); returns `cell`."""
    for other in others:
        if other is not cell and other not in cell.shares:
            cell.shares.append(other)
            other.shares.append(cell)
    return cell
