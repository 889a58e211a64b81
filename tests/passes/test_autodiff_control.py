"""Autodiff through control flow combined: branches and calls inside loops,
loops inside branches, dynamic and zero trip counts, swapped and index
iter_args, maps capturing loop values, three nested loops; gradients against
float64 finite differences (interpreter and engine), taped and recomputed."""

import numpy as np
import pytest

from support.autodiff_checks import check_gradient

RNG = np.random.default_rng(17)

HEAD = """func.func @f(%x: tensor<3xf64>, %w: tensor<3xf64>, %flag: i1, %n: index) -> tensor<3xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
"""
INNER = """func.func @g(%a: tensor<3xf64>, %b: tensor<3xf64>) -> tensor<3xf64> {
  %p = nn.mul %a, %b : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %t = nn.tanh %p : (tensor<3xf64>) -> tensor<3xf64>
  func.return %t : tensor<3xf64>
}
"""
CASES = {
"if_in_loop": """  %r = scf.for %t = %c0 to %c3 step %c1 iter_args(%h = %x) -> (tensor<3xf64>) {
    %y = scf.if %flag -> (tensor<3xf64>) {
      %e = nn.tanh %h : (tensor<3xf64>) -> tensor<3xf64>
      scf.yield %e : tensor<3xf64>
    } else {
      %m = nn.mul %h, %w : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
      %s = nn.sigmoid %m : (tensor<3xf64>) -> tensor<3xf64>
      scf.yield %s : tensor<3xf64>
    }
    scf.yield %y : tensor<3xf64>
  }
""",
"call_in_loop": """  %r = scf.for %t = %c0 to %c3 step %c1 iter_args(%h = %x) -> (tensor<3xf64>) {
    %y = func.call @g(%h, %w) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    scf.yield %y : tensor<3xf64>
  }
""",
"loop_in_if": """  %r = scf.if %flag -> (tensor<3xf64>) {
    %l = scf.for %t = %c0 to %c3 step %c1 iter_args(%h = %x) -> (tensor<3xf64>) {
      %m = nn.mul %h, %w : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
      %y = nn.tanh %m : (tensor<3xf64>) -> tensor<3xf64>
      scf.yield %y : tensor<3xf64>
    }
    scf.yield %l : tensor<3xf64>
  } else {
    %e = nn.exp %x : (tensor<3xf64>) -> tensor<3xf64>
    scf.yield %e : tensor<3xf64>
  }
""",
"dynamic_trips": """  %r = scf.for %t = %c1 to %n step %c2 iter_args(%h = %x) -> (tensor<3xf64>) {
    %m = nn.mul %h, %w : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    %y = nn.tanh %m : (tensor<3xf64>) -> tensor<3xf64>
    scf.yield %y : tensor<3xf64>
  }
""",
"two_carried_swapped": """  %r, %q = scf.for %t = %c0 to %c3 step %c1 iter_args(%h = %x, %k = %w) -> (tensor<3xf64>, tensor<3xf64>) {
    %m = nn.mul %h, %k : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    %y = nn.tanh %m : (tensor<3xf64>) -> tensor<3xf64>
    scf.yield %k, %y : tensor<3xf64>, tensor<3xf64>
  }
""",
"passthrough_and_index": """  %r, %q, %i = scf.for %t = %c0 to %c3 step %c1 iter_args(%h = %x, %k = %w, %j = %c0) -> (tensor<3xf64>, tensor<3xf64>, index) {
    %m = nn.mul %h, %k : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    %y = nn.tanh %m : (tensor<3xf64>) -> tensor<3xf64>
    %j1 = arith.addi %j, %c1 : index
    scf.yield %y, %k, %j1 : tensor<3xf64>, tensor<3xf64>, index
  }
""",
"counter_used": """  %r, %i = scf.for %t = %c0 to %c3 step %c1 iter_args(%h = %x, %j = %c2) -> (tensor<3xf64>, index) {
    %e = tensor.empty() : tensor<3xf64>
    %m = df.map (%l) in (3) outs(%o = %e : tensor<3xf64>) {
      %a = df.read %h[%l] : tensor<3xf64>
      %b = df.read %w[%j] : tensor<3xf64>
      %v = df.tasklet (%a, %b) : (f64, f64) -> f64 {
      ^bb0(%p: f64, %q: f64):
        %s = arith.mulf %p, %q : f64
        %u = math.tanh %s : f64
        df.yield %u : f64
      }
      df.write %v, %o[%l] : tensor<3xf64>
    } -> tensor<3xf64>
    %j1 = arith.subi %j, %c1 : index
    scf.yield %m, %j1 : tensor<3xf64>, index
  }
""",
"zero_trips": """  %r = scf.for %t = %c3 to %c0 step %c1 iter_args(%h = %x) -> (tensor<3xf64>) {
    %y = nn.tanh %h : (tensor<3xf64>) -> tensor<3xf64>
    scf.yield %y : tensor<3xf64>
  }
""",
"map_in_loop_captures": """  %r = scf.for %t = %c0 to %c3 step %c1 iter_args(%h = %x) -> (tensor<3xf64>) {
    %e = tensor.empty() : tensor<3xf64>
    %m = df.map (%i) in (3) outs(%o = %e : tensor<3xf64>) {
      %a = df.read %h[%i] : tensor<3xf64>
      %b = df.read %w[%t] : tensor<3xf64>
      %v = df.tasklet (%a, %b) : (f64, f64) -> f64 {
      ^bb0(%p: f64, %q: f64):
        %s = arith.mulf %p, %q : f64
        %u = math.sin %s : f64
        df.yield %u : f64
      }
      df.write %v, %o[%i] : tensor<3xf64>
    } -> tensor<3xf64>
    scf.yield %m : tensor<3xf64>
  }
""",
"triple_nested": """  %r = scf.for %t = %c0 to %c2 step %c1 iter_args(%h = %x) -> (tensor<3xf64>) {
    %s = scf.for %u = %c0 to %c2 step %c1 iter_args(%g = %h) -> (tensor<3xf64>) {
      %v = scf.for %z = %c0 to %c2 step %c1 iter_args(%k = %g) -> (tensor<3xf64>) {
        %m = nn.mul %k, %w : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
        %y = nn.tanh %m : (tensor<3xf64>) -> tensor<3xf64>
        scf.yield %y : tensor<3xf64>
      }
      %e = nn.exp %v : (tensor<3xf64>) -> tensor<3xf64>
      %d = nn.div %v, %e : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
      scf.yield %d : tensor<3xf64>
    }
    scf.yield %s : tensor<3xf64>
  }
""",
}


def _program(name: str) -> str:
    return INNER + HEAD + CASES[name] + "  func.return %r : tensor<3xf64>\n}\n"


@pytest.mark.parametrize("flag", [True, False])
@pytest.mark.parametrize("mode", ["autodiff{func=f}", "autodiff{func=f recompute=true}"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_control_flow_gradients(name, mode, flag):
    x, w = RNG.standard_normal(3), RNG.standard_normal(3)
    check_gradient(_program(name), "f", [x, w, np.bool_(flag), 6], [0, 1], pipeline=mode)
