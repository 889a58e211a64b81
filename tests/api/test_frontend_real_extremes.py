"""np.expm1, np.exp2, np.sinh, np.cosh and np.hypot as NumPy gives them at the ends of the float range: no
overflow where the result is finite (cosh(710), expm1(88.7), hypot(1e308, 0)), no underflow where it is not 0
(hypot(1e-310, 0)), NumPy's infinities and NaNs, within a few ulp elsewhere; gradients against JAX."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dfc

VALUES = [0.0, -0.0, 1e-3, -0.3, 0.5, -0.7, 1.0, 2.0, -3.0, 25.0, 40.0, 88.5, -89.2, 700.5, 709.9, 710.4, -745.2,
          1e-310, 1e308, -1e308, np.inf, -np.inf, np.nan]


def functions(x, y):
    return np.expm1(x), np.exp2(x), np.sinh(x), np.cosh(x), np.hypot(x, y)


def _close(got, want, ulps):
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    assert np.all(got[~finite & ~np.isnan(want)] == want[~finite & ~np.isnan(want)])
    tolerance = ulps * np.spacing(np.abs(want[finite]))
    assert np.all(np.abs(got[finite] - want[finite]) <= tolerance), (got[finite], want[finite])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_ends_of_the_range_match_numpy(dtype):
    x, y = (np.array(v, dtype=dtype).ravel() for v in np.meshgrid(VALUES, VALUES[::3], indexing="ij"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = functions(x, y)
    for got, w in zip(dfc.jit(functions)(x, y), want):
        _close(np.asarray(got), w, ulps=4)


def loss(x, y):
    return np.sum(np.expm1(x) * np.exp2(y) + np.sinh(x) * np.cosh(y) + np.hypot(x, y))


def test_gradients_match_jax():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    x = np.array([-30.0, -1.0, -0.3, 1e-3, 0.4, 0.6, 2.0, 25.0])
    y = np.array([0.5, -2.0, 3.0, 0.2, -0.4, 0.6, -25.0, 1.0])
    with jax.enable_x64(True):
        want = jax.grad(lambda a, b: jnp.sum(jnp.expm1(a) * jnp.exp2(b) + jnp.sinh(a) * jnp.cosh(b)
                                             + jnp.hypot(a, b)), (0, 1))(x, y)
    for got, w in zip(dfc.grad(loss, (0, 1))(x, y), want):
        np.testing.assert_allclose(got, np.asarray(w), rtol=1e-14, atol=0)
