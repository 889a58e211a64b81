"""`chlo.scan` (`passes.stablehlo_scan`): the spec's cumulative max with indices, and a float scan
along an inner dimension, reversed, whose value equals a NumPy loop and whose gradient equals
float64 central differences."""

from __future__ import annotations

import numpy as np
from support.stablehlo_checks import verdict

from dfc import interpret
from dfc.compiler.pass_manager import PassManager
from dfc.importers.stablehlo_import import import_stablehlo


def test_cumulative_max_with_indices_equals_the_spec():
    case = """
func.func @scan_cummax() {
  %input = stablehlo.constant dense<[3, 1, 4, 1, 5]> : tensor<5xi32>
  %iota = stablehlo.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi32>
  %val_init = stablehlo.constant dense<-2147483648> : tensor<i32>
  %idx_init = stablehlo.constant dense<0> : tensor<i32>
  %0:4 = chlo.scan(%input, %iota) inits(%val_init, %idx_init) dimension=0 {
  ^bb0(%cur_val: tensor<i32>, %cur_idx: tensor<i32>, %run_val: tensor<i32>, %run_idx: tensor<i32>):
    %new_val = stablehlo.maximum %run_val, %cur_val : tensor<i32>
    %gt = stablehlo.compare GT, %run_val, %cur_val : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %eq = stablehlo.compare EQ, %run_val, %cur_val : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %max_idx = stablehlo.maximum %run_idx, %cur_idx : tensor<i32>
    %tie_or_less = stablehlo.select %eq, %max_idx, %cur_idx : tensor<i1>, tensor<i32>
    %new_idx = stablehlo.select %gt, %run_idx, %tie_or_less : tensor<i1>, tensor<i32>
    stablehlo.return %new_val, %new_idx, %new_val, %new_idx : tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>
  } : (tensor<5xi32>, tensor<5xi32>, tensor<i32>, tensor<i32>)
      -> (tensor<5xi32>, tensor<5xi32>, tensor<i32>, tensor<i32>)
  check.expect_eq_const %0#0, dense<[3, 3, 4, 4, 5]> : tensor<5xi32>
  check.expect_eq_const %0#1, dense<[0, 0, 2, 2, 4]> : tensor<5xi32>
  check.expect_eq_const %0#2, dense<5> : tensor<i32>
  check.expect_eq_const %0#3, dense<4> : tensor<i32>
  func.return
}"""
    assert verdict(case) == "pass"


SCAN = """
func.func @f(%x: tensor<2x4xf64>, %c: tensor<2xf64>) -> tensor<f64> {
  %0:2 = chlo.scan(%x) inits(%c) dimension=1 attributes {is_reverse = true} {
  ^bb0(%xi: tensor<2xf64>, %carry: tensor<2xf64>):
    %p = stablehlo.multiply %carry, %xi : tensor<2xf64>
    %s = stablehlo.sine %p : tensor<2xf64>
    %n = stablehlo.add %s, %xi : tensor<2xf64>
    stablehlo.return %p, %n : tensor<2xf64>, tensor<2xf64>
  } : (tensor<2x4xf64>, tensor<2xf64>) -> (tensor<2x4xf64>, tensor<2xf64>)
  %w = stablehlo.constant dense<[[1.0, -2.0, 0.5, 3.0], [0.25, 1.5, -1.0, 2.0]]> : tensor<2x4xf64>
  %a = stablehlo.multiply %0#0, %w : tensor<2x4xf64>
  %z = stablehlo.constant dense<0.0> : tensor<f64>
  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0, 1]
    : (tensor<2x4xf64>, tensor<f64>) -> tensor<f64>
  %l = stablehlo.reduce(%0#1 init: %r) applies stablehlo.add across dimensions = [0]
    : (tensor<2xf64>, tensor<f64>) -> tensor<f64>
  func.return %l : tensor<f64>
}"""
W = np.array([[1.0, -2.0, 0.5, 3.0], [0.25, 1.5, -1.0, 2.0]])


def _reference(x, c):
    out = np.zeros_like(x)
    for k in reversed(range(x.shape[1])):
        out[:, k] = c * x[:, k]
        c = np.sin(out[:, k]) + x[:, k]
    return (out * W).sum() + c.sum()


def test_a_reversed_float_scan_and_its_gradient_equal_numpy_and_finite_differences():
    rng = np.random.default_rng(5)
    x, c = rng.standard_normal((2, 4)), rng.standard_normal(2)
    module = import_stablehlo(SCAN)
    np.testing.assert_allclose(interpret(module, "f", x, c), _reference(x, c), rtol=1e-13)
    PassManager.parse("autodiff{func=f}").run(module)
    _, gx, gc = interpret(module, "f_grad", x, c, np.array(1.0))
    eps = 1e-6
    for got, arg in ((gx, 0), (gc, 1)):
        want = np.zeros_like(got)
        for i in np.ndindex(got.shape):
            args = [x.copy(), c.copy()]
            args[arg][i] += eps
            up = _reference(*args)
            args[arg][i] -= 2 * eps
            want[i] = (up - _reference(*args)) / (2 * eps)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
