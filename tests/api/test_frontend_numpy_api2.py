"""The NumPy API as scientific code uses it beyond the coverage table:
np.linalg (ridge regression's normal equations), ufunc methods (`np.add.reduce`, `np.minimum.outer`, `np.maximum.accumulate`,
`np.logical_and.reduce`), NumPy scalar types as casts (`np.float64(2.0)`),
`np.mgrid`/`np.ogrid`, and kernels mixing them with the functions of
numpy_ufuncs.py and numpy_creation.py (scans, grids, linspace, arctan2, cov,
row norms), forward against NumPy on the interpreter and compiled, gradients
against float64 Richardson differences, refusals located at the call."""

import numpy as np
import pytest
from support.frontend_corpus.check import check, copies

import dfc


def ufunc_methods(a, b, A):
    return (np.add.reduce(A), np.add.reduce(A, axis=1), np.multiply.reduce(a), np.maximum.reduce(A, axis=None),
            np.minimum.reduce(A, 1, keepdims=True), np.minimum.outer(a, b), np.subtract.outer(a, b),
            np.multiply.outer(A, b), np.arctan2.outer(a, b), np.maximum.accumulate(a), np.add.accumulate(A, axis=1),
            np.minimum.accumulate(A), np.multiply.accumulate(b), np.logical_and.reduce(A > 0.2, axis=0),
            np.logical_or.reduce(a > 0.9))


def scalar_casts(x, n):
    return (np.float64(2.0) * x, np.float32(1.5) + x, np.int64(n) * 2, np.float32(x), np.int32(x * 10),
            np.bool_(x > 0.5), x * np.float64(n), np.float16(0.25) + np.float32(x[0]))


def grids(x):
    a = np.mgrid[0:3, 0:4]
    b = np.mgrid[0:1:5j]
    r, c = np.ogrid[0:3, 1:9:2]
    return a, b, r, c, x * a[1] + r * c, np.mgrid[-1:1:0.5], np.ogrid[0:4]


def stencil_grid(n, h):
    xs = np.linspace(0.0, 1.0, n)
    X, Y = np.meshgrid(xs, xs)
    u = np.sin(np.pi * X) * np.cos(np.pi * Y) * h
    du = np.cumsum(u, axis=0) * (xs[1] - xs[0])
    return np.sum(du * du) + np.max(np.maximum.accumulate(u.ravel()))


def polar(x, y):
    r = np.linalg.norm(np.stack((x, y)), axis=0)
    theta = np.arctan2(y, x)
    c = np.cov(np.stack((r, theta)))
    return np.sum(r * np.cumprod(1.0 + 0.1 * theta)) + np.sum(c)


def running(x):
    best = np.maximum.accumulate(x)
    return np.sum(np.cumsum(x) * best) + np.sum(np.minimum.outer(x, x))


def ridge(X, y, lam):
    """Ridge regression as written in the wild: normal equations through np.linalg."""
    n = X.shape[1]
    w = np.linalg.solve(X.T @ X + lam * np.eye(n), X.T @ y)
    L = np.linalg.cholesky(X.T @ X + np.eye(n))
    return np.sum((X @ w - y) ** 2) + np.log(np.linalg.det(L @ L.T)) + np.sum(np.linalg.inv(L))


CASES = [
    (ridge, lambda r: (r.standard_normal((6, 3)), r.standard_normal(6), 0.5)),
    (ufunc_methods, lambda r: (r.random(4), r.random(3), r.random((3, 4)))),
    (scalar_casts, lambda r: (r.random(3), 3)),
    (grids, lambda r: (r.random((3, 4)),)),
    (stencil_grid, lambda r: (6, 0.7)),
    (polar, lambda r: (r.random(5) + 0.1, r.standard_normal(5))),
    (running, lambda r: (r.standard_normal(6),)),
]


def _same(got, want):
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    assert np.shape(got) == np.shape(want)
    assert np.asarray(got).dtype == np.asarray(want).dtype, (np.asarray(got).dtype, np.asarray(want).dtype)
    np.testing.assert_allclose(got, want, rtol=1e-6 if np.asarray(want).dtype.itemsize < 8 else 1e-12)


@pytest.mark.parametrize("engine", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["interpreter", "compiled"])
@pytest.mark.parametrize("fn, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_forward_matches_numpy(fn, args, engine):
    a = args(np.random.default_rng(0))
    want = fn(*copies(a))
    if engine:
        got = dfc.jit(fn)(*copies(a))
    else:
        f, ir_args, _ = dfc.jit(fn).specialize(*copies(a))
        got = dfc.interpret(f.module, f.name, *ir_args)
        got = tuple(got) if isinstance(got, list) else got
    _same(got, want)


@pytest.mark.parametrize("fn, args", [
    pytest.param(ridge, lambda r: (r.standard_normal((6, 3)), r.standard_normal(6), 0.5), marks=pytest.mark.slow),
    (polar, lambda r: (r.random(5) + 0.1, r.standard_normal(5))),
    (running, lambda r: (r.standard_normal(6),)),
    (stencil_grid, lambda r: (5, 0.7)),
], ids=lambda x: getattr(x, "__name__", ""))
def test_gradients_match_finite_differences(fn, args):
    check(fn, args(np.random.default_rng(1)))


def unknown_ufunc_method(x):
    return np.add.reduceat(x, [0, 2])


def unsupported_scan(x):
    return np.subtract.accumulate(x)


def extended_type(x):
    return np.longdouble(x)


def grid_of_a_variable(x, n):
    return np.mgrid[0:x[0]]


def scan_out(x):
    return np.cumsum(x, out=x)


@pytest.mark.parametrize("fn, message", [
    (unknown_ufunc_method, "np.add.reduceat is not supported"),
    (unsupported_scan, "np.subtract.accumulate is not supported"),
    (extended_type, "NumPy type longdouble is not supported"),
    (grid_of_a_variable, "need constant bounds"),
    (scan_out, "with out= is not supported"),
])
def test_refusals_are_located(fn, message):
    with pytest.raises(dfc.FrontendError, match=message) as err:
        dfc.jit(fn).specialize(*([np.random.rand(3)] + ([2] if fn is grid_of_a_variable else [])))
    assert f"{__file__}:{fn.__code__.co_firstlineno + 1}:" in str(err.value)


def ci_compiled(a, b, A):
    """One compiled function for CI (the sweep above runs compiled with --slow)."""
    return np.minimum.outer(a, b), np.maximum.accumulate(a), np.add.reduce(A, axis=1), running(a), polar(a + 0.1, a)


def test_compiled_in_ci():
    r = np.random.default_rng(6)
    a = (r.random(4), r.random(3), r.random((3, 4)))
    _same(dfc.jit(ci_compiled)(*copies(a)), ci_compiled(*copies(a)))
