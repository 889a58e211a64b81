"""Reversed slices whose bounds depend on loop variables (`x[a:b:-1]`, `x[a:b:-s]`), with NumPy's
clipping (start to at most size - 1, stop to at least "before the first element"), on the interpreter and
the compiled engine, against NumPy, and their gradient against float64 central differences."""

from __future__ import annotations

import numpy as np
from support.frontend_corpus.check import check, copies

import dfc


def reversed_slices(x):
    n = x.shape[0]
    out = np.zeros((n, 11))
    for i in range(n):
        out[i, 0] = np.sum(x[i:2:-1])
        out[i, 1] = np.sum(x[n - 1:i:-1] * 2.0)
        out[i, 2] = np.sum(x[i::-2])
        out[i, 3] = np.sum(x[:i:-1])
        out[i, 4] = np.sum(x[i:i - 3:-2])
        out[i, 5] = np.sum(x[i + 3:i:-3])          # start past the end: clipped to size - 1
        out[i, 6] = np.sum(x[i - 1:-n - 1:-1]) if i > 0 else 0.0
        out[i, 7] = np.sum(x[:i:-2] * x[:i:-2])    # two equal slices have one size
        out[i, 8] = np.sum(x[i - 1:-n - 4:-2]) if i > 0 else 0.0  # stop before -size: clipped to the start
        out[i, 9] = np.sum(x[i + 9:i - 12:-1])
        out[i, 10] = np.sum(x[i + 2::-1])              # start past the end: clipped to size - 1
    return out


def reversed_window(x, y):
    n = x.shape[0]
    for i in range(1, n):
        y[i, :i] = x[i - 1::-1][:i] * 0.5 + x[n - 1:n - 1 - i:-1]
    return y


def reversed_loss(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += np.sum(x[i + 3:i:-2] ** 2) + np.sum(x[i:i - 3:-1] * x[i:i - 3:-1])
    return s


X = np.random.default_rng(3).standard_normal(7)


def test_values_both_engines():
    want = reversed_slices(X)
    f, ir_args, _ = dfc.jit(reversed_slices).specialize(X.copy())
    np.testing.assert_allclose(dfc.interpret(f.module, f.name, *ir_args), want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(dfc.jit(reversed_slices)(X.copy()), want, rtol=1e-12, atol=1e-14)
    y = np.zeros((7, 7))
    np.testing.assert_allclose(dfc.jit(reversed_window)(*copies((X, y))), reversed_window(X, y.copy()), rtol=1e-12)


def test_gradient_both_engines():
    check(reversed_loss, (X,))
    check(reversed_loss, (X,), engine=True)
