"""Scatter assignment by integer index arrays and `ufunc.at` in `dfc.jit` NumPy code (frontend/scatter.py).

NumPy is the reference: `x[idx] = v` with repeated indices keeps the last write in index order, `x[idx] += v`
updates a repeated index once (buffered), `np.add.at` accumulates every occurrence, negative indices wrap and
out-of-range ones raise IndexError. Gradients are checked against central finite differences in float64.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import dfc


def scatters(x, X, idx, i, v, rows):
    x[idx] = v  # repeated and negative indices
    x[idx[:3]] += v[:3]  # buffered: a repeated index is updated once
    np.add.at(x, idx, v)  # unbuffered: every occurrence adds
    X[i, 1:] *= rows  # advanced index mixed with a slice
    x[[1, 1]] -= 0.25  # a list is an index array
    return x, X, X[[0, 2]]  # rows 0 and 2 (it read the element X[0, 2] before)


def more_scatters(x, X, idx, i, j, v):
    np.subtract.at(x, idx[1:], 0.5)
    X[i, j] = v[: len(i)]  # two index arrays
    X[i[0], j] -= 1.0  # an integer and an index array
    return x, X


def loss(x, idx, v, w):
    y = x * 1.0
    y[idx] = v * v
    np.add.at(y, idx, v)
    return np.sum(y * y * w)


def _central(f, args, k, eps=1e-6):
    """The finite-difference gradient of f with respect to argument k (float64)."""
    base = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    g = np.zeros_like(base[k])
    for at in np.ndindex(g.shape):
        hi = [a.copy() for a in base]
        lo = [a.copy() for a in base]
        hi[k][at] += eps
        lo[k][at] -= eps
        g[at] = (f(*hi) - f(*lo)) / (2 * eps)
    return g


def _data(rng):
    x = rng.standard_normal(7)
    X = rng.standard_normal((4, 5))
    idx = np.array([0, 3, -1, 3, 0, 5])
    return x, X, idx, np.array([1, 3, 1]), rng.standard_normal(6), rng.standard_normal((3, 4))


def _check(f, data, interpret=False):
    """f's results compiled (and on the interpreter) against NumPy's."""
    ref = f(*(a.copy() for a in data))
    got = [dfc.jit(f)(*(a.copy() for a in data))]
    if interpret:
        fn, ir_args, _ = dfc.jit(f).specialize(*(a.copy() for a in data))
        got.append(dfc.interpret(fn.module, fn.name, *ir_args))
    for results in got:
        for r, g in zip(ref, results, strict=True):
            np.testing.assert_allclose(np.asarray(g), r, rtol=1e-13, atol=1e-13)


def test_scatters_match_numpy_and_out_of_range_raises():
    rng = np.random.default_rng(0)
    data = _data(rng)
    _check(scatters, data, interpret=True)
    f = dfc.jit(scatters)
    bad = list(_data(rng))
    bad[2] = np.array([0, 3, 7, 3, 0, 5])  # 7 is past the end of x (size 7): NumPy's IndexError
    with pytest.raises(IndexError):
        scatters(*(a.copy() for a in bad))
    with pytest.raises(IndexError, match="out of bounds"):
        f(*bad)
    bad[2] = np.array([0, 3, -8, 3, 0, 5])  # -8 wraps to -1: still out of range
    with pytest.raises(IndexError, match="out of bounds"):
        f(*bad)


def test_scatter_gradients_match_finite_differences():
    rng = np.random.default_rng(1)
    x, idx, v, w = rng.standard_normal(6), np.array([0, 3, -1, 3, 0]), rng.standard_normal(5), rng.standard_normal(6)
    gx, gv = dfc.grad(loss, (0, 2))(x, idx, v, w)
    np.testing.assert_allclose(gx, _central(loss, (x, idx, v, w), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gv, _central(loss, (x, idx, v, w), 2), rtol=1e-6, atol=1e-8)


def at_kinds(x, idx, v):
    np.multiply.at(x, idx, v)
    np.maximum.at(x, idx[::-1], v)
    np.minimum.at(x, idx[1:], v[:-1] * 0.5)
    return x


def at_loss(x, idx, v, w):
    y = x * 1.0
    np.multiply.at(y, idx, v)
    np.maximum.at(y, idx[::-1], v * 0.7)
    return np.sum(y * w)


def complex_scatter(Z, Xi, Yi, N_, Z_):
    I = abs(Z) > 1.0
    N_[Xi[I], Yi[I]] = 3
    Z_[Xi[I], Yi[I]] = Z[I] * 2.0
    Z_[Xi, Yi] += 1j
    return N_, Z_


@pytest.mark.slow
def test_ufunc_at_kinds_and_complex_scatter_match_numpy():
    rng = np.random.default_rng(2)
    x, X, idx, i, v, _ = _data(rng)
    _check(more_scatters, (x, X, idx, i, np.array([-1, 2, 4]), v))
    x, idx, v = rng.standard_normal(6), np.array([0, 3, -1, 3, 0, 2]), rng.standard_normal(6)
    v[1] = 0.0
    np.testing.assert_allclose(dfc.jit(at_kinds)(x.copy(), idx, v), at_kinds(x.copy(), idx, v), rtol=1e-14)
    Z = rng.standard_normal(12) + 1j * rng.standard_normal(12)
    Xi, Yi = np.mgrid[0:3, 0:4]
    Xi.shape = Yi.shape = 12
    args = (Z, Xi, Yi, np.zeros((3, 4), np.int64), np.zeros((3, 4), complex))
    ref = complex_scatter(*(a.copy() for a in args))
    got = dfc.jit(complex_scatter)(*(a.copy() for a in args))
    np.testing.assert_array_equal(got[0], ref[0])
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-15)


@pytest.mark.slow
def test_ufunc_at_kinds_gradients_match_finite_differences():
    rng = np.random.default_rng(3)
    x, idx, w = rng.standard_normal(6), np.array([0, 3, -1, 3, 0]), rng.standard_normal(6)
    v = np.array([0.0, 2.0, 1.5, 0.7, -2.0])  # a zero factor: the product's gradient must not divide by it
    gx, gv = dfc.grad(at_loss, (0, 2))(x, idx, v, w)
    np.testing.assert_allclose(gx, _central(at_loss, (x, idx, v, w), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gv, _central(at_loss, (x, idx, v, w), 2), rtol=1e-6, atol=1e-8)


def escape_times(C, N_, itermax):
    """mandelbrot2's shrinking loop on real values (NPBench's style: compact the live points each step)."""
    Z = np.zeros(C.shape)
    Xi = np.arange(C.shape[0])
    for i in range(itermax):
        if not len(Z):
            break
        Z = Z * Z + C
        I = np.abs(Z) > 2.0
        N_[Xi[I]] = i + 1
        np.logical_not(I, I)
        Z = Z[I]
        Xi = Xi[I]
        C = C[I]
    return N_


def mandelbrot2(xmin, xmax, ymin, ymax, xn, yn, itermax, horizon=2.0):
    """NPBench's mandelbrot2_numpy.py (Nicolas P. Rougier, From Numpy to Python, BSD), verbatim."""
    Xi, Yi = np.mgrid[0:xn, 0:yn]
    X = np.linspace(xmin, xmax, xn, dtype=np.float64)[Xi]
    Y = np.linspace(ymin, ymax, yn, dtype=np.float64)[Yi]
    C = X + Y * 1j
    N_ = np.zeros(C.shape, dtype=np.int64)
    Z_ = np.zeros(C.shape, dtype=np.complex128)
    Xi.shape = Yi.shape = C.shape = xn * yn

    Z = np.zeros(C.shape, np.complex128)
    for i in range(itermax):
        if not len(Z):
            break

        # Compute for relevant points only
        np.multiply(Z, Z, Z)
        np.add(Z, C, Z)

        # Failed convergence
        I = abs(Z) > horizon
        N_[Xi[I], Yi[I]] = i + 1
        Z_[Xi[I], Yi[I]] = Z[I]

        # Keep going with those who have not diverged yet
        np.logical_not(I, I)  # np.negative(I, I) not working any longer
        Z = Z[I]  # error
        Xi, Yi = Xi[I], Yi[I]
        C = C[I]
    return Z_.T, N_.T


def _line_of(fn, marker):
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if marker in line)


@pytest.mark.parametrize("fn, args, message, marker", [
    (escape_times, (np.linspace(-2.5, 1.0, 12), np.zeros(12, np.int64), 10), "the branches of this if give 'Z' "
     "different types", "for i in range"),
    (mandelbrot2, (-2.0, 0.5, -1.25, 1.25, 6, 5, 10), "a boolean-masked complex array", "# error"),
])
def test_shrinking_loops_are_located_refusals(fn, args, message, marker):
    with pytest.raises(dfc.FrontendError, match=message) as err:
        dfc.jit(fn)(*args)
    assert f"test_frontend_scatter.py:{_line_of(fn, marker)}:" in str(err.value)


def csr_to_dense(A_row, A_col, A_val, out):
    """In NPBench's style (in place, no return): a scatter at index arrays of run-time size in a loop."""
    for i in range(A_row.size - 1):
        cols = A_col[A_row[i]:A_row[i + 1]]
        out[i, cols] = A_val[A_row[i]:A_row[i + 1]]


def histogram_at(x, bins, counts):
    k = np.floor((x - x.min()) / (x.max() - x.min()) * (bins - 1)).astype(np.int64)
    np.add.at(counts, k, 1)


@pytest.mark.slow
def test_in_place_scatter_kernels_match_numpy():
    rng = np.random.default_rng(4)
    D = rng.standard_normal((5, 6)) * (rng.random((5, 6)) < 0.4)
    rows, cols, vals = np.concatenate([[0], np.cumsum((D != 0).sum(1))]), np.nonzero(D)[1], D[D != 0]
    out = np.zeros((5, 6))
    dfc.jit(csr_to_dense)(rows, cols, vals, out)
    np.testing.assert_array_equal(out, D)
    x = rng.standard_normal(50)
    ref, got = np.zeros(8, np.int64), np.zeros(8, np.int64)
    histogram_at(x, 8, ref)
    dfc.jit(histogram_at)(x, 8, got)
    np.testing.assert_array_equal(got, ref)
