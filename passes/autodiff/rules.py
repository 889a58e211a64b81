"""Backward rules of library ops, and the API to register more.

A rule builds the gradient IR of one forward op at a builder's insertion point:

    @register_backward("nn.exp")
    def exp_backward(b, op, grads, required):
        (g,) = grads                      # one gradient per result (never None)
        return [mul(b, g, op.result)]     # one per operand; None = no gradient

`required[k]` says whether operand k's gradient is wanted; a rule may skip
building it (return None). Ops without a rule are differentiated through
their pure expansion (`dialects.nn_expand`), and so is an op whose rule
returns None instead of a list (before building anything): the rule does not
cover that instance.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue

from dfc.dialects import nn
from dfc.dialects.df_builders import elementwise, map_op, read, splat, tasklet, write

BackwardRule = Callable[[Builder, Operation, Sequence[SSAValue], Sequence[bool]], Sequence[SSAValue | None] | None]

BACKWARD_RULES: dict[str, BackwardRule] = {}


def register_backward(op_name: str) -> Callable[[BackwardRule], BackwardRule]:
    """Decorator registering `rule` as the backward rule of ops named `op_name`."""

    def register(rule: BackwardRule) -> BackwardRule:
        BACKWARD_RULES[op_name] = rule
        return rule

    return register


def _t(v: SSAValue) -> TensorType:
    assert isinstance(v.type, TensorType)
    return v.type


def _ins(b: Builder, op: Operation) -> SSAValue:
    return b.insert(op).results[0]


def unbroadcast(b: Builder, g: SSAValue, shape: Sequence[int]) -> SSAValue:
    """Sum `g` over the dimensions numpy broadcasting added to reach its shape."""
    g_shape = _t(g).get_shape()
    lead = len(g_shape) - len(shape)
    axes = list(range(lead)) + [lead + k for k, d in enumerate(shape) if d == 1 and g_shape[lead + k] != 1]
    if axes:
        g = _ins(b, nn.ReduceOp(g, "sum", axes, keepdims=True))
    if _t(g).get_shape() != tuple(shape):
        g = _ins(b, nn.ReshapeOp(g, shape))
    return g


def _keepdims(b: Builder, y: SSAValue, x_shape: Sequence[int], axes: Sequence[int]) -> SSAValue:
    """`y` (reduced over `axes`) reshaped to keep those axes as size 1."""
    shape = [1 if k in axes else d for k, d in enumerate(x_shape)]
    return y if _t(y).get_shape() == tuple(shape) else _ins(b, nn.ReshapeOp(y, shape))


def _spread(b: Builder, g: SSAValue, x_shape: Sequence[int], axes: Sequence[int]) -> SSAValue:
    """The gradient of a reduction over `axes`, broadcast back to `x_shape`."""
    return _ins(b, nn.BroadcastOp(_keepdims(b, g, x_shape, axes), x_shape))


@register_backward("nn.add")
def _add(b, op, grads, required):
    (g,) = grads
    return [unbroadcast(b, g, _t(v).get_shape()) if r else None for v, r in zip(op.operands, required)]


@register_backward("nn.sub")
def _sub(b, op, grads, required):
    (g,) = grads
    ga = unbroadcast(b, g, _t(op.lhs).get_shape()) if required[0] else None
    gb = unbroadcast(b, _ins(b, nn.NegOp(g)), _t(op.rhs).get_shape()) if required[1] else None
    return [ga, gb]


@register_backward("nn.mul")
def _mul(b, op, grads, required):
    (g,) = grads
    ga = unbroadcast(b, _ins(b, nn.MulOp(g, op.rhs)), _t(op.lhs).get_shape()) if required[0] else None
    gb = unbroadcast(b, _ins(b, nn.MulOp(g, op.lhs)), _t(op.rhs).get_shape()) if required[1] else None
    return [ga, gb]


@register_backward("nn.div")
def _div(b, op, grads, required):
    (g,) = grads
    ga = unbroadcast(b, _ins(b, nn.DivOp(g, op.rhs)), _t(op.lhs).get_shape()) if required[0] else None
    gb = None
    if required[1]:  # -g * (a / b) / b
        gy = _ins(b, nn.DivOp(_ins(b, nn.MulOp(g, op.result)), op.rhs))
        gb = unbroadcast(b, _ins(b, nn.NegOp(gy)), _t(op.rhs).get_shape())
    return [ga, gb]


@register_backward("nn.neg")
def _neg(b, op, grads, required):
    return [_ins(b, nn.NegOp(grads[0]))]


@register_backward("nn.exp")
def _exp(b, op, grads, required):
    return [_ins(b, nn.MulOp(grads[0], op.result))]


@register_backward("nn.log")
def _log(b, op, grads, required):
    return [_ins(b, nn.DivOp(grads[0], op.input))]


def _pointwise(b: Builder, op: Operation, g: SSAValue, x: SSAValue, fn) -> SSAValue:
    return elementwise(b, _t(op.results[0]), [g, x], lambda s, a: fn(s, a[0], a[1]))


@register_backward("nn.tanh")
def _tanh(b, op, grads, required):
    one = lambda s, y: s.const(1.0, y.type)  # noqa: E731
    return [_pointwise(b, op, grads[0], op.result, lambda s, g, y: s.mul(g, s.sub(one(s, y), s.mul(y, y))))]


@register_backward("nn.sqrt")
def _sqrt(b, op, grads, required):
    return [_pointwise(b, op, grads[0], op.result, lambda s, g, y: s.div(g, s.add(y, y)))]


@register_backward("nn.relu")
def _relu(b, op, grads, required):
    """g where x > 0 or x is NaN (PyTorch's threshold_backward), else 0 (relu'(0) = 0).

    Tested on the result y = relu(x), as PyTorch does: y > 0 or NaN exactly
    when x is, and the backward then keeps y alive instead of x (one saved
    tensor fewer when the forward keeps y anyway)."""

    def rule(s, g, y):
        return s.select(s.gt_or_nan(y, s.const(0.0, y.type)), g, s.const(0.0, g.type))

    return [_pointwise(b, op, grads[0], op.result, rule)]


@register_backward("nn.sigmoid")
def _sigmoid(b, op, grads, required):
    return [
        _pointwise(
            b, op, grads[0], op.result, lambda s, g, y: s.mul(s.mul(g, y), s.sub(s.const(1.0, y.type), y))
        )
    ]


def _transpose(b: Builder, v: SSAValue) -> SSAValue:
    return _ins(b, nn.TransposeOp(v, [1, 0]))


@register_backward("nn.matmul")
def _matmul(b, op, grads, required):
    (g,) = grads
    ga = _ins(b, nn.MatmulOp(g, _transpose(b, op.rhs))) if required[0] else None
    gb = _ins(b, nn.MatmulOp(_transpose(b, op.lhs), g)) if required[1] else None
    return [ga, gb]


@register_backward("nn.linear")
def _linear(b, op, grads, required):
    (g,) = grads
    gx = _ins(b, nn.MatmulOp(g, op.weight)) if required[0] else None
    gw = _ins(b, nn.MatmulOp(_transpose(b, g), op.input)) if required[1] else None
    gbias = _ins(b, nn.ReduceOp(g, "sum", [0])) if required[2] else None
    return [gx, gw, gbias]


@register_backward("nn.reduce")
def _reduce(b, op, grads, required):
    assert isinstance(op, nn.ReduceOp)
    (g,) = grads
    shape, axes, kind = _t(op.input).get_shape(), op.reduced_axes, op.kind.data
    spread = _spread(b, g, shape, axes)
    if kind == "sum":
        return [spread]
    if kind == "mean":
        count = 1
        for a in axes:
            count *= shape[a]
        return [elementwise(b, _t(op.input), [spread], lambda s, v: s.div(v[0], s.const(float(count), v[0].type)))]
    # max/min: the gradient goes to the extremal elements, split equally among ties
    extreme = _spread(b, op.result, shape, axes)
    hits = elementwise(
        b, _t(op.input), [op.input, extreme],
        lambda s, v: s.select(s.eq(v[0], v[1]), s.const(1.0, v[0].type), s.const(0.0, v[0].type)),
    )
    ties = _spread(b, _ins(b, nn.ReduceOp(hits, "sum", axes, keepdims=True)), shape, axes)
    return [elementwise(b, _t(op.input), [spread, hits, ties], lambda s, v: s.div(s.mul(v[0], v[1]), v[2]))]


@register_backward("nn.broadcast")
def _broadcast(b, op, grads, required):
    return [unbroadcast(b, grads[0], _t(op.input).get_shape())]


@register_backward("nn.transpose")
def _transpose_rule(b, op, grads, required):
    assert isinstance(op, nn.TransposeOp)
    perm = list(op.permutation.get_values())
    inverse = [perm.index(k) for k in range(len(perm))]
    return [_ins(b, nn.TransposeOp(grads[0], inverse))]


@register_backward("nn.reshape")
def _reshape(b, op, grads, required):
    return [_ins(b, nn.ReshapeOp(grads[0], _t(op.input).get_shape()))]


@register_backward("nn.softmax")
def _softmax(b, op, grads, required):
    assert isinstance(op, nn.SoftmaxOp)
    (g,) = grads
    y, axis = op.result, op.normalized_axis
    dot = _ins(b, nn.ReduceOp(_ins(b, nn.MulOp(g, y)), "sum", [axis], keepdims=True))
    return [_ins(b, nn.MulOp(y, _ins(b, nn.SubOp(g, dot))))]


@register_backward("nn.log_softmax")
def _log_softmax(b, op, grads, required):
    assert isinstance(op, nn.LogSoftmaxOp)
    (g,) = grads
    total = _ins(b, nn.ReduceOp(g, "sum", [op.normalized_axis], keepdims=True))
    return [_ins(b, nn.SubOp(g, _ins(b, nn.MulOp(_ins(b, nn.ExpOp(op.result)), total))))]


@register_backward("nn.nll_loss")
def _nll_loss(b, op, grads, required):
    """d input[i, c] = -g / N where c == labels[i], else 0."""
    assert isinstance(op, nn.NllLossOp)
    (g,) = grads
    t = _t(op.input)
    n, classes = t.get_shape()

    def build(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        i, c = ivs
        label = mb.insert(arith.IndexCastOp(read(mb, op.labels, [i]), IndexType())).result
        hit = mb.insert(arith.CmpiOp(label, c, "eq")).result
        seed = read(mb, g, [])

        def value(s, a):
            share = s.div(s.neg(a[0]), s.const(float(n), a[0].type))
            return s.select(a[1], share, s.const(0.0, a[0].type))

        write(mb, tasklet(mb, [seed, hit], t.element_type, value), outs[0], [i, c])

    return [map_op(b, [n, classes], [splat(b, t, 0.0)], build).res[0], None]


def _no_gradient(b, op, grads, required):
    return [None] * len(op.operands)


for _name in ("nn.constant", "nn.full"):
    BACKWARD_RULES[_name] = _no_gradient


# Rules of the op families in modules of their own register on import.
from dfc.passes.autodiff import (  # noqa: E402, F401
    rules_contract, rules_conv, rules_elementwise, rules_indexing, rules_shape, rules_window,
)
