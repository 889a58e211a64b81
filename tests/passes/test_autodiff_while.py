"""Reverse mode through data-dependent `scf.while` loops (issue 37, item 4):
the loop counts its trips, an `scf.for` replays them (`passes/autodiff/whiles.py`)
and is reversed with a tape of a dynamic number of rows, or by recomputation.
Each gradient is checked against float64 central differences, through the
interpreter and the engine; the data keep the trip count away from a change
under the differences' perturbation."""

import numpy as np
import pytest
from support.autodiff_checks import check_gradient

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.interpreter import interpret

RNG = np.random.default_rng(37)
MODES = ["autodiff", "autodiff{recompute=true}"]

NEWTON = """func.func @f(%a: tensor<f64>, %tol: tensor<f64>) -> tensor<f64> {
  %r = scf.while (%x = %a) : (tensor<f64>) -> tensor<f64> {
    %sq = nn.mul %x, %x : (tensor<f64>, tensor<f64>) -> tensor<f64>
    %d = nn.sub %sq, %a : (tensor<f64>, tensor<f64>) -> tensor<f64>
    %e = nn.abs %d : (tensor<f64>) -> tensor<f64>
    %c = nn.compare %e, %tol {direction = "GT"} : (tensor<f64>, tensor<f64>) -> tensor<i1>
    %cc = tensor.extract %c[] : tensor<i1>
    scf.condition(%cc) %x : tensor<f64>
  } do {
  ^bb0(%x2: tensor<f64>):
    %q = nn.div %a, %x2 : (tensor<f64>, tensor<f64>) -> tensor<f64>
    %s = nn.add %x2, %q : (tensor<f64>, tensor<f64>) -> tensor<f64>
    %h = nn.full {value = 0.5 : f64} : tensor<f64>
    %y = nn.mul %h, %s : (tensor<f64>, tensor<f64>) -> tensor<f64>
    scf.yield %y : tensor<f64>
  }
  func.return %r : tensor<f64>
}"""


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("a, tol, want", [(3.0, 1e-12, 0.5 / np.sqrt(3.0)), (0.25, 1e-12, 1.0), (1.1, 0.5, 1.0)])
def test_newton_sqrt_convergence_loop(a, tol, want, mode):
    """while |x^2 - a| > tol: x = (x + a/x) / 2 from x = a; d sqrt(a) / da =
    1 / (2 sqrt(a)). With tol = 0.5 and a = 1.1 the loop makes no trip: x = a."""
    args = [np.array(a), np.array(tol)]
    check_gradient(NEWTON, "f", args, [0], pipeline=mode.replace("autodiff", "autodiff{wrt=0}").replace("}{", " "))
    module = parse_module(NEWTON)
    PassManager.parse("autodiff{wrt=0},expand-library").run(module)
    _, g = interpret(module, "f_grad", *args, np.array(1.0))
    np.testing.assert_allclose(g, want, rtol=1e-10)


# while sum(h) < limit: h = h * w + x  (the trip count depends on x, w and the limit)
GROWTH = """func.func @f(%x: tensor<4xf64>, %w: tensor<4xf64>, %limit: tensor<f64>) -> tensor<4xf64> {
  %r:2 = scf.while (%h = %x, %p = %w) : (tensor<4xf64>, tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>) {
    %s = nn.reduce %h {kind = "sum", axes = array<i64: 0>} : (tensor<4xf64>) -> tensor<f64>
    %c = nn.compare %s, %limit {direction = "LT"} : (tensor<f64>, tensor<f64>) -> tensor<i1>
    %cc = tensor.extract %c[] : tensor<i1>
    scf.condition(%cc) %h, %p : tensor<4xf64>, tensor<4xf64>
  } do {
  ^bb0(%h2: tensor<4xf64>, %p2: tensor<4xf64>):
    %m = nn.mul %h2, %w : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
    %y = nn.add %m, %x : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
    %q = nn.mul %p2, %h2 : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
    scf.yield %y, %q : tensor<4xf64>, tensor<4xf64>
  }
  %z = nn.add %r#0, %r#1 : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  func.return %z : tensor<4xf64>
}"""


@pytest.mark.parametrize("mode", MODES)
def test_trip_count_depends_on_the_data_sums_and_products(mode):
    x, w = np.array([0.3, 0.5, 0.2, 0.4]), np.array([1.1, 1.3, 0.9, 1.2])
    for limit, trips in ((20.0, None), (2.0, None), (1.0, 0)):
        module = parse_module(GROWTH)
        check_gradient(GROWTH, "f", [x, w, np.array(limit)], [0, 1, 2], pipeline=mode)  # d/d limit = 0
        if trips == 0:  # sum(x) = 1.4 >= 1: no trip, the result is x + w
            np.testing.assert_allclose(interpret(module, "f", x, w, np.array(limit)), x + w)


# the before region computes t = tanh(h) for the condition and for the body
BEFORE_FEEDS_AFTER = """func.func @f(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<3xf64> {
  %r = scf.while (%h = %x) : (tensor<3xf64>) -> tensor<3xf64> {
    %t = nn.tanh %h : (tensor<3xf64>) -> tensor<3xf64>
    %s = nn.reduce %t {kind = "sum", axes = array<i64: 0>} : (tensor<3xf64>) -> tensor<f64>
    %two = nn.full {value = 2.5 : f64} : tensor<f64>
    %c = nn.compare %s, %two {direction = "LT"} : (tensor<f64>, tensor<f64>) -> tensor<i1>
    %cc = tensor.extract %c[] : tensor<i1>
    scf.condition(%cc) %t : tensor<3xf64>
  } do {
  ^bb0(%t2: tensor<3xf64>):
    %m = nn.mul %t2, %w : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    %y = nn.add %m, %x : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    scf.yield %y : tensor<3xf64>
  }
  func.return %r : tensor<3xf64>
}"""


@pytest.mark.parametrize("mode", MODES)
def test_before_region_values_feed_the_body_and_the_results(mode):
    """The results are the before region's passed values (tanh of the state),
    and the body uses them: both are differentiated. (Interpreter only:
    `bufferize` takes no while loop whose condition passes on another tensor
    than its argument, so the engine runs neither f nor its gradient.)"""
    x, w = np.array([0.3, 0.4, 0.35]), np.array([1.5, 1.8, 1.6])  # 2 trips
    check_gradient(BEFORE_FEEDS_AFTER, "f", [x, w], [0, 1], pipeline=mode, engine=False)


# a while loop in each step of an scf.for, and a while loop in a while loop
NESTED = """func.func @f(%x: tensor<2xf64>, %w: tensor<2xf64>) -> tensor<2xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %t = %c0 to %c3 step %c1 iter_args(%h = %x) -> (tensor<2xf64>) {
    %o = scf.while (%u = %h) : (tensor<2xf64>) -> tensor<2xf64> {
      %s = nn.reduce %u {kind = "sum", axes = array<i64: 0>} : (tensor<2xf64>) -> tensor<f64>
      %lim = nn.full {value = 4.0 : f64} : tensor<f64>
      %c = nn.compare %s, %lim {direction = "LT"} : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %cc = tensor.extract %c[] : tensor<i1>
      scf.condition(%cc) %u : tensor<2xf64>
    } do {
    ^bb0(%u2: tensor<2xf64>):
      %i = scf.while (%v = %u2) : (tensor<2xf64>) -> tensor<2xf64> {
        %m = nn.reduce %v {kind = "max", axes = array<i64: 0>} : (tensor<2xf64>) -> tensor<f64>
        %lim2 = nn.full {value = 1.0 : f64} : tensor<f64>
        %c2 = nn.compare %m, %lim2 {direction = "LT"} : (tensor<f64>, tensor<f64>) -> tensor<i1>
        %cc2 = tensor.extract %c2[] : tensor<i1>
        scf.condition(%cc2) %v : tensor<2xf64>
      } do {
      ^bb0(%v2: tensor<2xf64>):
        %g = nn.mul %v2, %w : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
        %y = nn.add %g, %v2 : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
        scf.yield %y : tensor<2xf64>
      }
      %sq = nn.mul %i, %i : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
      %z = nn.add %sq, %u2 : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
      scf.yield %z : tensor<2xf64>
    }
    %k = nn.full {value = 0.1 : f64} : tensor<2xf64>
    %d = nn.mul %o, %k : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    scf.yield %d : tensor<2xf64>
  }
  func.return %r : tensor<2xf64>
}"""


@pytest.mark.parametrize("mode", MODES)
def test_while_loops_nested_in_for_and_while_loops(mode):
    x, w = np.array([0.3, 0.45]), np.array([0.5, 0.35])
    check_gradient(NESTED, "f", [x, w], [0, 1], pipeline=mode, rtol=1e-5)


def test_while_without_differentiated_results_is_left_alone():
    """A while loop on integers only (a trip counter) is not rewritten."""
    text = """func.func @f(%x: tensor<3xf64>, %n: index) -> tensor<3xf64> {
  %c0 = arith.constant 0 : index
  %k = scf.while (%i = %c0) : (index) -> index {
    %c = arith.cmpi slt, %i, %n : index
    scf.condition(%c) %i : index
  } do {
  ^bb0(%j: index):
    %c1 = arith.constant 1 : index
    %j1 = arith.addi %j, %c1 : index
    scf.yield %j1 : index
  }
  %e = tensor.empty() : tensor<3xf64>
  %y = df.map (%i) in (3) outs(%o = %e : tensor<3xf64>) {
    %v = df.read %x[%i] : tensor<3xf64>
    %kf = arith.index_cast %k : index to i64
    %f = arith.sitofp %kf : i64 to f64
    %p = df.tasklet (%v, %f) : (f64, f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %m = arith.mulf %a, %b : f64
      df.yield %m : f64
    }
    df.write %p, %o[%i] : tensor<3xf64>
  } -> tensor<3xf64>
  func.return %y : tensor<3xf64>
}"""
    module = parse_module(text)
    PassManager.parse("autodiff").run(module)
    grad = next(op for op in module.ops if op.sym_name.data == "f_grad")
    assert sum(op.name == "scf.while" for op in grad.walk()) == 1
    assert not any(op.name == "scf.for" for op in grad.walk())
    check_gradient(text, "f", [RNG.standard_normal(3), 4], [0])


def test_split_forward_and_backward_through_a_while():
    """With split=true the tape of a dynamic number of rows is a saved value:
    @f_bwd on @f_fwd's saved values gives @f_grad's gradient (interpreter, engine)."""
    args = (np.array(3.0), np.array(1e-12))
    module = parse_module(NEWTON)
    PassManager.parse("autodiff{wrt=0 split=true},autodiff{wrt=0},expand-library").run(module)
    _, *saved = interpret(module, "f_fwd", *args)
    _, want = interpret(module, "f_grad", *args, np.array(1.0))
    np.testing.assert_allclose(interpret(module, "f_bwd", *saved, np.array(1.0)), want, rtol=1e-15)
    compiled = parse_module(NEWTON)
    PassManager.parse("autodiff{wrt=0 split=true}").run(compiled)
    engine = ExecutionEngine(compiled)
    _, *saved = engine.invoke("f_fwd", *args)
    np.testing.assert_allclose(engine.invoke("f_bwd", *saved, np.array(1.0)), want, rtol=1e-15)
