"""Backward rules of the elementwise nn ops of `dialects.nn_elementwise`.

Each gradient is one df map whose tasklet computes the local derivative times
the incoming gradient (summed over broadcast dimensions by `unbroadcast`), so
no SymPy runs for these ops. Conventions as in JAX: rounding ops and `sign`
have derivative 0; ties of `maximum`/`minimum` split the gradient in half;
`clamp` passes it where the operand or a bound is strictly selected.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import AnyFloat, TensorType
from xdsl.ir import Operation, SSAValue

from dfc.dialects import nn_elementwise as ew
from dfc.dialects.df_builders import Scalar, elementwise
from dfc.dialects.nn_expand_elementwise import convert_scalar
from dfc.passes.autodiff.rule_table import (
    RuleTable,
    no_gradient,
    tensor_of,
    unbroadcast,
)

ELEMENTWISE_BACKWARD = RuleTable()

Local = Callable[[Scalar, Sequence[SSAValue]], SSAValue]
"""A gradient element from (g, the forward values the rule reads...)."""


def _ins(s: Scalar, op: Operation) -> SSAValue:
    return s.b.insert(op).results[0]


def _grad(b: Builder, op: Operation, g: SSAValue, inputs: Sequence[SSAValue], fn: Local, like: SSAValue) -> SSAValue:
    """fn(g, inputs...) over the result's shape, summed to the shape of `like`."""
    full = elementwise(b, TensorType(tensor_of(g).element_type, tensor_of(op.results[0]).get_shape()), [g, *inputs], fn)
    return unbroadcast(b, full, tensor_of(like).get_shape())


_PIECEWISE_CONSTANT = (
    ew.SignOp, ew.FloorOp, ew.CeilOp, ew.RoundOp, ew.RoundEvenOp, ew.StopGradientOp, ew.CompareOp,
    ew.AndOp, ew.OrOp, ew.XorOp, ew.NotOp, ew.ShiftLeftOp, ew.ShiftRightArithmeticOp, ew.ShiftRightLogicalOp,
)  # fmt: skip
ELEMENTWISE_BACKWARD.rule(*(op.name for op in _PIECEWISE_CONSTANT))(no_gradient)
ELEMENTWISE_BACKWARD.rule("nn.bitcast_convert")(no_gradient)  # an integer on one side: nothing flows


def _unary(name: str, reads_result: bool, fn: Callable[[Scalar, SSAValue, SSAValue], SSAValue]) -> None:
    """Register g * f'(x) for a unary op, with fn(s, g, x or y)."""

    def rule(b, op, grads, required):
        value = op.results[0] if reads_result else op.operands[0]
        return [_grad(b, op, grads[0], [value], lambda s, a: fn(s, a[0], a[1]), op.operands[0])]

    ELEMENTWISE_BACKWARD.rule(name)(rule)


def _one(s: Scalar, x: SSAValue) -> SSAValue:
    return s.const(1.0, x.type)


def _abs(s: Scalar, g: SSAValue, x: SSAValue) -> SSAValue:
    """g * sign(x), 0 at 0."""
    zero = s.const(0.0, x.type)
    below = s.select(_ins(s, arith.CmpfOp(x, zero, "olt")), s.neg(g), zero)
    return s.select(s.gt(x, zero), g, below)


_unary("nn.abs", False, _abs)
_unary("nn.expm1", False, lambda s, g, x: s.mul(g, s.exp(x)))
_unary("nn.log1p", False, lambda s, g, x: s.div(g, s.add(_one(s, x), x)))
_unary("nn.rsqrt", True, lambda s, g, y: s.mul(s.mul(g, s.const(-0.5, y.type)), s.mul(y, s.mul(y, y))))
_unary("nn.cbrt", True, lambda s, g, y: s.div(g, s.mul(s.const(3.0, y.type), s.mul(y, y))))
_unary("nn.erf", False, lambda s, g, x: s.mul(g, s.mul(s.const(2 / pymath.sqrt(pymath.pi), x.type), s.exp(s.neg(s.mul(x, x))))))
_unary("nn.sine", False, lambda s, g, x: s.mul(g, _ins(s, math.CosOp(x))))
_unary("nn.cosine", False, lambda s, g, x: s.neg(s.mul(g, _ins(s, math.SinOp(x)))))
_unary("nn.tan", True, lambda s, g, y: s.mul(g, s.add(_one(s, y), s.mul(y, y))))


def _binary(name: str, lhs: Local | None, rhs: Local | None) -> None:
    """Register a binary rule; `lhs`/`rhs` build an element of the operand's
    gradient from (g, a, b, y)."""

    def rule(b, op, grads, required):
        a, c, y = op.operands[0], op.operands[1], op.results[0]
        out: list[SSAValue | None] = []
        for k, fn in enumerate((lhs, rhs)):
            wanted = required[k] and fn is not None
            out.append(_grad(b, op, grads[0], [a, c, y], fn, op.operands[k]) if wanted else None)
        return out

    ELEMENTWISE_BACKWARD.rule(name)(rule)


def _atan2_share(s: Scalar, v: Sequence[SSAValue], numerator: SSAValue) -> SSAValue:
    """g * numerator / (a^2 + b^2)."""
    g, a, c = v[0], v[1], v[2]
    return s.div(s.mul(g, numerator), s.add(s.mul(a, a), s.mul(c, c)))


_binary("nn.atan2", lambda s, v: _atan2_share(s, v, v[2]), lambda s, v: _atan2_share(s, v, s.neg(v[1])))


def _power_lhs(s: Scalar, v: Sequence[SSAValue]) -> SSAValue:
    """g * b * a^(b - 1)."""
    g, a, c = v[0], v[1], v[2]
    return s.mul(s.mul(g, c), _ins(s, math.PowFOp(a, s.sub(c, _one(s, c)))))


def _power_rhs(s: Scalar, v: Sequence[SSAValue]) -> SSAValue:
    """g * y * log(a), and 0 where a is 0 (JAX)."""
    g, a, y = v[0], v[1], v[3]
    zero = s.const(0.0, a.type)
    return s.select(s.eq(a, zero), zero, s.mul(s.mul(g, y), s.log(a)))


_binary("nn.power", _power_lhs, _power_rhs)


def _remainder_rhs(s: Scalar, v: Sequence[SSAValue]) -> SSAValue:
    """-g * trunc(a / b)."""
    g, a, c = v[0], v[1], v[2]
    return s.neg(s.mul(g, _ins(s, math.TruncOp(s.div(a, c)))))


_binary("nn.remainder", lambda s, v: v[0], _remainder_rhs)


def _extremum_share(k: int, wins: str) -> Local:
    """g where operand k beats the other (`wins`: ogt for maximum, olt for
    minimum), half of it on a tie, else 0. The operands are compared with each
    other, never with the stored result: a recomputed operand need not be
    bit-equal to what the forward computed, and would then match neither."""

    def share(s: Scalar, v: Sequence[SSAValue]) -> SSAValue:
        g, mine, other = v[0], v[1 + k], v[2 - k]
        zero = s.const(0.0, g.type)
        tied = s.select(s.eq(mine, other), s.mul(g, s.const(0.5, g.type)), zero)
        return s.select(_ins(s, arith.CmpfOp(mine, other, wins)), g, tied)

    return share


_binary("nn.maximum", _extremum_share(0, "ogt"), _extremum_share(1, "ogt"))
_binary("nn.minimum", _extremum_share(0, "olt"), _extremum_share(1, "olt"))


@ELEMENTWISE_BACKWARD.rule("nn.clamp")
def _clamp(b, op, grads, required):
    """y = min(m, hi), m = max(x, lo): g flows to hi where hi < m, else to m where m < hi;
    from m to x where x > lo, to lo where lo > x (ties get none)."""
    assert isinstance(op, ew.ClampOp)
    (g,) = grads
    lo, x, hi = op.min, op.operand, op.max

    def part(k: int) -> Local:
        def fn(s: Scalar, v: Sequence[SSAValue]) -> SSAValue:
            g_, lo_, x_, hi_ = v
            zero = s.const(0.0, g_.type)
            m = _ins(s, arith.MaximumfOp(x_, lo_))
            if k == 2:
                return s.select(s.gt(m, hi_), g_, zero)
            to_m = s.select(s.gt(hi_, m), g_, zero)
            return s.select(s.gt(x_, lo_) if k == 1 else s.gt(lo_, x_), to_m, zero)

        return fn

    return [_grad(b, op, g, [lo, x, hi], part(k), v) if r else None for k, (v, r) in enumerate(zip(op.operands, required))]


@ELEMENTWISE_BACKWARD.rule("nn.select")
def _select(b, op, grads, required):
    assert isinstance(op, ew.SelectOp)
    (g,) = grads

    def chosen(when: bool) -> Local:
        def fn(s: Scalar, v: Sequence[SSAValue]) -> SSAValue:
            zero = s.const(0.0, v[0].type)
            return s.select(v[1], v[0], zero) if when else s.select(v[1], zero, v[0])

        return fn

    on_true = _grad(b, op, g, [op.pred], chosen(True), op.on_true) if required[1] else None
    on_false = _grad(b, op, g, [op.pred], chosen(False), op.on_false) if required[2] else None
    return [None, on_true, on_false]


@ELEMENTWISE_BACKWARD.rule("nn.convert")
def _convert(b, op, grads, required):
    """float -> float: the gradient converted back; nothing flows through integers."""
    assert isinstance(op, ew.ConvertOp)
    source, target = tensor_of(op.input), tensor_of(op.result)
    if not required[0] or not isinstance(target.element_type, AnyFloat):
        return [None]
    return [elementwise(b, source, [grads[0]], lambda s, a: convert_scalar(s, a[0], source.element_type))]
