"""Reversing `scf.for` loops with tensor iter_args (time-step loops).

The backward loop runs the iterations in reverse. Its body recomputes the
forward body of iteration t from that iteration's iter_args and reverses it;
the adjoints of the iter_args, and of the tensors the body captures from
outside, are its own iter_args. The iteration's iter_args are first
placeholders: once the gradient function is cleaned up, a placeholder still
used means the derivative needs that forward value. It is then kept on a tape:
the forward loop gets one more iter_arg, a `tensor<N x shape>` (N the trip
count) into which each iteration writes its value at row t, and the backward
loop reads row t back. With `recompute`, or for a dynamically shaped value,
the forward loop is instead rerun up to t (no memory, quadratic time). A
linear body, like a stencil's, needs neither: nothing is kept or recomputed.
Under a memory budget, a loop whose trip count is known only at run time
chooses between the two at run time (`_tape_or_recompute`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, AnyFloat, FloatAttr, IndexType, IntegerAttr, IntegerType, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from dfc.dialects import df
from dfc.dialects.diagnostics import CompileError
from dfc.dialects.xdsl_fixes import is_trivially_dead
from dfc.passes.autodiff.reverse import Reverser, is_float, mark_varied, used_in_body


@dataclass
class Placeholder:
    """Iteration t's value of iter_arg `position` of `loop`, inside a backward loop
    (`op`, a tensor.empty or a scalar constant, stands for it until resolved)."""

    op: Operation
    loop: scf.ForOp
    position: int

    @property
    def value(self) -> SSAValue:
        return self.op.results[0]


def _index(b: Builder, v: int) -> SSAValue:
    return b.insert(arith.ConstantOp(IntegerAttr(v, IndexType()))).result


def _binary(b: Builder, cls, x: SSAValue, y: SSAValue) -> SSAValue:
    return b.insert(cls(x, y)).result


def _trip_count(b: Builder, loop: scf.ForOp) -> SSAValue:
    """ceil((ub - lb) / step), built at `b`."""
    span = _binary(b, arith.SubiOp, loop.ub, loop.lb)
    return _binary(b, arith.DivUIOp, _binary(b, arith.AddiOp, span, _binary(b, arith.SubiOp, loop.step, _index(b, 1))), loop.step)


def reverse_loop(rev: Reverser, op: scf.ForOp) -> None:
    """Add the adjoints of `op`'s operands, building a loop that runs backwards."""
    b = rev.b
    body = op.body.block
    carried = [k for k, v in enumerate(op.iter_args) if isinstance(v.type, TensorType) and is_float(v)]
    if any(not isinstance(v.type, TensorType) and v in rev.varied for v in op.iter_args):
        raise CompileError.at(op, "autodiff: scalar float iter_args are not differentiable; use 0-d tensors")
    captured = [v for v in used_in_body(op) if v in rev.varied and is_float(v)]  # (an iter_arg's initial value too)
    seeds = [rev.adj.get(op.results[k]) or rev.zeros_like(op.results[k]) for k in carried]
    acc = [rev.tensor_zeros_like(c) for c in captured]  # a scalar's adjoint is summed in a 0-d tensor
    one = _index(b, 1)
    n = _trip_count(b, op)
    block = Block(arg_types=[IndexType()] + [s.type for s in seeds + acc])
    back = b.insert(scf.ForOp(_index(b, 0), n, one, seeds + acc, Region(block)))
    inner_b = Builder(InsertPoint.at_end(block))
    k = block.args[0]
    step_index = _binary(inner_b, arith.SubiOp, _binary(inner_b, arith.SubiOp, n, one), k)
    t = _binary(inner_b, arith.AddiOp, op.lb, _binary(inner_b, arith.MuliOp, step_index, op.step))
    mapping: dict[SSAValue, SSAValue] = {body.args[0]: t}
    for position, arg in enumerate(body.args[1:]):
        if isinstance(arg.type, TensorType):
            holder: Operation = inner_b.insert(tensor.EmptyOp([], arg.type))
        elif isinstance(arg.type, IntegerType | IndexType):  # a counter: recomputed where needed
            holder = inner_b.insert(arith.ConstantOp(IntegerAttr(0, arg.type)))
        elif isinstance(arg.type, AnyFloat):  # not differentiated (checked above): recomputed where needed
            holder = inner_b.insert(arith.ConstantOp(FloatAttr(0.0, arg.type)))
        else:
            raise CompileError.at(op, f"autodiff: loops carrying {arg.type} values are not supported")
        rev.placeholders.append(Placeholder(holder, op, position))
        mapping[arg] = holder.results[0]
    start = len(list(block.ops))
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)
    for o in body.ops:
        if o is not yielded:
            clone = inner_b.insert(o.clone(value_mapper=mapping))
            mapping.update(zip(o.results, clone.results))
    cloned = list(block.ops)[start:]
    varied = set(rev.varied) | {mapping[body.args[1 + j]] for j in carried}
    mark_varied(cloned, varied)
    inner = rev.nested(inner_b, varied)
    for j, g in zip(carried, block.args[1 : 1 + len(carried)]):
        inner.add(mapping.get(yielded.arguments[j], yielded.arguments[j]), g)
    inner.block(cloned)
    new_seeds = [inner.adj.get(mapping[body.args[1 + j]]) or inner.zeros_like(mapping[body.args[1 + j]]) for j in carried]
    new_acc = []
    for c, a in zip(captured, block.args[1 + len(carried) :]):
        g = inner.adj.get(c)
        new_acc.append(a if g is None else inner.sum(a, inner.as_tensor(g)))
    inner_b.insert(scf.YieldOp(*new_seeds, *new_acc))
    for j, g in zip(carried, back.results[: len(carried)]):
        rev.add(op.iter_args[j], g)
    for c, g in zip(captured, back.results[len(carried) :]):
        rev.add(c, rev.like(c, g))


def resolve_placeholders(
    grad: Operation, placeholders: list[Placeholder], recompute: bool = False, keep: Operation | None = None,
    budget: int | None = None,
) -> int | None:
    """Remove dead ops from `grad` (but `keep`), then give each still-used
    placeholder its forward value: from a tape, from a tape of checkpoints and
    the recomputed segment (`budget` bytes for all the tapes), or by
    recomputation. The bytes the tapes take under a budget (None without one)."""
    _prune(grad, placeholders, keep)
    taped: dict[scf.ForOp, list[Placeholder]] = {}
    for p in placeholders:
        if p.op.parent is None:
            continue
        t = p.value.type
        if recompute or not isinstance(t, TensorType) or not t.has_static_shape():
            _recompute(p)
        else:
            taped.setdefault(p.loop, []).append(p)
    if budget is None:
        for loop, ps in taped.items():
            _tape(loop, ps)
        return None
    left = budget
    for loop, ps in sorted(taped.items(), key=lambda item: tape_plan(item[0], item[1], None)[1]):
        k, used = tape_plan(loop, ps, left)
        if k is None:
            for p in ps:
                _recompute(p)
        elif k < 0:
            _tape_or_recompute(loop, ps, -k)
        elif k == 0:
            _tape(loop, ps)
        else:
            _checkpoint(loop, ps, k)
        left -= used
    return budget - left


def _bytes(t) -> int:
    """Bytes of a static tensor type."""
    element = t.element_type
    size = 8 if isinstance(element, IndexType) else max(1, element.bitwidth // 8)
    for d in t.get_shape():
        size *= d
    return size


def tape_plan(loop: scf.ForOp, placeholders: list[Placeholder], budget: int | None) -> tuple[int | None, int]:
    """How the placeholders' values of `loop` are kept within `budget` bytes, and
    the bytes that takes: (0, n rows) a full tape when it fits (or without a
    budget); (k, ...) checkpoints of the loop state every k iterations and a
    k-row tape of one recomputed segment (and the state restored from its
    checkpoint), k chosen for the least memory (about sqrt(n * state / row)),
    when that fits; (None, 0) recomputation from
    the start otherwise, or when the state cannot be checkpointed (a carried
    value other than a tensor of static shape). A trip count known only at run
    time: (-c, c rows) the run-time choice of `_tape_or_recompute` (a tape when
    the n rows are at most c, the rows the budget holds), if it holds one row."""
    positions = sorted({p.position for p in placeholders})
    row = sum(_bytes(loop.iter_args[j].type) for j in positions)
    n = _constant_trip_count(loop)
    if n is None:
        if budget is None:
            return 0, 0
        cap = budget // max(1, row)
        return (-cap, cap * row) if cap >= 1 else (None, 0)
    if budget is None or n * row <= budget:
        return 0, n * row
    if not all(isinstance(v.type, TensorType) and v.type.has_static_shape() for v in loop.iter_args):
        return None, 0
    state = sum(_bytes(v.type) for v in loop.iter_args)  # one more for the state restored from a checkpoint
    best = min(range(1, n + 1), key=lambda k: (-(-n // k) + 1) * state + k * row)
    used = (-(-n // best) + 1) * state + best * row
    return (best, used) if used <= budget and best > 1 else (None, 0)


def _prune(grad: Operation, placeholders: list[Placeholder], keep: Operation | None) -> None:
    """Erase dead ops (the forward values a derivative does not need), keeping
    every loop whose iterations a still-used placeholder stands for: it gets
    the tape, or is rerun. Ops are erased, never replaced, so the placeholders'
    loops stay the ops they name."""
    changed = True
    while changed:
        changed = False
        needed = {p.loop for p in placeholders if p.op.parent is not None and p.value.uses}
        for op in reversed(list(grad.walk())):
            if op is grad or op is keep or op.parent is None or op in needed or not is_trivially_dead(op):
                continue
            if any(inner in needed for inner in op.walk()):
                continue
            op.detach()
            op.erase()
            changed = True


def _step_index(b: Builder, t: SSAValue, loop: scf.ForOp) -> SSAValue:
    return _binary(b, arith.DivUIOp, _binary(b, arith.SubiOp, t, loop.lb), loop.step)


def _constant_trip_count(loop: scf.ForOp) -> int | None:
    bounds = [v.owner.value.value.data if isinstance(v.owner, arith.ConstantOp) else None
              for v in (loop.lb, loop.ub, loop.step)]  # fmt: skip
    if None in bounds:
        return None
    lb, ub, step = bounds
    return max(0, -(-(ub - lb) // step))


def _recording(loop: scf.ForOp, positions: list[int], tapes: list[SSAValue],
               row_of: Callable[[Builder, SSAValue], SSAValue]) -> dict[int, SSAValue]:
    """Replace `loop` by one that also carries `tapes` and copies, each iteration, the iter_args at
    `positions` into row `row_of(builder, induction variable)` of their tape; position -> the final tape."""
    body = loop.body.block
    records = [body.insert_arg(tp.type, len(body.args)) for tp in tapes]
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)
    rb = Builder(InsertPoint.before(yielded))
    row = row_of(rb, body.args[0])
    written = [_copy_row(rb, body.args[1 + position], record, row, into_tape=True)
               for position, record in zip(positions, records)]
    rb.insert(scf.YieldOp(*yielded.arguments, *written))
    yielded.detach()
    yielded.erase()
    new = scf.ForOp(loop.lb, loop.ub, loop.step, [*loop.iter_args, *tapes], loop.detach_region(loop.body))
    Builder(InsertPoint.before(loop)).insert(new)
    for old, result in zip(loop.results, new.results):
        old.replace_all_uses_with(result)
    loop.detach()
    loop.erase()
    return dict(zip(positions, new.results[len(new.results) - len(tapes) :]))


def _tape(loop: scf.ForOp, placeholders: list[Placeholder], trips: int | None = None) -> None:
    """Record the placeholders' iter_args in `loop` and read them back in the
    backward loops (a tape of `trips` rows, by default the trip count)."""
    positions = sorted({p.position for p in placeholders})
    b = Builder(InsertPoint.before(loop))
    trips = trips or _constant_trip_count(loop)
    rows = [] if trips is not None else [_trip_count(b, loop)]
    tapes = []
    for position in positions:
        t = loop.iter_args[position].type
        assert isinstance(t, TensorType)
        tape_type = TensorType(t.element_type, [DYNAMIC_INDEX if trips is None else trips, *t.get_shape()])
        tapes.append(b.insert(tensor.EmptyOp(rows, tape_type)).tensor)
    final = _recording(loop, positions, tapes, lambda rb, iv: _step_index(rb, iv, loop))
    for p in placeholders:
        backward = p.op.parent_op()
        assert isinstance(backward, scf.ForOp)
        pb = Builder(InsertPoint.before(p.op))
        last = _binary(pb, arith.SubiOp, backward.ub, _index(pb, 1))
        row = _binary(pb, arith.SubiOp, last, backward.body.block.args[0])
        fresh = pb.insert(tensor.EmptyOp([], p.value.type)).tensor
        value = _copy_row(pb, final[p.position], fresh, row, into_tape=False)
        p.value.replace_all_uses_with(value)
        p.op.detach()
        p.op.erase()


def _tape_or_recompute(loop: scf.ForOp, placeholders: list[Placeholder], cap: int) -> None:
    """A run-time choice for a loop of a run-time trip count n: when n <= `cap`, the
    forward loop records the placeholders' iter_args on a tape of n rows and the
    backward loops read them back; else the tape has one row, which every iteration
    overwrites (no branch around it: a tape yielded by an `scf.if` would be copied),
    and the backward loops rerun the forward loop up to each iteration. The tape's
    rows are `minui(n if n <= cap else 1, cap)`: a bound `resident_memory` reads."""
    positions = sorted({p.position for p in placeholders})
    lb, step, inits, plain = loop.lb, loop.step, list(loop.iter_args), loop.clone()
    b = Builder(InsertPoint.before(loop))
    n, limit = _trip_count(b, loop), _index(b, cap)
    fits = b.insert(arith.CmpiOp(n, limit, "ule")).result
    rows = b.insert(arith.SelectOp(fits, n, _index(b, 1))).result
    rows = _binary(b, arith.MinUIOp, rows, limit)
    tapes = []
    for position in positions:
        t = loop.iter_args[position].type
        assert isinstance(t, TensorType)
        tapes.append(b.insert(tensor.EmptyOp([rows], TensorType(t.element_type, [DYNAMIC_INDEX, *t.get_shape()]))).tensor)
    final = _recording(loop, positions, tapes,
                       lambda rb, iv: rb.insert(arith.SelectOp(fits, _step_index(rb, iv, loop), _index(rb, 0))).result)
    for p in placeholders:
        backward = p.op.parent_op()
        assert isinstance(backward, scf.ForOp)
        pb = Builder(InsertPoint.before(p.op))
        last = _binary(pb, arith.SubiOp, backward.ub, _index(pb, 1))
        step_index = _binary(pb, arith.SubiOp, last, backward.body.block.args[0])
        read, rerun = Block(), Block()
        rdb = Builder(InsertPoint.at_end(read))
        fresh = rdb.insert(tensor.EmptyOp([], p.value.type)).tensor
        read.add_op(scf.YieldOp(_copy_row(rdb, final[p.position], fresh, step_index, into_tape=False)))
        reb = Builder(InsertPoint.at_end(rerun))
        end = _binary(reb, arith.AddiOp, lb, _binary(reb, arith.MuliOp, step_index, step))
        again = reb.insert(plain.clone())
        again.operands = [lb, end, step, *inits]
        rerun.add_op(scf.YieldOp(again.results[p.position]))
        choice = pb.insert(scf.IfOp(fits, [p.value.type], [read], [rerun]))
        p.value.replace_all_uses_with(choice.results[0])
        p.op.detach()
        p.op.erase()
    plain.erase()


def _copy_row(b: Builder, source: SSAValue, dest: SSAValue, row: SSAValue, into_tape: bool) -> SSAValue:
    """A df.map copying `source` into row `row` of the tape `dest`, or row `row`
    of the tape `source` into `dest` (a tensor of one row's shape)."""
    t = (source if into_tape else dest).type
    assert isinstance(t, TensorType)
    shape = list(t.get_shape())
    m = b.insert(df.MapOp(shape or [1], [dest]))
    ivs = list(m.ivs) if shape else []
    mb = Builder(InsertPoint.at_end(m.body.block))
    v = mb.insert(df.ReadOp(source, ivs if into_tape else [row, *ivs])).res
    mb.insert(df.WriteOp(v, m.out_args[0], [row, *ivs] if into_tape else ivs))
    return m.res[0]


def _recompute(p: Placeholder) -> None:
    """Replace `p` by rerunning its forward loop up to (not including) iteration t."""
    b = Builder(InsertPoint.before(p.op))
    loop, backward = p.loop, p.op.parent_op()
    assert isinstance(backward, scf.ForOp)
    last = _binary(b, arith.SubiOp, backward.ub, _index(b, 1))
    step_index = _binary(b, arith.SubiOp, last, backward.body.block.args[0])
    end = _binary(b, arith.AddiOp, loop.lb, _binary(b, arith.MuliOp, step_index, loop.step))
    rerun = b.insert(loop.clone())
    rerun.operands = [loop.lb, end, loop.step, *loop.iter_args]
    p.value.replace_all_uses_with(rerun.results[p.position])
    p.op.detach()
    p.op.erase()


def _checkpoint(loop: scf.ForOp, placeholders: list[Placeholder], k: int) -> None:
    """Checkpoint `loop`'s state every `k` iterations; the backward loop reverses
    segment by segment, last first, each segment first recomputed from its
    checkpoint into a k-row tape: ceil(n/k) states and k rows instead of n rows,
    for one more forward sweep.

    The forward loop becomes `for j < S: checkpoint[j] = state; for the
    iterations of segment j: body`, the backward loop (iteration kk reverses
    forward step n-1-kk) `for jj < S: j = S-1-jj; state = checkpoint[j];
    for segment j: body, taping; for its kk: backward body`."""
    n = _constant_trip_count(loop)
    assert n is not None
    segments = -(-n // k)
    lb, ub, step = loop.lb, loop.ub, loop.step
    b = Builder(InsertPoint.before(loop))
    state_types = [v.type for v in loop.iter_args]
    body_copy = loop.body.clone()  # the forward body, for the recomputed segments
    tapes = [b.insert(tensor.EmptyOp([], TensorType(t.element_type, [segments, *t.get_shape()]))).tensor for t in state_types]

    def segment_bounds(sb: Builder, j: SSAValue) -> tuple[SSAValue, SSAValue]:
        """The induction values of segment j's first step and past its last."""
        first = _binary(sb, arith.AddiOp, lb, _binary(sb, arith.MuliOp, j, _binary(sb, arith.MuliOp, _index(sb, k), step)))
        past = _binary(sb, arith.AddiOp, first, _binary(sb, arith.MuliOp, _index(sb, k), step))
        return first, _binary(sb, arith.MinSIOp, past, ub)

    # the forward loop, by segments
    outer_block = Block(arg_types=[IndexType(), *state_types, *(t.type for t in tapes)])
    ob = Builder(InsertPoint.at_end(outer_block))
    j = outer_block.args[0]
    state = list(outer_block.args[1 : 1 + len(state_types)])
    written = [_copy_row(ob, v, tape, j, into_tape=True) for v, tape in zip(state, outer_block.args[1 + len(state_types) :])]
    first, past = segment_bounds(ob, j)
    inner = ob.insert(scf.ForOp(first, past, step, state, loop.detach_region(loop.body)))
    ob.insert(scf.YieldOp(*inner.results, *written))
    forward = b.insert(scf.ForOp(_index(b, 0), _index(b, segments), _index(b, 1), [*loop.iter_args, *tapes], Region(outer_block)))
    for old, new in zip(loop.results, forward.results):
        old.replace_all_uses_with(new)
    loop.detach()
    loop.erase()
    checkpoints = forward.results[len(state_types) :]

    # each backward loop, by segments
    for backward in {id(p.op.parent_op()): p.op.parent_op() for p in placeholders}.values():
        assert isinstance(backward, scf.ForOp)
        mine = [p for p in placeholders if p.op.parent_op() is backward]
        bb = Builder(InsertPoint.before(backward))
        carried = [v.type for v in backward.iter_args]
        block = Block(arg_types=[IndexType(), *carried])
        sb = Builder(InsertPoint.at_end(block))
        j = _binary(sb, arith.SubiOp, _index(sb, segments - 1), block.args[0])
        restored = []
        for tape, t in zip(checkpoints, state_types):
            fresh = sb.insert(tensor.EmptyOp([], t)).tensor
            restored.append(_copy_row(sb, tape, fresh, j, into_tape=False))
        first, past = segment_bounds(sb, j)
        segment = sb.insert(scf.ForOp(first, past, step, restored, body_copy.clone()))
        total = _index(sb, n)
        lo = _binary(sb, arith.SubiOp, total, _binary(sb, arith.MinSIOp, _index(sb, n), _binary(sb, arith.MuliOp, _binary(sb, arith.AddiOp, j, _index(sb, 1)), _index(sb, k))))
        hi = _binary(sb, arith.SubiOp, total, _binary(sb, arith.MuliOp, j, _index(sb, k)))
        steps = sb.insert(scf.ForOp(lo, hi, _index(sb, 1), list(block.args[1:]), backward.detach_region(backward.body)))
        sb.insert(scf.YieldOp(*steps.results))
        by_segments = bb.insert(scf.ForOp(_index(bb, 0), _index(bb, segments), _index(bb, 1), list(backward.iter_args), Region(block)))
        for old, new in zip(backward.results, by_segments.results):
            old.replace_all_uses_with(new)
        backward.detach()
        backward.erase()
        _tape(segment, [Placeholder(p.op, segment, p.position) for p in mine], trips=k)
