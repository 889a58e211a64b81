"""`stablehlo.convolution` beyond `nn.convolution` (`passes.stablehlo_convolution`): integer
convolutions and batch groups, against JAX (XLA's convolution) and the spec's interpreter tests; the
gradient of a batch-grouped float convolution against `jax.grad`."""

from __future__ import annotations

import numpy as np
import pytest
from support.stablehlo_checks import verdict

from dfc import CompileError, interpret
from dfc.importers.stablehlo_import import from_jax, import_stablehlo

jax = pytest.importorskip("jax")
lax = jax.lax
rng = np.random.default_rng(11)

CASES = {
    # name: (input shape, kernel shape, keyword arguments of lax.conv_general_dilated)
    "nchw_strided_padded": ((2, 3, 6, 5), (4, 3, 3, 2), dict(window_strides=(2, 1), padding=((1, 2), (0, 1)))),
    "nhwc_dilated_grouped": ((1, 7, 6, 4), (3, 2, 2, 6), dict(window_strides=(1, 2), padding="VALID",
                                                               rhs_dilation=(2, 1), feature_group_count=2,
                                                               dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    "transposed": ((1, 2, 4, 3), (3, 2, 3, 3), dict(window_strides=(1, 1), padding=((2, 2), (1, 1)),
                                                    lhs_dilation=(2, 2))),
    "batch_groups": ((4, 2, 4, 3), (4, 2, 2, 2), dict(window_strides=(1, 1), padding="SAME",
                                                      batch_group_count=2)),
}


def _conv(kwargs, preferred=None):
    return lambda x, w: lax.conv_general_dilated(x, w, preferred_element_type=preferred, **kwargs)


def _interpreted(f, *args):
    """`f` imported from JAX, run by the interpreter."""
    imported = from_jax(f, *args)
    return interpret(imported.module, imported.name, *imported.arguments(*args))


@pytest.mark.parametrize("name", [n if n == "nhwc_dilated_grouped" else pytest.param(n, marks=pytest.mark.slow)
                                  for n in CASES])
def test_an_integer_convolution_equals_xla(name):
    x_shape, w_shape, kwargs = CASES[name]
    x = rng.integers(-100, 100, x_shape).astype(np.int32)
    w = rng.integers(-100, 100, w_shape).astype(np.int32)
    f = _conv(kwargs)
    got = _interpreted(f, x, w)
    want = np.asarray(jax.jit(f)(x, w))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_an_i8_convolution_into_i32_widens_by_value():
    x = rng.integers(-128, 128, (1, 2, 5, 5)).astype(np.int8)
    w = rng.integers(-128, 128, (3, 2, 3, 3)).astype(np.int8)
    f = _conv(dict(window_strides=(1, 1), padding="VALID"), np.int32)
    want = np.asarray(jax.jit(f)(x, w))
    assert np.abs(want).max() > 127  # the products do not fit the operands' type
    np.testing.assert_array_equal(_interpreted(f, x, w), want)


def test_a_batch_grouped_float_convolution_and_its_gradient_equal_jax():
    x_shape, w_shape, kwargs = CASES["batch_groups"]
    x, w = rng.standard_normal(x_shape).astype(np.float32), rng.standard_normal(w_shape).astype(np.float32)
    f = _conv(kwargs)

    def loss(x, w):
        return (f(x, w) ** 2).sum()

    imported = from_jax(loss, x, w)
    module = imported.autodiff_module((0, 1))
    value, gx, gw = interpret(module, f"{imported.name}_grad", x, w, np.array(1.0, np.float32))
    np.testing.assert_allclose(value, jax.jit(loss)(x, w), rtol=1e-5)
    want_x, want_w = jax.jit(jax.grad(loss, argnums=(0, 1)))(x, w)
    np.testing.assert_allclose(gx, want_x, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gw, want_w, rtol=1e-4, atol=1e-4)


def test_the_spec_batch_group_case():
    """The spec's `convolution_batch_group_count_4` interpreter test."""
    case = """
func.func @batch_groups() {
  %lhs = stablehlo.constant dense<[[[[1], [2], [5], [6]], [[3], [4], [7], [8]], [[10], [11], [14], [15]],
                                    [[12], [13], [16], [17]]]]> : tensor<1x4x4x1xi64>
  %rhs = stablehlo.constant dense<1> : tensor<1x2x1x4xi64>
  %result = stablehlo.convolution(%lhs, %rhs)
    dim_numbers = [0, b, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [4, 4], lhs_dilate = [2, 2]}
    {batch_group_count = 4 : i64, feature_group_count = 1 : i64}
  : (tensor<1x4x4x1xi64>, tensor<1x2x1x4xi64>) -> tensor<1x1x2x4xi64>
  check.expect_eq_const %result, dense<[[[[1, 3, 10, 12], [5, 7, 14, 16]]]]> : tensor<1x1x2x4xi64>
  func.return
}"""
    assert verdict(case) == "pass"


def test_an_integer_kernel_of_too_many_taps_is_refused():
    text = """
func.func @f(%x: tensor<1x1x64x64xi32>, %w: tensor<1x1x40x40xi32>) -> tensor<1x1x25x25xi32> {
  %r = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {}
    {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
    : (tensor<1x1x64x64xi32>, tensor<1x1x40x40xi32>) -> tensor<1x1x25x25xi32>
  func.return %r : tensor<1x1x25x25xi32>
}"""
    with pytest.raises(CompileError, match="convolution of a 1600-tap kernel"):
        import_stablehlo(text)
