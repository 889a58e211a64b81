"""`chlo.scan` in `convert-stablehlo`: an `scf.for` over the scanned dimension.

The loop carries one tensor per output (zeros at first, the whole stacked
shape), the scan's carries and the step as a tensor<i64>. Step k reads position k (n - 1 - k when
`is_reverse`) of each input (`nn.dynamic_slice`, the dimension dropped),
runs the converted body on those slices and the carries, writes each output
slice at the position (`nn.dynamic_update_slice`) and carries the body's new
carries on. The loop has a static trip count, so autodiff differentiates it
as any `scf.for`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, IntegerType, TensorType, i64
from xdsl.ir import Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from dfc.dialects import nn
from dfc.dialects import nn_shape as nns
from dfc.dialects.diagnostics import CompileError
from dfc.dialects.stablehlo_scan import ScanOp


def _shape(v: SSAValue) -> list[int]:
    assert isinstance(v.type, TensorType)
    return list(v.type.get_shape())


class ScanConversions:
    """`on_scan`, mixed into the converter (with its `b`, `ins` and `_region`)."""

    b: Builder
    ins: Callable[[Operation], SSAValue]
    _region: Callable[..., Region]

    def on_scan(self, op: ScanOp) -> Sequence[SSAValue]:
        d = op.dimension.value.data
        inputs, inits, outputs = list(op.inputs), list(op.inits), list(op.outputs)
        if not inputs or not 0 <= d < len(_shape(inputs[0])):
            raise CompileError.at(op, f"convert-stablehlo: chlo.scan along dimension {d} of its inputs is not "
                                      "supported")
        length = _shape(inputs[0])[d]
        reverse = op.is_reverse is not None and op.is_reverse.value.data
        block = op.body.block
        if len(block.args) != len(inputs) + len(inits):
            raise CompileError.at(op, "convert-stablehlo: chlo.scan's body must take one slice of each input and "
                                      "each carry")
        block.insert_arg(IndexType(), 0)
        stacked = [block.insert_arg(o.type, 1 + k) for k, o in enumerate(outputs)]
        outer = self.b
        self.b = Builder(InsertPoint.at_start(block))
        counter = block.insert_arg(TensorType(i64, []), len(block.args))
        at = counter
        if reverse:
            at = self.ins(nn.SubOp(self.ins(nn.FullOp(IntegerAttr(length - 1, i64), [])), counter))
        zero = self.ins(nn.FullOp(IntegerAttr(0, i64), []))

        def starts(rank: int) -> list[SSAValue]:
            return [at if j == d else zero for j in range(rank)]

        for k, x in enumerate(inputs):
            shape = _shape(x)
            piece = self.ins(nns.DynamicSliceOp(x, starts(len(shape)), [*shape[:d], 1, *shape[d + 1:]]))
            arg = block.args[1 + len(outputs) + k]
            arg.replace_all_uses_with(self.ins(nn.ReshapeOp(piece, [*shape[:d], *shape[d + 1:]])))
        for arg in block.args[1 + len(outputs): 1 + len(outputs) + len(inputs)]:
            block.erase_arg(arg)

        def step(values: Sequence[SSAValue]) -> Operation:
            self.b = Builder(InsertPoint.at_end(block))
            written = []
            for acc, value in zip(stacked, values):
                shape = _shape(acc)
                piece = self.ins(nn.ReshapeOp(value, [*shape[:d], 1, *shape[d + 1:]]))
                written.append(self.ins(nns.DynamicUpdateSliceOp(acc, piece, starts(len(shape)))))
            following = self.ins(nn.AddOp(counter, self.ins(nn.FullOp(IntegerAttr(1, i64), []))))
            return scf.YieldOp(*written, *values[len(outputs):], following)

        body = self._region(op.body, step)
        self.b = outer
        firsts = []
        for o in outputs:
            e = o.type.element_type
            value = IntegerAttr(0, e) if isinstance(e, IntegerType) else FloatAttr(0.0, e)
            firsts.append(self.ins(nn.FullOp(value, _shape(o))))
        bounds = [self.ins(arith.ConstantOp.from_int_and_width(v, IndexType())) for v in (0, length, 1)]
        start = self.ins(nn.FullOp(IntegerAttr(0, i64), []))
        loop = scf.ForOp(*bounds, [*firsts, *inits, start], body)
        self.b.insert(loop)
        return list(loop.results)[:-1]
