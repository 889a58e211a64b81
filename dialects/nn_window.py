"""Windowed reductions of the nn dialect: `reduce_window`, StableHLO's op
restricted to the bodies pooling uses (max, min, sum, mean), without base
dilation. The expansion is in `dialects.nn_expand_window`, the backward rule
in `passes.autodiff.rules_window`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import DenseArrayBase, StringAttr, TensorType, i64
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from dfc.dialects.nn_base import External, NNOp, _float_tensor

WINDOW_KINDS = ("max", "min", "sum", "mean")


@irdl_op_definition
class ReduceWindowOp(NNOp):
    """`kind` (max, min, sum, mean) over each window of `input` (max/avg pooling).

    Every dimension k has a window of `window_dimensions[k]` elements spaced
    `window_dilations[k]` apart, placed every `window_strides[k]` elements of the
    input padded with `padding_low[k]`/`padding_high[k]` (non-negative) elements
    of the reduction's identity (-inf for max, +inf for min, 0 for sum and mean).
    Result dimension k has `(d + low + high - (w - 1) * dilation - 1) // stride + 1`
    elements. `mean` divides the sum by the window size, padding included (PyTorch's
    `count_include_pad`). The gradient of max/min goes to the first extremal element
    of each window, in row-major window order (as PyTorch and XLA's select_and_scatter).
    """

    name = "nn.reduce_window"
    EXTERNAL: ClassVar[External] = External(stablehlo="reduce_window (max, min, add bodies)", onnx="MaxPool, AveragePool")

    input = operand_def(TensorType)
    kind = prop_def(StringAttr)
    window_dimensions = prop_def(DenseArrayBase.constr(i64))
    window_strides = prop_def(DenseArrayBase.constr(i64))
    window_dilations = prop_def(DenseArrayBase.constr(i64))
    padding_low = prop_def(DenseArrayBase.constr(i64))
    padding_high = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        input: SSAValue,
        kind: str,
        window: Sequence[int],
        strides: Sequence[int],
        dilations: Sequence[int],
        low: Sequence[int],
        high: Sequence[int],
    ):
        t = _float_tensor(input.type, "input")
        geometry = (tuple(window), tuple(strides), tuple(dilations), tuple(low), tuple(high))
        props = {
            "kind": StringAttr(kind),
            **{n: DenseArrayBase.from_list(i64, v) for n, v in zip(_NAMES, geometry)},
        }
        shape = _window_shape(t.get_shape(), *geometry)
        super().__init__(operands=[input], result_types=[TensorType(t.element_type, shape)], properties=props)

    def geometry(self) -> tuple[tuple[int, ...], ...]:
        """(window, strides, dilations, low, high), one entry per dimension each."""
        return tuple(tuple(getattr(self, n).get_values()) for n in _NAMES)

    def infer_type(self) -> TensorType:
        if self.kind.data not in WINDOW_KINDS:
            raise VerifyException(f"kind must be one of {', '.join(WINDOW_KINDS)}, got '{self.kind.data}'")
        t = _float_tensor(self.input.type, "input")
        geometry = self.geometry()
        for name, values in zip(_NAMES, geometry):
            if len(values) != t.get_num_dims():
                raise VerifyException(f"{name} has {len(values)} elements, expected one per dimension ({t.get_num_dims()})")
        return TensorType(t.element_type, _window_shape(t.get_shape(), *geometry))


_NAMES = ("window_dimensions", "window_strides", "window_dilations", "padding_low", "padding_high")


def _window_shape(shape, window, strides, dilations, low, high) -> list[int]:
    out = []
    for k, (d, w, s, r, lo, hi) in enumerate(zip(shape, window, strides, dilations, low, high)):
        if w < 1 or s < 1 or r < 1:
            raise VerifyException(f"dimension {k}: window size, stride and dilation must be at least 1")
        if lo < 0 or hi < 0:
            raise VerifyException(f"dimension {k}: padding must be non-negative")
        span = (w - 1) * r + 1
        if d + lo + hi < span:
            raise VerifyException(f"dimension {k}: the window spans {span} elements, more than the padded size {d + lo + hi}")
        out.append((d + lo + hi - span) // s + 1)
    return out


WINDOW_OPS = [ReduceWindowOp]
