"""reuse-sibling-loops changes what runs: programs whose row loops share an
exponential must equal the interpreter (NumPy at sizes where the interpreter
is slow) with and without the pass, serial and on two threads (each thread
has its own row buffer), forward and gradient."""

import numpy as np
import pytest

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.engine import lower
from dfc.compiler.interpreter import interpret
from dfc.passes import default_pipeline


def _without(threads: int) -> str:
    return default_pipeline(threads, without=("reuse-sibling-loops",))


SOFTMAX = """func.func @f(%x: tensor<{n}x{m}xf64>, %w: tensor<{n}x{m}xf64>) -> (tensor<{n}x{m}xf64>, tensor<f64>) {{
  %s = nn.softmax %x {{axis = -1 : i64}} : (tensor<{n}x{m}xf64>) -> tensor<{n}x{m}xf64>
  %p = nn.mul %s, %w : (tensor<{n}x{m}xf64>, tensor<{n}x{m}xf64>) -> tensor<{n}x{m}xf64>
  %l = nn.log_softmax %p {{axis = -1 : i64}} : (tensor<{n}x{m}xf64>) -> tensor<{n}x{m}xf64>
  %t = nn.reduce %l {{kind = "sum", axes = array<i64: 0, 1>}} : (tensor<{n}x{m}xf64>) -> tensor<f64>
  func.return %s, %t : tensor<{n}x{m}xf64>, tensor<f64>
}}"""


def _softmax_reference(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SOFTMAX's results in NumPy."""
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True) * w
    shifted = p - p.max(axis=-1, keepdims=True)
    return e / e.sum(axis=-1, keepdims=True), np.sum(shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True)))


def _reused(text: str) -> int:
    """Row buffers the default pipeline adds."""
    return str(lower(parse_module(text), threads=2)).count("memref.alloca() {alignment = 64 : i64}")


@pytest.mark.parametrize("n,m,threads", [
    (3, 5, 1), (3, 5, 2), pytest.param(64, 512, 1, marks=pytest.mark.slow), (64, 512, 2),
])  # fmt: skip
def test_softmax_rows_agree_with_and_without(n, m, threads):
    """Against the interpreter, and at 64x512 (where the interpreter takes seconds) against NumPy."""
    text = SOFTMAX.format(n=n, m=m)
    assert _reused(text) > 0
    rng = np.random.default_rng(n)
    x, w = rng.standard_normal((n, m)), rng.standard_normal((n, m))
    expected = interpret(parse_module(text), "f", x, w) if n * m < 1000 else _softmax_reference(x, w)
    for pipeline in (None, _without(threads)):
        got = ExecutionEngine(parse_module(text), threads=threads, pipeline=pipeline).invoke("f", x, w)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


def test_gradient_shares_its_exponentials():
    text = SOFTMAX.format(n=16, m=64)
    module = parse_module(text)
    PassManager.parse("autodiff{func=f}").run(module)
    differentiated = str(module)
    with_pass = str(lower(parse_module(differentiated), threads=2))
    without = str(lower(parse_module(differentiated), threads=2, pipeline=_without(2)))
    assert with_pass.count("math.exp") < without.count("math.exp")
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((16, 64)), rng.standard_normal((16, 64))
    seeds = (rng.standard_normal((16, 64)), np.asarray(rng.standard_normal()))
    expected = interpret(parse_module(differentiated), "f_grad", x, w, *seeds)
    got = ExecutionEngine(parse_module(differentiated), threads=2).invoke("f_grad", x, w, *seeds)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-11, atol=1e-11)
