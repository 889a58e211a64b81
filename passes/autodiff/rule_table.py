"""The table idiom of backward rules: each op family's rules module fills one
`RuleTable` with a decorator, and `rules.py` merges the tables.

A rule builds the gradient IR of one forward op at a builder's insertion point:

    CORE_BACKWARD = RuleTable()

    @CORE_BACKWARD.rule("nn.exp")
    def exp_backward(b, op, grads, required):
        (g,) = grads                      # one gradient per result (never None)
        return [mul(b, g, op.result)]     # one per operand; None = no gradient

`required[k]` says whether operand k's gradient is wanted; a rule may skip
building it (return None). A rule that returns None instead of a list (before
building anything) does not cover that instance: the op is differentiated
through its pure expansion. This module also holds the helpers rules share.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from dfc.dialects import nn

BackwardRule = Callable[[Builder, Operation, Sequence[SSAValue], Sequence[bool]], Sequence[SSAValue | None] | None]


class RuleTable(dict[str, BackwardRule]):
    """Backward rules keyed by op name."""

    def rule(self, *op_names: str) -> Callable[[BackwardRule], BackwardRule]:
        """Decorator: `rule` is the backward rule of ops named `op_names`."""

        def register(rule: BackwardRule) -> BackwardRule:
            for name in op_names:
                self[name] = rule
            return rule

        return register


def no_gradient(b, op, grads, required):
    """The rule of ops whose operands get no gradient (constants, comparisons, integer ops)."""
    return [None] * len(op.operands)


def tensor_of(v: SSAValue) -> TensorType:
    assert isinstance(v.type, TensorType)
    return v.type


def ins(b: Builder, op: Operation) -> SSAValue:
    return b.insert(op).results[0]


def unbroadcast(b: Builder, g: SSAValue, shape: Sequence[int]) -> SSAValue:
    """Sum `g` over the dimensions numpy broadcasting added to reach its shape."""
    g_shape = tensor_of(g).get_shape()
    lead = len(g_shape) - len(shape)
    axes = list(range(lead)) + [lead + k for k, d in enumerate(shape) if d == 1 and g_shape[lead + k] != 1]
    if axes:
        g = ins(b, nn.ReduceOp(g, "sum", axes, keepdims=True))
    if tensor_of(g).get_shape() != tuple(shape):
        g = ins(b, nn.ReshapeOp(g, shape))
    return g


def with_kept_dims(b: Builder, y: SSAValue, x_shape: Sequence[int], axes: Sequence[int]) -> SSAValue:
    """`y` (reduced over `axes`) reshaped to keep those axes as size 1."""
    shape = [1 if k in axes else d for k, d in enumerate(x_shape)]
    return y if tensor_of(y).get_shape() == tuple(shape) else ins(b, nn.ReshapeOp(y, shape))


def spread_back(b: Builder, g: SSAValue, x_shape: Sequence[int], axes: Sequence[int]) -> SSAValue:
    """The gradient of a reduction over `axes`, broadcast back to `x_shape`."""
    return ins(b, nn.BroadcastOp(with_kept_dims(b, g, x_shape, axes), x_shape))


