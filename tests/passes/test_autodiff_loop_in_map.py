"""Autodiff of scf.for loops over scalars inside a map body (a sequential
recurrence per element): the backward map runs each loop backwards, rerunning
the forward loop up to the iteration it reverses. Against float64 finite
differences (interpreter; the engine does not lower such loops yet)."""

import numpy as np
import pytest

from support.autodiff_checks import check_gradient

RNG = np.random.default_rng(31)

LOOP_IN_MAP = """func.func @f(%x: tensor<3x5xf64>, %w: tensor<3xf64>, %c: f64) -> tensor<3xf64> {
  %e = tensor.empty() : tensor<3xf64>
  %m = df.map (%i) in (3) outs(%o = %e : tensor<3xf64>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant TRIPS : index
    %z = arith.constant 1.0 : f64
    %s = df.read %w[%i] : tensor<3xf64>
    %r, %j = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %z, %jj = %c0) -> (f64, index) {
      %v = df.read %x[%i, %jj] : tensor<3x5xf64>
      %p = df.tasklet (%acc, %v, %s, %c) : (f64, f64, f64, f64) -> f64 {
      ^bb0(%a: f64, %b: f64, %q: f64, %d: f64):
        %u = arith.mulf %a, %b : f64
        %y = math.sin %u : f64
        %t = arith.mulf %y, %q : f64
        %r2 = arith.addf %t, %d : f64
        df.yield %r2 : f64
      }
      %j1 = arith.addi %jj, %c1 : index
      scf.yield %p, %j1 : f64, index
    }
    %out = df.tasklet (%r, %s) : (f64, f64) -> f64 {
    ^bb0(%a: f64, %q: f64):
      %y = arith.mulf %a, %q : f64
      df.yield %y : f64
    }
    df.write %out, %o[%i] : tensor<3xf64>
  } -> tensor<3xf64>
  func.return %m : tensor<3xf64>
}"""


@pytest.mark.parametrize("trips", [0, 1, 5])
def test_scalar_recurrence_inside_a_map(trips):
    """acc <- sin(acc * x[i, j]) * w[i] + c for j < trips, times w[i]: gradients for x,
    w (read before the loop and used in it) and the scalar c (from outside the map)."""
    text = LOOP_IN_MAP.replace("TRIPS", str(trips))
    args = [RNG.standard_normal((3, 5)), RNG.standard_normal(3), 0.3]
    check_gradient(text, "f", args, [0, 1, 2], pipeline="autodiff{wrt=0,1,2}")


NESTED_LOOPS_IN_MAP = """func.func @f(%x: tensor<2x3xf64>) -> tensor<2xf64> {
  %e = tensor.empty() : tensor<2xf64>
  %m = df.map (%i) in (2) outs(%o = %e : tensor<2xf64>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %z = arith.constant 0.5 : f64
    %r = scf.for %k = %c0 to %c2 step %c1 iter_args(%acc = %z) -> (f64) {
      %q = scf.for %l = %c0 to %c3 step %c1 iter_args(%a2 = %acc) -> (f64) {
        %v = df.read %x[%i, %l] : tensor<2x3xf64>
        %p = df.tasklet (%a2, %v) : (f64, f64) -> f64 {
        ^bb0(%a: f64, %b: f64):
          %u = arith.mulf %a, %b : f64
          %y = math.tanh %u : f64
          %t = arith.addf %y, %b : f64
          df.yield %t : f64
        }
        scf.yield %p : f64
      }
      scf.yield %q : f64
    }
    df.write %r, %o[%i] : tensor<2xf64>
  } -> tensor<2xf64>
  func.return %m : tensor<2xf64>
}"""


def test_nested_scalar_loops_inside_a_map():
    check_gradient(NESTED_LOOPS_IN_MAP, "f", [RNG.standard_normal((2, 3))], [0])


START_USED_IN_BODY = """func.func @f(%x: tensor<3xf64>) -> tensor<3xf64> {
  %e = tensor.empty() : tensor<3xf64>
  %m = df.map (%i) in (3) outs(%o = %e : tensor<3xf64>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 3 : index
    %s = df.read %x[%i] : tensor<3xf64>
    %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %s) -> (f64) {
      %p = df.tasklet (%acc, %s) : (f64, f64) -> f64 {
      ^bb0(%a: f64, %q: f64):
        %u = arith.mulf %a, %q : f64
        %y = math.sin %u : f64
        df.yield %y : f64
      }
      scf.yield %p : f64
    }
    df.write %r, %o[%i] : tensor<3xf64>
  } -> tensor<3xf64>
  func.return %m : tensor<3xf64>
}"""


def test_scalar_loop_reading_the_value_its_iter_arg_starts_from():
    """acc <- sin(acc * s) from acc = s: s's gradient has both parts (the body's was dropped, issue 12)."""
    check_gradient(START_USED_IN_BODY, "f", [RNG.standard_normal(3)], [0])
