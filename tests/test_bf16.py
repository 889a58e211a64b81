"""bf16: storage in 16 bits, each operation computed in f32 and rounded (as
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
