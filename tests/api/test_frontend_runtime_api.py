"""The NumPy API on arrays whose size is known only at run time (`x[m]` of a boolean mask, rows `A[m]`):
sorts along any axis (`np.sort`, `np.argsort`, `axis=None`), scans (`np.cumsum`, `np.cumprod`, along each
axis and flattened), order statistics (`np.median`, `np.percentile`, `np.quantile`, with and without an
axis), joins (`np.concatenate`, `np.hstack`, `np.vstack`, `np.stack` of run-time-sized parts), reshapes
with -1 (`reshape`, `np.ravel`) and reductions along an axis.

Values against NumPy on the interpreter (every kernel with --slow, one in the default run) and compiled
(with --slow; the bitonic sort compiled by default in tests/dialects/test_nn_sort_dynamic.py), gradients
of a loss through each of them against float64 Richardson differences (`check`, one by default), located
refusals for what NumPy only checks at run time."""

import numpy as np
import pytest
from support.frontend_corpus.check import check

import dfc


def sorts(x, A):
    B = A[A[:, 0] > 0]
    return np.sort(B, axis=0), np.argsort(B, axis=1, kind="stable"), np.sort(B, axis=None), np.argsort(x[x > 0])


def scans(x, A):
    y, B = x[x > 0], A[A[:, 0] > 0]
    return np.cumsum(y), np.cumprod(y), y - np.cumsum(y), np.cumsum(B, axis=0), np.cumprod(B, axis=1), np.cumsum(B)


def order_statistics(x, A):
    y, B = x[x > -0.5], A[A[:, 0] > 0]
    return (np.median(y), np.median(y[1:]), np.percentile(y, 30.0), np.quantile(y, 0.75), np.median(B, axis=0),
            np.percentile(B, 60.0, axis=1), np.median(B), np.quantile(B, 1.0, axis=0, keepdims=True))


def joins(x, A):
    y, B = x[x > 0], A[A[:, 0] > 0]
    return (np.concatenate([y, x]), np.hstack((y, y[::-1])), np.concatenate((y, x[x < 0])), np.stack([y, 2 * y]),
            np.stack([y, y], axis=1), np.vstack((y, y)), np.concatenate([B, B[::-1] * 2]), np.concatenate([B, B], 1))


def reshapes(x, A):
    B = A[A[:, 0] > 0]
    return B.reshape(-1), np.reshape(B, (-1, 1)), B.reshape(-1, 3, 1), np.ravel(B), x[x > 0].reshape(1, -1)


def reductions(x, A):
    B = A[A[:, 0] > 0]
    return (np.sum(B, axis=0), B.max(axis=0), np.mean(B, axis=1), np.argmax(B, axis=0), np.prod(B, axis=1),
            np.std(B, axis=0, keepdims=True), np.min(B, axis=1), np.argmin(B, axis=1))


KERNELS = [sorts, scans, order_statistics, joins, reshapes, reductions]


def _args(r):
    return r.standard_normal(9), r.standard_normal((7, 3))


def _same(got, want):
    got = tuple(got) if isinstance(got, list | tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert np.shape(g) == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-300)
        assert np.asarray(g).dtype == w.dtype


def _interpret(fn, *args):
    f, ir_args, _ = dfc.jit(fn).specialize(*args)
    return dfc.interpret(f.module, f.name, *ir_args)


@pytest.mark.parametrize("fn", [joins, *(pytest.param(f, marks=pytest.mark.slow) for f in KERNELS if f is not joins)],
                         ids=lambda f: f.__name__)
def test_interpreter_matches_numpy(fn):
    args = _args(np.random.default_rng(0))
    _same(_interpret(fn, *args), fn(*args))


@pytest.mark.slow
@pytest.mark.parametrize("fn", KERNELS, ids=lambda f: f.__name__)
def test_compiled_matches_numpy(fn):
    for seed in (1, 2):  # different counts selected
        args = _args(np.random.default_rng(seed))
        _same(dfc.jit(fn)(*args), fn(*args))


@pytest.mark.slow
def test_compiled_empty_selection():
    """Nothing selected: empty sorts, scans, joins and reshapes as NumPy's."""
    x, A = -np.ones(5), -np.ones((4, 3))
    for fn in (sorts, scans, joins, reshapes):
        _same(dfc.jit(fn)(x, A), fn(x, A))


def sorted_rows(x, A):
    B = A[A[:, 0] > 0]
    return np.sum(np.sort(B, axis=0)[1:] * np.arange(3.0)) + np.sum(np.sort(B, axis=1)[:, -1] ** 2)


def scanned(x, A):
    y = x[x > 0]
    return np.sum(np.cumsum(y) ** 2) + np.sum(np.cumprod(A[A[:, 0] > 0], axis=1)[:, -1])


def medians(x, A):
    y = x[x > -0.5]
    return np.median(y) + np.percentile(y, 30.0) * 2 + np.sum(np.median(A[A[:, 0] > 0], axis=0) ** 2)


def joined(x, A):
    y, B = x[x > 0], A[A[:, 0] > 0]
    return np.sum(np.cumsum(np.concatenate([y, x])) ** 2) + np.sum(np.stack([y, y ** 2]) ** 2) + \
        np.sum(np.cumsum(B.reshape(-1)) ** 2)


@pytest.mark.parametrize("fn", [sorted_rows, *(pytest.param(f, marks=pytest.mark.slow)
                                               for f in (medians, scanned, joined))], ids=lambda f: f.__name__)
def test_gradient_matches_finite_differences(fn):
    r = np.random.default_rng(4)
    x, A = r.standard_normal(9), r.standard_normal((7, 3))
    x = np.where(np.abs(x) < 0.1, 0.5, x)  # no element within the differences' steps of a mask's edge
    x = np.where(np.abs(x + 0.5) < 0.1, 0.7, x)
    A = np.where(np.abs(A) < 0.1, 0.5, A)
    check(fn, (x, A))


def odd_rows(A):
    return A[A[:, 0] > 0].reshape(-1, 2)


def no_minus_one(A):
    return A[A[:, 0] > 0].reshape(6, 3)


def different_parts(x):
    return np.stack([x[x > 0], x[x < 0]])


@pytest.mark.parametrize("fn, message", [
    (odd_rows, r"must be a multiple of the new ones \(2\)"),
    (no_minus_one, r"give the run-time dimension as -1"),
    (different_parts, "np.stack takes arrays of one shape"),
])
def test_refusals_are_located(fn, message):
    with pytest.raises(dfc.FrontendError, match=message) as err:
        dfc.jit(fn).specialize(np.random.rand(6, 3) if fn is not different_parts else np.random.rand(5))
    assert f"{__file__}:{fn.__code__.co_firstlineno + 1}:" in str(err.value)
