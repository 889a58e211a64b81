"""Outlined kernels light enough for LLVM's light pipeline.

    static_work(op) -> int | None    ops one execution of `op` runs, when all its trip counts are constants
    mark_if_light(op, *fns)          marks `fns` `!dfc.light` when `static_work(op) < LIGHT_WORK`

An outlined loop nest or parallel body (with its trampoline) whose work per
call is a constant below `LIGHT_WORK` ops (a channel vector's statistics, an
elementwise map over a small image) runs for a few microseconds whatever
LLVM makes of it. Its functions get the metadata `!dfc.light`, and a part
whose functions all have it is compiled with the light pipeline
(`workers.compile_part`: O1 without vectorisation, about a quarter less
compile time).
"""

from __future__ import annotations

import llvmlite.ir as ir
from xdsl.ir import Block, Operation, SSAValue

from dfc.compiler.codegen.llvm.emitter import TERMINATORS
from dfc.compiler.codegen.llvm.values import int_const
from dfc.compiler.codegen.llvm.workers import LIGHT_KIND

__all__ = ["LIGHT_WORK", "static_work", "mark_if_light"]

LIGHT_WORK = 1 << 16
"""Estimated ops per call below which an outlined kernel is light."""

_EXPENSIVE = ("math.", "arith.div", "arith.rem")


_FOLD = {"arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b, "arith.muli": lambda a, b: a * b,
         "arith.divui": lambda a, b: a // b if a >= 0 and b > 0 else None,
         "arith.minui": min, "arith.minsi": min, "arith.maxui": max, "arith.maxsi": max}


def _const(v: SSAValue) -> int | None:
    """`v` as an integer when it is a constant or arithmetic of constants (the
    chunk size `n / threads` of a lowered parallel loop)."""
    c = int_const(v)
    if c is not None or not isinstance(v.owner, Operation) or v.owner.name not in _FOLD:
        return c
    a, b = (_const(x) for x in v.owner.operands)
    return None if a is None or b is None else _FOLD[v.owner.name](a, b)


def _trip(lb: SSAValue, ub: SSAValue, step: SSAValue) -> int | None:
    """The constant trip count of a loop: constant bounds, or an upper bound
    `min(lb + X, ...)` or `lb + X` with X constant (a chunk of a lowered reduction)."""
    s = _const(step)
    if s is None or s <= 0:
        return None
    a, b = _const(lb), _const(ub)
    if a is not None and b is not None:
        return max(0, -(-(b - a) // s))
    x = _span(lb, ub)
    return None if x is None else max(0, -(-x // s))


def _span(lb: SSAValue, ub: SSAValue) -> int | None:
    owner = ub.owner
    if not isinstance(owner, Operation):
        return None
    if owner.name in ("arith.minui", "arith.minsi"):
        spans = [x for cand in owner.operands if (x := _span(lb, cand)) is not None]
        return min(spans) if spans else None
    if owner.name == "arith.addi":
        a, b = owner.operands
        return _const(b) if a == lb else _const(a) if b == lb else None
    return None


def _block_work(block: Block) -> int | None:
    total = 0
    for op in block.ops:
        if op.name in TERMINATORS or op.name == "arith.constant":
            continue
        w = static_work(op)
        if w is None:
            return None
        total += w
    return total


def static_work(op: Operation) -> int | None:
    """The ops one execution of `op` runs, its loops' iterations included (8
    for a math function or a division), or None when a trip count in it is
    not a constant (or it has an `scf.while`)."""
    if op.name in ("scf.for", "scf.parallel"):
        block = op.regions[0].block
        n = len(block.args) if op.name == "scf.parallel" else 1
        trips = 1
        for k in range(n):
            t = _trip(op.operands[k], op.operands[n + k], op.operands[2 * n + k])
            if t is None:
                return None
            trips *= t
        w = _block_work(block)
        return None if w is None else trips * w
    if op.name == "scf.while":
        return None
    if op.regions:
        total = 0
        for r in op.regions:
            for blk in r.blocks:
                w = _block_work(blk)
                if w is None:
                    return None
                total += w
        return total
    return 8 if op.name.startswith(_EXPENSIVE) else 1


def mark_if_light(op: Operation, *fns: ir.Function) -> None:
    """Mark `fns`, the functions outlined from `op`, light (`!dfc.light`) when
    one execution of `op` is estimated below `LIGHT_WORK` ops."""
    work = static_work(op)
    if work is not None and work < LIGHT_WORK:
        for fn in fns:
            fn.set_metadata(LIGHT_KIND, fn.module.add_metadata([]))
