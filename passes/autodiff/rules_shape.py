"""Backward rules of the shape nn ops of `dialects.nn_shape`, written with the
same ops (as in JAX): the gradient of `slice` is a `pad` with zeros, that of
`pad` a strided `slice` (and, for the padding value, the sum of what fell on
padding), `concatenate` slices, `reverse` reverses, `broadcast_in_dim` sums,
`dynamic_slice` and `dynamic_update_slice` swap roles. Start indices get none.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects.builtin import FloatAttr, TensorType
from xdsl.ir import Operation, SSAValue

from dfc.dialects import nn
from dfc.dialects import nn_shape as sh
from dfc.passes.autodiff.rule_table import RuleTable

SHAPE_BACKWARD = RuleTable()


def _t(v: SSAValue) -> TensorType:
    assert isinstance(v.type, TensorType)
    return v.type


def _ins(b: Builder, op: Operation) -> SSAValue:
    return b.insert(op).results[0]


def _zeros(b: Builder, like: TensorType, shape: Sequence[int] | None = None) -> SSAValue:
    shape = like.get_shape() if shape is None else shape
    return _ins(b, nn.FullOp(FloatAttr(0.0, like.element_type), list(shape)))  # type: ignore[arg-type]


def _embed(b: Builder, g: SSAValue, low: Sequence[int], high: Sequence[int], interior: Sequence[int]) -> SSAValue:
    """g placed into zeros by padding (no op where nothing is padded)."""
    if not any(low) and not any(high) and not any(interior):
        return g
    return _ins(b, sh.PadOp(g, _zeros(b, _t(g), []), low, high, interior))


@SHAPE_BACKWARD.rule("nn.slice")
def _slice(b, op, grads, required):
    assert isinstance(op, sh.SliceOp)
    (g,) = grads
    shape, out = _t(op.operand).get_shape(), _t(op.result).get_shape()
    if 0 in out:
        return [_zeros(b, _t(op.operand))]
    start, strides = op.start_indices.get_values(), op.strides.get_values()
    high = [d - (lo + (n - 1) * s + 1) for d, lo, n, s in zip(shape, start, out, strides)]
    return [_embed(b, g, start, high, [s - 1 for s in strides])]


def _sum_all(b: Builder, v: SSAValue) -> SSAValue:
    return _ins(b, nn.ReduceOp(v, "sum", list(range(_t(v).get_num_dims()))))


@SHAPE_BACKWARD.rule("nn.pad")
def _pad(b, op, grads, required):
    """The operand's elements that landed inside, by a strided slice (padded back with zeros where
    negative padding cut some off); the padding value gets the rest of the sum."""
    assert isinstance(op, sh.PadOp)
    (g,) = grads
    low, _, interior = op.padding()
    shape, size = _t(op.operand).get_shape(), _t(op.result).get_shape()
    first, last = [], []
    for lo, step, d, n in zip(low, interior, shape, size):
        step += 1
        first.append(max(0, -(lo // step)) if lo < 0 else 0)
        last.append(min(d, (n - 1 - lo) // step + 1) if n > lo else 0)
    if any(i1 <= i0 for i0, i1 in zip(first, last)):
        inner = None
        g_operand = _zeros(b, _t(op.operand))
    else:
        steps = [i + 1 for i in interior]
        start = [lo + i0 * s for lo, i0, s in zip(low, first, steps)]
        limit = [lo + (i1 - 1) * s + 1 for lo, i1, s in zip(low, last, steps)]
        inner = _ins(b, sh.SliceOp(g, start, limit, steps))
        g_operand = _embed(b, inner, first, [d - i1 for d, i1 in zip(shape, last)], [0] * len(shape))
    g_value = None
    if required[1]:
        total = _sum_all(b, g)
        g_value = total if inner is None else _ins(b, nn.SubOp(total, _sum_all(b, inner)))
    return [g_operand if required[0] else None, g_value]


@SHAPE_BACKWARD.rule("nn.concatenate")
def _concatenate(b, op, grads, required):
    assert isinstance(op, sh.ConcatenateOp)
    (g,) = grads
    dim, shape = op.dimension.value.data, _t(op.result).get_shape()
    out: list[SSAValue | None] = []
    offset = 0
    for x, wanted in zip(op.inputs, required):
        n = _t(x).get_shape()[dim]
        if wanted:
            start = [offset if k == dim else 0 for k in range(len(shape))]
            limit = [offset + n if k == dim else d for k, d in enumerate(shape)]
            out.append(_ins(b, sh.SliceOp(g, start, limit, [1] * len(shape))))
        else:
            out.append(None)
        offset += n
    return out


@SHAPE_BACKWARD.rule("nn.reverse")
def _reverse(b, op, grads, required):
    assert isinstance(op, sh.ReverseOp)
    return [_ins(b, sh.ReverseOp(grads[0], op.dimensions.get_values()))]


@SHAPE_BACKWARD.rule("nn.iota")
def _iota(b, op, grads, required):
    return []


@SHAPE_BACKWARD.rule("nn.broadcast_in_dim")
def _broadcast_in_dim(b, op, grads, required):
    """Sum over the new and the broadcast dimensions, then put the rest in operand order."""
    assert isinstance(op, sh.BroadcastInDimOp)
    (g,) = grads
    dims = list(op.broadcast_dimensions.get_values())
    shape, out = _t(op.operand).get_shape(), _t(op.result).get_shape()
    summed = [d for d in range(len(out)) if d not in dims]
    summed += [d for d, size in zip(dims, shape) if size != out[d]]
    if summed:
        g = _ins(b, nn.ReduceOp(g, "sum", sorted(summed), keepdims=True))
    kept = sorted(dims)
    in_order = [shape[dims.index(d)] for d in kept]
    if _t(g).get_shape() != tuple(in_order):
        g = _ins(b, nn.ReshapeOp(g, in_order))
    permutation = [kept.index(d) for d in dims]
    if permutation != sorted(permutation):
        g = _ins(b, nn.TransposeOp(g, permutation))
    return [g]


@SHAPE_BACKWARD.rule("nn.dynamic_slice")
def _dynamic_slice(b, op, grads, required):
    assert isinstance(op, sh.DynamicSliceOp)
    starts = list(op.start_indices)
    g = _ins(b, sh.DynamicUpdateSliceOp(_zeros(b, _t(op.operand)), grads[0], starts))
    return [g, *([None] * len(starts))]


@SHAPE_BACKWARD.rule("nn.dynamic_update_slice")
def _dynamic_update_slice(b, op, grads, required):
    assert isinstance(op, sh.DynamicUpdateSliceOp)
    (g,) = grads
    starts = list(op.start_indices)
    g_operand = _ins(b, sh.DynamicUpdateSliceOp(g, _zeros(b, _t(op.update)), starts)) if required[0] else None
    g_update = None
    if required[1]:
        g_update = _ins(b, sh.DynamicSliceOp(g, starts, _t(op.update).get_shape()))
    return [g_operand, g_update, *([None] * len(starts))]
