"""Autodiff of loops and maps that used to crash the pass (issue 12, item 4):
nested loops with tapes, one-trip loops, recompute, split, nested wcr(max|min),
dynamic-shape outputs. Each gradient is checked against float64 central
differences, through the interpreter and the engine."""

import numpy as np
import pytest

from support.autodiff_checks import check_gradient
from dfc.compiler import PassManager, parse_module
from dfc.compiler.interpreter import interpret

RNG = np.random.default_rng(11)
MODES = ["autodiff", "autodiff{recompute=true}"]


def loops(depth: int, trips: list[int]) -> str:
    """`depth` nested scf.for loops (trip counts `trips`), the innermost body h -> tanh(h * w) + h."""
    lines = ["func.func @f(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<3xf64> {",
             "  %c0 = arith.constant 0 : index", "  %c1 = arith.constant 1 : index"]
    lines += [f"  %n{d} = arith.constant {n} : index" for d, n in enumerate(trips)]
    value = "%x"
    for d in range(depth):
        lines.append(f"  %r{d} = scf.for %t{d} = %c0 to %n{d} step %c1 iter_args(%h{d} = {value}) -> (tensor<3xf64>) {{")
        value = f"%h{d}"
    lines += [
        f"  %p = nn.mul {value}, %w : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>",
        "  %q = nn.tanh %p : (tensor<3xf64>) -> tensor<3xf64>",
        f"  %y = nn.add %q, {value} : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>",
        "  scf.yield %y : tensor<3xf64>", "  }",
    ]
    for d in reversed(range(depth - 1)):
        lines += [f"  scf.yield %r{d + 1} : tensor<3xf64>", "  }"]
    lines += ["  func.return %r0 : tensor<3xf64>", "}"]
    return "\n".join(lines)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("trips", [[1], [3], [2, 3], [1, 1], [2, 1, 3]], ids=str)
def test_nested_loops_with_tapes(trips, mode):
    x, w = RNG.standard_normal(3), RNG.standard_normal(3)
    check_gradient(loops(len(trips), trips), "f", [x, w], [0, 1], pipeline=mode)


@pytest.mark.parametrize("trips", [[2, 3], [2, 1, 3]], ids=str)
def test_split_nested_loops_compose_to_the_gradient(trips):
    text = loops(len(trips), trips)
    x, w, s = RNG.standard_normal(3), RNG.standard_normal(3), RNG.standard_normal(3)
    module = parse_module(text)
    PassManager.parse("autodiff{split=true},autodiff,expand-library").run(module)
    value, *saved = interpret(module, "f_fwd", x, w)
    grads = interpret(module, "f_bwd", *saved, s)
    expected = interpret(module, "f_grad", x, w, s)
    np.testing.assert_array_equal(value, expected[0])
    for g, e in zip(grads, expected[1:], strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-14)
    check_gradient(text, "f", [x, w], [0, 1])


LOOP_IN_MAP_BODY = """func.func @f(%x: tensor<4xf64>, %w: tensor<4xf64>) -> tensor<4xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %t = %c0 to %c3 step %c1 iter_args(%h = %x) -> (tensor<4xf64>) {
    %e = tensor.empty() : tensor<4xf64>
    %m = df.map (%i) in (4) outs(%o = %e : tensor<4xf64>) {
      %a = df.read %h[%i] : tensor<4xf64>
      %b = df.read %w[%i] : tensor<4xf64>
      %v = df.tasklet (%a, %b) : (f64, f64) -> f64 {
      ^bb0(%p: f64, %q: f64):
        %s = arith.mulf %p, %q : f64
        %u = math.sin %s : f64
        %z = arith.addf %u, %p : f64
        df.yield %z : f64
      }
      df.write %v, %o[%i] : tensor<4xf64>
    } -> tensor<4xf64>
    scf.yield %m : tensor<4xf64>
  }
  func.return %r : tensor<4xf64>
}"""


@pytest.mark.parametrize("mode", MODES)
def test_loop_around_a_nonlinear_map(mode):
    x, w = RNG.standard_normal(4), RNG.standard_normal(4)
    check_gradient(LOOP_IN_MAP_BODY, "f", [x, w], [0, 1], pipeline=mode)


NESTED_WCR = """func.func @f(%x: tensor<4x5xf64>) -> tensor<4xf64> {
  %init = arith.constant dense<-1.0e30> : tensor<4xf64>
  %m = df.map (%i) in (4) outs(%o = %init : tensor<4xf64>) {
    df.map (%j) in (5) {
      %v = df.read %x[%i, %j] : tensor<4x5xf64>
      %s = df.tasklet (%v) : (f64) -> f64 {
      ^bb0(%a: f64):
        %t = arith.mulf %a, %a : f64
        df.yield %t : f64
      }
      df.write %s, %o[%i] wcr(KIND) : tensor<4xf64>
    }
  } -> tensor<4xf64>
  func.return %m : tensor<4xf64>
}"""


@pytest.mark.parametrize("kind", ["max", "min"])
def test_nested_map_writing_wcr_max_min(kind):
    text = NESTED_WCR.replace("KIND", kind).replace("-1.0e30", "-1.0e30" if kind == "max" else "1.0e30")
    x = RNG.standard_normal((4, 5))
    check_gradient(text, "f", [x], [0])
    x[1, 2], x[1, 4], x[2, :] = 2.0, -2.0, 0.5  # ties: squares equal, the gradient splits equally
    module = parse_module(text)
    PassManager.parse("autodiff").run(module)
    _, g = interpret(module, "f_grad", x, np.ones(4))
    np.testing.assert_allclose(g[1, [2, 4]], [2.0, -2.0] if kind == "max" else g[1, [2, 4]])
    np.testing.assert_allclose(g[2], np.full(5, 0.2) if kind == "max" else np.full(5, 0.2))


DYNAMIC_OUTS = """func.func @f(%x: tensor<?xf64>, %o0: tensor<?xf64>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?xf64>
  %m = arith.subi %n, %c1 : index
  %y = df.map (%i) in (%m) outs(%o = %o0 : tensor<?xf64>) {
    %v = df.read %x[%i] : tensor<?xf64>
    %r = df.tasklet (%v) : (f64) -> f64 {
    ^bb0(%a: f64):
      %t = arith.mulf %a, %a : f64
      df.yield %t : f64
    }
    df.write %r, %o[%i] : tensor<?xf64>
  } -> tensor<?xf64>
  func.return %y : tensor<?xf64>
}"""


def test_map_whose_outs_is_a_dynamic_shape_argument():
    """The last element of %o0 is not overwritten: its gradient is the seed's, the rest 0."""
    x, o = RNG.standard_normal(5), RNG.standard_normal(5)
    check_gradient(DYNAMIC_OUTS, "f", [x, o], [0, 1])


ROW_MAX = """func.func @f(%x: tensor<?x5xf64>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x5xf64>
  %e = tensor.empty(%n) : tensor<?xf64>
  %init = df.map (%i) in (%n) outs(%o = %e : tensor<?xf64>) {
    %ninf = arith.constant 0xFFF0000000000000 : f64
    df.write %ninf, %o[%i] : tensor<?xf64>
  } -> tensor<?xf64>
  %r = df.map (%i, %j) in (%n, 5) outs(%o = %init : tensor<?xf64>) {
    %v = df.read %x[%i, %j] : tensor<?x5xf64>
    df.write %v, %o[%i] wcr(max) : tensor<?xf64>
  } -> tensor<?xf64>
  func.return %r : tensor<?xf64>
}"""


def test_wcr_max_over_a_dynamic_shape():
    x = RNG.standard_normal((3, 5))
    check_gradient(ROW_MAX, "f", [x], [0])
    x[1, 1] = x[1, 3] = 9.0
    module = parse_module(ROW_MAX)
    PassManager.parse("autodiff").run(module)
    _, g = interpret(module, "f_grad", x, np.ones(3))
    np.testing.assert_array_equal(g[1], [0.0, 0.5, 0.0, 0.5, 0.0])


@pytest.mark.parametrize("mode", ["", " recompute=true"])
def test_hessian_vector_product_through_nested_loops(mode):
    """autodiff of @f_grad (its tapes, reruns and reversed loops) against differences of @f_grad."""
    module = parse_module(loops(2, [2, 2]))
    PassManager.parse(f"autodiff{{func=f{mode}}},autodiff{{func=f_grad wrt=0 outputs=1{mode}}},expand-library").run(module)
    x, w, s, v = (RNG.standard_normal(3) for _ in range(4))
    hv = interpret(module, "f_grad_grad", x, w, s, v)[-1]
    eps = 1e-6
    fd = (interpret(module, "f_grad", x + eps * v, w, s)[1] - interpret(module, "f_grad", x - eps * v, w, s)[1]) / (2 * eps)
    np.testing.assert_allclose(hv, fd, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("trips", [[3], [2, 3]], ids=str)
def test_split_with_recompute_composes_to_the_gradient(trips):
    text = loops(len(trips), trips)
    x, w, s = RNG.standard_normal(3), RNG.standard_normal(3), RNG.standard_normal(3)
    module = parse_module(text)
    PassManager.parse("autodiff{split=true recompute=true},expand-library").run(module)
    value, *saved = interpret(module, "f_fwd", x, w)
    grads = interpret(module, "f_bwd", *saved, s)
    reference = parse_module(text)
    PassManager.parse("autodiff,expand-library").run(reference)
    expected = interpret(reference, "f_grad", x, w, s)
    np.testing.assert_array_equal(value, expected[0])
    for g, e in zip(grads, expected[1:], strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-13)


BODY_READS_ITS_START = """func.func @f(%w: tensor<2xf64>) -> tensor<2xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 3 : index
  %l = scf.for %t = %c0 to %n step %c1 iter_args(%acc = %w) -> (tensor<2xf64>) {
    %e = tensor.empty() : tensor<2xf64>
    %m = df.map (%i) in (2) outs(%o = %e : tensor<2xf64>) {
      %a = df.read %acc[%i] : tensor<2xf64>
      %b = df.read %w[%i] : tensor<2xf64>
      %p = df.tasklet (%a, %b) : (f64, f64) -> f64 {
      ^bb0(%u: f64, %v: f64):
        %x = arith.mulf %u, %v : f64
        %y = math.sin %x : f64
        df.yield %y : f64
      }
      df.write %p, %o[%i] : tensor<2xf64>
    } -> tensor<2xf64>
    scf.yield %m : tensor<2xf64>
  }
  func.return %l : tensor<2xf64>
}"""


@pytest.mark.parametrize("mode", MODES)
def test_body_reading_the_value_its_iter_arg_starts_from(mode):
    """%w is both the iter_arg's initial value and read in the body: both
    contributions reach its gradient (the body's was dropped, issue 12)."""
    check_gradient(BODY_READS_ITS_START, "f", [RNG.standard_normal(2)], [0], pipeline=mode)
