"""Backward rules of the special-function nn ops of `dialects.nn_special`, written as nn ops (so a
second derivative differentiates them in turn): lgamma' = digamma, digamma' = polygamma(1), polygamma(n)' =
polygamma(n + 1), zeta's in q `-x zeta(x + 1, q)` (none in x: a located error, as PyTorch and JAX refuse
it), I0' = I1, I1' = I0 - I1 / x, the scaled forms', erfc' = -2 / sqrt(pi) exp(-x^2), erfcx' = 2 x erfcx - 2 / sqrt(pi),
ndtri' = sqrt(2 pi) exp(ndtri^2 / 2), log_ndtr' = exp(-x^2 / 2 - log_ndtr) / sqrt(2 pi).
"""

from __future__ import annotations

import math

from xdsl.builder import Builder
from xdsl.dialects.builtin import FloatAttr
from xdsl.ir import Operation, SSAValue

from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_special as sp
from dfc.dialects.diagnostics import CompileError
from dfc.passes.autodiff.rule_table import RuleTable, ins, tensor_of, unbroadcast

SPECIAL_BACKWARD = RuleTable()


def _k(b: Builder, like: SSAValue, value: float) -> SSAValue:
    return ins(b, nn.FullOp(FloatAttr(value, tensor_of(like).element_type), []))  # type: ignore[arg-type]


def _mul(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    return ins(b, nn.MulOp(x, y))


def _sub(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    return ins(b, nn.SubOp(x, y))


def _unary(name: str):
    """Register g * derivative(b, x, y) for a unary op."""

    def register(derivative):
        def rule(b, op, grads, required):
            return [_mul(b, grads[0], derivative(b, op.operands[0], op.results[0]))]

        SPECIAL_BACKWARD.rule(name)(rule)
        return derivative

    return register


@_unary("nn.lgamma")
def _lgamma(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    return ins(b, sp.DigammaOp(x))


@_unary("nn.digamma")
def _digamma(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    return ins(b, sp.PolygammaOp(x, 1))


@SPECIAL_BACKWARD.rule("nn.polygamma")
def _polygamma(b, op: Operation, grads, required):
    assert isinstance(op, sp.PolygammaOp)
    return [_mul(b, grads[0], ins(b, sp.PolygammaOp(op.input, op.n.value.data + 1)))]


def _stopped(v: SSAValue, depth: int = 32) -> bool:
    """Whether `v` is computed from constants and `nn.stop_gradient`s alone (no gradient reaches it)."""
    owner = v.owner
    if not isinstance(owner, Operation) or depth == 0:
        return False
    if owner.name == "nn.stop_gradient" or not owner.operands:
        return True
    return all(_stopped(u, depth - 1) for u in owner.operands)


@SPECIAL_BACKWARD.rule("nn.zeta")
def _zeta(b, op: Operation, grads, required):
    x, q = op.operands
    if required[0] and not _stopped(x):
        raise CompileError.at(op, "autodiff: the derivative of nn.zeta in its first argument (x) is not "
                                  "implemented (PyTorch and JAX do not define it either)")
    if not required[1]:
        return [None, None]
    shifted = ins(b, sp.ZetaOp(ins(b, nn.AddOp(x, _k(b, x, 1.0))), q))
    local = ins(b, nn.NegOp(_mul(b, ins(b, nn.MulOp(grads[0], x)), shifted)))
    return [None, unbroadcast(b, local, tensor_of(q).get_shape())]


def _safe(b: Builder, x: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(x == 0, x with 1 at 0): I1(x) / x's argument away from its removable singularity."""
    at_zero = ins(b, nne.CompareOp(x, _k(b, x, 0.0), "EQ"))
    return at_zero, ins(b, nne.SelectOp(at_zero, _k(b, x, 1.0), x))


def _half_at_zero(b: Builder, x: SSAValue, at_zero: SSAValue, value: SSAValue) -> SSAValue:
    return ins(b, nne.SelectOp(at_zero, _k(b, x, 0.5), value))


@_unary("nn.bessel_i0")
def _i0(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    return ins(b, sp.BesselI1Op(x))


@_unary("nn.bessel_i0e")
def _i0e(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    return _sub(b, ins(b, sp.BesselI1eOp(x)), _mul(b, ins(b, nne.SignOp(x)), y))


@_unary("nn.bessel_i1")
def _i1(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    at_zero, safe = _safe(b, x)
    value = _sub(b, ins(b, sp.BesselI0Op(x)), ins(b, nn.DivOp(ins(b, sp.BesselI1Op(safe)), safe)))
    return _half_at_zero(b, x, at_zero, value)


@_unary("nn.bessel_i1e")
def _i1e(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    at_zero, safe = _safe(b, x)
    scaled = ins(b, sp.BesselI1eOp(safe))
    value = _sub(b, _sub(b, ins(b, sp.BesselI0eOp(x)), _mul(b, ins(b, nne.SignOp(x)), y)),
                 ins(b, nn.DivOp(scaled, safe)))
    return _half_at_zero(b, x, at_zero, value)


@_unary("nn.erfc")
def _erfc(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    gauss = ins(b, nn.ExpOp(ins(b, nn.NegOp(_mul(b, x, x)))))
    return _mul(b, _k(b, x, -2 / math.sqrt(math.pi)), gauss)


@_unary("nn.erfcx")
def _erfcx(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    return _sub(b, _mul(b, _mul(b, _k(b, x, 2.0), x), y), _k(b, x, 2 / math.sqrt(math.pi)))


@_unary("nn.ndtri")
def _ndtri(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    return _mul(b, _k(b, x, math.sqrt(2 * math.pi)), ins(b, nn.ExpOp(_mul(b, _mul(b, y, y), _k(b, x, 0.5)))))


@_unary("nn.log_ndtr")
def _log_ndtr(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    exponent = _sub(b, _mul(b, _mul(b, x, x), _k(b, x, -0.5)), y)
    return _mul(b, ins(b, nn.ExpOp(exponent)), _k(b, x, 1 / math.sqrt(2 * math.pi)))
