"""aten's `_embedding_bag` (nn.EmbeddingBag, F.embedding_bag): sums, means or maxima of bags of embedding
rows, the bags delimited by the `offsets` tensor's values at run time. A segment reduction: each bag's
membership of each index position is computed from the offsets (a comparison with the positions), so no
bag boundary is baked into the program; sum and mean are a product with the membership matrix, max an
argmax over the member rows."""

from __future__ import annotations

import math

from dfc.torch.aten_common import UnsupportedOp, handler_table
from dfc.torch.aten_sort import take_along
from dfc.torch.ir_text import Value

BAG_HANDLERS, handles = handler_table()

SUM, MEAN, MAX = 0, 1, 2
"""torch's numbering of the modes."""


def _membership(b, indices: Value, offsets: Value, include_last_offset: bool, padding_idx: int) -> Value:
    """(B, L) i1: whether index position i belongs to bag b, bag b being positions offsets[b] to offsets[b + 1]
    (the last to the end, unless `include_last_offset` makes the offsets its own end), a position holding
    `padding_idx` in none."""
    n = indices.shape[0]
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    offsets = b.convert(offsets, "i64")
    starts = b.op("nn.slice", [offsets], [bags], "i64", start_indices=[0], limit_indices=[bags], strides=[1])
    if include_last_offset:
        ends = b.op("nn.slice", [offsets], [bags], "i64", start_indices=[1], limit_indices=[bags + 1], strides=[1])
    else:
        rest = b.op("nn.slice", [offsets], [bags - 1], "i64", start_indices=[1], limit_indices=[bags], strides=[1])
        ends = b.op("nn.concatenate", [rest, b.full(n, [1], "i64")], [bags], "i64", dimension=0)
    position = b.reshape(b.op("nn.iota", [], [n], "i64", iota_dimension=0), [1, n])
    inside = b.op("nn.and", [b.compare("LE", b.reshape(starts, [bags, 1]), position),
                             b.compare("LT", position, b.reshape(ends, [bags, 1]))], [bags, n], "i1")
    if padding_idx < 0:
        return inside
    counted = b.reshape(b.compare("NE", indices, b.full(padding_idx, (), "i64")), [1, n])
    return b.op("nn.and", [inside, counted], [bags, n], "i1")


@handles("_embedding_bag.default", "_embedding_bag_forward_only.default")
def _embedding_bag(b, node, weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                   include_last_offset, padding_idx):
    """The bags' reductions (B, D) of the rows `weight[indices]`: `sum` (each row scaled by its
    `per_sample_weights`), `mean` over the bag's members, `max` per column (the first maximal row's value, so
    its gradient goes to that row, as torch's); an empty bag gives 0. The other results (offset2bag, bag sizes,
    max indices) are not computed. Where gradients are wanted (`_embedding_bag`), `scale_grad_by_freq` and
    `sparse` (torch's gradient would be a sparse tensor) are refused; they change no value."""
    differentiated = "forward_only" not in str(node.target)  # the export's form when gradients are wanted
    if scale_grad_by_freq and differentiated:
        raise UnsupportedOp("embedding_bag with scale_grad_by_freq=True (the gradient scaled by each index's "
                            "frequency in the batch)")
    if sparse and differentiated:
        raise UnsupportedOp("embedding_bag with sparse=True (torch's weight gradient is a sparse tensor)")
    if len(indices.shape) != 1:
        raise UnsupportedOp(f"_embedding_bag of {len(indices.shape)}-d indices (F.embedding_bag flattens them)")
    shape, dtype = b.out(node)
    bags, width = shape
    indices = b.convert(indices, "i64")
    member = _membership(b, indices, offsets, include_last_offset, padding_idx)
    rows = b.take(b.convert(weight, dtype), 0, indices)
    counts = b.reduce("sum", b.convert(member, dtype), [1], keepdims=True)
    empty = b.compare("EQ", counts, 0.0)
    zero = b.full(0.0, (), dtype)
    if mode == MAX:
        masked = b.op("nn.select", [b.reshape(member, [bags, indices.shape[0], 1]), b.reshape(rows, [1, *rows.shape]),
                                    b.full(-math.inf, (), dtype)], [bags, *rows.shape], dtype)
        first = b.reshape(b.op("nn.argmax", [masked], [bags, width], "i64", axis=1), [bags, 1, width])
        largest = b.reshape(take_along(b, masked, first, 1), [bags, width])
        return b.op("nn.select", [empty, zero, largest], shape, dtype), None, None, None
    if per_sample_weights is not None:
        if mode != SUM:
            raise UnsupportedOp("embedding_bag with per_sample_weights in a mode other than sum (torch's error)")
        rows = b.binary("nn.mul", rows, b.reshape(b.convert(per_sample_weights, dtype), [indices.shape[0], 1]))
    total = b.op("nn.matmul", [b.convert(member, dtype), rows], shape, dtype)
    if mode == SUM:
        return total, None, None, None
    divisor = b.op("nn.select", [empty, b.full(1.0, (), dtype), counts], counts.shape, dtype)
    return b.binary("nn.div", total, divisor), None, None, None
