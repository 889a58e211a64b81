"""arith to LLVM IR: `HANDLERS`, the arith dialect's handlers.

Integer ops map to LLVM's instructions (`index` is i64), divisions guarded
where the divisor may be 0 or -1 (`_safe_divisor`); min/max to
`llvm.smin`/`umax`/`maximum`/`minnum`...; floor/ceil divisions to a
division and a correction; casts to LLVM's casts. Float ops carry the
emitter's fast-math flags (`FunctionEmitter.fflags`; comparisons only the
op's own). `arith.remf` is LLVM's `frem` (the GPU emitter replaces it).
"""

from __future__ import annotations

import llvmlite.ir as ir
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Operation

from dfc.compiler.codegen.llvm.emitter import DIVISION_BY_ZERO, FunctionEmitter, Handlers
from dfc.compiler.codegen.llvm.values import I1, MemRef, flatten, is_float, scalar_type, unflatten, unsupported
from dfc.dialects.diagnostics import location_of

__all__ = ["HANDLERS", "result_type"]

HANDLERS = Handlers()
"""The arith ops' handlers."""

_CMPF = {
    1: ("o", "=="), 2: ("o", ">"), 3: ("o", ">="), 4: ("o", "<"), 5: ("o", "<="), 6: ("o", "!="), 7: ("o", "ord"),
    8: ("u", "=="), 9: ("u", ">"), 10: ("u", ">="), 11: ("u", "<"), 12: ("u", "<="), 13: ("u", "!="), 14: ("u", "uno"),
}  # fmt: skip
_CMPI = {
    0: ("s", "=="), 1: ("s", "!="), 2: ("s", "<"), 3: ("s", "<="), 4: ("s", ">"), 5: ("s", ">="),
    6: ("u", "<"), 7: ("u", "<="), 8: ("u", ">"), 9: ("u", ">="),
}  # fmt: skip
_FBIN = {"arith.addf": "fadd", "arith.subf": "fsub", "arith.mulf": "fmul", "arith.divf": "fdiv", "arith.remf": "frem"}
_IBIN = {
    "arith.addi": "add", "arith.subi": "sub", "arith.muli": "mul", "arith.andi": "and_", "arith.ori": "or_",
    "arith.xori": "xor", "arith.shli": "shl", "arith.shrsi": "ashr", "arith.shrui": "lshr",
}  # fmt: skip
_IDIV = {"arith.divsi": "sdiv", "arith.divui": "udiv", "arith.remsi": "srem", "arith.remui": "urem"}
_IMINMAX = {"arith.minsi": "smin", "arith.maxsi": "smax", "arith.minui": "umin", "arith.maxui": "umax"}
_FMINMAX = {"arith.maximumf": "maximum", "arith.minimumf": "minimum", "arith.maxnumf": "maxnum", "arith.minnumf": "minnum"}
_CASTS = {
    "arith.sitofp": "sitofp", "arith.uitofp": "uitofp", "arith.fptosi": "fptosi", "arith.fptoui": "fptoui",
    "arith.extf": "fpext", "arith.truncf": "fptrunc", "arith.extsi": "sext", "arith.extui": "zext",
    "arith.trunci": "trunc", "arith.bitcast": "bitcast",
}  # fmt: skip


def result_type(op: Operation) -> ir.Type:
    """The LLVM type of `op`'s (scalar) first result."""
    return scalar_type(op.results[0].type)


@HANDLERS.register("arith.constant")
def _constant(e: FunctionEmitter, op: Operation) -> None:
    attr = op.properties["value"]
    ty = result_type(op)
    if isinstance(attr, IntegerAttr) and isinstance(ty, ir.IntType):
        w = ty.width
        v = attr.value.data & ((1 << w) - 1)
        if w > 1 and v >= 1 << (w - 1):
            v -= 1 << w
        e.values[op.results[0]] = ir.Constant(ty, v)
    elif isinstance(attr, FloatAttr) and is_float(ty):
        e.values[op.results[0]] = ir.Constant(ty, float(attr.value.data))
    else:
        raise unsupported(f"arith.constant value '{attr}'")


for _name, _inst in _FBIN.items():

    def _fbin(e: FunctionEmitter, op: Operation, _inst=_inst) -> None:
        lhs, rhs = (e.getv(v) for v in op.operands)
        e.values[op.results[0]] = getattr(e.b, _inst)(lhs, rhs, flags=e.fflags(op))

    HANDLERS[_name] = _fbin


@HANDLERS.register("arith.negf")
def _negf(e: FunctionEmitter, op: Operation) -> None:
    e.values[op.results[0]] = e.b.fneg(e.getv(op.operands[0]), flags=e.fflags(op))


for _name, _inst in _IBIN.items():

    def _ibin(e: FunctionEmitter, op: Operation, _inst=_inst) -> None:
        lhs, rhs = (e.getv(v) for v in op.operands)
        e.values[op.results[0]] = getattr(e.b, _inst)(lhs, rhs)

    HANDLERS[_name] = _ibin


def _safe_divisor(e: FunctionEmitter, op: Operation, d: ir.Value, signed: bool) -> tuple[ir.Value, ir.Value | None]:
    """`d`, or 1 where dividing by it would trap, and (signed) whether `d` is -1.

    A zero divisor is reported (`FunctionEmitter.report_failure`: the call
    raises `ZeroDivisionError`, as the interpreter does) and the division goes
    on with 1; a signed division by -1, which traps for the minimum value,
    is left to the caller (`a / -1` is `0 - a`, wrapping; `a % -1` is 0)."""
    if not e.checks_division or (isinstance(d, ir.Constant) and d.constant not in (0, -1 if signed else 0)):
        return d, None
    b = e.b
    zero = b.icmp_unsigned("==", d, ir.Constant(d.type, 0))
    with b.if_then(zero, likely=False):
        e.report_failure(f"{location_of(op) or '<unknown location>'}: '{op.name}' {DIVISION_BY_ZERO}")
    if not signed:
        return b.select(zero, ir.Constant(d.type, 1), d), None
    minus_one = b.icmp_signed("==", d, ir.Constant(d.type, -1))
    return b.select(b.or_(zero, minus_one), ir.Constant(d.type, 1), d), minus_one


@HANDLERS.register(*_IDIV)
def _division(e: FunctionEmitter, op: Operation) -> None:
    a, d = (e.getv(v) for v in op.operands)
    d, minus_one = _safe_divisor(e, op, d, signed=op.name.endswith("si"))
    r = getattr(e.b, _IDIV[op.name])(a, d)
    if minus_one is not None:  # a / -1 = 0 - a (wrapping), a % -1 = 0
        zero = ir.Constant(a.type, 0)
        r = e.b.select(minus_one, e.b.sub(zero, a) if op.name == "arith.divsi" else zero, r)
    e.values[op.results[0]] = r

for _name, _intr in _IMINMAX.items():

    def _iminmax(e: FunctionEmitter, op: Operation, _intr=_intr) -> None:
        args = [e.getv(v) for v in op.operands]
        e.values[op.results[0]] = e.call_intrinsic(_intr, args[0].type, args)

    HANDLERS[_name] = _iminmax

for _name, _intr in _FMINMAX.items():

    def _fminmax(e: FunctionEmitter, op: Operation, _intr=_intr) -> None:
        args = [e.getv(v) for v in op.operands]
        e.values[op.results[0]] = e.call_intrinsic(_intr, args[0].type, args, e.fflags(op))

    HANDLERS[_name] = _fminmax


@HANDLERS.register("arith.ceildivsi", "arith.floordivsi", "arith.ceildivui")
def _divround(e: FunctionEmitter, op: Operation) -> None:
    b = e.b
    a, d = (e.getv(v) for v in op.operands)
    zero = ir.Constant(a.type, 0)
    one = ir.Constant(a.type, 1)
    d, minus_one = _safe_divisor(e, op, d, op.name != "arith.ceildivui")
    if op.name == "arith.ceildivui":
        q = b.add(b.udiv(b.sub(a, one), d), one)
        e.values[op.results[0]] = b.select(b.icmp_unsigned("==", a, zero), zero, q)
        return
    q = b.sdiv(a, d)
    r = b.srem(a, d)
    inexact = b.icmp_signed("!=", r, zero)
    same_sign = b.icmp_signed("==", b.icmp_signed("<", a, zero), b.icmp_signed("<", d, zero))
    if op.name == "arith.ceildivsi":
        adjust = b.and_(inexact, same_sign)
        q = b.select(adjust, b.add(q, one), q)
    else:
        adjust = b.and_(inexact, b.not_(same_sign))
        q = b.select(adjust, b.sub(q, one), q)
    # a / -1 is exact: -a, wrapping for the minimum value
    e.values[op.results[0]] = q if minus_one is None else b.select(minus_one, b.sub(zero, a), q)


@HANDLERS.register("arith.cmpf")
def _cmpf(e: FunctionEmitter, op: Operation) -> None:
    pred = op.properties["predicate"].value.data
    lhs, rhs = (e.getv(v) for v in op.operands)
    if pred == 0:
        e.values[op.results[0]] = ir.Constant(I1, 0)
    elif pred == 15:
        e.values[op.results[0]] = ir.Constant(I1, 1)
    else:
        kind, cmp = _CMPF[pred]
        f = e.b.fcmp_ordered if kind == "o" else e.b.fcmp_unordered
        e.values[op.results[0]] = f(cmp, lhs, rhs, flags=e.explicit_fflags(op))


@HANDLERS.register("arith.cmpi")
def _cmpi(e: FunctionEmitter, op: Operation) -> None:
    kind, cmp = _CMPI[op.properties["predicate"].value.data]
    lhs, rhs = (e.getv(v) for v in op.operands)
    f = e.b.icmp_signed if kind == "s" else e.b.icmp_unsigned
    e.values[op.results[0]] = f(cmp, lhs, rhs)


@HANDLERS.register("arith.select")
def _select(e: FunctionEmitter, op: Operation) -> None:
    c = e.getv(op.operands[0])
    x, y = e.get(op.operands[1]), e.get(op.operands[2])
    if isinstance(x, MemRef):
        vals = [e.b.select(c, p, q) for p, q in zip(x.flatten(), flatten(y))]
        e.values[op.results[0]] = unflatten(op.results[0].type, vals)
    else:
        e.values[op.results[0]] = e.b.select(c, x, y)


@HANDLERS.register("arith.index_cast", "arith.index_castui")
def _index_cast(e: FunctionEmitter, op: Operation) -> None:
    v = e.getv(op.operands[0])
    ty = result_type(op)
    if ty.width == v.type.width:
        r = v
    elif ty.width < v.type.width:
        r = e.b.trunc(v, ty)
    else:
        r = e.b.sext(v, ty) if op.name == "arith.index_cast" else e.b.zext(v, ty)
    e.values[op.results[0]] = r


for _name, _inst in _CASTS.items():

    def _cast(e: FunctionEmitter, op: Operation, _inst=_inst) -> None:
        e.values[op.results[0]] = getattr(e.b, _inst)(e.getv(op.operands[0]), result_type(op))

    HANDLERS[_name] = _cast
