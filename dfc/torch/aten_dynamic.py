"""Aten ops whose result size depends on the data: `nonzero` (`nn.nonzero`),
`masked_select` and indexing by a boolean mask (`index.Tensor`: `nn.gather_points`
at the mask's nonzero coordinates; the gradient scatters back to them), and
`_unique2` (torch.unique, `nn.unique`). The
export gives such a result an unbacked size (`u0`), written `?` in the IR;
`capture` lets it reach only the ops of `DYNAMIC_INPUTS` (the handlers here,
and sums and means over it) and refuses any other consumer by name."""

from __future__ import annotations

import math

import numpy as np

from dfc.torch.aten_common import UnsupportedOp, handler_table
from dfc.torch.ir_text import Value

DYNAMIC_HANDLERS, handles = handler_table()

DYNAMIC_INPUTS = frozenset({"aten.sum.default", "aten.sum.dim_IntList", "aten.mean.default", "aten.mean.dim"})
"""The ops (besides those with a handler here) that take a tensor of data-dependent size: sums and means
over it (`nn.reduce` reduces a dynamic size; one that keeps it is refused by its verifier)."""


def _points(b, mask: Value) -> Value:
    return b.op("nn.nonzero", [mask], [-1, len(mask.shape)], "i64")


@handles("nonzero.default")
def _nonzero(b, node, x):
    """The (count, rank) int64 coordinates of x's nonzero elements in row-major order."""
    return _points(b, x)


@handles("masked_select.default")
def _masked_select(b, node, x, mask):
    """The elements of x where mask (broadcast together) is true, in row-major order."""
    shape = tuple(np.broadcast_shapes(x.shape, mask.shape))
    x, mask = b.broadcast(x, shape), b.broadcast(mask, shape)
    return b.op("nn.gather_points", [x, _points(b, mask)], [-1], x.dtype, axis=0)


def boolean_index(b, node, x: Value, indices: list) -> Value:
    """`x[:, ..., m]` for one boolean mask m over the dimensions from its position (the only index
    tensor): those dimensions become one of the mask's true count."""
    given = [d for d, i in enumerate(indices) if i is not None]
    if len(given) != 1:
        raise UnsupportedOp("a boolean mask with other index tensors (use the mask alone)")
    (axis,) = given
    mask = indices[axis]
    k = len(mask.shape)
    if tuple(x.shape[axis : axis + k]) != tuple(mask.shape):
        raise UnsupportedOp(f"a boolean mask of shape {list(mask.shape)} for dimensions of sizes "
                            f"{list(x.shape[axis : axis + k])}")
    shape = [*x.shape[:axis], -1, *x.shape[axis + k :]]
    return b.op("nn.gather_points", [x, _points(b, mask)], shape, x.dtype, axis=axis)


@handles("_unique2.default")
def _unique2(b, node, x, sorted, return_inverse, return_counts):
    """torch.unique without `dim`: the distinct elements of the flattened x, ascending (also for
    sorted=False, as torch's CPU kernel; each NaN distinct), the inverse (x's shape) and the counts
    as asked (empty tensors otherwise)."""
    flat = b.reshape(x, [math.prod(x.shape)]) if len(x.shape) != 1 else x
    values = b.op("nn.unique", [flat], [-1], x.dtype, part="values")
    inverse = b.reshape(b.op("nn.unique", [flat], flat.shape, "i64", part="inverse"), x.shape) if return_inverse \
        else b.full(0, [0], "i64")
    counts = b.op("nn.unique", [flat], [-1], "i64", part="counts") if return_counts else b.full(0, [0], "i64")
    return values, inverse, counts
