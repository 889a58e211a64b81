"""`reuse-sibling-loops`: a value later loops recompute from an earlier one over the same range is kept in a buffer.

After `lower-dataflow`, a row computation fused by `fuse` and `fuse-outer` is
a sequence of sibling `scf.for` loops over a row, and `fuse` duplicated each
shared producer into its consumers: softmax's `exp(x - max)` is computed by
the loop summing the row and again by the loop normalising it, and its
gradient computes it four times. An exponential costs more than a load from
cache, so this pass stores the value in a buffer of one row (a stack
`memref.alloca`, per thread in a parallel body) in the first loop and loads it
in the later ones.

Loops `A` before `B` in one block, both `scf.for 0 to N step 1` with the same
constant `N` (a buffer of at most 64 KiB), share op `b` of `B`'s body when an
op `a` of `A`'s body computes the same expression: both at the top level of
their bodies (run in every iteration), the same op names, properties and
attributes, operands pairwise the same (a value defined outside both loops,
the loops' own induction variables, or ops matching in turn), loads and pure
arith/math ops only. The expression must yield a float and hold an expensive
op (a `math` function other than abs/copysign/fma, a division or remainder).
No op in `A`, between `A` and `B`, or in `B` may write memory a load of the
expression reads: distinct allocations, distinct function arguments (the
engine's calling convention makes them disjoint) and distinct globals do not
alias; any other op with effects (a call, a BLAS call, a copy) stops the pass
at that pair. `b` then becomes a load of the buffer, `a` stores into it, and
the ops only `b` used go. The GPU pipeline does not run this pass.

On the softmax_loss example (benchmarks/roofline.py), the forward's two
exponentials per element become one and the gradient's four become one
(docs/performance-notes.md has the timings).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, memref, scf
from xdsl.dialects.builtin import AnyFloat, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from dfc.dialects.dominance import defined_inside
from dfc.dialects.index_exprs import int_constant

BUFFER_LIMIT = 64 * 1024
"""Bytes of one buffer at most (it lives on the stack of each thread)."""

_CHEAP_MATH = frozenset({"math.absf", "math.copysign", "math.fma"})
_VIEWS = frozenset({"memref.view", "memref.subview", "memref.reinterpret_cast", "memref.cast",
                    "memref.expand_shape", "memref.collapse_shape"})
_READ_ONLY = frozenset({"memref.load", "memref.alloc", "memref.alloca", "memref.get_global", "memref.dim",
                        *_VIEWS, "scf.for", "scf.if", "scf.yield", "scf.while", "scf.condition"})


@dataclass
class _Loop:
    op: scf.ForOp
    extent: int

    @property
    def iv(self) -> BlockArgument:
        return self.op.body.block.args[0]

    @property
    def block(self) -> Block:
        return self.op.body.block


def _unit_loop(op: Operation) -> _Loop | None:
    """`op` as a loop `0 to N step 1` with constant N."""
    if not isinstance(op, scf.ForOp) or int_constant(op.lb) != 0 or int_constant(op.step) != 1:
        return None
    extent = int_constant(op.ub)
    return None if extent is None or extent <= 0 else _Loop(op, extent)


def _expression_op(op: Operation) -> bool:
    return not op.regions and (op.name == "memref.load" or op.dialect_name() in ("arith", "math"))


def _same(a: SSAValue, b: SSAValue, first: _Loop, second: _Loop) -> bool:
    """Whether `a` (in or before `first`) and `b` (in or before `second`) hold the same value in
    iterations of equal index."""
    if a is first.iv and b is second.iv:
        return True
    oa, ob = a.owner, b.owner
    in_a = isinstance(oa, Operation) and oa.parent_block() is first.block
    in_b = isinstance(ob, Operation) and ob.parent_block() is second.block
    if not in_a and not in_b:
        return a is b and not defined_inside(a, first.op) and not defined_inside(b, second.op)
    if not (in_a and in_b) or oa.name != ob.name or not _expression_op(oa):
        return False
    if a.index != b.index or oa.properties != ob.properties or oa.attributes != ob.attributes:
        return False
    if len(oa.operands) != len(ob.operands):
        return False
    return all(_same(x, y, first, second) for x, y in zip(oa.operands, ob.operands))


def _tree(op: Operation, loop: _Loop) -> list[Operation]:
    """`op` and the ops of `loop`'s body it depends on (at its top level)."""
    seen: dict[Operation, None] = {}
    stack = [op]
    while stack:
        o = stack.pop()
        if o in seen:
            continue
        seen[o] = None
        stack.extend(v.owner for v in o.operands if isinstance(v.owner, Operation) and v.owner.parent_block() is loop.block)
    return list(seen)


def _expensive_op(o: Operation) -> bool:
    return (o.dialect_name() == "math" and o.name not in _CHEAP_MATH) or o.name in ("arith.divf", "arith.remf")


def _expensive(tree: Iterable[Operation]) -> bool:
    return any(map(_expensive_op, tree))


def _root(value: SSAValue) -> SSAValue:
    while isinstance(value.owner, Operation) and value.owner.name in _VIEWS:
        value = value.owner.operands[0]
    return value


def _may_alias(a: SSAValue, b: SSAValue) -> bool:
    ra, rb = _root(a), _root(b)
    if ra is rb:
        return True

    def kind(r: SSAValue) -> tuple[str, str] | None:
        if isinstance(r, BlockArgument) and isinstance(r.owner.parent_op(), func.FuncOp):
            return ("argument", str(id(r)))
        if isinstance(r.owner, Operation) and r.owner.name in ("memref.alloc", "memref.alloca"):
            return ("allocation", str(id(r)))
        if isinstance(r.owner, Operation) and r.owner.name == "memref.get_global":
            return ("global", r.owner.properties["name"].root_reference.data)
        return None

    ka, kb = kind(ra), kind(rb)
    return ka is None or kb is None or ka == kb


def _unwritten(buffers: list[SSAValue], ops: list[Operation]) -> bool:
    """No op among `ops` (nested ones included) may write any of `buffers`."""
    for top in ops:
        for op in top.walk():
            if op.name in ("memref.store", "memref.dealloc"):
                target = op.operands[1] if op.name == "memref.store" else op.operands[0]
                if any(_may_alias(target, b) for b in buffers):
                    return False
            elif op.name not in _READ_ONLY and op.dialect_name() not in ("arith", "math"):
                return False
    return True


def _between(first: Operation, second: Operation) -> list[Operation]:
    ops, op = [], first
    while op is not None:
        ops.append(op)
        if op is second:
            return ops
        op = op.next_op
    raise AssertionError("the second loop follows the first in its block")


class _Reuse:
    def __init__(self) -> None:
        self.buffers: dict[Operation, SSAValue] = {}
        """Per op of an earlier loop: the buffer it stores into."""

    def buffer(self, op: Operation, loop: _Loop) -> SSAValue:
        if op not in self.buffers:
            alloca = memref.AllocaOp.get(op.results[0].type, alignment=64, shape=[loop.extent])
            Rewriter.insert_op(alloca, InsertPoint.before(loop.op))
            Rewriter.insert_op(memref.StoreOp.get(op.results[0], alloca.memref, [loop.iv]), InsertPoint.after(op))
            self.buffers[op] = alloca.memref
        return self.buffers[op]

    def pair(self, first: _Loop, second: _Loop) -> None:
        """Reuse in `second` what `first` computes."""
        if not _expensive(second.block.ops):  # no tree in `second` is worth a buffer
            return
        zone: list[Operation] | None = None
        candidates = [o for o in first.block.ops if len(o.results) == 1 and _expression_op(o)]
        names = {a.name for a in candidates}
        for b in reversed(list(second.block.ops)):
            if b.name not in names or len(b.results) != 1 or not _expression_op(b):
                continue
            if not isinstance(b.results[0].type, AnyFloat):
                continue
            if b.results[0].type.bitwidth * first.extent > 8 * BUFFER_LIMIT:
                continue
            tree = _tree(b, second)
            if not _expensive(tree):
                continue
            a = next((a for a in candidates if a.name == b.name and _same(a.results[0], b.results[0], first, second)), None)
            if a is None:
                continue
            zone = zone or _between(first.op, second.op)
            if not _unwritten([o.operands[0] for o in tree if o.name == "memref.load"], zone):
                continue
            load = memref.LoadOp.get(self.buffer(a, first), [second.iv])
            Rewriter.insert_op(load, InsertPoint.before(b))
            b.results[0].replace_all_uses_with(load.res)
            left = tree
            while dead := [o for o in left if not any(r.uses for r in o.results)]:
                for o in dead:
                    Rewriter.erase_op(o)
                left = [o for o in left if o not in dead]


class ReuseSiblingLoopsPass(ModulePass):
    """Keep values that later sibling loops recompute in a one-row buffer."""

    name = "reuse-sibling-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        reuse = _Reuse()
        blocks = [b for o in op.walk() for r in o.regions for b in r.blocks]
        for block in blocks:
            loops = [loop for o in block.ops if (loop := _unit_loop(o)) is not None]
            for j, second in enumerate(loops):
                for first in loops[:j]:
                    if first.extent == second.extent:
                        reuse.pair(first, second)
