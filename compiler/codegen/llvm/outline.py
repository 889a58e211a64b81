"""Regions emitted as functions of their own: parallel loop bodies, GEMM epilogues, loop nests.

`Outlined(e, op, uses, extra, base)` emits the ops of `op`'s regions in an
internal function `impl(captures..., extra...)`; the values they take from
outside are captured (flattened), except constants, globals and views of a
global at constant offsets (an arena's buffers), which the body recomputes so
that LLVM still sees their addresses. A captured buffer is `noalias` in the
body when it certainly shares no byte with any other captured buffer
(`values.memref_extent`). Reached through a trampoline `void (ptr ctx,
extra...)` that loads the captures from a context struct (what the runtime's
`__dfc_parallel_for` and the GEMM kernel's epilogue entry call), or called
directly (`direct`; never inlined).

Many loop nests: a function with at least `OUTLINE_MIN_NESTS` top-level loop
nests emits each as a direct call of its own function (`outlined_nest`):
LLVM's optimisation of one function grows faster than its size, and a
solver or gradient of many small maps is one function of hundreds of loops.
"""

from __future__ import annotations

from collections.abc import Sequence

import llvmlite.ir as ir
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue

from dfc.compiler.codegen.llvm.emitter import FunctionEmitter
from dfc.compiler.codegen.llvm.light_kernels import mark_if_light
from dfc.compiler.codegen.llvm.values import I8, I32, PTR, VOID, flat_types, flatten, memref_extent
from dfc.dialects.dominance import defined_inside

__all__ = ["Outlined", "OUTLINE_MIN_NESTS", "outlines_nests", "outlined_nest"]

OUTLINE_MIN_NESTS = 8
"""A function with at least this many top-level loop nests emits each in a
function of its own (`outlined_nest`)."""

_REMAT = frozenset({"arith.constant", "memref.get_global"})


def _rematerialisable(v: SSAValue) -> bool:
    """Whether an outlined body recomputes `v` instead of capturing it: a
    constant, a global, or a view of a global at a constant offset."""
    owner = v.owner
    if not isinstance(owner, Operation):
        return False
    return owner.name in _REMAT or (owner.name == "memref.view" and all(map(_rematerialisable, owner.operands)))


class Outlined:
    """The ops of `op`'s regions in an internal function `impl(captures...,
    extra...)`, reached through a trampoline `void (ptr ctx, extra...)` that
    loads the captures from the context struct `ctx`, which the constructor
    fills at the call site. The values the regions (and `uses`) take from
    outside are captured, except constants, globals and views of a global at
    constant offsets (an arena's buffers), re-materialised inside, where LLVM
    sees their addresses. Emit the body with `sub`, whose function's
    arguments after the captures are `args`, then end it
    (`sub.b.ret_void()`). `direct`: no trampoline; the caller calls
    `impl(*captures)`, which is never inlined."""

    def __init__(self, e: FunctionEmitter, op: Operation, uses: Sequence[SSAValue], extra: Sequence[ir.Type],
                 base: str, *, direct: bool = False):
        m = e.m
        captured: list[SSAValue] = []
        remat: list[Operation] = []
        seen: set[SSAValue] = set()
        uses = list(uses)
        for inner in op.walk():
            if inner is not op:
                uses.extend(inner.operands)

        def visit(v: SSAValue) -> None:
            if v in seen or defined_inside(v, op):
                return
            seen.add(v)
            if _rematerialisable(v):
                for x in v.owner.operands:
                    visit(x)
                remat.append(v.owner)
            else:
                captured.append(v)

        for v in uses:
            visit(v)
        flat_caps = [x for v in captured for x in flatten(e.get(v))]
        cap_types = [x.type for x in flat_caps]

        # noalias for captured buffers certainly disjoint from every other captured one
        extents = {v: memref_extent(v) for v in captured if isinstance(v.type, MemRefType)}

        def disjoint(v: SSAValue) -> bool:
            x = extents[v]
            return x is not None and not any(
                w is not v and y is not None and y[0] == x[0] and y[1] < x[2] and x[1] < y[2] for w, y in extents.items()
            )

        impl = ir.Function(m.ir, ir.FunctionType(VOID, [*cap_types, *extra]), base + ".body")
        impl.linkage = "internal"
        impl.attributes.add("nounwind")
        k = 0
        for v in captured:
            n = len(flat_types(v.type))
            if isinstance(v.type, MemRefType):
                if disjoint(v):
                    impl.args[k].add_attribute("noalias")
                impl.args[k].add_attribute("captures(none)")
            k += n
        self.impl = impl
        self.sub = FunctionEmitter(m, impl, e.func_op, in_parallel=e.in_parallel if direct else True)
        self.sub.bind(captured, impl.args[: len(flat_caps)])
        for r_op in remat:
            self.sub.handler(r_op)(self.sub, r_op)
        self.args = impl.args[len(flat_caps):]
        if direct:
            impl.attributes.add("noinline")
            self.captures = flat_caps
            return

        ctx_ty = ir.LiteralStructType(cap_types or [I8])
        self.trampoline = ir.Function(m.ir, ir.FunctionType(VOID, [PTR, *extra]), base)
        self.trampoline.linkage = "internal"
        self.trampoline.attributes.add("nounwind")
        tb = ir.IRBuilder(self.trampoline.append_basic_block("entry"))
        ctx_arg = self.trampoline.args[0]
        fields = [
            tb.load(tb.gep(ctx_arg, [ir.Constant(I32, 0), ir.Constant(I32, i)], inbounds=True, source_etype=ctx_ty),
                    typ=t)
            for i, t in enumerate(cap_types)
        ]
        tb.call(impl, [*fields, *self.trampoline.args[1:]])
        tb.ret_void()

        self.ctx = e.entry_alloca(ctx_ty, 8, name=f"{base}.ctx")
        for i, v in enumerate(flat_caps):
            e.b.store(v, e.b.gep(self.ctx, [ir.Constant(I32, 0), ir.Constant(I32, i)], inbounds=True,
                                 source_etype=ctx_ty))


def _outlinable(op: Operation) -> bool:
    """A loop nest that can be a function of its own: one without results."""
    return op.name in ("scf.for", "scf.parallel") and not op.results


def outlines_nests(func_op: Operation) -> bool:
    """Whether the func.func `func_op` has `OUTLINE_MIN_NESTS` top-level loop nests or more."""
    return sum(map(_outlinable, func_op.body.blocks[0].ops)) >= OUTLINE_MIN_NESTS


def outlined_nest(e: FunctionEmitter, op: Operation) -> bool:
    """Emit top-level loop nest `op` as the call of a function of its own,
    when `e` outlines its nests (`FunctionEmitter.outline_nests`); whether it did."""
    if not (e.outline_nests and op.parent_op() is e.func_op and _outlinable(op)):
        return False
    out = Outlined(e, op, op.operands, [], e.m.fresh_name(f"{e.func_op.sym_name.data}.nest"), direct=True)
    out.sub.handler(op)(out.sub, op)
    out.sub.b.ret_void()
    mark_if_light(op, out.impl)
    e.b.call(out.impl, out.captures)
    return True
