"""Backward rule of `nn.reduce_window`: the output gradient scattered back over
each window into a padded gradient with wcr(add), then the padding sliced
off. For sum every window element gets it (divided by the window size for
mean); for max/min only the first extremal element of each window, found by
an integer wcr(min) over row-major window positions (as PyTorch's pooling and
XLA's select_and_scatter).
"""

from __future__ import annotations

import math

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, TensorType, i64

from dfc.dialects.df_builders import REDUCE_IDENTITY, read, splat, tasklet, write
from dfc.dialects.nn_expand_shape import linear_index
from dfc.dialects.nn_expand_window import WCR, padded, window_map
from dfc.dialects.nn_shape import SliceOp
from dfc.dialects.nn_window import ReduceWindowOp
from dfc.passes.autodiff.rule_table import RuleTable

WINDOW_BACKWARD = RuleTable()


@WINDOW_BACKWARD.rule("nn.reduce_window")
def _reduce_window(b, op, grads, required):
    assert isinstance(op, ReduceWindowOp)
    (g,) = grads
    kind = op.kind.data
    window, _, _, low, high = op.geometry()
    x_type = op.input.type
    assert isinstance(x_type, TensorType)
    shape = x_type.get_shape()
    padded_type = TensorType(x_type.element_type, [d + lo + hi for d, lo, hi in zip(shape, low, high)])
    first = None
    if kind in ("max", "min"):
        source = padded(b, op.input, low, high, REDUCE_IDENTITY[WCR[kind]])
        size = math.prod(window)

        def find(mb, o, w, at, outs) -> None:
            value, y = read(mb, source, at), read(mb, op.result, o)
            position = linear_index(mb, w, window)

            def body(s, v):
                hit = s.b.insert(arith.OrIOp(s.eq(v[0], v[1]), s.b.insert(arith.CmpfOp(v[0], v[0], "uno")).result)).result
                return s.select(hit, v[2], s.b.insert(arith.ConstantOp(IntegerAttr(size, i64))).result)

            write(mb, tasklet(mb, [value, y, position], i64, body), outs[0], o, "min")

        first = window_map(b, op, splat(b, TensorType(i64, op.result.type.get_shape()), size), find)
    scale = 1.0 / math.prod(window) if kind == "mean" else 1.0

    def scatter_back(mb, o, w, at, outs) -> None:
        gv = read(mb, g, o)
        if first is None:
            value = gv if scale == 1.0 else tasklet(mb, [gv], gv.type, lambda s, v: s.mul(v[0], s.const(scale, v[0].type)))
        else:
            chosen = read(mb, first, o)
            position = linear_index(mb, w, window)

            def body(s, v):
                hit = s.b.insert(arith.CmpiOp(v[1], v[2], "eq")).result
                return s.select(hit, v[0], s.const(0.0, v[0].type))

            value = tasklet(mb, [gv, chosen, position], gv.type, body)
        write(mb, value, outs[0], at, "add")

    grad = window_map(b, op, splat(b, padded_type, 0.0), scatter_back)
    if any(low) or any(high):
        grad = b.insert(SliceOp(grad, list(low), [lo + d for lo, d in zip(low, shape)], [1] * len(shape))).results[0]
    return [grad]
