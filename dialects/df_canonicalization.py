"""Canonicalization patterns of the df dialect, run by xDSL's `canonicalize`.

Tasklets: constant operands move into the body (where arith folding sees them),
duplicate and unused operands disappear, results that merely forward an operand
are replaced by it, unused results are no longer yielded. Maps: a map with an empty iteration space yields its initial
values, an output nobody touches inside the body is its initial value. Reads of
splat constants become scalar constants.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.ir import Attribute, BlockArgument, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from dialects import df


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
    rewriter.replace_op(op, new)


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
            rewriter.insert_op(inner, InsertPoint.at_start(block))
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
        rewriter.replace_op(terminator, df.YieldOp(*(terminator.values[k] for k in used)))
        body = op.detach_region(op.body)
        new = df.TaskletOp(op.inputs, [op.res[k].type for k in used], body)
        new.attributes |= op.attributes
        results: list[SSAValue | None] = [None] * len(op.res)
        for position, k in enumerate(used):
            results[k] = new.res[position]
        rewriter.replace_op(op, new, results)


class EmptyIterationSpace(RewritePattern):
    """A map with a zero bound runs no iteration: its results are its inits."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: df.MapOp, rewriter: PatternRewriter) -> None:
        if 0 in op.static_extents:
            rewriter.replace_op(op, [], list(op.outs))


class UntouchedOutputs(RewritePattern):
    """An output block argument without uses leaves the result equal to its init."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: df.MapOp, rewriter: PatternRewriter) -> None:
        for init, arg, result in zip(op.outs, op.out_args, op.res):
            if not arg.uses and result.uses:
                rewriter.replace_all_uses_with(result, init)


class ReadOfSplat(RewritePattern):
    """`df.read` of a splat `arith.constant dense<v>` is the scalar `v`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: df.ReadOp, rewriter: PatternRewriter) -> None:
        source = op.source.owner
        if not isinstance(source, arith.ConstantOp):
            return
        dense = source.value
        if not isinstance(dense, DenseIntOrFPElementsAttr) or not dense.is_splat():
            return
        element = next(dense.iter_attrs())
        rewriter.replace_op(op, arith.ConstantOp(element, op.res.type))


TASKLET_PATTERNS = (
    SinkConstantOperands(),
    DropDuplicateAndUnusedOperands(),
    ForwardOperandResults(),
    DropUnusedResults(),
)
MAP_PATTERNS = (EmptyIterationSpace(), UntouchedOutputs())
READ_PATTERNS = (ReadOfSplat(),)
