"""ONNX's narrow element types nn has no type for: float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0),
float4e2m1, int4, uint4, int2 and uint2, and their exact codecs.

A tensor of one of them is stored as its codes: the float formats as the bit pattern of each element in
an i8 (the low bits; float4e2m1's four), the integers as their values in an i8. `encode` and `decode` convert
between codes and float values by the formats' bit rules (ONNX's Cast tables, as ml_dtypes computes them):
round to nearest, ties to the even code; `saturate` clamps what overflows (infinities included) to the
largest finite value, else it becomes the format's infinity (e5m2) or NaN; -0 is 0 in the fnuz formats, whose
only NaN is 0x80; float4e2m1 has no NaN or infinity, always saturates, and encodes NaN as 0x8 (ml_dtypes').
`thresholds` gives the exact rounding boundaries the importer's IR compares with (`onnx_narrow_types`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np


@dataclass(frozen=True)
class FloatFormat:
    """A sign-exponent-mantissa format of `1 + exponent + mantissa` bits."""

    name: str
    exponent: int
    mantissa: int
    bias: int
    max_code: int
    """The code of the largest finite value (sign bit clear)."""
    inf: int | None
    """The code of +infinity, or None."""
    nan: int | None
    """The code a NaN encodes to (sign bit clear), or None when a NaN is never produced."""
    unsigned_zero: bool
    """fnuz: no -0 (its code 0x80 is the one NaN); a result that rounds to 0 is +0."""

    @property
    def bits(self) -> int:
        return 1 + self.exponent + self.mantissa

    @property
    def sign(self) -> int:
        return 1 << (self.exponent + self.mantissa)

    def is_nan(self, codes: np.ndarray) -> np.ndarray:
        """Whether each code (0 .. 2^bits - 1) encodes a NaN."""
        magnitude = codes & (self.sign - 1)
        if self.unsigned_zero:
            return codes == self.sign
        if self.inf is not None:
            return magnitude > self.inf
        return magnitude == self.nan if self.nan is not None else np.zeros(np.shape(codes), bool)


FLOAT_FORMATS = {f.name: f for f in (
    FloatFormat("float8_e4m3fn", 4, 3, 7, 0x7E, None, 0x7F, False),
    FloatFormat("float8_e4m3fnuz", 4, 3, 8, 0x7F, None, 0x80, True),
    FloatFormat("float8_e5m2", 5, 2, 15, 0x7B, 0x7C, 0x7E, False),
    FloatFormat("float8_e5m2fnuz", 5, 2, 16, 0x7F, None, 0x80, True),
    FloatFormat("float4_e2m1fn", 2, 1, 1, 0x7, None, None, False),
)}
"""The float formats by their numpy (ml_dtypes) dtype name."""

INT_FORMATS = {"int4": (4, True), "uint4": (4, False), "int2": (2, True), "uint2": (2, False)}
"""The narrow integers by dtype name: (bits, signed)."""

FLOAT4_NAN_CODE = 0x8
"""What float4e2m1 (no NaN) encodes a NaN to: ml_dtypes' (and so ONNX's reference's) -0."""


E8M0 = "float8_e8m0fnu"
"""The exponent-only format (MX scales): code c is 2^(c - 127), 255 NaN; no sign, no zero."""


def is_narrow(dtype: np.dtype) -> bool:
    """Whether `dtype` is a format of this module (stored as codes in an i8)."""
    return np.dtype(dtype).name in FLOAT_FORMATS or np.dtype(dtype).name in INT_FORMATS or np.dtype(dtype).name == E8M0


def encode_e8m0(x: np.ndarray, saturate: bool = True, round_mode: str = "up") -> np.ndarray:
    """float8e8m0 codes (uint8) of values (as float32, their sign ignored), as ONNX's `to_float8e8m0`: the
    float32 exponent field, plus one when rounding `up` a value with a fraction or, `nearest`, one whose
    fraction is at least a half (a float32 subnormal: more than a half); `saturate` keeps 254 from
    rounding up to the NaN code 255; infinities and NaN are 255."""
    bits = np.asarray(x, np.float32).view(np.uint32)
    exponent = ((bits >> 23) & 0xFF).astype(np.int64)
    fraction = bits & 0x7FFFFF
    if round_mode == "up":
        up = fraction != 0
    elif round_mode == "nearest":
        half, rest = (fraction & 0x400000) != 0, (fraction & 0x3FFFFF) != 0
        up = half & (rest | (exponent > 0))
    elif round_mode == "down":
        up = np.zeros(bits.shape, bool)
    else:
        raise ValueError(f"round_mode '{round_mode}'")
    up &= exponent != 0xFF
    if saturate:
        up &= exponent != 0xFE
    return np.minimum(exponent + up, 0xFF).astype(np.uint8)


def decode(fmt: FloatFormat, codes: np.ndarray) -> np.ndarray:
    """The float64 value of each code (0 .. 2^bits - 1; exact: every value of these formats is a float64;
    a NaN code with the sign bit set is a negative NaN, as in ml_dtypes)."""
    codes = np.asarray(codes, np.int64) & ((1 << fmt.bits) - 1)
    magnitude = codes & (fmt.sign - 1)
    biased, fraction = magnitude >> fmt.mantissa, magnitude & ((1 << fmt.mantissa) - 1)
    significand = np.where(biased == 0, fraction, fraction | (1 << fmt.mantissa))
    scale = np.maximum(biased, 1) - fmt.bias - fmt.mantissa
    value = np.ldexp(significand.astype(np.float64), scale.astype(np.int32))
    if fmt.inf is not None:
        value = np.where(magnitude == fmt.inf, np.inf, value)
    value = np.where(fmt.is_nan(codes), np.nan, value)
    return np.where(codes & fmt.sign, -value, value)


def encode(fmt: FloatFormat, x: np.ndarray, saturate: bool = True) -> np.ndarray:
    """The codes (uint8) of float values (any numpy float; float64 holds them exactly), rounded to nearest
    with ties to the even code, from the bits of the float64 (its significand shifted right with a guard of
    the remainder). A NaN encodes to the format's `nan` code whatever its sign (ml_dtypes keeps the sign; nn
    cannot observe it, and this codec agrees with the IR's)."""
    x = np.asarray(x, np.float64)
    bits = x.view(np.uint64)
    negative = (bits >> np.uint64(63)).astype(bool)
    biased = ((bits >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    significand = (bits & np.uint64((1 << 52) - 1)) | np.uint64(1 << 52)
    exponent = biased - 1023
    lowest = 1 - fmt.bias  # the exponent of the smallest normal value
    target = np.maximum(exponent, lowest)
    shift = np.minimum(52 - fmt.mantissa + (target - exponent), 63).astype(np.uint64)
    kept = significand >> shift
    rest = significand & ((np.uint64(1) << shift) - np.uint64(1))
    half = np.uint64(1) << (shift - np.uint64(1))
    up = (rest > half) | ((rest == half) & (kept & np.uint64(1)).astype(bool))
    magnitude = (target + fmt.bias - 1) * (1 << fmt.mantissa) + (kept + up.astype(np.uint64)).astype(np.int64)
    magnitude = np.where(biased == 0, 0, magnitude)  # zeros and float64 subnormals (far below every format)
    overflow = (magnitude > fmt.max_code) | np.isinf(x)
    too_large = fmt.max_code if saturate or fmt.nan is None else fmt.inf if fmt.inf is not None else fmt.nan
    magnitude = np.where(overflow, too_large, magnitude)
    signed = negative & ((magnitude != 0) | (not fmt.unsigned_zero))
    codes = np.where(signed, magnitude | fmt.sign, magnitude)
    nan = FLOAT4_NAN_CODE if fmt.nan is None else fmt.nan
    return np.where(np.isnan(x), nan, codes).astype(np.uint8)


def wrap_int(name: str, values: np.ndarray) -> np.ndarray:
    """Integers (or floats, truncated toward zero) as int4/uint4/int2/uint2 values (int8): their low bits,
    sign-extended for the signed ones (ONNX's integer Cast discards the higher bits; a float out of range is
    undefined, and ml_dtypes wraps it too)."""
    bits, signed = INT_FORMATS[name]
    values = np.asarray(values)
    if values.dtype.kind == "f":
        values = np.trunc(np.nan_to_num(values, nan=0.0, posinf=0.0, neginf=0.0))
    v = values.astype(np.int64) & ((1 << bits) - 1)
    return (v - (1 << bits) * (v >> (bits - 1)) if signed else v).astype(np.int8)


@cache
def decode_table(name: str) -> np.ndarray:
    """The float64 value of every code 0 .. 2^bits - 1 of the float format `name` (NaN where it is one)."""
    if name == E8M0:
        return np.append(np.ldexp(1.0, np.arange(255) - 127), np.nan)
    fmt = FLOAT_FORMATS[name]
    return decode(fmt, np.arange(1 << fmt.bits))


@cache
def thresholds(name: str) -> np.ndarray:
    """Rounding boundaries of magnitudes (float64, exact): entry k (1 .. max_code + 1) is the midpoint between
    the values of codes k - 1 and k (for max_code + 1, the value one step above the largest); a magnitude
    `a` rounds to code k or above when `a > t[k]`, or `a == t[k]` and k is even. Entry 0 and the entries
    after max_code + 1 up to the next power of two are NaN (no comparison holds)."""
    fmt = FLOAT_FORMATS[name]
    values = decode(fmt, np.arange(fmt.max_code + 1))
    step = values[-1] - values[-2]
    upper = np.append(values[1:], values[-1] + step)
    size = 1 << int(fmt.max_code + 1).bit_length()
    table = np.full(size, np.nan)
    table[1: fmt.max_code + 2] = (values + upper) / 2
    return table


def cast_array(array: np.ndarray, dtype: np.dtype, saturate: bool = True, round_mode: str = "up") -> np.ndarray:
    """ONNX's Cast of a known array to `dtype` (numpy's astype, the narrow formats by their codecs)."""
    dtype, array = np.dtype(dtype), np.asarray(array)
    if is_narrow(array.dtype):
        array = array.astype(np.int64 if array.dtype.name in INT_FORMATS else np.float64)
    if dtype.name == E8M0:
        return encode_e8m0(array.astype(np.float32), saturate, round_mode).view(dtype)
    if dtype.name in FLOAT_FORMATS:
        return encode(FLOAT_FORMATS[dtype.name], array.astype(np.float64), saturate).view(dtype)
    if dtype.name in INT_FORMATS:
        return wrap_int(dtype.name, array).astype(dtype)
    return array.astype(dtype)
