"""nn.reduce_window (dialects/nn_window.py): pooling forward against a numpy
reference through the interpreter and the engine, gradients against float64
finite differences and PyTorch's pooling."""

import itertools

import numpy as np
import pytest
import torch

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.interpreter import interpret
from dfc.dialects.diagnostics import CompileError
from support.autodiff_checks import check_gradient
from tests.dialects.test_nn_elementwise import _t, check

RNG = np.random.default_rng(17)


def _arr(values) -> str:
    return f"array<i64: {', '.join(map(str, values))}>"


def numpy_reduce_window(x, kind, window, strides, dilations, low, high):
    identity = {"max": -np.inf, "min": np.inf, "sum": 0.0, "mean": 0.0}[kind]
    xp = np.pad(x, list(zip(low, high)), constant_values=identity)
    out_shape = [(p - (w - 1) * r - 1) // s + 1 for p, w, s, r in zip(xp.shape, window, strides, dilations)]
    out = np.empty(out_shape, dtype=x.dtype)
    for o in np.ndindex(*out_shape):
        index = tuple(slice(ok * s, ok * s + (w - 1) * r + 1, r) for ok, s, w, r in zip(o, strides, window, dilations))
        block = xp[index]
        out[o] = {"max": np.max, "min": np.min, "sum": np.sum, "mean": np.sum}[kind](block)
        if kind == "mean":
            out[o] /= np.prod(window)
    return out


def _module(shape, kind, window, strides, dilations, low, high, dtype="f32"):
    out = [(d + lo + hi - (w - 1) * r - 1) // s + 1 for d, w, s, r, lo, hi in zip(shape, window, strides, dilations, low, high)]
    attrs = (
        f'{{kind = "{kind}", window_dimensions = {_arr(window)}, window_strides = {_arr(strides)}, '
        f"window_dilations = {_arr(dilations)}, padding_low = {_arr(low)}, padding_high = {_arr(high)}}}"
    )
    x, r = _t(shape, dtype), _t(out, dtype)
    return f"""func.func @f(%x: {x}) -> {r} {{
  %r = nn.reduce_window %x {attrs} : ({x}) -> {r}
  func.return %r : {r}
}}"""


# NCHW pooling windows: (shape, window, strides, dilations, low, high)
WINDOWS = {
    "pool2x2": ([1, 2, 4, 6], [1, 1, 2, 2], [1, 1, 2, 2], [1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]),
    "overlap_padded": ([2, 1, 5, 5], [1, 1, 3, 3], [1, 1, 2, 2], [1, 1, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]),
    "dilated": ([1, 1, 7, 6], [1, 1, 2, 3], [1, 1, 1, 2], [1, 1, 3, 2], [0, 0, 0, 1], [0, 0, 2, 0]),
    "1d_over_all": ([6], [6], [1], [1], [0], [0]),
}


@pytest.mark.parametrize("kind", ["max", "min", "sum", "mean"])
@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_reduce_window(kind, name):
    shape, *geometry = WINDOWS[name]
    x = RNG.standard_normal(shape).astype(np.float32)
    check(_module(shape, kind, *geometry), [x], numpy_reduce_window(x, kind, *geometry), rtol=1e-5)


@pytest.mark.parametrize("kind", ["max", "sum", "mean"])
@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_reduce_window_gradient(kind, name):
    shape, *geometry = WINDOWS[name]
    x = RNG.standard_normal(shape)
    check_gradient(_module(shape, kind, *geometry, dtype="f64"), "f", [x], [0])


def _grad(text, x, seed):
    module = parse_module(text)
    PassManager.parse("autodiff,expand-library").run(module)
    compiled = parse_module(text)
    PassManager.parse("autodiff").run(compiled)
    return interpret(module, "f_grad", x, seed)[1], ExecutionEngine(compiled).invoke("f_grad", x, seed)[1]


def test_max_pool_ties_go_to_the_first_element_like_pytorch():
    """Overlapping 3x3 windows, stride 2, on data with many ties: the same gradient as torch's max_pool2d."""
    x = np.round(RNG.standard_normal((1, 1, 7, 7)) * 0.7)
    text = _module([1, 1, 7, 7], "max", [1, 1, 3, 3], [1, 1, 2, 2], [1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0], "f64")
    seed = RNG.standard_normal((1, 1, 3, 3))
    tx = torch.tensor(x, requires_grad=True)
    torch.nn.functional.max_pool2d(tx, 3, 2).backward(torch.tensor(seed))
    for got in _grad(text, x, seed):
        np.testing.assert_allclose(got, tx.grad.numpy(), rtol=1e-12)


def test_avg_pool_matches_pytorch_with_padding():
    x = RNG.standard_normal((2, 3, 6, 5))
    text = _module([2, 3, 6, 5], "mean", [1, 1, 3, 3], [1, 1, 2, 2], [1, 1, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1], "f64")
    tx = torch.tensor(x, requires_grad=True)
    y = torch.nn.functional.avg_pool2d(tx, 3, 2, padding=1, count_include_pad=True)
    seed = RNG.standard_normal(tuple(y.shape))
    y.backward(torch.tensor(seed))
    module = parse_module(text)
    PassManager.parse("expand-library").run(module)
    np.testing.assert_allclose(interpret(module, "f", x), y.detach().numpy(), rtol=1e-12)
    for got in _grad(text, x, seed):
        np.testing.assert_allclose(got, tx.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    "geometry,message",
    [
        (([4], "avg", [2], [1], [1], [0], [0]), "kind must be one of max, min, sum, mean, got 'avg'"),
        (([4], "max", [2], [0], [1], [0], [0]), "dimension 0: window size, stride and dilation must be at least 1"),
        (([4], "max", [2], [1], [1], [-1], [0]), "dimension 0: padding must be non-negative"),
        (([4], "max", [3], [1], [2], [0], [0]), "dimension 0: the window spans 5 elements, more than the padded size 4"),
    ],
)
def test_verifier_messages(geometry, message):
    shape, kind, window, strides, dilations, low, high = geometry
    attrs = (
        f'{{kind = "{kind}", window_dimensions = {_arr(window)}, window_strides = {_arr(strides)}, '
        f"window_dilations = {_arr(dilations)}, padding_low = {_arr(low)}, padding_high = {_arr(high)}}}"
    )
    text = f"""func.func @f(%x: tensor<4xf32>) -> tensor<1xf32> {{
  %r = nn.reduce_window %x {attrs} : (tensor<4xf32>) -> tensor<1xf32>
  func.return %r : tensor<1xf32>
}}"""
    with pytest.raises(CompileError, match=message):
        parse_module(text)


def test_windows_cover_every_padded_position_once_per_window():
    """sum over windows of ones counts, per input element, the windows that contain it."""
    shape, *geometry = WINDOWS["dilated"]
    window, strides, dilations, low, high = geometry
    x = np.ones(shape, dtype=np.float32)
    counts = np.zeros([d + lo + hi for d, lo, hi in zip(shape, low, high)])
    out = numpy_reduce_window(x, "sum", *geometry)
    for o in np.ndindex(*out.shape):
        for w in itertools.product(*map(range, window)):
            counts[tuple(ok * s + wk * r for ok, s, wk, r in zip(o, strides, w, dilations))] += 1
    text = _module(shape, "sum", *geometry)
    seed = np.ones(out.shape)
    for got in _grad(text.replace("f32", "f64"), x.astype(np.float64), seed):
        inner = tuple(slice(lo, lo + d) for lo, d in zip(low, shape))
        np.testing.assert_array_equal(got, counts[inner])
