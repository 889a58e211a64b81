"""NumPy's trigonometric and hyperbolic functions of complex values and their inverses, on the parts
(complex_values.py).

- sinh and cosh: `sinh a cos b + i cosh a sin b`, `cosh a cos b + i sinh a sin b`, with C99's exact
  results on the real axis (`sinh(x + 0i) = sinh x + 0i` even where `cosh x` overflows);
- tanh: NumPy's (FreeBSD's) ctanh, Kahan's `t = tan b, s = sinh a, rho = sqrt(1 + s^2)`,
  `(beta rho s + i t) / (1 + beta s^2)` with `beta = 1 + t^2`, and `sign(a) + 4i sin b cos b e^(-2|a|)`
  once |a| reaches 22 (9 in float32);
- sin, cos, tan through the hyperbolic ones as NumPy computes them: `sin z = -i sinh(iz)`, `cos z = cosh(iz)`,
  `tan z = -i tanh(iz)`;
- arcsin, arccos, arccosh: Kahan's formulas ("Branch cuts for complex elementary functions", 1987) on
  `sqrt(1 - z)` and `sqrt(1 + z)` (`sqrt(z - 1)`, `sqrt(z + 1)`), NumPy's principal branches; the sign of a
  zero part picks the side of a cut (`1 - z` negates the imaginary part, as C99's real-minus-complex);
- arctanh: `log1p(4a / ((1 - a)^2 + b^2)) / 4 + i atan2(2b, (1 - a)(1 + a) - b^2) / 2`; arcsinh and
  arctan as `-i arcsin(iz)` and `-i arctanh(iz)`.

Where a part is infinite or NaN, C99's special values as NumPy gives them are laid over the formulas
(complex_special_values.py). Each overflow-guarded branch reads a clamped input, so that its gradient
stays finite where it is not taken.
"""

from __future__ import annotations

import ast
import math
from typing import Any

import numpy as np

from dfc.frontend import complex_special_values as special
from dfc.frontend.arrays import Const
from dfc.frontend.complex_values import Complex, copysign, neg_part, part_dtype, shared, shared_z, sqrt
from dfc.frontend.numpy_calls import call


def _np(tr, f: Any, *args: Any, node: ast.AST) -> Any:
    return call(tr, f, list(args), {}, node)


def _times_i(tr, z: Complex, node: ast.AST) -> Complex:
    """i z = -b + i a (C99's, exact: no multiplication by the zero real part)."""
    return Complex(neg_part(tr, z.im, node), z.re, z.weak)


def _times_minus_i(tr, z: Complex, node: ast.AST) -> Complex:
    """-i z = b - i a."""
    return Complex(z.im, neg_part(tr, z.re, node), z.weak)


def sinh(tr, z: Complex, node: ast.AST) -> Complex:
    z = shared_z(tr, z)
    a, b = z.re, z.im
    m = tr.binop
    re = m("mul", _np(tr, np.sinh, a, node=node), _np(tr, np.cos, b, node=node), node)
    im = _np(tr, np.where, tr.compare("eq", b, 0.0, node), b,
             m("mul", _np(tr, np.cosh, a, node=node), _np(tr, np.sin, b, node=node), node), node=node)
    return special.sinh(tr, z, Complex(re, im, z.weak), node)


def cosh(tr, z: Complex, node: ast.AST) -> Complex:
    z = shared_z(tr, z)
    a, b = z.re, z.im
    m = tr.binop
    re = m("mul", _np(tr, np.cosh, a, node=node), _np(tr, np.cos, b, node=node), node)
    im = _np(tr, np.where, tr.compare("eq", b, 0.0, node), m("mul", a, b, node),
             m("mul", _np(tr, np.sinh, a, node=node), _np(tr, np.sin, b, node=node), node), node=node)
    return special.cosh(tr, z, Complex(re, im, z.weak), node)


def tanh(tr, z: Complex, node: ast.AST) -> Complex:
    z = shared_z(tr, z)
    a, b = z.re, z.im
    m = tr.binop
    far = shared(tr, tr.compare("ge", _np(tr, np.abs, a, node=node), 22.0 if part_dtype(tr, z) == "f64" else 9.0,
                                node))
    x = shared(tr, _np(tr, np.where, far, 0.0, a, node=node))  # sinh(800) would overflow in the branch not taken
    t = shared(tr, _np(tr, np.tan, b, node=node))
    beta = shared(tr, m("add", 1.0, m("mul", t, t, node), node))
    s = shared(tr, _np(tr, np.sinh, x, node=node))
    s2 = shared(tr, m("mul", s, s, node))
    rho = _np(tr, np.sqrt, m("add", 1.0, s2, node), node=node)
    denom = shared(tr, m("add", 1.0, m("mul", beta, s2, node), node))
    near_re = m("div", m("mul", m("mul", beta, rho, node), s, node), denom, node)
    near_im = m("div", t, denom, node)
    y = _np(tr, np.where, far, a, 1.0, node=node)  # the far branch's exp(-2|a|) only where it is taken
    far_re = copysign(tr, Const(1.0, part_dtype(tr, z), False), a, node)  # 1.0 of the parts' dtype, not float64
    decay = _np(tr, np.exp, m("mul", -2.0, _np(tr, np.abs, y, node=node), node), node=node)
    far_im = m("mul", m("mul", m("mul", 4.0, _np(tr, np.sin, b, node=node), node), _np(tr, np.cos, b, node=node),
                        node), decay, node)
    return special.tanh(tr, z, Complex(_np(tr, np.where, far, far_re, near_re, node=node),
                                       _np(tr, np.where, far, far_im, near_im, node=node), z.weak), node)


def sin(tr, z: Complex, node: ast.AST) -> Complex:
    z = shared_z(tr, z)
    return special.sin(tr, z, _times_minus_i(tr, sinh(tr, _times_i(tr, z, node), node), node), node)


def cos(tr, z: Complex, node: ast.AST) -> Complex:
    return cosh(tr, _times_i(tr, z, node), node)


def tan(tr, z: Complex, node: ast.AST) -> Complex:
    return _times_minus_i(tr, tanh(tr, _times_i(tr, z, node), node), node)


def asinh_real(tr, x: Any, node: ast.AST) -> Any:
    """The real arcsinh, accurate near 0 and large: `log1p(|x| + x^2 / (1 + sqrt(1 + x^2)))` with x's sign,
    `log |x| + log 2` beyond 2^28."""
    m = tr.binop
    a = shared(tr, _np(tr, np.abs, x, node=node))
    big = shared(tr, tr.compare("gt", a, 2.0 ** 28, node))
    near = shared(tr, _np(tr, np.where, big, 1.0, a, node=node))
    square = shared(tr, m("mul", near, near, node))
    r = _np(tr, np.log1p, m("add", near, m("div", square, m("add", 1.0, _np(tr, np.sqrt, m("add", 1.0, square, node),
                                                                             node=node), node), node), node), node=node)
    far = m("add", _np(tr, np.log, _np(tr, np.where, big, a, 1.0, node=node), node=node), math.log(2.0), node)
    return copysign(tr, _np(tr, np.where, big, far, r, node=node), x, node)


def _roots(tr, z: Complex, node: ast.AST, shift: float) -> tuple[Complex, Complex]:
    """(sqrt(shift - z), sqrt(shift + z)) for shift 1 (arcsin, arccos); with shift -1 (sqrt(z - 1), sqrt(z + 1))
    for arccosh. `1 - z` is (1 - a, -b): the real minus the complex, as C99 subtracts."""
    m = tr.binop
    if shift > 0:
        first = Complex(m("sub", 1.0, z.re, node), neg_part(tr, z.im, node))
    else:
        first = Complex(m("sub", z.re, 1.0, node), z.im)
    second = Complex(m("add", z.re, 1.0, node), z.im)
    return shared_z(tr, sqrt(tr, first, node)), shared_z(tr, sqrt(tr, second, node))


def arcsin(tr, z: Complex, node: ast.AST) -> Complex:
    """Kahan: atan2(a, Re(s1 s2)) + i asinh(Im(conj(s1) s2)), s1 = sqrt(1 - z), s2 = sqrt(1 + z)."""
    z = shared_z(tr, z)
    s1, s2 = _roots(tr, z, node, 1.0)
    m = tr.binop
    re = _np(tr, np.arctan2, z.re, m("sub", m("mul", s1.re, s2.re, node), m("mul", s1.im, s2.im, node), node),
             node=node)
    im = asinh_real(tr, m("sub", m("mul", s1.re, s2.im, node), m("mul", s1.im, s2.re, node), node), node)
    return special.arcsin(tr, z, Complex(re, im, z.weak), node)


def arccos(tr, z: Complex, node: ast.AST) -> Complex:
    """Kahan: 2 atan2(Re s1, Re s2) + i asinh(Im(conj(s2) s1)), s1 = sqrt(1 - z), s2 = sqrt(1 + z)."""
    z = shared_z(tr, z)
    s1, s2 = _roots(tr, z, node, 1.0)
    m = tr.binop
    re = m("mul", 2.0, _np(tr, np.arctan2, s1.re, s2.re, node=node), node)
    im = asinh_real(tr, m("sub", m("mul", s2.re, s1.im, node), m("mul", s2.im, s1.re, node), node), node)
    return special.arccos(tr, z, Complex(re, im, z.weak), node)


def arccosh(tr, z: Complex, node: ast.AST) -> Complex:
    """Kahan: asinh(Re(conj(s1) s2)) + 2i atan2(Im s1, Re s2), s1 = sqrt(z - 1), s2 = sqrt(z + 1)."""
    z = shared_z(tr, z)
    s1, s2 = _roots(tr, z, node, -1.0)
    m = tr.binop
    re = asinh_real(tr, m("add", m("mul", s1.re, s2.re, node), m("mul", s1.im, s2.im, node), node), node)
    im = m("mul", 2.0, _np(tr, np.arctan2, s1.im, s2.re, node=node), node)
    return special.arccosh(tr, z, Complex(re, im, z.weak), node)


def arcsinh(tr, z: Complex, node: ast.AST) -> Complex:
    return _times_minus_i(tr, arcsin(tr, _times_i(tr, z, node), node), node)


def arctanh(tr, z: Complex, node: ast.AST) -> Complex:
    z = shared_z(tr, z)
    a, b = z.re, z.im
    m = tr.binop
    one_minus = shared(tr, m("sub", 1.0, a, node))
    b2 = shared(tr, m("mul", b, b, node))
    re = m("mul", 0.25, _np(tr, np.log1p, m("div", m("mul", 4.0, a, node),
                                             m("add", m("mul", one_minus, one_minus, node), b2, node), node),
                            node=node), node)
    im = m("mul", 0.5, _np(tr, np.arctan2, m("mul", 2.0, b, node),
                            m("sub", m("mul", one_minus, m("add", 1.0, a, node), node), b2, node), node=node), node)
    return special.arctanh(tr, z, Complex(re, im, z.weak), node)


def arctan(tr, z: Complex, node: ast.AST) -> Complex:
    z = shared_z(tr, z)
    return special.arctan(tr, z, _times_minus_i(tr, arctanh(tr, _times_i(tr, z, node), node), node), node)


FUNCTIONS = {np.sin: sin, np.cos: cos, np.tan: tan, np.sinh: sinh, np.cosh: cosh, np.tanh: tanh,
             np.arcsin: arcsin, np.arccos: arccos, np.arctan: arctan, np.arcsinh: arcsinh, np.arccosh: arccosh,
             np.arctanh: arctanh}
"""The complex forms of these NumPy ufuncs (complex_calls.py dispatches to them)."""
