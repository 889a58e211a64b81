"""Gradients of max/min (wcr, nn.reduce, nn.reduce_window, nn.maximum and
nn.minimum) pick the extremal element by float equality or comparison;
under fast-math (the engine's default) two computations of one value need
not be bit-equal, so the backward must compare the very values the forward
reduced (issue 12). Each program's candidates are computed (a division, a
product plus a sum) so that a recomputation may round differently; the
engine's gradient, default flags, must equal the exact one."""

import numpy as np
import pytest

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.interpreter import interpret

RNG = np.random.default_rng(8003)


def _map_reduce(kind: str, n: int) -> str:
    return f"""
func.func @f(%w: tensor<{n}xf64>, %c: tensor<{n}xf64>) -> tensor<f64> {{
  %init = arith.constant dense<{'-' if kind == 'max' else ''}1.0e+30> : tensor<f64>
  %m = df.map (%i) in ({n}) outs(%o = %init : tensor<f64>) {{
    %r = df.read %w[%i] : tensor<{n}xf64>
    %s = df.read %c[%i] : tensor<{n}xf64>
    %p = df.tasklet (%r, %s) : (f64, f64) -> f64 {{
    ^bb0(%u: f64, %v: f64):
      %one = arith.constant 1.0 : f64
      %sq = arith.mulf %u, %u : f64
      %den = arith.addf %one, %sq : f64
      %q = arith.divf %u, %den : f64
      %t = arith.mulf %q, %v : f64
      %y = arith.addf %t, %u : f64
      df.yield %y : f64
    }}
    df.write %p, %o[] wcr({kind}) : tensor<f64>
  }} -> tensor<f64>
  func.return %m : tensor<f64>
}}"""


def _nested_reduce(kind: str) -> str:
    return f"""
func.func @f(%w: tensor<3x4xf64>, %c: tensor<3x4xf64>) -> tensor<3xf64> {{
  %init = arith.constant dense<{'-' if kind == 'max' else ''}1.0e+30> : tensor<3xf64>
  %m = df.map (%i) in (3) outs(%o = %init : tensor<3xf64>) {{
    df.map (%j) in (4) {{
      %r = df.read %w[%i, %j] : tensor<3x4xf64>
      %s = df.read %c[%i, %j] : tensor<3x4xf64>
      %p = df.tasklet (%r, %s) : (f64, f64) -> f64 {{
      ^bb0(%u: f64, %v: f64):
        %one = arith.constant 1.0 : f64
        %sq = arith.mulf %u, %u : f64
        %den = arith.addf %one, %sq : f64
        %q = arith.divf %u, %den : f64
        %t = arith.mulf %q, %v : f64
        df.yield %t : f64
      }}
      df.write %p, %o[%i] wcr({kind}) : tensor<3xf64>
    }}
  }} -> tensor<3xf64>
  func.return %m : tensor<3xf64>
}}"""


def _library(op: str) -> str:
    """An nn max/min over computed values (fusion may recompute them)."""
    body = {
        "reduce": 'nn.reduce %q {kind = "KIND", axes = array<i64: 1>} : (tensor<3x8xf64>) -> tensor<3xf64>',
        "window": 'nn.reduce_window %q {kind = "KIND", window_dimensions = array<i64: 1, 3>, window_strides = '
                  'array<i64: 1, 2>, window_dilations = array<i64: 1, 1>, padding_low = array<i64: 0, 1>, '
                  'padding_high = array<i64: 0, 1>} : (tensor<3x8xf64>) -> tensor<3x4xf64>',
        "maximum": "nn.maximum %q, %d : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>",
        "minimum": "nn.minimum %q, %d : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>",
    }[op]
    out = {"reduce": "tensor<3xf64>", "window": "tensor<3x4xf64>"}.get(op, "tensor<3x8xf64>")
    return f"""
func.func @f(%w: tensor<3x8xf64>, %c: tensor<3x8xf64>) -> {out} {{
  %sq = nn.mul %w, %w : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
  %p = nn.mul %sq, %c : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
  %q = nn.add %p, %w : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
  %d = nn.mul %c, %w : (tensor<3x8xf64>, tensor<3x8xf64>) -> tensor<3x8xf64>
  %r = {body}
  func.return %r : {out}
}}"""


def _exact_gradient(text: str, args: list, seed) -> list:
    """The interpreter's gradient (the semantics; exact on these programs)."""
    module = parse_module(text)
    PassManager.parse("autodiff").run(module)
    return list(interpret(module, "f_grad", *args, seed))[1:]


def _gpu(module):
    """The CUDA engine on the simulated device (tests/support/gpu_sim.py), which runs the kernels' own arithmetic."""
    from support.gpu_sim import simulated_engine

    return simulated_engine(module)


def _check(text: str, shapes, out_shape, trials: int = 8, make=ExecutionEngine) -> None:
    module = parse_module(text)
    PassManager.parse("autodiff").run(module)
    engine = make(module)
    for _ in range(trials):
        args = [RNG.standard_normal(s) for s in shapes]
        seed = np.asarray(RNG.standard_normal(out_shape) if out_shape else 0.7)
        expected = _exact_gradient(text, args, seed)
        got = list(engine.invoke("f_grad", *args, seed))[1:]
        for g, e in zip(got, expected, strict=True):
            assert np.count_nonzero(e) > 0
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", ["max", "min"])
def test_wcr_extremum_gradient_on_the_engine(kind):
    _check(_map_reduce(kind, 16), [(16,), (16,)], ())


@pytest.mark.parametrize("kind", ["max", "min"])
def test_nested_wcr_extremum_gradient_on_the_engine(kind):
    _check(_nested_reduce(kind), [(3, 4), (3, 4)], (3,))


@pytest.mark.parametrize("op", ["reduce-max", "reduce-min", "window-max", "window-min", "maximum", "minimum"])
def test_library_extremum_gradient_on_the_engine(op):
    name, _, kind = op.partition("-")
    text = _library(name).replace("KIND", kind)
    _check(text, [(3, 8), (3, 8)], {"reduce": (3,), "window": (3, 4)}.get(name, (3, 8)))


@pytest.mark.parametrize("case", ["wcr-max", "wcr-min", "nested-max", "reduce-max", "window-min", "maximum"])
def test_extremum_gradient_on_the_gpu_lowering(case):
    """The same programs through the GPU pipeline (kernels with atomics for the
    candidates' tie counts), on the simulated device."""
    name, _, kind = case.partition("-")
    if name == "wcr":
        _check(_map_reduce(kind, 16), [(16,), (16,)], (), trials=3, make=_gpu)
    elif name == "nested":
        _check(_nested_reduce(kind), [(3, 4), (3, 4)], (3,), trials=3, make=_gpu)
    else:
        text = _library(name).replace("KIND", kind or "max")
        _check(text, [(3, 8), (3, 8)], {"reduce": (3,), "window": (3, 4)}.get(name, (3, 8)), trials=3, make=_gpu)
