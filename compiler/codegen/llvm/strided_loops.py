"""Innermost loops whose accesses are mostly strided, which LLVM is told not to vectorise.

    vectorisation_hints(e, iv) -> {"llvm.loop": loop ID} or None     for the emitted loop of variable `iv`

A loop over a tensor's outer dimension (the channels of an NCHW batch-norm
gradient's sums, say) reads its elements a row apart: strides of many
elements per iteration, which AVX2 cannot load as vectors. LLVM's loop
vectoriser widens such a loop anyway, each strided access becoming one
scalar load or store per lane, and the dependence analysis run on the widened
body (LoopLoadElimination's) is quadratic in its accesses: two kernels of
ResNet-18's training step, each reading 32 such elements per iteration, took
1 s of optimisation each, against 0.02 s unvectorised, for no gain at run
time (docs/performance-notes.md). A loop with at least `MAX_STRIDED_ACCESSES`
accesses whose step in memory per iteration is a known constant of more
than `MAX_INTERLEAVE` elements, counted with its small inner loops unrolled as the
emitter unrolls them, is marked `llvm.loop.vectorize.enable false` (only that
loop: LLVM's SLP vectoriser and the other loops are unaffected). The loop
computes the same values; a floating-point reduction it carries is summed in
iteration order rather than reassociated across lanes (fast-math allows both).
"""

from __future__ import annotations

import llvmlite.ir as ir
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import BlockArgument, Operation, SSAValue

from dfc.compiler.codegen.llvm.emitter import FunctionEmitter
from dfc.compiler.codegen.llvm.values import int_const

__all__ = ["MAX_STRIDED_ACCESSES", "strided_accesses", "vectorisation_hints"]

MAX_STRIDED_ACCESSES = 16
"""Strided accesses from which an innermost loop is not vectorised (8 lanes: 128 scalar accesses widened)."""

MAX_INTERLEAVE = 8
"""LLVM's largest interleaved-access group (`-max-interleave-group-factor`):
accesses of a smaller stride are vectorised as wide loads and shuffles, which
pays (a ResNet-18 step 15% slower in CPU time with those loops unvectorised
too); larger strides become one scalar access per lane."""

_PASS_THROUGH = (arith.IndexCastOp, arith.ExtSIOp, arith.ExtUIOp)


class _LoopID(ir.MDValue):
    """A distinct, self-referencing loop ID (`!n = distinct !{!n, hints...}`), as LLVM requires."""

    def __init__(self, module: ir.Module, hints: list[ir.MDValue]):
        super().__init__(module, hints, name=str(len(module.metadata)))

    def descr(self, buf: list[str]) -> None:
        refs = ", ".join([self.get_reference(), *(h.get_reference() for h in self.operands)])
        buf += (f"distinct !{{ {refs} }}", "\n")


def _slope(v: SSAValue, iv: BlockArgument, memo: dict[SSAValue, int | None]) -> int | None:
    """How much `v` grows per step of `iv` (the variable of an scf.for or the
    last of an scf.parallel, whose inner loops are unrolled), or None when that
    is not a known constant."""
    if v is iv:
        return 1
    if v in memo:
        return memo[v]
    loop = iv.block.parent_op()
    if not loop.is_ancestor(v.owner):
        return 0  # defined outside the loop
    memo[v] = None  # a cycle through a loop-carried value stays unknown
    if isinstance(v, BlockArgument):
        owner = v.block.parent_op()
        if owner is loop:  # scf.parallel: a variable of an outer level; scf.for: a carried value
            result = 0 if isinstance(loop, scf.ParallelOp) else None
        else:  # the variable of an inner (unrolled) loop; any other argument may change
            result = 0 if isinstance(owner, scf.ForOp) and v.index == 0 else None
    else:
        result = _op_slope(v.owner, iv, memo)
    memo[v] = result
    return result


def _op_slope(op: Operation, iv: BlockArgument, memo: dict[SSAValue, int | None]) -> int | None:
    if isinstance(op, arith.ConstantOp):
        return 0
    if isinstance(op, memref.LoadOp) or op.regions:
        return None  # a value read or computed in a region may change with the iteration
    slopes = [_slope(x, iv, memo) for x in op.operands]
    if isinstance(op, arith.AddiOp | arith.SubiOp) and None not in slopes:
        return slopes[0] + slopes[1] if isinstance(op, arith.AddiOp) else slopes[0] - slopes[1]
    if isinstance(op, arith.MuliOp):
        (a, b), (sa, sb) = op.operands, slopes
        if sa == 0 and sb is not None and (c := int_const(a)) is not None:
            return c * sb
        if sb == 0 and sa is not None and (c := int_const(b)) is not None:
            return c * sa
    if isinstance(op, _PASS_THROUGH):
        return slopes[0]
    return 0 if all(s == 0 for s in slopes) else None


def _access_stride(op: memref.LoadOp | memref.StoreOp, iv: BlockArgument, memo: dict[SSAValue, int | None]) -> int | None:
    """Elements `op`'s address moves per step of `iv`, or None if not a known constant."""
    t = op.memref.type
    strides = t.get_strides() if isinstance(t, MemRefType) else None
    if strides is None:
        return None
    total = 0
    for index, stride in zip(op.indices, strides, strict=True):
        slope = _slope(index, iv, memo)
        if slope is None or (slope and stride is None):
            return None
        total += slope * (stride or 0)
    return total


def strided_accesses(iv: BlockArgument) -> int:
    """How many loads and stores the loop of `iv` (an scf.for's variable or an
    scf.parallel's last) makes per iteration, its small inner loops unrolled,
    that move by a known constant of more than `MAX_INTERLEAVE` elements per
    step of `iv`."""
    memo: dict[SSAValue, int | None] = {}
    loop = iv.block.parent_op()
    return sum(_copies(op, loop) for op in iv.block.walk() if isinstance(op, memref.LoadOp | memref.StoreOp)
               and (s := _access_stride(op, iv, memo)) is not None and abs(s) > MAX_INTERLEAVE)


def _copies(op: Operation, loop: Operation) -> int:
    """How many times `op` runs per iteration of `loop`: the product of the
    constant trip counts of the scf.for loops between them (1 for another)."""
    copies = 1
    parent = op.parent_op()
    while parent is not None and parent is not loop:
        if isinstance(parent, scf.ForOp):
            lb, ub, step = (int_const(v) for v in (parent.lb, parent.ub, parent.step))
            if lb is not None and ub is not None and step:
                copies *= max(0, -(-(ub - lb) // step))
        parent = parent.parent_op()
    return copies


def vectorisation_hints(e: FunctionEmitter, iv: BlockArgument) -> dict[str, ir.MDValue] | None:
    """The `llvm.loop` metadata that keeps LLVM from vectorising the loop of
    `iv` (see `strided_accesses`) when it has `MAX_STRIDED_ACCESSES` strided
    accesses or more; else None."""
    if strided_accesses(iv) < MAX_STRIDED_ACCESSES:
        return None
    module = e.m.ir
    off = module.add_metadata([ir.MetaDataString(module, "llvm.loop.vectorize.enable"), ir.Constant(ir.IntType(1), 0)])
    return {"llvm.loop": _LoopID(module, [off])}
