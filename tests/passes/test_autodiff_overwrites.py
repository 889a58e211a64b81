"""Two plain writes of one map iteration to the same element (issue 12, item 3):
the last write in program order wins, in the interpreter and the engine, and
only it receives the adjoint."""

import numpy as np
import pytest

from support.autodiff_checks import check_gradient
from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.interpreter import interpret

RNG = np.random.default_rng(23)

# NumPy's `for i: c[i, i:i+4] = v[i]; c[i:i+4, i] = 2 * w[i]`: both writes hit c[i, i] at j = 0.
SYMMETRIC = """func.func @f(%v: tensor<4x4xf64>, %w: tensor<4x4xf64>, %c0: tensor<8x8xf64>) -> tensor<8x8xf64> {
  %c = df.map (%i, %j) in (4, 4) outs(%o = %c0 : tensor<8x8xf64>) {
    %k = arith.addi %i, %j : index
    %a = df.read %v[%i, %j] : tensor<4x4xf64>
    %b = df.read %w[%i, %j] : tensor<4x4xf64>
    %sa = df.tasklet (%a) : (f64) -> f64 {
    ^bb0(%x: f64):
      %y = math.sin %x : f64
      df.yield %y : f64
    }
    %sb = df.tasklet (%b) : (f64) -> f64 {
    ^bb0(%x: f64):
      %y = arith.mulf %x, %x : f64
      df.yield %y : f64
    }
    df.write %sa, %o[%i, %k] : tensor<8x8xf64>
    df.write %sb, %o[%k, %i] : tensor<8x8xf64>
  } -> tensor<8x8xf64>
  func.return %c : tensor<8x8xf64>
}"""

# The same value written twice (`c[i:, i] = c[i, i:] = v`): the diagonal counts once.
SAME_VALUE = """func.func @f(%v: tensor<4x4xf64>) -> tensor<8x8xf64> {
  %z = arith.constant dense<0.0> : tensor<8x8xf64>
  %c = df.map (%i, %j) in (4, 4) outs(%o = %z : tensor<8x8xf64>) {
    %k = arith.addi %i, %j : index
    %a = df.read %v[%i, %j] : tensor<4x4xf64>
    %s = df.tasklet (%a) : (f64) -> f64 {
    ^bb0(%x: f64):
      %y = math.exp %x : f64
      df.yield %y : f64
    }
    df.write %s, %o[%k, %i] : tensor<8x8xf64>
    df.write %s, %o[%i, %k] : tensor<8x8xf64>
  } -> tensor<8x8xf64>
  func.return %c : tensor<8x8xf64>
}"""

# Provably the same element twice: only the second write's value has a gradient.
IDENTICAL = """func.func @f(%v: tensor<4xf64>, %w: tensor<4xf64>) -> tensor<4xf64> {
  %e = tensor.empty() : tensor<4xf64>
  %c = df.map (%i) in (4) outs(%o = %e : tensor<4xf64>) {
    %a = df.read %v[%i] : tensor<4xf64>
    %b = df.read %w[%i] : tensor<4xf64>
    df.write %a, %o[%i] : tensor<4xf64>
    df.write %b, %o[%i] : tensor<4xf64>
  } -> tensor<4xf64>
  func.return %c : tensor<4xf64>
}"""


# Provably distinct (o[2i], o[2i+1]) and provably the same element (o[i+1] computed twice).
PROVEN = """func.func @f(%v: tensor<4xf64>, %w: tensor<4xf64>) -> (tensor<8xf64>, tensor<5xf64>) {
  %e = tensor.empty() : tensor<8xf64>
  %z = arith.constant dense<0.5> : tensor<5xf64>
  %c, %d = df.map (%i) in (4) outs(%o = %e : tensor<8xf64>, %p = %z : tensor<5xf64>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %i2 = arith.muli %i, %c2 : index
    %i21 = arith.addi %i2, %c1 : index
    %a = df.read %v[%i] : tensor<4xf64>
    %b = df.read %w[%i] : tensor<4xf64>
    df.write %a, %o[%i2] : tensor<8xf64>
    df.write %b, %o[%i21] : tensor<8xf64>
    %j = arith.addi %i, %c1 : index
    %k = arith.addi %c1, %i : index
    df.write %a, %p[%j] : tensor<5xf64>
    df.write %b, %p[%k] : tensor<5xf64>
  } -> tensor<8xf64>, tensor<5xf64>
  func.return %c, %d : tensor<8xf64>, tensor<5xf64>
}"""


@pytest.mark.parametrize("output", [0, 1])
def test_writes_proven_distinct_or_the_same(output):
    args = [RNG.standard_normal(4), RNG.standard_normal(4)]
    check_gradient(PROVEN, "f", args, [0, 1], pipeline=f"autodiff{{outputs={output}}}", output=output)
    module = parse_module(PROVEN)
    PassManager.parse(f"autodiff{{outputs={output}}}").run(module)
    assert "arith.cmpi" not in str(module), "the index analysis decides both cases: no run-time check"


def test_last_write_wins_in_the_interpreter_and_the_engine():
    v, w, c0 = RNG.standard_normal((4, 4)), RNG.standard_normal((4, 4)), RNG.standard_normal((8, 8))
    expected = c0.copy()
    for i in range(4):
        for j in range(4):
            expected[i, i + j] = np.sin(v[i, j])
            expected[i + j, i] = w[i, j] ** 2
    np.testing.assert_array_equal(interpret(parse_module(SYMMETRIC), "f", v, w, c0), expected)
    np.testing.assert_allclose(ExecutionEngine(parse_module(SYMMETRIC)).invoke("f", v, w, c0), expected, rtol=1e-15)


@pytest.mark.parametrize("text,shapes", [(SYMMETRIC, [(4, 4), (4, 4), (8, 8)]), (SAME_VALUE, [(4, 4)]),
                                         (IDENTICAL, [(4,), (4,)])], ids=["symmetric", "same-value", "identical"])
def test_only_the_last_write_receives_the_adjoint(text, shapes):
    args = [RNG.standard_normal(s) for s in shapes]
    check_gradient(text, "f", args, list(range(len(args))))


def test_diagonal_gradient_counts_once():
    v = RNG.standard_normal((4, 4))
    module = parse_module(SAME_VALUE)
    PassManager.parse("autodiff").run(module)
    _, g = interpret(module, "f_grad", v, np.ones((8, 8)))
    expected = 2 * np.exp(v)  # each v[i, j] lands in the result twice ...
    expected[:, 0] = np.exp(v[:, 0])  # ... but once on the diagonal (j = 0)
    np.testing.assert_allclose(g, expected, rtol=1e-15)


# A nested map writes row i, then the outer body overwrites its first element.
NESTED_THEN_OUTER = """func.func @f(%v: tensor<3x4xf64>, %w: tensor<3xf64>) -> tensor<3x4xf64> {
  %e = tensor.empty() : tensor<3x4xf64>
  %c = df.map (%i) in (3) outs(%o = %e : tensor<3x4xf64>) {
    %c0 = arith.constant 0 : index
    df.map (%j) in (4) {
      %a = df.read %v[%i, %j] : tensor<3x4xf64>
      %s = df.tasklet (%a) : (f64) -> f64 {
      ^bb0(%x: f64):
        %y = math.sin %x : f64
        df.yield %y : f64
      }
      df.write %s, %o[%i, %j] : tensor<3x4xf64>
    }
    %b = df.read %w[%i] : tensor<3xf64>
    df.write %b, %o[%i, %c0] : tensor<3x4xf64>
  } -> tensor<3x4xf64>
  func.return %c : tensor<3x4xf64>
}"""


def test_nested_write_overwritten_by_a_later_outer_write():
    v, w = RNG.standard_normal((3, 4)), RNG.standard_normal(3)
    expected = np.sin(v)
    expected[:, 0] = w
    np.testing.assert_array_equal(interpret(parse_module(NESTED_THEN_OUTER), "f", v, w), expected)
    check_gradient(NESTED_THEN_OUTER, "f", [v, w], [0, 1])
