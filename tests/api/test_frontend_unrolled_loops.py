"""Loops unrolled because their variable is an exponent (`R ** s` in sizes:
a Stockham FFT's reshapes), and the liveness that lets an array be updated
while a reshape of it is named but no longer read (dfc/frontend/liveness.py):
values against NumPy's FFT (with --slow) and NumPy itself on the interpreter
(complex results packed), the reshape still read later refused, located."""

import numpy as np
import pytest

import dfc


def stockham(x, R, K):
    N = R ** K
    y = x.copy()
    i_, j_ = np.mgrid[0:R, 0:R]
    dft = np.exp(-2j * np.pi * i_ * j_ / R)
    for s in range(K):
        view = np.reshape(y, (R ** s, R, R ** (K - s - 1)))  # shares y's memory; not read after y's update
        perm = np.transpose(view, (1, 0, 2))
        k = np.arange(R)[:, None] * np.arange(R ** s)[None, :]
        twiddled = np.reshape(perm * np.exp(-2j * np.pi * k / R ** (s + 1))[:, :, None], (R, N // R))
        y[:] = np.reshape(dft @ twiddled, (N,))
    return y


def _interpret(fn, *args):
    f, ir_args, _ = dfc.jit(fn).specialize(*args)
    return dfc.interpret(f.module, f.name, *ir_args)


@pytest.mark.slow
@pytest.mark.parametrize("R, K", [(2, 3), (4, 2), (3, 3)])
def test_stockham_fft_matches_numpy(R, K):
    x = np.random.default_rng(R * K).standard_normal(R ** K) + 1j * np.random.default_rng(K).standard_normal(R ** K)
    got = _interpret(stockham, x, R, K)
    want = np.fft.fft(x)
    np.testing.assert_allclose(stockham(x, R, K), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[:, 0] + 1j * got[:, 1], want, rtol=1e-12, atol=1e-12)


def read_after_update(x):
    for s in range(2):  # unrolled (s is an exponent)
        v = np.reshape(x, (2, 3))
        x[:] = x * 2.0
        x[0] += v[0, 0] * 2 ** s  # v would see the update in NumPy: still refused


def powers_of_two(x):
    total = 0.0
    for k in range(4):  # unrolled: the reshape's sizes are constants
        rows = np.reshape(x, (2 ** k, 8 // 2 ** k))
        total += np.sum(np.max(rows, axis=1))
        x[:] = x * 0.5  # rows is not read again (the next copy rebinds it first): no stale view
    return total, x


def test_sizes_from_powers_of_the_loop_variable():
    x = np.random.default_rng(1).standard_normal(8)
    got = _interpret(powers_of_two, x.copy())
    want = powers_of_two(x.copy())
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


def test_reshape_read_after_an_update_is_refused():
    with pytest.raises(dfc.FrontendError, match="views of the same memory in NumPy") as err:
        dfc.jit(read_after_update).specialize(np.arange(6.0))
    assert f"{__file__}:{read_after_update.__code__.co_firstlineno + 3}:" in str(err.value)
