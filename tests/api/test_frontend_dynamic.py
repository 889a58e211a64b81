"""Arrays of data-dependent size as values in the NumPy frontend
(dfc/frontend/dynamic_values.py): np.nonzero, np.argwhere, np.flatnonzero,
np.compress, np.extract, np.unique and a returned x[m], compiled (the engine) against
NumPy, empty selections included."""

import numpy as np
import pytest

import dfc

RNG = np.random.default_rng(33)


def masked_rows(y, m):
    return y[m], y[m] * 2.0 - 1.0


def coordinates(x):
    rows, columns = np.nonzero(x > 0.5)
    return rows, columns, np.argwhere(x < -0.5), np.flatnonzero(x > 0)


def selections(x):
    values, counts = np.unique(np.round(x), return_counts=True)
    return np.compress(x[0] > 0, x, axis=1), np.extract(x > 0, x), values, counts, x[x > 0][::-1] * 2.0


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)


@pytest.mark.parametrize("fill", [None, False])
def test_compiled_selections_equal_numpy(fill):
    """Each form compiled, on random data and on data that selects nothing (0-length results)."""
    x, y, m = RNG.standard_normal((4, 5)), RNG.standard_normal((4, 5, 3)).astype(np.float32), RNG.random((4, 5)) < 0.5
    if fill is not None:
        x, m = np.zeros_like(x), np.zeros_like(m)
    _same(dfc.jit(masked_rows)(y, m), masked_rows(y, m))
    _same(dfc.jit(coordinates)(x), coordinates(x))
    _same(dfc.jit(selections)(x), selections(x))


def computing_with_it(x):
    i = np.flatnonzero(x)
    return i + 1


def test_computing_with_a_data_dependent_array():
    """(More uses, gradients and refusals: test_frontend_dynamic_use.py.)"""
    x = np.array([0.0, 2.0, 0.0, -1.0])
    _same([dfc.jit(computing_with_it)(x)], [computing_with_it(x)])
