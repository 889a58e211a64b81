"""Backward rule of `nn.convolution` for the convolutions expanded directly
(`nn_expand_conv.is_direct`: few output features per group).

- kernel: one map over (batch, output feature, input feature, taps, output
  positions) accumulating output gradient * padded input into the kernel's
  gradient; the positions are innermost, so each kernel element sums a row in
  a register.
- input: the transposed convolution, itself an `nn.convolution` (stride 1, the
  forward's dilation, the forward's groups) of the output gradient spread
  `stride` apart into zeros, (K - 1) * dilation - padding_low from the start,
  with the kernel's taps reversed and its input and output features swapped.
  It expands as any convolution does (direct with few input features per
  group, else im2col), and reads where the forward's expansion would scatter.

That placement needs padding_low and padding_high at most (K - 1) * dilation
per spatial dimension; other convolutions, and those expanded through im2col,
are differentiated through their expansion (the rule returns None).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects.builtin import TensorType
from xdsl.ir import BlockArgument, SSAValue

from dfc.dialects.df_builders import empty, map_op, read, splat, write
from dfc.dialects.nn_conv import ConvolutionOp
from dfc.dialects.nn_expand_conv import (
    add_product,
    direct_indices,
    is_direct,
    padded_input,
)
from dfc.dialects.nn_expand_shape import affine, scatter
from dfc.passes.autodiff.rule_table import RuleTable

CONV_BACKWARD = RuleTable()


def _t(v: SSAValue) -> TensorType:
    assert isinstance(v.type, TensorType)
    return v.type


def _extents(op: ConvolutionOp) -> list[int]:
    """(K - 1) * dilation per spatial dimension: how far a window reaches."""
    _, (_, _, *ks), _ = op.layout()
    *_, dilations = op.geometry()
    return [(_t(op.kernel).get_shape()[d] - 1) * r for d, r in zip(ks, dilations)]


def _transposable(op: ConvolutionOp) -> bool:
    _, low, high, _ = op.geometry()
    return all(lo <= e and hi <= e for lo, hi, e in zip(low, high, _extents(op)))


@CONV_BACKWARD.rule("nn.convolution")
def _convolution(b, op, grads, required):
    assert isinstance(op, ConvolutionOp)
    if not is_direct(op) or not _transposable(op):
        return None
    (g,) = grads
    return [_input_gradient(b, op, g) if required[0] else None, _kernel_gradient(b, op, g) if required[1] else None]


def _kernel_gradient(b: Builder, op: ConvolutionOp, g: SSAValue) -> SSAValue:
    source, k_type = padded_input(b, op), _t(op.kernel)
    _, (_, ki, *ks), (ob, of, *os_) = op.layout()
    k_shape, g_shape, spatial = k_type.get_shape(), _t(g).get_shape(), len(ks)

    def accumulate(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        ts, ys = ivs[3 : 3 + spatial], ivs[3 + spatial :]
        x_idx, k_idx, o_idx = direct_indices(mb, op, ivs[0], ivs[1], ivs[2], ts, ys)
        add_product(mb, read(mb, source, x_idx), read(mb, g, o_idx), outs[0], k_idx)

    bounds = [g_shape[ob], g_shape[of], k_shape[ki], *(k_shape[d] for d in ks), *(g_shape[d] for d in os_)]
    return map_op(b, bounds, [splat(b, k_type, 0.0)], accumulate).res[0]


def _input_gradient(b: Builder, op: ConvolutionOp, g: SSAValue) -> SSAValue:
    (xb, xf, *xs), (ko, ki, *ks), (ob, of, *os_) = op.layout()
    strides, low, _, dilations = op.geometry()
    groups, extents = op.feature_group_count.value.data, _extents(op)
    x_shape, k_type, g_type = _t(op.input).get_shape(), _t(op.kernel), _t(g)
    k_shape, g_shape = k_type.get_shape(), g_type.get_shape()
    spatial, per_group, features = len(xs), k_shape[ko] // groups, k_shape[ki]

    # the gradient spread `stride` apart into zeros, placed so that a stride-1
    # window over it at input position i meets exactly the outputs that read i
    spread_shape = list(g_shape)
    for j, d in enumerate(os_):
        spread_shape[d] = x_shape[xs[j]] + extents[j]

    def place(mb: Builder, ivs: Sequence[BlockArgument]) -> list[SSAValue]:
        at = list(ivs)
        for j, d in enumerate(os_):
            at[d] = affine(mb, ivs[d], strides[j], extents[j] - low[j])
        return at

    spread = scatter(b, g, g_shape, splat(b, TensorType(g_type.element_type, spread_shape), 0.0),
                     lambda mb, ivs: list(ivs), place)

    # kernel[g * Cg + c, o, K - 1 - t] = op.kernel[g * per_group + o, c, t]
    def flip(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        grp, c, o, ts = ivs[0], ivs[1], ivs[2], ivs[3:]
        at: list[SSAValue] = [c] * (spatial + 2)
        at[ko], at[ki] = affine(mb, grp, per_group, o), c
        for j, d in enumerate(ks):
            at[d] = affine(mb, ts[j], -1, k_shape[d] - 1)
        write(mb, read(mb, op.kernel, at), outs[0], [affine(mb, grp, features, c), o, *ts])

    taps = [k_shape[d] for d in ks]
    flipped_type = TensorType(k_type.element_type, [groups * features, per_group, *taps])
    flipped = map_op(b, [groups, features, per_group, *taps], [empty(b, flipped_type)], flip).res[0]
    layout = ((ob, of, *os_), tuple(range(spatial + 2)), (xb, xf, *xs))
    geometry = ([1] * spatial, [0] * spatial, [0] * spatial, dilations)
    return b.insert(ConvolutionOp(spread, flipped, layout, geometry, groups)).result
