"""Computing with arrays of run-time size in the NumPy frontend: `x[m]`,
`np.nonzero`/`np.flatnonzero`/`np.unique` results used further (elementwise
arithmetic with scalars, NumPy's elementwise functions, every reduction, 1-d
sorts, slices, products, gathers by them, rows of a leading-dimension mask)
and arrays whose size depends on a loop variable stored as values.

Values against NumPy (relative tolerance) on the interpreter and compiled
(every kernel with --slow; in CI a sort of x[m] compiled in test_frontend_dynamic.py,
empty selections on the interpreter, np.nonzero's uses in test_numpy_api_coverage.py);
gradients against float64 Richardson differences; located errors for what
is still refused (sizes that agree only at run time, a loop that rebinds an array to one of another run-time size; a
reduction without identity of an empty selection raises at run time)."""

import numpy as np
import pytest
from support.frontend_corpus.check import check

import dfc


def moments(x):
    y = x[x > 0]
    return np.sum(y * y) / y.size, np.mean(x[x > 0]), np.std(x[x > 0]), np.var(np.unique(x)), len(x[x > 0])


def elementwise(x):
    y = x[x > 0]
    return y * 2 + 1, np.exp(x[x > 0]), np.where(y > 1.0, y, 0.0), np.clip(y, 0.2, 1.0) - y.mean()


def extrema(x):
    y = x[x > -0.5]
    return y.max(), np.min(y[1:]), np.argmax(y), np.argmin(y), np.prod(np.unique(x)), np.sum(y[::2] ** 3)


def orders(x):
    y = x[x > -1.0]
    u = np.unique(x)
    return np.sort(y), np.argsort(y, kind="stable"), u[::-1], u[1:] - u[:-1], np.sort(np.unique(x))[-1]


def products(a, b):
    return np.dot(a[a > 0], b[a > 0]), a[b < 0.5] @ b[b < 0.5]


def index_arrays(x):
    idx = np.nonzero(x > 0)[0]
    i = np.flatnonzero(x < 0.5)
    return x[idx] * 2, x[np.nonzero(x > 0)], x[i[::-1]], i[-1] + x[i[0]]


def rows(A, w):
    m = A[:, 0] > 0
    return np.sum(A[m], axis=0), A[m].mean(axis=1), A[m] @ w, A[m].T @ A[m], np.argwhere(A > 0) * 2


def selections_of_selections(x, A):
    y = x[x > 0]
    B = A[A[:, 0] > 0]
    return y[y > 1] * 2, np.nonzero(y > 1)[0], np.sum(B[B[:, 1] > 0], axis=0), np.argwhere(B > 0.5)


def carried(x):
    z = x[x > -1.0]
    for _ in range(2):
        z = np.sort(z) * 2.0 - 0.3  # a run-time size the loop keeps
        z[z > 1.0] = 1.0
    return z


def loop_sizes(x):
    s = 0.0
    for i in range(1, x.shape[0]):
        y = x[:i] * 2.0  # a new array whose size is the loop variable's
        s += np.sum(y * y) / y.size + np.max(y)
    return s


def _args(name, r):
    x = r.standard_normal(9)
    return {
        "moments": (x,), "elementwise": (x,), "extrema": (x,), "orders": (np.round(x, 1),),
        "products": (x, r.random(9)), "index_arrays": (x,), "rows": (r.standard_normal((6, 3)), r.standard_normal(3)),
        "loop_sizes": (x,), "selections_of_selections": (x, r.standard_normal((6, 3))), "carried": (x,),
    }[name]


KERNELS = [moments, elementwise, extrema, orders, products, index_arrays, rows, selections_of_selections, carried,
           loop_sizes]


def _same(got, want):
    got = tuple(got) if isinstance(got, list | tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert np.shape(g) == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-300)
        assert np.asarray(g).dtype.kind == w.dtype.kind


def _interpret(fn, *args):
    f, ir_args, _ = dfc.jit(fn).specialize(*args)
    return dfc.interpret(f.module, f.name, *ir_args)


@pytest.mark.slow
@pytest.mark.parametrize("fn", KERNELS, ids=lambda f: f.__name__)
def test_interpreter_matches_numpy(fn):
    args = _args(fn.__name__, np.random.default_rng(0))
    _same(_interpret(fn, *args), fn(*args))


@pytest.mark.slow
@pytest.mark.parametrize("fn", KERNELS, ids=lambda f: f.__name__)
def test_compiled_matches_numpy(fn):
    args = _args(fn.__name__, np.random.default_rng(1))
    _same(dfc.jit(fn)(*args), fn(*args))


def test_empty_selections():
    """Nothing selected: zero-length arrays and sums as NumPy; the mean is NaN (NumPy warns)."""
    x = -np.ones(5)
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):
        want = (np.sort(x[x > 0]), np.sum(x[x > 0] * 2), np.mean(np.exp(x[x > 0])))

    def empty(x):
        return np.sort(x[x > 0]), np.sum(x[x > 0] * 2), np.mean(np.exp(x[x > 0]))

    got = _interpret(empty, x)
    assert got[0].shape == (0,) and got[1] == want[1] and np.isnan(got[2])


def empty_max(x):
    return np.argmax(np.exp(x[x > 0]))


@pytest.mark.parametrize("engine", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["interpreter", "compiled"])
def test_reduction_without_identity_of_nothing_raises(engine):
    """NumPy's max/argmax of an empty array raise (ValueError); here the read of its first element is an
    IndexError at run time, not a number."""
    x = -np.ones(4)
    with pytest.raises(ValueError):
        empty_max(x)
    with pytest.raises(IndexError):
        dfc.jit(empty_max)(x) if engine else _interpret(empty_max, x)


def sum_of_squares(x):
    return np.sum(x[x > 0] ** 2)  # (a masked form: the others build x[m])


def sorted_squares(x):
    return np.sum(np.sort(x[x > 0])[1:] ** 2)


def sorted_tail(x, y):
    return np.sum(np.sort(x[x > 0])[1:] ** 2) + np.dot(x[x > 0], y[x > 0]) + np.mean(np.exp(x[np.nonzero(x > 0)]))


def row_products(A, w):
    m = A[:, 0] > 0
    return np.sum((A[m] @ w) ** 2) + np.std(A[m])


@pytest.mark.parametrize("fn", [sorted_squares, *(pytest.param(f, marks=pytest.mark.slow)
                                                   for f in (sum_of_squares, sorted_tail, row_products))],
                         ids=lambda f: f.__name__)
def test_gradient_matches_finite_differences(fn):
    r = np.random.default_rng(4)
    x = r.standard_normal(7)
    x = np.where(np.abs(x) < 0.1, 0.5, x)  # no element within the differences' steps of the mask's edge
    args = {sum_of_squares: (x,), sorted_squares: (x,), sorted_tail: (x, r.standard_normal(7)),
            row_products: (np.where(np.abs(r.standard_normal((5, 3))) < 0.1, 0.5, r.standard_normal((5, 3))),
                           r.standard_normal(3))}[fn]
    check(fn, args)


def different_sizes(x):
    return x[x > 0] + x[x < 0]


def shrinking(x):
    z = x[x > -5.0]
    for _ in range(2):  # carried in one buffer: refused, not a stale size
        z = z[z > 0.2] - 0.3
    return z


@pytest.mark.parametrize("fn, message", [
    (different_sizes, r"shapes \(v\) and \(v\) do not broadcast: a size known only at run time"),
    (shrinking, "'z' may change its size in the loop"),
])
def test_refusals_are_located(fn, message):
    with pytest.raises(dfc.FrontendError, match=message) as err:
        dfc.jit(fn).specialize(np.random.rand(3))
    assert f"{__file__}:{fn.__code__.co_firstlineno + (2 if fn is shrinking else 1)}:" in str(err.value)
