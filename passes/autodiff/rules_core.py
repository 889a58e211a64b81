"""Backward rules of the core nn ops (`dialects/nn.py`): arithmetic,
elementwise math, matmul/linear, reductions, shape ops, softmax and
nll_loss."""


from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType
from xdsl.ir import BlockArgument, Operation, SSAValue

from dfc.dialects import nn
from dfc.dialects.df_builders import elementwise, map_op, read, splat, tasklet, write
from dfc.passes.autodiff.rule_table import (
    RuleTable,
    ins,
    no_gradient,
    spread_back,
    tensor_of,
    unbroadcast,
)

CORE_BACKWARD = RuleTable()


@CORE_BACKWARD.rule("nn.add")
def _add(b, op, grads, required):
    (g,) = grads
    return [unbroadcast(b, g, tensor_of(v).get_shape()) if r else None for v, r in zip(op.operands, required)]


@CORE_BACKWARD.rule("nn.sub")
def _sub(b, op, grads, required):
    (g,) = grads
    ga = unbroadcast(b, g, tensor_of(op.lhs).get_shape()) if required[0] else None
    gb = unbroadcast(b, ins(b, nn.NegOp(g)), tensor_of(op.rhs).get_shape()) if required[1] else None
    return [ga, gb]


@CORE_BACKWARD.rule("nn.mul")
def _mul(b, op, grads, required):
    (g,) = grads
    ga = unbroadcast(b, ins(b, nn.MulOp(g, op.rhs)), tensor_of(op.lhs).get_shape()) if required[0] else None
    gb = unbroadcast(b, ins(b, nn.MulOp(g, op.lhs)), tensor_of(op.rhs).get_shape()) if required[1] else None
    return [ga, gb]


@CORE_BACKWARD.rule("nn.div")
def _div(b, op, grads, required):
    (g,) = grads
    ga = unbroadcast(b, ins(b, nn.DivOp(g, op.rhs)), tensor_of(op.lhs).get_shape()) if required[0] else None
    gb = None
    if required[1]:  # -g * (a / b) / b
        gy = ins(b, nn.DivOp(ins(b, nn.MulOp(g, op.result)), op.rhs))
        gb = unbroadcast(b, ins(b, nn.NegOp(gy)), tensor_of(op.rhs).get_shape())
    return [ga, gb]


@CORE_BACKWARD.rule("nn.neg")
def _neg(b, op, grads, required):
    return [ins(b, nn.NegOp(grads[0]))]


@CORE_BACKWARD.rule("nn.exp")
def _exp(b, op, grads, required):
    return [ins(b, nn.MulOp(grads[0], op.result))]


@CORE_BACKWARD.rule("nn.log")
def _log(b, op, grads, required):
    return [ins(b, nn.DivOp(grads[0], op.input))]


def _pointwise(b: Builder, op: Operation, g: SSAValue, x: SSAValue, fn) -> SSAValue:
    return elementwise(b, tensor_of(op.results[0]), [g, x], lambda s, a: fn(s, a[0], a[1]))


@CORE_BACKWARD.rule("nn.tanh")
def _tanh(b, op, grads, required):
    one = lambda s, y: s.const(1.0, y.type)  # noqa: E731
    return [_pointwise(b, op, grads[0], op.result, lambda s, g, y: s.mul(g, s.sub(one(s, y), s.mul(y, y))))]


@CORE_BACKWARD.rule("nn.sqrt")
def _sqrt(b, op, grads, required):
    return [_pointwise(b, op, grads[0], op.result, lambda s, g, y: s.div(g, s.add(y, y)))]


@CORE_BACKWARD.rule("nn.relu")
def _relu(b, op, grads, required):
    """g where x > 0 or x is NaN (PyTorch's threshold_backward), else 0 (relu'(0) = 0).

    Tested on the result y = relu(x), as PyTorch does: y > 0 or NaN exactly
    when x is, and the backward then keeps y alive instead of x (one saved
    tensor fewer when the forward keeps y anyway)."""

    def rule(s, g, y):
        return s.select(s.gt_or_nan(y, s.const(0.0, y.type)), g, s.const(0.0, g.type))

    return [_pointwise(b, op, grads[0], op.result, rule)]


@CORE_BACKWARD.rule("nn.sigmoid")
def _sigmoid(b, op, grads, required):
    return [
        _pointwise(
            b, op, grads[0], op.result, lambda s, g, y: s.mul(s.mul(g, y), s.sub(s.const(1.0, y.type), y))
        )
    ]


def _transpose(b: Builder, v: SSAValue) -> SSAValue:
    return ins(b, nn.TransposeOp(v, [1, 0]))


@CORE_BACKWARD.rule("nn.matmul")
def _matmul(b, op, grads, required):
    (g,) = grads
    ga = ins(b, nn.MatmulOp(g, _transpose(b, op.rhs))) if required[0] else None
    gb = ins(b, nn.MatmulOp(_transpose(b, op.lhs), g)) if required[1] else None
    return [ga, gb]


@CORE_BACKWARD.rule("nn.linear")
def _linear(b, op, grads, required):
    (g,) = grads
    gx = ins(b, nn.MatmulOp(g, op.weight)) if required[0] else None
    gw = ins(b, nn.MatmulOp(_transpose(b, g), op.input)) if required[1] else None
    gbias = ins(b, nn.ReduceOp(g, "sum", [0])) if required[2] else None
    return [gx, gw, gbias]


@CORE_BACKWARD.rule("nn.reduce")
def _reduce(b, op, grads, required):
    assert isinstance(op, nn.ReduceOp)
    (g,) = grads
    shape, axes, kind = tensor_of(op.input).get_shape(), op.reduced_axes, op.kind.data
    if any(d < 0 for d in shape):
        return None  # a data-dependent size (nn.nonzero's): the expansion's maps are differentiated
    spread = spread_back(b, g, shape, axes)
    if kind == "sum":
        return [spread]
    if kind == "mean":
        count = 1
        for a in axes:
            count *= shape[a]
        return [elementwise(b, tensor_of(op.input), [spread], lambda s, v: s.div(v[0], s.const(float(count), v[0].type)))]
    # max/min: the gradient goes to the extremal elements, split equally among ties
    extreme = spread_back(b, op.result, shape, axes)
    hits = elementwise(
        b, tensor_of(op.input), [op.input, extreme],
        lambda s, v: s.select(s.eq(v[0], v[1]), s.const(1.0, v[0].type), s.const(0.0, v[0].type)),
    )
    ties = spread_back(b, ins(b, nn.ReduceOp(hits, "sum", axes, keepdims=True)), shape, axes)
    return [elementwise(b, tensor_of(op.input), [spread, hits, ties], lambda s, v: s.div(s.mul(v[0], v[1]), v[2]))]


@CORE_BACKWARD.rule("nn.broadcast")
def _broadcast(b, op, grads, required):
    return [unbroadcast(b, grads[0], tensor_of(op.input).get_shape())]


@CORE_BACKWARD.rule("nn.transpose")
def _transpose_rule(b, op, grads, required):
    assert isinstance(op, nn.TransposeOp)
    perm = list(op.permutation.get_values())
    inverse = [perm.index(k) for k in range(len(perm))]
    return [ins(b, nn.TransposeOp(grads[0], inverse))]


@CORE_BACKWARD.rule("nn.reshape")
def _reshape(b, op, grads, required):
    return [ins(b, nn.ReshapeOp(grads[0], tensor_of(op.input).get_shape()))]


@CORE_BACKWARD.rule("nn.softmax")
def _softmax(b, op, grads, required):
    assert isinstance(op, nn.SoftmaxOp)
    (g,) = grads
    y, axis = op.result, op.normalized_axis
    dot = ins(b, nn.ReduceOp(ins(b, nn.MulOp(g, y)), "sum", [axis], keepdims=True))
    return [ins(b, nn.MulOp(y, ins(b, nn.SubOp(g, dot))))]


@CORE_BACKWARD.rule("nn.log_softmax")
def _log_softmax(b, op, grads, required):
    assert isinstance(op, nn.LogSoftmaxOp)
    (g,) = grads
    total = ins(b, nn.ReduceOp(g, "sum", [op.normalized_axis], keepdims=True))
    return [ins(b, nn.SubOp(g, ins(b, nn.MulOp(ins(b, nn.ExpOp(op.result)), total))))]


@CORE_BACKWARD.rule("nn.nll_loss")
def _nll_loss(b, op, grads, required):
    """d input[i, c] = -g / N where c == labels[i], else 0."""
    assert isinstance(op, nn.NllLossOp)
    (g,) = grads
    t = tensor_of(op.input)
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


CORE_BACKWARD.rule("nn.constant", "nn.full")(no_gradient)
