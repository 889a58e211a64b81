"""C99's special values (Annex G) of the complex hyperbolic functions and the inverse trigonometric ones,
as NumPy returns them (glibc's choices where C99 leaves a sign unspecified), laid over the formulas of
complex_functions.py where a part is infinite or NaN or a zero meets one; sin, cos, tan, arcsinh and
arctan follow through their definitions (`sin z = -i sinh(iz)`, ...; sin and arctan have one case of their
own). Where every part is finite the
formulas' values stay (a `where` on the parts: the gradients are the formulas').

Checked against NumPy on the grid {0, -0, +-1, 2, -0.5, +-800, +-inf, NaN}^2 for every function
(tests/api/test_frontend_complex_trig_special.py): each part equal, NaN where NumPy's is, zeros of its sign.
"""

from __future__ import annotations

import ast
import math
from typing import Any

import numpy as np

from dfc.frontend.arrays import Const
from dfc.frontend.complex_values import Complex, copysign, part_dtype
from dfc.frontend.numpy_calls import call

INF, NAN = float("inf"), float("nan")


class _Parts:
    """Predicates on one complex argument's parts, and `pick` (nested wheres, the first true case wins)."""

    def __init__(self, tr, z: Complex, node: ast.AST):
        self.tr, self.z, self.node = tr, z, node
        self.dtype = part_dtype(tr, z)

    def np(self, f: Any, *args: Any) -> Any:
        return call(self.tr, f, list(args), {}, self.node)

    def both(self, p: Any, q: Any) -> Any:
        return self.np(np.logical_and, p, q)

    def inf(self, x: Any) -> Any:
        return self.np(np.isinf, x)

    def nan(self, x: Any) -> Any:
        return self.np(np.isnan, x)

    def finite(self, x: Any) -> Any:
        return self.np(np.isfinite, x)

    def not_finite(self, x: Any) -> Any:
        return self.np(np.logical_not, self.finite(x))

    def zero(self, x: Any) -> Any:
        return self.tr.compare("eq", x, 0.0, self.node)

    def const(self, value: float) -> Const:
        return Const(value, self.dtype, False)

    def sign(self, value: float, of: Any) -> Any:
        """`value` with the sign of `of`."""
        return copysign(self.tr, self.const(value), of, self.node)

    def pick(self, cases: list[tuple[Any, Any]], otherwise: Any) -> Any:
        for condition, value in reversed(cases):
            otherwise = self.np(np.where, condition, value, otherwise)
        return otherwise


def sinh(tr, z: Complex, w: Complex, node: ast.AST) -> Complex:
    """sinh(+-0 + i inf|NaN) = +-0 + i NaN; sinh(+-inf + i inf|NaN) = inf + i NaN."""
    p = _Parts(tr, z, node)
    a, b = z.re, z.im
    odd = p.not_finite(b)
    return Complex(p.pick([(p.both(odd, p.zero(a)), a), (p.both(odd, p.inf(a)), p.const(INF))], w.re), w.im, w.weak)


def sin(tr, z: Complex, w: Complex, node: ast.AST) -> Complex:
    """sin(x +- i inf) = NaN + i inf for x infinite or NaN (-i sinh(iz) would give b's sign)."""
    p = _Parts(tr, z, node)
    return Complex(w.re, p.pick([(p.both(p.inf(z.im), p.not_finite(z.re)), p.const(INF))], w.im), w.weak)


def cosh(tr, z: Complex, w: Complex, node: ast.AST) -> Complex:
    """cosh(+-0 + i inf|NaN) = NaN + 0i; cosh(+-inf + i inf|NaN) = inf + i NaN; cosh(+-inf +- 0i) = inf + 0i of
    the product's sign; cosh(NaN +- 0i) = NaN +- 0i."""
    p = _Parts(tr, z, node)
    a, b = z.re, z.im
    odd = p.not_finite(b)
    re = p.pick([(p.both(odd, p.inf(a)), p.const(INF))], w.re)
    flat = p.zero(b)
    im = p.pick([(p.both(odd, p.zero(a)), p.const(0.0)),
                 (p.both(flat, p.inf(a)), tr.binop("mul", p.sign(0.0, a), b, node)),
                 (p.both(flat, p.nan(a)), b)], w.im)
    return Complex(re, im, w.weak)


def tanh(tr, z: Complex, w: Complex, node: ast.AST) -> Complex:
    """tanh(+-inf + i inf|NaN) = +-1 +- 0i (b's sign); tanh(+-0 + i inf|NaN) = +-0 + i NaN; tanh(x + i inf|NaN) =
    NaN + i NaN for other x; tanh(NaN +- 0i) = NaN +- 0i."""
    p = _Parts(tr, z, node)
    a, b = z.re, z.im
    odd = p.not_finite(b)
    edge = p.both(odd, p.inf(a))
    re = p.pick([(edge, p.sign(1.0, a)), (p.both(odd, p.zero(a)), a), (odd, p.const(NAN))], w.re)
    im = p.pick([(edge, p.sign(0.0, b)), (odd, p.const(NAN)), (p.both(p.nan(a), p.zero(b)), b)], w.im)
    return Complex(re, im, w.weak)


def arcsin(tr, z: Complex, w: Complex, node: ast.AST) -> Complex:
    """arcsin(+-inf + i y) = +-pi/2 +- i inf (y's sign, y finite); arcsin(+-inf + i NaN) = NaN + i inf;
    arcsin(+-0 + i NaN) = +-0 + i NaN."""
    p = _Parts(tr, z, node)
    a, b = z.re, z.im
    wide = p.inf(a)
    re = p.pick([(p.both(wide, p.finite(b)), p.sign(math.pi / 2, a)), (p.both(p.zero(a), p.nan(b)), a)], w.re)
    return Complex(re, p.pick([(p.both(wide, p.nan(b)), p.const(INF))], w.im), w.weak)


def arccos(tr, z: Complex, w: Complex, node: ast.AST) -> Complex:
    """arccos(+-0 + i NaN) = pi/2 + i NaN; arccos(+inf +- i inf) = pi/4 -+ i inf, arccos(-inf +- i inf) = 3pi/4 -+
    i inf; arccos(+-inf + i NaN) = NaN - i inf; arccos(NaN +- i inf) = NaN -+ i inf."""
    p = _Parts(tr, z, node)
    a, b = z.re, z.im
    corner = p.both(p.inf(a), p.inf(b))
    quarter = p.np(np.where, tr.compare("gt", a, 0.0, node), p.const(math.pi / 4), p.const(3 * math.pi / 4))
    re = p.pick([(p.both(p.zero(a), p.nan(b)), p.const(math.pi / 2)), (corner, quarter),
                 (p.both(p.nan(a), p.inf(b)), p.const(NAN))], w.re)
    return Complex(re, p.pick([(p.both(p.inf(a), p.nan(b)), p.const(-INF))], w.im), w.weak)


def arccosh(tr, z: Complex, w: Complex, node: ast.AST) -> Complex:
    """arccosh(+-0 + i NaN) = NaN + i pi/2; arccosh(+-inf +- i inf) = inf +- i pi/4 (3pi/4 for -inf);
    arccosh(+-inf + i NaN) = inf + i NaN; arccosh(NaN +- i inf) = inf + i NaN."""
    p = _Parts(tr, z, node)
    a, b = z.re, z.im
    corner = p.both(p.inf(a), p.inf(b))
    quarter = p.np(np.where, tr.compare("gt", a, 0.0, node), p.const(math.pi / 4), p.const(3 * math.pi / 4))
    re = p.pick([(p.both(p.inf(a), p.nan(b)), p.const(INF))], w.re)
    im = p.pick([(p.both(p.zero(a), p.nan(b)), p.const(math.pi / 2)), (corner, copysign(tr, quarter, b, node)),
                 (p.both(p.nan(a), p.inf(b)), p.const(NAN))], w.im)
    return Complex(re, im, w.weak)


def arctanh(tr, z: Complex, w: Complex, node: ast.AST) -> Complex:
    """arctanh(x +- i inf) = +-0 +- i pi/2 (x's sign, +0 for NaN); arctanh(+-inf + i y) = +-0 +- i pi/2 (y's sign;
    NaN for y NaN); arctanh(+-0 + i NaN) = +-0 + i NaN."""
    p = _Parts(tr, z, node)
    a, b = z.re, z.im
    tall, wide = p.inf(b), p.inf(a)
    zero_of_a = p.np(np.where, p.nan(a), p.const(0.0), p.sign(0.0, a))
    re = p.pick([(tall, zero_of_a), (wide, zero_of_a), (p.both(p.zero(a), p.nan(b)), a)], w.re)
    im = p.pick([(tall, p.sign(math.pi / 2, b)), (p.both(wide, p.nan(b)), p.const(NAN)),
                 (wide, p.sign(math.pi / 2, b))], w.im)
    return Complex(re, im, w.weak)


def arctan(tr, z: Complex, w: Complex, node: ast.AST) -> Complex:
    """arctan(+-inf + i NaN) = +-pi/2 + 0i (-i arctanh(iz) would give -0i)."""
    p = _Parts(tr, z, node)
    return Complex(w.re, p.pick([(p.both(p.inf(z.re), p.nan(z.im)), p.const(0.0))], w.im), w.weak)
