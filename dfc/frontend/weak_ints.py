"""Python integers next to integer arrays, as NEP 50 (NumPy 2) treats them: a
Python int takes the array's dtype, so one outside that dtype's range is
NumPy's `OverflowError` in arithmetic (`uint8 array + 300`, `int8 array * -1000`)
and decides a comparison by its value alone (`uint8 array < -1` is False
everywhere, `int8 array != 1000` True)."""

from __future__ import annotations

import ast

from dfc.frontend.arrays import FLOATS, NUMPY_NAMES, Const, Expr, Index, is_unsigned

ARITHMETIC = {"add", "sub", "mul", "floordiv", "mod", "maximum", "minimum", "and", "or", "xor", "lshift", "rshift",
              "pow", "where"}
"""The elementwise ops whose Python int operands take the integer result's dtype."""

_BELOW = {"lt": False, "le": False, "gt": True, "ge": True, "eq": False, "ne": True}
"""`x (name) c` for every x of the dtype when c is below its range."""
_MIRRORED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}


def _bounds(dtype: str) -> tuple[int, int]:
    bits = int(dtype[1:])
    return (0, (1 << bits) - 1) if is_unsigned(dtype) else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)


def _python_int(e: Expr) -> int | None:
    """The value of a Python integer constant (weak, 0-d), else None."""
    if isinstance(e, Const) and e.weak and not e.shape and e.dtype == "i64" and isinstance(e.value, int):
        return e.value
    return None


def check_arithmetic(tr, op: str, args: list[Expr], dtype: str, node: ast.AST) -> None:
    """Refuse, as NumPy does, a Python int operand outside the range of the integer `dtype` of `op`'s result."""
    if op in ARITHMETIC:
        for a in args:
            check_python_int(tr, a, dtype, node)


def check_python_int(tr, e: Expr, dtype: str, node: ast.AST) -> None:
    """Refuse `e` when it is a Python int outside the range of the integer `dtype` it becomes (NumPy's
    OverflowError); a loop-dependent one (`x + i` in `for i in range(300)`) when the ends of its range are
    known and one is outside."""
    if dtype in FLOATS or dtype == "i1":
        return
    low, high = _bounds(dtype)
    v = _python_int(e)
    if v is not None and (message := out_of_bounds(v, dtype)):
        raise tr.fail(message, node)
    if isinstance(e, Index) and e.weak:
        least, most = tr.lowest(e.value).static, tr.lowest(-e.value).static
        if least is not None and most is not None and not low <= least <= -most <= high:
            raise tr.fail(f"this integer takes values from {least} to {-most}, out of bounds for {NUMPY_NAMES[dtype]} "
                          "(NumPy raises OverflowError: under NEP 50 a Python int takes the array's dtype)", node)


def out_of_bounds(value: int, dtype: str) -> str | None:
    """NumPy's OverflowError message for Python int `value` taking the integer `dtype`; None when it fits
    (or `dtype` is a float or bool)."""
    if dtype in FLOATS or dtype == "i1":
        return None
    low, high = _bounds(dtype)
    if low <= value <= high:
        return None
    return (f"Python integer {value} out of bounds for {NUMPY_NAMES[dtype]} (NumPy raises OverflowError: under "
            "NEP 50 a Python int takes the array's dtype)")


def decided_compare(name: str, x: Expr, y: Expr, operand: str, shape: list) -> Const | None:
    """`x (name) y` when one side is a Python int outside the range of the integer `operand` dtype: the same
    answer for every element (a boolean array of `shape`); None otherwise."""
    if operand in FLOATS or operand == "i1":
        return None
    low, high = _bounds(operand)
    for value, other_first in ((_python_int(y), True), (_python_int(x), False)):
        if value is not None and not low <= value <= high:
            kind = name if other_first else _MIRRORED[name]
            below = _BELOW[kind]
            return Const(below if value < low else (not below if kind not in ("eq", "ne") else below), "i1", False,
                         list(shape))
    return None
