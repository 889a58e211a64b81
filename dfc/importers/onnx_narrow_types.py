"""ONNX's narrow element types (float8 in its five forms, float4e2m1, int4, uint4, int2, uint2) in the importer.

nn has no such types, so a tensor of one is the i8 tensor of its codes (`narrow_formats`): the bit pattern
of each float element, the value of each int4/uint4 one; graph inputs and outputs cross as those i8
(`signless`, `with_onnx_dtype`), and the importer remembers the format of each such value (`formats`).
Operators that only move elements (`BIT_MOVING`: reshapes, transposes, slices, gathers, concatenation,
padding, ...) take and give codes of one format; Cast and CastLike convert exactly:

* to a float format: the value (in f32, or f64 from f64 and the integers) is rounded by comparing its
  magnitude with the format's exact rounding boundaries (`narrow_formats.thresholds`: a binary search of
  `nn.gather`s over the table, the tie going to the even code), then the overflow rule (`saturate`), the
  sign (from `x < 0`, and `1 / x < 0` for -0) and NaN's code are applied with integer selects;
* to float8e8m0: the float32 exponent field of |x| by a search of the powers of two, rounded by
  `round_mode` (`encoded_e8m0`);
* from a float format: the code indexes a table of the format's values in the target float type (every
  value is exact in f16, bf16, f32 and f64, but float8e8m0's in f16: rounded from f32), then any other
  conversion from f32;
* to int4/uint4/int2/uint2: the integer (a float truncated toward zero) keeps its low bits, sign-extended
  for the signed ones; from them: the i8 value converts as an int8.

BitCast reinterprets codes of one width: among the 8-bit types a code is its byte (bool's 0 or 1, read back
as `!= 0`), among the 4- and 2-bit ones the low bits, sign-extended for int4 and int2.

Every other operator of a narrow operand is refused, naming it and the type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, IntegerType, f32, f64, i1, i8, i64
from xdsl.ir import Attribute, SSAValue

from dfc.compiler.interpreter import dtype_of
from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_indexing as nni
from dfc.importers.narrow_formats import (
    E8M0,
    FLOAT4_NAN_CODE,
    FLOAT_FORMATS,
    INT_FORMATS,
    decode_table,
    is_narrow,
    thresholds,
)
from dfc.importers.onnx_common import NodeError, element_type, tensor_of

BIT_MOVING = frozenset({
    "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Slice", "Gather",
    "GatherElements", "GatherND", "Expand", "Tile", "Split", "Pad", "Where", "Trilu", "DepthToSpace",
    "SpaceToDepth", "Shape", "Size", "CenterCropPad",
})
"""Operators whose outputs are elements of their inputs (or 0, the code of +0 and of the integer 0)."""


class NarrowOps:
    """Casts to and from the narrow formats, mixed into `OnnxImporter`; `formats` maps the name of each value
    holding codes to its format (a numpy dtype name of `narrow_formats`)."""

    formats: dict[str, str]
    consts: dict[str, np.ndarray]
    ins: Callable[[Any], SSAValue]
    constant: Callable[[np.ndarray], SSAValue]
    cast: Callable[[SSAValue, bool, Any, bool], SSAValue]

    def format_of(self, name: str) -> str | None:
        if name in self.formats:
            return self.formats[name]
        if name in self.consts and is_narrow(self.consts[name].dtype):
            return self.consts[name].dtype.name
        return None

    def check_narrow_inputs(self, node: Any) -> None:
        """A NodeError unless `node`'s narrow inputs (if any) are ones its operator takes."""
        found = [f for n in node.input if n and (f := self.format_of(n))]
        if found and node.op_type not in BIT_MOVING | {"Cast", "CastLike", "BitCast", "QuantizeLinear",
                                                       "DequantizeLinear"}:
            raise NodeError(f"{node.op_type} of {found[0]} is not supported")

    def record_narrow(self, node: Any, outputs: Sequence[SSAValue]) -> None:
        """The outputs of an element-moving `node` (`BIT_MOVING`) hold codes of its narrow input's format
        (Cast and CastLike record their own)."""
        fmt = next((f for n in node.input if n and (f := self.format_of(n))), None)
        if fmt is None or node.op_type not in BIT_MOVING:
            return
        for name, v in zip(node.output, outputs):
            if name and tensor_of(v).element_type == i8:
                self.formats[name] = fmt

    # ------------------------------------------------------------ casts

    def op_BitCast(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Each element's bits read as the type `to`, of the same width (bool as 8 bits; the narrow formats'
        codes as the module docstring says; `nn.bitcast_convert` between floats and integers)."""
        from onnx import helper

        name = node.input[0]
        x, source = self.value(name), self.format_of(name)
        target = np.dtype(helper.tensor_dtype_to_np_dtype(attrs["to"]))
        e, out = tensor_of(x).element_type, element_type(target)
        wide = _bits(source) if source else 8 if e == i1 else e.width.data if isinstance(e, IntegerType) else e.bitwidth
        narrow = _bits(target.name) if is_narrow(target) else target.itemsize * 8
        if wide != narrow:
            raise NodeError(f"BitCast of {source or tensor_of(x)} ({wide} bits) to {target.name} ({narrow} bits): "
                            "the widths differ")
        self.unsigned_outputs = {0} if target.kind == "u" else set()
        if is_narrow(target):
            self.formats[node.output[0]] = target.name
        if e == i1 or out == i1:  # bool: the byte 0 or 1
            return [x if e == out else self.ins(nne.ConvertOp(x, out)) if e == i1 else
                    self.ins(nne.CompareOp(x, self._full(0, e), "NE"))]
        if narrow < 8:
            bits, signed = INT_FORMATS.get(target.name, (narrow, False))
            v = self.ins(nne.AndOp(x, self._full((1 << bits) - 1, i8)))
            if signed:
                top = self._full(1 << (bits - 1), i8)
                v = self.ins(nn.SubOp(self.ins(nne.XorOp(v, top)), top))
            return [v]
        return [x if e == out else self.ins(nne.BitcastConvertOp(x, out))]

    def narrow_cast(self, x: SSAValue, source: str | None, source_unsigned: bool, e: Attribute,
                    target_unsigned: bool, target: str | None, saturate: bool, round_mode: str = "up") -> SSAValue:
        """`x` (codes of format `source`, or a plain value, unsigned or not) cast to the format `target`
        (codes in i8) or, when `target` is None, to the nn type `e` (an unsigned integer's bits if
        `target_unsigned`)."""
        if source in FLOAT_FORMATS or source == E8M0:
            x = self.decoded(x, source, e if target is None and isinstance(e, AnyFloat) else f32)
            source_unsigned = False
        if target is None:
            return self.cast(x, source_unsigned, e, target_unsigned)
        if target in INT_FORMATS:
            return self.wrapped(x, source_unsigned, target)
        if target == E8M0:
            return self.encoded_e8m0(x, source_unsigned, saturate, round_mode)
        return self.encoded(x, source_unsigned, target, saturate)

    def _table_lookup(self, table: np.ndarray, index: SSAValue) -> SSAValue:
        """`table[index]` elementwise (a 1-D constant, in-range i64 indices)."""
        rank = tensor_of(index).get_num_dims()
        dims = {"collapsed_slice_dims": [0], "start_index_map": [0], "slice_sizes": [1]}
        return self.ins(nni.GatherOp(self.constant(table), index, dims, rank))

    def _full(self, value: int | float, e: Attribute, shape: Any = ()) -> SSAValue:
        attr = FloatAttr(value, e) if isinstance(e, AnyFloat) else IntegerAttr(int(value), e)
        return self.ins(nn.FullOp(attr, list(shape)))

    def decoded(self, codes: SSAValue, name: str, e: Attribute) -> SSAValue:
        """The values (of float type `e`) of float-format codes: a lookup of the code's byte in the format's
        table (in f32 then rounded to `e` where `e` does not hold every value: float8e8m0 in f16 or bf16)."""
        with np.errstate(over="ignore"):
            table = decode_table(name).astype(dtype_of(e))
        index = self.ins(nne.AndOp(self.ins(nne.ConvertOp(codes, i64)), self._full(0xFF, i64)))
        if not np.array_equal(table.astype(np.float64), decode_table(name), equal_nan=True):
            return self.ins(nne.ConvertOp(self._table_lookup(decode_table(name).astype(np.float32), index), e))
        return self._table_lookup(table, index)

    def _search(self, a: SSAValue, table: np.ndarray, even_ties: bool) -> SSAValue:
        """The largest k (i64) with `a >= table[k]` (`even_ties`: `a > table[k]` for an odd k), by a binary
        search of table gathers; `table` is ascending where it is not NaN, of a power-of-two length."""
        code = self._full(0, i64, tensor_of(a).get_shape())
        step = len(table) // 2
        while step:  # every candidate but step 1's is even
            candidate = self.ins(nn.AddOp(code, self._full(step, i64)))
            bound = self._table_lookup(table, candidate)
            above = self.ins(nne.CompareOp(a, bound, "GT" if step == 1 and even_ties else "GE"))
            code = self.ins(nne.SelectOp(above, candidate, code))
            step //= 2
        return code

    def encoded_e8m0(self, x: SSAValue, unsigned: bool, saturate: bool, round_mode: str) -> SSAValue:
        """float8e8m0 codes (in i8) of `x` in f32, as `narrow_formats.encode_e8m0`: the exponent field E of
        |x| by a search of the powers of two, plus one by `round_mode` (`up`: |x| is not 2^(E - 127);
        `nearest`: |x| >= 1.5 * 2^(E - 127), or > 2^-127 below the normal range), but not past 254 when
        saturating; infinities and NaN give 255."""
        if round_mode not in ("up", "down", "nearest"):
            raise NodeError(f"Cast to float8e8m0 with round_mode '{round_mode}' is not supported")
        x = self.cast(x, unsigned, f32, False)
        shape = tensor_of(x).get_shape()
        a = self.ins(nne.AbsOp(x))
        powers = np.append(np.ldexp(1.0, np.arange(255) - 127), np.nan).astype(np.float32)  # 2^(k - 127)
        exponent = self._search(a, np.where(np.arange(256) > 0, powers, np.nan), False)
        zero = self._full(0, i64, shape)
        normal = self.ins(nne.CompareOp(exponent, zero, "NE"))
        if round_mode == "up":
            base = self._table_lookup(np.where(np.arange(256) > 0, powers, 0).astype(np.float32), exponent)
            up = self.ins(nne.CompareOp(a, base, "NE"))
        elif round_mode == "nearest":
            half = self._table_lookup((1.5 * powers).astype(np.float32), exponent)
            up = self.ins(nne.SelectOp(normal, self.ins(nne.CompareOp(a, half, "GE")),
                                       self.ins(nne.CompareOp(a, self._full(2.0 ** -127, f32), "GT"))))
        else:
            up = self.ins(nne.CompareOp(exponent, exponent, "NE"))
        if saturate:
            up = self.ins(nne.AndOp(up, self.ins(nne.CompareOp(exponent, self._full(254, i64), "NE"))))
        code = self.ins(nne.SelectOp(up, self.ins(nn.AddOp(exponent, self._full(1, i64))), exponent))
        special = self.ins(nne.OrOp(self.ins(nne.CompareOp(x, x, "NE")),
                                    self.ins(nne.CompareOp(a, self._full(np.inf, f32), "EQ"))))
        code = self.ins(nne.SelectOp(special, self._full(255, i64, shape), code))
        return self.ins(nne.ConvertOp(code, i8))

    def wrapped(self, x: SSAValue, unsigned: bool, name: str) -> SSAValue:
        """The narrow integers (in i8) of `x`: its integer (floats truncated) with the format's low bits
        kept, sign-extended if signed (`(v ^ top) - top`)."""
        if tensor_of(x).element_type == i1:
            return self.ins(nne.ConvertOp(x, i8))
        bits, signed = INT_FORMATS[name]
        v = self.cast(x, unsigned, i64, False)
        v = self.ins(nne.AndOp(v, self._full((1 << bits) - 1, i64)))
        if signed:
            top = 1 << (bits - 1)
            v = self.ins(nn.SubOp(self.ins(nne.XorOp(v, self._full(top, i64))), self._full(top, i64)))
        return self.ins(nne.ConvertOp(v, i8))

    def encoded(self, x: SSAValue, unsigned: bool, name: str, saturate: bool) -> SSAValue:
        """The codes (in i8) of `x` rounded to the float format `name` (the module docstring)."""
        fmt = FLOAT_FORMATS[name]
        source = tensor_of(x).element_type
        wide = f64 if source == f64 or isinstance(source, IntegerType) and source != i1 else f32
        x = self.cast(x, unsigned, wide, False)
        shape = tensor_of(x).get_shape()
        a = self.ins(nne.AbsOp(x))
        code = self._search(a, thresholds(name).astype(dtype_of(wide)), True)  # a > t[k], or == for an even k
        too_large = fmt.max_code if saturate or fmt.nan is None else fmt.inf if fmt.inf is not None else fmt.nan
        overflow = self.ins(nne.CompareOp(code, self._full(fmt.max_code, i64), "GT"))
        code = self.ins(nne.SelectOp(overflow, self._full(too_large, i64, shape), code))
        zero = self._full(0.0, wide)
        reciprocal = self.ins(nn.DivOp(self._full(1.0, wide), x))
        negative = self.ins(nne.SelectOp(self.ins(nne.CompareOp(x, zero, "EQ")),
                                         self.ins(nne.CompareOp(reciprocal, zero, "LT")),
                                         self.ins(nne.CompareOp(x, zero, "LT"))))
        if fmt.unsigned_zero:
            nonzero = self.ins(nne.CompareOp(code, self._full(0, i64), "NE"))
            negative = self.ins(nne.AndOp(negative, nonzero))
        signed = self.ins(nne.OrOp(code, self._full(fmt.sign, i64)))
        code = self.ins(nne.SelectOp(negative, signed, code))
        nan = self.ins(nne.CompareOp(x, x, "NE"))
        nan_code = FLOAT4_NAN_CODE if fmt.nan is None else fmt.nan
        code = self.ins(nne.SelectOp(nan, self._full(nan_code, i64, shape), code))
        return self.ins(nne.ConvertOp(code, i8))


def _bits(name: str) -> int:
    """The bits of a narrow format's element (8 for the float8 formats)."""
    return INT_FORMATS[name][0] if name in INT_FORMATS else FLOAT_FORMATS[name].bits if name in FLOAT_FORMATS else 8
