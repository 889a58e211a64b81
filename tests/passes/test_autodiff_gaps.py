"""Autodiff on forms it once refused (issue 12): float arith directly in a map
body or at function level (not in a tasklet), and wcr(mul) reductions.
Gradients against float64 central differences, interpreter and engine."""

import numpy as np
import pytest

from support.autodiff_checks import check_gradient

RNG = np.random.default_rng(12)

ARITH_IN_MAP = """func.func @f(%x: tensor<4xf64>, %w: tensor<4xf64>, %c: f64) -> tensor<4xf64> {
  %e = tensor.empty() : tensor<4xf64>
  %m = df.map (%i) in (4) outs(%o = %e : tensor<4xf64>) {
    %a = df.read %x[%i] : tensor<4xf64>
    %b = df.read %w[%i] : tensor<4xf64>
    %p = arith.mulf %a, %b : f64
    %s = math.sin %p : f64
    %z = arith.constant 0.0 : f64
    %gt = arith.cmpf ogt, %s, %z : f64
    %q = arith.select %gt, %s, %a : f64
    %r = arith.addf %q, %c : f64
    df.write %r, %o[%i] : tensor<4xf64>
  } -> tensor<4xf64>
  func.return %m : tensor<4xf64>
}"""

ARITH_AT_FUNCTION_LEVEL = """func.func @f(%x: tensor<3xf64>, %c: f64) -> f64 {
  %k = arith.mulf %c, %c : f64
  %t = math.exp %k : f64
  %e = tensor.empty() : tensor<3xf64>
  %m = df.map (%i) in (3) outs(%o = %e : tensor<3xf64>) {
    %a = df.read %x[%i] : tensor<3xf64>
    %p = arith.mulf %a, %t : f64
    df.write %p, %o[%i] : tensor<3xf64>
  } -> tensor<3xf64>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %y0 = tensor.extract %m[%c0] : tensor<3xf64>
  %y2 = tensor.extract %m[%c2] : tensor<3xf64>
  %y = arith.divf %y0, %y2 : f64
  func.return %y : f64
}"""


def test_float_arith_directly_in_a_map_body():
    args = [RNG.standard_normal(4), RNG.standard_normal(4), 0.3]
    check_gradient(ARITH_IN_MAP, "f", args, [0, 1, 2], pipeline="autodiff{wrt=0,1,2}")


def test_float_arith_at_function_level():
    args = [RNG.standard_normal(3), 0.4]
    check_gradient(ARITH_AT_FUNCTION_LEVEL, "f", args, [0, 1], pipeline="autodiff{wrt=0,1}")


FAN_OUT_DYNAMIC = """func.func @f(%x: tensor<?xf64>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf64>
  %e = tensor.empty(%n) : tensor<?xf64>
  %t = df.map (%i) in (%n) outs(%o = %e : tensor<?xf64>) {
    %a = df.read %x[%i] : tensor<?xf64>
    %r = df.tasklet (%a) : (f64) -> f64 {
    ^bb0(%u: f64):
      %y = math.tanh %u : f64
      df.yield %y : f64
    }
    df.write %r, %o[%i] : tensor<?xf64>
  } -> tensor<?xf64>
  %e2 = tensor.empty(%n) : tensor<?xf64>
  %m = df.map (%i) in (%n) outs(%o = %e2 : tensor<?xf64>) {
    %a = df.read %x[%i] : tensor<?xf64>
    %b = df.read %t[%i] : tensor<?xf64>
    %r = df.tasklet (%a, %b) : (f64, f64) -> f64 {
    ^bb0(%u: f64, %v: f64):
      %y = arith.mulf %u, %v : f64
      df.yield %y : f64
    }
    df.write %r, %o[%i] : tensor<?xf64>
  } -> tensor<?xf64>
  func.return %m : tensor<?xf64>
}"""


def test_fan_out_of_a_dynamic_shape_tensor():
    """x used twice: its two adjoints are summed by a map over the dynamic shape
    (nn.add needs static shapes; the pass failed verification, issue 12)."""
    check_gradient(FAN_OUT_DYNAMIC, "f", [RNG.standard_normal(5)], [0])


NESTED_SHIFTED_OVERWRITE = """func.func @f(%x: tensor<4x3xf64>) -> tensor<4x3xf64> {
  %m = df.map (%i) in (3) outs(%o = %x : tensor<4x3xf64>) {
    df.map (%j) in (3) {
      %one = arith.constant 1 : index
      %k = arith.addi %i, %one : index
      %a = df.read %x[%i, %j] : tensor<4x3xf64>
      %r = df.tasklet (%a) : (f64) -> f64 {
      ^bb0(%u: f64):
        %y = math.tanh %u : f64
        df.yield %y : f64
      }
      df.write %r, %o[%k, %j] : tensor<4x3xf64>
    }
  } -> tensor<4x3xf64>
  func.return %m : tensor<4x3xf64>
}"""


def test_nested_map_overwriting_its_initial_value_at_computed_indices():
    """The initial value's gradient is masked where the nested map writes; the
    mask recomputes the nested map's index arithmetic (it referred to the
    forward's, which does not dominate: the IR did not verify, issue 12)."""
    check_gradient(NESTED_SHIFTED_OVERWRITE, "f", [RNG.standard_normal((4, 3))], [0])


def _wcr_mul(init: str) -> str:
    return f"""func.func @f(%x: tensor<3x4xf64>, %s: tensor<3xf64>) -> tensor<3xf64> {{
  %m = df.map (%i, %j) in (3, 4) outs(%o = {init} : tensor<3xf64>) {{
    %a = df.read %x[%i, %j] : tensor<3x4xf64>
    %r = df.tasklet (%a) : (f64) -> f64 {{
    ^bb0(%u: f64):
      %y = math.sin %u : f64
      df.yield %y : f64
    }}
    df.write %r, %o[%i] wcr(mul) : tensor<3xf64>
  }} -> tensor<3xf64>
  func.return %m : tensor<3xf64>
}}"""


@pytest.mark.parametrize("zeros", [0, 1, 2])
def test_wcr_mul(zeros):
    """Row products of sin(x) times s (the initial value); `zeros` factors of
    row 0 are exactly 0 (sin(0)): with one, only it gets a gradient; with two, none."""
    x, s = RNG.standard_normal((3, 4)), RNG.standard_normal(3)
    x[0, :zeros] = 0.0
    check_gradient(_wcr_mul("%s"), "f", [x, s], [0, 1])
