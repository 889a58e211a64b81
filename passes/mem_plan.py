"""`mem-plan`: liveness-based buffer reuse, one static arena per function.

Placement in the pipeline: after `lower-dataflow` (the default pipeline ends
`bufferize,lower-dataflow,canonicalize,cse,mem-plan`). There the IR is
func/scf/memref/arith/math: every buffer is an explicit `memref.alloc`,
including the per-chunk reduction buffers that `lower-dataflow` adds, and
every loop is an scf op, so liveness is a walk over nested blocks. Before it,
buffers hide in df.map `outs`, and lowering would add allocations the plan
could not see.

Liveness: ops are numbered in pre-order, and an op spans its own number to the
last one inside its regions. A buffer (a `memref.alloc` and its aliases:
casts, reshapes, views, subviews) lives from its first use to its last, each
use counted as its ancestor in the alloc's block. A use inside an
scf.for/while/if/parallel therefore keeps the buffer live over the whole op,
so contents carried across iterations survive; a buffer allocated inside a
loop body is fresh in each iteration, so its interval within the body
suffices.

Which buffers are planned: static shape, identity layout, default memory
space, alignment at most 64. Left as alloc/dealloc: buffers that escape
(through `func.return`, where the caller owns them and frees them with libc
free, an `scf.yield`, a region op's operand, a call returning memrefs, or any
other op making a memref of them), dynamic shapes (counted separately), and
large buffers inside an `scf.parallel` (each thread needs its own) or in a
function that may run twice at once (recursive, or called from inside an
`scf.parallel`: activations would share the arena).

Layout: `pack` places buffers largest first, each in the tightest 64-byte
aligned gap left by the buffers live at the same time (best fit), and
`verify_plan` checks every layout the pass makes. Buffers of at most
`stack-limit` bytes (while their sum stays within `STACK_BUDGET`) are packed
into a stack frame, a `memref.alloca` of bytes at the start of the function,
or of the innermost enclosing `scf.parallel` body (one per thread: the LLVM
emitter puts static allocas in the entry block of the function it emits).
The others are packed into the arena, `memref.global "private"
@__dfc_arena_<f> : memref<Nxi8>` (uninitialised, 64-byte aligned), of at
most `ARENA_BUDGET` bytes: while the packing exceeds it, the largest buffer
is left on the heap. Each alloc
becomes a `memref.view` of its frame or arena at a constant offset, built at
the function's entry or the parallel body's start (so allocations inside
loops are hoisted), and its deallocs are erased.

A function carrying `{df.arena_per_call}` allocates its arena instead
(`memref.alloc` at its entry, a dealloc before each return), so that its
buffers are held only during its calls (the layers `autodiff` outlines under a
memory budget). Otherwise the JIT'd module owns the arena: allocated once per engine, reused by every
call. A function with an arena is therefore not re-entrant; the
`ExecutionEngine` serialises calls into modules with writable globals.

The buffers a call returns stay on the heap (the callee allocates them), but
their dealloc, which `bufferize` puts at the end of the scope, moves to just
after their last use when the callee returns buffers of its own (never an
alias of an argument): a gradient that calls `@f_grad` layer after layer
frees each layer's activations once its backward call has read them.

In-place updates are `bufferize`'s: a df.map writes into its `outs` buffer
when that is dead afterwards, and a tensor `scf.for` iter_arg is one buffer
for the whole loop. mem-plan adds the reuse of dead buffers' memory by later,
unrelated buffers.

`print-stats=true` prints one line per function to stderr:
`mem-plan: @f peak-before=B peak-after=A arena=N stack=S heap=H dynamic=D`.
B is the peak sum of the static allocations live at once (64-byte rounded)
under the original alloc/dealloc placement; A = N + S + H, with N the arena
size, S the stack frames' sizes, H that peak over the unplanned static
allocations; D counts the dynamic-shape allocations (in neither peak).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StringAttr,
    UnitAttr,
    i8,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.traits import IsTerminator

from dfc.dialects.blas import GemmOp
from dfc.dialects.diagnostics import CompileError

ALIGNMENT = 64
STACK_BUDGET = 64 << 10
"""Bytes of stack buffers per function, beyond which small buffers go to the arena."""
ARENA_BUDGET = 256 << 20
"""Bytes of a function's arena, beyond which its largest buffers stay on the heap
(an arena of gigabytes is a global the JIT cannot allocate: LLVM aborts)."""

PER_CALL = "df.arena_per_call"
"""A function carrying this unit attribute gets its arena from the heap at each
call, freed at its returns, instead of a static global: its buffers are held
only while it runs (what a checkpoint's recomputed layer needs, called once)."""

_VIEWS = (memref.CastOp, memref.CollapseShapeOp, memref.ExpandShapeOp, memref.SubviewOp, memref.ViewOp)


# -- plans ----------------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    """A buffer live over program points [start, end], at arena bytes [offset, offset + size)."""

    name: str
    start: int
    end: int
    size: int
    offset: int = 0


@dataclass(frozen=True)
class Plan:
    """The arena layout of one function."""

    function: str
    slots: tuple[Slot, ...]
    size: int


def pack(function: str, slots: Sequence[Slot]) -> Plan:
    """Offsets for `slots` (sizes multiples of 64), returned in the given order:
    largest first, each at the tightest gap among the slots live with it."""
    placed: dict[int, Slot] = {}
    for k in sorted(range(len(slots)), key=lambda k: (-slots[k].size, slots[k].start, k)):
        s = slots[k]
        live = (p for p in placed.values() if p.start <= s.end and s.start <= p.end)
        best: tuple[int, int] | None = None  # (gap, offset)
        at = 0
        for lo, hi in sorted((p.offset, p.offset + p.size) for p in live):
            if lo - at >= s.size and (best is None or lo - at < best[0]):
                best = (lo - at, at)
            at = max(at, hi)
        placed[k] = replace(s, offset=best[1] if best else at)
    ordered = tuple(placed[k] for k in range(len(slots)))
    return Plan(function, ordered, max((p.offset + p.size for p in ordered), default=0))


def verify_plan(plan: Plan) -> None:
    """Raise `CompileError` unless every slot is aligned and inside the arena, and
    no two slots live at the same time share a byte."""
    for s in plan.slots:
        if s.offset % ALIGNMENT or s.offset < 0 or s.offset + s.size > plan.size:
            raise CompileError(f"mem-plan: @{plan.function}: {s.name} is misplaced at [{s.offset}, +{s.size})")
    for k, a in enumerate(plan.slots):
        for b in plan.slots[k + 1 :]:
            if a.start <= b.end and b.start <= a.end and a.offset < b.offset + b.size and b.offset < a.offset + a.size:
                raise CompileError(
                    f"mem-plan: @{plan.function}: {a.name} and {b.name} are live together but share arena bytes"
                )


def peak(intervals: Iterable[tuple[int, int, int]]) -> int:
    """The largest sum of sizes of (start, end, size) intervals live at one point."""
    ivs = list(intervals)
    return max((sum(z for s, e, z in ivs if s <= p <= e) for p, _, _ in ivs), default=0)


# -- analysis -------------------------------------------------------------


def _element_bytes(t: Attribute) -> int | None:
    if isinstance(t, IndexType):
        width = 64
    elif isinstance(t, IntegerType):
        width = t.width.data
    elif isinstance(t, AnyFloat):
        width = t.bitwidth
    else:
        return None
    return 1 << max(0, (width - 1).bit_length() - 3)


def _size(t: MemRefType) -> int | None:
    """Bytes of a plannable memref type rounded up to 64 (at least 64), else None."""
    elem = _element_bytes(t.element_type)
    if elem is None or not t.has_static_shape() or not isinstance(t.layout, NoneAttr):
        return None
    if not isinstance(t.memory_space, NoneAttr):
        return None
    n = elem
    for d in t.get_shape():
        n *= d
    return max(ALIGNMENT, -(-n // ALIGNMENT) * ALIGNMENT)


@dataclass
class _Buffer:
    alloc: memref.AllocOp
    name: str
    size: int
    live: tuple[int, int]  # first to last use
    held: tuple[int, int]  # alloc to dealloc, as written
    deallocs: list[Operation]
    escapes: bool
    parallel: Block | None  # the innermost enclosing scf.parallel body


class _Function:
    """Program points of one function and its buffers."""

    def __init__(self, f: func.FuncOp):
        self.f = f
        self.start: dict[Operation, int] = {}
        self.end: dict[Operation, int] = {}
        self._number(f, 0)

    def _number(self, op: Operation, n: int) -> int:
        self.start[op] = n
        n += 1
        for region in op.regions:
            for block in region.blocks:
                for inner in block.ops:
                    n = self._number(inner, n)
        self.end[op] = n - 1
        return n

    def buffer(self, alloc: memref.AllocOp, size: int) -> _Buffer:
        block = alloc.parent_block()
        assert block is not None
        users, deallocs, escapes = _uses(alloc.memref)
        spans = [self._span(block, op) for op in users] or [(self.start[alloc], self.start[alloc])]
        freed = [self._span(block, op)[1] for op in deallocs] or [self.end[self.f]]
        return _Buffer(
            alloc,
            f"buffer at op #{self.start[alloc]} ({alloc.memref.type})",
            size,
            (min(s for s, _ in spans), max(e for _, e in spans)),
            (self.start[alloc], max(freed)),
            deallocs,
            escapes,
            _parallel_body(alloc),
        )

    def _span(self, block: Block, op: Operation) -> tuple[int, int]:
        ancestor = block.find_ancestor_op_in_block(op)
        assert ancestor is not None
        return self.start[ancestor], self.end[ancestor]


def _uses(root: SSAValue, fresh: frozenset[str] = frozenset()) -> tuple[list[Operation], list[Operation], bool]:
    """The users of buffer `root` and of its aliases, the deallocs of `root`, and
    whether it escapes (an alias may outlive those users). A call of a function
    in `fresh` (whose results are buffers of its own) is a user like any other."""
    users: list[Operation] = []
    deallocs: list[Operation] = []
    escapes = False
    work: list[SSAValue] = [root]
    while work:
        value = work.pop()
        for use in value.uses:
            op = use.operation
            if isinstance(op, memref.DeallocOp) and value is root:
                deallocs.append(op)
                continue
            users.append(op)
            if isinstance(op, _VIEWS) and use.index == 0:
                work.extend(op.results)
            elif isinstance(op, func.CallOp) and op.callee.root_reference.data in fresh:
                continue
            elif (
                (op.regions and not isinstance(op, GemmOp))  # a gemm's epilogue gets no operand
                or op.has_trait(IsTerminator)
                or isinstance(op, memref.DeallocOp)  # of an alias
                or any(isinstance(r.type, MemRefType) for r in op.results)
            ):
                escapes = True
    return users, deallocs, escapes


def _fresh_results(module: ModuleOp) -> frozenset[str]:
    """The functions whose every returned memref is a buffer they allocate (or
    get from a call of such a function), never an alias of an argument: what
    `bufferize` makes of every function, whose results are copies when not owned."""
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp) and not f.is_declaration}
    known: dict[str, bool] = {}

    def fresh(name: str) -> bool:
        if name not in known:
            known[name] = False  # a recursive call: not known to be fresh
            returns = [op for op in functions[name].walk() if isinstance(op, func.ReturnOp)]
            known[name] = all(
                not isinstance(v.type, MemRefType) or isinstance(v.owner, memref.AllocOp)
                or (isinstance(v.owner, func.CallOp) and v.owner.callee.root_reference.data in functions
                    and fresh(v.owner.callee.root_reference.data))
                for r in returns for v in r.arguments
            )
        return known[name]

    return frozenset(name for name in functions if fresh(name))


def free_call_results_early(f: func.FuncOp, fresh: frozenset[str]) -> None:
    """Move the dealloc of each buffer a call of a `fresh` function returns to just
    after its last use in the call's block (`bufferize` frees a scope's buffers at
    its end): a result read for the last time is given back before later calls
    allocate theirs, e.g. the activations a gradient's backward calls consume."""
    for call in [c for c in f.walk() if isinstance(c, func.CallOp) and c.callee.root_reference.data in fresh]:
        block = call.parent_block()
        assert block is not None
        for result in call.results:
            if not isinstance(result.type, MemRefType):
                continue
            users, deallocs, escapes = _uses(result, fresh)
            if escapes or len(deallocs) != 1 or deallocs[0].parent_block() is not block:
                continue
            ancestors = [block.find_ancestor_op_in_block(u) for u in users]
            if any(a is None for a in ancestors):
                continue
            last = max([call, *ancestors], key=block.get_operation_index)
            deallocs[0].detach()
            block.insert_op_after(deallocs[0], last)


def _parallel_body(op: Operation) -> Block | None:
    """The body of the innermost `scf.parallel` around `op`, if any."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, scf.ParallelOp):
        parent = parent.parent_op()
    return parent.body.block if parent is not None else None


def _reentered(module: ModuleOp) -> set[str]:
    """Functions that may run in two activations at once: recursive ones, and
    those called, directly or not, from inside an `scf.parallel`."""
    calls = [c for c in module.walk() if isinstance(c, func.CallOp)]
    callees: dict[str, set[str]] = {}
    for c in calls:
        f = c.parent_op()
        while not isinstance(f, func.FuncOp):
            assert f is not None
            f = f.parent_op()
        callees.setdefault(f.sym_name.data, set()).add(c.callee.root_reference.data)

    def reachable(names: Iterable[str]) -> set[str]:
        seen: set[str] = set()
        work = list(names)
        while work:
            if (name := work.pop()) not in seen:
                seen.add(name)
                work.extend(callees.get(name, ()))
        return seen

    found = {name for name in callees if name in reachable(callees[name])}
    return found | reachable(c.callee.root_reference.data for c in calls if _parallel_body(c) is not None)


# -- rewriting ------------------------------------------------------------


@dataclass(frozen=True)
class Stats:
    """Peak bytes of one function before and after planning (see module docstring)."""

    before: int
    arena: int
    stack: int
    heap: int
    dynamic: int

    @property
    def after(self) -> int:
        return self.arena + self.stack + self.heap

    def line(self, name: str) -> str:
        return (
            f"mem-plan: @{name} peak-before={self.before} peak-after={self.after} "
            f"arena={self.arena} stack={self.stack} heap={self.heap} dynamic={self.dynamic}"
        )


def _plan(name: str, buffers: list[_Buffer]) -> Plan:
    plan = pack(name, [Slot(b.name, *b.live, b.size) for b in buffers])
    verify_plan(plan)
    return plan


def _place(b: Builder, base: SSAValue, plan: Plan, buffers: list[_Buffer]) -> None:
    """Replace each buffer's uses by a view of `base` at its slot's offset."""
    offsets: dict[int, SSAValue] = {}
    for slot, buf in zip(plan.slots, buffers, strict=True):
        if slot.offset not in offsets:
            offsets[slot.offset] = b.insert(arith.ConstantOp(IntegerAttr(slot.offset, IndexType()))).result
        old = buf.alloc.memref
        view = b.insert(memref.ViewOp(base, offsets[slot.offset], [], old.type)).result
        view.name_hint = old.name_hint
        old.replace_all_uses_with(view)


def _arena(module: ModuleOp, f: func.FuncOp, size: int) -> memref.GetGlobalOp:
    """A new private, uninitialised `size`-byte global next to `f`, and its get_global."""
    taken = {o.sym_name.data for o in module.ops if isinstance(o, memref.GlobalOp | func.FuncOp)}
    name = base = f"__dfc_arena_{f.sym_name.data}"
    k = 0
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    t = MemRefType(i8, [size])
    module.body.block.insert_op_before(memref.GlobalOp.get(StringAttr(name), t, UnitAttr(), alignment=ALIGNMENT), f)
    return memref.GetGlobalOp(name, t)


def plan_function(module: ModuleOp, f: func.FuncOp, stack_limit: int, reentered: bool) -> Stats:
    """Plan the buffers of `f` in place; returns its statistics."""
    fn = _Function(f)
    allocs = [a for a in f.walk() if isinstance(a, memref.AllocOp)]
    static = [fn.buffer(a, size) for a in allocs if (size := _size(a.memref.type)) is not None]
    frames: dict[Block, list[_Buffer]] = {}  # stack buffers by the block that holds their frame
    arena: list[_Buffer] = []
    heap: list[_Buffer] = []
    for b in static:
        alignment = b.alloc.alignment.value.data if b.alloc.alignment is not None else 0
        on_stack = sum(x.size for xs in frames.values() for x in xs)
        if b.escapes or alignment > ALIGNMENT:
            heap.append(b)
        elif b.size <= stack_limit and on_stack + b.size <= STACK_BUDGET:
            frames.setdefault(b.parallel or f.body.block, []).append(b)
        elif b.parallel is not None or reentered:
            heap.append(b)
        else:
            arena.append(b)
    name = f.sym_name.data
    arena_plan = _plan(name, arena)
    while arena_plan.size > ARENA_BUDGET:  # the largest buffers stay on the heap
        heap.append(arena.pop(max(range(len(arena)), key=lambda k: arena[k].size)))
        arena_plan = _plan(name, arena)
    frame_plans = {block: _plan(name, bs) for block, bs in frames.items()}
    entry = Builder(InsertPoint.at_start(f.body.block))
    if arena:
        per_call = PER_CALL in f.attributes
        get = memref.AllocOp.get(i8, ALIGNMENT, [arena_plan.size]) if per_call else _arena(module, f, arena_plan.size)
        base = entry.insert(get).memref
        base.name_hint = "arena"
        _place(entry, base, arena_plan, arena)
        if per_call:
            for ret in [o for o in f.walk() if isinstance(o, func.ReturnOp)]:
                ret.parent_block().insert_op_before(memref.DeallocOp.get(base), ret)
    for block, plan in frame_plans.items():
        b = entry if block is f.body.block else Builder(InsertPoint.at_start(block))
        frame = b.insert(memref.AllocaOp.get(i8, ALIGNMENT, [plan.size])).memref
        frame.name_hint = "frame"
        _place(b, frame, plan, frames[block])
    for buf in arena + [b for bs in frames.values() for b in bs]:
        for op in (*buf.deallocs, buf.alloc):
            op.detach()
            op.erase()
    return Stats(
        before=peak((*b.held, b.size) for b in static),
        arena=arena_plan.size,
        stack=sum(p.size for p in frame_plans.values()),
        heap=peak((*b.held, b.size) for b in heap),
        dynamic=len(allocs) - len(static),
    )


@dataclass(frozen=True)
class MemPlanPass(ModulePass):
    """Plan each function's buffers into a static arena (see module docstring).

    Options: `stack_limit` (bytes; buffers up to this size go to a stack
    frame, 0: none), `print_stats` (peak bytes before and after, per function,
    to stderr).
    """

    name = "mem-plan"

    stack_limit: int = 4096
    print_stats: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        reentered = _reentered(op)
        fresh = _fresh_results(op)
        for f in [o for o in op.ops if isinstance(o, func.FuncOp) and not o.is_declaration]:
            free_call_results_early(f, fresh)
            stats = plan_function(op, f, self.stack_limit, f.sym_name.data in reentered)
            if self.print_stats:
                print(stats.line(f.sym_name.data), file=sys.stderr)
