"""Pure expansions of nn ops into df maps and tasklets.

`expand(b, op)` builds, at `b`'s insertion point, df code computing `op`'s
result and returns that value. The `expand-library` pass applies it to every
nn op; autodiff falls back to it for ops without a backward rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import IndexType, IntegerType, TensorType, i64
from xdsl.ir import BlockArgument, Operation, SSAValue

from dfc.dialects import nn
from dfc.dialects.df_builders import (
    Scalar,
    elementwise,
    empty,
    index_const,
    map_op,
    read,
    reduce,
    splat,
    tasklet,
    write,
)
from dfc.dialects.nn_expand_contract import CONTRACT_EXPANSIONS
from dfc.dialects.nn_expand_conv import CONV_EXPANSIONS
from dfc.dialects.nn_expand_dynamic import DYNAMIC_EXPANSIONS
from dfc.dialects.nn_expand_elementwise import ELEMENTWISE_EXPANSIONS, integer_binary
from dfc.dialects.nn_expand_fft import FFT_EXPANSIONS
from dfc.dialects.nn_expand_indexing import INDEXING_EXPANSIONS
from dfc.dialects.nn_expand_random import RANDOM_EXPANSIONS
from dfc.dialects.nn_expand_sample import SAMPLE_EXPANSIONS
from dfc.dialects.nn_expand_shape import SHAPE_EXPANSIONS, affine, row_major_strides
from dfc.dialects.nn_expand_sort_dynamic import SORT_EXPANSIONS
from dfc.dialects.nn_expand_special import SPECIAL_EXPANSIONS
from dfc.dialects.nn_expand_window import WINDOW_EXPANSIONS

Expansion = Callable[[Builder, Operation], SSAValue]

_UNARY: dict[type[Operation], Callable[[Scalar, SSAValue], SSAValue]] = {
    nn.NegOp: lambda s, x: s.neg(x),
    nn.ExpOp: lambda s, x: s.exp(x),
    nn.LogOp: lambda s, x: s.log(x),
    nn.TanhOp: lambda s, x: s.tanh(x),
    nn.SqrtOp: lambda s, x: s.sqrt(x),
    # NaN passes through, as in PyTorch.
    nn.ReluOp: lambda s, x: s.select(s.gt_or_nan(x, s.const(0.0, x.type)), x, s.const(0.0, x.type)),
    nn.SigmoidOp: lambda s, x: s.div(
        s.const(1.0, x.type), s.add(s.const(1.0, x.type), s.exp(s.neg(x)))
    ),
}

_BINARY: dict[type[Operation], Callable[[Scalar, SSAValue, SSAValue], SSAValue]] = {
    nn.AddOp: Scalar.add,
    nn.SubOp: Scalar.sub,
    nn.MulOp: Scalar.mul,
    nn.DivOp: Scalar.div,
}


def _type(v: SSAValue) -> TensorType:
    assert isinstance(v.type, TensorType)
    return v.type


def _unary(b: Builder, op: Operation) -> SSAValue:
    fn = _UNARY[type(op)]
    return elementwise(b, _type(op.results[0]), [op.operands[0]], lambda s, a: fn(s, a[0]))


def _binary(b: Builder, op: Operation) -> SSAValue:
    if isinstance(_type(op.results[0]).element_type, IntegerType):
        return integer_binary(b, op)
    fn = _BINARY[type(op)]
    return elementwise(b, _type(op.results[0]), list(op.operands), lambda s, a: fn(s, a[0], a[1]))


def _contract(
    b: Builder, out: SSAValue, bounds: Sequence[int], lhs: SSAValue, rhs: SSAValue, lhs_idx, rhs_idx, out_idx
) -> SSAValue:
    """out[out_idx(ivs)] += lhs[lhs_idx(ivs)] * rhs[rhs_idx(ivs)] over `bounds`."""

    def build(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        a = read(mb, lhs, lhs_idx(*ivs))
        c = read(mb, rhs, rhs_idx(*ivs))
        write(mb, tasklet(mb, [a, c], a.type, lambda s, v: s.mul(v[0], v[1])), outs[0], out_idx(*ivs), "add")

    return map_op(b, bounds, [out], build).res[0]


def _matmul(b: Builder, op: Operation) -> SSAValue:
    """Over (i, k, j): the innermost loop walks rows of rhs and out contiguously."""
    assert isinstance(op, nn.MatmulOp)
    (m, k), (_, n) = _type(op.lhs).get_shape(), _type(op.rhs).get_shape()
    zeros = splat(b, _type(op.result), 0.0)
    return _contract(
        b, zeros, [m, k, n], op.lhs, op.rhs, lambda i, p, j: [i, p], lambda i, p, j: [p, j], lambda i, p, j: [i, j]
    )


def _linear(b: Builder, op: Operation) -> SSAValue:
    """Over (i, j, k): the innermost loop is a dot product of two contiguous rows."""
    assert isinstance(op, nn.LinearOp)
    out_type = _type(op.result)
    n, fan_out = out_type.get_shape()
    fan_in = _type(op.input).get_shape()[1]
    biased = elementwise(b, out_type, [op.bias], lambda s, a: a[0])
    return _contract(
        b,
        biased,
        [n, fan_out, fan_in],
        op.input,
        op.weight,
        lambda i, j, k: [i, k],
        lambda i, j, k: [j, k],
        lambda i, j, k: [i, j],
    )


def _reduce(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, nn.ReduceOp)
    kind = op.kind.data
    keep = op.keepdims is not None
    wcr = {"sum": "add", "mean": "add", "max": "max", "min": "min"}[kind]
    total = reduce(b, op.input, op.reduced_axes, wcr, keep)
    if kind != "mean":
        return total
    shape = _type(op.input).get_shape()
    if any(shape[axis] < 0 for axis in op.reduced_axes):
        return elementwise(b, _type(total), [total, _dynamic_count(b, op)], lambda s, a: s.div(a[0], a[1]))
    count = 1
    for axis in op.reduced_axes:
        count *= shape[axis]
    return elementwise(b, _type(total), [total], lambda s, a: s.div(a[0], s.const(float(count), a[0].type)))


def _dynamic_count(b: Builder, op: nn.ReduceOp) -> SSAValue:
    """How many elements each result of a mean over dynamic sizes averages, as a 0-d float tensor."""
    count = index_const(b, 1)
    for axis in op.reduced_axes:
        count = b.insert(arith.MuliOp(count, b.insert(tensor.DimOp(op.input, index_const(b, axis))).result)).result
    t = _type(op.result).element_type
    value = b.insert(arith.SIToFPOp(b.insert(arith.IndexCastOp(count, i64)).result, t)).result
    return b.insert(tensor.InsertOp(value, splat(b, TensorType(t, []), 0), [])).result


def _broadcast(b: Builder, op: Operation) -> SSAValue:
    return elementwise(b, _type(op.results[0]), [op.operands[0]], lambda s, a: a[0])


def _permuted(b: Builder, source: SSAValue, out_type: TensorType, index_of) -> SSAValue:
    """out[idx] = source[index_of(builder, idx)] over the shape of `out_type`."""

    def build(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        write(mb, read(mb, source, index_of(mb, ivs)), outs[0], ivs)

    return map_op(b, list(out_type.get_shape()), [empty(b, out_type)], build).res[0]


def _transpose(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, nn.TransposeOp)
    perm = op.permutation.get_values()

    def index_of(mb: Builder, ivs: Sequence[SSAValue]) -> list[SSAValue]:
        idx: list[SSAValue] = [ivs[0]] * len(perm)
        for k, p in enumerate(perm):
            idx[p] = ivs[k]
        return idx

    return _permuted(b, op.input, _type(op.result), index_of)


def reshape_groups(in_shape: Sequence[int], out_shape: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """Consecutive groups of input and output dimensions with equal element
    counts, in order (the reassociation of MLIR's collapse/expand_shape):
    [8, 128, 1024] -> [1024, 1024] is [8, 128] -> [1024] and [1024] -> [1024].
    One group of everything when no finer split exists."""
    whole = [(list(range(len(in_shape))), list(range(len(out_shape))))]
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(in_shape) and j < len(out_shape):
        gi, gj, pi, pj = [i], [j], in_shape[i], out_shape[j]
        i, j = i + 1, j + 1
        while pi != pj:
            if pi < pj and i < len(in_shape):
                gi.append(i)
                pi, i = pi * in_shape[i], i + 1
            elif pj < pi and j < len(out_shape):
                gj.append(j)
                pj, j = pj * out_shape[j], j + 1
            else:
                return whole
        groups.append((gi, gj))
    if not groups:
        return whole
    groups[-1][0].extend(range(i, len(in_shape)))
    groups[-1][1].extend(range(j, len(out_shape)))
    return groups


def _reshape(b: Builder, op: Operation) -> SSAValue:
    """Each group of dimensions (`reshape_groups`) on its own: the output
    variables of a group are linearised, then split into the group's input
    dimensions, so an expanded dimension is affine in its variables and only a
    collapsed one divides (the innermost index of [8, 128, 1024] read as
    [1024, 1024] is the inner variable itself, and stays vectorisable)."""
    assert isinstance(op, nn.ReshapeOp)
    in_shape, out_type = _type(op.input).get_shape(), _type(op.result)
    out_shape = out_type.get_shape()
    groups = reshape_groups(in_shape, out_shape)

    def index_of(mb: Builder, ivs: Sequence[SSAValue]) -> list[SSAValue]:
        idx: list[SSAValue] = [index_const(mb, 0)] * len(in_shape)
        for gi, gj in groups:
            linear: SSAValue | None = None
            for j, stride in zip(gj, row_major_strides([out_shape[j] for j in gj])):
                if out_shape[j] != 1:
                    linear = affine(mb, ivs[j], stride, 0) if linear is None else affine(mb, ivs[j], stride, linear)
            outermost = True
            for d, stride in zip(gi, row_major_strides([in_shape[d] for d in gi])):
                if in_shape[d] == 1 or linear is None:
                    continue
                q = linear if stride == 1 else mb.insert(arith.DivUIOp(linear, index_const(mb, stride))).result
                idx[d] = q if outermost else mb.insert(arith.RemUIOp(q, index_const(mb, in_shape[d]))).result
                outermost = False
        return idx

    return _permuted(b, op.input, out_type, index_of)


def _normalized(b: Builder, op: Operation) -> SSAValue:
    """softmax = e / sum(e) and log_softmax = (x - m) - log(sum(e)), e = exp(x - m)."""
    assert isinstance(op, nn.SoftmaxOp | nn.LogSoftmaxOp)
    x, t, axis = op.input, _type(op.result), op.normalized_axis
    m = reduce(b, x, [axis], "max", True)
    e = elementwise(b, t, [x, m], lambda s, a: s.exp(s.sub(a[0], a[1])))
    total = reduce(b, e, [axis], "add", True)
    if isinstance(op, nn.SoftmaxOp):
        return elementwise(b, t, [e, total], lambda s, a: s.div(a[0], a[1]))
    return elementwise(b, t, [x, m, total], lambda s, a: s.sub(s.sub(a[0], a[1]), s.log(a[2])))


def _nll_loss(b: Builder, op: Operation) -> SSAValue:
    """-sum_i input[i, labels[i]] / N; an out-of-range label gives NaN, never a stray read."""
    assert isinstance(op, nn.NllLossOp)
    n, classes = _type(op.input).get_shape()
    out_type = _type(op.result)
    zero = splat(b, out_type, 0.0)

    def build(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        (i,) = ivs
        label = mb.insert(arith.IndexCastOp(read(mb, op.labels, [i]), IndexType())).result
        logp = read(mb, op.input, [i, label])  # a label outside [0, C) is an IndexError, as in PyTorch

        def term(s: Scalar, a: Sequence[SSAValue]) -> SSAValue:
            return s.div(s.neg(a[0]), s.const(float(n), a[0].type))

        write(mb, tasklet(mb, [logp], out_type.element_type, term), outs[0], [], "add")

    return map_op(b, [n], [zero], build).res[0]


def _constant(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, nn.ConstantOp)
    return b.insert(arith.ConstantOp(op.value)).result


def _full(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, nn.FullOp)
    return splat(b, _type(op.result), op.value.value.data)


EXPANSIONS: dict[type[Operation], Expansion] = {
    **{cls: _unary for cls in _UNARY},
    **{cls: _binary for cls in _BINARY},
    nn.MatmulOp: _matmul,
    nn.LinearOp: _linear,
    nn.ReduceOp: _reduce,
    nn.BroadcastOp: _broadcast,
    nn.TransposeOp: _transpose,
    nn.ReshapeOp: _reshape,
    nn.SoftmaxOp: _normalized,
    nn.LogSoftmaxOp: _normalized,
    nn.NllLossOp: _nll_loss,
    nn.ConstantOp: _constant,
    nn.FullOp: _full,
    **ELEMENTWISE_EXPANSIONS,
    **SHAPE_EXPANSIONS,
    **CONTRACT_EXPANSIONS,
    **WINDOW_EXPANSIONS,
    **INDEXING_EXPANSIONS,
    **CONV_EXPANSIONS,
    **SORT_EXPANSIONS,
    **SAMPLE_EXPANSIONS,
    **RANDOM_EXPANSIONS,
    **FFT_EXPANSIONS,
    **SPECIAL_EXPANSIONS,
    **DYNAMIC_EXPANSIONS,
}


def expand(b: Builder, op: Operation) -> SSAValue:
    """Build `op`'s pure df expansion at `b`; returns the value replacing its result."""
    return EXPANSIONS[type(op)](b, op)
