"""scf to LLVM IR: `HANDLERS`, the scf dialect's handlers.

`scf.for` is a counted loop (`FunctionEmitter.loop`), or unrolled when its
bounds are constant and small (`_small_trip`: LLVM's own unroller is off, see
`jit.optimize`); `scf.if`, `scf.while`, `scf.execute_region` become blocks
and phis.

`scf.parallel` (any rank; the body must end in an operand-less `scf.reduce`)
is parallelised over its first dimension when the module has
`num_threads > 1`: the body is outlined (`outline.Outlined`) into `void
body(ptr ctx, i64 lo, i64 hi)` and the process-wide thread pool of
`compiler.codegen.runtime` (`__dfc_parallel_for`) splits the iterations into
contiguous chunks, the calling thread taking chunks too. A loop uses
`min(num_threads, trip_count * work_per_iteration // parallel_min_work)`
threads, and with one runs serially on the caller without the pool (work is
an estimate in ops, `work_estimate`). Nested `scf.parallel` ops inside a
parallel body, and every one with `num_threads = 1`, run as serial nests.
"""

from __future__ import annotations

import math as pymath

import llvmlite.ir as ir
from xdsl.ir import Block, Operation, SSAValue

from dfc.compiler.codegen.llvm.emitter import FunctionEmitter, Handlers
from dfc.compiler.codegen.llvm.light_kernels import mark_if_light
from dfc.compiler.codegen.llvm.outline import Outlined, outlined_nest
from dfc.compiler.codegen.llvm.strided_loops import vectorisation_hints
from dfc.compiler.codegen.llvm.values import I64, int_const, unsupported
from dfc.compiler.codegen.llvm.work_estimate import Work, WorkEstimate
from dfc.compiler.codegen.runtime import declare_runtime
from dfc.dialects.dominance import defined_inside

__all__ = ["HANDLERS"]

HANDLERS = Handlers()
"""The scf ops' handlers."""


# ---------------------------------------------------------------------------
# Work estimate (for the parallel threshold)

_UNKNOWN_TRIP = 1024
"""Assumed trip count of a loop whose bounds are only known inside the
parallel loop (dynamic bounds are usually data sizes)."""


class _RunTimeWork(WorkEstimate):
    """The ops one iteration of a parallel body executes, as IR evaluated just
    before the parallel loop starts: a trip count is computed at run time from
    values defined outside the parallel op; otherwise it is `_UNKNOWN_TRIP`,
    and an `scf.while` counts its ops `_UNKNOWN_TRIP` times."""

    def __init__(self, e: FunctionEmitter, par: Operation):
        self.e = e
        self.par = par
        self.builder = e.b

    def value(self, v: SSAValue) -> Work | None:
        c = int_const(v)
        if c is not None:
            return c
        if defined_inside(v, self.par) or v not in self.e.values:
            return None
        x = self.e.values[v]
        if not isinstance(x, ir.Value) or not isinstance(x.type, ir.IntType):
            return None
        return self.e.b.sext(x, I64) if x.type.width < 64 else x

    def unknown_trip(self) -> Work:
        return _UNKNOWN_TRIP

    def while_loop(self, op: Operation) -> Work:
        return _UNKNOWN_TRIP * sum(1 for r in op.regions for _ in r.block.ops)


# ---------------------------------------------------------------------------
# Handlers


@HANDLERS.register("scf.for")
def _for(e: FunctionEmitter, op: Operation) -> None:
    if outlined_nest(e, op):
        return
    lb, ub, step = (e.getv(v) for v in op.operands[:3])
    inits = e.flat_operands(op.operands[3:])
    block = e.single_block(op.regions[0], "scf.for")

    def body(iv: ir.Value, carried: list[ir.Value]) -> list[ir.Value]:
        e.values[block.args[0]] = iv
        e.bind(block.args[1:], carried)
        for a in block.args:
            e.name_value(a)
        term = e.emit_ops(block)
        return e.flat_operands(term.operands) if term is not None else []

    trip = _small_trip(lb, ub, step, block)
    if trip is not None:
        out = inits
        for k in range(trip):
            out = body(ir.Constant(lb.type, lb.constant + k * step.constant), out)
    else:
        out = e.loop(lb, ub, step, inits, body, checked=_checked(block), nested=_nested(block),
                     hints=_hints(e, block, 0))
    e.bind(op.results, out)


def _hints(e: FunctionEmitter, block: Block, k: int):
    """`llvm.loop` hints for the loop of `block.args[k]` when it is an
    innermost loop once its small loops are unrolled (`strided_loops`)."""
    innermost = all(o.name == "scf.for" and _unrolled_trip(*(int_const(v) for v in o.operands[:3]), o.regions[0].block)
                    is not None for o in block.walk() if o.regions)
    return vectorisation_hints(e, block.args[k]) if innermost else None


def _checked(block: Block) -> bool:
    """Whether `block` holds an access marked by `check-bounds`."""
    return any("check_bounds" in o.attributes for o in block.walk())


def _nested(block: Block) -> bool:
    """Whether `block` holds a loop."""
    return any(o.name in ("scf.for", "scf.while", "scf.parallel") for o in block.walk())


_UNROLL_TRIPS, _UNROLL_OPS = 8, 160
"""Loops of at most this many trips, and ops once unrolled, are unrolled."""


def _small_trip(lb: ir.Value, ub: ir.Value, step: ir.Value, block: Block) -> int | None:
    """The trip count of a loop with constant bounds small enough to unroll,
    with every loop inside it when one of them carries a value (a pooling
    window's running maximum), else None.
    LLVM's own unroller is off (`jit.optimize`), and such loops as loops cost a
    branch and an induction update per element and keep the loop around them
    from vectorising."""
    if not all(isinstance(v, ir.Constant) and isinstance(v.constant, int) for v in (lb, ub, step)):
        return None
    return _unrolled_trip(lb.constant, ub.constant, step.constant, block)


def _unrolled_trip(lb: int | None, ub: int | None, step: int | None, block: Block) -> int | None:
    """`_small_trip` of constant bounds (None: not constant)."""
    trip = _trip(lb, ub, step)
    size = _unrolled_size(block)
    if trip is None or size is None or trip * size > _UNROLL_OPS:
        return None
    if any(o.regions for o in block.ops) and not any(
        o.name == "scf.for" and len(o.regions[0].block.args) > 1 for top in block.ops for o in top.walk()
    ):
        return None  # a nest of copies (im2col's taps): the loop left around it vectorised with gathers, slower
    return trip


def _trip(lb: int | None, ub: int | None, step: int | None) -> int | None:
    """The trip count of constant bounds when it is at most _UNROLL_TRIPS."""
    if lb is None or ub is None or step is None or step <= 0:
        return None
    trip = max(0, -(-(ub - lb) // step))
    return trip if trip <= _UNROLL_TRIPS else None


def _unrolled_size(block: Block) -> int | None:
    """How many ops `block` emits with every loop in it unrolled; None if it
    holds another region, or a loop that is not small and constant."""
    size = 0
    for op in block.ops:
        if op.name == "scf.for":
            trip = _trip(*(int_const(v) for v in op.operands[:3]))
            inner = _unrolled_size(op.regions[0].block)
            if trip is None or inner is None:
                return None
            size += trip * inner
        elif op.regions:
            return None
        else:
            size += 1
    return size


@HANDLERS.register("scf.if")
def _if(e: FunctionEmitter, op: Operation) -> None:
    b = e.b
    cond = e.getv(op.operands[0])
    then_r, else_r = op.regions
    then_bb = e.fn.append_basic_block("if.then")
    else_bb = e.fn.append_basic_block("if.else") if else_r.blocks else None
    merge_bb = e.fn.append_basic_block("if.end")
    b.cbranch(cond, then_bb, else_bb or merge_bb)
    incoming = []
    for region, bb in ((then_r, then_bb), (else_r, else_bb)):
        if bb is None:
            continue
        b.position_at_end(bb)
        term = e.emit_ops(e.single_block(region, "scf.if"))
        vals = e.flat_operands(term.operands) if term is not None else []
        incoming.append((vals, b.block))
        b.branch(merge_bb)
    b.position_at_end(merge_bb)
    if op.results:
        phis = []
        for i, v in enumerate(incoming[0][0]):
            p = b.phi(v.type)
            for vals, bb in incoming:
                p.add_incoming(vals[i], bb)
            phis.append(p)
        e.bind(op.results, phis)


@HANDLERS.register("scf.while")
def _while(e: FunctionEmitter, op: Operation) -> None:
    b = e.b
    inits = e.flat_operands(op.operands)
    before_r, after_r = op.regions
    before = e.single_block(before_r, "scf.while")
    after = e.single_block(after_r, "scf.while")
    pre = b.block
    head = e.fn.append_basic_block("while.before")
    body_bb = e.fn.append_basic_block("while.after")
    exit_bb = e.fn.append_basic_block("while.exit")
    b.branch(head)
    b.position_at_end(head)
    phis = []
    for v in inits:
        p = b.phi(v.type)
        p.add_incoming(v, pre)
        phis.append(p)
    e.bind(before.args, phis)
    cond_op = e.emit_ops(before)
    assert cond_op is not None and cond_op.name == "scf.condition"
    cond = e.getv(cond_op.operands[0])
    passed = e.flat_operands(cond_op.operands[1:])
    b.cbranch(cond, body_bb, exit_bb)
    b.position_at_end(body_bb)
    e.bind(after.args, passed)
    term = e.emit_ops(after)
    nexts = e.flat_operands(term.operands) if term is not None else []
    for p, v in zip(phis, nexts, strict=True):
        p.add_incoming(v, b.block)
    b.branch(head)
    b.position_at_end(exit_bb)
    e.bind(op.results, passed)


@HANDLERS.register("scf.execute_region")
def _execute_region(e: FunctionEmitter, op: Operation) -> None:
    term = e.emit_ops(e.single_block(op.regions[0], "scf.execute_region"))
    e.bind(op.results, e.flat_operands(term.operands) if term is not None else [])


def _parallel_parts(op: Operation):
    block = op.regions[0].blocks[0] if len(op.regions[0].blocks) == 1 else None
    if block is None:
        raise unsupported("scf.parallel with several blocks")
    n = len(block.args)
    if len(op.operands) != 3 * n:
        raise unsupported("scf.parallel with reductions (init values)")
    last = block.last_op
    if last is None or last.name != "scf.reduce" or last.operands:
        raise unsupported("scf.parallel whose scf.reduce has operands")
    return block, op.operands[:n], op.operands[n : 2 * n], op.operands[2 * n :]


def _serial_nest(e: FunctionEmitter, block: Block, lbs, ubs, steps,
                 dim0: tuple[ir.Value, ir.Value] | None = None) -> None:
    """Emit the iteration space of a parallel body as nested serial loops;
    `dim0` overrides the first dimension's bounds."""
    n = len(block.args)

    def level(k: int) -> None:
        if k == n:
            e.emit_ops(block)
            return
        lb, ub = (dim0 if k == 0 and dim0 is not None else (e.getv(lbs[k]), e.getv(ubs[k])))

        def body(iv: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
            e.values[block.args[k]] = iv
            e.name_value(block.args[k])
            level(k + 1)
            return []

        hints = _hints(e, block, k) if k == n - 1 else None
        e.loop(lb, ub, e.getv(steps[k]), [], body, name=f"par{k}", checked=_checked(block), hints=hints)

    level(0)


@HANDLERS.register("scf.parallel")
def _parallel(e: FunctionEmitter, op: Operation) -> None:
    block, lbs, ubs, steps = _parallel_parts(op)
    if e.in_parallel or e.m.num_threads <= 1:
        if outlined_nest(e, op):
            return
        _serial_nest(e, block, lbs, ubs, steps)
        return
    m = e.m
    base = m.fresh_name(e.func_op.sym_name.data)
    out = Outlined(e, op, [steps[0], *lbs[1:], *ubs[1:], *steps[1:]], [I64, I64], base)
    _serial_nest(out.sub, block, lbs, ubs, steps, dim0=(out.args[0], out.args[1]))
    out.sub.b.ret_void()
    mark_if_light(op, out.impl, out.trampoline)
    b = e.b
    tramp, ctx = out.trampoline, out.ctx
    # iterations each thread must get: parallel_min_work / (work per iteration)
    est = _RunTimeWork(e, op)
    per_iter: Work = est.block(block)
    for j in range(1, len(block.args)):
        per_iter = est.mul(per_iter, est.trip(lbs[j], ubs[j], steps[j]))
    if isinstance(per_iter, int):
        min_iters: ir.Value = ir.Constant(I64, max(1, pymath.ceil(m.parallel_min_work / max(per_iter, 1))))
    else:
        per_iter = e.call_intrinsic("umax", I64, [per_iter, ir.Constant(I64, 1)])
        min_iters = b.udiv(ir.Constant(I64, m.parallel_min_work), per_iter)
        min_iters = b.add(min_iters, ir.Constant(I64, 1), name="par.min_iters")
    rt = declare_runtime(m.ir, "__dfc_parallel_for")
    threads = ir.Constant(I64, m.num_threads)
    b.call(rt, [tramp, ctx, e.getv(lbs[0]), e.getv(ubs[0]), e.getv(steps[0]), min_iters, threads])
