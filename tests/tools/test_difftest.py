"""Differential testing in CI: a fixed-seed batch of random programs must agree
everywhere (interpreter prefixes, engine variants, simulated GPU, gradients),
and the tester itself must be able to fail."""

import numpy as np
import pytest

from dfc.compiler import parse_module
from dfc.compiler.interpreter import interpret
from dfc.tools import difftest
from dfc.tools.difftest import ENGINE_LIMITS, Options, check_batch, run
from dfc.tools.difftest_gen import ARG_KINDS, FEATURES, generate, render

ALL = frozenset(FEATURES)
FINDINGS = ("disagree", "refused", "crash", "invalid")


def _inputs(p):
    return [np.ones(p.shape(k), np.float32 if p.dtype == "f32" else np.float64) for k in ARG_KINDS]


def test_generated_programs_are_valid_and_deterministic():
    for seed in range(60):
        p = generate(seed, ALL)
        text = render(p)
        assert render(generate(seed, ALL)) == text
        interpret(parse_module(text), "f", *_inputs(p))


def test_generation_does_not_depend_on_the_hash_seed():
    import subprocess
    import sys

    code = "from dfc.tools.difftest_gen import *; print(render(generate(11, frozenset(FEATURES))))"
    texts = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={**__import__("os").environ, "PYTHONHASHSEED": h}).stdout
        for h in ("1", "2", "3")
    }
    assert len(texts) == 1


def test_switched_off_features_are_never_generated():
    texts = [render(generate(seed, frozenset({"wcr"}))) for seed in range(40)]
    joined = "\n".join(texts)
    for absent in ("scf.for", "scf.if", "func.call", "nn.", "?x", "f32", "maximumf", "math.sin"):
        assert absent not in joined
    assert "wcr(" in joined


def test_deleting_any_statement_keeps_the_program_valid():
    """The shrinker's move: every deletion it makes still parses and runs."""
    for seed in range(25):
        p = generate(seed, ALL)
        for k in range(len(p.stmts)):
            q = difftest._delete(p, k)
            if q is not None:
                assert len(q.stmts) == len(p.stmts) - 1
                interpret(parse_module(render(q)), "f", *_inputs(q))


def _batch(ci: int, full: int) -> list:
    """A batch size for CI and a larger one that runs with --slow."""
    return [ci, pytest.param(full, marks=pytest.mark.slow)]


@pytest.mark.parametrize("count", _batch(5, 24))
def test_forward_batch_agrees_everywhere(count):
    """Interpreter after each prefix, four engine variants and the simulated GPU."""
    summary = run(7000, count, ALL - {"if"}, 4, Options(gpu=True, grad=False), batch=12)
    assert not summary["findings"], summary["findings"]
    assert summary["outcomes"].get("pass", 0) >= count // 2
    assert all(reason in ENGINE_LIMITS for reason in summary["unsupported"])


@pytest.mark.parametrize("count", _batch(4, 12))
def test_gradient_batch_agrees_with_finite_differences(count):
    """Autodiff (interpreter and engine) against finite differences."""
    features = frozenset({"offset", "nested", "call", "nn", "wcr", "loop", "minmax", "contract"})
    summary = run(8000, count, features, 4, Options(gpu=False, grad=True), batch=12)
    assert not summary["findings"], summary["findings"]
    assert summary["outcomes"].get("pass", 0) >= count - 2


@pytest.mark.parametrize("seeds,least", [
    (12, (4, 1, 2, 5)), pytest.param(30, (10, 3, 2, 10), marks=pytest.mark.slow),
])  # fmt: skip
def test_contractions_reach_the_gemm_and_its_epilogue(seeds, least):
    """The `contract` feature generates what `contraction-to-blas` and
    `fuse-gemm-epilogue` rewrite, some of it past the GEMM kernel's tiles,
    and on the GPU what becomes a tiled gemm kernel (`passes.gpu_gemm`)."""
    from dfc.compiler import PassManager
    from dfc.compiler.codegen.nvptx import GPU_PIPELINE
    from dfc.passes import PIPELINES

    gemms = epilogues = big = gpu_gemms = 0
    for seed in range(seeds):
        p = generate(seed, frozenset({"contract", "nested"}))
        module = parse_module(render(p))
        gpu_module = module.clone()
        PassManager.parse(PIPELINES["default"]).run(module)
        text = str(module)
        gemms += text.count("blas.gemm")
        epilogues += text.count("epilogue")
        big += "blas.gemm" in text and min(p.sizes.values()) > 8
        PassManager.parse(GPU_PIPELINE).run(gpu_module)
        gpu_gemms += str(gpu_module).count("memref.get_global") // 2  # two shared tiles per gemm kernel
    found = (gemms, epilogues, big, gpu_gemms)
    assert all(n >= k for n, k in zip(found, least, strict=True)), found


WCR_MAX = """
func.func @f(%a: tensor<2x2xf64>, %v: tensor<2xf64>, %w: tensor<2xf64>) -> tensor<f64> {
  %init = arith.constant dense<-1.0e+30> : tensor<f64>
  %m = df.map (%i) in (2) outs(%o = %init : tensor<f64>) {
    %r = df.read %w[%i] : tensor<2xf64>
    %p = df.tasklet (%r) : (f64) -> f64 {
    ^bb0(%u: f64):
      %one = arith.constant 1.0 : f64
      %sq = arith.mulf %u, %u : f64
      %den = arith.addf %one, %sq : f64
      %q = arith.divf %u, %den : f64
      df.yield %q : f64
    }
    df.write %p, %o[] wcr(max) : tensor<f64>
  } -> tensor<f64>
  func.return %m : tensor<f64>
}"""


def test_engine_gradient_of_wcr_max():
    """Once a known bug (issue 12): under fast-math the backward's recomputed candidates
    matched no maximum, and the gradient was 0."""
    from dfc.compiler import ExecutionEngine, PassManager

    module = parse_module(WCR_MAX)
    PassManager.parse("autodiff").run(module)
    rng = np.random.default_rng(8003)
    a, v, w = rng.standard_normal((2, 2)), rng.standard_normal(2), rng.standard_normal(2)
    seed = np.array(0.7)
    k = int(np.argmax(w / (1 + w * w)))
    expected = np.zeros(2)
    expected[k] = 0.7 * (1 - w[k] ** 2) / (1 + w[k] ** 2) ** 2
    np.testing.assert_allclose(interpret(module, "f_grad", a, v, w, seed)[3], expected, rtol=1e-12)
    np.testing.assert_allclose(ExecutionEngine(module, fast_math=False).invoke("f_grad", a, v, w, seed)[3],
                               expected, rtol=1e-12)
    np.testing.assert_allclose(ExecutionEngine(module).invoke("f_grad", a, v, w, seed)[3], expected, rtol=1e-12)


def test_loop_body_reading_the_start_of_its_iter_arg():
    """Once a known bug (issue 12): the body's use of the iter_arg's initial value lost its adjoint."""
    outcome = check_batch([(1, generate(1, frozenset({"loop"})))], Options(gpu=False, grad=True))[1]
    assert outcome.status == "pass", outcome


def test_a_wrong_engine_result_is_a_disagreement(monkeypatch):
    real = difftest.ExecutionEngine

    class OffByOne(real):
        def invoke(self, name, *args):
            out = super().invoke(name, *args)
            return tuple(o + 1 for o in out) if isinstance(out, tuple) else out + 1

    monkeypatch.setattr(difftest, "ExecutionEngine", OffByOne)
    program = generate(1, frozenset())
    outcome = check_batch([(1, program)], Options(gpu=False, grad=False))[1]
    assert (outcome.status, outcome.stage) == ("disagree", "engine default/1 thread")


def _wrong_with_fast_math(real, only_gradient: bool):
    """An engine whose results are off by 0.1% when compiled with fast-math flags."""

    class Rounding(real):
        def __init__(self, *args, fast_math=True, **kwargs):
            super().__init__(*args, fast_math=fast_math, **kwargs)
            self.off = fast_math

        def invoke(self, name, *args):
            out = super().invoke(name, *args)
            if not self.off or (only_gradient and not name.endswith("_grad")):
                return out
            return tuple(o * 1.001 + 0.001 for o in out) if isinstance(out, tuple) else out * 1.001 + 0.001

    return Rounding


@pytest.mark.parametrize("gradient", [False, True])
def test_a_disagreement_only_with_fast_math_flags_is_reported_apart(monkeypatch, gradient):
    """An engine that agrees once compiled without fast-math flags gives
    'fast-math' (reported, not a failure); the other checks still run."""
    monkeypatch.setattr(difftest, "ExecutionEngine", _wrong_with_fast_math(difftest.ExecutionEngine, gradient))
    outcome = check_batch([(3, generate(3, frozenset()))], Options(gpu=False, grad=gradient))[3]
    stage = "engine gradient" if gradient else "engine default/1 thread"
    assert (outcome.status, outcome.stage) == ("fast-math", stage), outcome
    assert outcome.detail.endswith("agrees without fast-math flags")


def test_a_wrong_gradient_is_a_disagreement(monkeypatch):
    real = difftest.interpret

    def wrong_gradient(module, name, *args):
        out = real(module, name, *args)
        return tuple(o * 1.001 for o in out) if name.endswith("_grad") else out

    monkeypatch.setattr(difftest, "interpret", wrong_gradient)
    program = generate(3, frozenset())
    outcome = check_batch([(3, program)], Options(gpu=False, grad=True))[3]
    assert outcome.status == "disagree" and outcome.stage in ("autodiff", "engine gradient")


def test_cli_writes_a_summary(tmp_path):
    assert difftest.main(["--seed", "5", "--count", "2", "--features", "wcr", "--no-gpu", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "summary.json").exists()
    with pytest.raises(SystemExit):
        difftest.main(["--features", "nope", "--out", str(tmp_path)])
