"""Canonicalization patterns of the df dialect, run by `canonicalize` (this module
puts them in `df.CANONICALIZATION_PATTERNS`, which the ops' `df.Canonicalization`
trait reads).

Tasklets: constant operands move into the body (where arith folding sees them),
duplicate and unused operands disappear, results that merely forward an operand
are replaced by it, unused results are no longer yielded. Maps: a map with an empty iteration space yields its initial
values, an output nobody touches inside the body is its initial value, an
output whose result is unused goes with its writes, an output that copies a
tensor read at the map's own variables is that tensor, an output that the map
overwrites element for element starts as `tensor.empty`, and a
wcr write into an output that starts as the reduction's identity becomes a plain
write when its index is provably injective (each element reduces one value: the
gradient writes autodiff emits). Reads of splat constants become scalar constants,
the one read of a map that fills a box with one value becomes a guarded
read of the map's initial tensor, and a product map's read of a transposed
copy reads the copy's source.
"""

from __future__ import annotations

import math
from itertools import islice

from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import AnyFloat, DenseIntOrFPElementsAttr, IndexType, IntegerAttr, TensorType
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from dfc.dialects import df
from dfc.dialects.df_builders import REDUCE_IDENTITY
from dfc.dialects.dominance import defined_inside
from dfc.dialects.index_exprs import is_injective, translation
from dfc.dialects.xdsl_fixes import is_splat


def _scalar_constant(value: SSAValue) -> Attribute | None:
    """The attribute of a scalar `arith.constant` producing `value`."""
    op = value.owner
    if isinstance(op, arith.ConstantOp) and not isinstance(
        op.value, DenseIntOrFPElementsAttr
    ):
        return op.value
    return None


def _rebuild_tasklet(
    op: df.TaskletOp, keep: list[int], rewriter: PatternRewriter
) -> None:
    """Replace `op` by a tasklet with only the operands at positions `keep`;
    the dropped block arguments must already be unused."""
    block = op.body.block
    for arg in reversed(block.args):
        if arg.index not in keep:
            rewriter.erase_block_argument(arg)
    body = op.detach_region(op.body)
    new = df.TaskletOp([op.inputs[k] for k in keep], op.res.types, body)
    new.attributes |= op.attributes
    rewriter.replace(op, new)


class SinkConstantOperands(RewritePattern):
    """`df.tasklet (%c)` with `%c = arith.constant` -> the constant inside the body."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: df.TaskletOp, rewriter: PatternRewriter) -> None:
        block = op.body.block
        constant = [k for k, v in enumerate(op.inputs) if _scalar_constant(v)]
        if not constant:
            return
        for k in constant:
            value = _scalar_constant(op.inputs[k])
            inner = arith.ConstantOp(value, op.inputs[k].type)
            rewriter.insert(inner, InsertPoint.at_start(block))
            block.args[k].replace_all_uses_with(inner.result)
        keep = [k for k in range(len(op.inputs)) if k not in constant]
        _rebuild_tasklet(op, keep, rewriter)


class DropDuplicateAndUnusedOperands(RewritePattern):
    """Operands passed twice are merged; block arguments without uses are dropped."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: df.TaskletOp, rewriter: PatternRewriter) -> None:
        block = op.body.block
        first: dict[SSAValue, BlockArgument] = {}
        keep: list[int] = []
        for k, value in enumerate(op.inputs):
            arg = block.args[k]
            if value in first:
                arg.replace_all_uses_with(first[value])
            elif arg.uses:
                first[value] = arg
                keep.append(k)
        if len(keep) != len(op.inputs):
            _rebuild_tasklet(op, keep, rewriter)


class ForwardOperandResults(RewritePattern):
    """A result that yields a block argument is the corresponding operand."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: df.TaskletOp, rewriter: PatternRewriter) -> None:
        terminator = op.body.block.last_op
        assert isinstance(terminator, df.YieldOp)
        for result, value in zip(op.res, terminator.values):
            if (
                result.uses
                and isinstance(value, BlockArgument)
                and value.block is op.body.block
            ):
                rewriter.replace_all_uses_with(result, op.inputs[value.index])


class DropUnusedResults(RewritePattern):
    """Results nobody uses are no longer yielded."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: df.TaskletOp, rewriter: PatternRewriter) -> None:
        used = [k for k, r in enumerate(op.res) if r.uses]
        if len(used) == len(op.res) or not used:
            return
        terminator = op.body.block.last_op
        assert isinstance(terminator, df.YieldOp)
        rewriter.replace(terminator, df.YieldOp(*(terminator.values[k] for k in used)))
        body = op.detach_region(op.body)
        new = df.TaskletOp(op.inputs, [op.res[k].type for k in used], body)
        new.attributes |= op.attributes
        results: list[SSAValue | None] = [None] * len(op.res)
        for position, k in enumerate(used):
            results[k] = new.res[position]
        rewriter.replace(op, new, results)


class EmptyIterationSpace(RewritePattern):
    """A map with a zero bound runs no iteration: its results are its inits
    (on buffers, where it has no results, it does nothing)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: df.MapOp, rewriter: PatternRewriter) -> None:
        if 0 in op.static_extents:
            rewriter.replace(op, [], list(op.outs) if op.res else [])


class UntouchedOutputs(RewritePattern):
    """An output block argument without uses leaves the result equal to its init."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: df.MapOp, rewriter: PatternRewriter) -> None:
        for init, arg, result in zip(op.outs, op.out_args, op.res):
            if not arg.uses and result.uses:
                rewriter.replace_all_uses_with(result, init)


def splat_value(value: SSAValue) -> float | None:
    """The element of a splat float `arith.constant dense<v>` producing `value`
    (None for a constant of no elements, which has none)."""
    op = value.owner
    if not isinstance(op, arith.ConstantOp) or not isinstance(op.value, DenseIntOrFPElementsAttr):
        return None
    if not is_splat(op.value) or not isinstance(op.value.get_element_type(), AnyFloat):
        return None
    first = next(op.value.iter_attrs(), None)
    return None if first is None else float(first.value.data)


def _repeats_within(op: Operation, outer: Operation) -> bool:
    """Whether a loop (scf.for, scf.while) between `op` and `outer` may run `op`
    more than once per iteration of the maps in between."""
    parent = op.parent_op()
    while parent is not None and parent is not outer:
        if isinstance(parent, scf.ForOp | scf.WhileOp):
            return True
        parent = parent.parent_op()
    return False


class InjectiveReductionToWrite(RewritePattern):
    """`wcr(k)` into an output initialised to k's identity, as its only use,
    at an index injective over the enclosing maps' variables -> a plain write.
    Not inside a loop in the body: each loop iteration would overwrite the last."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: df.MapOp, rewriter: PatternRewriter) -> None:
        for init, arg in zip(op.outs, op.out_args):
            uses = list(arg.uses)
            if len(uses) != 1:
                continue
            write = uses[0].operation
            if not isinstance(write, df.WriteOp) or write.dest is not arg or write.wcr_kind is None:
                continue
            if splat_value(init) != REDUCE_IDENTITY[write.wcr_kind]:
                continue
            if _repeats_within(write, op):
                continue
            maps = df.enclosing_maps(write)
            maps = maps[: maps.index(op) + 1]
            ivs = [iv for m in maps for iv in m.ivs]
            extents = [e for m in maps for e in m.static_extents]
            if is_injective(list(write.indices), ivs, extents):
                rewriter.replace(write, df.WriteOp(write.value, arg, list(write.indices)))


class CopyOutputs(RewritePattern):
    """An output whose one use writes, in every iteration, the element of a
    tensor defined outside the map read at the map's own variables, in order,
    over the tensor's whole (static) shape, is a copy: its result is that
    tensor. (Autodiff keeps such copies of a map's inputs for the backward
    pass; the copy, a full pass over memory, then goes with DropUnusedOutputs.)"""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: df.MapOp, rewriter: PatternRewriter) -> None:
        if op.is_buffer_form:
            return
        ivs = list(op.ivs)
        for arg, result in zip(op.out_args, op.res):
            uses = list(arg.uses)
            if not result.uses or len(uses) != 1:
                continue
            write = uses[0].operation
            if not isinstance(write, df.WriteOp) or write.dest is not arg or write.wcr_kind is not None:
                continue
            read = write.value.owner
            if write.parent_op() is not op or not isinstance(read, df.ReadOp) or read.parent_op() is not op:
                continue
            source = read.source
            if list(write.indices) != ivs or list(read.indices) != ivs or source.type != result.type:
                continue
            if defined_inside(source, op) or list(source.type.get_shape()) != op.static_extents:
                continue
            rewriter.replace_all_uses_with(result, source)


class OverwrittenInitialValues(RewritePattern):
    """An output whose one use is a plain write, made in every iteration (its
    parents up to the map are maps) at an index injective over their
    variables, with as many iterations as the output has elements, replaces
    every element: its initial value is never read and becomes `tensor.empty`
    (a zero-filled gradient buffer that a layout copy fills again, say: the
    fill, a full pass over memory, then goes)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: df.MapOp, rewriter: PatternRewriter) -> None:
        if op.is_buffer_form:
            return
        first_out = len(op.operands) - len(op.outs)
        for k, (init, arg) in enumerate(zip(op.outs, op.out_args)):
            t = init.type
            if isinstance(init.owner, tensor.EmptyOp) or not isinstance(t, TensorType) or not t.has_static_shape():
                continue
            uses = list(arg.uses)
            if len(uses) != 1:
                continue
            write = uses[0].operation
            if not isinstance(write, df.WriteOp) or write.dest is not arg or write.wcr_kind is not None:
                continue
            maps = _maps_up_to(write, op)
            if maps is None:
                continue
            extents = [e for m in maps for e in m.static_extents]
            if None in extents or math.prod(extents) != math.prod(t.get_shape()):
                continue
            if not is_injective(list(write.indices), [iv for m in maps for iv in m.ivs], extents):
                continue
            empty = tensor.EmptyOp([], t)
            rewriter.insert(empty, InsertPoint.before(op))
            operands = list(op.operands)
            operands[first_out + k] = empty.tensor
            op.operands = operands
            rewriter.notify_op_modified(op)


def _maps_up_to(op: Operation, outer: df.MapOp) -> list[df.MapOp] | None:
    """The maps from `op`'s parent out to `outer`, when every op between is one."""
    maps: list[df.MapOp] = []
    parent = op.parent_op()
    while isinstance(parent, df.MapOp):
        maps.append(parent)
        if parent is outer:
            return maps
        parent = parent.parent_op()
    return None


def without_outputs(op: df.MapOp, drop: set[int]) -> df.MapOp:
    """A copy of `op` (not inserted) without the outputs `drop`, whose block
    arguments must be unused."""
    keep = [k for k in range(len(op.outs)) if k not in drop]
    new = df.MapOp(op.bounds, [op.outs[k] for k in keep])
    new.attributes |= op.attributes
    mapping: dict[SSAValue, SSAValue] = dict(zip(op.ivs, new.ivs))
    mapping.update((op.out_args[k], new.out_args[n]) for n, k in enumerate(keep))
    for inner in op.body.block.ops:
        clone = inner.clone(value_mapper=mapping)
        new.body.block.add_op(clone)
        mapping.update(zip(inner.results, clone.results))
    return new


class DropUnusedOutputs(RewritePattern):
    """An output whose result nobody uses, and which the body only writes, goes
    with its writes (the other outputs keep the map alive)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: df.MapOp, rewriter: PatternRewriter) -> None:
        if op.is_buffer_form:
            return
        dead = {
            k for k, (result, arg) in enumerate(zip(op.res, op.out_args))
            if not result.uses and all(isinstance(u.operation, df.WriteOp) and u.operation.dest is arg for u in arg.uses)
        }
        if not dead or len(dead) == len(op.outs):
            return
        for k in dead:
            for use in list(op.out_args[k].uses):
                rewriter.erase(use.operation)
        new = without_outputs(op, dead)
        results = iter(new.res)
        rewriter.replace(op, new, [None if k in dead else next(results) for k in range(len(op.res))])


class ReadOfBoxFill(RewritePattern):
    """A read of the result of a map that only writes one value v (defined
    outside it) into a box of its initial tensor X, at `ivs + c` over static
    extents E, reads `c <= q < c + E ? v : X[q]` instead. It is the last use,
    so the fill map goes: the adjoint of a partial overwrite (zeroing a
    gradient's interior) folds into the map that consumes it."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: df.ReadOp, rewriter: PatternRewriter) -> None:
        fill = op.source.owner
        if not isinstance(fill, df.MapOp) or fill.is_buffer_form or len(fill.outs) != 1 or not op.source.has_one_use():
            return
        if not op.indices:  # a 0-d read: nothing to guard (the fill map has no variables either)
            return
        extents = fill.static_extents
        writes = [o for o in fill.body.block.ops if isinstance(o, df.WriteOp)]
        if None in extents or len(writes) != 1 or writes[0].wcr is not None or not fill.out_args[0].has_one_use():
            return
        write = writes[0]
        if not all(isinstance(o, df.WriteOp | arith.AddiOp | arith.SubiOp | arith.ConstantOp) for o in fill.body.block.ops):
            return
        value = write.value
        inner = value.op if isinstance(value, OpResult) else None
        if isinstance(value, BlockArgument) and value.owner is fill.body.block:
            return
        offsets = translation(list(write.indices), list(fill.ivs))
        if offsets is None:
            return
        ops: list[Operation] = []

        def add(new: Operation) -> SSAValue:
            ops.append(new)
            return new.results[0]

        if inner is not None and inner.parent_op() is fill:  # a constant: recreate it at the read
            if not isinstance(inner, arith.ConstantOp):
                return
            value = add(inner.clone())

        inside: SSAValue | None = None
        for q, c, e in zip(op.indices, offsets, extents):
            for bound, predicate in ((c, "sge"), (c + e, "slt")):
                ok = add(arith.CmpiOp(q, add(arith.ConstantOp(IntegerAttr(bound, IndexType()))), predicate))
                inside = ok if inside is None else add(arith.AndIOp(inside, ok))
        old = add(df.ReadOp(fill.outs[0], list(op.indices)))
        assert inside is not None
        body = Block(arg_types=[inside.type, value.type, old.type])
        body.add_ops([select := arith.SelectOp(*body.args), df.YieldOp(select.result)])
        tasklet = df.TaskletOp([inside, value, old], [old.type], body)
        rewriter.replace(op, [*ops, tasklet], [tasklet.res[0]])
        rewriter.erase(fill)


class ReadOfSplat(RewritePattern):
    """`df.read` of a splat `arith.constant dense<v>` is the scalar `v`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: df.ReadOp, rewriter: PatternRewriter) -> None:
        source = op.source.owner
        if not isinstance(source, arith.ConstantOp):
            return
        dense = source.value
        if not isinstance(dense, DenseIntOrFPElementsAttr) or not is_splat(dense):
            return
        element = next(dense.iter_attrs())
        rewriter.replace(op, arith.ConstantOp(element, op.res.type))


class ReadOfTransposeInProduct(RewritePattern):
    """A read, in a product map (two reads multiplied into the output with
    wcr(add)), of a tensor that a map copies from X with permuted indices (a
    transpose) reads X itself: the product is then a GEMM with a transposed
    operand (`contraction-to-blas`) and the copy, a strided pass over memory
    (4 MB per weight gradient in a transformer block), goes once nothing else
    reads it. Reads of rank 2, or of rank 3 whose first (batch) index stays
    first, so that the product still matches a GEMM."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: df.ReadOp, rewriter: PatternRewriter) -> None:
        producer = op.source.owner  # first: most reads are not of a copy map's result
        if not isinstance(producer, df.MapOp) or (copied := _permuted_copy(producer, op.source)) is None:
            return
        consumer = op.parent_op()
        if not isinstance(consumer, df.MapOp) or consumer.is_buffer_form or df.product_parts(consumer) is None:
            return
        source, order = copied
        if not (len(order) == 2 or (len(order) == 3 and order[0] == 0)):
            return
        indices = list(op.indices)
        rewriter.replace(op, df.ReadOp(source, [indices[k] for k in order]))


def _permuted_copy(m: df.MapOp, result: SSAValue) -> tuple[SSAValue, list[int]] | None:
    """(X, order) when `result` is the one output of `m`, which writes every
    element at its own variables the element of X read at those variables
    permuted: result[a] = X[a[order[0]], a[order[1]], ...]."""
    if m.is_buffer_form or len(m.outs) != 1 or result is not m.res[0]:
        return None
    ops = list(islice(m.body.block.ops, 3))
    if len(ops) != 2 or not isinstance(read := ops[0], df.ReadOp) or not isinstance(write := ops[1], df.WriteOp):
        return None
    ivs = list(m.ivs)
    shape = result.type.get_shape()  # type: ignore[union-attr]
    if write.dest is not m.out_args[0] or write.wcr_kind is not None or write.value is not read.res:
        return None
    if list(write.indices) != ivs or list(m.static_extents) != list(shape) or defined_inside(read.source, m):
        return None
    indices = list(read.indices)
    if len(indices) != len(ivs) or any(i not in ivs for i in indices) or len(set(indices)) != len(ivs):
        return None
    return read.source, [ivs.index(i) for i in indices]


TASKLET_PATTERNS = (
    SinkConstantOperands(),
    DropDuplicateAndUnusedOperands(),
    ForwardOperandResults(),
    DropUnusedResults(),
)
MAP_PATTERNS = (
    EmptyIterationSpace(), UntouchedOutputs(), CopyOutputs(), InjectiveReductionToWrite(), OverwrittenInitialValues(),
    DropUnusedOutputs(),
)
READ_PATTERNS = (ReadOfSplat(), ReadOfBoxFill(), ReadOfTransposeInProduct())

df.CANONICALIZATION_PATTERNS.update({df.TaskletOp: TASKLET_PATTERNS, df.MapOp: MAP_PATTERNS, df.ReadOp: READ_PATTERNS})
