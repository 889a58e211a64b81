"""Pure expansion of `nn.reduce_window`: the input copied into a tensor of the
reduction's identity (when padded), then one map over (output position,
window position) reading `out * stride + w * dilation` and writing the output
position with wcr(max|min|add); `mean` divides afterwards."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects.builtin import TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue

from dfc.dialects.df_builders import REDUCE_IDENTITY, elementwise, map_op, read, splat, write
from dfc.dialects.nn_expand_shape import affine, scatter
from dfc.dialects.nn_window import ReduceWindowOp

WCR = {"max": "max", "min": "min", "sum": "add", "mean": "add"}

WindowBody = Callable[[Builder, Sequence[SSAValue], Sequence[SSAValue], list[SSAValue], Sequence[BlockArgument]], None]
"""Builds a window map's body from (builder, output ivs, window ivs, input index, outs)."""


def _t(v: SSAValue) -> TensorType:
    assert isinstance(v.type, TensorType)
    return v.type


def padded(b: Builder, x: SSAValue, low: Sequence[int], high: Sequence[int], value: float) -> SSAValue:
    """`x` inside a tensor of `value` with low/high (non-negative) padding."""
    if not any(low) and not any(high):
        return x
    t = _t(x)
    shape = [d + lo + hi for d, lo, hi in zip(t.get_shape(), low, high)]
    filled = splat(b, TensorType(t.element_type, shape), value)
    return scatter(
        b, x, t.get_shape(), filled,
        lambda mb, ivs: list(ivs),
        lambda mb, ivs: [affine(mb, iv, 1, lo) for iv, lo in zip(ivs, low)],
    )  # fmt: skip


def window_map(b: Builder, op: ReduceWindowOp, init: SSAValue, body: WindowBody) -> SSAValue:
    """A map over (output position, window position) with `init` as its output."""
    window, strides, dilations, _, _ = op.geometry()
    out_shape = _t(op.result).get_shape()
    rank = len(out_shape)

    def build(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        o, w = ivs[:rank], ivs[rank:]
        at = [affine(mb, wk, r, affine(mb, ok, s, 0)) for ok, wk, s, r in zip(o, w, strides, dilations)]
        body(mb, o, w, at, outs)

    return map_op(b, [*out_shape, *window], [init], build).res[0]


def _reduce_window(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, ReduceWindowOp)
    kind, out_type = op.kind.data, _t(op.result)
    window, _, _, low, high = op.geometry()
    identity = REDUCE_IDENTITY[WCR[kind]]
    source = padded(b, op.input, low, high, identity)

    def body(mb: Builder, o, w, at, outs) -> None:
        write(mb, read(mb, source, at), outs[0], o, WCR[kind])  # type: ignore[arg-type]

    total = window_map(b, op, splat(b, out_type, identity), body)
    if kind != "mean":
        return total
    count = float(math.prod(window))
    return elementwise(b, out_type, [total], lambda s, a: s.div(a[0], s.const(count, a[0].type)))


WINDOW_EXPANSIONS: dict[type[Operation], Callable[[Builder, Operation], SSAValue]] = {
    ReduceWindowOp: _reduce_window,
}
