"""`dfc.Function` (a library-level module + entry name) and `dfc.grad`/`value_and_grad`/`vjp` on it."""

from pathlib import Path

import numpy as np
import pytest

import dfc
from dfc import parse_module

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.fixture(scope="module")
def gemm_sum():
    return dfc.Function(parse_module((EXAMPLES / "gemm_sum.mlir").read_text()), "gemm_sum")


def test_call_and_gradients(gemm_sum):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((5, 4)).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(gemm_sum(x, y), (x @ y).sum(), rtol=1e-5)
    gx, gy = dfc.grad(gemm_sum, (0, 1))(x, y)
    np.testing.assert_allclose(gx, np.ones((5, 3)) @ y.T, rtol=1e-5)
    np.testing.assert_allclose(gy, x.T @ np.ones((5, 3)), rtol=1e-5)
    value, g = dfc.value_and_grad(gemm_sum, 1)(x, y)
    np.testing.assert_allclose(value, (x @ y).sum(), rtol=1e-5)
    np.testing.assert_allclose(g, gy, rtol=1e-6)
    value, pullback = dfc.vjp(gemm_sum, x, y)
    px, py = pullback(3.0)
    np.testing.assert_allclose(px, 3 * gx, rtol=1e-6)
    np.testing.assert_allclose(py, 3 * gy, rtol=1e-6)


def test_stages_are_text_opt_tool_reads(gemm_sum):
    assert "@gemm_sum_grad" in gemm_sum.mlir("autodiff")
    assert "memref" in gemm_sum.mlir("lowered")
    for stage in ("frontend", "autodiff", "lowered"):
        parse_module(gemm_sum.mlir(stage))
    with pytest.raises(ValueError, match="unknown stage"):
        gemm_sum.mlir("bufferized")


def test_errors_name_the_problem(gemm_sum):
    with pytest.raises(ValueError, match="no function @nope"):
        dfc.Function(gemm_sum.module, "nope")
    with pytest.raises(ValueError, match="argnums 2 out of range"):
        dfc.grad(gemm_sum, 2)(np.zeros((5, 4), np.float32), np.zeros((4, 3), np.float32))


def test_the_gradient_pass_is_built_as_an_object_not_text():
    """`dfc.grad` hands the autodiff pass its options directly, so any function name works (a pipeline
    string `autodiff{func=einsum_ij,jk->ik}` would not parse)."""
    import types

    def f(x):
        return np.sum(x * x * x)

    g = types.FunctionType(f.__code__, f.__globals__, "einsum_ij,jk->ik")
    x = np.linspace(-1.0, 2.0, 5)
    np.testing.assert_allclose(dfc.grad(g)(x), 3 * x * x, rtol=1e-12)
