"""aten's data movement: views, permutes, expands, slices, `cat`, embedding,
creation (`arange`, `empty`), splitting, tiling, scans, padding, flips, diagonals,
slice scatters and indexing (`gather`, `index`, `index_select`, `scatter`,
`index_put`, `masked_scatter`)."""

from __future__ import annotations

import numpy as np

from dfc.torch.aten_common import UnsupportedOp, handler_table
from dfc.torch.aten_dynamic import boolean_index
from dfc.torch.ir_text import Value

SHAPE_HANDLERS, handles = handler_table()


# --- data movement -----------------------------------------------------------------

@handles("view.default", "view_copy.default", "squeeze.dims", "unsqueeze.default")
def _reshape(b, node, x, *args):
    return b.reshape(x, b.out(node)[0])


@handles("clone.default", "alias.default", "_to_copy.default")
def _copy(b, node, x, **kwargs):
    return b.convert(x, b.out(node)[1])


@handles("detach.default")
def _detach(b, node, x):
    """`nn.stop_gradient` (an integer or boolean tensor has no gradient to stop)."""
    return b.unary("nn.stop_gradient", x) if x.is_float else x


@handles("_assert_tensor_metadata.default")
def _assert_tensor_metadata(b, node, *args, **kwargs):
    """Nothing: export checked the metadata on its fake tensors (no result)."""


@handles("permute.default")
def _permute(b, node, x, dims):
    return b.transpose(x, dims)


@handles("expand.default")
def _expand(b, node, x, sizes, implicit):
    return b.broadcast(x, b.out(node)[0])


def _slice(b, x, dim, start, end, step):
    rank = len(x.shape)
    dim %= rank
    starts, limits, strides = [0] * rank, list(x.shape), [1] * rank
    starts[dim], limits[dim], strides[dim] = start, end, step
    shape = [(lim - s + st - 1) // st for s, lim, st in zip(starts, limits, strides)]
    return b.op("nn.slice", [x], shape, x.dtype, start_indices=starts, limit_indices=limits, strides=strides)


@handles("slice.Tensor")
def _slice_tensor(b, node, x, dim, start, end, step):
    size = x.shape[dim]
    start, stop, step = slice(start, end, step).indices(size)
    if step < 1:
        raise UnsupportedOp("slice with a negative step")
    return _slice(b, x, dim, start, max(start, stop), step)


@handles("select.int")
def _select(b, node, x, dim, index):
    index %= x.shape[dim]
    return b.reshape(_slice(b, x, dim, index, index + 1, 1), b.out(node)[0])


@handles("cat.default")
def _cat(b, node, tensors, dim):
    shape, dtype = b.out(node)
    tensors = [b.convert(t, dtype) for t in tensors if t.shape != (0,)]
    if len(tensors) == 1:
        return tensors[0]
    return b.op("nn.concatenate", tensors, shape, dtype, dimension=dim % len(shape))


@handles("embedding.default")
def _embedding(b, node, weight, indices, padding_idx, scale_grad_by_freq, sparse):
    """The rows `indices` pick (`nn.gather`). With a `padding_idx` the rows looked up
    there pass through `nn.stop_gradient`: torch's gradient leaves that row out."""
    if scale_grad_by_freq or sparse:
        raise UnsupportedOp("embedding with scale_grad_by_freq or sparse")
    shape, dtype = b.out(node)
    rank = len(indices.shape)
    rows = b.op(
        "nn.gather", [weight, indices], shape, dtype,
        offset_dims=[rank], collapsed_slice_dims=[0], operand_batching_dims=[], start_indices_batching_dims=[],
        start_index_map=[0], index_vector_dim=rank, slice_sizes=[1, weight.shape[1]],
    )
    if padding_idx in (-1, None) or not rows.is_float:
        return rows
    padding = b.broadcast(b.reshape(b.compare("EQ", indices, padding_idx), [*indices.shape, 1]), shape)
    return b.op("nn.select", [padding, b.unary("nn.stop_gradient", rows), rows], shape, dtype)


# --- creation, splitting, tiling, scans --------------------------------------------

@handles("arange.start_step")
def _arange(b, node, start, end, step, **kwargs):
    """start + i * step, computed in f64 (i64 for integer results) and converted, as torch's accumulation."""
    (n,), dtype = b.out(node)
    wide = "f64" if dtype.startswith("f") else "i64"
    y = b.op("nn.iota", [], (n,), wide, iota_dimension=0)
    if step != 1:
        y = b.binary("nn.mul", y, step, wide)
    if start != 0:
        y = b.binary("nn.add", y, start, wide)
    return b.convert(y, dtype)


@handles("split_with_sizes.default")
def _split_with_sizes(b, node, x, sizes, dim):
    dim %= len(x.shape)
    starts = np.cumsum([0, *sizes])
    return tuple(_slice(b, x, dim, int(s), int(s + n), 1) for s, n in zip(starts, sizes))


@handles("repeat.default")
def _repeat(b, node, x, repeats):
    """x tiled `repeats` times: (1, d0, 1, d1, ...) broadcast to (r0, d0, r1, d1, ...), then merged."""
    shape = (1,) * (len(repeats) - len(x.shape)) + x.shape
    x = b.reshape(x, [n for d in shape for n in (1, d)])
    x = b.broadcast(x, [n for r, d in zip(repeats, shape) for n in (r, d)])
    return b.reshape(x, b.out(node)[0])


@handles("cumsum.default")
def _cumsum(b, node, x, dim, dtype):
    """Inclusive prefix sums along `dim` in log2(n) steps (x + x shifted by 1, 2, 4, ...; Hillis and Steele)."""
    x = b.convert(x, b.out(node)[1])
    return _prefix_sum(b, x, dim % len(x.shape) if x.shape else 0)


def _prefix_sum(b, x: Value, axis: int) -> Value:
    if not x.shape:
        return x
    shift = 1
    while shift < x.shape[axis]:
        low = [shift if d == axis else 0 for d in range(len(x.shape))]
        x = b.binary("nn.add", x, b.pad(x, low, [-n for n in low]))
        shift *= 2
    return x


@handles("constant_pad_nd.default")
def _constant_pad_nd(b, node, x, pad, value):
    """`pad` as (low, high) pairs from the last dimension backwards; negative amounts crop."""
    rank = len(x.shape)
    low, high = [0] * rank, [0] * rank
    for k in range(len(pad) // 2):
        low[rank - 1 - k], high[rank - 1 - k] = pad[2 * k], pad[2 * k + 1]
    return b.pad(x, low, high, value)


@handles("copy.default")
def _copy_into(b, node, x, src, non_blocking):
    """src converted to x's dtype and broadcast to its shape (x's values are not read)."""
    return b.broadcast(b.convert(src, x.dtype), x.shape)


@handles("slice_scatter.default")
def _slice_scatter(b, node, x, src, dim, start, end, step):
    """x with src written at x[start:end:step] along `dim`: src padded into place (interior padding for
    the step), selected by a mask padded likewise."""
    dim %= len(x.shape)
    start, stop, step = slice(start, end, step).indices(x.shape[dim])
    if src.shape[dim] == 0:
        return x
    low = [start if d == dim else 0 for d in range(len(x.shape))]
    high = [x.shape[d] - start - (src.shape[d] - 1) * step - 1 if d == dim else 0 for d in range(len(x.shape))]
    interior = [step - 1 if d == dim else 0 for d in range(len(x.shape))]
    placed = b.pad(b.convert(src, x.dtype), low, high, 0, interior)
    mask = b.pad(b.full(True, src.shape, "i1"), low, high, False, interior)
    return b.op("nn.select", [mask, placed, x], x.shape, x.dtype)


# --- indexing ----------------------------------------------------------------------

def _wrapped(b, index: Value, size: int) -> Value:
    """An integer index tensor with negative entries counted from the end (`index + size` where negative), i64."""
    index = b.convert(index, "i64")
    negative = b.compare("LT", index, 0)
    return b.op("nn.select", [negative, b.binary("nn.add", index, size), index], index.shape, "i64")


@handles("gather.default")
def _gather(b, node, x, dim, index, sparse_grad):
    """out[i][j][k] = x[i][index[i][j][k]][k] (dim 1): an `nn.gather` of single elements whose other
    dimensions are batching dimensions (x cropped to index's extent in them first)."""
    rank = len(x.shape)
    if rank == 0:  # every index is 0
        return b.broadcast(b.reshape(x, [1] * len(index.shape)), index.shape)
    dim %= rank
    others = [d for d in range(rank) if d != dim]
    x = b.op("nn.slice", [x], [index.shape[d] if d != dim else n for d, n in enumerate(x.shape)], x.dtype,
             start_indices=[0] * rank, limit_indices=[index.shape[d] if d != dim else n for d, n in enumerate(x.shape)],
             strides=[1] * rank) if any(index.shape[d] != x.shape[d] for d in others) else x
    return b.op(
        "nn.gather", [x, _wrapped(b, index, x.shape[dim])], index.shape, x.dtype, offset_dims=[],
        collapsed_slice_dims=[dim], operand_batching_dims=others, start_indices_batching_dims=others,
        start_index_map=[dim], index_vector_dim=rank, slice_sizes=[1] * rank,
    )


@handles("index.Tensor")
def _index(b, node, x, indices):
    """x[i0, :, i2] with integer index tensors (broadcast together, negative ones counted from
    the end): an `nn.gather` of the indexed dimensions. The broadcast index dimensions replace the
    indexed ones where those are adjacent, else they come first (numpy's rule). A boolean mask:
    `aten_dynamic.boolean_index`."""
    if any(i is not None and i.dtype == "i1" for i in indices):
        return boolean_index(b, node, x, indices)
    dims = [d for d, i in enumerate(indices) if i is not None]
    shape, dtype = b.out(node)
    batch = np.broadcast_shapes(*(indices[d].shape for d in dims))
    k = len(batch)
    columns = [b.reshape(b.broadcast(_wrapped(b, indices[d], x.shape[d]), batch), [*batch, 1]) for d in dims]
    stacked = columns[0] if len(columns) == 1 else b.op("nn.concatenate", columns, [*batch, len(dims)], "i64",
                                                        dimension=k)
    rest = [d for d in range(len(x.shape)) if d not in dims]
    first = dims[0] if dims == list(range(dims[0], dims[-1] + 1)) else 0
    offset = [p if p < first else p + k for p in range(len(rest))]
    return b.op(
        "nn.gather", [x, stacked], shape, dtype, offset_dims=offset, collapsed_slice_dims=dims,
        operand_batching_dims=[], start_indices_batching_dims=[], start_index_map=dims, index_vector_dim=k,
        slice_sizes=[1 if d in dims else n for d, n in enumerate(x.shape)],
    )


# --- more of the core set: flips, diagonals, selections and scatters ----------------

@handles("flip.default")
def _flip(b, node, x, dims):
    dims = sorted({d % len(x.shape) for d in dims}) if x.shape else []
    return b.op("nn.reverse", [x], x.shape, x.dtype, dimensions=dims) if dims else x


@handles("as_strided.default")
def _as_strided(b, node, x, size, stride, storage_offset):
    """The elements of x's storage torch's view reads, located by the strides and
    storage offset x has in eager (its fake tensor's): a view that reads x's
    elements in order is a reshape, any other an `nn.gather` of them (a restride
    of a channels-last result, a transpose, overlapping windows). A view that
    reaches storage x does not cover (of the tensor x is a view of) is refused."""
    val = node.args[0].meta["val"]
    offset = val.storage_offset() if storage_offset is None else storage_offset
    index = np.indices(x.shape, dtype=np.int64).reshape(len(x.shape), -1)
    held = val.storage_offset() + np.asarray(val.stride(), dtype=np.int64).reshape(-1, 1) * index
    held = held.sum(0) if len(x.shape) else np.array([val.storage_offset()])
    owner = np.full(int(held.max()) + 1, -1, dtype=np.int64)
    owner[held] = np.arange(held.size)
    read = offset + (np.asarray(stride, dtype=np.int64).reshape(-1, 1)
                     * np.indices(size, dtype=np.int64).reshape(len(size), -1)).sum(0)
    if read.size and (read.max() >= owner.size or (owner[read] < 0).any()):
        raise UnsupportedOp("as_strided reading storage its input does not cover (a view of a larger tensor)")
    flat = owner[read] if read.size else read
    whole = b.reshape(x, [held.size])
    if np.array_equal(flat, np.arange(held.size)):
        return b.reshape(whole, size)
    return b.reshape(b.take(whole, 0, b.constant(flat, "i64")), size)


@handles("index_select.default")
def _index_select(b, node, x, dim, index):
    shape = b.out(node)[0]
    if not x.shape:  # a 0-d x: every index is 0
        return b.reshape(x, shape)
    dim %= len(x.shape)
    index = b.reshape(_wrapped(b, index, x.shape[dim]), [max(1, int(np.prod(index.shape)))])
    return b.reshape(b.take(x, dim, index), shape)


@handles("unfold.default")
def _unfold(b, node, x, dimension, size, step):
    """`Tensor.unfold`: the windows of `size` elements every `step` along `dimension`, as a new last dimension:
    a take of positions `i step + j` (window i, element j), its window axis moved last."""
    shape = b.out(node)[0]
    if not x.shape:  # a 0-d x: one window of its element
        return b.reshape(x, shape)
    dim = dimension % len(x.shape)
    windows = [shape[dim], size]
    starts = b.binary("nn.mul", b.op("nn.iota", [], windows, "i64", iota_dimension=0), b.full(step, (), "i64"))
    index = b.binary("nn.add", starts, b.op("nn.iota", [], windows, "i64", iota_dimension=1))
    taken = b.take(x, dim, index)
    return b.transpose(taken, [d for d in range(len(taken.shape)) if d != dim + 1] + [dim + 1])


@handles("diagonal.default")
def _diagonal(b, node, x, offset, dim1, dim2):
    """The diagonal `offset` of the (dim1, dim2) planes, last: those two moved last and flattened, then every
    (m + 1)th element from the diagonal's first."""
    shape, dtype = b.out(node)
    rank = len(x.shape)
    dim1, dim2 = dim1 % rank, dim2 % rank
    length = shape[-1]
    if length == 0:
        return b.full(0, shape, dtype)
    rest = [d for d in range(rank) if d not in (dim1, dim2)]
    n, m = x.shape[dim1], x.shape[dim2]
    flat = b.reshape(b.transpose(x, [*rest, dim1, dim2]), [*(x.shape[d] for d in rest), n * m])
    start = offset if offset >= 0 else -offset * m
    lead = len(rest)
    return b.op("nn.slice", [flat], shape, dtype, start_indices=[0] * lead + [start],
                limit_indices=[*flat.shape[:-1], start + (length - 1) * (m + 1) + 1], strides=[1] * lead + [m + 1])


def _scatter_along(b, node, x, dim, index, src, kind: str) -> Value:
    """torch's scatter along `dim`: x[i][index[i][j]] = src[i][j] (dim 1), for index's extent (src cropped to
    it): an `nn.scatter` of single elements at full coordinates (iotas in the other dimensions).
    `replace` with two indices alike keeps the last, `add` sums them."""
    shape, dtype = b.out(node)
    rank = len(x.shape)
    x = b.convert(x, dtype)
    if rank == 0:
        x, index = b.reshape(x, [1]), b.reshape(index, [1])
        src = b.reshape(src, [1]) if isinstance(src, Value) else src
    if 0 in index.shape:
        return b.reshape(x, shape)
    rank = len(x.shape)
    dim %= rank
    if isinstance(src, Value):
        src = b.convert(src, dtype)
        if not src.shape:
            src = b.reshape(src, [1] * rank)
        if src.shape != index.shape:
            src = b.op("nn.slice", [src], index.shape, dtype, start_indices=[0] * rank,
                       limit_indices=list(index.shape), strides=[1] * rank)
    else:
        src = b.full(src, index.shape, dtype)
    columns = [b.reshape(_wrapped(b, index, x.shape[d]) if d == dim else
                         b.op("nn.iota", [], index.shape, "i64", iota_dimension=d), [*index.shape, 1])
               for d in range(rank)]
    coordinates = b.op("nn.concatenate", columns, [*index.shape, rank], "i64", dimension=rank)
    logical = kind == "add" and dtype == "i1"  # booleans add as or: counted in i32, then compared with 0
    wide = "i32" if logical else dtype
    y = b.op("nn.scatter", [b.convert(x, wide), coordinates, b.convert(src, wide)], x.shape, wide, kind=kind,
             update_window_dims=[], inserted_window_dims=list(range(rank)), input_batching_dims=[],
             scatter_indices_batching_dims=[], scatter_dims_to_operand_dims=list(range(rank)), index_vector_dim=rank)
    return b.reshape(b.compare("NE", y, 0) if logical else y, shape)


@handles("scatter.src", "scatter.value")
def _scatter(b, node, x, dim, index, src):
    return _scatter_along(b, node, x, dim, index, src, "replace")


@handles("scatter_add.default")
def _scatter_add(b, node, x, dim, index, src):
    return _scatter_along(b, node, x, dim, index, src, "add")


@handles("index_put.default")
def _index_put(b, node, x, indices, values, accumulate):
    """x[i0, :, i2] = values (added with `accumulate`): the `nn.scatter` mirroring `index.Tensor`'s gather,
    values broadcast to the indexed shape. Two indices alike: the last value is kept, or all are added."""
    shape, dtype = b.out(node)
    if any(i is not None and i.dtype == "i1" for i in indices):
        raise UnsupportedOp("index_put with a boolean mask (its number of elements depends on the data)")
    dims = [d for d, i in enumerate(indices) if i is not None]
    batch = tuple(np.broadcast_shapes(*(indices[d].shape for d in dims)))
    k = len(batch)
    rest = [d for d in range(len(x.shape)) if d not in dims]
    first = dims[0] if dims == list(range(dims[0], dims[-1] + 1)) else 0
    rest_shape = [x.shape[d] for d in rest]
    window_shape = [*rest_shape[:first], *batch, *rest_shape[first:]]
    if 0 in window_shape:
        return x
    columns = [b.reshape(b.broadcast(_wrapped(b, indices[d], x.shape[d]), batch), [*batch, 1]) for d in dims]
    stacked = columns[0] if len(columns) == 1 else b.op("nn.concatenate", columns, [*batch, len(dims)], "i64",
                                                        dimension=k)
    logical = accumulate and dtype == "i1"  # booleans accumulate as or: counted in i32, then compared with 0
    wide = "i32" if logical else dtype
    updates = b.broadcast(b.convert(values, wide), window_shape)
    y = b.op("nn.scatter", [b.convert(x, wide), stacked, updates], shape, wide, kind="add" if accumulate else "replace",
             update_window_dims=[p if p < first else p + k for p in range(len(rest))],
             inserted_window_dims=dims, input_batching_dims=[], scatter_indices_batching_dims=[],
             scatter_dims_to_operand_dims=dims, index_vector_dim=k)
    return b.compare("NE", y, 0) if logical else y


@handles("empty.memory_format", "empty_strided.default", "empty_permuted.default")
def _empty(b, node, *args, **kwargs):
    """Uninitialised memory in torch; zeros here (a program that reads it before writing has no defined result)."""
    shape, dtype = b.out(node)
    return b.full(0, shape, dtype)


@handles("scatter.reduce", "scatter.value_reduce")
def _scatter_reduce(b, node, x, dim, index, src, reduce):
    """scatter with reduce="add" (scatter_add's); "multiply" is refused."""
    if reduce != "add":
        raise UnsupportedOp(f"scatter with reduce={reduce!r} (the library's scatter adds or replaces)")
    return _scatter_along(b, node, x, dim, index, src, "add")


@handles("masked_scatter.default")
def _masked_scatter(b, node, x, mask, source):
    """x with the elements where `mask` (broadcast to x) holds taken from `source` in order: the k-th true
    element (row-major) gets source's k-th element, k a prefix sum of the mask, so the shape is static. A
    source shorter than the mask's count is torch's error; here its last element repeats."""
    shape, dtype = b.out(node)
    n, count = int(np.prod(shape)), int(np.prod(source.shape))
    if n == 0 or count == 0:
        return b.reshape(b.convert(x, dtype), shape)
    flat_mask = b.reshape(b.broadcast(mask, shape), [n])
    index = b.binary("nn.sub", _prefix_sum(b, b.convert(flat_mask, "i64"), 0), 1, "i64")
    index = b.binary("nn.minimum", b.binary("nn.maximum", index, 0, "i64"), count - 1, "i64")
    taken = b.take(b.reshape(b.convert(source, dtype), [count]), 0, index)
    flat_x = b.reshape(b.broadcast(b.convert(x, dtype), shape), [n])
    return b.reshape(b.op("nn.select", [flat_mask, taken, flat_x], [n], dtype), shape)


@handles("scatter_reduce.two")
def _scatter_reduce_two(b, node, x, dim, index, src, reduce, include_self):
    """scatter_reduce with reduce="sum": scatter_add's, the hit elements of x first set to 0 when not
    include_self (an `nn.scatter` replace of zeros). "prod", "mean", "amax" and "amin" are refused."""
    if reduce != "sum":
        raise UnsupportedOp(f"scatter_reduce with reduce={reduce!r} (the library's scatter adds or replaces)")
    if not include_self:
        x = _scatter_along(b, node, x, dim, index, 0, "replace")
    return _scatter_along(b, node, x, dim, index, src, "add")
