"""Pure expansion of `nn.convolution`: the input copied into zeros where padded,
then one map over (batch, output feature, output position, group input feature,
kernel tap) accumulating input * kernel into the output with wcr(add)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue

from dfc.dialects.df_builders import index_const, map_op, read, splat, tasklet, write
from dfc.dialects.nn_conv import ConvolutionOp
from dfc.dialects.nn_expand_shape import affine
from dfc.dialects.nn_expand_window import padded


def _t(v: SSAValue) -> TensorType:
    assert isinstance(v.type, TensorType)
    return v.type


def _convolution(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, ConvolutionOp)
    (xb, xf, *xs), (ko, ki, *ks), (ob, of, *os_) = op.layout()
    strides, low, high, dilations = op.geometry()
    groups = op.feature_group_count.value.data
    x_shape, k_shape, out_type = _t(op.input).get_shape(), _t(op.kernel).get_shape(), _t(op.result)
    rank, spatial = len(x_shape), len(xs)
    pad_low, pad_high = [0] * rank, [0] * rank
    for j, d in enumerate(xs):
        pad_low[d], pad_high[d] = low[j], high[j]
    source = padded(b, op.input, pad_low, pad_high, 0.0)
    out_shape = out_type.get_shape()
    per_group = k_shape[ko] // groups
    bounds = [out_shape[ob], out_shape[of], *(out_shape[d] for d in os_), k_shape[ki], *(k_shape[d] for d in ks)]

    def build(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        n, o, ys, c, taps = ivs[0], ivs[1], ivs[2 : 2 + spatial], ivs[2 + spatial], ivs[3 + spatial :]
        feature: SSAValue = c
        if groups > 1:
            group = mb.insert(arith.FloorDivSIOp(o, index_const(mb, per_group))).result
            feature = affine(mb, group, k_shape[ki], c)
        x_idx: list[SSAValue] = [n] * rank
        k_idx: list[SSAValue] = [o] * rank
        out_idx: list[SSAValue] = [n] * rank
        x_idx[xf], k_idx[ki], out_idx[of] = feature, c, o
        for j in range(spatial):
            x_idx[xs[j]] = affine(mb, taps[j], dilations[j], affine(mb, ys[j], strides[j], 0))
            k_idx[ks[j]] = taps[j]
            out_idx[os_[j]] = ys[j]
        u, v = read(mb, source, x_idx), read(mb, op.kernel, k_idx)
        write(mb, tasklet(mb, [u, v], u.type, lambda s, a: s.mul(a[0], a[1])), outs[0], out_idx, "add")

    return map_op(b, bounds, [splat(b, out_type, 0.0)], build).res[0]


CONV_EXPANSIONS: dict[type[Operation], Callable[[Builder, Operation], SSAValue]] = {ConvolutionOp: _convolution}
