"""Typed builders of nn's elementwise arithmetic, shared by the rewrites that compose nn ops.

    class Converter(NNArithmetic):   # provides ins(op) -> op's result
        ...
        y = self.add(self.mul(x, x), self.num(1.0, x))

`NNArithmetic` is a mixin: the class it is mixed into inserts ops with `ins`
(the StableHLO converter's chlo and complex rules, the ONNX importer's
elementwise handlers). Every value is a tensor; a 0-d `num` broadcasts.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, TensorType
from xdsl.ir import Operation, SSAValue

from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne

__all__ = ["NNArithmetic"]


class NNArithmetic:
    """nn elementwise ops inserted by `ins`."""

    ins: Callable[[Operation], SSAValue]

    def num(self, value: float, like: SSAValue) -> SSAValue:
        """A 0-d constant `value` of `like`'s element type (float or integer)."""
        assert isinstance(like.type, TensorType)
        e = like.type.element_type
        attr = FloatAttr(value, e) if isinstance(e, AnyFloat) else IntegerAttr(int(value), e)
        return self.ins(nn.FullOp(attr, []))  # type: ignore[arg-type]

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.ins(nn.AddOp(a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.ins(nn.SubOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.ins(nn.MulOp(a, b))

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.ins(nn.DivOp(a, b))

    def neg(self, a: SSAValue) -> SSAValue:
        return self.ins(nn.NegOp(a))

    def fn(self, op: type[Operation], *xs: SSAValue) -> SSAValue:
        """`op(*xs)`'s result (a unary or binary nn op given by its class)."""
        return self.ins(op(*xs))

    def cmp(self, a: SSAValue, b: SSAValue, direction: str) -> SSAValue:
        """`a direction b` (EQ, NE, LT, LE, GT, GE) as i1."""
        return self.ins(nne.CompareOp(a, b, direction))

    def where(self, c: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.ins(nne.SelectOp(c, a, b))

    def both(self, p: SSAValue, q: SSAValue) -> SSAValue:
        return self.ins(nne.AndOp(p, q))

    def either(self, p: SSAValue, q: SSAValue) -> SSAValue:
        return self.ins(nne.OrOp(p, q))
