"""aten's `_embedding_bag` (nn.EmbeddingBag, F.embedding_bag): sums, means or maxima of bags of embedding
rows, the bags delimited by the `offsets` tensor's values at run time. A segment reduction: each bag's
membership of each index position is computed from the offsets (a comparison with the positions), so no
bag boundary is baked into the program; sum and mean are a product with the membership matrix, max an
argmax over the member rows. The auxiliary results are torch's CPU kernel's: each index position's bag,
the bags' sizes and the maxima's rows (`_auxiliary`)."""

from __future__ import annotations

import math

from dfc.torch.aten_common import UnsupportedOp, handler_table, meta_type
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
    its gradient goes to that row, as torch's); an empty bag gives 0; and torch's other results (`_auxiliary`).
    Where gradients are wanted (`_embedding_bag`), `scale_grad_by_freq` and `sparse` (torch's gradient would
    be a sparse tensor) are refused; they change no value."""
    differentiated = "forward_only" not in str(node.target)  # the export's form when gradients are wanted
    if scale_grad_by_freq and differentiated:
        raise UnsupportedOp("embedding_bag with scale_grad_by_freq=True (the gradient scaled by each index's "
                            "frequency in the batch)")
    if sparse and differentiated:
        raise UnsupportedOp("embedding_bag with sparse=True (torch's weight gradient is a sparse tensor)")
    if len(indices.shape) != 1:
        raise UnsupportedOp(f"_embedding_bag of {len(indices.shape)}-d indices (F.embedding_bag flattens them)")
    total, first = _reduction(b, node, weight, b.convert(indices, "i64"), offsets, mode, per_sample_weights,
                              include_last_offset, padding_idx)
    return total, *_auxiliary(b, node, indices, offsets, mode, include_last_offset, padding_idx, first)


def _reduction(b, node, weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx):
    """The bags' reductions (B, D), and for max the index position (B, 1, D) of each maximum."""
    shape, dtype = b.out(node)
    bags, width = shape
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
        return b.op("nn.select", [empty, zero, largest], shape, dtype), first
    if per_sample_weights is not None:
        if mode != SUM:
            raise UnsupportedOp("embedding_bag with per_sample_weights in a mode other than sum (torch's error)")
        rows = b.binary("nn.mul", rows, b.reshape(b.convert(per_sample_weights, dtype), [indices.shape[0], 1]))
    total = b.op("nn.matmul", [b.convert(member, dtype), rows], shape, dtype)
    if mode == SUM:
        return total, None
    divisor = b.op("nn.select", [empty, b.full(1.0, (), dtype), counts], counts.shape, dtype)
    return b.binary("nn.div", total, divisor), None


def _auxiliary(b, node, indices: Value, offsets: Value, mode: int, include_last_offset: bool, padding_idx: int,
               first: Value | None) -> tuple[Value, Value, Value]:
    """torch's CPU kernel's other results, in the types and shapes its meta function gives (an empty one as
    its kernel's fast path for float32 sums): offset2bag, position i's bag (the number of offsets after the
    first that are <= i, so empty bags are skipped; padding positions keep theirs); bag_size, the bags'
    member counts without padding (zeros for sum); max_indices, for max the row of each maximum (0 for an
    empty bag), for mean the bag sizes again, for sum zeros."""
    types = [meta_type(v) for v in node.meta["val"][1:]]
    n, d = indices.shape[0], offsets.dtype

    def typed(v: Value, k: int) -> Value:
        shape, dtype = types[k]
        return b.full(0, shape, dtype) if 0 in shape else b.convert(v, dtype)

    ends = b.op("nn.slice", [b.convert(offsets, "i64")], [offsets.shape[0] - 1], "i64", start_indices=[1],
                limit_indices=[offsets.shape[0]], strides=[1])
    position = b.reshape(b.op("nn.iota", [], [n], "i64", iota_dimension=0), [1, n])
    passed = b.compare("LE", b.reshape(ends, [ends.shape[0], 1]), position)
    offset2bag = _count(b, passed, 0)
    bags = types[1][0][0]
    if mode == SUM:
        zeros = b.full(0, [bags], d)
        return typed(offset2bag, 0), typed(zeros, 1), typed(zeros, 2)
    member = _membership(b, b.convert(indices, "i64"), offsets, include_last_offset, padding_idx)
    sizes = _count(b, member, 1)
    if mode == MEAN:
        return typed(offset2bag, 0), typed(sizes, 1), typed(sizes, 2)
    assert first is not None
    rows = b.reshape(first, [bags, first.shape[-1]])
    found = b.take(b.convert(indices, "i64"), 0, rows)
    empty = b.reshape(b.compare("EQ", sizes, b.full(0, (), "i64")), [bags, 1])
    maxima = b.op("nn.select", [b.broadcast(empty, rows.shape), b.full(0, rows.shape, "i64"), found], rows.shape,
                  "i64")
    return typed(offset2bag, 0), typed(sizes, 1), typed(maxima, 2)


def _count(b, flags: Value, axis: int) -> Value:
    """The number of true `flags` along `axis`, as i64 (summed in f64: exact below 2^53)."""
    return b.convert(b.reduce("sum", b.convert(flags, "f64"), [axis]), "i64")
