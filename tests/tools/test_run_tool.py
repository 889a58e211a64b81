"""run-tool: gradient seeds are never random, and results can be saved and read back."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dfc.tools.run_tool import main

EXAMPLE = Path(__file__).parents[2] / "examples" / "gemm_sum.mlir"


def test_random_args_leave_the_gradient_seed_at_one_and_results_are_saved(tmp_path):
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((5, 4)).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    out = tmp_path / "out"
    argv = [str(EXAMPLE), "-p", "autodiff", "--entry", "gemm_sum_grad", "--arg", f"X={tmp_path / 'x.npy'}",
            "--arg", f"Y={tmp_path / 'y.npy'}", "--save-results", str(out)]
    for seed in ("0", "1"):  # whatever the random seed, the gradient is that of sum(X @ Y)
        assert main([*argv, "--random-args", seed]) == 0
        loss, dx, dy = (np.load(out / f"result_{k}.npy") for k in range(3))
        np.testing.assert_allclose(loss, (x.astype(np.float64) @ y).sum(), rtol=1e-5)
        np.testing.assert_allclose(dx, np.ones((5, 3)) @ y.T, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(dy, x.T @ np.ones((5, 3)), rtol=1e-5, atol=1e-6)


def test_an_explicit_seed_is_used(tmp_path):
    np.save(tmp_path / "s.npy", np.array(2.0, np.float32))
    out = tmp_path / "out"
    assert main([str(EXAMPLE), "-p", "autodiff", "--entry", "gemm_sum_grad", "--random-args", "0",
                 "--arg", f"seed={tmp_path / 's.npy'}", "--save-results", str(out)]) == 0
    twice = np.load(out / "result_1.npy")
    assert main([str(EXAMPLE), "-p", "autodiff", "--entry", "gemm_sum_grad", "--random-args", "0",
                 "--save-results", str(out)]) == 0
    np.testing.assert_allclose(twice, 2 * np.load(out / "result_1.npy"), rtol=1e-6)
