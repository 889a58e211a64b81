"""The ONNX importer's linear algebra: `Det`, by Gaussian elimination with
partial pivoting (as LAPACK's getrf, which numpy.linalg.det calls) unrolled
over the static matrix size in nn ops on the whole batch."""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, TensorType, i64
from xdsl.ir import SSAValue

from dfc.dialects import nn
from dfc.dialects import nn_contract as nnc
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_shape as nns
from dfc.importers.onnx_common import NodeError, tensor_of


class LinalgOps:
    """`op_Det`, mixed into `OnnxImporter` (whose `value`, `ins`, `scalar`, `_cut` and `_reshape` it uses)."""

    def op_Det(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The determinant of each [M, M] matrix of [*, M, M]: at step k, the row of the largest |entry| in
        column k (the first such) is swapped to the top of the remaining block (a permutation product), the
        pivot multiplies the determinant (negated per swap), and the block below and right loses the
        pivot row times each row's factor. A zero pivot (a singular matrix) gives 0: the factors divide by 1
        there."""
        a = self.value(node.input[0])
        t = tensor_of(a)
        shape = list(t.get_shape())
        if len(shape) < 2 or shape[-1] != shape[-2] or not isinstance(t.element_type, AnyFloat):
            raise NodeError(f"Det of {t}: float matrices [*, M, M]")
        batch, n = shape[:-2], shape[-1]
        rank = len(shape)
        lead = list(range(len(batch)))
        det = self.ins(nn.FullOp(FloatAttr(1.0, t.element_type), batch))
        block = a
        for k in range(n):
            size = n - k
            column = self._reshape(self._cut(block, rank - 1, 0, 1), [*batch, size])
            pivot_row = self.ins(nnc.ArgMaxOp(self.ins(nne.AbsOp(column)), len(batch), i64))  # [*]
            rows = self.ins(nns.IotaOp(TensorType(i64, [*batch, size]), len(batch)))
            top = self.ins(nn.FullOp(IntegerAttr(0, i64), []))
            target = self._reshape(pivot_row, [*batch, 1])
            source = self.ins(nne.SelectOp(self.ins(nne.CompareOp(rows, top, "EQ")), self.ins(nn.BroadcastOp(
                target, [*batch, size])), self.ins(nne.SelectOp(self.ins(nne.CompareOp(rows, target, "EQ")),
                                                                self.ins(nn.BroadcastOp(top, [*batch, size])), rows))))
            columns = self.ins(nns.IotaOp(TensorType(i64, [*batch, size, size]), rank - 1))
            permutation = self.ins(nne.ConvertOp(self.ins(nne.CompareOp(
                columns, self.ins(nn.BroadcastOp(self._reshape(source, [*batch, size, 1]), [*batch, size, size])),
                "EQ")), t.element_type))
            block = self.ins(nnc.DotGeneralOp(permutation, block, (lead, lead), ([rank - 1], [rank - 2])))
            swapped = self.ins(nne.CompareOp(pivot_row, top, "NE"))
            pivot = self._reshape(self._cut(self._cut(block, rank - 2, 0, 1), rank - 1, 0, 1), batch)
            signed = self.ins(nne.SelectOp(swapped, self.ins(nn.NegOp(pivot)), pivot))
            det = self.ins(nn.MulOp(det, signed))
            if size == 1:
                break
            zero = self.ins(nne.CompareOp(pivot, self.scalar(0.0, pivot), "EQ"))
            safe = self.ins(nne.SelectOp(zero, self.scalar(1.0, pivot), pivot))
            below = self._cut(self._cut(block, rank - 2, 1, size), rank - 1, 0, 1)  # [*, size - 1, 1]
            factors = self.ins(nn.DivOp(below, self._reshape(safe, [*batch, 1, 1])))
            right = self._cut(self._cut(block, rank - 2, 0, 1), rank - 1, 1, size)  # [*, 1, size - 1]
            rest = self._cut(self._cut(block, rank - 2, 1, size), rank - 1, 1, size)
            block = self.ins(nn.SubOp(rest, self.ins(nn.MulOp(factors, right))))
        return [det]
