"""Sorting aten ops on the library's one sort, `nn.argsort` (stable; NaN last
ascending and first descending, as PyTorch): `sort` (both overloads; the
export decomposes `argsort` and `msort` into it), `topk` (the first k of the sorted order; equal values
keep their index order) and `median` (the lower median; NaN and the first
NaN's index where a row holds one, as torch's CPU kernel), of every dtype.
`kthvalue` (position k - 1 of the sort) and `mode` (pairwise counts) too. Values are gathered by the
indices (`take_along`), so their gradient is the gather's. Where torch leaves the index among equal values
unspecified (`kthvalue`, `mode`), the handler's docstring says which dfc returns."""

from __future__ import annotations

import math

from dfc.torch.aten_common import handler_table
from dfc.torch.ir_text import Raw, Value

SORT_HANDLERS, handles = handler_table()


def argsort(b, x: Value, dim: int, descending: bool, k: int | None = None) -> Value:
    """The i64 stable sorting permutation of `x` along `dim`, its first `k` positions if given (a 0-d `x`
    gives 0)."""
    props: dict[str, object] = {"axis": dim}
    if descending:
        props["descending"] = Raw("unit")
    if k is not None:
        props["k"] = k
    return b.op("nn.argsort", [x], [k if d == dim and k is not None else n for d, n in enumerate(x.shape)], "i64",
                **props)


def take_along(b, x: Value, indices: Value, dim: int) -> Value:
    """`torch.gather(x, dim, indices)` (take_along_axis) for indices shaped like `x` except along `dim`."""
    rank = len(x.shape)
    others = [d for d in range(rank) if d != dim]
    return b.op("nn.gather", [x, indices], indices.shape, x.dtype, offset_dims=[], collapsed_slice_dims=[dim],
                operand_batching_dims=others, start_indices_batching_dims=others, start_index_map=[dim],
                index_vector_dim=rank, slice_sizes=[1] * rank)


def _sorted(b, x: Value, dim: int, descending: bool, k: int | None = None) -> tuple[Value, Value]:
    """(values, indices) of the first `k` (default: all) elements of x's stable sort along `dim`."""
    if not x.shape:
        return x, b.full(0, (), "i64")
    dim %= len(x.shape)
    indices = argsort(b, x, dim, descending, k if k is not None and k != x.shape[dim] else None)
    return take_along(b, x, indices, dim), indices


@handles("sort.default")
def _sort(b, node, x, dim, descending):
    return _sorted(b, x, dim, descending)


@handles("sort.stable")
def _sort_stable(b, node, x, *, stable, dim, descending):
    return _sorted(b, x, dim, descending)


@handles("topk.default")
def _topk(b, node, x, k, dim, largest, sorted):
    """The k largest (smallest) elements along `dim` in order, and their indices (always sorted)."""
    return _sorted(b, x, dim, largest, k)


def _median(b, x: Value, dim: int, keepdim: bool) -> tuple[Value, Value]:
    """The lower median along `dim` and its index: the stable sort's position (n - 1) // 2, or, where the
    row holds a NaN, its first NaN (position n - #NaN)."""
    if not x.shape:
        return x, b.full(0, (), "i64")
    dim %= len(x.shape)
    n = x.shape[dim]
    row = [1 if d == dim else size for d, size in enumerate(x.shape)]
    middle = b.full((n - 1) // 2, row, "i64")
    if x.is_float:
        order = argsort(b, x, dim, False)
        nans = b.reduce("sum", b.convert(b.compare("NE", x, x), "f64"), [dim], keepdims=True)  # exact counts
        first_nan = b.convert(b.binary("nn.sub", b.full(n, row, "f64"), nans), "i64")
        position = b.op("nn.select", [b.compare("GT", nans, 0.0), first_nan, middle], row, "i64")
    else:
        order, position = argsort(b, x, dim, False, (n - 1) // 2 + 1), middle
    index = take_along(b, order, position, dim)
    value = take_along(b, x, index, dim)
    if keepdim:
        return value, index
    kept = [size for d, size in enumerate(x.shape) if d != dim]
    return b.reshape(value, kept), b.reshape(index, kept)


@handles("median.dim")
def _median_dim(b, node, x, dim, keepdim):
    return _median(b, x, dim, keepdim)


@handles("median.default")
def _median_all(b, node, x):
    return _median(b, b.reshape(x, [math.prod(x.shape)] if x.shape else []), 0, False)[0]


def _keep_or_drop(b, value: Value, index: Value, dim: int, keepdim: bool) -> tuple[Value, Value]:
    """(value, index), reduced along `dim` to size 1, kept so or with `dim` dropped."""
    if keepdim:
        return value, index
    kept = [size for d, size in enumerate(value.shape) if d != dim]
    return b.reshape(value, kept), b.reshape(index, kept)


@handles("kthvalue.default")
def _kthvalue(b, node, x, k, dim, keepdim):
    """The k-th smallest value along `dim` and its index: position k - 1 of the stable sort (NaN largest), so
    among equal values dfc returns the index of the one the stable order puts there (torch leaves it
    unspecified). The value is gathered at the index: its gradient goes to that element."""
    if not x.shape:
        return x, b.full(0, (), "i64")
    dim %= len(x.shape)
    if not 1 <= k <= x.shape[dim]:
        raise UnsupportedOp(f"kthvalue with k = {k} of a dimension of size {x.shape[dim]} (torch's error)")
    order = argsort(b, x, dim, False, k if k < x.shape[dim] else None)
    row = [1 if d == dim else size for d, size in enumerate(x.shape)]
    index = b.op("nn.slice", [order], row, "i64", start_indices=[k - 1 if d == dim else 0 for d in range(len(row))],
                 limit_indices=[k if d == dim else size for d, size in enumerate(row)], strides=[1] * len(row))
    return _keep_or_drop(b, take_along(b, x, index, dim), index, dim, keepdim)


@handles("mode.default")
def _mode(b, node, x, dim, keepdim):
    """The most frequent value along `dim` (the smallest of those equally frequent, as torch's CPU kernel) and
    the index of its last occurrence (torch's index among equal values is unspecified). Counting compares every
    pair of a row: O(n^2) per row of n. A row holding NaN has no defined mode (torch's sort of it is not
    ordered either): NaN equals nothing here."""
    if not x.shape:
        return x, b.full(0, (), "i64")
    dim %= len(x.shape)
    rank, n = len(x.shape), x.shape[dim]
    mine = b.reshape(x, [*x.shape[:dim + 1], 1, *x.shape[dim + 1:]])  # element j along dim, others along dim + 1
    others = b.reshape(x, [*x.shape[:dim], 1, *x.shape[dim:]])
    equal = b.convert(b.compare("EQ", mine, others), "f64")
    counts = b.reduce("sum", equal, [dim + 1])  # exact: how often each element's value occurs in its row
    most = b.compare("EQ", counts, b.reduce("max", counts, [dim], keepdims=True))
    candidate = b.convert(b.reshape(most, mine.shape), "f64")
    smaller = b.convert(b.compare("LT", others, mine), "f64")  # a candidate value below element j's
    beaten = b.reduce("max", b.binary("nn.mul", smaller, b.reshape(candidate, others.shape)), [dim + 1])
    chosen = b.op("nn.and", [most, b.compare("EQ", beaten, 0.0)], most.shape, "i1")
    position = b.along(b.op("nn.iota", [], [n], "f64", iota_dimension=0), rank, dim)
    last = b.reduce("max", b.op("nn.select", [chosen, b.broadcast(position, x.shape), b.full(-1.0, x.shape, "f64")],
                                x.shape, "f64"), [dim], keepdims=True)
    index = b.convert(last, "i64")
    return _keep_or_drop(b, take_along(b, x, index, dim), index, dim, keepdim)
