"""Pure expansions of the special-function nn ops of `dialects.nn_special`: one df map whose tasklet widens
the element to f64, evaluates Cephes' algorithm (loops unrolled, an early exit a frozen partial sum) and
rounds back to the operand's type."""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import Float64Type, IntegerAttr, TensorType, f64, i1
from xdsl.ir import Operation, SSAValue

from dfc.dialects import nn_special as sp
from dfc.dialects.df_builders import Scalar, elementwise
from dfc.dialects.nn_expand_elementwise import convert_scalar
from dfc.dialects.special_coefficients import (
    ERFC_P,
    ERFC_Q,
    ERFC_R,
    ERFC_S,
    I0E_A,
    I0E_B,
    I1E_A,
    I1E_B,
    LANCZOS,
    LANCZOS_G,
    NDTRI_P0,
    NDTRI_P1,
    NDTRI_P2,
    NDTRI_Q0,
    NDTRI_Q1,
    NDTRI_Q2,
    ZETA_A,
)

MACHEP = 1.11022302462515654042e-16
ZETA_TERMS = 30
"""The direct terms Hurwitz zeta sums at most: Cephes sums until 9 terms and q + terms > 9, so q > -21."""


class F64:
    """Scalar f64 arithmetic for the bodies: `Scalar` plus the comparisons and math ops they need."""

    def __init__(self, s: Scalar):
        self.s = s

    def ins(self, op: Operation) -> SSAValue:
        return self.s.b.insert(op).results[0]

    def k(self, value: float) -> SSAValue:
        return self.s.const(value, f64)

    def add(self, a, b):
        return self.s.add(a, b)

    def sub(self, a, b):
        return self.s.sub(a, b)

    def mul(self, a, b):
        return self.s.mul(a, b)

    def div(self, a, b):
        return self.s.div(a, b)

    def cmp(self, a, b, predicate: str) -> SSAValue:
        return self.ins(arith.CmpfOp(a, b, predicate))

    def sel(self, c, a, b):
        return self.s.select(c, a, b)

    def both(self, a, b):
        return self.ins(arith.AndIOp(a, b))

    def either(self, a, b):
        return self.ins(arith.OrIOp(a, b))

    def not_(self, a):
        return self.ins(arith.XOrIOp(a, self.ins(arith.ConstantOp(IntegerAttr(1, i1)))))

    def abs(self, x):
        return self.ins(math.AbsFOp(x))

    def max(self, a, b):
        return self.ins(arith.MaximumfOp(a, b))

    def min(self, a, b):
        return self.ins(arith.MinimumfOp(a, b))

    def fn(self, cls: type[Operation], *args: SSAValue) -> SSAValue:
        return self.ins(cls(*args))

    def poly(self, x, coefficients: Sequence[float]) -> SSAValue:
        """Horner's scheme, highest power first."""
        acc = self.k(coefficients[0])
        for c in coefficients[1:]:
            acc = self.add(self.mul(acc, x), self.k(c))
        return acc

    def chebyshev(self, x, coefficients: Sequence[float]) -> SSAValue:
        """Cephes' `chbevl`: the Chebyshev series at x (the coefficients as it lists them)."""
        b0, b1, b2 = self.k(coefficients[0]), self.k(0.0), self.k(0.0)
        for c in coefficients[1:]:
            b2, b1 = b1, b0
            b0 = self.add(self.sub(self.mul(x, b1), b2), self.k(c))
        return self.mul(self.k(0.5), self.sub(b0, b2))

    def is_nan(self, x):
        return self.cmp(x, x, "une")


# ------------------------------------------------------------ log-gamma, digamma, polygamma, zeta


def _lanczos(m: F64, u: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(lgamma(u), digamma(u)) for u >= 1/2 by Lanczos' approximation."""
    z = m.sub(u, m.k(1.0))
    total, slope = m.k(LANCZOS[0]), m.k(0.0)
    for i, c in enumerate(LANCZOS[1:], start=1):
        d = m.add(z, m.k(float(i)))
        term = m.div(m.k(c), d)
        total = m.add(total, term)
        slope = m.sub(slope, m.div(term, d))
    shift = LANCZOS_G + 0.5
    t = m.add(z, m.k(shift))
    log_t = m.add(m.k(pymath.log(shift)), m.fn(math.Log1pOp, m.div(z, m.k(shift))))
    lgamma = m.add(m.sub(m.mul(m.add(z, m.k(0.5)), log_t), t),
                   m.add(m.k(0.5 * pymath.log(2 * pymath.pi)), m.fn(math.LogOp, total)))
    digamma = m.add(m.sub(log_t, m.div(m.k(LANCZOS_G), t)), m.div(slope, total))
    return lgamma, digamma


def _reflected(m: F64, x: SSAValue) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue]:
    """(x < 1/2, the argument u >= 1/2 (1 - x there, x elsewhere; 1 for +-inf), pi r with r = x - round(x)
    (a quarter where not reflected), x a pole: a non-positive integer)."""
    reflect = m.cmp(x, m.k(0.5), "olt")
    u = m.sel(reflect, m.sub(m.k(1.0), x), x)
    u = m.sel(m.cmp(u, m.k(pymath.inf), "oeq"), m.k(1.0), u)
    r = m.sub(x, m.fn(math.RoundEvenOp, x))
    pole = m.both(m.cmp(x, m.k(0.0), "ole"), m.cmp(m.fn(math.FloorOp, x), x, "oeq"))
    r = m.sel(m.both(reflect, m.not_(pole)), r, m.k(0.25))
    return reflect, u, m.mul(r, m.k(pymath.pi)), pole


def lgamma(m: F64, x: SSAValue) -> SSAValue:
    reflect, u, pr, pole = _reflected(m, x)
    lanczos, _ = _lanczos(m, u)
    log_sin = m.fn(math.LogOp, m.abs(m.fn(math.SinOp, pr)))
    value = m.sel(reflect, m.sub(m.sub(m.k(pymath.log(pymath.pi)), log_sin), lanczos), lanczos)
    infinite = m.either(pole, m.cmp(m.abs(x), m.k(pymath.inf), "oeq"))
    value = m.sel(m.either(m.cmp(x, m.k(1.0), "oeq"), m.cmp(x, m.k(2.0), "oeq")), m.k(0.0), value)  # exact zeros
    return m.sel(infinite, m.k(pymath.inf), value)


def digamma(m: F64, x: SSAValue) -> SSAValue:
    """PyTorch's values at the poles: -inf at +0 and +inf at -0 (the one-sided limits), NaN at -1, -2, ...
    and -inf."""
    reflect, u, pr, pole = _reflected(m, x)
    _, lanczos = _lanczos(m, u)
    value = m.sel(reflect, m.sub(lanczos, m.div(m.k(pymath.pi), m.fn(math.TanOp, pr))), lanczos)
    value = m.sel(m.cmp(x, m.k(pymath.inf), "oeq"), x, value)
    value = m.sel(m.cmp(x, m.k(-pymath.inf), "oeq"), m.k(pymath.nan), value)
    value = m.sel(pole, m.k(pymath.nan), value)
    signed_inf = m.sel(m.cmp(m.div(m.k(1.0), x), m.k(0.0), "olt"), m.k(pymath.inf), m.k(-pymath.inf))
    return m.sel(m.cmp(x, m.k(0.0), "oeq"), signed_inf, value)


def zeta(m: F64, x: SSAValue, q: SSAValue, terms: int = ZETA_TERMS) -> SSAValue:
    """Cephes' Hurwitz zeta with its loop unrolled `terms` times (NaN where q needs more)."""
    minus_x = m.s.neg(x)
    s = m.fn(math.PowFOp, q, minus_x)
    a, b = q, m.k(0.0)
    done = m.cmp(s, s, "une")  # false unless NaN
    for i in range(terms):
        active = m.not_(done)
        if i >= 9:
            active = m.both(active, m.cmp(a, m.k(9.0), "ole"))
        a_next = m.add(a, m.k(1.0))
        b_next = m.fn(math.PowFOp, a_next, minus_x)
        s_next = m.add(s, b_next)
        bound = m.mul(m.k(MACHEP), s_next)  # Cephes' test: -MACHEP s < b < MACHEP s
        converged = m.both(m.cmp(m.s.neg(bound), b_next, "olt"), m.cmp(b_next, bound, "olt"))
        a, b, s = m.sel(active, a_next, a), m.sel(active, b_next, b), m.sel(active, s_next, s)
        done = m.either(done, m.both(active, converged))
    short = m.both(m.not_(done), m.cmp(a, m.k(9.0), "ole"))
    w = a
    tail = m.sub(m.add(s, m.div(m.mul(b, w), m.sub(x, m.k(1.0)))), m.mul(m.k(0.5), b))
    factor, k, tail_done = m.k(1.0), 0.0, done
    for c in ZETA_A:
        factor = m.mul(factor, m.add(x, m.k(k)))
        b = m.div(b, w)
        t = m.div(m.mul(factor, b), m.k(c))
        summed = m.add(tail, t)
        converged = m.cmp(m.abs(m.div(t, summed)), m.k(MACHEP), "olt")
        tail = m.sel(tail_done, tail, summed)
        tail_done = m.either(tail_done, converged)
        factor = m.mul(factor, m.add(x, m.k(k + 1.0)))
        b = m.div(b, w)
        k += 2.0
    value = m.sel(done, s, tail)
    value = m.sel(short, m.k(pymath.nan), value)
    q_pole = m.both(m.cmp(q, m.k(0.0), "ole"), m.cmp(m.fn(math.FloorOp, q), q, "oeq"))
    x_fraction = m.cmp(m.fn(math.FloorOp, x), x, "une")
    value = m.sel(m.both(m.cmp(q, m.k(0.0), "ole"), x_fraction), m.k(pymath.nan), value)
    value = m.sel(q_pole, m.k(pymath.inf), value)
    value = m.sel(m.cmp(x, m.k(1.0), "olt"), m.k(pymath.nan), value)
    return m.sel(m.cmp(x, m.k(1.0), "oeq"), m.k(pymath.inf), value)


def cot_derivative(n: int) -> list[int]:
    """The integer coefficients (lowest power first) of P_n with d^n/dy^n cot(y) = P_n(cot y):
    P_0(c) = c, P_{k+1}(c) = -(1 + c^2) P_k'(c)."""
    p = [0, 1]
    for _ in range(n):
        dp = [i * c for i, c in enumerate(p)][1:] or [0]
        nxt = [0] * (len(dp) + 2)
        for i, c in enumerate(dp):
            nxt[i] -= c
            nxt[i + 2] -= c
        p = nxt
    return p


def polygamma(m: F64, x: SSAValue, n: int) -> SSAValue:
    """psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for x >= 1/2; below, psi^(n)(x) = (-1)^n psi^(n)(1 - x)
    - pi^(n+1) P_n(cot(pi x)); (-1)^(n+1) (n - 1)! x^-n (1 + n / (2 x)) beyond 2^52 (where the terms of zeta
    underflow one by one); (-1)^(n+1) inf at the poles (every float below -2^52 is one), 0 at +inf, NaN at -inf.
    """
    if n == 0:
        return digamma(m, x)
    reflect, u, pr, pole = _reflected(m, x)
    factorial = float(pymath.factorial(n))
    direct = m.mul(m.k(factorial * (-1) ** (n + 1)), zeta(m, m.k(n + 1.0), u, terms=9))
    cot = m.div(m.k(1.0), m.fn(math.TanOp, pr))
    reflection = m.sub(m.s.neg(direct) if n % 2 else direct,
                       m.mul(m.k(pymath.pi ** (n + 1)), m.poly(cot, [float(c) for c in reversed(cot_derivative(n))])))
    value = m.sel(reflect, reflection, direct)
    huge = m.cmp(x, m.k(2.0 ** 52), "ogt")
    big = m.max(x, m.k(2.0 ** 52))
    asymptotic = m.mul(m.mul(m.k(float(pymath.factorial(n - 1) * (-1) ** (n + 1))), m.fn(math.PowFOp, big, m.k(-n))),
                       m.add(m.k(1.0), m.div(m.k(n / 2), big)))
    value = m.sel(huge, asymptotic, value)
    value = m.sel(pole, m.k(pymath.inf * (-1) ** (n + 1)), value)
    return m.sel(m.cmp(x, m.k(-pymath.inf), "oeq"), m.k(pymath.nan), value)


# ------------------------------------------------------------ Bessel I0, I1 and their scaled forms


def _bessel_scaled(m: F64, x: SSAValue, first: bool) -> SSAValue:
    """exp(-|x|) I0(|x|), or exp(-|x|) I1(|x|) with `first`, by Cephes' two Chebyshev series."""
    ax = m.abs(x)
    near = m.chebyshev(m.sub(m.mul(ax, m.k(0.5)), m.k(2.0)), I1E_A if first else I0E_A)
    if first:
        near = m.mul(near, ax)
    big = m.max(ax, m.k(8.0))
    far = m.div(m.chebyshev(m.sub(m.div(m.k(32.0), big), m.k(2.0)), I1E_B if first else I0E_B),
                m.fn(math.SqrtOp, big))
    return m.sel(m.cmp(ax, m.k(8.0), "ole"), near, far)


def _odd(m: F64, x: SSAValue, magnitude: SSAValue) -> SSAValue:
    return m.sel(m.cmp(x, m.k(0.0), "olt"), m.s.neg(magnitude), magnitude)


def bessel_i0e(m: F64, x: SSAValue) -> SSAValue:
    return _bessel_scaled(m, x, False)


def bessel_i0(m: F64, x: SSAValue) -> SSAValue:
    return m.mul(m.fn(math.ExpOp, m.abs(x)), _bessel_scaled(m, x, False))


def bessel_i1e(m: F64, x: SSAValue) -> SSAValue:
    return _odd(m, x, _bessel_scaled(m, x, True))


def bessel_i1(m: F64, x: SSAValue) -> SSAValue:
    return _odd(m, x, m.mul(m.fn(math.ExpOp, m.abs(x)), _bessel_scaled(m, x, True)))


# ------------------------------------------------------------ erfcx, ndtri, log_ndtr


def _erfcx_positive(m: F64, a: SSAValue) -> SSAValue:
    """erfcx(a) for a >= 0: exp(a^2) (1 - erf(a)) below 1, Cephes' P / Q to 8, R / S (in 1 / a) beyond."""
    near = m.mul(m.fn(math.ExpOp, m.mul(a, a)), m.sub(m.k(1.0), m.fn(math.ErfOp, m.min(a, m.k(1.0)))))
    t = m.min(m.max(a, m.k(1.0)), m.k(8.0))
    middle = m.div(m.poly(t, ERFC_P), m.poly(t, ERFC_Q))
    z = m.div(m.k(1.0), m.max(a, m.k(8.0)))
    far = m.div(m.mul(z, m.poly(z, tuple(reversed(ERFC_R)))), m.poly(z, tuple(reversed(ERFC_S))))
    return m.sel(m.cmp(a, m.k(1.0), "olt"), near, m.sel(m.cmp(a, m.k(8.0), "olt"), middle, far))


def _gauss(m: F64, a: SSAValue) -> SSAValue:
    """exp(-a^2) to f64's accuracy for large a >= 0: a = h + (a - h), h a multiple of 1/128, so h^2 is exact
    (a capped at 28, where exp(-a^2) is 0)."""
    a = m.min(a, m.k(28.0))
    h = m.div(m.fn(math.FloorOp, m.mul(a, m.k(128.0))), m.k(128.0))
    return m.mul(m.fn(math.ExpOp, m.s.neg(m.mul(h, h))), m.fn(math.ExpOp, m.s.neg(m.mul(m.sub(a, h), m.add(a, h)))))


def erfc(m: F64, x: SSAValue) -> SSAValue:
    a = m.abs(x)
    tail = m.mul(_gauss(m, a), _erfcx_positive(m, m.max(a, m.k(1.0))))
    tail = m.sel(m.cmp(x, m.k(0.0), "olt"), m.sub(m.k(2.0), tail), tail)
    near = m.sub(m.k(1.0), m.fn(math.ErfOp, m.min(m.max(x, m.k(-1.0)), m.k(1.0))))
    value = m.sel(m.cmp(a, m.k(1.0), "olt"), near, tail)
    return m.sel(m.is_nan(x), x, value)


def erfcx(m: F64, x: SSAValue) -> SSAValue:
    positive = _erfcx_positive(m, m.abs(x))
    negative = m.sub(m.mul(m.k(2.0), m.fn(math.ExpOp, m.mul(x, x))), positive)
    value = m.sel(m.cmp(x, m.k(0.0), "olt"), negative, positive)
    return m.sel(m.is_nan(x), x, value)


def log_ndtr(m: F64, x: SSAValue) -> SSAValue:
    t = m.mul(x, m.k(pymath.sqrt(0.5)))
    low = m.sub(m.fn(math.LogOp, m.mul(_erfcx_positive(m, m.abs(t)), m.k(0.5))), m.mul(t, t))
    high = m.fn(math.Log1pOp, m.mul(erfc(m, m.max(t, m.k(-1.0))), m.k(-0.5)))
    value = m.sel(m.cmp(x, m.k(-1.0), "olt"), low, high)
    return m.sel(m.is_nan(x), x, value)


def ndtri(m: F64, y: SSAValue) -> SSAValue:
    one, zero = m.k(1.0), m.k(0.0)
    upper = m.cmp(y, m.k(1.0 - 0.13533528323661269189), "ogt")
    tail_y = m.sel(upper, m.sub(one, y), y)
    central_y = m.sub(y, m.k(0.5))
    y2 = m.mul(central_y, central_y)
    central = m.mul(m.add(central_y, m.mul(central_y, m.div(m.mul(y2, m.poly(y2, NDTRI_P0)), m.poly(y2, NDTRI_Q0)))),
                    m.k(2.50662827463100050242))
    safe = m.min(m.max(tail_y, m.k(5e-324)), m.k(0.13533528323661269189))
    r = m.fn(math.SqrtOp, m.mul(m.k(-2.0), m.fn(math.LogOp, safe)))
    x0 = m.sub(r, m.div(m.fn(math.LogOp, r), r))
    z = m.div(one, r)
    x1 = m.sel(m.cmp(r, m.k(8.0), "olt"), m.div(m.mul(z, m.poly(z, NDTRI_P1)), m.poly(z, NDTRI_Q1)),
               m.div(m.mul(z, m.poly(z, NDTRI_P2)), m.poly(z, NDTRI_Q2)))
    tail = m.sub(x0, x1)
    tail = m.sel(upper, tail, m.s.neg(tail))
    value = m.sel(m.cmp(tail_y, m.k(0.13533528323661269189), "ogt"), central, tail)
    value = m.sel(m.either(m.cmp(y, zero, "olt"), m.cmp(y, one, "ogt")), m.k(pymath.nan), value)
    value = m.sel(m.cmp(y, zero, "oeq"), m.k(-pymath.inf), value)
    value = m.sel(m.cmp(y, one, "oeq"), m.k(pymath.inf), value)
    return m.sel(m.is_nan(y), y, value)


# ------------------------------------------------------------ the expansions


def _in_f64(b: Builder, op: Operation, fn: Callable[[F64, Sequence[SSAValue]], SSAValue]) -> SSAValue:
    """One map over the result whose tasklet computes fn of the operands widened to f64, rounded back."""
    out = op.results[0].type
    assert isinstance(out, TensorType)
    e = out.element_type

    def body(s: Scalar, args: Sequence[SSAValue]) -> SSAValue:
        m = F64(s)
        wide = [a if isinstance(a.type, Float64Type) else convert_scalar(s, a, f64) for a in args]
        return convert_scalar(s, fn(m, wide), e)

    return elementwise(b, out, list(op.operands), body)


_UNARY: dict[type[Operation], Callable[[F64, SSAValue], SSAValue]] = {
    sp.LgammaOp: lgamma,
    sp.DigammaOp: digamma,
    sp.BesselI0Op: bessel_i0,
    sp.BesselI0eOp: bessel_i0e,
    sp.BesselI1Op: bessel_i1,
    sp.BesselI1eOp: bessel_i1e,
    sp.ErfcOp: erfc,
    sp.ErfcxOp: erfcx,
    sp.NdtriOp: ndtri,
    sp.LogNdtrOp: log_ndtr,
}


def _unary(b: Builder, op: Operation) -> SSAValue:
    fn = _UNARY[type(op)]
    return _in_f64(b, op, lambda m, a: fn(m, a[0]))


def _polygamma(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, sp.PolygammaOp)
    n = op.n.value.data
    return _in_f64(b, op, lambda m, a: polygamma(m, a[0], n))


def _zeta(b: Builder, op: Operation) -> SSAValue:
    return _in_f64(b, op, lambda m, a: zeta(m, a[0], a[1]))


SPECIAL_EXPANSIONS: dict[type[Operation], Callable[[Builder, Operation], SSAValue]] = {
    **{cls: _unary for cls in _UNARY},
    sp.PolygammaOp: _polygamma,
    sp.ZetaOp: _zeta,
}
