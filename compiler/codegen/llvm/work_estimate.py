"""Estimates of the ops a piece of scf IR runs, its loops' trips included.

    WorkEstimate().op(op) -> int          one execution of `op` (raises UnknownWork where a trip count is unknown)
    static_work(op) -> int | None         the same, None instead of raising

An op without regions counts 1 (8 for a math function or a division); a loop
counts its trip count times its body. A trip count comes from constant bounds,
or from an upper bound `lb + X` or `min(lb + X, ...)` with X known (the chunked
loops of lowered reductions). Subclasses resolve values otherwise (as i64s
computed at run time, `scf._RunTimeWork`) and say what an unknown trip count
or an `scf.while` costs; this class refuses them (`UnknownWork`).
"""

from __future__ import annotations

import llvmlite.ir as ir
from xdsl.ir import Block, Operation, SSAValue

from dfc.compiler.codegen.llvm.emitter import TERMINATORS
from dfc.compiler.codegen.llvm.values import I64, int_const

__all__ = ["Work", "UnknownWork", "WorkEstimate", "static_work"]

Work = int | ir.Value
"""A work estimate: a Python int, or an i64 computed at run time."""

_EXPENSIVE = ("math.", "arith.div", "arith.rem")

_FOLD = {"arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b, "arith.muli": lambda a, b: a * b,
         "arith.divui": lambda a, b: a // b if a >= 0 and b > 0 else None,
         "arith.minui": min, "arith.minsi": min, "arith.maxui": max, "arith.maxsi": max}


class UnknownWork(Exception):
    """A trip count (or an `scf.while`) the estimate cannot bound."""


def folded_const(v: SSAValue) -> int | None:
    """`v` as an integer when it is a constant or arithmetic of constants (the
    chunk size `n / threads` of a lowered parallel loop)."""
    c = int_const(v)
    if c is not None or not isinstance(v.owner, Operation) or v.owner.name not in _FOLD:
        return c
    a, b = (folded_const(x) for x in v.owner.operands)
    return None if a is None or b is None else _FOLD[v.owner.name](a, b)


class WorkEstimate:
    """Ops per execution, from constant trip counts only. `builder` (set by
    subclasses whose `value` returns i64s) does the arithmetic of run-time work."""

    builder: ir.IRBuilder | None = None

    def value(self, v: SSAValue) -> Work | None:
        """`v` as a known integer (int or i64), else None."""
        return folded_const(v)

    def unknown_trip(self) -> Work:
        raise UnknownWork

    def while_loop(self, op: Operation) -> Work:
        raise UnknownWork

    def add(self, x: Work, y: Work) -> Work:
        if isinstance(x, int) and isinstance(y, int):
            return x + y
        return self.builder.add(_v(x), _v(y))

    def mul(self, x: Work, y: Work) -> Work:
        if isinstance(x, int) and isinstance(y, int):
            return x * y
        return self.builder.mul(_v(x), _v(y))

    def ceil_div(self, n: Work, d: Work) -> Work:
        if isinstance(n, int) and isinstance(d, int):
            return max(0, -(-n // d)) if d > 0 else self.unknown_trip()
        b = self.builder
        n, d = _v(n), _v(d)
        if not isinstance(d, ir.Constant):  # a step of 0 must not trap here
            d = b.select(b.icmp_signed(">", d, ir.Constant(I64, 0)), d, ir.Constant(I64, 1))
        q = b.sdiv(b.add(n, b.sub(d, ir.Constant(I64, 1))), d)
        return b.select(b.icmp_signed(">", n, ir.Constant(I64, 0)), q, ir.Constant(I64, 0))

    def trip(self, lb: SSAValue, ub: SSAValue, step: SSAValue) -> Work:
        s = self.value(step)
        if s is None:
            return self.unknown_trip()
        a, b = self.value(lb), self.value(ub)
        if a is not None and b is not None:
            return self.ceil_div(b - a if isinstance(a, int) and isinstance(b, int)
                                 else self.builder.sub(_v(b), _v(a)), s)
        x = _span(lb, ub)
        if x is not None and (xv := self.value(x)) is not None:
            return self.ceil_div(xv, s)
        return self.unknown_trip()

    def block(self, block: Block) -> Work:
        w: Work = 0
        for op in block.ops:
            if op.name not in TERMINATORS and op.name != "arith.constant":
                w = self.add(w, self.op(op))
        return w

    def op(self, op: Operation) -> Work:
        if op.name in ("scf.for", "scf.parallel"):
            body = op.regions[0].block
            n = len(body.args) if op.name == "scf.parallel" else 1
            trips: Work = 1
            for k in range(n):
                trips = self.mul(trips, self.trip(op.operands[k], op.operands[n + k], op.operands[2 * n + k]))
            return self.mul(trips, self.block(body))
        if op.name == "scf.while":
            return self.while_loop(op)
        if op.regions:
            w: Work = 0
            for r in op.regions:
                for blk in r.blocks:
                    w = self.add(w, self.block(blk))
            return w
        return 8 if op.name.startswith(_EXPENSIVE) else 1


def _v(x: Work) -> ir.Value:
    return ir.Constant(I64, x) if isinstance(x, int) else x


def _span(lb: SSAValue, ub: SSAValue) -> SSAValue | None:
    """X when `ub` is `lb + X` or `min(lb + X, ...)` (chunked loops)."""
    owner = ub.owner
    if not isinstance(owner, Operation):
        return None
    if owner.name in ("arith.minui", "arith.minsi"):
        for cand in owner.operands:
            x = _span(lb, cand)
            if x is not None:
                return x
    if owner.name == "arith.addi":
        a, b = owner.operands
        if a == lb:
            return b
        if b == lb:
            return a
    return None


def static_work(op: Operation) -> int | None:
    """The ops one execution of `op` runs, or None when a trip count in it is
    not a constant (or it has an `scf.while`)."""
    try:
        return WorkEstimate().op(op)
    except UnknownWork:
        return None
