"""Sorting aten ops on the library's one sort, `nn.argsort` (stable; NaN last
ascending and first descending, as PyTorch): `sort` (both overloads),
`argsort`, `msort` and `topk` (the first k of the sorted order; equal values
keep their index order), of every dtype. Values are gathered by the indices
(`take_along`), so their gradient is the gather's."""

from __future__ import annotations

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
    """`torch.gather(x, dim, indices)` for indices shaped like `x` except along `dim`."""
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


@handles("argsort.default")
def _argsort(b, node, x, dim, descending):
    return _sorted(b, x, dim, descending)[1]


@handles("argsort.stable")
def _argsort_stable(b, node, x, *, stable, dim, descending):
    return _sorted(b, x, dim, descending)[1]


@handles("msort.default")
def _msort(b, node, x):
    return _sorted(b, x, 0, False)[0]


@handles("topk.default")
def _topk(b, node, x, k, dim, largest, sorted):
    """The k largest (smallest) elements along `dim` in order, and their indices (always sorted)."""
    return _sorted(b, x, dim, largest, k)
