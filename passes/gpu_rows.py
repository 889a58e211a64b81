"""Row reductions on the GPU: a block of threads per row, combined in shared memory.

`row_plan(op)` says whether a top-level map is a row reduction: it has
variables that none of its writes' indices depend on (the last ones: its
row), every write is a wcr write whose indices are affine in the others and
constants, one wcr kind per output, and it holds no nested map and reads no
output. Softmax's
maximum and sum, a sum, maximum or mean over the last axes, a loss's total
over every axis are such maps. `build_rows` builds their kernel in place of
one thread per iteration with an atomic each (a compare-and-swap loop per
warp for a float maximum; half a million atomics on one address for the
total of a 4096 x 4096 loss):

* Blocks: `RowPlan.threads` threads (`THREADS`, or fewer for a short static
  row: its length rounded up to a power of two, at least 32). Block `b`
  takes row `b // splits` (the leading variables, row-major) and part
  `b % splits` of it; `splits` > 1 blocks share a row when there are too few
  rows to fill the device (`TARGET_BLOCKS`), each thread still getting at
  least `PER_THREAD` elements. `row_grid` is the launch's block count.
* Loads: thread t of part p visits the row's positions p*T + t, p*T + t +
  splits*T, ... (the trailing variables flattened row-major, so
  consecutive threads read consecutive addresses), `UNROLL` of them per
  loop iteration (their loads issued together), and combines each write's
  value into a register of its own, in that order.
* Combining: each thread stores its registers into one shared-memory array
  per write (`memref.global`s of memory space 3, `row_buffers`); log2(T) - 1
  halving steps, a barrier after each, leave two values, which thread 0
  combines and writes: load, combine, store where no other block writes
  that element (one part per row, and for each row variable v a dimension
  of the index that is `a*v + c` in every write to that output), else a
  `memref.atomic_rmw`.

A float sum or product is associated as a tree per row rather than the
interpreter's sequence, so it agrees with it up to rounding (as the CPU
engine's chunked reductions do).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from xdsl.builder import Builder
from xdsl.dialects import arith, gpu, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, NoneAttr, StringAttr, UnitAttr, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from dfc.dialects import df
from dfc.dialects.index_exprs import IndexSymbols, depends_on
from dfc.passes.check_bounds import checked
from dfc.passes.gpu_gemm import SHARED
from dfc.passes.scf_builders import index_constant
from dfc.passes.wcr_arith import combine, identity

THREADS = 256
"""Threads per block (a power of two)."""
MIN_ROW = 32
"""A map whose rows have a static length below this keeps one thread per iteration."""
PER_THREAD = 8
"""The fewest elements per thread when several blocks share a row."""
UNROLL = 4
"""Positions per thread per loop iteration (independent loads in flight; those past the row's end are not combined)."""
TARGET_BLOCKS = 1024
"""Blocks that fill the device (an H200's 132 SMs hold 8 blocks of 256 threads each)."""

_X = gpu.DimensionAttr(gpu.DimensionEnum.X)
_INDEX_OPS = (arith.ConstantOp, arith.AddiOp, arith.SubiOp, arith.MuliOp)


@dataclass(frozen=True)
class RowPlan:
    """How a row reduction runs: `rows` leading variables name the row, the
    rest its elements; `threads` per block; `splits` blocks per row (None:
    computed at run time from dynamic sizes); `atomic`: whether blocks may
    write one output element."""

    rows: int
    threads: int
    splits: int | None
    atomic: bool


class RowKernel(Protocol):
    """What `build_rows` needs of the kernel being built (`gpu_lowering._MapKernel`)."""

    entry: Builder
    tid: SSAValue
    values: dict[SSAValue, SSAValue]
    accumulators: dict[df.WriteOp, SSAValue]

    def v(self, value: SSAValue) -> SSAValue: ...

    def bound(self, b: Builder, bound: int | SSAValue) -> SSAValue: ...

    def body(self, b: Builder, block: Block) -> None: ...

    def update(self, b: Builder, op: df.WriteOp, value: SSAValue, indices: Sequence[SSAValue]) -> None: ...


def row_plan(op: df.MapOp) -> RowPlan | None:
    """`op`'s plan if it is a row reduction (module docstring), else None."""
    ops = list(op.body.block.ops)
    writes = [w for w in ops if isinstance(w, df.WriteOp)]
    if not writes or any(w.wcr_kind is None for w in writes):
        return None
    if any(len({w.wcr_kind for w in writes if w.dest is dest}) > 1 for dest in op.out_args):
        return None  # two kinds into one output do not regroup
    if any(o.regions and not isinstance(o, df.TaskletOp) for o in ops):
        return None
    outputs = {*op.out_args, *op.outs}
    if any(isinstance(r, df.ReadOp) and r.source in outputs for r in ops):
        return None
    if not all(_hoistable(i, op) for w in writes for i in w.indices):
        return None
    used = set().union(*(depends_on(i, op.ivs) for w in writes for i in w.indices))
    rows = op.rank
    while rows > 0 and op.ivs[rows - 1] not in used:
        rows -= 1
    if rows == op.rank:
        return None
    extents = op.static_extents
    length = None if None in extents[rows:] else math.prod(extents[rows:])  # type: ignore[arg-type]
    if length is not None and length < MIN_ROW:
        return None
    threads = THREADS if length is None else min(THREADS, 1 << (length - 1).bit_length())
    count = None if None in extents[:rows] else math.prod(extents[:rows])  # type: ignore[arg-type]
    splits = None
    if length is not None:
        splits = -(-length // (threads * PER_THREAD))
        if count is not None or splits == 1:
            splits = max(1, min(splits, -(-TARGET_BLOCKS // max(count or 1, 1))))
        else:
            splits = None
    atomic = splits != 1 or len(set(op.outs)) < len(op.outs) or not _disjoint(writes, op.ivs[:rows])
    return RowPlan(rows, threads, splits, atomic)


def _hoistable(value: SSAValue, op: df.MapOp) -> bool:
    """Whether `value` is computable outside op's body: a value from outside,
    a map variable, or constants and +, -, * of such values in the body."""
    owner = value.owner
    if not isinstance(owner, Operation) or owner.parent_op() is not op:
        return True
    return isinstance(owner, _INDEX_OPS) and all(_hoistable(o, op) for o in owner.operands)


def _disjoint(writes: Sequence[df.WriteOp], row_vars: Sequence[SSAValue]) -> bool:
    """Whether two rows never write one element: for each output and each row
    variable v, one dimension of the index is the same `a*v + c` (a != 0) in
    every write to that output."""
    import sympy  # on first use: its import is slow

    symbols = IndexSymbols()
    for dest in {w.dest for w in writes}:
        ws = [w for w in writes if w.dest is dest]
        for var in row_vars:
            x = symbols.symbol(var)
            found = False
            for d in range(len(ws[0].indices)):
                exprs = {sympy.expand(symbols.to_sympy(w.indices[d])) for w in ws}
                if len(exprs) == 1:
                    (e,) = exprs
                    found |= e.free_symbols == {x} and e.is_polynomial(x) and sympy.degree(e, x) == 1
            if not found:
                return False
    return True


def _product(b: Builder, values: Sequence[SSAValue]) -> SSAValue:
    total = index_constant(b, 1)
    for x in values:
        total = b.insert(arith.MuliOp(total, x)).result
    return total


def _ceil_div(b: Builder, x: SSAValue, d: SSAValue | int) -> SSAValue:
    d = index_constant(b, d) if isinstance(d, int) else d
    one = index_constant(b, 1)
    return b.insert(arith.DivUIOp(b.insert(arith.AddiOp(x, b.insert(arith.SubiOp(d, one)).result)).result, d)).result


def _splits(b: Builder, plan: RowPlan, count: SSAValue, length: SSAValue) -> SSAValue:
    """Blocks per row: `plan.splits`, or (dynamic sizes) its formula in `row_plan`
    computed at `b` (the host and the kernel compute it alike)."""
    if plan.splits is not None:
        return index_constant(b, plan.splits)
    one = index_constant(b, 1)
    rows = b.insert(arith.MaxUIOp(count, one)).result
    parts = b.insert(arith.MinUIOp(_ceil_div(b, length, plan.threads * PER_THREAD),
                                   _ceil_div(b, index_constant(b, TARGET_BLOCKS), rows))).result  # fmt: skip
    return b.insert(arith.MaxUIOp(parts, one)).result


def row_grid(op: df.MapOp, plan: RowPlan, b: Builder) -> SSAValue:
    """The number of blocks of `op`'s row kernel, computed at `b` (host code)."""
    bounds = [index_constant(b, x) if isinstance(x, int) else x for x in op.bounds]
    count = _product(b, bounds[: plan.rows])
    return b.insert(arith.MuliOp(count, _splits(b, plan, count, _product(b, bounds[plan.rows :])))).result


def row_buffers(name: str, op: df.MapOp, plan: RowPlan) -> list[memref.GlobalOp]:
    """The shared arrays of kernel `name`, one per write of `op`, for the kernel module."""
    return [memref.GlobalOp.get(StringAttr(f"{name}_row{k}"), _shared_type(w, plan), UnitAttr(),
                                alignment=IntegerAttr(16, i64))
            for k, w in enumerate(_writes(op))]  # fmt: skip


def _writes(op: df.MapOp) -> list[df.WriteOp]:
    return [w for w in op.body.block.ops if isinstance(w, df.WriteOp)]


def _shared_type(w: df.WriteOp, plan: RowPlan) -> MemRefType:
    return MemRefType(w.value.type, [plan.threads], NoneAttr(), SHARED)


def _unflatten(b: Builder, kernel: RowKernel, flat: SSAValue, ivs: Sequence[SSAValue],
               bounds: Sequence[SSAValue], extents: Sequence[int | None]) -> None:  # fmt: skip
    """Bind `ivs` to the row-major position `flat` (< the product of `bounds`)."""
    for k in reversed(range(len(ivs))):
        if extents[k] == 1:
            kernel.values[ivs[k]] = index_constant(b, 0)
        elif k == 0:
            kernel.values[ivs[k]] = flat
        else:
            kernel.values[ivs[k]] = b.insert(arith.RemUIOp(flat, bounds[k])).result
            flat = b.insert(arith.DivUIOp(flat, bounds[k])).result


def build_rows(op: df.MapOp, plan: RowPlan, kernel: RowKernel, name: str) -> None:
    """Build `op`'s row kernel body at `kernel.entry` (up to, not including, its return)."""
    b = kernel.entry
    r, t = plan.rows, plan.threads
    bounds = [kernel.bound(b, x) for x in op.bounds]
    extents = op.static_extents
    count, length = _product(b, bounds[:r]), _product(b, bounds[r:])
    splits = _splits(b, plan, count, length)
    bid = b.insert(gpu.BlockIdOp(_X)).result
    row, part = b.insert(arith.DivUIOp(bid, splits)).result, b.insert(arith.RemUIOp(bid, splits)).result
    _unflatten(b, kernel, row, op.ivs[:r], bounds[:r], extents[:r])
    threads = index_constant(b, t)
    start = b.insert(arith.AddiOp(b.insert(arith.MuliOp(part, threads)).result, kernel.tid)).result
    step = b.insert(arith.MuliOp(splits, threads)).result
    writes = _writes(op)
    inits = [identity(b, w.wcr_kind, w.value.type) for w in writes]  # type: ignore[arg-type]
    body = Block(arg_types=[IndexType()] + [x.type for x in inits])
    stride = b.insert(arith.MuliOp(step, index_constant(b, UNROLL))).result
    loop = b.insert(scf.ForOp(start, length, stride, inits, Region(body)))
    lb = Builder(InsertPoint.at_end(body))
    kernel.accumulators.update(zip(writes, body.args[1:]))
    first = body.args[0]
    for u in range(UNROLL):  # position first + u*step, or (past the row's end) first again, not combined
        position = first
        if u:
            offset = lb.insert(arith.MuliOp(step, index_constant(lb, u))).result
            position = lb.insert(arith.AddiOp(first, offset)).result
            kernel.valid = lb.insert(arith.CmpiOp(position, length, "ult")).result
            position = lb.insert(arith.SelectOp(kernel.valid, position, first)).result
        _unflatten(lb, kernel, position, op.ivs[r:], bounds[r:], extents[r:])
        kernel.body(lb, op.body.block)
    kernel.valid = None
    lb.insert(scf.YieldOp(*[kernel.accumulators.pop(w) for w in writes]))

    shared = [b.insert(memref.GetGlobalOp(f"{name}_row{k}", _shared_type(w, plan))).memref
              for k, w in enumerate(writes)]  # fmt: skip
    for total, mem in zip(loop.results, shared):
        b.insert(memref.StoreOp.get(total, mem, [kernel.tid]))
    b.insert(gpu.BarrierOp())
    half = t // 2
    while half > 1:
        tb = _if(b, b.insert(arith.CmpiOp(kernel.tid, index_constant(b, half), "ult")).result)
        other = tb.insert(arith.AddiOp(kernel.tid, index_constant(tb, half))).result
        for w, mem in zip(writes, shared):
            pair = [tb.insert(memref.LoadOp.get(mem, [i])).res for i in (kernel.tid, other)]
            tb.insert(memref.StoreOp.get(combine(tb, w.wcr_kind, *pair), mem, [kernel.tid]))  # type: ignore[arg-type]
        tb.insert(scf.YieldOp())
        b.insert(gpu.BarrierOp())
        half //= 2
    tb = _if(b, b.insert(arith.CmpiOp(kernel.tid, index_constant(b, 0), "eq")).result)
    for w, mem in zip(writes, shared):
        pair = [tb.insert(memref.LoadOp.get(mem, [index_constant(tb, i)])).res for i in (0, 1)]
        total = combine(tb, w.wcr_kind, *pair)  # type: ignore[arg-type]
        hoisted: dict[SSAValue, SSAValue] = {}
        indices = [_hoist(tb, kernel, i, op, hoisted) for i in w.indices]
        if plan.atomic:
            kernel.update(tb, w, total, indices)
        else:
            dest = kernel.v(w.dest)
            old = tb.insert(checked(w, memref.LoadOp.get(dest, indices))).res
            tb.insert(checked(w, memref.StoreOp.get(combine(tb, w.wcr_kind, old, total), dest, indices)))  # type: ignore[arg-type]
    tb.insert(scf.YieldOp())


def _if(b: Builder, cond: SSAValue) -> Builder:
    """A builder in the region of a new `scf.if cond` (its yield not yet built)."""
    then = Block()
    b.insert(scf.IfOp(cond, [], Region(then)))
    return Builder(InsertPoint.at_end(then))


def _hoist(b: Builder, kernel: RowKernel, value: SSAValue, op: df.MapOp, done: dict[SSAValue, SSAValue]) -> SSAValue:
    """The kernel value of a write index outside the row loop (`_hoistable`):
    the body's index arithmetic cloned at `b`."""
    owner = value.owner
    if not isinstance(owner, Operation) or owner.parent_op() is not op:
        return kernel.v(value)
    if value not in done:
        clone = b.insert(owner.clone(value_mapper={o: _hoist(b, kernel, o, op, done) for o in owner.operands}))
        done[value] = clone.results[0]
    return done[value]
