"""ONNX's linear quantization: QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear.

The scale and zero point are a scalar (or one element: per tensor), a vector along `axis` (per axis) or,
with `block_size`, a tensor of `x`'s rank whose `axis` dimension is ceil(size / block_size) (blocked: each
entry repeated `block_size` times along `axis`, by a gather). As ONNX's reference:

* DequantizeLinear: `(float32(x) - float32(zero_point)) * scale` in float32, then rounded to `output_dtype`
  (default: the scale's type); float8 codes decode exactly (their zero point, which must be 0, is not used);
* QuantizeLinear to an integer type (uint8, int8, uint16, int16, int4, uint4, int2, uint2: the zero point's,
  `output_dtype` or uint8): `x / scale` in the promoted float type (or `precision`), rounded half to even,
  plus the zero point and clamped to the type's range (in float64, exact); to a float8 format: `x / scale`
  encoded by `saturate` (`NarrowOps.encoded`, Cast's rounding), the zero point not used; to float4e2m1:
  `x / scale + zero_point`, encoded (float4 always saturates);
* MatMulInteger: `(x - zero_point) @ (w - zero_point)` in int32; QLinearMatMul: that product times
  `a_scale * b_scale / y_scale` (in the scales' type) in float64, rounded half to even, plus `y_zero_point`,
  clamped to its type. Their products are computed in float64, exact for the int32 results of an inner
  dimension up to 33025 (255^2 times it below 2^31; a larger one is refused); scales and zero points one
  element each (per-row or per-column ones are refused);
* ConvInteger: Conv of `x - x_zero_point` (one element) by `w - w_zero_point` (one element or one per
  output channel), in float64 (exact for int32 results of up to 33025 products per output), to int32;
* QLinearConv: that convolution plus the int32 bias, times `x_scale * w_scale / y_scale` (w_scale one
  element or one per output channel) in float64, rounded half to even, plus `y_zero_point`, clamped;
* DynamicQuantizeLinear: uint8 with scale `(max(0, max x) - min(0, min x)) / 255` (1 / 255 when both are
  0) and zero point `rint(clamp(-min / scale, 0, 255))`, in float32.

Narrow results are codes in i8 (`onnx_narrow_types`), unsigned ones their bits (`onnx_unsigned`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import AnyFloat, FloatAttr, f32, f64, i8
from xdsl.ir import Attribute, SSAValue

from dfc.compiler.interpreter import dtype_of
from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_indexing as nni
from dfc.importers.narrow_formats import FLOAT_FORMATS, INT_FORMATS
from dfc.importers.onnx_common import NodeError, element_type, normalize_axis, tensor_of

_INT_RANGES = {"uint8": (0, 255), "int8": (-128, 127), "uint16": (0, 65535), "int16": (-32768, 32767),
               **{name: ((-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1))
                  for name, (bits, signed) in INT_FORMATS.items()}}
"""The integer types QuantizeLinear produces, by numpy dtype name: (lowest, highest)."""


def _onnx_type(code: int) -> np.dtype:
    from onnx import helper

    return np.dtype(helper.tensor_dtype_to_np_dtype(code))


class QuantizeOps:
    """QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear, mixed into `OnnxImporter`."""

    consts: dict[str, np.ndarray]
    formats: dict[str, str]
    unsigned_inputs: set[int]
    unsigned_outputs: set[int] | None
    ins: Callable[[Any], SSAValue]
    value: Callable[[str], SSAValue]
    constant: Callable[[np.ndarray], SSAValue]
    format_of: Callable[[str], str | None]
    is_unsigned: Callable[[str], bool]
    cast: Callable[[SSAValue, bool, Any, bool], SSAValue]
    matmul: Callable[[SSAValue, SSAValue], SSAValue]
    convolution: Callable[[SSAValue, SSAValue, dict[str, Any]], SSAValue]
    decoded: Callable[[SSAValue, str, Attribute], SSAValue]
    encoded: Callable[[SSAValue, bool, str, bool], SSAValue]

    def _type_name(self, name: str) -> str:
        """The numpy dtype name of the ONNX value `name` (uint8 for an unsigned i8, a narrow format's)."""
        fmt = self.format_of(name)
        if fmt is not None:
            return fmt
        e = tensor_of(self.value(name)).element_type
        dtype = dtype_of(e)
        return f"uint{dtype.itemsize * 8}" if self.is_unsigned(name) else dtype.name

    def _expanded(self, v: SSAValue, shape: list[int], axis: int, block: int) -> SSAValue:
        """The scale or zero point `v` broadcastable to `shape` (per tensor, per axis, or blocked)."""
        vshape = tensor_of(v).get_shape()
        if len(vshape) == 0:
            return v
        if not block:
            if len(vshape) != 1 or vshape[0] not in (1, shape[axis]):
                raise NodeError(f"a scale or zero point of shape {list(vshape)} does not fit axis {axis} of "
                                f"{shape}")
            return self.ins(nn.ReshapeOp(v, [vshape[0] if k == axis else 1 for k in range(len(shape))]))
        if block < 0 or len(vshape) != len(shape) or vshape[axis] != -(-shape[axis] // block) or any(
                d != s for k, (d, s) in enumerate(zip(vshape, shape)) if k != axis):
            raise NodeError(f"a blocked scale or zero point of shape {list(vshape)} does not fit {shape} with "
                            f"block_size {block} along axis {axis}")
        indices = self.constant(np.arange(shape[axis], dtype=np.int64) // block)
        dims = {
            "offset_dims": [*range(axis), *range(axis + 1, len(shape))],
            "collapsed_slice_dims": [axis],
            "start_index_map": [axis],
            "slice_sizes": [1 if k == axis else d for k, d in enumerate(vshape)],
        }
        return self.ins(nni.GatherOp(v, indices, dims, 1))

    def _in(self, v: SSAValue, e: Attribute) -> SSAValue:
        return v if tensor_of(v).element_type == e else self.ins(nne.ConvertOp(v, e))

    def _full(self, value: float, e: Attribute) -> SSAValue:
        return self.ins(nn.FullOp(FloatAttr(value, e), []))  # type: ignore[arg-type]

    def _operands(self, node: Any, attrs: dict[str, Any]) -> tuple[SSAValue, list[int], int, int]:
        x = self.value(node.input[0])
        shape = list(tensor_of(x).get_shape())
        block = int(attrs.get("block_size", 0) or 0)
        scale_size = int(np.prod(tensor_of(self.value(node.input[1])).get_shape()))
        per_tensor = not block and scale_size == 1
        axis = 0 if per_tensor else normalize_axis(attrs.get("axis", 1), len(shape))  # per tensor: axis unused
        return x, shape, axis, block

    def _check_float8_zero_point(self, node: Any, fmt: str) -> None:
        """A float8 zero point (not used) must be a constant 0, as the specification requires."""
        if fmt == "float4_e2m1fn" or len(node.input) < 3 or not node.input[2]:
            return
        name = node.input[2]
        if name not in self.consts:
            raise NodeError(f"input '{name}' must be a constant (a float8 zero point, which must be 0)")
        if np.any(self.consts[name].astype(np.float32) != 0):
            raise NodeError(f"a float8 zero point must be 0, not {self.consts[name].reshape(-1)[:4]}")

    def op_DequantizeLinear(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x, shape, axis, block = self._operands(node, attrs)
        fmt = self.format_of(node.input[0])
        if fmt in FLOAT_FORMATS:
            self._check_float8_zero_point(node, fmt)
            dx = self.decoded(x, fmt, f32)
        else:
            dx = self.cast(x, 0 in self.unsigned_inputs, f32, False)
            if len(node.input) > 2 and node.input[2]:
                zp = self.cast(self.value(node.input[2]), 2 in self.unsigned_inputs, f32, False)
                dx = self.ins(nn.SubOp(dx, self._expanded(zp, shape, axis, block)))
        scale = self.value(node.input[1])
        y = self.ins(nn.MulOp(dx, self._expanded(self._in(scale, f32), shape, axis, block)))
        out = attrs.get("output_dtype", 0)
        e = element_type(_onnx_type(out)) if out else tensor_of(scale).element_type
        if not isinstance(e, AnyFloat):
            raise NodeError(f"DequantizeLinear to {_onnx_type(out).name} is not supported")
        self.unsigned_outputs = set()
        return [self._in(y, e)]

    def _quantized_type(self, node: Any, attrs: dict[str, Any]) -> str:
        out = attrs.get("output_dtype", 0)
        name = _onnx_type(out).name if out else "uint8"
        if len(node.input) > 2 and node.input[2]:
            zp_name = self._type_name(node.input[2])
            if out and zp_name != name:
                raise NodeError(f"output_dtype {name} differs from the zero point's type {zp_name}")
            name = zp_name
        if name not in _INT_RANGES and name not in FLOAT_FORMATS:
            raise NodeError(f"QuantizeLinear to {name} is not supported")
        return name

    def op_QuantizeLinear(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x, shape, axis, block = self._operands(node, attrs)
        target = self._quantized_type(node, attrs)
        scale = self.value(node.input[1])
        precision = attrs.get("precision", 0)
        if precision:
            wide = element_type(_onnx_type(precision))
        else:
            wide = element_type(np.result_type(dtype_of(tensor_of(x).element_type),
                                               dtype_of(tensor_of(scale).element_type)))
        q = self.ins(nn.DivOp(self._in(x, wide), self._expanded(self._in(scale, wide), shape, axis, block)))
        zp = self.value(node.input[2]) if len(node.input) > 2 and node.input[2] else None
        self.unsigned_outputs = set()
        if target in FLOAT_FORMATS:
            self._check_float8_zero_point(node, target)
            saturate = bool(attrs.get("saturate", 1))
            if target == "float4_e2m1fn":
                saturate = True
                if zp is not None:
                    q = self.ins(nn.AddOp(self._in(q, f32), self._expanded(self.decoded(zp, target, f32), shape,
                                                                           axis, block)))
            y = self.encoded(q, False, target, saturate)
        else:
            r = self._in(self.ins(nne.RoundEvenOp(q)), f64)
            if zp is not None:
                zpf = self.cast(zp, 2 in self.unsigned_inputs, f64, False)
                r = self.ins(nn.AddOp(r, self._expanded(zpf, shape, axis, block)))
            low, high = _INT_RANGES[target]
            r = self.ins(nne.ClampOp(self._full(low, f64), r, self._full(high, f64)))
            unsigned = target in ("uint8", "uint16")
            e = i8 if target in INT_FORMATS else element_type(np.dtype(target.lstrip("u")))
            y = self.cast(r, False, e, unsigned)
            if unsigned:
                self.unsigned_outputs = {0}
        if target in INT_FORMATS or target in FLOAT_FORMATS:
            self.formats[node.output[0]] = target
        return [y]

    def op_DynamicQuantizeLinear(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x = self.value(node.input[0])
        e = tensor_of(x).element_type
        if e != f32:
            raise NodeError(f"DynamicQuantizeLinear of {dtype_of(e).name} is not supported")
        axes = list(range(tensor_of(x).get_num_dims()))
        zero = self._full(0.0, f32)
        high = self.ins(nne.MaximumOp(zero, self.ins(nn.ReduceOp(x, "max", axes))))
        low = self.ins(nne.MinimumOp(zero, self.ins(nn.ReduceOp(x, "min", axes))))
        span = self.ins(nn.SubOp(high, low))
        span = self.ins(nne.SelectOp(self.ins(nne.CompareOp(high, low, "EQ")), self._full(1.0, f32), span))
        scale = self.ins(nn.DivOp(span, self._full(255.0, f32)))
        initial = self.ins(nn.SubOp(zero, self.ins(nn.DivOp(low, scale))))
        zp = self.ins(nne.RoundEvenOp(self.ins(nne.ClampOp(zero, initial, self._full(255.0, f32)))))
        y = self.ins(nn.AddOp(self.ins(nne.RoundEvenOp(self.ins(nn.DivOp(x, scale)))), zp))
        y = self.ins(nne.ClampOp(zero, y, self._full(255.0, f32)))
        self.unsigned_outputs = {0, 2}
        return [self.cast(y, False, i8, True), scale, self.cast(zp, False, i8, True)]

    def _one(self, node: Any, k: int) -> SSAValue | None:
        """Input `k` (absent: None), which must have one element, as a 0-d value."""
        if len(node.input) <= k or not node.input[k]:
            return None
        v = self.value(node.input[k])
        if int(np.prod(tensor_of(v).get_shape())) != 1:
            raise NodeError(f"{node.op_type} with input {k} of shape {list(tensor_of(v).get_shape())} (not one "
                            f"element) is not supported")
        return self.ins(nn.ReshapeOp(v, [])) if tensor_of(v).get_num_dims() else v

    def _integer_product(self, node: Any, a: int, a_zero: int, b: int, b_zero: int) -> SSAValue:
        """`(input a - input a_zero) @ (input b - input b_zero)` (8-bit integers), exactly in f64."""
        centered = []
        for k, z in ((a, a_zero), (b, b_zero)):
            name = self._type_name(node.input[k])
            if name not in ("uint8", "int8"):
                raise NodeError(f"{node.op_type} of {name} is not supported")
            v = self.cast(self.value(node.input[k]), k in self.unsigned_inputs, f64, False)
            if (zp := self._one(node, z)) is not None:
                v = self.ins(nn.SubOp(v, self.cast(zp, z in self.unsigned_inputs, f64, False)))
            centered.append(v)
        inner = tensor_of(centered[0]).get_shape()[-1]
        if inner > 33025:
            raise NodeError(f"{node.op_type} over an inner dimension of {inner} (above 33025) is not supported")
        return self.matmul(*centered)

    def op_MatMulInteger(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        self.unsigned_outputs = set()
        return [self.ins(nne.ConvertOp(self._integer_product(node, 0, 2, 1, 3), element_type(np.dtype(np.int32))))]

    def op_QLinearMatMul(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        product = self._integer_product(node, 0, 2, 3, 5)
        a_scale, b_scale, y_scale = (self._one(node, k) for k in (1, 4, 6))
        if a_scale is None or b_scale is None or y_scale is None:
            raise NodeError("QLinearMatMul needs its three scales")
        factor = self.ins(nn.DivOp(self.ins(nn.MulOp(a_scale, b_scale)), y_scale))
        return [self._requantize(node, self.ins(nn.MulOp(product, self._in(factor, f64))))]

    def _requantize(self, node: Any, y: SSAValue) -> SSAValue:
        """`y` (f64) plus the output zero point (input 7), rounded half to even and saturated to the output
        type (the zero point's, else input 0's), as 8-bit integer codes."""
        zp = self._one(node, 7)
        if zp is not None:
            y = self.ins(nn.AddOp(y, self.cast(zp, 7 in self.unsigned_inputs, f64, False)))
        target = self._type_name(node.input[7] if zp is not None else node.input[0])
        low, high = _INT_RANGES[target]
        y = self.ins(nne.ClampOp(self._full(low, f64), self.ins(nne.RoundEvenOp(y)), self._full(high, f64)))
        unsigned = target == "uint8"
        self.unsigned_outputs = {0} if unsigned else set()
        return self.cast(y, False, i8, unsigned)

    def _integer_convolution(self, node: Any, attrs: dict[str, Any], x: tuple[int, int],
                             w: tuple[int, int]) -> SSAValue:
        """Conv of the input `x[0]` less the zero point `x[1]` (one element) by the input `w[0]` less the zero
        point `w[1]` (one element or one per output channel), 8-bit integers, exactly in f64."""
        centered = []
        for k, z in (x, w):
            name = self._type_name(node.input[k])
            if name not in ("uint8", "int8"):
                raise NodeError(f"{node.op_type} of {name} is not supported")
            v = self.cast(self.value(node.input[k]), k in self.unsigned_inputs, f64, False)
            if len(node.input) > z and node.input[z]:
                zp = self.value(node.input[z])
                size = int(np.prod(tensor_of(zp).get_shape()))
                rank = tensor_of(v).get_num_dims()
                if size == 1:
                    zp = self.ins(nn.ReshapeOp(zp, [])) if tensor_of(zp).get_num_dims() else zp
                elif k == w[0] and tensor_of(zp).get_shape() == (tensor_of(v).get_shape()[0],):
                    zp = self.ins(nn.ReshapeOp(zp, [size] + [1] * (rank - 1)))
                else:
                    raise NodeError(f"{node.op_type} with a zero point of shape {list(tensor_of(zp).get_shape())} "
                                    f"is not supported")
                v = self.ins(nn.SubOp(v, self.cast(zp, z in self.unsigned_inputs, f64, False)))
            centered.append(v)
        per_output = int(np.prod(tensor_of(centered[1]).get_shape()[1:]))
        if per_output > 33025:
            raise NodeError(f"{node.op_type} of {per_output} products per output (above 33025) is not supported")
        return self.convolution(centered[0], centered[1], attrs)

    def op_ConvInteger(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        self.unsigned_outputs = set()
        y = self._integer_convolution(node, attrs, (0, 2), (1, 3))
        return [self.ins(nne.ConvertOp(y, element_type(np.dtype(np.int32))))]

    def op_QLinearConv(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        y = self._integer_convolution(node, attrs, (0, 2), (3, 5))
        rank = tensor_of(y).get_num_dims()
        channels = tensor_of(y).get_shape()[1]
        if len(node.input) > 8 and node.input[8]:
            bias = self.cast(self.value(node.input[8]), False, f64, False)
            y = self.ins(nn.AddOp(y, self.ins(nn.ReshapeOp(bias, [channels] + [1] * (rank - 2)))))
        x_scale, y_scale = self._one(node, 1), self._one(node, 6)
        w_scale = self.value(node.input[4])
        size = int(np.prod(tensor_of(w_scale).get_shape()))
        if x_scale is None or y_scale is None or size not in (1, channels):
            raise NodeError(f"QLinearConv with w_scale of shape {list(tensor_of(w_scale).get_shape())} is not "
                            f"supported")
        w_scale = self.ins(nn.ReshapeOp(w_scale, [] if size == 1 else [size] + [1] * (rank - 2)))
        factor = self.ins(nn.DivOp(self.ins(nn.MulOp(x_scale, w_scale)), y_scale))
        return [self._requantize(node, self.ins(nn.MulOp(y, self._in(factor, f64))))]
