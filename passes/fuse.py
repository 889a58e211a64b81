"""`fuse`: producer-consumer and sibling map fusion, and tasklet merging.

Tensor-level df maps (before `bufferize`) are fused when provably legal:

- *Producer-consumer*: map P writes output k at exactly its map variables
  (one plain write covering every element) and a later map C over the same
  iteration space reads that result only at its own map variables. C's body
  then computes the value itself (the slice of P's body it depends on); P
  disappears once nothing reads it, so an intermediate read by two consumers
  is recomputed in both rather than stored, unless the slice has more than
  `RECOMPUTE_MAX_OPS` ops (then the first consumers read it from memory and
  only the last one recomputes it). This also fuses an elementwise map
  into a following reduction (softmax's exp and sum), since C may write with wcr.
  Not when C tests the value for float equality or reduces it with
  wcr(max|min) while P stays for another reader: a recomputation need not be
  bit-equal to the stored value (fast-math), and max/min gradients find the
  extremum by equality, so every reader must see the same stored bits.
- *Siblings*: maps over the same space, reading a common input and
  independent of each other, become one map with both sets of outputs (the
  ops between them must not use the first's results; the merged map takes
  the second's place).
- *Tasklets*: a tasklet whose results feed another tasklet in the same body
  is merged into it, so SymPy and LLVM see one expression.

Index equality is decided by the symbolic index analysis (`dialects.index_exprs`);
anything not proven legal is left alone.

Fusion works on maps, so library ops are expanded first (as `expand-library`
does; `fuse{expand=false}` leaves them alone): `--autodiff --fuse` on
library-level IR prints the fused maps.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from dfc.dialects import df
from dfc.dialects.dominance import comes_before
from dfc.dialects.index_exprs import differ_somewhere, provably_equal
from dfc.passes.expand_library import ExpandLibraryPass


def _same_space(a: df.MapOp, b: df.MapOp) -> bool:
    """Whether maps `a` and `b` have the same bounds (static ones equal, dynamic ones the same values)."""
    return a.static_bounds == b.static_bounds and all(x is y for x, y in zip(a.dyn_bounds, b.dyn_bounds))


def _at_ivs(indices, ivs) -> bool:
    """Whether `indices` provably equal the map variables `ivs`, in order."""
    if len(indices) != len(ivs):
        return False
    if all(i is v for i, v in zip(indices, ivs)):
        return True
    if differ_somewhere(zip(indices, ivs)):
        return False
    return all(provably_equal(i, v) for i, v in zip(indices, ivs))


def _defined_before(value: SSAValue, op: Operation) -> bool:
    owner = value.owner
    if not isinstance(owner, Operation):
        return True
    ancestor = owner
    while ancestor is not None and ancestor.parent_block() is not op.parent_block():
        ancestor = ancestor.parent_op()
    return ancestor is None or comes_before(ancestor, op)


@dataclass
class _Producer:
    """Output k of map P, written once at P's variables."""

    op: df.MapOp
    k: int
    write: df.WriteOp


def _producer(value: SSAValue) -> _Producer | None:
    p = value.owner
    if not isinstance(p, df.MapOp) or p.is_buffer_form:
        return None
    k = list(p.res).index(value)
    writes = [u.operation for u in p.out_args[k].uses]
    if len(writes) != 1 or not isinstance(w := writes[0], df.WriteOp):
        return None
    if w.parent_op() is not p or w.wcr is not None or not _at_ivs(w.indices, p.ivs):
        return None
    if tuple(p.static_extents) != value.type.get_shape():  # type: ignore[union-attr]
        return None
    if any(isinstance(o, df.MapOp) for o in p.body.block.ops):
        return None
    return _Producer(p, k, w)


def fuse_producer(c: df.MapOp) -> bool:
    """Fuse into `c` one producer map it reads at its own variables."""
    for read in [o for o in c.body.block.ops if isinstance(o, df.ReadOp)]:
        prod = _producer(read.source)
        if prod is None or not _same_space(prod.op, c) or read.source in c.outs:
            continue
        reads = [u.operation for u in read.source.uses if c.is_ancestor(u.operation)]
        if not all(isinstance(r, df.ReadOp) and r.parent_op() is c and _at_ivs(r.indices, c.ivs) for r in reads):
            continue
        if prod.op.parent_block() is not c.parent_block() and not all(  # a producer before c: its operands are
                _defined_before(v, c) for v in _operands_of(prod.op)):   # too (a walk spared)
            continue
        elsewhere = _read_elsewhere(prod.op, c)
        if elsewhere and (_slice_exceeds(prod.op, prod.write.value, RECOMPUTE_MAX_OPS) or _bits_matter(c, reads)):
            continue
        _inline_producer(prod, c, reads)
        return True
    return False


RECOMPUTE_MAX_OPS = 32
"""A producer that another map also reads is recomputed in a consumer only up
to this many ops (the slice it needs, tasklet bodies included): unbounded,
recomputation doubles the code at each step of a chain whose values each feed
two later maps (a gradient of stencils that update in place), so the code and
the time to fuse it grow exponentially with the chain's length."""


def _slice_exceeds(p: df.MapOp, value: SSAValue, limit: int) -> bool:
    """Whether the slice of p's body that `value` depends on has more than `limit` ops, tasklet bodies
    included: counted from `value` back, stopping past the limit (a large producer is asked once a sweep)."""
    seen: set[Operation] = set()
    stack, count = [value], 0
    while stack:
        owner = stack.pop().owner
        if isinstance(owner, Operation) and owner.parent_op() is p and owner not in seen:
            seen.add(owner)
            count += sum(1 for _ in owner.walk())
            if count > limit:
                return True
            stack.extend(owner.operands)
    return False


_EQUALITY = ("oeq", "ueq", "one", "une")  # the predicates for which the last bit decides


def _bits_matter(c: df.MapOp, reads: list[Operation]) -> bool:
    """Whether `c` tests the values it reads for float equality or picks one
    with wcr(max|min) (max/min gradients find the extremum by equality).
    A recomputed value need not be bit-equal to the stored one (fast-math
    contracts and reassociates each copy on its own), so such values are read
    from memory, where every reader sees the same bits."""
    reached = {r.results[0] for r in reads}
    for op in c.walk():
        if isinstance(op, df.TaskletOp) and reached & set(op.inputs):
            if any(isinstance(inner, arith.CmpfOp) and arith.CMPF_COMPARISON_OPERATIONS[inner.predicate.value.data] in _EQUALITY
                   for inner in op.body.walk()):
                return True
            reached.update(op.res)
        elif isinstance(op, df.WriteOp) and op.value in reached and op.wcr_kind in ("max", "min"):
            return True
    return False


def _read_elsewhere(p: df.MapOp, c: df.MapOp) -> bool:
    """Whether a result of `p` is used outside `c` (p then stays, and its stored
    values live on next to c's recomputed ones)."""
    return any(not c.is_ancestor(u.operation) for r in p.res for u in r.uses)


def _operands_of(m: df.MapOp) -> list[SSAValue]:
    """The operands of `m` and of the ops inside it that are defined outside
    `m`, in walk order (one walk: the values defined inside are collected first)."""
    ops = list(m.walk())
    inside: set[SSAValue] = {r for op in ops for r in op.results}
    inside.update(a for op in ops for region in op.regions for block in region.blocks for a in block.args)
    return [v for op in ops for v in op.operands if v not in inside]


def _slice(p: df.MapOp, value: SSAValue) -> list[Operation]:
    """The ops of p's body that `value` depends on, in order."""
    needed: set[Operation] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        owner = v.owner
        if isinstance(owner, Operation) and owner.parent_op() is p and owner not in needed:
            needed.add(owner)
            stack.extend(owner.operands)
    return [o for o in p.body.block.ops if o in needed]


def _inline_producer(prod: _Producer, c: df.MapOp, reads: list[Operation]) -> None:
    """Make `c` compute the produced value itself instead of reading it: the
    slice of the producer's body it needs is cloned to the front of `c`'s
    body and replaces the reads (`c` is changed in place, its other ops and
    its results kept)."""
    p = prod.op
    # at the producer's place when c's other operands allow (p's other results,
    # which c may still read, do not): earlier readers of tensors that later
    # maps update in place keep their order
    early = p.parent_block() is c.parent_block() and all(
        v is p.res[prod.k] or _defined_before(v, p) for v in _operands_of(c)
    )
    block = c.body.block
    mapping: dict[SSAValue, SSAValue] = dict(zip(p.ivs, c.ivs))
    first = block.first_op
    for op in _slice(p, prod.write.value):
        clone = op.clone(value_mapper=mapping)
        block.insert_op_before(clone, first) if first is not None else block.add_op(clone)
        mapping.update(zip(op.results, clone.results))
    value = mapping.get(prod.write.value, prod.write.value)
    for r in reads:
        r.results[0].replace_all_uses_with(value)
        r.detach()
        r.erase()
    if early:
        c.detach()
        p.parent_block().insert_op_before(c, p)  # type: ignore[union-attr]
    if not any(r.uses for r in p.res):
        p.detach()
        p.erase()


def _next_map(a: df.MapOp) -> df.MapOp | None:
    """The next map over `a`'s space in its block, if no op in between uses `a`'s results."""
    block, users = a.parent_block(), set()
    for r in a.res:
        for use in r.uses:
            user: Operation | None = use.operation
            while user is not None and user.parent_block() is not block:
                user = user.parent_op()
            users.add(user)
    op = a.next_op
    while op is not None:
        if isinstance(op, df.MapOp) and _same_space(a, op):
            return op
        if op in users:
            return None
        op = op.next_op
    return None


def fuse_sibling(a: df.MapOp) -> bool:
    """Merge `a` and the next map when both run over one space, share an input
    and neither reads what the other writes; the merged map takes the second's place."""
    b = _next_map(a)
    if b is None or b.is_buffer_form or a.is_buffer_form:
        return False
    shared = set(_operands_of(a)) & set(_operands_of(b))
    if not any(v not in a.outs and v not in b.outs for v in shared):
        return False
    if any(v in a.res for v in _operands_of(b)) or set(a.outs) & set(b.outs):
        return False
    fused = df.MapOp(a.bounds, list(a.outs) + list(b.outs))
    fused.attributes |= a.attributes
    builder = Builder(InsertPoint.at_end(fused.body.block))
    for m, args in ((a, fused.out_args[: len(a.outs)]), (b, fused.out_args[len(a.outs) :])):
        mapping: dict[SSAValue, SSAValue] = dict(zip(m.ivs, fused.ivs))
        mapping.update(zip(m.out_args, args))
        for op in m.body.block.ops:
            clone = builder.insert(op.clone(value_mapper=mapping))
            mapping.update(zip(op.results, clone.results))
    b.parent_block().insert_op_before(fused, b)  # type: ignore[union-attr]
    for old, new in zip(list(a.res) + list(b.res), fused.res):
        old.replace_all_uses_with(new)
    for m in (a, b):
        m.detach()
        m.erase()
    return True


def merge_tasklets(block: Block) -> bool:
    """Merge one tasklet into the single tasklet consuming all its results."""
    for t1 in [o for o in block.ops if isinstance(o, df.TaskletOp)]:
        users = {u.operation for r in t1.res for u in r.uses}
        if len(users) != 1 or not isinstance(t2 := users.pop(), df.TaskletOp) or t2.parent_block() is not block:
            continue
        _merge(t1, t2)
        return True
    return False


def _merge(t1: df.TaskletOp, t2: df.TaskletOp) -> None:
    """Replace `t2` by one tasklet computing t1's body then t2's, its inputs t1's then t2's others. The ops
    move (t1's body block is kept and t2's ops join it), so a chain merged one tasklet at a time costs the
    size of each merged tasklet once, not a copy of the growing body each time."""
    body = t1.body.detach_block(0)
    (yield_op,) = [op for op in body.ops if isinstance(op, df.YieldOp)]
    yielded = dict(zip(t1.res, yield_op.values))
    yield_op.detach()
    yield_op.erase()
    inputs = list(t1.inputs) + [v for v in t2.inputs if v not in t1.res and v not in t1.inputs]
    for v in inputs[len(body.args):]:
        body.insert_arg(v.type, len(body.args))
    args = dict(zip(inputs, body.args))
    for arg, v in zip(t2.body.block.args, t2.inputs):
        arg.replace_all_uses_with(yielded[v] if v in yielded else args[v])
    for op in list(t2.body.block.ops):
        op.detach()
        body.add_op(op)
    merged = df.TaskletOp(inputs, t2.res.types, body)
    t2.parent_block().insert_op_before(merged, t2)  # type: ignore[union-attr]
    for old, new in zip(t2.res, merged.res):
        old.replace_all_uses_with(new)
    t2.detach()
    t2.erase()
    t1.detach()
    t1.erase()


@dataclass(frozen=True)
class FusePass(ModulePass):
    """Fuse df maps and merge tasklets until nothing more is legal.

    Option `expand` (default true): expand library ops into maps first.
    """

    name = "fuse"

    expand: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.expand:
            ExpandLibraryPass().apply(ctx, op)
        for rule in (fuse_producer, fuse_sibling):  # consumers first: siblings may share a producer
            while _sweep(op, rule):
                while _sweep(op, fuse_producer):
                    pass
        for m in list(_maps(op)):
            while merge_tasklets(m.body.block):
                pass



def _sweep(module: ModuleOp, rule) -> bool:
    """Apply `rule` to every tensor-level map of `module` once, in order (maps a
    fusion erased are skipped; maps it created wait for the next sweep).
    Sweeping instead of restarting after each fusion keeps the pass near-linear
    in the number of maps."""
    changed = False
    for m in [o for o in _maps(module) if not o.is_buffer_form]:
        if _attached(m, module) and rule(m):
            changed = True
    return changed


def _maps(op: Operation) -> Iterator[df.MapOp]:
    """The maps nested in `op`, in walk order (`op.walk()`'s), not looking
    inside tasklets (scalar code, about half the ops a sweep would visit)."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                if isinstance(inner, df.MapOp):
                    yield inner
                if inner.regions and not isinstance(inner, df.TaskletOp):
                    yield from _maps(inner)


def _attached(op: Operation, module: ModuleOp) -> bool:
    """Whether `op` is still inside `module` (not erased by an earlier fusion)."""
    while op.parent_op() is not None:
        op = op.parent_op()
    return op is module
