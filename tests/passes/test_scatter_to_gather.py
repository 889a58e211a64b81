"""scatter-to-gather changes what runs: gathers must equal the scatters they replace."""

from pathlib import Path

import numpy as np
import pytest
import torch

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.passes import PIPELINES

EXAMPLES = Path(__file__).parents[2] / "examples"
WITHOUT = PIPELINES["default"].replace("scatter-to-gather,", "")

STENCIL = """func.func @f(%g: tensor<{n}x{m}xf64>) -> tensor<{n2}x{m2}xf64> {{
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zeros = arith.constant dense<0.0> : tensor<{n2}x{m2}xf64>
  %r = df.map (%i, %j) in ({n}, {m}) outs(%o = %zeros : tensor<{n2}x{m2}xf64>) {{
    %v = df.read %g[%i, %j] : tensor<{n}x{m}xf64>
    %w = df.tasklet (%v) : (f64) -> f64 {{
    ^bb0(%a: f64):
      %e = math.exp %a : f64
      df.yield %e : f64
    }}
    %i1 = arith.addi %i, %c1 : index
    %j2 = arith.addi %j, %c2 : index
    df.write %v, %o[%i, %j] wcr(add) : tensor<{n2}x{m2}xf64>
    df.write %w, %o[%i1, %j] wcr(add) : tensor<{n2}x{m2}xf64>
    df.write %v, %o[%i, %j2] wcr(add) : tensor<{n2}x{m2}xf64>
    df.write %w, %o[%i1, %j2] wcr(add) : tensor<{n2}x{m2}xf64>
  }} -> tensor<{n2}x{m2}xf64>
  func.return %r : tensor<{n2}x{m2}xf64>
}}"""


def run(text: str, name: str, args, pipeline: str, threads: int):
    return ExecutionEngine(parse_module(text), pipeline=pipeline, threads=threads).invoke(name, *args)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("n, m, n2, m2", [(5, 7, 6, 9), (300, 200, 301, 202), (4, 4, 9, 9)])
def test_stencil_scatter_equals_numpy(n, m, n2, m2, threads):
    g = np.random.default_rng(0).standard_normal((n, m))
    want = np.zeros((n2, m2))
    for (a, b), v in (((0, 0), g), ((1, 0), np.exp(g)), ((0, 2), g), ((1, 2), np.exp(g))):
        want[a : a + n, b : b + m] += v
    text = STENCIL.format(n=n, m=m, n2=n2, m2=m2)
    module = parse_module(text)
    PassManager.parse("scatter-to-gather").run(module)
    assert "wcr" not in str(module)
    np.testing.assert_allclose(run(text, "f", [g], PIPELINES["default"], threads), want, rtol=1e-12, atol=1e-14)  # terms of both signs: absolute rounding error


@pytest.mark.parametrize("threads", [1, 2])
def test_jacobi2d_gradient_with_and_without(threads):
    """Large enough (256^2) to run the backward maps in parallel chunks."""
    text = (EXAMPLES / "jacobi2d.mlir").read_text()
    for old, new in {"64x64": "256x256", "(62, 62)": "(254, 254)", "(64, 64)": "(256, 256)",
                     "arith.constant 20 : index": "arith.constant 3 : index"}.items():  # fmt: skip
        text = text.replace(old, new)
    module = parse_module(text)
    PassManager.parse("autodiff").run(module)
    text = str(module)
    a = np.random.default_rng(1).standard_normal((256, 256))
    seed = np.array(1.0)
    _, with_pass = run(text, "jacobi2d_grad", [a, seed], PIPELINES["default"], threads)
    _, without = run(text, "jacobi2d_grad", [a, seed], WITHOUT, threads)
    np.testing.assert_allclose(with_pass, without, rtol=1e-12)
    t = torch.tensor(a, requires_grad=True)
    p = t
    for _ in range(3):
        q = p.clone()
        q[1:-1, 1:-1] = 0.2 * (p[1:-1, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] + p[2:, 1:-1] + p[:-2, 1:-1])
        p = p.clone()
        p[1:-1, 1:-1] = 0.2 * (q[1:-1, 1:-1] + q[1:-1, :-2] + q[1:-1, 2:] + q[2:, 1:-1] + q[:-2, 1:-1])
    p.sum().backward()
    np.testing.assert_allclose(with_pass, t.grad.numpy(), rtol=1e-12)
