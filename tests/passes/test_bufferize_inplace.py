"""In-place bufferization is only taken where it is proven: values live across
loop iterations keep their buffers (regressions of silent miscompiles)."""

from pathlib import Path

import numpy as np
import pytest

from dfc import ExecutionEngine, PassManager, interpret, parse_module
from dfc.passes import PIPELINES

DATA = Path(__file__).parents[1] / "data"
PREFIXES = {
    "default": PIPELINES["default"],
    "no-mem-plan": PIPELINES["default"].removesuffix(",mem-plan"),
    "no-fuse": PIPELINES["default"].replace("fuse,", ""),
}


def reference(text: str, name: str, *args):
    module = parse_module(text)
    PassManager.parse("expand-library").run(module)
    return interpret(module, name, *args)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("prefix", sorted(PREFIXES))
def test_map_into_a_tensor_defined_before_the_loop(prefix, threads):
    """Each iteration writes one element of a zero tensor made before the loop:
    writing it in place would leak earlier iterations' writes."""
    text = (DATA / "loop_carried_outs.mlir").read_text()
    x = np.array([1.0, 2.0, 3.0, 4.0])
    engine = ExecutionEngine(parse_module(text), pipeline=PREFIXES[prefix], threads=threads)
    np.testing.assert_array_equal(engine.invoke("g", x), [2.0, 4.0, 6.0, 8.0])
    np.testing.assert_array_equal(reference(text, "g", x), [2.0, 4.0, 6.0, 8.0])


def test_gradient_with_an_accumulator_hoisted_out_of_the_reversed_loop():
    """The gradient's reversed loop reads a zero tensor canonicalize hoists out of it."""
    text = (DATA / "loop_carried_outs.mlir").read_text()
    text = text.replace("-> tensor<4xf64> {\n  %c0", "-> tensor<f64> {\n  %c0").replace(
        "func.return %r : tensor<4xf64>",
        '%l = nn.reduce %r {axes = array<i64: 0>, kind = "sum"} : (tensor<4xf64>) -> tensor<f64>\n'
        "  func.return %l : tensor<f64>",
    )
    module = parse_module(text)
    PassManager.parse("autodiff,expand-library,canonicalize").run(module)
    x, seed = np.array([1.0, 2.0, 3.0, 4.0]), np.array(1.0)
    value, grad = ExecutionEngine(module).invoke("g_grad", x, seed)
    ref_value, ref_grad = interpret(module, "g_grad", x, seed)
    assert value == ref_value == 20.0
    np.testing.assert_array_equal(grad, ref_grad)
    np.testing.assert_array_equal(grad, [2.0, 2.0, 2.0, 2.0])  # d sum(2x) / dx


def test_gauss_seidel_sweep_gradient_against_finite_differences():
    """In-place element updates inside a loop, read by the next iteration."""
    text = (DATA / "gauss_seidel_sweep.mlir").read_text()
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(8), rng.uniform(0.2, 0.4, 8)
    module = parse_module(text)
    PassManager.parse("autodiff").run(module)
    _, gx, gw = ExecutionEngine(module).invoke("gs_grad", x, w, np.array(1.0))

    def loss(x, w):
        return float(reference(text, "gs", x, w))

    h, eye = 1e-6, np.eye(8)
    fd_x = [(loss(x + h * e, w) - loss(x - h * e, w)) / (2 * h) for e in eye]
    fd_w = [(loss(x, w + h * e) - loss(x, w - h * e)) / (2 * h) for e in eye]
    np.testing.assert_allclose(gx, fd_x, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gw, fd_w, rtol=1e-6, atol=1e-8)


SHARED_INIT = """func.func @f(%x: tensor<4xf64>) -> tensor<4xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant dense<0.0> : tensor<4xf64>
  %r = scf.for %t = %c0 to %c3 step %c1 iter_args(%acc = %x) -> (tensor<4xf64>) {
    %a, %b = df.map (%i) in (4) outs(%oa = %zero : tensor<4xf64>, %ob = %zero : tensor<4xf64>) {
      %v = df.read %acc[%i] : tensor<4xf64>
      df.write %v, %oa[%i] : tensor<4xf64>
      df.write %v, %ob[%t] wcr(add) : tensor<4xf64>
    } -> tensor<4xf64>, tensor<4xf64>
    %s = df.map (%j) in (4) outs(%os = %a : tensor<4xf64>) {
      %u = df.read %a[%j] : tensor<4xf64>
      %w = df.read %b[%j] : tensor<4xf64>
      %y = df.tasklet (%u, %w) : (f64, f64) -> f64 {
      ^bb0(%p: f64, %q: f64):
        %z = arith.addf %p, %q : f64
        df.yield %z : f64
      }
      df.write %y, %os[%j] : tensor<4xf64>
    } -> tensor<4xf64>
    scf.yield %s : tensor<4xf64>
  }
  func.return %r : tensor<4xf64>
}"""


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("prefix", sorted(PREFIXES))
def test_outputs_sharing_an_initial_value(prefix, threads):
    """Two outputs of one map start from the same zeros: one is overwritten
    everywhere, the other accumulates into one element and must start from zeros
    in every iteration (it was given an uninitialised buffer, which mem-plan's
    reuse filled with the previous iteration's sums)."""
    x = np.array([1.0, 2.0, 3.0, 4.0])
    want = reference(SHARED_INIT, "f", x)
    np.testing.assert_array_equal(want, [11.0, 22.0, 43.0, 4.0])  # acc[t] += sum(acc)
    engine = ExecutionEngine(parse_module(SHARED_INIT), pipeline=PREFIXES[prefix], threads=threads)
    np.testing.assert_array_equal(engine.invoke("f", x), want)


BRANCHES = """func.func @f(%x: tensor<4xf64>, %c: i1) -> tensor<4xf64> {
  %e0 = tensor.empty() : tensor<4xf64>
  %h = df.map (%i) in (4) outs(%o = %e0 : tensor<4xf64>) {
    %v = df.read %x[%i] : tensor<4xf64>
    %w = arith.mulf %v, %v : f64
    df.write %w, %o[%i] : tensor<4xf64>
  } -> tensor<4xf64>
  %r = scf.if %c -> (tensor<4xf64>) {
    scf.yield %h : tensor<4xf64>
  } else {
    %e1 = tensor.empty() : tensor<4xf64>
    %m = df.map (%i) in (4) outs(%o = %e1 : tensor<4xf64>) {
      %v = df.read %h[%i] : tensor<4xf64>
      %w = arith.addf %v, %v : f64
      df.write %w, %o[%i] : tensor<4xf64>
    } -> tensor<4xf64>
    %e2 = tensor.empty() : tensor<4xf64>
    %s = df.map (%i) in (4) outs(%o = %e2 : tensor<4xf64>) {
      %a = df.read %m[%i] : tensor<4xf64>
      %b = df.read %h[%i] : tensor<4xf64>
      %w = arith.subf %a, %b : f64
      df.write %w, %o[%i] : tensor<4xf64>
    } -> tensor<4xf64>
    scf.yield %s : tensor<4xf64>
  }
  func.return %r : tensor<4xf64>
}"""


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("prefix", sorted(PREFIXES))
@pytest.mark.parametrize("flag", [True, False])
def test_scf_if_on_tensors(prefix, threads, flag):
    """Each branch yields a buffer it owns; a value read again later in a
    branch keeps its buffer (it was overwritten in place: h*2 - h read 2h - 2h)."""
    x = np.array([1.0, 2.0, 3.0, 4.0])
    want = reference(BRANCHES, "f", x, np.bool_(flag))
    np.testing.assert_array_equal(want, x * x)  # h, or 2h - h
    engine = ExecutionEngine(parse_module(BRANCHES), pipeline=PREFIXES[prefix], threads=threads)
    np.testing.assert_array_equal(engine.invoke("f", x, np.bool_(flag)), want)
