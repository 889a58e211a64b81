"""Edge cases of autodiff: a scalar returned by a call and used inside a map
(its adjoint summed over the iterations), wcr(max) with a value from outside
the map, a map with no iterations, a loop carrying a float scalar, a tasklet with a boolean result, several
results of which some are not differentiable."""

import numpy as np
import pytest

from support.autodiff_checks import check_gradient

RNG = np.random.default_rng(29)

SCALAR_CALL = """func.func @g(%x: tensor<4xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %a = tensor.extract %x[%c0] : tensor<4xf64>
  %b = df.tasklet (%a) : (f64) -> f64 {
  ^bb0(%p: f64):
    %q = math.sin %p : f64
    df.yield %q : f64
  }
  func.return %b : f64
}
func.func @f(%x: tensor<4xf64>) -> tensor<4xf64> {
  %s = func.call @g(%x) : (tensor<4xf64>) -> f64
  %e = tensor.empty() : tensor<4xf64>
  %m = df.map (%i) in (4) outs(%o = %e : tensor<4xf64>) {
    %v = df.read %x[%i] : tensor<4xf64>
    %r = df.tasklet (%v, %s) : (f64, f64) -> f64 {
    ^bb0(%p: f64, %q: f64):
      %t = arith.mulf %p, %q : f64
      df.yield %t : f64
    }
    df.write %r, %o[%i] : tensor<4xf64>
  } -> tensor<4xf64>
  func.return %m : tensor<4xf64>
}"""

OUTSIDE_VALUE = """func.func @f(%x: tensor<4xf64>) -> tensor<f64> {
  %init = arith.constant dense<0.5> : tensor<f64>
  %c = arith.constant 0.25 : f64
  %m = df.map (%i) in (4) outs(%o = %init : tensor<f64>) {
    %v = df.read %x[%i] : tensor<4xf64>
    df.write %v, %o[] wcr(max) : tensor<f64>
    df.write %c, %o[] wcr(max) : tensor<f64>
  } -> tensor<f64>
  func.return %m : tensor<f64>
}"""

ZERO_MAP = """func.func @f(%x: tensor<4xf64>) -> tensor<4xf64> {
  %m = df.map (%i) in (0) outs(%o = %x : tensor<4xf64>) {
    %v = df.read %x[%i] : tensor<4xf64>
    df.write %v, %o[%i] : tensor<4xf64>
  } -> tensor<4xf64>
  func.return %m : tensor<4xf64>
}"""

FLOAT_CARRIED = """func.func @f(%x: tensor<3xf64>) -> tensor<3xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %s0 = arith.constant 0.5 : f64
  %r, %s = scf.for %t = %c0 to %c3 step %c1 iter_args(%h = %x, %a = %s0) -> (tensor<3xf64>, f64) {
    %e = tensor.empty() : tensor<3xf64>
    %m = df.map (%i) in (3) outs(%o = %e : tensor<3xf64>) {
      %v = df.read %h[%i] : tensor<3xf64>
      %y = df.tasklet (%v, %a) : (f64, f64) -> f64 {
      ^bb0(%p: f64, %q: f64):
        %u = arith.mulf %p, %q : f64
        %z = math.sin %u : f64
        df.yield %z : f64
      }
      df.write %y, %o[%i] : tensor<3xf64>
    } -> tensor<3xf64>
    %a1 = df.tasklet (%a) : (f64) -> f64 {
    ^bb0(%q: f64):
      %two = arith.constant 2.0 : f64
      %d = arith.mulf %q, %two : f64
      df.yield %d : f64
    }
    scf.yield %m, %a1 : tensor<3xf64>, f64
  }
  func.return %r : tensor<3xf64>
}"""

MIXED_TASKLET = """func.func @f(%x: tensor<4xf64>) -> tensor<4xf64> {
  %e = tensor.empty() : tensor<4xf64>
  %e2 = tensor.empty() : tensor<4xi1>
  %m, %k = df.map (%i) in (4) outs(%o = %e : tensor<4xf64>, %p = %e2 : tensor<4xi1>) {
    %v = df.read %x[%i] : tensor<4xf64>
    %r, %c = df.tasklet (%v) : (f64) -> (f64, i1) {
    ^bb0(%a: f64):
      %z = arith.constant 0.0 : f64
      %t = math.exp %a : f64
      %b = arith.cmpf ogt, %a, %z : f64
      df.yield %t, %b : f64, i1
    }
    df.write %r, %o[%i] : tensor<4xf64>
    df.write %c, %p[%i] : tensor<4xi1>
  } -> tensor<4xf64>, tensor<4xi1>
  func.return %m : tensor<4xf64>
}"""

CALL_WITH_A_CONSTANT = """func.func @inner(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<3xf64> {
  %p = nn.mul %x, %w : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %t = nn.tanh %p : (tensor<3xf64>) -> tensor<3xf64>
  func.return %t : tensor<3xf64>
}
func.func @outer(%x: tensor<3xf64>) -> tensor<3xf64> {
  %c = arith.constant dense<0.5> : tensor<3xf64>
  %a = func.call @inner(%x, %c) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  func.return %a : tensor<3xf64>
}"""

RESULTS = """func.func @f(%x: tensor<4xf64>, %k: tensor<4xi32>) -> (tensor<4xf64>, tensor<4xf64>, tensor<4xi32>, tensor<2xf64>, f32) {
  %c = arith.constant dense<1.0> : tensor<2xf64>
  %s = arith.constant 1.5 : f32
  %e = nn.exp %x : (tensor<4xf64>) -> tensor<4xf64>
  func.return %e, %e, %k, %c, %s : tensor<4xf64>, tensor<4xf64>, tensor<4xi32>, tensor<2xf64>, f32
}"""


def test_scalar_from_a_call_used_in_a_map():
    check_gradient(SCALAR_CALL, "f", [RNG.standard_normal(4)], [0])


@pytest.mark.parametrize("x", [[0.1, 0.2, 0.3, 0.25], [0.1, 0.2, 0.1, 0.2], [-1.0, 0.7, 2.0, 0.1]])
def test_wcr_max_with_a_constant_from_outside(x):
    """max(0.5, x..., 0.25): the constant never takes the gradient away from x, nor the init."""
    check_gradient(OUTSIDE_VALUE, "f", [np.array(x)], [0])


def test_map_without_iterations_passes_its_init_through():
    check_gradient(ZERO_MAP, "f", [RNG.standard_normal(4)], [0])


@pytest.mark.parametrize("output", [0, 1])
def test_one_of_several_results(output):
    args = [RNG.standard_normal(4), np.arange(4, dtype=np.int32)]
    check_gradient(RESULTS, "f", args, [0], pipeline=f"autodiff{{outputs={output}}}", output=output)


def test_loop_carrying_a_float_scalar_that_is_not_differentiated():
    """The scale %a (0.5, 1, 2) is recomputed for the backward iteration that needs it."""
    check_gradient(FLOAT_CARRIED, "f", [RNG.standard_normal(3)], [0])


def test_tasklet_with_a_float_and_a_boolean_result():
    check_gradient(MIXED_TASKLET, "f", [RNG.standard_normal(4)], [0])


def test_callee_gradient_shared_by_the_call_and_the_pass():
    """@outer calls @inner with a constant: the call's @inner_grad is the one the pass
    makes for @inner itself (one function, no clash)."""
    from dfc.compiler import PassManager, parse_module

    module = parse_module(CALL_WITH_A_CONSTANT)
    PassManager.parse("autodiff").run(module)
    assert [op.sym_name.data for op in module.ops] == ["inner", "inner_grad", "outer", "outer_grad"]
    check_gradient(CALL_WITH_A_CONSTANT, "outer", [RNG.standard_normal(3)], [0])
