"""The value at a fraction of sorted values, as NumPy's `median` and `quantile`/`percentile` (method
'linear') compute it, for a count known at compile time or only at run time (`x[m]`, `np.unique`).

`np.median` reads the middle value (n odd) or the mean `(a + b) / 2` of the two middle ones. The linear
quantile at virtual position `v = (n - 1) q` reads the neighbours `a = s[floor(v)]`, `b = s[floor(v) + 1]`
(both the last value where `v >= n - 1`, with `t = v + 1` then, as NumPy's `_get_indexes` and
`_get_gamma` have it), `t = v - floor(v)`, and interpolates always, as NumPy's `_lerp`:
`b - (b - a) (1 - t)` where `t >= 0.5`, else `a + (b - a) t` (so an infinite neighbour gives NaN, as in
NumPy). A Python-float `q` is weak: `t` and `1 - t` are rounded to the values' float type.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import IndexType, f64, i64

from dfc.frontend.affine import Affine, opaque
from dfc.frontend.arrays import Const, Expr, Index

At = Callable[[int | Affine], Expr]
"""The sorted values at a position (floats)."""


def at_fraction(tr, at: At, n: Affine, q: float, mean_of_two: bool, node: ast.AST) -> Expr:
    """The value at fraction `q` of the `n` sorted values `at(i)` (n >= 1 where static; a run-time n of 0
    reads out of bounds: an `IndexError` at run time)."""
    if mean_of_two:
        return _median(tr, at, n, node)
    count = n.static
    if count is not None:
        v = q * (count - 1)
        above = v >= count - 1
        low = count - 1 if above else int(v)
        t = v + 1 if above else v - low
        a, b = at(low), at(count - 1 if above else low + 1)
        return _lerp(tr, a, b, Const(t, "f64", True), Const(1.0 - t, "f64", True), t >= 0.5, node)
    b = tr.em.b
    v = tr.elementwise("mul", [Const(q, "f64", True), tr.elementwise("convert", [Index(n - 1)], node, "f64")], node)
    value = b.insert(tensor.ExtractOp(tr.em.materialize(v), [], f64)).result
    floor = Affine.of(b.insert(arith.IndexCastOp(b.insert(arith.FPToSIOp(value, i64)).result, IndexType())).result)
    above = tr.compare("ge", Index(floor), Index(n - 1), node)
    low = opaque(b, arith.MinSIOp, floor, n - 1)
    t = tr.elementwise("where", [above, tr.elementwise("add", [v, Const(1.0, "f64", True)], node),
                                 tr.elementwise("sub", [v, tr.elementwise("convert", [Index(floor)], node, "f64")],
                                                node)], node, "f64")
    a, b_ = at(low), at(opaque(b, arith.MinSIOp, floor + 1, n - 1))
    rising = tr.compare("ge", t, Const(0.5, "f64", True), node)
    one_minus = tr.elementwise("sub", [Const(1.0, "f64", True), t], node)
    return _lerp(tr, a, b_, _weak(tr, t, a.dtype, node), _weak(tr, one_minus, a.dtype, node), rising, node)


def _weak(tr, t: Expr, dtype: str, node: ast.AST) -> Expr:
    """A float64 weight as NumPy's weak Python float meets values of `dtype`: rounded to it."""
    return t if dtype == "f64" else tr.elementwise("convert", [t], node, dtype)


def _lerp(tr, a: Expr, b: Expr, t: Expr, one_minus: Expr, rising: bool | Expr, node: ast.AST) -> Expr:
    diff = tr.elementwise("sub", [b, a], node)
    up = tr.elementwise("add", [a, tr.elementwise("mul", [diff, t], node)], node)
    down = tr.elementwise("sub", [b, tr.elementwise("mul", [diff, one_minus], node)], node)
    if isinstance(rising, bool):
        return down if rising else up
    return tr.elementwise("where", [rising, down, up], node, up.dtype)


def _median(tr, at: At, n: Affine, node: ast.AST) -> Expr:
    """The middle value, or the mean of the two middle ones (`(n - 1) // 2` and `n // 2`)."""
    count = n.static
    if count is not None:
        low, high = (count - 1) // 2, count // 2
        if low == high:
            return at(low)
        return tr.elementwise("div", [tr.elementwise("add", [at(low), at(high)], node), Const(2.0, "f64", True)],
                              node)
    two = Affine(2)
    low, high = opaque(tr.em.b, arith.DivSIOp, n - 1, two), opaque(tr.em.b, arith.DivSIOp, n, two)
    a = at(low)
    mean = tr.elementwise("div", [tr.elementwise("add", [a, at(high)], node), Const(2.0, "f64", True)], node)
    return tr.elementwise("where", [tr.compare("eq", Index(low), Index(high), node), a, mean], node, a.dtype)
