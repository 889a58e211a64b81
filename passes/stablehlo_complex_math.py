"""Complex arithmetic on pairs of real tensors, from nn ops, for `convert-stablehlo`.

A complex value is a `Pair` (real parts, imaginary parts): two tensors of
one float type and shape. The formulas are the textbook ones NumPy's and
C's complex libraries use, chosen to avoid overflow and cancellation where
they do: Smith's division (scaled by the larger part of the divisor), `abs`
as an overflow-safe hypot, `sqrt` scaled for huge values, `log1p` and
`expm1` from the real `log1p`/`expm1`, `tanh` saturating for a large real
part. `passes.stablehlo_complex` builds the stablehlo ops of complex
operands from these.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects.builtin import Float64Type, TensorType
from xdsl.ir import Operation, SSAValue

from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.dialects.nn_arith_builders import NNArithmetic

Pair = tuple[SSAValue, SSAValue]
"""A complex value: its real and its imaginary parts."""


class ComplexMath(NNArithmetic):
    """The complex functions, mixed into the converter (`ins` inserts an op and returns its result)."""

    ins: Callable[[Operation], SSAValue]

    # ------------------------------------------------------------ real helpers

    def is_zero(self, z: Pair) -> SSAValue:
        zero = self.num(0.0, z[0])
        return self.both(self.cmp(z[0], zero, "EQ"), self.cmp(z[1], zero, "EQ"))

    def has_nan(self, z: Pair) -> SSAValue:
        return self.either(self.cmp(z[0], z[0], "NE"), self.cmp(z[1], z[1], "NE"))

    def sinh(self, b: SSAValue) -> SSAValue:
        """(expm1(b) - expm1(-b)) / 2: no cancellation near 0."""
        return self.mul(self.sub(self.fn(nne.Expm1Op, b), self.fn(nne.Expm1Op, self.neg(b))), self.num(0.5, b))

    def cosh(self, b: SSAValue) -> SSAValue:
        return self.mul(self.add(self.fn(nn.ExpOp, b), self.fn(nn.ExpOp, self.neg(b))), self.num(0.5, b))

    # ------------------------------------------------------------ arithmetic

    def c_add(self, x: Pair, y: Pair) -> Pair:
        return self.add(x[0], y[0]), self.add(x[1], y[1])

    def c_mul(self, x: Pair, y: Pair) -> Pair:
        """(a + bi)(c + di) = (ac - bd) + (ad + bc)i."""
        (a, b), (c, d) = x, y
        return self.sub(self.mul(a, c), self.mul(b, d)), self.add(self.mul(a, d), self.mul(b, c))

    def c_div(self, x: Pair, y: Pair) -> Pair:
        """Smith's division, scaled by the larger part of the divisor; a zero divisor divides each part
        by 0 (inf or NaN), as NumPy does."""
        (a, b), (c, d) = x, y
        abs_c, abs_d = self.fn(nne.AbsOp, c), self.fn(nne.AbsOp, d)
        big = self.cmp(abs_c, abs_d, "GE")
        rat = self.where(big, self.div(d, c), self.div(c, d))
        denominator = self.where(big, self.add(c, self.mul(d, rat)), self.add(d, self.mul(c, rat)))
        scale = self.div(self.num(1.0, c), denominator)
        re = self.where(big, self.add(a, self.mul(b, rat)), self.add(self.mul(a, rat), b))
        im = self.where(big, self.sub(b, self.mul(a, rat)), self.sub(self.mul(b, rat), a))
        zero = self.is_zero(y)
        return (self.where(zero, self.div(a, abs_c), self.mul(re, scale)),
                self.where(zero, self.div(b, abs_c), self.mul(im, scale)))

    def c_abs(self, z: Pair) -> SSAValue:
        """|z| as hypot: max * sqrt(1 + (min/max)^2); 0 for 0, inf when a part is infinite (even with NaN)."""
        a, b = self.fn(nne.AbsOp, z[0]), self.fn(nne.AbsOp, z[1])
        big, small = self.fn(nne.MaximumOp, a, b), self.fn(nne.MinimumOp, a, b)
        q = self.div(small, big)
        r = self.mul(big, self.fn(nn.SqrtOp, self.add(self.num(1.0, a), self.mul(q, q))))
        r = self.where(self.cmp(big, self.num(0.0, a), "EQ"), big, r)
        inf = self.num(math.inf, a)
        return self.where(self.either(self.cmp(a, inf, "EQ"), self.cmp(b, inf, "EQ")), inf, r)

    def c_arg(self, z: Pair) -> SSAValue:
        return self.fn(nne.Atan2Op, z[1], z[0])

    # ------------------------------------------------------------ exponentials

    def c_exp(self, z: Pair) -> Pair:
        """e^a (cos b + i sin b); a real argument (b == 0) keeps b as the imaginary part."""
        a, b = z
        e = self.fn(nn.ExpOp, a)
        real = self.cmp(b, self.num(0.0, b), "EQ")
        return (self.where(real, e, self.mul(e, self.fn(nne.CosineOp, b))),
                self.where(real, b, self.mul(e, self.fn(nne.SineOp, b))))

    def c_expm1(self, z: Pair) -> Pair:
        """(expm1(a) cos b - 2 sin^2(b/2)) + i e^a sin b: no cancellation near 0."""
        a, b = z
        half = self.fn(nne.SineOp, self.mul(b, self.num(0.5, b)))
        re = self.sub(self.mul(self.fn(nne.Expm1Op, a), self.fn(nne.CosineOp, b)),
                      self.mul(self.num(2.0, b), self.mul(half, half)))
        return re, self.c_exp(z)[1]

    def c_log(self, z: Pair) -> Pair:
        return self.fn(nn.LogOp, self.c_abs(z)), self.c_arg(z)

    def c_log1p(self, z: Pair) -> Pair:
        """log|1 + z| as log1p(a (2 + a) + b^2) / 2 (log of the hypot where that overflows), arg(1 + z)."""
        a, b = z
        one = self.num(1.0, a)
        t = self.add(self.mul(a, self.add(self.num(2.0, a), a)), self.mul(b, b))
        shifted = (self.add(one, a), b)
        finite = self.cmp(self.sub(t, t), self.num(0.0, a), "EQ")
        re = self.where(finite, self.mul(self.fn(nne.Log1pOp, t), self.num(0.5, a)),
                        self.fn(nn.LogOp, self.c_abs(shifted)))
        return re, self.c_arg(shifted)

    def c_sqrt(self, z: Pair) -> Pair:
        """t = sqrt((|a| + |z|) / 2); (t, b / 2t) for a >= 0, else (|b| / 2t, t with b's sign); 0 for 0
        (the imaginary part keeps b). A huge z is scaled by 1/4 first and its root by 2 after."""
        a0, b0 = z
        huge = 1e300 if self._f64(a0) else 1e37
        big = self.cmp(self.c_abs(z), self.num(huge, a0), "GT")
        scale = self.where(big, self.num(0.25, a0), self.num(1.0, a0))
        a, b = self.mul(a0, scale), self.mul(b0, scale)
        a_abs = self.fn(nne.AbsOp, a)
        t = self.fn(nn.SqrtOp, self.mul(self.add(a_abs, self.c_abs((a, b))), self.num(0.5, a)))
        two_t = self.mul(t, self.num(2.0, a))
        zero = self.num(0.0, a)
        nonneg = self.cmp(a, zero, "GE")
        re = self.where(nonneg, t, self.div(self.fn(nne.AbsOp, b), two_t))
        im = self.where(nonneg, self.div(b, two_t), self.where(self.cmp(b, zero, "LT"), self.neg(t), t))
        unscale = self.where(big, self.num(2.0, a), self.num(1.0, a))
        origin = self.is_zero((a, b))
        return (self.where(origin, self.mul(a_abs, zero), self.mul(re, unscale)),
                self.where(origin, b0, self.mul(im, unscale)))

    def c_rsqrt(self, z: Pair) -> Pair:
        return self.c_div(self.c_real(1.0, z), self.c_sqrt(z))

    def c_cbrt(self, z: Pair) -> Pair:
        """The principal cube root: cbrt(|z|) (cos(arg z / 3) + i sin(arg z / 3))."""
        r = self.fn(nne.CbrtOp, self.c_abs(z))
        theta = self.mul(self.c_arg(z), self.num(1.0 / 3.0, z[0]))
        return self.mul(r, self.fn(nne.CosineOp, theta)), self.mul(r, self.fn(nne.SineOp, theta))

    def c_pow(self, x: Pair, y: Pair) -> Pair:
        """exp(y log x); x^0 = 1, and 0^y = 0 for a real y > 0 (NaN for any other y), as NumPy."""
        r = self.c_exp(self.c_mul(y, self.c_log(x)))
        zero = self.num(0.0, x[0])
        nan = self.num(math.nan, x[0])
        y_zero, x_zero = self.is_zero(y), self.is_zero(x)
        positive = self.both(self.cmp(y[0], zero, "GT"), self.cmp(y[1], zero, "EQ"))
        at_zero = self.where(positive, zero, nan)
        re, im = (self.where(y_zero, self.num(one, x[0]), self.where(x_zero, at_zero, part))
                  for part, one in zip(r, (1.0, 0.0)))
        return re, im

    def c_logistic(self, z: Pair) -> Pair:
        """1 / (1 + e^-z)."""
        e = self.c_exp((self.neg(z[0]), self.neg(z[1])))
        return self.c_div(self.c_real(1.0, z), (self.add(self.num(1.0, z[0]), e[0]), e[1]))

    # ------------------------------------------------------------ trigonometry

    def c_sin(self, z: Pair) -> Pair:
        a, b = z
        return (self.mul(self.fn(nne.SineOp, a), self.cosh(b)), self.mul(self.fn(nne.CosineOp, a), self.sinh(b)))

    def c_cos(self, z: Pair) -> Pair:
        a, b = z
        return (self.mul(self.fn(nne.CosineOp, a), self.cosh(b)),
                self.neg(self.mul(self.fn(nne.SineOp, a), self.sinh(b))))

    def c_tanh(self, z: Pair) -> Pair:
        """(sinh 2a + i sin 2b) / (cosh 2a + cos 2b); for |a| > 20 (where tanh a rounds to +-1) the
        limit (sign a, 2 sin 2b e^(-2|a|)), which does not overflow."""
        a, b = z
        two_a, two_b = self.mul(a, self.num(2.0, a)), self.mul(b, self.num(2.0, b))
        d = self.add(self.cosh(two_a), self.fn(nne.CosineOp, two_b))
        sin_2b = self.fn(nne.SineOp, two_b)
        far = self.cmp(self.fn(nne.AbsOp, a), self.num(20.0, a), "GT")
        decay = self.fn(nn.ExpOp, self.neg(self.fn(nne.AbsOp, two_a)))
        return (self.where(far, self.fn(nne.SignOp, a), self.div(self.sinh(two_a), d)),
                self.where(far, self.mul(self.num(2.0, a), self.mul(sin_2b, decay)), self.div(sin_2b, d)))

    def c_tan(self, z: Pair) -> Pair:
        """tan z = -i tanh(iz)."""
        re, im = self.c_tanh((self.neg(z[1]), z[0]))
        return im, self.neg(re)

    def c_atan2(self, y: Pair, x: Pair) -> Pair:
        """The spec's atan2 of complex numbers: -i log((x + iy) / sqrt(x^2 + y^2))."""
        num = (self.sub(x[0], y[1]), self.add(x[1], y[0]))
        den = self.c_sqrt(self.c_add(self.c_mul(x, x), self.c_mul(y, y)))
        re, im = self.c_log(self.c_div(num, den))
        return im, self.neg(re)

    def c_sign(self, z: Pair) -> Pair:
        """z / |z|; 0 for 0, NaN (both parts) where a part is NaN."""
        r = self.c_abs(z)
        zero, nan = self.is_zero(z), self.has_nan(z)
        re, im = (self.where(nan, self.num(math.nan, p), self.where(zero, p, self.div(p, r))) for p in z)
        return re, im

    # ------------------------------------------------------------ helpers

    def c_real(self, value: float, like: Pair) -> Pair:
        """The 0-d complex constant `value` + 0i of `like`'s part type."""
        return self.num(value, like[0]), self.num(0.0, like[0])

    @staticmethod
    def _f64(x: SSAValue) -> bool:
        assert isinstance(x.type, TensorType)
        return isinstance(x.type.element_type, Float64Type)
