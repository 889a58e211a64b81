"""Sizes the compiler accepts, checked where the program states them.

A program whose shapes or constants exceed these is rejected with a located
error instead of exhausting memory or overflowing a 64-bit index later:

* `MAX_DIM`: one static dimension of a shaped type, and a static map bound;
* `MAX_ELEMENTS`: the element count of a static shaped type (its byte size,
  at 16 bytes an element, then still fits a signed 64-bit offset);
* `MAX_DENSE_ELEMENTS`: the elements a `dense<...>` literal lists, which
  the compiler holds in memory (a splat holds one, whatever its type's size:
  `xdsl_fixes.splat_attr`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

MAX_DIM = 1 << 40
MAX_ELEMENTS = 1 << 58
MAX_DENSE_ELEMENTS = 1 << 24


def shape_problem(shape: Sequence[int]) -> str | None:
    """Why a shaped type of static sizes `shape` (negative: dynamic) is too
    large, or None."""
    static = [d for d in shape if d >= 0]
    if any(d > MAX_DIM for d in static):
        return f"dimension size {max(static)} exceeds the limit of {MAX_DIM}"
    if math.prod(static) > MAX_ELEMENTS:
        return f"{math.prod(static)} elements exceed the limit of {MAX_ELEMENTS}"
    return None


def dense_problem(shape: Sequence[int]) -> str | None:
    """Why a dense literal of shape `shape` is too large to hold, or None."""
    n = math.prod(shape)
    if n > MAX_DENSE_ELEMENTS:
        return f"dense literal of {n} elements exceeds the limit of {MAX_DENSE_ELEMENTS}"
    return None
