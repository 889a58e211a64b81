"""Indexing nn ops: StableHLO's `gather` (the form `x[idx]`, `take_along_axis`
and embedding lookups lower to). The expansion is in
`dialects.nn_expand_indexing`; autodiff differentiates it (a wcr(add) scatter
into the operand's gradient).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, IntegerType, Signedness, TensorType, i64
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from dfc.dialects.nn import NNOp, _static

_ARRAYS = (
    "offset_dims", "collapsed_slice_dims", "operand_batching_dims", "start_indices_batching_dims", "start_index_map",
    "slice_sizes",
)  # fmt: skip


@irdl_op_definition
class GatherOp(NNOp):
    """StableHLO's `gather`: slices of `operand` at start positions read from `start_indices`.

    For a result index, its dimensions outside `offset_dims` form the batch index; the
    start index is the vector of `start_indices` at the batch index (along
    `index_vector_dim`, or the scalar there when it equals the rank). Component k
    starts operand dimension `start_index_map[k]`, clamped to
    `[0, size - slice_sizes[...]]`; `operand_batching_dims[i]` take the batch index
    of `start_indices_batching_dims[i]`; the result's `offset_dims` index within the
    `slice_sizes` slice, whose `collapsed_slice_dims` (and batching dimensions) are
    dropped. Syntax:
    `%r = nn.gather %x, %idx {offset_dims = array<i64: 1>, collapsed_slice_dims = array<i64: 0>,
    operand_batching_dims = array<i64>, start_indices_batching_dims = array<i64>,
    start_index_map = array<i64: 0>, index_vector_dim = 1 : i64, slice_sizes = array<i64: 1, 8>}
    : (tensor<10x8xf32>, tensor<5x1xi64>) -> tensor<5x8xf32>` (an embedding lookup).
    """

    name = "nn.gather"

    operand = operand_def(TensorType)
    start_indices = operand_def(TensorType)
    offset_dims = prop_def(DenseArrayBase.constr(i64))
    collapsed_slice_dims = prop_def(DenseArrayBase.constr(i64))
    operand_batching_dims = prop_def(DenseArrayBase.constr(i64))
    start_indices_batching_dims = prop_def(DenseArrayBase.constr(i64))
    start_index_map = prop_def(DenseArrayBase.constr(i64))
    index_vector_dim = prop_def(IntegerAttr)
    slice_sizes = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)
    assembly_format = "$operand `,` $start_indices attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        operand: SSAValue,
        start_indices: SSAValue,
        dims: dict[str, Sequence[int]],
        index_vector_dim: int,
    ):
        props: dict = {n: DenseArrayBase.from_list(i64, dims.get(n, ())) for n in _ARRAYS}
        props["index_vector_dim"] = IntegerAttr(index_vector_dim, i64)
        t, idx = _static(operand.type, "operand"), _static(start_indices.type, "start_indices")
        shape = gather_shape(t.get_shape(), idx.get_shape(), {n: tuple(dims.get(n, ())) for n in _ARRAYS}, index_vector_dim)
        super().__init__(
            operands=[operand, start_indices], result_types=[TensorType(t.element_type, shape)], properties=props
        )

    def dims(self) -> dict[str, tuple[int, ...]]:
        return {n: tuple(getattr(self, n).get_values()) for n in _ARRAYS}

    def infer_type(self) -> TensorType:
        t, idx = _static(self.operand.type, "operand"), _static(self.start_indices.type, "start_indices")
        e = idx.element_type
        if not (isinstance(e, IntegerType) and e.signedness.data == Signedness.SIGNLESS and e.width.data > 1):
            raise VerifyException(f"start_indices must be an integer tensor, got {idx}")
        shape = gather_shape(t.get_shape(), idx.get_shape(), self.dims(), self.index_vector_dim.value.data)
        return TensorType(t.element_type, shape)


def _check_dims(name: str, values: Sequence[int], rank: int, what: str) -> None:
    if any(not 0 <= v < rank for v in values):
        raise VerifyException(f"{name} {list(values)} out of range for the {what} rank {rank}")
    if len(set(values)) != len(values):
        raise VerifyException(f"{name} {list(values)} repeat a dimension")


def batch_shape(index_shape: Sequence[int], index_vector_dim: int) -> list[int]:
    """The batch dimensions: `start_indices`' shape without `index_vector_dim`."""
    return [d for k, d in enumerate(index_shape) if k != index_vector_dim]


def gather_shape(
    shape: Sequence[int], index_shape: Sequence[int], dims: dict[str, tuple[int, ...]], index_vector_dim: int
) -> list[int]:
    rank, index_rank = len(shape), len(index_shape)
    if not 0 <= index_vector_dim <= index_rank:
        raise VerifyException(f"index_vector_dim {index_vector_dim} out of range for start_indices of rank {index_rank}")
    vector = index_shape[index_vector_dim] if index_vector_dim < index_rank else 1
    start_map, sizes = dims["start_index_map"], dims["slice_sizes"]
    if len(start_map) != vector:
        raise VerifyException(f"start_index_map has {len(start_map)} elements, the index vector {vector}")
    if len(sizes) != rank:
        raise VerifyException(f"slice_sizes has {len(sizes)} elements, expected one per operand dimension ({rank})")
    for name in ("collapsed_slice_dims", "operand_batching_dims", "start_index_map"):
        _check_dims(name, dims[name], rank, "operand")
    _check_dims("start_indices_batching_dims", dims["start_indices_batching_dims"], index_rank, "start_indices")
    if index_vector_dim in dims["start_indices_batching_dims"]:
        raise VerifyException("start_indices_batching_dims holds index_vector_dim")
    dropped = (*dims["collapsed_slice_dims"], *dims["operand_batching_dims"])
    if len(set(dropped)) != len(dropped):
        raise VerifyException("collapsed_slice_dims and operand_batching_dims overlap")
    if set(dims["operand_batching_dims"]) & set(start_map):
        raise VerifyException("operand_batching_dims and start_index_map overlap")
    if len(dims["operand_batching_dims"]) != len(dims["start_indices_batching_dims"]):
        raise VerifyException("operand_batching_dims and start_indices_batching_dims differ in length")
    for d, s in zip(dims["operand_batching_dims"], dims["start_indices_batching_dims"]):
        if shape[d] != index_shape[s]:
            raise VerifyException(f"batching dimension sizes differ: operand {d} ({shape[d]}), start_indices {s} ({index_shape[s]})")
    for k, (size, d) in enumerate(zip(sizes, shape)):
        if not 0 <= size <= d:
            raise VerifyException(f"slice size {size} of dimension {k} is not in [0, {d}]")
        if k in dropped and size > 1:
            raise VerifyException(f"slice size {size} of collapsed or batching dimension {k} is not 0 or 1")
    offsets = [size for k, size in enumerate(sizes) if k not in dropped]
    batch = batch_shape(index_shape, index_vector_dim)
    offset_dims = dims["offset_dims"]
    if len(offset_dims) != len(offsets) or list(offset_dims) != sorted(set(offset_dims)):
        raise VerifyException(f"offset_dims {list(offset_dims)} must be {len(offsets)} increasing result dimensions")
    out_rank = len(batch) + len(offsets)
    _check_dims("offset_dims", offset_dims, out_rank, "result")
    out, b, o = [], iter(batch), iter(offsets)
    for k in range(out_rank):
        out.append(next(o) if k in offset_dims else next(b))
    return out


INDEXING_OPS = [GatherOp]
