"""math to LLVM IR: `HANDLERS`, the math dialect's handlers on the host.

LLVM intrinsics where they exist (exp, exp2, log, log2, log10, sqrt, sin,
cos, fabs, floor, ceil, round, roundeven, trunc, pow, powi, fma, copysign,
abs, ctlz/cttz/ctpop); libm calls for the rest (tanh, erf, erfc, log1p,
expm1, tan, atan, atan2, asin, acos, sinh, cosh, asinh, acosh, atanh,
cbrt; f16/bf16 through f32). LLVM vectorises the loop around intrinsic
calls but scalarises the calls themselves (this LLVM maps no vector math
library), and libm calls keep their loop scalar: with the module's
`vector_math`, f32/f64 exp, log and tanh are the inline polynomials of
`polynomials` instead.
"""

from __future__ import annotations

import llvmlite.ir as ir
from xdsl.ir import Operation

from dfc.compiler.codegen.llvm.emitter import FunctionEmitter, Handlers
from dfc.compiler.codegen.llvm.polynomials import emit_exp, emit_log, emit_tanh
from dfc.compiler.codegen.llvm.values import I1, I32

__all__ = ["HANDLERS"]

HANDLERS = Handlers()
"""The math ops' handlers."""

_MATH_INTRINSIC1 = {
    "math.exp": "exp", "math.exp2": "exp2", "math.log": "log", "math.log2": "log2", "math.log10": "log10",
    "math.sqrt": "sqrt", "math.sin": "sin", "math.cos": "cos", "math.absf": "fabs", "math.floor": "floor",
    "math.ceil": "ceil", "math.round": "round", "math.roundeven": "roundeven", "math.trunc": "trunc",
}  # fmt: skip
_MATH_LIBM1 = {
    "math.tanh": "tanh", "math.erf": "erf", "math.erfc": "erfc", "math.log1p": "log1p", "math.expm1": "expm1",
    "math.tan": "tan", "math.atan": "atan", "math.asin": "asin", "math.acos": "acos", "math.sinh": "sinh",
    "math.cosh": "cosh", "math.asinh": "asinh", "math.acosh": "acosh", "math.atanh": "atanh", "math.cbrt": "cbrt",
}  # fmt: skip
_POLYNOMIALS = {"exp": emit_exp, "log": emit_log, "tanh": emit_tanh}
"""What `vector_math` replaces by inline polynomials (intrinsic or libm name)."""


def _polynomial(e: FunctionEmitter, name: str, x: ir.Value) -> ir.Value | None:
    """`name`(x) as an inline polynomial, when the module asks for them and `x` is f32/f64."""
    if name in _POLYNOMIALS and e.m.vector_math and isinstance(x.type, (ir.FloatType, ir.DoubleType)):
        return _POLYNOMIALS[name](e, x)
    return None


for _name, _intr in _MATH_INTRINSIC1.items():

    def _mintr(e: FunctionEmitter, op: Operation, _intr=_intr) -> None:
        x = e.getv(op.operands[0])
        r = _polynomial(e, _intr, x)
        e.values[op.results[0]] = r if r is not None else e.call_intrinsic(_intr, x.type, [x], e.fflags(op))

    HANDLERS[_name] = _mintr

for _name, _fn in _MATH_LIBM1.items():

    def _mlibm(e: FunctionEmitter, op: Operation, _fn=_fn) -> None:
        x = e.getv(op.operands[0])
        r = _polynomial(e, _fn, x)
        e.values[op.results[0]] = r if r is not None else e.call_libm(_fn, [x], e.fflags(op))

    HANDLERS[_name] = _mlibm


@HANDLERS.register("math.atan2")
def _atan2(e: FunctionEmitter, op: Operation) -> None:
    e.values[op.results[0]] = e.call_libm("atan2", [e.getv(v) for v in op.operands], e.fflags(op))


@HANDLERS.register("math.powf")
def _powf(e: FunctionEmitter, op: Operation) -> None:
    args = [e.getv(v) for v in op.operands]
    e.values[op.results[0]] = e.call_intrinsic("pow", args[0].type, args, e.fflags(op))


@HANDLERS.register("math.copysign")
def _copysign(e: FunctionEmitter, op: Operation) -> None:
    args = [e.getv(v) for v in op.operands]
    e.values[op.results[0]] = e.call_intrinsic("copysign", args[0].type, args, e.fflags(op))


@HANDLERS.register("math.fpowi")
def _fpowi(e: FunctionEmitter, op: Operation) -> None:
    x, n = (e.getv(v) for v in op.operands)
    if n.type.width > 32:
        n = e.b.trunc(n, I32)
    elif n.type.width < 32:
        n = e.b.sext(n, I32)
    fn = e.m.intrinsic("powi", [x.type, I32], x.type, [x.type, I32])
    e.values[op.results[0]] = e.b.call(fn, [x, n], fastmath=e.fflags(op))


@HANDLERS.register("math.rsqrt")
def _rsqrt(e: FunctionEmitter, op: Operation) -> None:
    x = e.getv(op.operands[0])
    s = e.call_intrinsic("sqrt", x.type, [x], e.fflags(op))
    e.values[op.results[0]] = e.b.fdiv(ir.Constant(x.type, 1.0), s, flags=e.fflags(op))


@HANDLERS.register("math.fma")
def _fma(e: FunctionEmitter, op: Operation) -> None:
    args = [e.getv(v) for v in op.operands]
    e.values[op.results[0]] = e.call_intrinsic("fma", args[0].type, args, e.fflags(op))


@HANDLERS.register("math.absi")
def _absi(e: FunctionEmitter, op: Operation) -> None:
    x = e.getv(op.operands[0])
    fn = e.m.intrinsic("abs", [x.type], x.type, [x.type, I1])
    e.values[op.results[0]] = e.b.call(fn, [x, ir.Constant(I1, 0)])


@HANDLERS.register("math.ctlz", "math.cttz", "math.ctpop")
def _bitcount(e: FunctionEmitter, op: Operation) -> None:
    x = e.getv(op.operands[0])
    base = op.name.split(".")[1]
    if base == "ctpop":
        e.values[op.results[0]] = e.call_intrinsic("ctpop", x.type, [x])
    else:
        fn = e.m.intrinsic(base, [x.type], x.type, [x.type, I1])
        e.values[op.results[0]] = e.b.call(fn, [x, ir.Constant(I1, 0)])
