"""bf16 (and the double-to-f16 conversion): storage in 16 bits, each operation computed in f32 and rounded (as
ml_dtypes does); the engine agrees with the interpreter bit for bit, and both
with a float64 reference within bf16's rounding."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from dfc import ExecutionEngine, interpret, parse_module

BF16 = ml_dtypes.bfloat16

PROGRAM = """
func.func @f(%x: tensor<64xf32>, %y: tensor<64xbf16>) -> (tensor<64xf32>, tensor<64xbf16>) {
  %b = nn.convert %x : (tensor<64xf32>) -> tensor<64xbf16>
  %e = nn.exp %b : (tensor<64xbf16>) -> tensor<64xbf16>
  %s = nn.mul %e, %y : (tensor<64xbf16>, tensor<64xbf16>) -> tensor<64xbf16>
  %c = arith.constant dense<1.5> : tensor<64xbf16>
  %t = nn.add %s, %c : (tensor<64xbf16>, tensor<64xbf16>) -> tensor<64xbf16>
  %r = nn.convert %t : (tensor<64xbf16>) -> tensor<64xf32>
  func.return %r, %t : tensor<64xf32>, tensor<64xbf16>
}
"""


def _inputs():
    rng = np.random.default_rng(0)
    return rng.uniform(-3, 3, 64).astype(np.float32), rng.uniform(-2, 2, 64).astype(BF16)


def _rounded(a):
    return np.asarray(a, np.float64).astype(BF16).astype(np.float64)


def test_interpreter_rounds_every_operation_to_bf16():
    x, y = _inputs()
    r, t = interpret(parse_module(PROGRAM), "f", x, y)
    assert t.dtype == BF16 and r.dtype == np.float32
    b = _rounded(x)
    expected = _rounded(_rounded(_rounded(np.exp(b)) * y.astype(np.float64)) + 1.5)
    np.testing.assert_array_equal(t.astype(np.float64), expected)
    np.testing.assert_array_equal(r, t.astype(np.float32))


@pytest.mark.parametrize("fast_math", [False, True])
def test_engine_matches_the_interpreter_bit_for_bit(fast_math):
    x, y = _inputs()
    module = parse_module(PROGRAM)
    want = interpret(module, "f", x, y)
    got = ExecutionEngine(module, fast_math=fast_math).invoke("f", x, y)
    for w, g in zip(want, got):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g.astype(np.float32), w.astype(np.float32))


def test_hexadecimal_bf16_literals_are_bit_patterns_and_round_trip():
    text = """func.func @f() -> tensor<2xbf16> {
  %c = arith.constant dense<[0xFF80, 0x3FC0]> : tensor<2xbf16>
  func.return %c : tensor<2xbf16>
}"""
    module = parse_module(text)
    value = interpret(module, "f")
    np.testing.assert_array_equal(value.astype(np.float32), [-np.inf, 1.5])
    np.testing.assert_array_equal(interpret(parse_module(str(module)), "f").astype(np.float32), [-np.inf, 1.5])


CONVERSIONS = """
func.func @f(%x: tensor<{n}xf32>, %d: tensor<{n}xf64>) -> (tensor<{n}xbf16>, tensor<{n}xbf16>) {{
  %b = nn.convert %x : (tensor<{n}xf32>) -> tensor<{n}xbf16>
  %c = nn.convert %d : (tensor<{n}xf64>) -> tensor<{n}xbf16>
  func.return %b, %c : tensor<{n}xbf16>, tensor<{n}xbf16>
}}
"""


def _bits(a) -> np.ndarray:
    return np.asarray(a, BF16).view(np.uint16)


def test_conversions_to_bf16_round_to_nearest_even_on_every_host():
    """float and double to bf16 (the runtime's `__truncsfbf2`/`__truncdfbf2` where the host lacks
    native conversions): ties to even, NaN stays NaN, overflow to inf, and a double rounds once."""
    ties = np.float32([1.00390625, 1.01171875, -1.00390625, 3.3895314e38, 3.4e38, np.inf, -np.inf, 0.0, -0.0,
                       1e-45, -1e-45, 1.1754944e-38, np.nan])
    rng = np.random.default_rng(1)
    x = np.concatenate([ties, rng.standard_normal(4000).astype(np.float32) * 10.0 ** rng.integers(-30, 30, 4000)])
    x = x.astype(np.float32)
    # doubles just beside a bf16 tie: rounding through float would land on the tie and round to even
    above_tie = np.float64(1.00390625) + 2.0**-40
    d = np.concatenate([x.astype(np.float64), [above_tie, -above_tie, 1.0 + 2.0**-9 - 2.0**-40, 1e300, -1e300]])
    d = np.resize(d, x.size + 5)
    x = np.resize(x, d.size)
    program = CONVERSIONS.format(n=x.size)
    got_b, got_c = ExecutionEngine(parse_module(program)).invoke("f", x, d)
    want_b, want_c = interpret(parse_module(program), "f", x, d)
    nan_b, nan_c = np.isnan(x), np.isnan(d)
    np.testing.assert_array_equal(_bits(got_b)[~nan_b], _bits(want_b)[~nan_b])
    np.testing.assert_array_equal(_bits(got_b)[~nan_b], _bits(x[~nan_b].astype(BF16)))
    assert np.isnan(got_b[nan_b].astype(np.float32)).all() and np.isnan(got_c[nan_c].astype(np.float32)).all()
    np.testing.assert_array_equal(_bits(got_c)[~nan_c], _bits(want_c)[~nan_c])
    assert _bits(got_c)[-5:-3].tolist() == [0x3F81, 0xBF81]  # once-rounded: above the tie, up
    assert _bits(got_c)[-3] == 0x3F80 and np.isinf(got_c[-2:].astype(np.float32)).all()


HALF = """func.func @f(%d: tensor<{n}xf64>) -> tensor<{n}xf16> {{
  %h = nn.convert %d : (tensor<{n}xf64>) -> tensor<{n}xf16>
  func.return %h : tensor<{n}xf16>
}}"""


def test_double_to_half_rounds_once_to_nearest_even():
    """double to f16 (the runtime's `__truncdfhf2`: LLVM has no native double-to-half
    conversion on x86): the bits NumPy gives, at ties, beside ties, at overflow
    and in the subnormals; NaN stays NaN."""
    rng = np.random.default_rng(2)
    h = rng.standard_normal(2000).astype(np.float16)
    ties = (h.astype(np.float64) + np.nextafter(h, np.float16(np.inf)).astype(np.float64)) / 2
    d = np.concatenate([ties, np.nextafter(ties, np.inf), np.nextafter(ties, -np.inf),
                        rng.standard_normal(2000) * 10.0 ** rng.integers(-9, 6, 2000),
                        [65504.0, 65519.99, 65520.0, 1e300, -1e300, 2.0**-25, 2.0**-25 * (1 + 2**-40), 6e-8, -0.0,
                         np.inf, -np.inf, np.nan]])
    got = ExecutionEngine(parse_module(HALF.format(n=d.size))).invoke("f", d)
    with np.errstate(over="ignore"):
        want = d.astype(np.float16)
    assert got.dtype == np.float16 and np.isnan(got[-1])
    np.testing.assert_array_equal(got[:-1].view(np.uint16), want[:-1].view(np.uint16))
