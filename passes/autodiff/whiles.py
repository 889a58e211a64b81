"""Data-dependent `scf.while` loops, made differentiable: count, then replay.

A while loop runs its before region on the carried values `s` (giving the
condition and the values `p` it passes on), then, while the condition holds,
its after region on `p` (giving the next `s`). With n the number of times the
after region ran, its results are `B(F^n(s0))`, B the before region's passed
values and F(s) = after(B(s)): for a fixed n, a composition the reverse sweep
differentiates like any other (the condition is a boolean: it has no
derivative, and its choice of n is locally constant).

So, before the reverse sweep, each such loop of the gradient function becomes

    %r..., %n = scf.while (s = s0, %k = 0)    // the same loop, counting the trips
                  { B...; scf.condition(%c) p..., %k } do { after...; yield s'..., %k + 1 }
    %s_n = scf.for %i = 0 to %n iter_args(s = s0) { B...; after... }   // replays them
    %p_n = B(%s_n)                             // the final before region: the results

and the loop's results are replaced by `%p_n`. The `scf.for` is reversed by the
loop machinery (`loops.py`): a tape of n rows (n known once the counting loop
has run; the tape is allocated with that dynamic size), or recomputation. Values
the before region computes for the after region are recomputed in the replay,
as the before region is part of its body; what only the condition needs is dead
there and pruned. The forward computation thus runs the loop twice: once to
count, once to replay (and record). Loops whose float results do not depend on a
differentiated argument are left alone, as are loops in map bodies (where
autodiff differentiates no loops but `scf.for` over scalars).
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from dfc.dialects import df
from dfc.passes.autodiff.reverse import is_float, mark_varied


def whiles_as_for_loops(g: func.FuncOp, wrt: list[int]) -> None:
    """Rewrite each `scf.while` of `g` whose float results depend on arguments
    `wrt` as a counting while loop and its replay by an `scf.for`."""
    counting: set[Operation] = set()
    while True:
        varied = {g.body.block.args[k] for k in wrt}
        mark_varied(list(g.body.block.ops), varied)
        target = next((op for op in g.walk() if _candidate(op, varied, counting)), None)
        if target is None:
            return
        counting.add(_replay(target))


def _candidate(op: Operation, varied: set[SSAValue], counting: set[Operation]) -> bool:
    if not isinstance(op, scf.WhileOp) or op in counting or not any(is_float(r) and r in varied for r in op.res):
        return False
    parent = op.parent_op()
    while parent is not None:
        if parent in counting or isinstance(parent, df.MapOp | df.TaskletOp):
            return False
        parent = parent.parent_op()
    return True


def _index(b: Builder, v: int) -> SSAValue:
    return b.insert(arith.ConstantOp(IntegerAttr(v, IndexType()))).result


def _inline(b: Builder, block: Block, args: list[SSAValue]) -> list[SSAValue]:
    """Clone `block`'s ops but its terminator at `b`, its arguments bound to
    `args`; return the terminator's operands (a condition's passed values)."""
    mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, args))
    end = block.last_op
    assert isinstance(end, scf.ConditionOp | scf.YieldOp)
    for o in block.ops:
        if o is not end:
            clone = b.insert(o.clone(value_mapper=mapping))
            mapping.update(zip(o.results, clone.results))
    passed = end.args if isinstance(end, scf.ConditionOp) else end.operands
    return [mapping.get(v, v) for v in passed]


def _replay(op: scf.WhileOp) -> scf.WhileOp:
    """Replace `op` by the counting loop, the replay and the final before
    region; return the counting loop."""
    before, after = op.before_region.block, op.after_region.block
    b = Builder(InsertPoint.before(op))
    zero, one = _index(b, 0), _index(b, 1)

    # the counting loop: `op`'s regions, carrying one more index
    regions = [op.before_region.clone(), op.after_region.clone()]
    count_before, count_after = regions[0].block, regions[1].block
    k = count_before.insert_arg(IndexType(), len(count_before.args))
    end = count_before.last_op
    assert isinstance(end, scf.ConditionOp)
    Builder(InsertPoint.before(end)).insert(scf.ConditionOp(end.condition, *end.args, k))
    end.detach()
    end.erase()
    k2 = count_after.insert_arg(IndexType(), len(count_after.args))
    end = count_after.last_op
    assert isinstance(end, scf.YieldOp)
    ab = Builder(InsertPoint.before(end))
    ab.insert(scf.YieldOp(*end.operands, ab.insert(arith.AddiOp(k2, one)).result))
    end.detach()
    end.erase()
    counter = b.insert(scf.WhileOp([*op.arguments, zero], [*op.result_types, IndexType()], regions[0], regions[1]))
    counter.location = op.location
    n = counter.res[-1]
    n.name_hint = "trips"

    # the replay: n times the before region then the after region
    body = Block(arg_types=[IndexType(), *(v.type for v in op.arguments)])
    fb = Builder(InsertPoint.at_end(body))
    passed = _inline(fb, before, list(body.args[1:]))
    fb.insert(scf.YieldOp(*_inline(fb, after, passed)))
    replay = b.insert(scf.ForOp(zero, n, one, list(op.arguments), Region(body)))
    replay.location = op.location

    # the results: the before region on the last state
    results = _inline(b, before, list(replay.results))
    for old, new in zip(op.res, results):
        old.replace_all_uses_with(new)
    op.detach()
    op.erase()
    return counter
