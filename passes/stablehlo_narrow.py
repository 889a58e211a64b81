"""The 4-, 6- and 8-bit floats and the 4-bit integers in `convert-stablehlo`.

nn computes with none of them, so `make_wide` retypes a function's values of
these types before the conversion: the narrow floats as f64 (which holds
every value of each exactly, f8E8M0FNU's 2^-127 included), i4 as i8; a
constant's values are kept. Each converted op whose result was narrow then
rounds that result back into its type (`NarrowConversions.narrowed`), so
every value is one of the type's, as the spec computes: an op is computed in
the wide type and rounded once (exact for add, subtract, multiply and
compare of narrow values; dot_general and convolution accumulate in f64 and
round their results, as XLA accumulates f8 products in f32).

Rounding to a float format of m mantissa bits (the format's own semantics, as
xDSL's codec of the type defines them, LLVM's): the magnitude is scaled by
2^-q, q its exponent (at least the smallest normal one) less m, rounded to
nearest with ties to even and scaled back; a result beyond the largest
finite value is infinity (IEEE formats), NaN (the fn and fnuz formats) or
the largest finite value (f4E2M1FN, f6*: no infinity or NaN, where the spec
leaves a NaN undefined: it becomes -0, as ml_dtypes casts it); the fnuz formats have no
-0, f8E8M0FNU no zero (a smaller magnitude becomes 2^-127) and no sign (a
negative value is NaN), as LLVM's conversion (the spec interpreter's) does.
The gradient passes through the rounding where it is finite and not zero (as
`reduce_precision`'s). i4 keeps the low 4 bits, sign-extended; ui4 (signless
after `stablehlo_unsigned`) the low 4 bits.

Ops whose bodies would round at every step (reduce, reduce_window, scatter,
map, ...) on narrow values, and bitcast_convert and reduce_precision of
them, are refused by name.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    FunctionType,
    IntegerType,
    ReducedPrecisionFloatType,
    TensorType,
    f64,
    i8,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import Rewriter

from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import stablehlo as shlo
from dfc.dialects.diagnostics import CompileError
from dfc.dialects.xdsl_fixes import dense_values

NARROW_INTEGERS = {4}
"""The integer widths computed in i8."""
EXACT_ONLY = ("reduce", "reduce_window", "scatter", "select_and_scatter", "map", "bitcast_convert",
              "reduce_precision", "all_reduce", "reduce_scatter")
"""Ops refused on narrow values (their bodies, or their bits, see the module docstring)."""

Narrowed = tuple[Attribute | None, ...]
"""Per result of an op, the narrow element type it had (None: not narrow)."""


def _narrow(t: Attribute) -> Attribute | None:
    if not isinstance(t, TensorType):
        return None
    e = t.element_type
    if (isinstance(e, ReducedPrecisionFloatType) and e.bitwidth <= 8
            or isinstance(e, IntegerType) and e.width.data in NARROW_INTEGERS):
        return e
    return None


def _wide(t: Attribute) -> Attribute:
    e = _narrow(t)
    if e is None:
        return t
    assert isinstance(t, TensorType)
    return TensorType(f64 if isinstance(e, ReducedPrecisionFloatType) else i8, t.get_shape())


def make_wide(f: func.FuncOp) -> dict[Operation, Narrowed]:
    """Retype `f`'s narrow values as wide ones (module docstring); the narrow result types of each op that
    had one. An op of `EXACT_ONLY` on a narrow value is a `CompileError` at it."""
    narrowed: dict[Operation, Narrowed] = {}
    for op in f.walk():
        types = tuple(_narrow(v.type) for v in op.results)
        short = op.name.split(".", 1)[-1]
        if short in EXACT_ONLY and (any(types) or any(_narrow(v.type) for v in op.operands)):
            raise CompileError.at(op, f"convert-stablehlo: '{op.name}' of 4-, 6- or 8-bit values is not supported")
        if any(types) and op.dialect_name() in ("stablehlo", "chlo"):
            narrowed[op] = types
    for op in f.walk():
        for region in op.regions:
            for block in region.blocks:
                for arg in list(block.args):
                    if _narrow(arg.type) is not None:
                        Rewriter.replace_value_with_new_type(arg, _wide(arg.type))
        for result in list(op.results):
            if _narrow(result.type) is not None:
                Rewriter.replace_value_with_new_type(result, _wide(result.type))
        if isinstance(op, shlo.ConstantOp) and _narrow(op.value.type) is not None:
            wide = _wide(op.value.type)
            assert isinstance(wide, TensorType)
            op.value = DenseIntOrFPElementsAttr.from_list(wide, list(dense_values(op.value)))
    f.function_type = FunctionType.from_lists([_wide(t) for t in f.function_type.inputs.data],
                                              [_wide(t) for t in f.function_type.outputs.data])
    return narrowed


class NarrowConversions:
    """`narrowed`, mixed into the converter (with its `ins`, `int_full` and `unsigned_ops`)."""

    ins: Callable[[Operation], SSAValue]
    unsigned_ops: dict
    int_full: Callable[[int, SSAValue], SSAValue]

    def narrowed(self, op: Operation, values: Sequence[SSAValue], types: Narrowed) -> list[SSAValue]:
        """`values` (`op`'s converted results) rounded into the narrow types `types` they had."""
        unsigned = self.unsigned_ops.get(op, ((), ()))[1]
        out = []
        for k, (v, t) in enumerate(zip(values, types)):
            if isinstance(t, ReducedPrecisionFloatType):
                v = self.passing_gradient(v, self.rounded(v, t))
            elif isinstance(t, IntegerType):
                v = self.wrapped(v, t.width.data, k < len(unsigned) and unsigned[k])
            out.append(v)
        return out

    def passing_gradient(self, x: SSAValue, rounded: SSAValue) -> SSAValue:
        """`rounded` with `x`'s gradient passed through where both are finite and `rounded` is not zero
        (rounded + (x - stop_gradient(x)) there)."""
        zero = self._float(0.0)
        finite = self.ins(nne.AndOp(self.ins(nne.CompareOp(self.ins(nn.SubOp(x, x)), zero, "EQ")),
                                    self.ins(nne.CompareOp(self.ins(nn.SubOp(rounded, rounded)), zero, "EQ"))))
        kept = self.ins(nne.AndOp(finite, self.ins(nne.CompareOp(rounded, zero, "NE"))))
        through = self.ins(nn.AddOp(rounded, self.ins(nn.SubOp(x, self.ins(nne.StopGradientOp(x))))))
        return self.ins(nne.SelectOp(kept, through, rounded))

    def _float(self, value: float) -> SSAValue:
        return self.ins(nn.FullOp(FloatAttr(value, f64), []))

    def wrapped(self, v: SSAValue, bits: int, unsigned: bool) -> SSAValue:
        """The low `bits` bits of i8 `v`: zero-extended when `unsigned`, else sign-extended."""
        if unsigned:
            return self.ins(nne.AndOp(v, self.int_full((1 << bits) - 1, v)))
        shift = self.int_full(8 - bits, v)
        return self.ins(nne.ShiftRightArithmeticOp(self.ins(nne.ShiftLeftOp(v, shift)), shift))

    def rounded(self, x: SSAValue, t: ReducedPrecisionFloatType) -> SSAValue:
        """f64 `x` rounded into format `t` (module docstring), without a gradient."""
        s = t.SEMANTICS
        m, emin = s.mantissa_bits, (1 - s.exponent_bias if s.has_zero else -s.exponent_bias)
        values = [t.decode_bits(c) for c in range(1 << t.bitwidth)]
        largest = max(v for v in values if math.isfinite(v))
        x = self.ins(nne.StopGradientOp(x))
        bits = self.ins(nne.BitcastConvertOp(x, i64))
        a = self.ins(nne.AbsOp(x))
        exponent = self.ins(nn.SubOp(self.ins(nne.ShiftRightLogicalOp(self.ins(nne.BitcastConvertOp(a, i64)),
                                                                       self.int_full(52, bits))),
                                     self.int_full(1023, bits)))
        q = self.ins(nn.SubOp(self.ins(nne.MaximumOp(exponent, self.int_full(emin, bits))), self.int_full(m, bits)))

        def power(k: SSAValue) -> SSAValue:  # 2^k, k in the normal range of f64
            biased = self.ins(nn.AddOp(k, self.int_full(1023, bits)))
            return self.ins(nne.BitcastConvertOp(self.ins(nne.ShiftLeftOp(biased, self.int_full(52, bits))), f64))

        scaled = self.ins(nn.MulOp(a, power(self.ins(nn.SubOp(self.int_full(0, bits), q)))))
        r = self.ins(nn.MulOp(self.ins(nne.RoundEvenOp(scaled)), power(q)))
        if not s.has_zero:
            r = self.ins(nne.MaximumOp(r, self._float(2.0 ** emin)))
        too_large = {"IEEE": math.inf, "NAN_ONLY": math.nan, "FINITE_ONLY": largest}[s.nonfinite.name]
        over = self.ins(nne.OrOp(self.ins(nne.CompareOp(r, self._float(largest), "GT")),
                                 self.ins(nne.CompareOp(a, self._float(math.inf), "EQ"))))
        r = self.ins(nne.SelectOp(over, self._float(too_large), r))
        negative = self.ins(nne.CompareOp(bits, self.int_full(0, bits), "LT"))
        if s.has_sign:
            negated = self.ins(nn.MulOp(r, self._float(-1.0)))
            if s.nan_encoding.name == "NEGATIVE_ZERO":  # no -0
                negative = self.ins(nne.AndOp(negative, self.ins(nne.CompareOp(r, self._float(0.0), "NE"))))
            r = self.ins(nne.SelectOp(negative, negated, r))
        else:
            below = self.ins(nne.CompareOp(x, self._float(0.0), "LT"))
            r = self.ins(nne.SelectOp(below, self._float(math.nan), r))
        nan = self.ins(nne.CompareOp(x, x, "NE"))
        if s.nonfinite.name == "FINITE_ONLY":  # NaN is undefined there: ml_dtypes' -0
            return self.ins(nne.SelectOp(nan, self._float(-0.0), r))
        return self.ins(nne.SelectOp(nan, self._float(math.nan), r))

