"""`fuse-outer`: consecutive buffer maps over one outer dimension become one map.

After `bufferize`, a row-wise computation (softmax, log_softmax, layer norm, a
loss) is a sequence of maps over the same rows: a row maximum, a row sum of
exponentials, a normalised product. Each map streams the whole input through
memory. This pass makes such a sequence one map over the shared first
dimension whose body runs the maps in order on one row, each as an inner map
over its remaining dimensions (a map of rank 1 is inlined), so a row is read
from memory once and stays in cache for the following maps; `lower-dataflow`
then runs the rows in parallel.

Maps `A` before `B` in one block, both in buffer form, of rank at least 1 and
with equal first bounds (the same constant or the same SSA value) fuse when
every buffer both touch and at least one writes is accessed, in both, only
at first index equal to the map's own first variable: then iteration `i` of
`B` depends only on iteration `i` of `A`, which the fused map runs first.
Every buffer a fused map writes must be a `memref.alloc` of the function
(never an argument or a view, which might alias another buffer), every buffer
it reads an allocation, a function argument or a `memref.get_global`, and
its body holds only df, arith, math and scf ops. An op between two fusing
maps moves before the first of them when it depends on none of them: an
allocation or a side-effect-free op, or a map that touches no buffer the
group writes and writes no buffer the group touches. A `memref.copy`
between buffers of one static shape (bufferize copies a shared zero fill into
each accumulator) joins a group as the map that copies element by element,
and stays a copy otherwise. The GPU pipeline does not run this pass (its
kernels take one thread per element).

The softmax_loss example's value-and-gradient becomes one map over the rows
with six inner maps (three groups without the copies)
(docs/performance-notes.md has the timing).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free

from dfc.dialects import df

_BODY_DIALECTS = frozenset({"df", "arith", "math", "scf"})


def buffer_of(value: SSAValue) -> SSAValue:
    """The buffer behind `value`: an output argument of a map stands for its `outs` operand."""
    while isinstance(value, BlockArgument) and isinstance(m := value.owner.parent_op(), df.MapOp):
        outs = m.out_args
        if value not in outs:
            break
        value = m.outs[outs.index(value)]
    return value


@dataclass
class _Accesses:
    """The buffers a map reads and writes, and whether each is only accessed
    at first index equal to the map's first variable ("row-local")."""

    reads: set[SSAValue] = field(default_factory=set)
    writes: set[SSAValue] = field(default_factory=set)
    scattered: set[SSAValue] = field(default_factory=set)
    """Buffers with an access that is not row-local."""

    def touched(self) -> set[SSAValue]:
        return self.reads | self.writes

    def merge(self, other: _Accesses) -> None:
        self.reads |= other.reads
        self.writes |= other.writes
        self.scattered |= other.scattered


def _accesses(op: df.MapOp) -> _Accesses | None:
    """What `op` touches, or None when its body holds an op this pass does not reason about."""
    found = _Accesses()
    row = op.ivs[0] if op.rank else None
    for inner in op.body.walk():
        if inner.dialect_name() not in _BODY_DIALECTS:
            return None
        if isinstance(inner, df.ReadOp | df.WriteOp):
            buffer = buffer_of(inner.source if isinstance(inner, df.ReadOp) else inner.dest)
            (found.reads if isinstance(inner, df.ReadOp) else found.writes).add(buffer)
            if row is None or not inner.indices or inner.indices[0] is not row:
                found.scattered.add(buffer)
    return found


def _function_argument(value: SSAValue) -> bool:
    return isinstance(value, BlockArgument) and isinstance(value.owner.parent_op(), func.FuncOp)


def _candidate(op: Operation) -> _Accesses | None:
    """The accesses of a map this pass may fuse, or None."""
    if not isinstance(op, df.MapOp) or not op.is_buffer_form or op.rank == 0:
        return None
    found = _accesses(op)
    if found is None:
        return None
    if not all(isinstance(b.owner, memref.AllocOp) for b in found.writes):
        return None
    if not all(isinstance(b.owner, memref.AllocOp | memref.GetGlobalOp) or _function_argument(b) for b in found.reads):
        return None
    return found


def _conflicts(group: _Accesses, other: _Accesses) -> set[SSAValue]:
    """Buffers both touch and at least one writes."""
    shared = group.touched() & other.touched()
    return {b for b in shared if b in group.writes or b in other.writes}


def _same_bound(a: df.MapOp, b: df.MapOp) -> bool:
    x, y = a.bounds[0], b.bounds[0]
    return x == y if isinstance(x, int) and isinstance(y, int) else x is y


class _Group:
    """Maps being fused, and the ops between them that move before the first."""

    def __init__(self, first: df.MapOp, accesses: _Accesses):
        self.maps = [first]
        self.accesses = accesses
        self.moved: list[Operation] = []

    def admit(self, op: df.MapOp, accesses: _Accesses) -> bool:
        if not _same_bound(self.maps[0], op):
            return False
        for buffer in _conflicts(self.accesses, accesses):
            if buffer in self.accesses.scattered or buffer in accesses.scattered:
                return False
        self.maps.append(op)
        self.accesses.merge(accesses)
        return True

    def move(self, op: Operation) -> bool:
        """Whether `op` may run before the first map; records it when so. (The
        values it uses are defined before it: by ops before the first map, or by
        ops that move too, since the group ends at the first op that cannot.)"""
        if isinstance(op, df.MapOp):
            found = _accesses(op)
            if found is None or _conflicts(self.accesses, found):
                return False
        elif op.regions or not (isinstance(op, memref.AllocOp) or is_side_effect_free(op)):
            return False
        self.moved.append(op)
        return True


def _copy_as_map(op: Operation) -> df.MapOp | None:
    """A `memref.copy` between buffers of one static shape of rank >= 1 as
    the (detached) map that copies element by element, so that it can join a
    group; None for other copies and other ops."""
    if not isinstance(op, memref.CopyOp):
        return None
    source, target = op.source, op.destination
    shape = source.type.get_shape()
    if source.type != target.type or not shape or any(d < 0 for d in shape):
        return None
    copy = df.MapOp(list(shape), [target])
    body = Builder(InsertPoint.at_end(copy.body.block))
    value = body.insert(df.ReadOp(source, copy.ivs)).res
    body.insert(df.WriteOp(value, copy.out_args[0], copy.ivs))
    return copy


def _groups(block: Block) -> Iterator[_Group]:
    ops = list(block.ops)
    maps = {op: m for op in ops if (m := _copy_as_map(op)) is not None}
    """Copies as maps: they join a group as such, and are left as copies otherwise."""
    k = 0
    while k < len(ops):
        found = _candidate(maps.get(ops[k], ops[k]))
        if found is None:
            k += 1
            continue
        group = _Group(maps.get(ops[k], ops[k]), found)  # type: ignore[arg-type]
        last, kept = k, 0
        for j in range(k + 1, len(ops)):
            op = ops[j]
            accesses = _candidate(maps.get(op, op))
            if accesses is not None and group.admit(maps.get(op, op), accesses):  # type: ignore[arg-type]
                last, kept = j, len(group.moved)
            elif not group.move(op):
                break
        group.moved = group.moved[:kept]  # ops after the last map stay where they are
        if len(group.maps) > 1:
            for copy in ops[k : last + 1]:
                if copy in maps and maps[copy] in group.maps:
                    Rewriter.insert_op(maps.pop(copy), InsertPoint.before(copy))
                    copy.detach()
                    copy.erase()
            yield group
        k = last + 1
    for unused in maps.values():
        unused.erase()


def _fuse(group: _Group) -> None:
    first = group.maps[0]
    for op in group.moved:
        op.detach()
        Rewriter.insert_op(op, InsertPoint.before(first))
    outs: list[SSAValue] = []
    for m in group.maps:
        outs += [o for o in m.outs if o not in outs]
    fused = df.MapOp([first.bounds[0]], outs)
    row = fused.ivs[0]
    out_arg = dict(zip(outs, fused.out_args))
    body = fused.body.block
    for m in group.maps:
        mapping: dict[SSAValue, SSAValue] = {m.ivs[0]: row}
        if m.rank == 1:
            into = body
            mapping.update((a, out_arg[o]) for a, o in zip(m.out_args, m.outs))
        else:
            inner = df.MapOp(m.bounds[1:], [out_arg[o] for o in m.outs])
            body.add_op(inner)
            into = inner.body.block
            mapping.update(zip(m.ivs[1:], inner.ivs))
            mapping.update(zip(m.out_args, inner.out_args))
        for op in m.body.block.ops:
            into.add_op(op.clone(value_mapper=mapping))
    Rewriter.insert_op(fused, InsertPoint.before(first))
    for m in group.maps:
        m.detach()
        m.erase()


def _blocks(module: ModuleOp) -> Iterator[Block]:
    """Blocks outside every map (function bodies and the regions of scf ops in them)."""
    for op in module.walk():
        if isinstance(op, df.MapOp) or df.enclosing_maps(op):
            continue
        for region in op.regions:
            yield from region.blocks


@dataclass(frozen=True)
class FuseOuterPass(ModulePass):
    """Fuse consecutive buffer maps over one first dimension (see the module docstring)."""

    name = "fuse-outer"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for block in list(_blocks(op)):
            for group in list(_groups(block)):
                _fuse(group)
