"""Typed builders for df programs: maps, tasklets and the usual patterns.

A builder inserts at a `Builder`'s insertion point and returns SSA values, so
an expansion reads like the math it builds:

    out = elementwise(b, out_type, [x, y], lambda t, a: t.add(a[0], a[1]))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import arith, math, tensor
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, BlockArgument, SSAValue
from xdsl.rewriter import InsertPoint

from dfc.dialects import df
from dfc.dialects.xdsl_fixes import splat_attr


@dataclass
class Scalar:
    """Builds arith/math ops on scalars inside a tasklet body."""

    b: Builder

    def const(self, value: float, t: Attribute) -> SSAValue:
        return self.b.insert(arith.ConstantOp(FloatAttr(value, t))).result  # type: ignore[arg-type]

    def add(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.b.insert(arith.AddfOp(x, y)).result

    def sub(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.b.insert(arith.SubfOp(x, y)).result

    def mul(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.b.insert(arith.MulfOp(x, y)).result

    def div(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.b.insert(arith.DivfOp(x, y)).result

    def neg(self, x: SSAValue) -> SSAValue:
        return self.b.insert(arith.NegfOp(x)).result

    def exp(self, x: SSAValue) -> SSAValue:
        return self.b.insert(math.ExpOp(x)).result

    def log(self, x: SSAValue) -> SSAValue:
        return self.b.insert(math.LogOp(x)).result

    def tanh(self, x: SSAValue) -> SSAValue:
        return self.b.insert(math.TanhOp(x)).result

    def sqrt(self, x: SSAValue) -> SSAValue:
        return self.b.insert(math.SqrtOp(x)).result

    def gt(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.b.insert(arith.CmpfOp(x, y, "ogt")).result

    def gt_or_nan(self, x: SSAValue, y: SSAValue) -> SSAValue:
        """`x > y`, or either is NaN (unordered greater-than)."""
        return self.b.insert(arith.CmpfOp(x, y, "ugt")).result

    def eq(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.b.insert(arith.CmpfOp(x, y, "oeq")).result

    def select(self, c: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.b.insert(arith.SelectOp(c, x, y)).result


TaskletBody = Callable[[Scalar, Sequence[BlockArgument]], SSAValue]
MapBody = Callable[[Builder, Sequence[BlockArgument], Sequence[BlockArgument]], None]


def tasklet(b: Builder, inputs: Sequence[SSAValue], result_type: Attribute, body: TaskletBody) -> SSAValue:
    """A one-result tasklet computing `body(scalar builder, block args)`."""
    block = Block(arg_types=[v.type for v in inputs])
    inner = Builder(InsertPoint.at_end(block))
    inner.insert(df.YieldOp(body(Scalar(inner), block.args)))
    return b.insert(df.TaskletOp(inputs, [result_type], block)).res[0]


def map_op(b: Builder, bounds: Sequence[int | SSAValue], outs: Sequence[SSAValue], body: MapBody) -> df.MapOp:
    """A df.map over `bounds` whose body `body(builder, ivs, out_args)` builds."""
    op = b.insert(df.MapOp(bounds, outs))
    body(Builder(InsertPoint.at_end(op.body.block)), op.ivs, op.out_args)
    return op


def index_const(b: Builder, value: int) -> SSAValue:
    return b.insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).result


def empty(b: Builder, t: TensorType) -> SSAValue:
    """An uninitialised tensor (every element is written before it is read)."""
    return b.insert(tensor.EmptyOp([], t)).tensor


def splat(b: Builder, t: TensorType, value: float | int) -> SSAValue:
    """A constant tensor with every element `value`, in the splat form
    (`xdsl_fixes.splat_attr`: one element held, whatever the size of `t`)."""
    return b.insert(arith.ConstantOp(splat_attr(t, value))).result


def broadcast_indices(b: Builder, source: TensorType, ivs: Sequence[SSAValue]) -> list[SSAValue]:
    """Indices into `source` for the numpy-broadcast position `ivs` of a larger shape."""
    offset = len(ivs) - source.get_num_dims()
    zero: SSAValue | None = None
    out: list[SSAValue] = []
    for k, d in enumerate(source.get_shape()):
        target = ivs[offset + k]
        if d == 1 and not _unit_bound(target):
            zero = zero or index_const(b, 0)
            out.append(zero)
        else:
            out.append(target)
    return out


def _unit_bound(iv: SSAValue) -> bool:
    """Whether `iv` is a map variable of extent 1 (then it is already 0)."""
    if not isinstance(iv, BlockArgument) or not isinstance(iv.owner.parent_op(), df.MapOp):
        return False
    m = iv.owner.parent_op()
    assert isinstance(m, df.MapOp)
    return iv.index < m.rank and m.bounds[iv.index] == 1


def read(b: Builder, source: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
    return b.insert(df.ReadOp(source, indices)).res


def write(b: Builder, value: SSAValue, dest: SSAValue, indices: Sequence[SSAValue], wcr: str | None = None) -> None:
    b.insert(df.WriteOp(value, dest, indices, wcr))


def elementwise(b: Builder, out_type: TensorType, inputs: Sequence[SSAValue], body: TaskletBody) -> SSAValue:
    """out[idx] = body(inputs broadcast to idx), over the shape of `out_type`."""

    def build(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        values = []
        for x in inputs:
            assert isinstance(x.type, TensorType)
            values.append(read(mb, x, broadcast_indices(mb, x.type, ivs)))
        write(mb, tasklet(mb, values, out_type.element_type, body), outs[0], ivs)

    return map_op(b, list(out_type.get_shape()), [empty(b, out_type)], build).res[0]


REDUCE_IDENTITY = {"add": 0.0, "mul": 1.0, "max": float("-inf"), "min": float("inf")}


def reduce(b: Builder, x: SSAValue, axes: Sequence[int], kind: str, keepdims: bool) -> SSAValue:
    """Reduce `x` over `axes` with the wcr `kind` (add, mul, max, min)."""
    t = x.type
    assert isinstance(t, TensorType)
    shape = list(t.get_shape())
    out_shape = [1 if k in axes else d for k, d in enumerate(shape)] if keepdims else [
        d for k, d in enumerate(shape) if k not in axes
    ]
    out_type = TensorType(t.element_type, out_shape)
    init = splat(b, out_type, REDUCE_IDENTITY[kind])

    def build(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        v = read(mb, x, ivs)
        if keepdims:
            zero = index_const(mb, 0) if axes else None
            idx = [zero if k in axes else iv for k, iv in enumerate(ivs)]
        else:
            idx = [iv for k, iv in enumerate(ivs) if k not in axes]
        write(mb, v, outs[0], idx, kind)  # type: ignore[arg-type]

    return map_op(b, sizes(b, x), [init], build).res[0]


def sizes(b: Builder, x: SSAValue) -> list[int | SSAValue]:
    """The sizes of tensor `x`: static ones as ints, dynamic ones read with `tensor.dim`."""
    assert isinstance(x.type, TensorType)
    return [d if d >= 0 else b.insert(tensor.DimOp(x, index_const(b, k))).result for k, d in enumerate(x.type.get_shape())]
