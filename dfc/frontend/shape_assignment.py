"""`a.shape = new_shape`: NumPy reshapes the array object in place.

Here it is a reshape of the value the local name holds, rebound to the name:
exact where no one else sees the array object. So it is refused by name where
someone does: a parameter (the caller's array would change shape), another
name bound to the same array, or a live view sharing its memory (NumPy's
views keep their own shapes but share the elements, which a separate value
here would not). The new shape must hold as many elements (`-1` once is
inferred), as NumPy requires.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from dfc.frontend import complex_calls
from dfc.frontend.arrays import Cell, View
from dfc.frontend.complex_values import Complex, is_packed_whole
from dfc.frontend.numpy_calls import call


def _cell(value: Any) -> Cell | None:
    """The cell of a whole named array (real or complex), else None."""
    if isinstance(value, View):
        return value.cell if value.is_whole else None
    if isinstance(value, Complex) and is_packed_whole(value):
        return value.cell
    return None


def assign_shape(tr, target: ast.Attribute, shape: Any) -> None:
    """`name.shape = shape` of the array a local name holds."""
    if not isinstance(target.value, ast.Name):
        raise tr.fail("assigning .shape is supported on a named array (`a.shape = (m, n)`)", target)
    name = target.value.id
    value = tr.lookup(name, target.value)
    cell = _cell(value)
    if cell is None:
        raise tr.fail(f"'{name}.shape = ...' of a view or slice is not supported (NumPy reshapes views in place only "
                      "where their memory allows it); use '{name} = {name}.reshape(...)'", target)
    if cell in tr.param_cells:
        raise tr.fail(f"'{name}.shape = ...' would change the shape of the caller's array; use "
                      f"'{name} = {name}.reshape(...)' for a local reshaped array", target)
    others = [n for n, v in tr.env.items() if n != name and isinstance(v, View | Complex) and v.cell is cell]
    if others or any(tr._live(c) for c in cell.shares):
        seen = f"'{others[0]}'" if others else "a reshaped view of it"
        raise tr.fail(f"'{name}.shape = ...' changes the shape of an array that {seen} also names or views; NumPy "
                      f"changes it for both: use '{name} = {name}.reshape(...)'", target)
    args = [value, shape]
    reshaped = complex_calls.call(tr, np.reshape, args, {}, target) if complex_calls.takes_complex(
        np.reshape, args, {}) else call(tr, np.reshape, args, {}, target)
    tr.bind(name, reshaped, target)
