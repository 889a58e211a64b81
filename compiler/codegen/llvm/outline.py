"""Regions emitted as functions of their own: parallel loop bodies, GEMM epilogues, loop nests.

`Outlined(e, op, uses, extra, base)` emits the ops of `op`'s regions in an
internal function `impl(captures..., extra...)`; the values they take from
outside are captured (flattened), except constants, globals and views of a
constant global, which the body recomputes so that LLVM still sees them. A
view of a writable global (mem-plan's arena) is captured, as a pointer
`align A dereferenceable(bytes)` (`A` from its offset), once per byte range:
two kernels of one shape at different arena offsets are then the same
function but for their names, which LLVM's `mergefunc` (`jit.merge_identical_functions`)
compiles once (ResNet-18's training step: 463 -> 237 LLVM parts). A
captured buffer is `noalias` in the body when it certainly shares no byte with
any other captured buffer (`values.memref_extent`). The body's alias scopes
(`_body_scopes`) are its own, numbered in the order the body first uses
them, so that equal bodies carry equal metadata; the messages of its bounds
checks are arguments too (kernels of one shape at different source lines).
Reached through a trampoline
`void (ptr ctx, extra...)` that loads the captures from a context struct
(what the runtime's `__dfc_parallel_for` and the GEMM kernel's epilogue entry
call), or called directly (`direct`; never inlined).

Many loop nests: a function with at least `OUTLINE_MIN_NESTS` top-level loop
nests emits each as a direct call of its own function (`outlined_nest`):
LLVM's optimisation of one function grows faster than its size, and a
solver or gradient of many small maps is one function of hundreds of loops.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Sequence

import llvmlite.ir as ir
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue

from dfc.compiler.codegen.llvm.emitter import FunctionEmitter, ModuleEmitter, bounds_message
from dfc.compiler.codegen.llvm.light_kernels import mark_if_light
from dfc.compiler.codegen.llvm.values import (
    ALLOC_ALIGN,
    I8,
    I32,
    PTR,
    VOID,
    flat_types,
    flatten,
    memref_extent,
    unflatten,
)
from dfc.dialects.dominance import defined_inside

__all__ = ["Outlined", "OUTLINE_MIN_NESTS", "outlines_nests", "outlined_nest"]

OUTLINE_MIN_NESTS = 8
"""A function with at least this many top-level loop nests emits each in a
function of its own (`outlined_nest`)."""

_REMAT = frozenset({"arith.constant", "memref.get_global"})


def _rematerialisable(m: ModuleEmitter, v: SSAValue) -> bool:
    """Whether an outlined body recomputes `v` instead of capturing it: a
    constant, a global, or a view of a constant global at a constant offset."""
    owner = v.owner
    if not isinstance(owner, Operation):
        return False
    if owner.name in _REMAT:
        return True
    return (owner.name == "memref.view" and isinstance(base := memref_extent(v), tuple) and isinstance(base[0], str)
            and m.globals[base[0]][1].global_constant and all(_rematerialisable(m, x) for x in owner.operands))


def _global_view(m: ModuleEmitter, v: SSAValue) -> tuple[str, int, int, int] | None:
    """For a static view of a writable global: (global, first byte, end byte,
    alignment of its address)."""
    x = memref_extent(v) if isinstance(v.type, MemRefType) else None
    if x is None or not isinstance(x[0], str) or x[2] == pymath.inf:
        return None
    align = m.globals[x[0]][1].align or ALLOC_ALIGN
    return x[0], x[1], int(x[2]), min(align, x[1] & -x[1]) if x[1] else align


def _body_scopes(e: FunctionEmitter, op: Operation) -> dict[tuple, tuple[ir.MDValue, ir.MDValue]]:
    """Alias scopes of the accesses inside `op` as a body of its own: the
    byte ranges of `e`'s scoped views that the body uses, numbered in the
    order it first uses them, each disjoint from the same others as in `e`.
    Equal bodies thus carry equal metadata (`mergefunc` compares it); a body
    is never inlined into another, so bodies may share the scope nodes."""
    if not e.view_scopes:
        return {}
    used = list(dict.fromkeys(x for inner in op.walk() if inner is not op for v in inner.operands
                              if isinstance(v.type, MemRefType) and (x := memref_extent(v)) in e.view_scopes))
    disjoint = {x: [y for y in used if y[0] == x[0] and (y[2] <= x[1] or x[2] <= y[1])] for x in used}
    scoped = [x for x in used if disjoint[x]]
    if not scoped:
        return {}
    ir_module = e.m.ir
    domain = ir_module.add_metadata(["dfc.body.views"])
    scope = {x: ir_module.add_metadata([f"dfc.body.view.{k}", domain]) for k, x in enumerate(scoped)}
    return {x: (ir_module.add_metadata([scope[x]]), ir_module.add_metadata([scope[y] for y in disjoint[x]]))
            for x in scoped}


class Outlined:
    """The ops of `op`'s regions in an internal function `impl(captures...,
    extra...)`, reached through a trampoline `void (ptr ctx, extra...)` that
    loads the captures from the context struct `ctx`, which the constructor
    fills at the call site. The values the regions (and `uses`) take from
    outside are captured, except constants, globals and views of a constant
    global, re-materialised inside; views of a writable global with the same
    bytes are captured once. Emit the body with `sub`, whose function's
    arguments after the captures are `args`, then end it
    (`sub.b.ret_void()`). `direct`: no trampoline; the caller calls
    `impl(*captures)`, which is never inlined."""

    def __init__(self, e: FunctionEmitter, op: Operation, uses: Sequence[SSAValue], extra: Sequence[ir.Type],
                 base: str, *, direct: bool = False):
        m = e.m
        captured: list[SSAValue] = []
        same_bytes: dict[SSAValue, SSAValue] = {}
        """A captured view of a writable global -> the captured view of the same bytes it is passed as."""
        first_view: dict[tuple, SSAValue] = {}
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
            if _rematerialisable(m, v):
                for x in v.owner.operands:
                    visit(x)
                remat.append(v.owner)
            elif (view := _global_view(m, v)) is not None and view in first_view:
                same_bytes[v] = first_view[view]
            else:
                if view is not None:
                    first_view[view] = v
                captured.append(v)

        for v in uses:
            visit(v)
        flat_caps = [x for v in captured for x in flatten(e.get(v))]
        messages = list(dict.fromkeys(bounds_message(inner) for inner in op.walk()
                                      if inner is not op and "check_bounds" in inner.attributes))
        flat_caps += [m.message(text) if (arg := e.messages.get(text)) is None else arg for text in messages]
        cap_types = [x.type for x in flat_caps]

        # noalias for captured buffers certainly disjoint from every other captured one
        extents = {v: memref_extent(v) for v in captured if isinstance(v.type, MemRefType)}
        direct_globals = {r.properties["name"].root_reference.data for r in remat if r.name == "memref.get_global"}

        def disjoint(v: SSAValue) -> bool:
            x = extents[v]
            if x is None or isinstance(x[0], str) and (x[0] in direct_globals or None in extents.values()):
                return False  # a view of a global the body also reaches otherwise
            return not any(
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
                if (view := _global_view(m, v)) is not None:
                    impl.args[k].attributes.align = view[3]
                    impl.args[k].attributes.dereferenceable = view[2] - view[1]
            k += n
        self.impl = impl
        self.sub = FunctionEmitter(m, impl, e.func_op, in_parallel=e.in_parallel if direct else True)
        self.sub.view_scopes = _body_scopes(e, op)
        self.sub.bind(captured, impl.args[: len(flat_caps) - len(messages)])
        self.sub.messages = dict(zip(messages, impl.args[len(flat_caps) - len(messages) : len(flat_caps)]))
        for v, w in same_bytes.items():
            self.sub.values[v] = unflatten(v.type, flatten(self.sub.values[w]))
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
