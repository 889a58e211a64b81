"""`out=` of ufuncs (dfc/frontend/ufunc_out.py) against NumPy: positional and
keyword outputs, the input as its own output, overlapping views, a result
broadcast into a larger output, an integer result into a float one, a
temporary output, complex outputs (mandelbrot2's `np.multiply(Z, Z, Z)`); NumPy's
casting and broadcasting refusals, located; the gradient through the write."""

import numpy as np
import pytest

import dfc


def outputs(x, idx):
    Z = x.copy()
    np.multiply(Z, Z, Z)  # mandelbrot2's form
    c = np.zeros(6)
    np.add(x, Z, out=c)
    e = x * 0.1
    r = np.exp(e, out=e)
    return Z, c, r + e


def more_outputs(x, idx):
    t = np.add(x, 1.0, out=x * 2)  # a temporary output: written, returned
    y = x.copy()
    np.add(y[1:], y[:-1], out=y[1:])  # NumPy computes as if the inputs were copied first
    b = np.zeros((2, 6))
    np.multiply(x, 2.0, out=b)
    k = np.zeros(6)
    np.add(idx, idx, out=k[:3])
    m = x.copy()
    np.maximum(m, 3.0, out=(m,))
    return t, y, b, k, m


@pytest.mark.parametrize("fn", [outputs, pytest.param(more_outputs, marks=pytest.mark.slow)])
def test_outputs_match_numpy(fn):
    x, idx = np.linspace(-1.5, 2.0, 6), np.array([0, 2, 5])
    want = fn(x.copy(), idx)
    f, ir_args, _ = dfc.jit(fn).specialize(x.copy(), idx)
    interpreted = dfc.interpret(f.module, f.name, *ir_args)
    for got in (dfc.jit(fn)(x.copy(), idx), interpreted):
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-15, atol=0)


def float_into_int(x):
    k = np.zeros(6, dtype=np.int64)
    np.add(x, 1, out=k)
    return k


def not_broadcastable(x):
    k = np.zeros(3)
    np.add(x, 1.0, out=k)
    return k


def complex_outputs(x):
    Z = x * 1j + x
    C = Z.copy()
    np.multiply(Z, Z, Z)
    np.add(Z, C, Z)
    W = np.zeros(3, dtype=np.complex128)
    np.exp(Z, out=W[::-1])
    R = np.zeros(3, dtype=np.complex128)
    np.add(x, x, out=R)  # a real result into a complex array
    return Z, W, R


@pytest.mark.slow
def test_complex_outputs_match_numpy():
    """(The interpreter returns complex arrays packed: real and imaginary parts on the last axis.)"""
    x = np.array([0.3, -0.5, 0.7])
    want = complex_outputs(x.copy())
    for g, w in zip(dfc.jit(complex_outputs)(x.copy()), want):
        np.testing.assert_allclose(g, w, rtol=1e-15, atol=0)
    f, ir_args, _ = dfc.jit(complex_outputs).specialize(x.copy())
    for g, w in zip(dfc.interpret(f.module, f.name, *ir_args), want):
        np.testing.assert_allclose(g[..., 0] + 1j * g[..., 1], w, rtol=1e-15, atol=0)


def complex_into_float(x):
    Z = x * 1j
    y = np.zeros(6)
    np.add(Z, 1, out=y)
    return y


@pytest.mark.parametrize("fn,message", [
    (float_into_int, "Cannot cast ufunc 'add' output from dtype('float64') to dtype('int64') with casting rule "
                     "'same_kind'"),
    (not_broadcastable, "non-broadcastable output operand of np.add"),
    (complex_into_float, "Cannot cast ufunc 'add' output from a complex dtype to dtype('float64')"),
])
def test_numpy_refusals_are_located(fn, message):
    with pytest.raises(Exception):
        fn(np.arange(6.0))  # NumPy refuses too
    with pytest.raises(dfc.FrontendError) as err:
        dfc.jit(fn)(np.arange(6.0))
    assert message in str(err.value) and "    np.add(" in str(err.value)  # the call's line, shown


def squares(x):
    y = np.zeros_like(x)
    np.multiply(x, x, out=y)
    np.sin(y, out=y)
    return np.sum(y)


@pytest.mark.slow
def test_gradient_through_out():
    x = np.linspace(-1.0, 1.0, 5)
    np.testing.assert_allclose(dfc.grad(squares)(x), np.cos(x * x) * 2 * x, rtol=1e-13, atol=0)
