"""The ONNX importer's operators whose output size depends on the data:
NonZero (`nn.nonzero`, transposed to ONNX's (rank, count) layout), Compress
(`nn.gather_points` at the nonzero entries of the condition) and Unique
(`nn.unique`, one op per output asked for). Their outputs
have a dynamic dimension; an operator after them that needs static shapes
is refused by name (its node's verifier message)."""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import IntegerType
from xdsl.ir import SSAValue

from dfc.dialects import nn_shape as nns
from dfc.dialects.nn_dynamic import GatherPointsOp, NonzeroOp, UniqueOp
from dfc.importers.onnx_common import NodeError, normalize_axis, tensor_of


class DynamicOps:
    """`op_NonZero`, `op_Compress` and `op_Unique`, mixed into `OnnxImporter` (through
    `ShapeOps`, whose `value`, `ins` and `_reshape` they use)."""

    def op_NonZero(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The indices of the nonzero elements of X, one column per element, in row-major order (int64)."""
        return [self.ins(NonzeroOp(self.value(node.input[0]), transposed=True))]

    def op_Compress(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The slices of `input` along `axis` (of the flattened input without one) where the 1-D
        `condition` is true; a condition shorter than the axis selects among its first entries, a
        longer one is a NodeError (ONNX Runtime's rule)."""
        x, condition = self.value(node.input[0]), self.value(node.input[1])
        c = tensor_of(condition)
        if c.get_num_dims() != 1 or not isinstance(c.element_type, IntegerType) or c.element_type.width.data != 1:
            raise NodeError(f"Compress needs a 1-D bool condition, got {c}")
        if "axis" in attrs:
            axis = normalize_axis(attrs["axis"], tensor_of(x).get_num_dims())
        else:
            x, axis = self._reshape(x, [tensor_of(x).element_count()]), 0
        shape, (length,) = list(tensor_of(x).get_shape()), c.get_shape()
        if length > shape[axis]:
            raise NodeError(f"Compress's condition has {length} entries, more than the {shape[axis]} of axis {axis}")
        if length < shape[axis]:
            limits = [length if k == axis else d for k, d in enumerate(shape)]
            x = self.ins(nns.SliceOp(x, [0] * len(shape), limits, [1] * len(shape)))
        return [self.ins(GatherPointsOp(x, self.ins(NonzeroOp(condition)), axis))]

    def op_Unique(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue | None]:
        """The distinct elements of the flattened X, ascending (`sorted`, the default) or in the order of
        their first occurrence, with the outputs asked for: the first indices, the inverse indices, the
        counts. An `axis` (unique slices) is supported for a 1-D X only."""
        x = self.value(node.input[0])
        shape = tensor_of(x).get_shape()
        if "axis" in attrs and len(shape) != 1:
            normalize_axis(attrs["axis"], len(shape))
            raise NodeError(f"Unique along an axis of a {len(shape)}-D input (distinct slices) is not supported")
        x = self._reshape(x, [tensor_of(x).element_count()])
        first = not attrs.get("sorted", 1)
        parts = ("values", "indices", "inverse", "counts")
        return [self.ins(UniqueOp(x, part, first)) if k < len(node.output) and node.output[k] else None
                for k, part in enumerate(parts)]
