"""Contractions and index reductions of the nn dialect: `dot_general`
(StableHLO's, with batch and contracting dimensions), `argmax` and `argmin`.

The expansions are in `dialects.nn_expand_contract`, the backward rules in
`passes.autodiff.rules_contract`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    Signedness,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from dfc.dialects.nn_base import External, NNOp, _float_tensor, normalize_axis


def _ints(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, values)


@irdl_op_definition
class DotGeneralOp(NNOp):
    """StableHLO's `dot_general`: sum over the contracting dimensions of the products
    of `lhs` and `rhs` elements that agree on the batch dimensions.

    `lhs_batching_dimensions[k]` pairs with `rhs_batching_dimensions[k]` (equal sizes),
    and likewise the contracting dimensions. The result's dimensions are the batch
    dimensions (in lhs order), then lhs's other dimensions, then rhs's other
    dimensions, each group in increasing order. Float operands of one element type.
    """

    name = "nn.dot_general"
    EXTERNAL: ClassVar[External] = External(stablehlo="dot_general", onnx="MatMul, Einsum (contractions)")

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    lhs_batching_dimensions = prop_def(DenseArrayBase.constr(i64))
    rhs_batching_dimensions = prop_def(DenseArrayBase.constr(i64))
    lhs_contracting_dimensions = prop_def(DenseArrayBase.constr(i64))
    rhs_contracting_dimensions = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        lhs: SSAValue,
        rhs: SSAValue,
        batching: tuple[Sequence[int], Sequence[int]],
        contracting: tuple[Sequence[int], Sequence[int]],
    ):
        props = {
            "lhs_batching_dimensions": _ints(batching[0]),
            "rhs_batching_dimensions": _ints(batching[1]),
            "lhs_contracting_dimensions": _ints(contracting[0]),
            "rhs_contracting_dimensions": _ints(contracting[1]),
        }
        a, b = _float_tensor(lhs.type, "lhs"), _float_tensor(rhs.type, "rhs")
        shape = _dot_shape(a.get_shape(), b.get_shape(), batching, contracting)
        super().__init__(operands=[lhs, rhs], result_types=[TensorType(a.element_type, shape)], properties=props)

    def dimensions(self) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], tuple[int, ...]]]:
        """((lhs batch, rhs batch), (lhs contracting, rhs contracting))."""
        return (
            (tuple(self.lhs_batching_dimensions.get_values()), tuple(self.rhs_batching_dimensions.get_values())),
            (tuple(self.lhs_contracting_dimensions.get_values()), tuple(self.rhs_contracting_dimensions.get_values())),
        )

    def infer_type(self) -> TensorType:
        a, b = _float_tensor(self.lhs.type, "lhs"), _float_tensor(self.rhs.type, "rhs")
        if a.element_type != b.element_type:
            raise VerifyException(f"operand element types differ: {a.element_type} and {b.element_type}")
        batching, contracting = self.dimensions()
        return TensorType(a.element_type, _dot_shape(a.get_shape(), b.get_shape(), batching, contracting))


def free_dimensions(rank: int, batching: Sequence[int], contracting: Sequence[int]) -> list[int]:
    """The dimensions of an operand that are neither batch nor contracting, in order."""
    return [d for d in range(rank) if d not in batching and d not in contracting]


def _dot_shape(
    lhs: Sequence[int], rhs: Sequence[int], batching: Sequence[Sequence[int]], contracting: Sequence[Sequence[int]]
) -> list[int]:
    for what, (ld, rd) in (("batching", batching), ("contracting", contracting)):
        if len(ld) != len(rd):
            raise VerifyException(f"{len(ld)} lhs and {len(rd)} rhs {what} dimensions")
    for side, shape, k in (("lhs", lhs, 0), ("rhs", rhs, 1)):
        dims = [*batching[k], *contracting[k]]
        if any(not 0 <= d < len(shape) for d in dims):
            raise VerifyException(f"{side} batching/contracting dimensions {dims} out of range for rank {len(shape)}")
        if len(set(dims)) != len(dims):
            raise VerifyException(f"{side} batching/contracting dimensions {dims} repeat a dimension")
    for what, (ld, rd) in (("batching", batching), ("contracting", contracting)):
        for x, y in zip(ld, rd):
            if lhs[x] != rhs[y]:
                raise VerifyException(
                    f"{what} dimension sizes differ: lhs dimension {x} ({lhs[x]}), rhs dimension {y} ({rhs[y]})"
                )
    return (
        [lhs[d] for d in batching[0]]
        + [lhs[d] for d in free_dimensions(len(lhs), batching[0], contracting[0])]
        + [rhs[d] for d in free_dimensions(len(rhs), batching[1], contracting[1])]
    )


class ArgOp(NNOp):
    """The index of the extremal element along `axis`."""

    input = operand_def(TensorType)
    axis = prop_def(IntegerAttr)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, axis: int, index_type: Attribute = i64):
        t = _float_tensor(input.type, "input")
        shape = [d for k, d in enumerate(t.get_shape()) if k != normalize_axis(axis, t.get_num_dims())]
        super().__init__(
            operands=[input], result_types=[TensorType(index_type, shape)], properties={"axis": IntegerAttr(axis, i64)}
        )

    @property
    def normalized_axis(self) -> int:
        t = _float_tensor(self.input.type, "input")
        return normalize_axis(self.axis.value.data, t.get_num_dims())

    def infer_type(self) -> TensorType:
        t = _float_tensor(self.input.type, "input")
        if t.get_num_dims() == 0:
            raise VerifyException("input must have at least one dimension")
        out = self.result.type
        element = out.element_type if isinstance(out, TensorType) else out
        if not (
            isinstance(element, IntegerType)
            and element.signedness.data == Signedness.SIGNLESS
            and element.width.data in (32, 64)
        ):
            raise VerifyException(f"result must be an i32 or i64 tensor, got {out}")
        axis = self.normalized_axis
        return TensorType(element, [d for k, d in enumerate(t.get_shape()) if k != axis])


@irdl_op_definition
class ArgMaxOp(ArgOp):
    """The index of the largest element along `axis` (the first on ties; a NaN counts
    as largest, as in numpy), as an i32 or i64 tensor without that axis."""

    name = "nn.argmax"
    EXTERNAL: ClassVar[External] = External(stablehlo="- (reduce with a pair body)", onnx="ArgMax (select_last_index = 0)")


@irdl_op_definition
class ArgMinOp(ArgOp):
    """The index of the smallest element along `axis` (the first on ties; a NaN counts
    as smallest, as in numpy), as an i32 or i64 tensor without that axis."""

    name = "nn.argmin"
    EXTERNAL: ClassVar[External] = External(stablehlo="- (reduce with a pair body)", onnx="ArgMin (select_last_index = 0)")


CONTRACT_OPS = [DotGeneralOp, ArgMaxOp, ArgMinOp]
