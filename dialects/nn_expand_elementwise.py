"""Pure expansions of the elementwise nn ops of `dialects.nn_elementwise`:
one df map over the result shape whose tasklet computes the element."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    AnyFloat,
    Float32Type,
    IntegerAttr,
    IntegerType,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from dfc.dialects import nn_elementwise as ew
from dfc.dialects.df_builders import Scalar, elementwise
from dfc.dialects.xdsl_fixes import RemFOp

ScalarFn = Callable[[Scalar, Sequence[SSAValue]], SSAValue]


def _ins(s: Scalar, op: Operation) -> SSAValue:
    return s.b.insert(op).results[0]


def _sign(s: Scalar, x: SSAValue) -> SSAValue:
    """-1 below 0, 1 above, else x itself (keeps -0.0 and NaN)."""
    zero = s.const(0.0, x.type)
    negative = s.select(_ins(s, arith.CmpfOp(x, zero, "olt")), s.const(-1.0, x.type), x)
    return s.select(s.gt(x, zero), s.const(1.0, x.type), negative)


ERF_F32_NUMERATOR = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
                     -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02)
ERF_F32_DENOMINATOR = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
                       -1.42647390514189e-02)
"""erf(x) = x P(x^2) / Q(x^2) on [-4, 4] (Eigen's and XLA's float32 erf; within 5e-7 of erf, and +-1 in
float32 beyond): arithmetic that vectorises, where a libm call per element does not and is far slower."""


def _erf(s: Scalar, x: SSAValue) -> SSAValue:
    """erf: the rational approximation for f32, libm's `erf` (math.erf) for other widths. NaN stays NaN."""
    if x.type != Float32Type():
        return _ins(s, math.ErfOp(x))
    four = s.const(4.0, x.type)
    x = s.select(s.gt(x, four), four, x)
    x = s.select(s.gt(s.neg(four), x), s.neg(four), x)
    x2 = s.mul(x, x)

    def poly(coefficients: Sequence[float]) -> SSAValue:
        acc = s.const(coefficients[0], x.type)
        for c in coefficients[1:]:
            acc = s.add(s.mul(acc, x2), s.const(c, x.type))
        return acc

    return s.div(s.mul(x, poly(ERF_F32_NUMERATOR)), poly(ERF_F32_DENOMINATOR))


_UNARY: dict[type[Operation], Callable[[Scalar, SSAValue], SSAValue]] = {
    ew.AbsOp: lambda s, x: _ins(s, math.AbsFOp(x)),
    ew.SignOp: _sign,
    ew.FloorOp: lambda s, x: _ins(s, math.FloorOp(x)),
    ew.StopGradientOp: lambda s, x: x,
    ew.CeilOp: lambda s, x: _ins(s, math.CeilOp(x)),
    ew.RoundOp: lambda s, x: _ins(s, math.RoundOp(x)),
    ew.RoundEvenOp: lambda s, x: _ins(s, math.RoundEvenOp(x)),
    ew.Expm1Op: lambda s, x: _ins(s, math.ExpM1Op(x)),
    ew.Log1pOp: lambda s, x: _ins(s, math.Log1pOp(x)),
    ew.RsqrtOp: lambda s, x: _ins(s, math.RsqrtOp(x)),
    ew.CbrtOp: lambda s, x: _ins(s, math.CbrtOp(x)),
    ew.ErfOp: _erf,
    ew.SineOp: lambda s, x: _ins(s, math.SinOp(x)),
    ew.CosineOp: lambda s, x: _ins(s, math.CosOp(x)),
    ew.TanOp: lambda s, x: _ins(s, math.TanOp(x)),
}

_BINARY: dict[type[Operation], Callable[[Scalar, SSAValue, SSAValue], SSAValue]] = {
    ew.Atan2Op: lambda s, a, b: _ins(s, math.Atan2Op(a, b)),
    ew.PowerOp: lambda s, a, b: _ins(s, math.PowFOp(a, b)),
    ew.RemainderOp: lambda s, a, b: _ins(s, RemFOp(a, b)),
    ew.MaximumOp: lambda s, a, b: _ins(s, arith.MaximumfOp(a, b)),
    ew.MinimumOp: lambda s, a, b: _ins(s, arith.MinimumfOp(a, b)),
}

_CMPF = {"EQ": "oeq", "NE": "une", "LT": "olt", "LE": "ole", "GT": "ogt", "GE": "oge"}
_CMPI = {"EQ": "eq", "NE": "ne", "LT": "slt", "LE": "sle", "GT": "sgt", "GE": "sge"}


def _int_const(s: Scalar, value: int, t: Attribute) -> SSAValue:
    return _ins(s, arith.ConstantOp(IntegerAttr(value, t)))


def _guarded(s: Scalar, x: SSAValue, y: SSAValue, op: type[Operation], by_zero, by_minus_one) -> SSAValue:
    """x (op) y for signed integers without undefined behaviour: y = 0 gives
    by_zero(x), y = -1 gives by_minus_one(x) (XLA's results)."""
    zero, minus_one, one = (_int_const(s, v, x.type) for v in (0, -1, 1))
    is_zero = _ins(s, arith.CmpiOp(y, zero, "eq"))
    is_minus_one = _ins(s, arith.CmpiOp(y, minus_one, "eq"))
    safe = s.select(_ins(s, arith.OrIOp(is_zero, is_minus_one)), one, y)
    value = _ins(s, op(x, safe))
    return s.select(is_zero, by_zero(x, zero, minus_one), s.select(is_minus_one, by_minus_one(x, zero), value))


INTEGER_BINARY: dict[str, Callable[[Scalar, SSAValue, SSAValue], SSAValue]] = {
    "nn.add": lambda s, a, b: _ins(s, arith.AddiOp(a, b)),
    "nn.sub": lambda s, a, b: _ins(s, arith.SubiOp(a, b)),
    "nn.mul": lambda s, a, b: _ins(s, arith.MuliOp(a, b)),
    # x / 0 = -1, MIN / -1 = MIN (= 0 - MIN, wrapping)
    "nn.div": lambda s, a, b: _guarded(
        s, a, b, arith.DivSIOp, lambda x, z, m: m, lambda x, z: _ins(s, arith.SubiOp(z, x))
    ),
    # x % 0 = x, x % -1 = 0
    "nn.remainder": lambda s, a, b: _guarded(s, a, b, arith.RemSIOp, lambda x, z, m: x, lambda x, z: z),
    "nn.maximum": lambda s, a, b: _ins(s, arith.MaxSIOp(a, b)),
    "nn.minimum": lambda s, a, b: _ins(s, arith.MinSIOp(a, b)),
}
"""The integer forms (signed) of the binary ops that take integers."""


def integer_binary(b: Builder, op: Operation) -> SSAValue:
    """The expansion of a binary op on integer tensors."""
    fn = INTEGER_BINARY[op.name]
    return _map(b, op, lambda s, a: fn(s, a[0], a[1]))


def _map(b: Builder, op: Operation, fn: ScalarFn) -> SSAValue:
    out = op.results[0].type
    assert isinstance(out, TensorType)
    return elementwise(b, out, list(op.operands), fn)


def _integer_sign(s: Scalar, x: SSAValue, magnitude: bool) -> SSAValue:
    """sign(x), or |x| with `magnitude`, of a signed integer."""
    zero = _int_const(s, 0, x.type)
    below = _ins(s, arith.CmpiOp(x, zero, "slt"))
    if magnitude:
        return s.select(below, _ins(s, arith.SubiOp(zero, x)), x)
    above = _ins(s, arith.CmpiOp(x, zero, "sgt"))
    return s.select(above, _int_const(s, 1, x.type), s.select(below, _int_const(s, -1, x.type), zero))


def _unary(b: Builder, op: Operation) -> SSAValue:
    if isinstance(op.results[0].type.element_type, IntegerType):
        magnitude = isinstance(op, ew.AbsOp)
        return _map(b, op, lambda s, a: _integer_sign(s, a[0], magnitude))
    fn = _UNARY[type(op)]
    return _map(b, op, lambda s, a: fn(s, a[0]))


def _binary(b: Builder, op: Operation) -> SSAValue:
    if op.name in INTEGER_BINARY and isinstance(op.results[0].type.element_type, IntegerType):
        return integer_binary(b, op)
    fn = _BINARY[type(op)]
    return _map(b, op, lambda s, a: fn(s, a[0], a[1]))


def _clamp(b: Builder, op: Operation) -> SSAValue:
    if isinstance(op.results[0].type.element_type, IntegerType):
        return _map(b, op, lambda s, a: _ins(s, arith.MinSIOp(_ins(s, arith.MaxSIOp(a[1], a[0])), a[2])))
    return _map(b, op, lambda s, a: _ins(s, arith.MinimumfOp(_ins(s, arith.MaximumfOp(a[1], a[0])), a[2])))


def _compare(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, ew.CompareOp)
    direction = op.direction.data

    def body(s: Scalar, a: Sequence[SSAValue]) -> SSAValue:
        if isinstance(a[0].type, AnyFloat):
            return _ins(s, arith.CmpfOp(a[0], a[1], _CMPF[direction]))
        return _ins(s, arith.CmpiOp(a[0], a[1], _CMPI[direction]))

    return _map(b, op, body)


def _select(b: Builder, op: Operation) -> SSAValue:
    return _map(b, op, lambda s, a: s.select(a[0], a[1], a[2]))


def convert_scalar(s: Scalar, x: SSAValue, target: Attribute) -> SSAValue:
    """`x` converted to `target` with `nn.convert`'s semantics."""
    source = x.type
    if source == target:
        return x
    if isinstance(source, AnyFloat):
        if isinstance(target, AnyFloat):
            wider = target.bitwidth > source.bitwidth
            return _ins(s, arith.ExtFOp(x, target) if wider else arith.TruncFOp(x, target))
        assert isinstance(target, IntegerType)
        if target.width.data == 1:
            return _ins(s, arith.CmpfOp(x, s.const(0.0, source), "une"))
        return _ins(s, arith.FPToSIOp(x, target))
    assert isinstance(source, IntegerType)
    if isinstance(target, AnyFloat):
        return _ins(s, (arith.UIToFPOp if source.width.data == 1 else arith.SIToFPOp)(x, target))
    assert isinstance(target, IntegerType)
    if target.width.data == 1:
        zero = _ins(s, arith.ConstantOp(IntegerAttr(0, source)))
        return _ins(s, arith.CmpiOp(x, zero, "ne"))
    if target.width.data < source.width.data:
        return _ins(s, arith.TruncIOp(x, target))
    return _ins(s, (arith.ExtUIOp if source.width.data == 1 else arith.ExtSIOp)(x, target))


_BITWISE = {ew.AndOp: arith.AndIOp, ew.OrOp: arith.OrIOp, ew.XorOp: arith.XOrIOp}


def _bitwise(b: Builder, op: Operation) -> SSAValue:
    cls = _BITWISE[type(op)]
    return _map(b, op, lambda s, a: _ins(s, cls(a[0], a[1])))


_SHIFTS = {ew.ShiftLeftOp: arith.ShLIOp, ew.ShiftRightArithmeticOp: arith.ShRSIOp, ew.ShiftRightLogicalOp: arith.ShRUIOp}


def _shift(b: Builder, op: Operation) -> SSAValue:
    """The shift by an amount below the bit width (an unsigned compare: negative amounts are
    huge); otherwise 0, or the sign fill for an arithmetic right shift (StableHLO)."""
    cls = _SHIFTS[type(op)]

    def body(s: Scalar, a: Sequence[SSAValue]) -> SSAValue:
        x, y = a
        t = x.type
        assert isinstance(t, IntegerType)
        zero = _int_const(s, 0, t)
        in_range = _ins(s, arith.CmpiOp(y, _int_const(s, t.width.data, t), "ult"))
        shifted = _ins(s, cls(x, s.select(in_range, y, zero)))
        if cls is arith.ShRSIOp:
            fill = _ins(s, arith.ShRSIOp(x, _int_const(s, t.width.data - 1, t)))
        else:
            fill = zero
        return s.select(in_range, shifted, fill)

    return _map(b, op, body)


def _not(b: Builder, op: Operation) -> SSAValue:
    """x ^ all ones (-1 as a signless integer, 1 as an i1)."""

    def body(s: Scalar, a: Sequence[SSAValue]) -> SSAValue:
        t = a[0].type
        assert isinstance(t, IntegerType)
        ones = _ins(s, arith.ConstantOp(IntegerAttr(1 if t.width.data == 1 else -1, t)))
        return _ins(s, arith.XOrIOp(a[0], ones))

    return _map(b, op, body)


def _convert(b: Builder, op: Operation) -> SSAValue:
    out = op.results[0].type
    assert isinstance(out, TensorType)
    return _map(b, op, lambda s, a: convert_scalar(s, a[0], out.element_type))


def _bitcast(b: Builder, op: Operation) -> SSAValue:
    out = op.results[0].type
    assert isinstance(out, TensorType)
    return _map(b, op, lambda s, a: _ins(s, arith.BitcastOp(a[0], out.element_type)))


ELEMENTWISE_EXPANSIONS: dict[type[Operation], Callable[[Builder, Operation], SSAValue]] = {
    **{cls: _unary for cls in _UNARY},
    **{cls: _binary for cls in _BINARY},
    ew.ClampOp: _clamp,
    ew.CompareOp: _compare,
    ew.SelectOp: _select,
    ew.ConvertOp: _convert,
    ew.BitcastConvertOp: _bitcast,
    **{cls: _bitwise for cls in _BITWISE},
    ew.NotOp: _not,
    **{cls: _shift for cls in _SHIFTS},
}
