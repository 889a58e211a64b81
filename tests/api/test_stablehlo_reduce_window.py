"""`stablehlo.reduce_window` beyond `nn.reduce_window` (`passes.stablehlo_windows`): integers, base
dilations, init values that are not the identity, multiply bodies; against a NumPy transcription of
the spec's definition, the gradient against float64 finite differences. `select_and_scatter` (JAX's
max-pool gradient) against JAX."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dfc import CompileError, interpret
from dfc.compiler.pass_manager import PassManager
from dfc.importers.stablehlo_import import import_stablehlo

rng = np.random.default_rng(7)
UFUNC = {"add": np.add, "maximum": np.maximum, "minimum": np.minimum, "multiply": np.multiply}


def spec_reduce_window(x, init, body, window, strides, base, dilations, padding):
    """The spec's reduce_window: pad (edges and base dilation holes) with `init`, then each output
    element reduces `init` and its window's elements."""
    dilated_shape = [(n - 1) * b + 1 for n, b in zip(x.shape, base)]
    dilated = np.full(dilated_shape, init, x.dtype)
    dilated[tuple(slice(None, None, b) for b in base)] = x
    padded = np.pad(dilated, padding, constant_values=init)
    out_shape = [(p - ((w - 1) * d + 1)) // s + 1 for p, w, d, s in zip(padded.shape, window, dilations, strides)]
    out = np.empty(out_shape, x.dtype)
    for index in itertools.product(*map(range, out_shape)):
        acc = np.asarray(init, x.dtype)
        for offset in itertools.product(*map(range, window)):
            at = tuple(i * s + o * d for i, s, o, d in zip(index, strides, offset, dilations))
            acc = UFUNC[body](acc, padded[at])
        out[index] = acc
    return out


def module(x, body, window, strides, base, dilations, padding, out_shape, element):
    shape = "x".join(map(str, x.shape))
    out = "x".join(map(str, out_shape))

    def arr(v):
        return ", ".join(map(str, v))

    pad = ", ".join(f"[{lo}, {hi}]" for lo, hi in padding)
    return f"""
func.func @rw(%x: tensor<{shape}x{element}>, %init: tensor<{element}>) -> tensor<{out}x{element}> {{
  %r = "stablehlo.reduce_window"(%x, %init) ({{
    ^bb0(%a: tensor<{element}>, %b: tensor<{element}>):
      %c = stablehlo.{body} %a, %b : tensor<{element}>
      stablehlo.return %c : tensor<{element}>
  }}) {{
    window_dimensions = array<i64: {arr(window)}>, window_strides = array<i64: {arr(strides)}>,
    base_dilations = array<i64: {arr(base)}>, window_dilations = array<i64: {arr(dilations)}>,
    padding = dense<[{pad}]> : tensor<{len(window)}x2xi64>
  }} : (tensor<{shape}x{element}>, tensor<{element}>) -> tensor<{out}x{element}>
  func.return %r : tensor<{out}x{element}>
}}"""


CASES = {
    # name: (shape, body, init, window, strides, base, dilations, padding)
    "sum_base_dilated": ((3, 4), "add", 0, (2, 3), (2, 1), (2, 1), (1, 2), ((1, 2), (0, 1))),
    "max_init_not_identity": ((4, 5), "maximum", 3, (3, 2), (1, 2), (1, 2), (1, 1), ((0, 1), (2, 0))),
    "min_strided": ((5, 3), "minimum", 40, (2, 2), (3, 1), (1, 1), (2, 1), ((1, 1), (1, 1))),
    "product_init_two": ((3, 3), "multiply", 2, (2, 2), (1, 1), (2, 2), (1, 1), ((0, 0), (1, 0))),
}


@pytest.mark.parametrize("element, dtype", [("i64", np.int64), pytest.param("i8", np.int8, marks=pytest.mark.slow),
                                            ("f64", np.float64)])
@pytest.mark.parametrize("name", [n if n in ("sum_base_dilated", "max_init_not_identity")
                                  else pytest.param(n, marks=pytest.mark.slow) for n in CASES])
def test_reduce_window_equals_the_spec_definition(name, element, dtype):
    shape, body, init, window, strides, base, dilations, padding = CASES[name]
    x = rng.integers(-60, 60, shape).astype(dtype) if dtype != np.float64 else rng.standard_normal(shape) * 10
    want = spec_reduce_window(x, dtype(init), body, window, strides, base, dilations, padding)
    text = module(x, body, window, strides, base, dilations, padding, want.shape, element)
    got = interpret(import_stablehlo(text), "rw", x, np.asarray(init, dtype))
    assert got.dtype == want.dtype
    if dtype == np.float64:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(got, want)


def test_spec_base_dilation_case():
    """The spec's `reduce_window` interpreter test: base dilation 2, window dilation 3, stride 4."""
    x = np.array([[1, 2], [3, 4], [5, 6]], np.int64)
    text = module(x, "add", (2, 1), (4, 1), (2, 1), (3, 1), ((2, 1), (0, 0)), (2, 2), "i64")
    np.testing.assert_array_equal(interpret(import_stablehlo(text), "rw", x, np.array(0, np.int64)), [[0, 0], [3, 4]])


def test_gradient_of_a_base_dilated_sum_equals_finite_differences():
    shape, body, init, window, strides, base, dilations, padding = CASES["sum_base_dilated"]
    x = rng.standard_normal(shape)
    out_shape = spec_reduce_window(x, 0.0, body, window, strides, base, dilations, padding).shape
    weights = rng.standard_normal(out_shape)
    text = module(x, body, window, strides, base, dilations, padding, out_shape, "f64").replace(
        "func.func @rw", "func.func private @rw") + f"""
func.func @loss(%x: tensor<{shape[0]}x{shape[1]}xf64>) -> tensor<f64> {{
  %init = stablehlo.constant dense<1.5> : tensor<f64>
  %r = func.call @rw(%x, %init) : (tensor<{shape[0]}x{shape[1]}xf64>, tensor<f64>) -> tensor<{out_shape[0]}x{out_shape[1]}xf64>
  %w = stablehlo.constant dense<{weights.tolist()}> : tensor<{out_shape[0]}x{out_shape[1]}xf64>
  %p = stablehlo.multiply %r, %w : tensor<{out_shape[0]}x{out_shape[1]}xf64>
  %z = stablehlo.constant dense<0.0> : tensor<f64>
  %s = stablehlo.reduce(%p init: %z) applies stablehlo.add across dimensions = [0, 1]
    : (tensor<{out_shape[0]}x{out_shape[1]}xf64>, tensor<f64>) -> tensor<f64>
  func.return %s : tensor<f64>
}}"""
    mod = import_stablehlo(text)

    def loss(v):
        return (spec_reduce_window(v, 1.5, body, window, strides, base, dilations, padding) * weights).sum()

    eps = 1e-6
    want = np.zeros(shape)
    for i in np.ndindex(shape):
        d = np.zeros(shape)
        d[i] = eps
        want[i] = (loss(x + d) - loss(x - d)) / (2 * eps)
    np.testing.assert_allclose(interpret(mod, "loss", x), loss(x), rtol=1e-12)
    PassManager.parse("autodiff{func=loss}").run(mod)
    _, grad = interpret(mod, "loss_grad", x, np.array(1.0))
    np.testing.assert_allclose(grad, want, rtol=1e-7, atol=1e-8)


def test_a_window_of_too_many_elements_with_a_general_body_is_refused():
    x = np.zeros((64, 64), np.int64)
    text = module(x, "add", (64, 32), (1, 1), (1, 1), (1, 1), ((0, 0), (0, 0)), (1, 33), "i64")
    with pytest.raises(CompileError, match="reduce_window of 2048 window elements"):
        import_stablehlo(text)


@pytest.mark.parametrize("window, strides, pad", [((1, 2, 2), (1, 2, 2), "VALID"),
                                                   pytest.param((1, 3, 2), (1, 1, 2), "SAME", marks=pytest.mark.slow)])
def test_the_gradient_jax_writes_for_a_max_pool_equals_jax(window, strides, pad):
    """`jax.grad` of a max pool lowers to select_and_scatter (overlapping windows, padding, ties:
    the first maximum of a window takes its gradient)."""
    jax = pytest.importorskip("jax")
    from dfc.importers.stablehlo_import import from_jax

    x = np.round(rng.standard_normal((2, 5, 6)) * 2).astype(np.float32)  # rounded: ties in windows

    def pooled(x, w):
        y = jax.lax.reduce_window(x * w, -np.inf, jax.lax.max, window, strides, pad)
        return (y * jax.numpy.arange(y.size, dtype=np.float32).reshape(y.shape)).sum()

    grad = jax.grad(pooled)
    imported = from_jax(grad, x, np.ones_like(x))
    assert "select_and_scatter" in jax.jit(grad).lower(x, np.ones_like(x)).as_text()
    got = interpret(imported.module, imported.name, x, np.ones_like(x))
    np.testing.assert_array_equal(got, jax.jit(grad)(x, np.ones_like(x)))
