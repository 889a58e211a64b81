"""NumPy's float `x % y` and `x // y` (its `npy_divmod`), as elementwise expressions.

The remainder is C's `fmod(x, y)` (exact), plus `y` where it is nonzero and
its sign differs from `y`'s; a zero remainder takes `y`'s sign. The quotient
is `(x - fmod(x, y)) / y`, one less where the remainder moved, rounded to the
nearest integer below (a zero takes the sign of `x / y`). By zero: the
remainder is NaN, the quotient `x / y`. Computing `x - floor(x / y) * y`
instead is wrong by up to `y` where `x / y` rounds (`1.0 % 0.1`, `1.0 // 0.1`,
`(1e17 + 8) % 3`) and NaN for an infinite `y`.
"""

from __future__ import annotations

import ast
from typing import Any

from dfc.frontend.arrays import Const, Expr

__all__ = ["float_division"]


def float_division(tr: Any, op: str, x: Expr, y: Expr, node: ast.AST) -> Expr:
    """`x % y` (`op` "mod") or `x // y` ("floordiv") of floats, as NumPy computes them."""
    ew = tr.elementwise

    def zero() -> Const:
        return Const(0.0, "f64")

    def cmp(name: str, a: Expr, b: Expr) -> Expr:
        return tr.as_expr(tr.compare(name, a, b, node), node)  # a Python bool where both are numbers

    mod = ew("fmod", [x, y], node)
    negative_y = cmp("lt", y, zero())
    moved = ew("and", [cmp("ne", mod, zero()),
                       ew("compare", [negative_y, cmp("lt", mod, zero())], node, "i1", ("ne", "i1"))],
               node, "i1")
    if op == "mod":
        signed_zero = ew("where", [negative_y, Const(-0.0, "f64"), zero()], node, mod.dtype)
        kept = ew("where", [cmp("ne", mod, zero()), mod, signed_zero], node, mod.dtype)
        return ew("where", [moved, ew("add", [mod, y], node), kept], node, mod.dtype)
    div = ew("div", [ew("sub", [x, mod], node), y], node)
    div = ew("where", [moved, ew("sub", [div, Const(1.0, "f64")], node), div], node, div.dtype)
    floor = ew("floor", [div], node)
    above = cmp("gt", ew("sub", [div, floor], node), Const(0.5, "f64"))
    floor = ew("where", [above, ew("add", [floor, Const(1.0, "f64")], node), floor], node, div.dtype)
    quotient = ew("div", [x, y], node)
    signed_zero = ew("mul", [quotient, zero()], node)
    floor = ew("where", [cmp("eq", div, zero()), signed_zero, floor], node, div.dtype)
    return ew("where", [cmp("eq", y, zero()), quotient, floor], node, div.dtype)
