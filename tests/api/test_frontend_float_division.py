"""Float `%` and `//` as NumPy computes them (npy_divmod: fmod's exact remainder, moved by the divisor
where the signs differ), on values where `x - floor(x / y) * y` is wrong: rounded quotients (1.0 % 0.1),
huge dividends, infinite divisors, signed zeros, division by zero; and their gradients against JAX."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dfc

SPECIAL = [0.0, -0.0, 0.1, -0.1, 1.0, -1.0, 1.5, -2.5, 3.0, 7.0, 1e17 + 8, -1e300, np.inf, -np.inf, np.nan, 5e-324]


def mod_and_floordiv(x, y):
    return x % y, x // y, x % 0.1, x // 0.1, 2.5 % x


def _same(got, want):
    """Equal bits but NaN's payload: values, signs of zeros, NaN positions."""
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    keep = ~np.isnan(want)
    np.testing.assert_array_equal(got[keep], want[keep])
    np.testing.assert_array_equal(np.signbit(got[keep]), np.signbit(want[keep]))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_pair_of_special_values_matches_numpy(dtype):
    x, y = (np.array(v, dtype=dtype) for v in np.meshgrid(SPECIAL, SPECIAL, indexing="ij"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = mod_and_floordiv(x, y)
        got = dfc.jit(mod_and_floordiv)(x, y)
    for g, w in zip(got, want):
        _same(np.asarray(g), w)


def loss(x, y):
    return np.sum(np.exp(x % y) * (x // y) + (x % 1.5) * y)


def test_gradients_match_jax():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    rng = np.random.default_rng(0)
    x = rng.uniform(-5.0, 5.0, 16)
    y = rng.uniform(0.5, 2.0, 16) * rng.choice([-1.0, 1.0], 16)
    with jax.enable_x64(True):
        want = jax.grad(lambda a, b: jnp.sum(jnp.exp(a % b) * (a // b) + (a % 1.5) * b), (0, 1))(x, y)
    got = dfc.grad(loss, (0, 1))(x, y)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-13, atol=1e-14)
