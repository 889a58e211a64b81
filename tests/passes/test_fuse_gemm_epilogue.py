"""fuse-gemm-epilogue: which maps a `blas.gemm` takes into its epilogue, and
that the engine computes what the interpreter (and float64 numpy) does with
the epilogue, on dfc's kernel and on OpenBLAS, on one thread and two."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.codegen import blas_runtime
from dfc.compiler.interpreter import interpret
from dfc.passes import PIPELINES
from tests.passes.test_contraction_to_blas import lowered

# every test runs with the GEMM the host would choose, and with --slow with both dfc's kernel
# (panel epilogues) and OpenBLAS's (block epilogues)
pytestmark = [
    pytest.mark.skipif(not blas_runtime.available(), reason="scipy-openblas64 is not installed"),
    pytest.mark.usefixtures("host_gemm_mode"),
]

WITHOUT = PIPELINES["default"].replace("fuse-gemm-epilogue,", "")
RNG = np.random.default_rng(11)


def run(text: str, name: str, args: list, *, threads: int, pipeline: str | None = None):
    return ExecutionEngine(parse_module(text), threads=threads, pipeline=pipeline).invoke(name, *args)


def layer(m: int, n: int, k: int, dtype: str, activation: str) -> str:
    t = lambda *shape: f"tensor<{'x'.join(map(str, shape))}x{dtype}>"  # noqa: E731
    return f"""func.func @f(%x: {t(m, k)}, %w: {t(n, k)}, %b: {t(n)}) -> {t(m, n)} {{
  %h = nn.linear %x, %w, %b : ({t(m, k)}, {t(n, k)}, {t(n)}) -> {t(m, n)}
  %a = nn.{activation} %h : ({t(m, n)}) -> {t(m, n)}
  func.return %a : {t(m, n)}
}}"""


ACTIVATIONS = {"relu": lambda h: np.maximum(h, 0), "tanh": np.tanh, "sigmoid": lambda h: 1 / (1 + np.exp(-h))}


# (m, n, k): tile edges in both directions and two depth blocks (KC = 256);
# whole tiles; narrower than a vector (the kernel's OpenBLAS fallback); deep
# and narrow (split along k over the threads, the epilogue after the sum)
@pytest.mark.parametrize("m,n,k,activation", [
    (13, 37, 300, "relu"), (13, 37, 300, "tanh"), (13, 37, 300, "sigmoid"),
    (48, 64, 20, "relu"), (9, 5, 33, "tanh"), (4, 6, 2000, "relu"),
])
@pytest.mark.parametrize("threads", [1, 2])
def test_linear_then_activation(m, n, k, activation, threads):
    text = layer(m, n, k, "f64", activation)
    ir = lowered(text)
    assert "epilogue" in ir and "beta = 0.0" in ir and "df.map" not in ir.split("func.func")[1]
    x, w, b = RNG.standard_normal((m, k)), RNG.standard_normal((n, k)), RNG.standard_normal(n)
    expected = ACTIVATIONS[activation](x @ w.T + b)
    np.testing.assert_allclose(run(text, "f", [x, w, b], threads=threads), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("threads", [1, 2])
def test_f32_layer_agrees_with_the_pipeline_without_the_pass(threads):
    text = layer(96, 200, 70, "f32", "relu")
    args = [RNG.standard_normal(s).astype(np.float32) for s in ((96, 70), (200, 70), (200,))]
    fused = run(text, "f", args, threads=threads)
    separate = run(text, "f", args, threads=threads, pipeline=WITHOUT)
    np.testing.assert_allclose(fused, separate, rtol=1e-6, atol=1e-6)
    x, w, b = (a.astype(np.float64) for a in args)
    np.testing.assert_allclose(fused, np.maximum(x @ w.T + b, 0), rtol=1e-5, atol=1e-5)


BATCHED = """func.func @f(%x: tensor<3x20x30xf64>, %y: tensor<3x30x40xf64>, %r: tensor<3x20x40xf64>) -> tensor<3x20x40xf64> {
  %p = nn.dot_general %x, %y {lhs_batching_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64: 0>,
    lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 1>}
    : (tensor<3x20x30xf64>, tensor<3x30x40xf64>) -> tensor<3x20x40xf64>
  %s = nn.add %p, %r : (tensor<3x20x40xf64>, tensor<3x20x40xf64>) -> tensor<3x20x40xf64>
  %e = nn.exp %s : (tensor<3x20x40xf64>) -> tensor<3x20x40xf64>
  func.return %e : tensor<3x20x40xf64>
}"""


@pytest.mark.parametrize("threads", [1, 2])
def test_batched_product_with_a_residual(threads):
    """A batched product's epilogue gets the batch entry: the residual and the
    result are indexed [t, i, j]."""
    assert "epilogue" in lowered(BATCHED)
    x, y, r = RNG.standard_normal((3, 20, 30)), RNG.standard_normal((3, 30, 40)), RNG.standard_normal((3, 20, 40))
    np.testing.assert_allclose(run(BATCHED, "f", [x, y, r], threads=threads), np.exp(x @ y + r), rtol=1e-12)


MATVEC = """func.func @f(%a: tensor<50x70xf64>, %v: tensor<70xf64>) -> tensor<50xf64> {
  %p = nn.dot_general %a, %v {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>,
    lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>}
    : (tensor<50x70xf64>, tensor<70xf64>) -> tensor<50xf64>
  %t = nn.tanh %p : (tensor<50xf64>) -> tensor<50xf64>
  func.return %t : tensor<50xf64>
}"""


def test_matrix_vector_product():
    assert "epilogue" in lowered(MATVEC)
    a, v = RNG.standard_normal((50, 70)), RNG.standard_normal(70)
    np.testing.assert_allclose(run(MATVEC, "f", [a, v], threads=2), np.tanh(a @ v), rtol=1e-12)


MLP = """func.func @mlp(%x: tensor<16x50xf64>, %w1: tensor<32x50xf64>, %b1: tensor<32xf64>,
                    %w2: tensor<10x32xf64>, %b2: tensor<10xf64>) -> tensor<f64> {
  %h = nn.linear %x, %w1, %b1 : (tensor<16x50xf64>, tensor<32x50xf64>, tensor<32xf64>) -> tensor<16x32xf64>
  %a = nn.relu %h : (tensor<16x32xf64>) -> tensor<16x32xf64>
  %z = nn.linear %a, %w2, %b2 : (tensor<16x32xf64>, tensor<10x32xf64>, tensor<10xf64>) -> tensor<16x10xf64>
  %t = nn.tanh %z : (tensor<16x10xf64>) -> tensor<16x10xf64>
  %s = nn.reduce %t {kind = "sum", axes = array<i64: 0, 1>} : (tensor<16x10xf64>) -> tensor<f64>
  func.return %s : tensor<f64>
}"""


@functools.cache
def _mlp_gradient() -> tuple[str, list[np.ndarray], list[np.ndarray]]:
    """The gradient's text, arguments, and what the interpreter computes (once: it is slow)."""
    module = parse_module(MLP)
    PassManager.parse("autodiff{func=mlp}").run(module)
    rng = np.random.default_rng(5)
    args = [rng.standard_normal(s) for s in ((16, 50), (32, 50), (32,), (10, 32), (10,))] + [np.array(1.0)]
    return str(module), args, interpret(module, "mlp_grad", *args)


@pytest.mark.parametrize("threads", [1, 2])
def test_mlp_gradient_agrees_with_the_interpreter(threads):
    """The gradient's products take the forward's bias and activations and the
    backward's relu mask (a map after unrelated ones) into their epilogues."""
    text, args, expected = _mlp_gradient()
    grad = lowered(text).split("func.func @mlp_grad")[1]
    assert grad.count("epilogue {") >= 3
    got = run(text, "mlp_grad", args, threads=threads)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-10)
