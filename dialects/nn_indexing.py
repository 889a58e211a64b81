"""Indexing nn ops: StableHLO's `gather` (the form `x[idx]`, `take_along_axis`
and embedding lookups lower to) and `scatter` with an add or replace update
(`x.at[idx].add(u)`, `x[idx] = u`, and the gradients of gathers). The
expansions are in `dialects.nn_expand_indexing`; autodiff differentiates
gather's expansion (a wcr(add) scatter into the operand's gradient) and uses
the rule in `passes.autodiff.rules_indexing` for scatter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from dfc.dialects.nn_base import External, NNOp, _static

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
    EXTERNAL: ClassVar[External] = External(stablehlo="gather", onnx="Gather, GatherElements, GatherND")

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
            raise VerifyException(
                f"batching dimension sizes differ: operand {d} ({shape[d]}), start_indices {s} ({index_shape[s]})"
            )
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


SCATTER_KINDS = ("add", "mul", "max", "min", "replace")
_SCATTER_ARRAYS = (
    "update_window_dims", "inserted_window_dims", "input_batching_dims", "scatter_indices_batching_dims",
    "scatter_dims_to_operand_dims",
)  # fmt: skip
_AS_GATHER = dict(zip(_SCATTER_ARRAYS, _ARRAYS[:5]))
"""Each scatter dimension list and the gather one it corresponds to."""


@irdl_op_definition
class ScatterOp(NNOp):
    """StableHLO's `scatter` with an `add`, `mul`, `max`, `min` or `replace` update
    computation: `operand` with each window of `updates` combined into it at a start
    position read from `scatter_indices`.

    The dimensions mirror `nn.gather`'s (`update_window_dims` ~ `offset_dims`,
    `inserted_window_dims` ~ `collapsed_slice_dims`, `input_batching_dims`,
    `scatter_indices_batching_dims`, `scatter_dims_to_operand_dims` ~
    `start_index_map`), with window sizes taken from `updates`. Start indices are not
    clamped: a window that does not fit in `operand` is dropped (as XLA does). With
    `replace`, updates that hit one element twice leave an unspecified one of them; the
    other kinds combine every update of an element with it. Gradients: `add` and `replace`.
    """

    name = "nn.scatter"
    EXTERNAL: ClassVar[External] = External(stablehlo="scatter (add or replace body)", onnx="ScatterND, ScatterElements")

    operand = operand_def(TensorType)
    scatter_indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    kind = prop_def(StringAttr)
    update_window_dims = prop_def(DenseArrayBase.constr(i64))
    inserted_window_dims = prop_def(DenseArrayBase.constr(i64))
    input_batching_dims = prop_def(DenseArrayBase.constr(i64))
    scatter_indices_batching_dims = prop_def(DenseArrayBase.constr(i64))
    scatter_dims_to_operand_dims = prop_def(DenseArrayBase.constr(i64))
    index_vector_dim = prop_def(IntegerAttr)
    result = result_def(TensorType)
    assembly_format = "$operand `,` $scatter_indices `,` $updates attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        operand: SSAValue,
        scatter_indices: SSAValue,
        updates: SSAValue,
        kind: str,
        dims: dict[str, Sequence[int]],
        index_vector_dim: int,
    ):
        props: dict = {n: DenseArrayBase.from_list(i64, dims.get(n, ())) for n in _SCATTER_ARRAYS}
        props["kind"] = StringAttr(kind)
        props["index_vector_dim"] = IntegerAttr(index_vector_dim, i64)
        super().__init__(operands=[operand, scatter_indices, updates], result_types=[operand.type], properties=props)

    def gather_dims(self) -> dict[str, tuple[int, ...]]:
        """The dimensions as `nn.gather` names them, with `slice_sizes` from the update windows."""
        dims = {_AS_GATHER[n]: tuple(getattr(self, n).get_values()) for n in _SCATTER_ARRAYS}
        t, u = _static(self.operand.type, "operand"), _static(self.updates.type, "updates")
        dropped = {*dims["collapsed_slice_dims"], *dims["operand_batching_dims"]}
        windows = iter(u.get_shape()[d] for d in dims["offset_dims"] if 0 <= d < u.get_num_dims())
        dims["slice_sizes"] = tuple(1 if k in dropped else next(windows, 0) for k in range(t.get_num_dims()))
        return dims

    def infer_type(self) -> TensorType:
        if self.kind.data not in SCATTER_KINDS:
            raise VerifyException(f"kind must be one of {', '.join(SCATTER_KINDS)}, got '{self.kind.data}'")
        t, idx = _static(self.operand.type, "operand"), _static(self.scatter_indices.type, "scatter_indices")
        u = _static(self.updates.type, "updates")
        e = idx.element_type
        if not (isinstance(e, IntegerType) and e.signedness.data == Signedness.SIGNLESS and e.width.data > 1):
            raise VerifyException(f"scatter_indices must be an integer tensor, got {idx}")
        if u.element_type != t.element_type:
            raise VerifyException(f"updates element type {u.element_type} is not the operand's {t.element_type}")
        dims = self.gather_dims()
        windows = len(dims["offset_dims"])
        if windows != t.get_num_dims() - len(dims["collapsed_slice_dims"]) - len(dims["operand_batching_dims"]):
            raise VerifyException(
                f"update_window_dims has {windows} elements; the operand has "
                f"{t.get_num_dims() - len(dims['collapsed_slice_dims']) - len(dims['operand_batching_dims'])} window dimensions"
            )
        expected = gather_shape(t.get_shape(), idx.get_shape(), dims, self.index_vector_dim.value.data)
        if list(u.get_shape()) != expected:
            raise VerifyException(f"updates {u} do not have the shape {expected} the indices and windows give")
        return t


INDEXING_OPS = [GatherOp, ScatterOp]
