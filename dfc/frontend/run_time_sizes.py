"""The run-time size of a tensor's dynamic (`?`) dimension, as one index SSA value per size.

A frontend shape holds sizes as `Affine`s, so two arrays broadcast only where
their sizes are equal expressions. A run-time size is therefore traced to the
value it was made from, so that sizes equal by construction are the same
symbol: a `tensor.empty`'s size operand, a `df.map`'s output, the points of
an `nn.gather_points`, the input of an `nn.argsort` and the init of an `scf.for`'s
carried tensor whose body yields one of the size it receives. Any other `?` dimension gets a
`tensor.dim` placed right after the tensor's definition (it dominates every
use), reused by later requests.
"""

from __future__ import annotations

from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr, TensorType
from xdsl.ir import Block, OpResult, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from dfc.dialects import df
from dfc.dialects.nn_dynamic import GatherPointsOp
from dfc.dialects.nn_sort import ArgsortOp


def _traced(value: SSAValue, k: int) -> SSAValue | None:
    """The value dimension `k` of `value` has by construction, where its definition says."""
    if not isinstance(value, OpResult):
        return None
    op = value.op
    if isinstance(op, tensor.EmptyOp):
        shape = value.type.get_shape()  # type: ignore[attr-defined]
        return op.dynamic_sizes[sum(1 for d in shape[:k] if d == DYNAMIC_INDEX)]
    if isinstance(op, df.MapOp):
        return run_time_size(op.outs[value.index], k)
    if isinstance(op, GatherPointsOp):  # the operand's dimensions, those [axis, axis + K) replaced by the points'
        axis, points = op.axis.value.data, op.indices.type.get_shape()  # type: ignore[attr-defined]
        p = len(points) - 1
        if axis <= k < axis + p:
            return run_time_size(op.indices, k - axis)
        return run_time_size(op.operand, k if k < axis else k - p + points[-1])
    if isinstance(op, ArgsortOp) and (op.k is None or k != op.normalized_axis):
        return run_time_size(op.input, k)
    if isinstance(op, scf.ForOp):  # a carried tensor whose body keeps its size (by induction: the init's)
        arg, yielded = op.body.block.args[value.index + 1], op.body.block.last_op.operands[value.index]
        if run_time_size(yielded, k) is run_time_size(arg, k):
            return run_time_size(op.iter_args[value.index], k)
    return None


def run_time_size(value: SSAValue, k: int) -> SSAValue:
    """An index value holding dimension `k` (dynamic) of the tensor `value`, defined where it dominates every
    use of `value`."""
    t = value.type
    assert isinstance(t, TensorType) and t.get_shape()[k] == DYNAMIC_INDEX
    traced = _traced(value, k)
    if traced is not None:
        return traced
    for use in value.uses:
        op = use.operation
        if (isinstance(op, tensor.DimOp) and op.source is value and isinstance(c := op.index.owner, arith.ConstantOp)
                and c.value.value.data == k and op.parent_block() is _block(value)):  # type: ignore[attr-defined]
            return op.result
    const = arith.ConstantOp(IntegerAttr(k, IndexType()))
    dim = tensor.DimOp(value, const.result)
    where = InsertPoint.after(value.op) if isinstance(value, OpResult) else InsertPoint.at_start(value.owner)
    Rewriter.insert_op([const, dim], where)
    return dim.result


def _block(value: SSAValue) -> Block | None:
    return value.op.parent_block() if isinstance(value, OpResult) else value.owner  # type: ignore[return-value]
