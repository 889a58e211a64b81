"""The `chlo` elementwise ops in `convert-stablehlo`, decomposed into nn ops.

* square `x * x`; sinh and cosh `exp(+-x - ln 2)` summed (no overflow below
  ln(max) + ln 2), sinh by `(expm1(x) - expm1(-x)) / 2` for |x| < 1 (no
  cancellation near 0); atan `atan2(x, 1)`, asin `atan2(x, sqrt((1 - x)(1 + x)))`,
  acos `atan2(sqrt((1 - x)(1 + x)), x)`; asinh `log1p(a + a^2 / (1 + sqrt(1 +
  a^2)))` with x's sign and acosh `log1p(x - 1 + sqrt((x - 1)(x + 1)))`, both
  `log(a) + ln 2` beyond 2^28 (a^2 would overflow), acosh NaN below 1; atanh
  `log1p(2a / (1 - a)) / 2` with x's sign.
* lgamma, digamma, polygamma (of a constant order n), zeta and bessel_i1e are
  the nn ops of `dialects.nn_special` (evaluated in f64 whatever the type);
  digamma is NaN at 0 as in XLA (nn.digamma's is PyTorch's signed infinity).
* erf, erfc and erf_inv are computed in f64 (an f32, f16 or
  bf16 operand converted, the result rounded back): erf is `nn.erf` (libm's);
  erfc is `1 - erf` for |x| < 1 and Cephes' rational approximations
  `exp(-x^2) P(|x|) / Q(|x|)` on [1, 8) and `exp(-x^2) R(|x|) / S(|x|)` beyond
  (0 once x^2 exceeds ln(max)), `2 - erfc(-x)` for x < 0; erf_inv starts from
  Giles' approximation and takes two Halley steps on
  `erf(y) = |x|` (on `erfc(y) = 1 - |x|` for |x| >= 1/2, where 1 - |x| is exact),
  +-inf at +-1, NaN beyond. Each branch of a select gets an argument inside
  its domain, so the gradient through the branch not taken is 0, not NaN.
* next_after on the bits (`nn.bitcast_convert`): the integer of x's bits
  moved by one toward y, the smallest subnormal with y's sign from 0, y
  where x == y, NaN where either is NaN.

Other chlo elementwise ops (conj, is_inf, ...) and a polygamma of a computed
order are errors at the op naming them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import AnyFloat, Float64Type, IntegerAttr, IntegerType, TensorType, f64
from xdsl.ir import Operation, SSAValue

from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_special as nsp
from dfc.dialects.diagnostics import CompileError
from dfc.dialects.nn_arith_builders import NNArithmetic
from dfc.dialects.special_coefficients import ERFC_P, ERFC_Q, ERFC_R, ERFC_S

GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                 -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
              -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
GILES_FAR = (-2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
             -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
             2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
             -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
             7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
             1.0103004648645343977, 4.8499064014085844221)
"""Giles' erf_inv: p(w - 2.5) for w = -log(1 - x^2) < 5, p(sqrt(w) - 3) below 16 (single precision), his
double-precision p(sqrt(w) - 5) beyond (1 - |x| < 6e-8: f64 only); erfinv = p x."""
HALLEY_STEPS = 2
"""Halley's steps (cubic: erf''/erf' = -2y): from Giles' ~1e-7 to below f64's resolution."""


def _tensor(v: SSAValue) -> TensorType:
    assert isinstance(v.type, TensorType)
    return v.type


class ChloConversions(NNArithmetic):
    """The `on_<chlo op>` handlers, mixed into the converter (which provides `ins` and `splat`, the value of a
    splat constant or None)."""

    splat: Callable[[SSAValue], float | int | None]

    def _poly(self, x: SSAValue, coefficients: Sequence[float]) -> SSAValue:
        """Horner's scheme, highest power first."""
        acc = self.num(coefficients[0], x)
        for c in coefficients[1:]:
            acc = self.add(self.mul(acc, x), self.num(c, x))
        return acc

    def _in_f64(self, op: Operation, compute) -> list[SSAValue]:
        """`compute` of the operands converted to f64, converted back to the result's type."""
        e = _tensor(op.results[0]).element_type
        if not isinstance(e, AnyFloat):
            raise CompileError.at(op, f"convert-stablehlo: '{op.name}' of {e} is not supported")
        wide = [v if isinstance(_tensor(v).element_type, Float64Type) else self.ins(nne.ConvertOp(v, f64))
                for v in op.operands]
        out = compute(*wide)
        return [out if isinstance(e, Float64Type) else self.ins(nne.ConvertOp(out, e))]

    # ------------------------------------------------------------ elementary functions

    def on_square(self, op: Operation) -> Sequence[SSAValue]:
        return [self.mul(op.operands[0], op.operands[0])]

    def _exp_halves(self, x: SSAValue) -> tuple[SSAValue, SSAValue]:
        """exp(x) / 2 and exp(-x) / 2, as exp(+-x - ln 2)."""
        ln2 = self.num(math.log(2.0), x)
        up = self.ins(nn.ExpOp(self.sub(x, ln2)))
        down = self.ins(nn.ExpOp(self.sub(self.ins(nn.NegOp(x)), ln2)))
        return up, down

    def on_cosh(self, op: Operation) -> Sequence[SSAValue]:
        return [self.add(*self._exp_halves(op.operands[0]))]

    def on_sinh(self, op: Operation) -> Sequence[SSAValue]:
        x = op.operands[0]
        one = self.num(1.0, x)
        small = self.cmp(self.ins(nne.AbsOp(x)), one, "LT")
        xs = self.ins(nne.ClampOp(self.ins(nn.NegOp(one)), x, one))
        near = self.mul(self.sub(self.ins(nne.Expm1Op(xs)), self.ins(nne.Expm1Op(self.ins(nn.NegOp(xs))))),
                         self.num(0.5, x))
        return [self.where(small, near, self.sub(*self._exp_halves(x)))]

    def on_atan(self, op: Operation) -> Sequence[SSAValue]:
        x = op.operands[0]
        return [self.ins(nne.Atan2Op(x, self.num(1.0, x)))]

    def _cosine_of_asin(self, x: SSAValue) -> SSAValue:
        """sqrt((1 - x)(1 + x)): no cancellation near +-1."""
        one = self.num(1.0, x)
        return self.ins(nn.SqrtOp(self.mul(self.sub(one, x), self.add(one, x))))

    def on_asin(self, op: Operation) -> Sequence[SSAValue]:
        x = op.operands[0]
        return [self.ins(nne.Atan2Op(x, self._cosine_of_asin(x)))]

    def on_acos(self, op: Operation) -> Sequence[SSAValue]:
        x = op.operands[0]
        return [self.ins(nne.Atan2Op(self._cosine_of_asin(x), x))]

    def _huge(self, a: SSAValue) -> tuple[SSAValue, SSAValue, SSAValue]:
        """(a > 2^28, a clamped to 2^28, log(a) + ln 2): where a^2 + 1 is a^2 and squaring could overflow."""
        limit = self.num(2.0 ** 28, a)
        huge = self.cmp(a, limit, "GT")
        clamped = self.ins(nne.MinimumOp(a, limit))
        far = self.add(self.ins(nn.LogOp(self.ins(nne.MaximumOp(a, limit)))), self.num(math.log(2.0), a))
        return huge, clamped, far

    def on_asinh(self, op: Operation) -> Sequence[SSAValue]:
        x = op.operands[0]
        a = self.ins(nne.AbsOp(x))
        huge, s, far = self._huge(a)
        one = self.num(1.0, x)
        s2 = self.mul(s, s)
        near = self.ins(nne.Log1pOp(self.add(s, self.div(s2, self.add(one, self.ins(nn.SqrtOp(self.add(one,
                                                                                                          s2))))))))
        magnitude = self.where(huge, far, near)
        negative = self.cmp(x, self.num(0.0, x), "LT")
        return [self.where(negative, self.ins(nn.NegOp(magnitude)), magnitude)]

    def on_acosh(self, op: Operation) -> Sequence[SSAValue]:
        x = op.operands[0]
        huge, s, far = self._huge(x)
        one = self.num(1.0, x)
        below = self.sub(s, one)
        near = self.ins(nne.Log1pOp(self.add(below, self.ins(nn.SqrtOp(self.mul(below, self.add(s, one)))))))
        return [self.where(self.cmp(x, one, "LT"), self.num(math.nan, x), self.where(huge, far, near))]

    def on_atanh(self, op: Operation) -> Sequence[SSAValue]:
        x = op.operands[0]
        a = self.ins(nne.AbsOp(x))
        ratio = self.div(self.add(a, a), self.sub(self.num(1.0, x), a))
        magnitude = self.mul(self.ins(nne.Log1pOp(ratio)), self.num(0.5, x))
        return [self.where(self.cmp(x, self.num(0.0, x), "LT"), self.ins(nn.NegOp(magnitude)), magnitude)]

    # ------------------------------------------------------------ special functions (in f64)

    def on_erf(self, op: Operation) -> Sequence[SSAValue]:
        return self._in_f64(op, lambda x: self.ins(nne.ErfOp(x)))

    def on_erfc(self, op: Operation) -> Sequence[SSAValue]:
        return self._in_f64(op, self._erfc)

    def _erfc(self, x: SSAValue) -> SSAValue:
        one = self.num(1.0, x)
        a = self.ins(nne.AbsOp(x))
        inside = self.cmp(a, one, "LT")
        t = self.ins(nne.ClampOp(one, a, self.num(27.0, x)))  # the tail's argument: erfc is 0 beyond 26.7
        gauss = self.ins(nn.ExpOp(self.ins(nn.NegOp(self.mul(t, t)))))
        middle = self.div(self._poly(t, ERFC_P), self._poly(t, ERFC_Q))
        far = self.div(self._poly(t, ERFC_R), self._poly(t, ERFC_S))
        tail = self.mul(gauss, self.where(self.cmp(t, self.num(8.0, x), "LT"), middle, far))
        tail = self.where(self.cmp(self.mul(a, a), self.num(709.782712893384, x), "GT"), self.num(0.0, x), tail)
        tail = self.where(self.cmp(x, self.num(0.0, x), "LT"), self.sub(self.num(2.0, x), tail), tail)
        value = self.where(inside, self.sub(one, self.ins(nne.ErfOp(x))), tail)
        return self.where(self.cmp(x, x, "NE"), x, value)

    def on_erf_inv(self, op: Operation) -> Sequence[SSAValue]:
        return self._in_f64(op, self._erf_inv)

    def _erf_inv(self, x: SSAValue) -> SSAValue:
        one, zero = self.num(1.0, x), self.num(0.0, x)
        a = self.ins(nne.AbsOp(x))
        inside = self.cmp(a, one, "LT")
        s = self.where(inside, a, zero)  # the iteration's argument, in [0, 1)
        rest = self.sub(one, s)  # exact for s >= 1/2
        w = self.ins(nn.NegOp(self.ins(nn.LogOp(self.mul(rest, self.add(one, s))))))
        central = self._poly(self.sub(self.ins(nne.MinimumOp(w, self.num(5.0, x))), self.num(2.5, x)),
                             GILES_CENTRAL)
        root = self.ins(nn.SqrtOp(self.ins(nne.MaximumOp(w, self.num(5.0, x)))))
        tail = self._poly(self.sub(root, self.num(3.0, x)), GILES_TAIL)
        far = self._poly(self.sub(root, self.num(5.0, x)), GILES_FAR)
        tail = self.where(self.cmp(w, self.num(16.0, x), "LT"), tail, far)
        y = self.mul(self.where(self.cmp(w, self.num(5.0, x), "LT"), central, tail), s)
        upper = self.cmp(s, self.num(0.5, x), "GE")
        half_root_pi = self.num(math.sqrt(math.pi) / 2, x)
        for _ in range(HALLEY_STEPS):
            by_erf = self.sub(self.ins(nne.ErfOp(y)), s)
            by_erfc = self.sub(rest, self._erfc(y))
            step = self.mul(self.mul(self.where(upper, by_erfc, by_erf), half_root_pi),
                             self.ins(nn.ExpOp(self.mul(y, y))))  # Newton's step (erf(y) - s) / erf'(y)
            y = self.sub(y, self.div(step, self.add(one, self.mul(y, step))))
        beyond = self.where(self.cmp(a, one, "EQ"), self.num(math.inf, x), self.num(math.nan, x))
        magnitude = self.where(inside, y, self.where(self.cmp(a, a, "EQ"), beyond, a))
        negative = self.cmp(x, zero, "LT")
        return self.where(negative, self.ins(nn.NegOp(magnitude)), magnitude)

    def on_lgamma(self, op: Operation) -> Sequence[SSAValue]:
        return [self.ins(nsp.LgammaOp(op.operands[0]))]

    def on_digamma(self, op: Operation) -> Sequence[SSAValue]:
        x = op.operands[0]
        value = self.ins(nsp.DigammaOp(x))
        return [self.where(self.cmp(x, self.num(0.0, x), "EQ"), self.num(math.nan, x), value)]

    def _folded(self, v: SSAValue) -> float | int | None:
        """A splat constant's value, or the sum, difference or product of two (JAX's gradient writes n + 1)."""
        if (value := self.splat(v)) is not None:
            return value
        owner = v.owner
        fold = {"nn.add": lambda a, b: a + b, "nn.sub": lambda a, b: a - b, "nn.mul": lambda a, b: a * b}
        if isinstance(owner, Operation) and owner.name in fold:
            a, b = (self._folded(u) for u in owner.operands)
            return None if a is None or b is None else fold[owner.name](a, b)
        if isinstance(owner, Operation) and owner.name == "nn.broadcast_in_dim":
            return self._folded(owner.operands[0])
        return None

    def on_polygamma(self, op: Operation) -> Sequence[SSAValue]:
        n, x = op.operands
        order = self._folded(n)
        if order is None or order != int(order) or order < 0:
            raise CompileError.at(op, "convert-stablehlo: 'chlo.polygamma' needs a constant order n, a "
                                      f"non-negative integer (got {'a computed n' if order is None else order})")
        return [self.ins(nsp.PolygammaOp(x, int(order)))]

    def on_zeta(self, op: Operation) -> Sequence[SSAValue]:
        return [self.ins(nsp.ZetaOp(*op.operands))]

    def on_bessel_i1e(self, op: Operation) -> Sequence[SSAValue]:
        return [self.ins(nsp.BesselI1eOp(op.operands[0]))]

    # ------------------------------------------------------------ bits

    def on_next_after(self, op: Operation) -> Sequence[SSAValue]:
        x, y = op.operands
        e = _tensor(x).element_type
        if not isinstance(e, AnyFloat):
            raise CompileError.at(op, f"convert-stablehlo: 'chlo.next_after' of {e} is not supported")
        bits = IntegerType(e.bitwidth)
        zero = self.num(0.0, x)
        xb = self.ins(nne.BitcastConvertOp(x, bits))
        one_bit = self.ins(nn.FullOp(IntegerAttr(1, bits), []))
        away = self.ins(nne.XorOp(self.cmp(y, x, "GT"), self.cmp(x, zero, "LT")))
        moved = self.ins(nne.BitcastConvertOp(self.where(away, self.add(xb, one_bit), self.sub(xb, one_bit)), e))
        tiny = self.ins(nne.BitcastConvertOp(one_bit, e))
        from_zero = self.where(self.cmp(y, zero, "GT"), tiny, self.ins(nn.NegOp(tiny)))
        out = self.where(self.cmp(x, zero, "EQ"), from_zero, moved)
        out = self.where(self.cmp(x, y, "EQ"), y, out)
        unordered = self.ins(nne.OrOp(self.cmp(x, x, "NE"), self.cmp(y, y, "NE")))
        return [self.where(unordered, self.add(x, y), out)]
