"""The 4-, 6- and 8-bit floats and i4/ui4 through `convert-stablehlo` (`passes.stablehlo_narrow`):
every conversion into a format rounds as ml_dtypes (JAX's dtypes) does, on every value of the format,
the midpoints between them, and the edge values; ops round their results into the format; the
gradient passes through the rounding."""

from __future__ import annotations

import numpy as np
import pytest
from support.stablehlo_checks import verdict

from dfc import CompileError, interpret
from dfc.compiler.pass_manager import PassManager
from dfc.importers.stablehlo_import import import_stablehlo

ml_dtypes = pytest.importorskip("ml_dtypes")

FORMATS = {  # StableHLO name: ml_dtypes dtype
    "f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2, "f8E4M3": ml_dtypes.float8_e4m3,
    "f8E3M4": ml_dtypes.float8_e3m4, "f8E4M3FNUZ": ml_dtypes.float8_e4m3fnuz,
    "f8E5M2FNUZ": ml_dtypes.float8_e5m2fnuz, "f8E4M3B11FNUZ": ml_dtypes.float8_e4m3b11fnuz,
    "f4E2M1FN": ml_dtypes.float4_e2m1fn, "f6E2M3FN": ml_dtypes.float6_e2m3fn, "f6E3M2FN": ml_dtypes.float6_e3m2fn,
    "f8E8M0FNU": ml_dtypes.float8_e8m0fnu,
}
DEFAULT = ["f4E2M1FN"]
"""The formats the default run sweeps (the others take 2 to 4 s each: --slow)."""


def _probes(dtype) -> np.ndarray:
    """Every finite value of `dtype`, the midpoints between neighbours (ties), a point either side of each,
    beyond the largest, tiny values, zeros, infinities and NaN; both signs where the format has them."""
    bits = np.dtype(dtype).itemsize * 8 if dtype != ml_dtypes.float4_e2m1fn else 8
    codes = np.arange(256 if bits == 8 else 1 << bits, dtype=np.uint8)
    values = np.unique(codes.view(dtype).astype(np.float64)) if bits == 8 else codes.view(dtype).astype(np.float64)
    finite = np.unique(np.abs(values[np.isfinite(values)]))
    mid = (finite[1:] + finite[:-1]) / 2
    top = finite[-1] * np.array([1.01, 1.2, 2.0, 1e10])
    positive = np.concatenate([finite, mid, mid * (1 + 2.0 ** -20), mid * (1 - 2.0 ** -20), top, [1e-300, 2.0 ** -130, 0.0,
                                                                                       np.inf]])
    return np.concatenate([positive, -positive, [np.nan]])


def _convert_module(name: str, n: int) -> str:
    return f"""
func.func @to(%x: tensor<{n}xf64>) -> tensor<{n}x{name}> {{
  %y = stablehlo.convert %x : (tensor<{n}xf64>) -> tensor<{n}x{name}>
  func.return %y : tensor<{n}x{name}>
}}"""


@pytest.mark.parametrize("name", [n if n in DEFAULT else pytest.param(n, marks=pytest.mark.slow) for n in FORMATS])
def test_convert_into_a_format_rounds_as_ml_dtypes(name):
    dtype = FORMATS[name]
    x = _probes(dtype)
    if name == "f8E8M0FNU":  # ml_dtypes rounds a double through a float, inexact below float's normal range
        x = x[(x >= 2.0 ** -126) | np.isnan(x)]
    with np.errstate(over="ignore", invalid="ignore"):
        want = x.astype(dtype).astype(np.float64)
    got = interpret(import_stablehlo(_convert_module(name, len(x))), "to", x)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got[~np.isnan(want)]), np.signbit(want[~np.isnan(want)]))


def test_unsigned_e8m0_has_no_zero_and_no_negative_values():
    """LLVM's conversion (the spec interpreter's): what is below 2^-127, zero included, is 2^-127."""
    x = np.array([0.0, -0.0, 1e-300, 2.0 ** -128, -1.0, 1.5 * 2.0 ** -127 * (1 - 2.0 ** -30), 2.0 ** 128])
    got = interpret(import_stablehlo(_convert_module("f8E8M0FNU", len(x))), "to", x)
    np.testing.assert_array_equal(got, [2.0 ** -127] * 4 + [np.nan, 2.0 ** -127, np.nan])


def test_arithmetic_rounds_each_result_into_the_format():
    """(a * b) + c in f8E4M3FN rounds twice, as ml_dtypes computes it; ties go to even."""
    dtype = ml_dtypes.float8_e4m3fn
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal(16).astype(dtype) for _ in range(3))
    text = """
func.func @f(%a: tensor<16xf8E4M3FN>, %b: tensor<16xf8E4M3FN>, %c: tensor<16xf8E4M3FN>) -> tensor<16xf8E4M3FN> {
  %p = stablehlo.multiply %a, %b : tensor<16xf8E4M3FN>
  %s = stablehlo.add %p, %c : tensor<16xf8E4M3FN>
  func.return %s : tensor<16xf8E4M3FN>
}"""
    got = interpret(import_stablehlo(text), "f", *(v.astype(np.float64) for v in (a, b, c)))
    np.testing.assert_array_equal(got, (a * b + c).astype(np.float64))


def test_the_gradient_passes_through_the_rounding():
    text = """
func.func @f(%x: tensor<4xf64>) -> tensor<f64> {
  %y = stablehlo.convert %x : (tensor<4xf64>) -> tensor<4xf8E5M2>
  %w = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf8E5M2>
  %p = stablehlo.multiply %y, %w : tensor<4xf8E5M2>
  %q = stablehlo.convert %p : (tensor<4xf8E5M2>) -> tensor<4xf64>
  %z = stablehlo.constant dense<0.0> : tensor<f64>
  %s = stablehlo.reduce(%q init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4xf64>, tensor<f64>)
    -> tensor<f64>
  func.return %s : tensor<f64>
}"""
    module = import_stablehlo(text)
    x = np.array([0.3, -1.7, 5.1, 0.0])
    PassManager.parse("autodiff{func=f}").run(module)
    value, grad = interpret(module, "f_grad", x, np.array(1.0))
    e5m2 = ml_dtypes.float8_e5m2
    want = ((x.astype(e5m2) * np.arange(1.0, 5).astype(e5m2)).astype(e5m2)).astype(np.float64).sum()
    assert value == want
    np.testing.assert_array_equal(grad, [1.0, 2.0, 3.0, 0.0])  # rounding to 0 stops the gradient, as for reduce_precision


@pytest.mark.parametrize("element, values, want", [
    ("i4", [7, -8, 5, -3], [(7 + 5 + 8) % 16 - 8, (-8 - 3 + 8) % 16 - 8]),
    ("ui4", [15, 9, 3, 14], [(15 + 3) % 16, (9 + 14) % 16]),
])
def test_four_bit_integers_wrap(element, values, want):
    wide = "i64" if element == "i4" else "ui64"
    case = f"""
func.func @wrap() {{
  %0 = stablehlo.constant dense<{values[:2]}> : tensor<2x{element}>
  %1 = stablehlo.constant dense<{values[2:]}> : tensor<2x{element}>
  %2 = stablehlo.add %0, %1 : tensor<2x{element}>
  %3 = stablehlo.convert %2 : (tensor<2x{element}>) -> tensor<2x{wide}>
  check.expect_eq_const %3, dense<{want}> : tensor<2x{wide}>
  func.return
}}"""
    assert verdict(case) == "pass"


def test_a_reduction_of_narrow_floats_is_refused():
    text = """
func.func @f(%x: tensor<4xf8E4M3FN>) -> tensor<f8E4M3FN> {
  %z = stablehlo.constant dense<0.0> : tensor<f8E4M3FN>
  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0]
    : (tensor<4xf8E4M3FN>, tensor<f8E4M3FN>) -> tensor<f8E4M3FN>
  func.return %s : tensor<f8E4M3FN>
}"""
    with pytest.raises(CompileError, match="'stablehlo.reduce' of 4-, 6- or 8-bit values is not supported"):
        import_stablehlo(text)


def test_a_jax_function_of_narrow_types_returns_jax_dtypes():
    jax = pytest.importorskip("jax")
    from dfc.importers.stablehlo_import import from_jax

    x = np.array([0.1, 1.3, -2.7, 300.0], ml_dtypes.float8_e4m3fn)
    y = np.array([1, -3, 7, -8], ml_dtypes.int4)

    def f(x, y):
        return x * x, y + y

    imported = from_jax(f, x, y)
    got = imported.with_jax_dtypes(interpret(imported.module, imported.name, *imported.arguments(x, y)))
    for g, w in zip(got, jax.jit(f)(x, y)):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g.astype(np.float64), np.asarray(w).astype(np.float64))
