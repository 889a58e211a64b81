"""Pure expansion of `nn.convolution` as a matrix product (im2col).

With G feature groups, Cg input features per group, Og output features per
group, M = batch * output positions and K = Cg * kernel taps:

1. the input, copied into zeros where padded, is unfolded into patches
   P[g, m, k] (one row per output position, one column per (feature, tap));
2. the kernel is laid out as W[g, o, k];
3. one contraction map accumulates P[g, m, k] * W[g, o, k] into R[g, m, o]
   with wcr(add): the shape `contraction-to-blas` turns into one (batched)
   GEMM, and that autodiff turns into two more;
4. R is laid out as the result (a view-like copy; none of the arithmetic).

Without feature groups (G = 1) the group dimension is left out, so steps 1-3
are plain matrices.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue

from dfc.dialects.df_builders import empty, index_const, map_op, read, splat, tasklet, write
from dfc.dialects.nn_conv import ConvolutionOp
from dfc.dialects.nn_expand_shape import affine
from dfc.dialects.nn_expand_window import padded


def _t(v: SSAValue) -> TensorType:
    assert isinstance(v.type, TensorType)
    return v.type


def _mixed(b: Builder, ivs: Sequence[SSAValue], shape: Sequence[int]) -> SSAValue:
    """The row-major position of `ivs` in `shape`, as index arithmetic."""
    position: SSAValue | None = None
    for iv, size in zip(ivs, shape):
        position = iv if position is None else affine(b, position, size, iv)
    return position if position is not None else index_const(b, 0)


def _convolution(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, ConvolutionOp)
    (xb, xf, *xs), (ko, ki, *ks), (ob, of, *os_) = op.layout()
    strides, low, high, dilations = op.geometry()
    groups = op.feature_group_count.value.data
    x_shape, k_shape, out_type = _t(op.input).get_shape(), _t(op.kernel).get_shape(), _t(op.result)
    element = out_type.element_type
    rank, spatial = len(x_shape), len(xs)
    pad_low, pad_high = [0] * rank, [0] * rank
    for j, d in enumerate(xs):
        pad_low[d], pad_high[d] = low[j], high[j]
    source = padded(b, op.input, pad_low, pad_high, 0.0)
    out_shape = out_type.get_shape()
    batch, positions = out_shape[ob], [out_shape[d] for d in os_]
    taps, features = [k_shape[d] for d in ks], k_shape[ki]
    per_group = k_shape[ko] // groups
    rows, depth = batch * math.prod(positions), features * math.prod(taps)
    lead = [groups] if groups > 1 else []

    def grouped(g: SSAValue | None, *rest: SSAValue) -> list[SSAValue]:
        return [g, *rest] if g is not None else list(rest)

    def unfold(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        g, ivs = (ivs[0], ivs[1:]) if lead else (None, ivs)
        n, ys, c, ts = ivs[0], ivs[1 : 1 + spatial], ivs[1 + spatial], ivs[2 + spatial :]
        x_idx: list[SSAValue] = [n] * rank
        x_idx[xf] = c if g is None else affine(mb, g, features, c)
        for j in range(spatial):
            x_idx[xs[j]] = affine(mb, ts[j], dilations[j], affine(mb, ys[j], strides[j], 0))
        m, k = _mixed(mb, [n, *ys], [batch, *positions]), _mixed(mb, [c, *ts], [features, *taps])
        write(mb, read(mb, source, x_idx), outs[0], grouped(g, m, k))

    patches = map_op(b, [*lead, batch, *positions, features, *taps],
                     [empty(b, TensorType(element, [*lead, rows, depth]))], unfold).res[0]

    def lay_out_kernel(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        g, ivs = (ivs[0], ivs[1:]) if lead else (None, ivs)
        o, c, ts = ivs[0], ivs[1], ivs[2:]
        k_idx: list[SSAValue] = [o] * rank
        k_idx[ko] = o if g is None else affine(mb, g, per_group, o)
        k_idx[ki] = c
        for j in range(spatial):
            k_idx[ks[j]] = ts[j]
        write(mb, read(mb, op.kernel, k_idx), outs[0], grouped(g, o, _mixed(mb, [c, *ts], [features, *taps])))

    weights = map_op(b, [*lead, per_group, features, *taps],
                     [empty(b, TensorType(element, [*lead, per_group, depth]))], lay_out_kernel).res[0]

    def contract(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        g, (m, o, k) = (ivs[0], ivs[1:]) if lead else (None, ivs)
        u, v = read(mb, patches, grouped(g, m, k)), read(mb, weights, grouped(g, o, k))
        write(mb, tasklet(mb, [u, v], element, lambda s, a: s.mul(a[0], a[1])), outs[0], grouped(g, m, o), "add")

    product = map_op(b, [*lead, rows, per_group, depth],
                     [splat(b, TensorType(element, [*lead, rows, per_group]), 0.0)], contract).res[0]

    def fold(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        n, f, ys = ivs[ob], ivs[of], [ivs[d] for d in os_]
        m = _mixed(mb, [n, *ys], [batch, *positions])
        if lead:
            size = index_const(mb, per_group)
            g = mb.insert(arith.FloorDivSIOp(f, size)).result
            o = mb.insert(arith.RemSIOp(f, size)).result
            value = read(mb, product, [g, m, o])
        else:
            value = read(mb, product, [m, f])
        write(mb, value, outs[0], ivs)

    return map_op(b, list(out_shape), [empty(b, out_type)], fold).res[0]


CONV_EXPANSIONS: dict[type[Operation], Callable[[Builder, Operation], SSAValue]] = {ConvolutionOp: _convolution}
