"""aten's pairwise distances: `_cdist_forward` (torch.cdist) and `_pdist_forward` (F.pdist), the p-norms of
row differences written out as elementwise ops and reductions, with torch's gradients: 0 where a distance
is 0 (and, p < 1, where a difference is 0); for p = inf every difference whose magnitude equals the
distance gets the whole gradient (torch's `_cdist_backward`, unlike `max`'s shared one)."""

from __future__ import annotations

import math

import numpy as np

from dfc.torch.aten_common import UnsupportedOp, handler_table
from dfc.torch.ir_text import Value

DISTANCE_HANDLERS, handles = handler_table()


def _select(b, pred: Value, on_true, on_false: Value) -> Value:
    on_true = b.tensor(on_true, on_false.dtype)
    return b.op("nn.select", [pred, on_true, on_false], np.broadcast_shapes(pred.shape, on_true.shape,
                                                                             on_false.shape), on_false.dtype)


def _root(b, total: Value, p: float) -> Value:
    """total ** (1 / p), 0 with gradient 0 where total is 0 (the root's argument is 1 there)."""
    zero = b.compare("EQ", total, 0.0)
    safe = _select(b, zero, 1.0, total)
    root = b.unary("nn.sqrt", safe) if p == 2 else b.binary("nn.power", safe, 1.0 / p)
    return _select(b, zero, 0.0, root)


def p_norm(b, diff: Value, p: float) -> Value:
    """The p-norm of `diff` over its last axis, with torch's distance gradients."""
    axis = [len(diff.shape) - 1]
    magnitude = b.unary("nn.abs", diff)
    if p == 0:
        return b.reduce("sum", b.convert(b.compare("NE", diff, 0.0), diff.dtype), axis)
    if p == 1:
        return b.reduce("sum", magnitude, axis)
    if math.isinf(p):  # m + sum over the maxima of (|d| - m): the value m, the gradient sign(d) at each maximum
        m = b.unary("nn.stop_gradient", b.reduce("max", magnitude, axis, keepdims=True))
        at_max = b.convert(b.compare("EQ", magnitude, m), diff.dtype)
        excess = b.reduce("sum", b.binary("nn.mul", at_max, b.binary("nn.sub", magnitude, m)), axis)
        return b.binary("nn.add", excess, b.reshape(m, excess.shape))
    if p == 2:
        return _root(b, b.reduce("sum", b.binary("nn.mul", diff, diff), axis), p)
    zero = b.compare("EQ", diff, 0.0)  # |d| ** p is 0 with gradient 0 there (p < 1 would give 0 * inf)
    powered = _select(b, zero, 0.0, b.binary("nn.power", _select(b, zero, 1.0, magnitude), float(p)))
    return _root(b, b.reduce("sum", powered, axis), p)


def _order(p: float, what: str) -> float:
    if p < 0:
        raise UnsupportedOp(f"{what} with p = {p} (torch requires p >= 0)")
    return float(p)


@handles("_cdist_forward.default")
def _cdist(b, node, x1, x2, p, compute_mode):
    """Distances between the rows of x1 (..., P, M) and x2 (..., R, M), batch dimensions broadcast. p = 2 with
    `compute_mode` 1, or None/0 and P or R > 25, is torch's matrix-product form |x1|^2 + |x2|^2 - 2 x1.x2
    clamped at 0 (as eager's); every other is the norm of the differences."""
    p = _order(p, "cdist")
    shape, dtype = b.out(node)
    x1, x2 = b.convert(x1, dtype), b.convert(x2, dtype)
    rows, cols = x1.shape[-2], x2.shape[-2]
    left = b.reshape(x1, [*x1.shape[:-1], 1, x1.shape[-1]])
    right = b.reshape(x2, [*x2.shape[:-2], 1, *x2.shape[-2:]])
    if p == 2 and (compute_mode == 1 or compute_mode in (None, 0) and max(rows, cols) > 25):
        squares = [b.reduce("sum", b.binary("nn.mul", x, x), [-1]) for x in (left, right)]
        products = b.reduce("sum", b.binary("nn.mul", left, right), [-1])
        total = b.binary("nn.sub", b.binary("nn.add", squares[0], squares[1]), b.binary("nn.mul", products, 2.0))
        clamped = b.op("nn.clamp", [b.full(0.0, (), dtype), total, b.full(math.inf, (), dtype)], total.shape, dtype)
        return b.broadcast(_root(b, clamped, 2), shape)
    return b.broadcast(p_norm(b, b.binary("nn.sub", left, right), p), shape)


@handles("_pdist_forward.default")
def _pdist(b, node, x, p):
    """The distances between the rows i < j of x (N, M), in row-major order of (i, j)."""
    p = _order(p, "pdist")
    n = x.shape[0]
    first, second = np.triu_indices(n, 1)
    x = b.convert(x, b.out(node)[1])
    diff = b.binary("nn.sub", b.take(x, 0, b.constant(first, "i64")), b.take(x, 0, b.constant(second, "i64")))
    return p_norm(b, diff, p)
