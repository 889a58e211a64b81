"""Sorting in the nn dialect: `nn.argsort`, the one sort every way in uses.

Sorted values are `take_along_axis(x, argsort(x))` (`take_along`, an
`nn.gather`), so the values' gradient is the gather's (the cotangent scattered
back to the positions the indices name) and argsort itself passes none. Top-k
is the first k of a sort. The expansion is in `dialects.nn_expand_sort`.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    IntegerAttr,
    IntegerType,
    Signedness,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from dfc.dialects.nn_base import External, NNOp, normalize_axis
from dfc.dialects.nn_indexing import GatherOp


def _sortable(t: Attribute) -> TensorType:
    if not isinstance(t, TensorType):
        raise VerifyException(f"input must be a tensor, got {t}")
    e = t.element_type
    if not (isinstance(e, AnyFloat) or isinstance(e, IntegerType) and e.signedness.data == Signedness.SIGNLESS):
        raise VerifyException(f"input must have a float, signless integer or i1 element type, got {t}")
    return t


@irdl_op_definition
class ArgsortOp(NNOp):
    """The stable sorting permutation of `input` along `axis`, as i64 indices.

    `result[..., p, ...]` is the position along `axis` of the element of rank p:
    ascending (or `descending`), equal keys in their index order. Floats order
    NaN after every number ascending and before every number descending (as
    NumPy and PyTorch), with -0.0 equal to 0.0; integers are signed, or read as
    unsigned with `unsigned` (i1 always is: false < true). With `k`, only the
    first k positions (top-k: the result has k elements along `axis`). A 0-d
    input gives 0. Dimensions may be dynamic (`?`, a run-time size: the
    result has the input's), except the axis of a top-k. Syntax:
    `%i = nn.argsort %x {axis = 1 : i64, descending, k = 3 : i64} : (tensor<2x5xf32>) -> tensor<2x3xi64>`.
    """

    name = "nn.argsort"
    EXTERNAL: ClassVar[External] = External(
        stablehlo="sort (LT/GT comparator of one key), chlo.top_k", onnx="TopK",
        aten=("sort", "argsort", "msort", "topk", "kthvalue"), numpy=("sort", "argsort"),
    )  # fmt: skip

    input = operand_def(TensorType)
    axis = prop_def(IntegerAttr)
    descending = opt_prop_def(UnitAttr)
    unsigned = opt_prop_def(UnitAttr)
    k = opt_prop_def(IntegerAttr)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, axis: int, descending: bool = False, unsigned: bool = False,
                 k: int | None = None):
        t = _sortable(input.type)
        props: dict = {"axis": IntegerAttr(axis, i64)}
        if descending:
            props["descending"] = UnitAttr()
        if unsigned:
            props["unsigned"] = UnitAttr()
        if k is not None:
            props["k"] = IntegerAttr(k, i64)
        super().__init__(operands=[input], result_types=[_result(t, axis, k)], properties=props)

    @property
    def normalized_axis(self) -> int:
        return normalize_axis(self.axis.value.data, _sortable(self.input.type).get_num_dims())

    @property
    def count(self) -> int:
        """How many positions the result holds along the axis (`k`, else all: -1 where a run-time size)."""
        shape = _sortable(self.input.type).get_shape()
        return self.k.value.data if self.k is not None else (shape[self.normalized_axis] if shape else 1)

    def infer_type(self) -> TensorType:
        t = _sortable(self.input.type)
        if self.unsigned is not None and not isinstance(t.element_type, IntegerType):
            raise VerifyException(f"unsigned is for integer inputs, got {t}")
        return _result(t, self.axis.value.data, self.k.value.data if self.k is not None else None)


def _result(t: TensorType, axis: int, k: int | None) -> TensorType:
    shape = list(t.get_shape())
    axis = normalize_axis(axis, len(shape))
    if k is not None:
        if shape and shape[axis] == DYNAMIC_INDEX:
            raise VerifyException(f"a top-k (k = {k}) needs a static size along the axis, got {t}")
        if not shape or not 0 <= k <= shape[axis]:
            raise VerifyException(f"k = {k} is not in [0, {shape[axis] if shape else 0}] (the size of the axis)")
        shape[axis] = k
    return TensorType(i64, shape)


def take_along(x: SSAValue, indices: SSAValue, axis: int) -> GatherOp:
    """`np.take_along_axis(x, indices, axis)` as an `nn.gather`: `indices` has
    `x`'s shape except (possibly) along `axis`, whose entries it reads."""
    assert isinstance(x.type, TensorType) and isinstance(indices.type, TensorType)
    rank = x.type.get_num_dims()
    others = [d for d in range(rank) if d != axis]
    dims = {"offset_dims": [], "collapsed_slice_dims": [axis], "operand_batching_dims": others,
            "start_indices_batching_dims": others, "start_index_map": [axis], "slice_sizes": [1] * rank}
    return GatherOp(x, indices, dims, rank)


SORT_OPS = [ArgsortOp]
