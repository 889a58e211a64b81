"""The ONNX importer's operators whose output size depends on the data:
NonZero (`nn.nonzero`, transposed to ONNX's (rank, count) layout), Compress
(`nn.gather_points` at the nonzero entries of the condition) and Unique
(`nn.unique`, one op per output asked for; along an axis, of each slice's rank). Their outputs
have a dynamic dimension; an operator after them that needs static shapes
is refused by name (its node's verifier message)."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import IntegerType, TensorType, f32, i64
from xdsl.ir import SSAValue

from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_shape as nns
from dfc.dialects.nn_dynamic import UNIQUE_PARTS, GatherPointsOp, NonzeroOp, UniqueOp
from dfc.dialects.nn_sort import ArgsortOp, take_along
from dfc.importers.onnx_common import NodeError, normalize_axis, tensor_of
from dfc.importers.onnx_nms import NmsOps


class DynamicOps(NmsOps):
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
        """The distinct elements of the flattened X (or with `axis`, its distinct slices along it, ordered
        lexicographically), ascending (`sorted`, the default) or in the order of their first occurrence, with
        the outputs asked for: the first indices, the inverse indices, the counts."""
        x = self.value(node.input[0])
        shape = tensor_of(x).get_shape()
        first = not attrs.get("sorted", 1)
        if "axis" in attrs and len(shape) > 1:
            return self._unique_slices(node, x, normalize_axis(attrs["axis"], len(shape)), first)
        x = self._reshape(x, [tensor_of(x).element_count()])
        return [self.ins(UniqueOp(x, part, first)) if k < len(node.output) and node.output[k] else None
                for k, part in enumerate(UNIQUE_PARTS)]

    def _unique_slices(self, node: Any, x: SSAValue, axis: int, first: bool) -> list[SSAValue | None]:
        """Unique of the slices of `x` along `axis`: the rows of `x` as an [n, m] matrix ranked
        lexicographically (stable `nn.argsort`s of its columns, the last first), the runs of equal rows
        numbered in that order, and `nn.unique` of each row's run number (whose order is the rows'); Y is
        the slices at the runs' starts (sorted) or at each run's first row (first occurrence)."""
        shape = list(tensor_of(x).get_shape())
        n = shape[axis]
        m = tensor_of(x).element_count() // n if n else 0
        rows = self._reshape(self.ins(nn.TransposeOp(x, [axis, *(k for k in range(len(shape)) if k != axis)])),
                             [n, m])
        order = self.ins(nns.IotaOp(TensorType(i64, [n]), 0))
        for j in reversed(range(m)):
            column = self._reshape(self.ins(nns.SliceOp(rows, [0, j], [n, j + 1], [1, 1])), [n])
            order = self.ins(take_along(order, self.ins(ArgsortOp(self.ins(take_along(column, order, 0)), 0)), 0))
        ranked = self.ins(take_along(rows, self.ins(nns.BroadcastInDimOp(order, [n, m], [0])), 0))
        starts = self._run_starts(ranked, n, m)
        numbers = self._running_sum(self.ins(nne.ConvertOp(starts, i64)), n)
        keys = self.ins(take_along(numbers, self.ins(ArgsortOp(order, 0)), 0))
        outputs: list[SSAValue | None] = [self.ins(UniqueOp(keys, part, first)) if k < len(node.output)
                                          and node.output[k] else None for k, part in enumerate(UNIQUE_PARTS)]
        if outputs[0] is not None:
            if first:
                firsts = self.ins(take_along(starts, self.ins(ArgsortOp(order, 0)), 0))
                outputs[0] = self.ins(GatherPointsOp(x, self.ins(NonzeroOp(firsts)), axis))
            else:
                ranked_x = self.ins(take_along(x, self.ins(nns.BroadcastInDimOp(order, shape, [axis])), axis))
                outputs[0] = self.ins(GatherPointsOp(ranked_x, self.ins(NonzeroOp(starts)), axis))
        return outputs

    def _run_starts(self, ranked: SSAValue, n: int, m: int) -> SSAValue:
        """[n] i1: whether row i of the [n, m] `ranked` differs from row i - 1 (true for row 0; `nn.reduce`
        takes floats, so the row's any-differs is a max of 0.0/1.0)."""
        if n == 0:
            return self.constant(np.zeros([0], np.bool_))
        later = self.ins(nns.SliceOp(ranked, [1, 0], [n, m], [1, 1]))
        earlier = self.ins(nns.SliceOp(ranked, [0, 0], [n - 1, m], [1, 1]))
        differs = self.ins(nne.ConvertOp(self.ins(nne.CompareOp(later, earlier, "NE")), f32))
        changed = self.ins(nn.ReduceOp(differs, "max", [1])) if m else self.constant(np.zeros([n - 1], np.float32))
        joined = self.ins(nns.ConcatenateOp([self.constant(np.ones([1], np.float32)), changed], 0))
        return self.ins(nne.CompareOp(joined, self.constant(np.zeros((), np.float32)), "NE"))

    def _running_sum(self, x: SSAValue, n: int) -> SSAValue:
        """The inclusive prefix sums of the 1-D i64 `x` of `n` elements (log2 n shifted adds)."""
        by = 1
        while by < n:
            shifted = self.ins(nns.ConcatenateOp([self.constant(np.zeros([by], np.int64)),
                                                  self.ins(nns.SliceOp(x, [0], [n - by], [1]))], 0))
            x = self.ins(nn.AddOp(x, shifted))
            by *= 2
        return x
