"""Boolean masks as scientific Python uses them: `x[x < 0] = 0`,
`stddev[stddev <= 0.1] = 1.0`, `A[m] += v`, `y[m] = z[m]`, reductions over
`x[m]` (`np.sum`, `.mean()`, `.max()`, `.std()`, `len`), row masks.

Each is a masked form (`np.where` for writes, a reduction of `where(m, x,
identity)`; dfc/frontend/masks.py): forward against NumPy on the interpreter
and compiled (the result and every argument after the call), gradients
against float64 Richardson differences, and located refusals of what mixes
elements that do not correspond. Uses of `x[m]` as an array of its own are
in test_frontend_dynamic_use.py."""

import numpy as np
import pytest
from support.frontend_corpus.check import check, copies

import dfc


def relu_in_place(x):
    x[x < 0] = 0.0


def clamp_std(stddev):
    stddev[stddev <= 0.1] = 1.0
    return stddev


def masked_stats(x, t):
    m = x > t
    return np.sum(x[m]), x[m].mean(), x[m].max(), len(x[m]), x[m].std(), np.sum((x[m] - 0.5) ** 2)


def masked_updates(A, B):
    A[A > 0.5] += 2.0 * B[A > 0.5]  # the same mask on both sides: elements correspond
    A[B < 0.3] *= 3.0
    C = np.zeros_like(A)
    C[A > 1.0] = np.sqrt(A[A > 1.0])
    return np.sum(C * B) + np.sum(A * A)


def row_mask(A, rows):
    A[rows] = -1.0  # a mask over the leading dimension selects whole rows
    return A[rows].sum() + np.sum(A)


def masked_in_loop(x, steps):
    for _ in range(steps):
        x[x > 1.0] -= 1.0
        x *= 1.5
    return np.sum(x[x > 0.5]) / np.maximum(x[x > 0.5].size, 1)


def int_mask_sum(k, x):
    return np.sum(k[k > 2]), k[x > 0.5].max(), np.mean(k[k > 0])


def masked_loss(x, y):
    keep = (y > 0.2) & (y < 0.9)
    err = x[keep] - y[keep]
    return np.mean(err ** 2) + x[keep].var() + np.min(np.abs(x[x < 0.8]))


def _args(name, r):
    return {
        "relu_in_place": (r.standard_normal(7),),
        "clamp_std": (r.random(6),),
        "masked_stats": (r.random(8), 0.4),
        "masked_updates": (r.random((3, 4)), r.random((3, 4))),
        "row_mask": (r.random((4, 3)), np.array([True, False, True, False])),
        "masked_in_loop": (r.random(6) * 2, 3),
        "int_mask_sum": (np.array([1, 5, 3, -2, 7]), r.random(5)),
        "masked_loss": (r.random(9), r.random(9)),
    }[name]


KERNELS = [relu_in_place, clamp_std, masked_stats, masked_updates, row_mask, masked_in_loop, int_mask_sum, masked_loss]


def _same(got, want):
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    elif want is None:
        assert got is None
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("engine", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["interpreter", "compiled"])
@pytest.mark.parametrize("fn", KERNELS, ids=lambda f: f.__name__)
def test_forward_matches_numpy(fn, engine):
    args = _args(fn.__name__, np.random.default_rng(0))
    want_args, got_args = copies(args), copies(args)
    want = fn(*want_args)
    if engine:
        _same(dfc.jit(fn)(*got_args), want)
        for w, g in zip(want_args, got_args):
            np.testing.assert_allclose(g, w, rtol=1e-12)
    else:
        f, ir_args, _ = dfc.jit(fn).specialize(*got_args)
        got = dfc.interpret(f.module, f.name, *ir_args)
        if want is not None:
            _same(tuple(got) if isinstance(got, list) else got, want)


def stats_loss(x, t):
    a, b, c, _, d, e = masked_stats(x, t)
    return a + b + c + d + e


@pytest.mark.parametrize("fn", [stats_loss, masked_updates, row_mask, masked_loss], ids=lambda f: f.__name__)
def test_gradients_match_finite_differences(fn):
    r = np.random.default_rng(2)
    args = (r.random(8), 0.4) if fn is stats_loss else _args(fn.__name__, r)
    check(fn, args)


def masked_plus_array(x):
    return np.sum(x[x > 0] + x)


def different_masks(x):
    x[x > 0.5] = x[x < 0.5]


def mask_with_index(A):
    A[0, A[0] > 0] = 1.0


@pytest.mark.parametrize("fn, message", [
    (masked_plus_array, r"shapes \(v\) and \(3\) do not broadcast: a size known only at run time"),
    (different_masks, "masked arrays with different masks"),
    (mask_with_index, "a boolean mask is supported as the only index"),
])
def test_refusals_are_located(fn, message):
    with pytest.raises(dfc.FrontendError, match=message) as err:
        dfc.jit(fn).specialize(np.random.rand(3, 3) if fn is mask_with_index else np.random.rand(3))
    line = fn.__code__.co_firstlineno + 1
    assert f"{__file__}:{line}:" in str(err.value)


def ci_compiled(x, y):
    """One compiled function for CI (the sweep above runs compiled with --slow)."""
    relu_in_place(x)
    a, b, c, n, _, _ = masked_stats(x, 0.2)
    return a, b, c, n, masked_loss(x, y)


def test_compiled_in_ci():
    r = np.random.default_rng(5)
    a = (r.standard_normal(8), r.random(8))
    want_args, got_args = copies(a), copies(a)
    _same(dfc.jit(ci_compiled)(*got_args), ci_compiled(*want_args))
    np.testing.assert_allclose(got_args[0], want_args[0], rtol=1e-12)
