"""aten's scans other than `cumsum` (aten_shape.py): `cumprod`, `cummax`, `cummin` and `logcumsumexp`,
each an inclusive prefix combination along a dim in log2(n) elementwise steps (x combined with x shifted
by 1, 2, 4, ..., the vacated front filled with the combination's identity; Hillis and Steele), so that
autodiff differentiates them as any elementwise program."""

from __future__ import annotations

import math

from dfc.torch.aten_common import handler_table
from dfc.torch.aten_sort import take_along
from dfc.torch.ir_text import Value

SCAN_HANDLERS, handles = handler_table()


def prefix(b, x: Value, axis: int, combine, identity: float | int) -> Value:
    """Inclusive prefix `combine(earlier, later)` of x along `axis` (a 0-d x is itself)."""
    if not x.shape:
        return x
    shift = 1
    while shift < x.shape[axis]:
        low = [shift if d == axis else 0 for d in range(len(x.shape))]
        x = combine(b.pad(x, low, [-n for n in low], identity), x)
        shift *= 2
    return x


@handles("cumprod.default")
def _cumprod(b, node, x, dim, dtype):
    x = b.convert(x, b.out(node)[1])
    return prefix(b, x, dim % max(len(x.shape), 1), lambda p, q: b.binary("nn.mul", p, q), 1)


@handles("logcumsumexp.default")
def _logcumsumexp(b, node, x, dim):
    """log(cumsum(exp(x))) by pairwise logaddexp(p, q) = max + log1p(exp(-|p - q|)) (which is max where
    both are -inf, and NaN where either is NaN)."""
    x = b.convert(x, b.out(node)[1])

    def logaddexp(p, q):
        high = b.binary("nn.maximum", p, q)
        both_inf = b.binary("nn.and", b.compare("EQ", p, q), b.compare("EQ", b.unary("nn.abs", p), math.inf), "i1")
        gap = b.op("nn.select", [both_inf, b.tensor(0.0, x.dtype), b.binary("nn.sub", p, q)], high.shape, x.dtype)
        return b.binary("nn.add", high, b.unary("nn.log1p", b.unary("nn.exp", b.unary("nn.neg",
                                                                                   b.unary("nn.abs", gap)))))

    return prefix(b, x, dim % max(len(x.shape), 1), logaddexp, -math.inf)


def _extremum(kind: str):
    def handler(b, node, x, dim):
        """(values, indices) of the running max (min): the index is the last one holding the running extremum
        (or NaN, which then stays), as torch's CPU kernel; the values are gathered at it, so the gradient
        goes where torch's goes."""
        if not x.shape:
            return x, b.full(0, (), "i64")
        axis = dim % len(x.shape)
        name = "nn.maximum" if kind == "max" else "nn.minimum"
        if x.is_float:
            identity = -math.inf if kind == "max" else math.inf
        elif x.dtype == "i1":
            identity = int(kind == "min")
        else:
            bits = int(x.dtype[1:])
            identity = -(2 ** (bits - 1)) if kind == "max" else 2 ** (bits - 1) - 1
        running = prefix(b, x, axis, lambda p, q: b.binary(name, p, q, x.dtype), identity)
        holds = b.compare("EQ", x, running)
        if x.is_float:
            holds = b.binary("nn.or", holds, b.compare("NE", x, x), "i1")
        position = b.op("nn.iota", [], x.shape, "i64", iota_dimension=axis)
        marked = b.op("nn.select", [holds, position, b.full(0, x.shape, "i64")], x.shape, "i64")
        indices = prefix(b, marked, axis, lambda p, q: b.binary("nn.maximum", p, q, "i64"), 0)
        return take_along(b, x, indices, axis), indices

    return handler


handles("cummax.default")(_extremum("max"))
handles("cummin.default")(_extremum("min"))
