"""`stablehlo.triangular_solve` and `stablehlo.map` in `convert-stablehlo`.

`triangular_solve` becomes a substitution loop: the system is first written
as M x = c with M lower or upper triangular (x op(a) = b is op(a)^T x^T =
b^T; a transpose swaps the triangle), the other triangle and the diagonal of
M masked to zeros once; then an `scf.for` over the rows (forward for a lower
M, backward for an upper one) computes row i of x as (c_i - M_i x) / a_ii
(or without the division, for `unit_diagonal`), x starting at zeros so that
the rows not yet solved contribute nothing. Every row is one `dot_general`
of its batch, so batch dimensions are solved together. Complex matrices
(`ADJOINT` differs from `TRANSPOSE` only for them) are solved the same way
on their parts (`passes.stablehlo_complex`).

`map` applies its computation, a region on 0-d tensors, to whole tensors:
its ops are elementwise (checked), so the region is inlined with every type
widened to the inputs' shape and then converted like the function's own ops.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, IndexType, IntegerAttr, TensorType, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from dfc.dialects import nn
from dfc.dialects import nn_contract as nnc
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_shape as nns
from dfc.dialects import stablehlo as shlo
from dfc.dialects.diagnostics import CompileError
from dfc.dialects.stablehlo_bits import MapOp, TriangularSolveOp

ELEMENTWISE_MAP_BODY = (shlo.UnaryOp, shlo.BinaryOp, shlo.ConvertOp, shlo.SelectOp, shlo.ClampOp, shlo.CompareOp)
"""The ops a map's computation may hold (besides 0-d constants and its return)."""


def _shape(v: SSAValue) -> tuple[int, ...]:
    assert isinstance(v.type, TensorType)
    return tuple(v.type.get_shape())


class LinalgConversions:
    """`on_triangular_solve` and `on_map`, mixed into the converter (`b`, `ins`, `block`)."""

    b: Builder
    ins: Callable[[Operation], SSAValue]
    block: Callable[[Block], None]

    def _swap_last(self, x: SSAValue) -> SSAValue:
        rank = len(_shape(x))
        return self.ins(nn.TransposeOp(x, [*range(rank - 2), rank - 1, rank - 2]))

    def on_triangular_solve(self, op: TriangularSolveOp) -> Sequence[SSAValue]:
        a, b = op.a, op.b
        shape = _shape(a)
        if len(shape) < 2 or shape[-1] != shape[-2] or _shape(b)[:-2] != shape[:-2]:
            raise CompileError.at(op, f"convert-stablehlo: triangular_solve of {a.type} and {b.type}: a must be "
                                      "square matrices with b's batch dimensions")
        left = bool(op.left_side.value.data)
        transposed = op.transpose_a.data != "NO_TRANSPOSE"
        c = b if left else self._swap_last(b)
        if _shape(c)[-2] != shape[-1]:
            raise CompileError.at(op, f"convert-stablehlo: triangular_solve: b {b.type} does not match a {a.type}")
        flip = transposed == left  # x op(a) = b is op(a)^T x^T = b^T
        batch, n = shape[:-2], shape[-1]
        rank = len(shape)
        e = a.type.element_type  # type: ignore[union-attr]
        rows = self.ins(nns.IotaOp(TensorType(i64, [n, n]), 0))
        cols = self.ins(nns.IotaOp(TensorType(i64, [n, n]), 1))
        strict = self.ins(nne.CompareOp(rows, cols, "GT" if bool(op.lower.value.data) else "LT"))
        strict = self.ins(nns.BroadcastInDimOp(strict, shape, [rank - 2, rank - 1]))
        zero = self.ins(nn.FullOp(FloatAttr(0.0, e), shape))
        m = self.ins(nne.SelectOp(strict, a, zero))
        if flip:
            m = self._swap_last(m)
        forward = bool(op.lower.value.data) != flip
        solved = self._substitute(m, a if not bool(op.unit_diagonal.value.data) else None, c, forward, batch, n)
        return [solved if left else self._swap_last(solved)]

    def _substitute(self, m: SSAValue, a: SSAValue | None, c: SSAValue, forward: bool, batch: tuple[int, ...],
                    n: int) -> SSAValue:
        """x with (m + diag(a)) x = c, m strictly triangular (lower when `forward`), by rows; a None `a` is a
        unit diagonal."""
        k = _shape(c)[-1]
        e = c.type.element_type  # type: ignore[union-attr]
        nb = len(batch)
        x0 = self.ins(nn.FullOp(FloatAttr(0.0, e), _shape(c)))
        t0 = self.ins(nn.FullOp(IntegerAttr(0, i64), []))
        body = Block(arg_types=[IndexType(), x0.type, t0.type])
        _, x, t = body.args
        saved, self.b = self.b, Builder(InsertPoint.at_end(body))
        zero = self.ins(nn.FullOp(IntegerAttr(0, i64), []))
        i = t if forward else self.ins(nn.SubOp(self.ins(nn.FullOp(IntegerAttr(n - 1, i64), [])), t))
        row = self.ins(nns.DynamicSliceOp(m, [zero] * nb + [i, zero], [*batch, 1, n]))
        dot = self.ins(nnc.DotGeneralOp(row, x, (list(range(nb)), list(range(nb))), ([nb + 1], [nb])))
        rhs = self.ins(nns.DynamicSliceOp(c, [zero] * nb + [i, zero], [*batch, 1, k]))
        xi = self.ins(nn.SubOp(rhs, dot))
        if a is not None:
            d = self.ins(nns.DynamicSliceOp(a, [zero] * nb + [i, i], [*batch, 1, 1]))
            xi = self.ins(nn.DivOp(xi, self.ins(nns.BroadcastInDimOp(d, [*batch, 1, k], list(range(nb + 2))))))
        x_new = self.ins(nns.DynamicUpdateSliceOp(x, xi, [zero] * nb + [i, zero]))
        t_new = self.ins(nn.AddOp(t, self.ins(nn.FullOp(IntegerAttr(1, i64), []))))
        body.add_op(scf.YieldOp(x_new, t_new))
        self.b = saved
        bounds = [self.ins(arith.ConstantOp.from_int_and_width(v, IndexType())) for v in (0, n, 1)]
        loop = scf.ForOp(*bounds, [x0, t0], Region(body))
        self.b.insert(loop)
        return loop.results[0]

    def on_map(self, op: MapOp) -> Sequence[SSAValue]:
        shape = _shape(op.result)
        if list(op.dimensions.get_values()) != list(range(len(shape))):
            raise CompileError.at(op, "convert-stablehlo: map over some of the dimensions is not supported")
        block = op.computation.block
        for inner in block.ops:
            scalar_constant = isinstance(inner, shlo.ConstantOp) and _shape(inner.output) == ()
            if not (isinstance(inner, ELEMENTWISE_MAP_BODY) or scalar_constant or isinstance(inner, shlo.ReturnOp)):
                raise CompileError.at(inner, f"convert-stablehlo: '{inner.name}' in a map's computation is not "
                                             "supported (elementwise ops and scalar constants are)")
        for arg, value in zip(block.args, op.inputs):
            arg.replace_all_uses_with(value)
        for inner in block.ops:
            if isinstance(inner, shlo.ConstantOp):
                inner.value = DenseIntOrFPElementsAttr.from_list(
                    TensorType(inner.value.get_element_type(), shape), list(inner.value.get_values()))
            for r in list(inner.results):
                Rewriter.replace_value_with_new_type(r, TensorType(r.type.element_type, shape))  # type: ignore
        saved = self.b
        self.block(block)
        self.b = saved
        ret = block.last_op
        assert isinstance(ret, shlo.ReturnOp)
        for inner in list(block.ops):
            if inner is not ret:
                inner.detach()
                self.b.insert(inner)
        return list(ret.operands)
