"""The memory a call holds at once, read off a lowered module (after `mem-plan`).

`resident_bytes(module, entry)`: the arenas of the functions the call reaches
(each a global, all held at once), the stack frames of the functions active
at once (a frame inside an `scf.parallel` body once per thread), and the peak of the heap buffers along the calls: a heap buffer is
held from its `memref.alloc` (or the call returning it) to its dealloc, and a
callee's own peak (its stack frame included) counts during its call. Each
buffer is rounded up to 64 bytes, as mem-plan places them. mem-plan's own
per-function peak (`print-stats`) leaves out what callees hold and return,
which a gradient calling `@f_grad` or a checkpoint's `@segment_grad` needs
counted. A recursive call adds nothing more. A dynamically shaped buffer has
no size before the call runs (a replayed `while` loop's tape has a row per
trip) unless its sizes are bounded (`minui` with a constant: the tape of a
replayed `while` under a budget, at most the rows the budget holds), counted
at the bound: `dynamic_buffers` lists the others the call may allocate, which
`resident_bytes` cannot count.

This is the bound `dfc.grad(..., memory_budget=B)` holds (dfc/memory_budget.py).
"""

from __future__ import annotations

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Operation, SSAValue

ALIGNMENT = 64


def buffer_bytes(t) -> int:
    """Bytes of a static memref type, rounded up to 64 (0 for any other type)."""
    if not isinstance(t, MemRefType) or not t.has_static_shape():
        return 0
    n = max(1, t.element_type.bitwidth // 8)
    for d in t.get_shape():
        n *= d
    return -(-n // ALIGNMENT) * ALIGNMENT


def bounded_bytes(op: memref.AllocOp | memref.AllocaOp) -> int | None:
    """Bytes of the buffer `op` allocates, rounded up to 64, its dynamic sizes taken at their bounds: a
    constant, `arith.minui` of anything and a bound (the tape of a loop whose trip count is known only
    at run time, under a budget), a dimension of such a buffer (its copy); None when a size has none."""
    t = op.memref.type
    sizes = iter(op.dynamic_sizes)
    n = max(1, t.element_type.bitwidth // 8) if hasattr(t.element_type, "bitwidth") else 8
    for d in t.get_shape():
        if d < 0:
            d = _bound(next(sizes))
            if d is None:
                return None
        n *= d
    return -(-n // ALIGNMENT) * ALIGNMENT


def _bound(v: SSAValue) -> int | None:
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    if isinstance(owner, arith.MinUIOp):
        bounds = [b for b in (_bound(owner.lhs), _bound(owner.rhs)) if b is not None]
        return min(bounds, default=None)
    if isinstance(owner, memref.DimOp) and isinstance(owner.source.owner, memref.AllocOp):  # a copy's size
        index, alloc = _bound(owner.index), owner.source.owner
        shape = alloc.memref.type.get_shape()
        if index is None or not 0 <= index < len(shape):
            return None
        if shape[index] >= 0:
            return shape[index]
        return _bound(alloc.dynamic_sizes[sum(d < 0 for d in shape[:index])])
    return None


def resident_bytes(module: ModuleOp, entry: str, threads: int = 1) -> int:
    """The most memory a call of `entry` holds at once in the lowered `module`,
    run on `threads` threads (see the module docstring)."""
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration}
    arenas = {op.sym_name.data: buffer_bytes(op.type) for op in module.ops if isinstance(op, memref.GlobalOp)}
    peaks: dict[str, int] = {}

    def peak(name: str) -> int:
        if name not in peaks:
            peaks[name] = 0  # a recursive call adds nothing more
            ops = list(functions[name].walk())
            order = {op: k for k, op in enumerate(ops)}
            held: list[tuple[int, int, int]] = []  # (first point, last point, bytes)
            during: dict[int, int] = {}  # a callee's peak, at its call
            frame = 0
            for op in ops:
                if isinstance(op, memref.AllocOp | func.CallOp):
                    start = order[op] + isinstance(op, func.CallOp)  # a call's results exist after it
                    for r in op.results:
                        frees = [order[u.operation] for u in r.uses if isinstance(u.operation, memref.DeallocOp)]
                        size = bounded_bytes(op) if isinstance(op, memref.AllocOp) else buffer_bytes(r.type)
                        held.append((start, max(frees, default=len(ops)), size or 0))
                if isinstance(op, func.CallOp) and op.callee.root_reference.data in functions:
                    during[order[op]] = peak(op.callee.root_reference.data)
                if isinstance(op, memref.AllocaOp):
                    parallel = any(isinstance(p, scf.ParallelOp) for p in _ancestors(op))
                    frame += buffer_bytes(op.memref.type) * (threads if parallel else 1)
            points = {s for s, _, _ in held} | set(during)
            heap = max((sum(z for s, e, z in held if s <= p <= e) + during.get(p, 0) for p in points), default=0)
            peaks[name] = frame + heap
        return peaks[name]

    top = peak(entry)
    return top + sum(arenas.get(f"__dfc_arena_{n}", 0) for n in peaks)


def dynamic_buffers(module: ModuleOp, entry: str) -> list[memref.AllocOp | memref.AllocaOp]:
    """The allocations of a run-time size in the functions a call of `entry` reaches in the lowered `module`."""
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration}
    reached, todo, found = {entry}, [entry], []
    while todo:
        for op in functions[todo.pop()].walk():
            if isinstance(op, memref.AllocOp | memref.AllocaOp) and bounded_bytes(op) is None:
                found.append(op)
            if isinstance(op, func.CallOp) and (callee := op.callee.root_reference.data) in functions:
                if callee not in reached:
                    reached.add(callee)
                    todo.append(callee)
    return found


def _ancestors(op: Operation):
    parent = op.parent_op()
    while parent is not None:
        yield parent
        parent = parent.parent_op()
