"""fuse-outer changes what runs: row-fused programs must equal the interpreter
(NumPy at sizes where the interpreter is slow), with and without the pass,
serial and in chunks, forward and gradient."""

from pathlib import Path

import numpy as np
import pytest

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.interpreter import interpret
from dfc.dialects import df
from dfc.passes import PIPELINES

EXAMPLES = Path(__file__).parents[2] / "examples"
WITHOUT = PIPELINES["default"].replace("fuse-outer,", "")
UP_TO_PASS = PIPELINES["default"].split(",fuse-outer")[0]

ROWS = """func.func @f(%x: tensor<{n}x{m}xf64>, %w: tensor<{n}x{m}xf64>) -> (tensor<{n}x{m}xf64>, tensor<f64>) {{
  %s = nn.softmax %x {{axis = -1 : i64}} : (tensor<{n}x{m}xf64>) -> tensor<{n}x{m}xf64>
  %l = nn.log_softmax %w {{axis = -1 : i64}} : (tensor<{n}x{m}xf64>) -> tensor<{n}x{m}xf64>
  %p = nn.mul %s, %l : (tensor<{n}x{m}xf64>, tensor<{n}x{m}xf64>) -> tensor<{n}x{m}xf64>
  %t = nn.reduce %p {{kind = "sum", axes = array<i64: 0, 1>}} : (tensor<{n}x{m}xf64>) -> tensor<f64>
  func.return %s, %t : tensor<{n}x{m}xf64>, tensor<f64>
}}"""

# layer norm without affine parameters, written as maps over rows: a mean, a
# centred variance, a normalisation (three passes over each row)
NORM = """func.func @f(%x: tensor<{n}x{m}xf64>) -> tensor<{n}x{m}xf64> {{
  %zeros = arith.constant dense<0.0> : tensor<{n}xf64>
  %empty = tensor.empty() : tensor<{n}x{m}xf64>
  %sum = df.map (%i, %j) in ({n}, {m}) outs(%o = %zeros : tensor<{n}xf64>) {{
    %v = df.read %x[%i, %j] : tensor<{n}x{m}xf64>
    df.write %v, %o[%i] wcr(add) : tensor<{n}xf64>
  }} -> tensor<{n}xf64>
  %var = df.map (%i, %j) in ({n}, {m}) outs(%o = %zeros : tensor<{n}xf64>) {{
    %v = df.read %x[%i, %j] : tensor<{n}x{m}xf64>
    %s = df.read %sum[%i] : tensor<{n}xf64>
    %k = arith.constant {m}.0 : f64
    %mu = arith.divf %s, %k : f64
    %d = arith.subf %v, %mu : f64
    %q = arith.mulf %d, %d : f64
    df.write %q, %o[%i] wcr(add) : tensor<{n}xf64>
  }} -> tensor<{n}xf64>
  %y = df.map (%i, %j) in ({n}, {m}) outs(%o = %empty : tensor<{n}x{m}xf64>) {{
    %v = df.read %x[%i, %j] : tensor<{n}x{m}xf64>
    %s = df.read %sum[%i] : tensor<{n}xf64>
    %q = df.read %var[%i] : tensor<{n}xf64>
    %k = arith.constant {m}.0 : f64
    %eps = arith.constant 1.0e-5 : f64
    %mu = arith.divf %s, %k : f64
    %d = arith.subf %v, %mu : f64
    %vq = arith.divf %q, %k : f64
    %ve = arith.addf %vq, %eps : f64
    %sd = math.sqrt %ve : f64
    %r = arith.divf %d, %sd : f64
    df.write %r, %o[%i, %j] : tensor<{n}x{m}xf64>
  }} -> tensor<{n}x{m}xf64>
  func.return %y : tensor<{n}x{m}xf64>
}}"""


def _row_groups(text: str) -> list[int]:
    """For each top-level map after fuse-outer, the number of maps nested in it."""
    module = parse_module(text)
    PassManager.parse(UP_TO_PASS + ",fuse-outer").run(module)
    tops = [op for op in module.walk() if isinstance(op, df.MapOp) and not df.enclosing_maps(op)]
    return [sum(isinstance(o, df.MapOp) for o in op.body.block.ops) for op in tops]


def _check(text: str, name: str, args: list[np.ndarray], rtol: float = 1e-12, want=None) -> None:
    """The engine with and without fuse-outer, on one and two threads, equals `want`
    (by default the interpreter's results)."""
    want = interpret(parse_module(text), name, *args) if want is None else want
    for pipeline in (PIPELINES["default"], WITHOUT):
        for threads in (1, 2):
            got = ExecutionEngine(parse_module(text), pipeline=pipeline, threads=threads).invoke(name, *args)
            for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
                np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-13)


@pytest.mark.parametrize("n, m", [(3, 5), *(pytest.param(n, m, marks=pytest.mark.slow) for n, m in ((64, 300), (257, 129)))])
def test_softmax_rows(n, m):
    text = ROWS.format(n=n, m=m)
    rng = np.random.default_rng(n)
    _check(text, "f", [rng.standard_normal((n, m)), rng.standard_normal((n, m))])


@pytest.mark.parametrize("n, m", [(4, 7), (300, 200)])
def test_layer_norm_rows_fuse_and_match(n, m):
    """Against the interpreter, and at 300x200 (where the interpreter takes seconds) against NumPy."""
    text = NORM.format(n=n, m=m)
    assert 3 in _row_groups(text)  # sum, variance and normalisation run row by row
    x = np.random.default_rng(1).standard_normal((n, m)) * 3 + 1
    centred = x - x.mean(axis=1, keepdims=True)
    _check(text, "f", [x], want=None if n * m < 1000 else centred / np.sqrt((centred**2).mean(axis=1, keepdims=True) + 1e-5))


@pytest.mark.parametrize("n, m", [(9, 40), pytest.param(64, 512, marks=pytest.mark.slow)])
def test_softmax_loss_gradient_rows(n, m):
    """The example's value and gradient (the backward also runs over rows), as
    written (64x512, with --slow) and resized to n x m."""
    text = (EXAMPLES / "softmax.mlir").read_text()
    text = text.replace("64x512x", f"{n}x{m}x").replace("(64, 512)", f"({n}, {m})").replace("<64xf32>", f"<{n}xf32>")
    module = parse_module(text)
    PassManager.parse("autodiff{func=softmax_loss}").run(module)
    rng = np.random.default_rng(2)
    x, w = (rng.standard_normal((n, m)).astype(np.float32) for _ in range(2))
    seed = np.array(1.0, np.float32)
    want = interpret(module, "softmax_loss_grad", x, w, seed)
    for threads in (1, 2):
        got = ExecutionEngine(module, threads=threads).invoke("softmax_loss_grad", x, w, seed)
        for g, r in zip(got, want):
            np.testing.assert_allclose(g, r, rtol=2e-5, atol=1e-7)


def test_dependences_on_other_rows_keep_maps_apart():
    """A map reading the previous map's output at row i+1 must not run row by row with it."""
    text = """func.func @f(%x: tensor<8x6xf64>) -> tensor<7x6xf64> {
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<8x6xf64>
  %e2 = tensor.empty() : tensor<7x6xf64>
  %a = df.map (%i, %j) in (8, 6) outs(%o = %e : tensor<8x6xf64>) {
    %v = df.read %x[%i, %j] : tensor<8x6xf64>
    %s = math.sin %v : f64
    df.write %s, %o[%i, %j] : tensor<8x6xf64>
  } -> tensor<8x6xf64>
  %b = df.map (%i, %j) in (7, 6) outs(%o = %e2 : tensor<7x6xf64>) {
    %i1 = arith.addi %i, %c1 : index
    %v = df.read %a[%i1, %j] : tensor<8x6xf64>
    %u = df.read %a[%i, %j] : tensor<8x6xf64>
    %d = arith.subf %v, %u : f64
    df.write %d, %o[%i, %j] : tensor<7x6xf64>
  } -> tensor<7x6xf64>
  func.return %b : tensor<7x6xf64>
}"""
    _check(text, "f", [np.random.default_rng(3).standard_normal((8, 6))])
