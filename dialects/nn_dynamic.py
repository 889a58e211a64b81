"""Ops whose result size depends on the data: `nn.nonzero` (the coordinates of
the nonzero elements, a dynamic number of them), `nn.gather_points` (the
elements or slices at such coordinates, differentiable in the operand) and
`nn.unique` (the distinct elements, their first positions, inverse, counts).

Together they are `np.nonzero`, `np.argwhere`, `x[mask]`, `torch.masked_select`
and ONNX's NonZero and Compress. Their inputs may have `?` sizes too (a
selection of a selection), as `nn.argsort`'s; every other nn op needs static
shapes, and a `?` size reaching one is refused by its verifier. The expansions are in
`dialects.nn_expand_dynamic`.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from dfc.dialects.nn_base import External, NNOp, _static


def _nonzero_type(t: Attribute, transposed: bool) -> TensorType:
    if not isinstance(t, TensorType):
        raise VerifyException(f"input must be a tensor, got {t}")
    rank = t.get_num_dims()
    return TensorType(i64, [rank, DYNAMIC_INDEX] if transposed else [DYNAMIC_INDEX, rank])


@irdl_op_definition
class NonzeroOp(NNOp):
    """The coordinates of the nonzero (true) elements of `input`, in row-major order.

    Row n of the `tensor<?xRxi64>` result is the index of the n-th nonzero
    element (NumPy's `argwhere`, `torch.nonzero`); with `transposed` the result
    is `tensor<Rx?xi64>`, column n that index (ONNX's NonZero, the arrays of
    `np.nonzero` stacked). A float element is nonzero when it is not 0 or -0
    (NaN is nonzero). A 0-d input has one empty coordinate when nonzero. The
    count is data-dependent: the expansion counts the nonzero elements in one
    map, allocates the result, and fills it in a serial loop over the input
    (the running count is the exclusive prefix sum). No gradient (integer).
    Syntax: `%i = nn.nonzero %m : (tensor<3x4xi1>) -> tensor<?x2xi64>`.
    """

    name = "nn.nonzero"
    EXTERNAL: ClassVar[External] = External(
        onnx="NonZero", aten=("nonzero", "argwhere"), numpy=("nonzero", "argwhere", "flatnonzero")
    )

    input = operand_def(TensorType)
    transposed = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, transposed: bool = False):
        props = {"transposed": UnitAttr()} if transposed else {}
        super().__init__(operands=[input], result_types=[_nonzero_type(input.type, transposed)], properties=props)

    def infer_type(self) -> TensorType:
        return _nonzero_type(self.input.type, self.transposed is not None)


def gather_points_type(operand: Attribute, indices: Attribute, axis: int) -> TensorType:
    """`nn.gather_points`'s result type: `operand` with its dimensions
    [axis, axis + K) replaced by `indices`' leading dimensions (K its last)."""
    if not isinstance(operand, TensorType) or not isinstance(indices, TensorType):
        raise VerifyException(f"operand and indices must be tensors, got {operand} and {indices}")
    e = indices.element_type
    if not isinstance(e, IntegerType) or e.width.data != 64 or indices.get_num_dims() < 1:
        raise VerifyException(f"indices must be a tensor of i64 of rank 1 or more, got {indices}")
    shape, points = list(operand.get_shape()), list(indices.get_shape())
    k = points[-1]
    if k == DYNAMIC_INDEX or not 0 <= axis <= axis + k <= len(shape):
        raise VerifyException(f"{k} index components from axis {axis} do not fit the operand {operand}")
    if DYNAMIC_INDEX in points[:-1] and len(points) > 2:
        raise VerifyException(f"only a rank-2 indices tensor may have a dynamic size, got {indices}")
    return TensorType(operand.element_type, [*shape[:axis], *points[:-1], *shape[axis + k :]])


@irdl_op_definition
class GatherPointsOp(NNOp):
    """The elements (or slices) of `operand` at points `indices` names.

    `indices` (i64, shape `[*P, K]`) holds points of K coordinates into the
    operand's dimensions [axis, axis + K), which the result replaces by `P`:
    `result[a, p, b] = operand[a, indices[p, 0], ..., indices[p, K-1], b]`.
    With the indices `nn.nonzero` gives, this is `x[mask]`, masked_select and
    Compress; `P` may be one dynamic size, and the operand's dimensions may
    be dynamic. A coordinate out of range is clamped into it
    (as `nn.gather`'s starts; the ways in pass only in-range points).
    Differentiable in `operand`: the gradient scatters (adds) the cotangent back
    to the points. Syntax:
    `%r = nn.gather_points %x, %i {axis = 0 : i64} : (tensor<3x4x5xf32>, tensor<?x2xi64>) -> tensor<?x5xf32>`.
    """

    name = "nn.gather_points"
    EXTERNAL: ClassVar[External] = External(
        onnx="Compress", aten=("masked_select", "index.Tensor (a boolean index)"), numpy=("compress", "extract")
    )

    operand = operand_def(TensorType)
    indices = operand_def(TensorType)
    axis = prop_def(IntegerAttr)
    result = result_def(TensorType)
    assembly_format = "$operand `,` $indices attr-dict `:` functional-type(operands, results)"

    def __init__(self, operand: SSAValue, indices: SSAValue, axis: int = 0):
        super().__init__(
            operands=[operand, indices],
            result_types=[gather_points_type(operand.type, indices.type, axis)],
            properties={"axis": IntegerAttr(axis, i64)},
        )

    def infer_type(self) -> TensorType:
        return gather_points_type(self.operand.type, self.indices.type, self.axis.value.data)



UNIQUE_PARTS = ("values", "indices", "inverse", "counts")


def _unique_type(t: Attribute, part: str) -> TensorType:
    t = _static(t, "input")
    e = t.element_type
    if t.get_num_dims() != 1 or not (isinstance(e, AnyFloat) or isinstance(e, IntegerType) and e.signedness.data
                                     == Signedness.SIGNLESS):
        raise VerifyException(f"input must be a 1-D tensor of floats or signless integers, got {t}")
    if part not in UNIQUE_PARTS:
        raise VerifyException(f"part must be one of {', '.join(UNIQUE_PARTS)}, got '{part}'")
    if part == "inverse":
        return TensorType(i64, t.get_shape())
    return TensorType(e if part == "values" else i64, [DYNAMIC_INDEX])


@irdl_op_definition
class UniqueOp(NNOp):
    """One `part` of the distinct elements of the 1-D `input`, whose number is data-dependent.

    The distinct values ascend (NaN last, -0.0 equal to 0.0), or with
    `first_occurrence` come in the order each first appears. `values`: them;
    `indices`: the position of each one's first occurrence; `inverse` (of the
    input's size): the position of each input element's value among them;
    `counts`: how often each occurs. NaNs are distinct from each other unless
    `equal_nan`. The expansion sorts (`nn.argsort`, stable), then a serial loop
    over the sorted order numbers the runs of equal elements (their start and
    count), and with `first_occurrence` a second loop over the input orders the
    runs by their first position; a map over the count writes the part. No
    gradient (integer parts; values are a selection). Syntax:
    `%v = nn.unique %x {part = "counts", equal_nan} : (tensor<6xf32>) -> tensor<?xi64>`.
    """

    name = "nn.unique"
    EXTERNAL: ClassVar[External] = External(onnx="Unique", aten=("unique", "_unique2"), numpy=("unique",))

    input = operand_def(TensorType)
    part = prop_def(StringAttr)
    first_occurrence = opt_prop_def(UnitAttr)
    equal_nan = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, part: str, first_occurrence: bool = False, equal_nan: bool = False):
        props: dict = {"part": StringAttr(part)}
        if first_occurrence:
            props["first_occurrence"] = UnitAttr()
        if equal_nan:
            props["equal_nan"] = UnitAttr()
        super().__init__(operands=[input], result_types=[_unique_type(input.type, part)], properties=props)

    def infer_type(self) -> TensorType:
        return _unique_type(self.input.type, self.part.data)


DYNAMIC_OPS = [NonzeroOp, GatherPointsOp, UniqueOp]
