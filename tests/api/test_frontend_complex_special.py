"""C99's special values (Annex G) of complex np.exp, np.log, np.sqrt and np.abs (dfc/frontend/complex_values.py)
against NumPy on every pair of parts from {0, -0, 1, -1, inf, -inf, NaN}: infinities, NaN and the signs of zero
parts exactly, finite values relatively; compiled and interpreted."""

import itertools

import numpy as np

import dfc

PARTS = (0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan)
Z = np.array([complex(a, b) for a, b in itertools.product(PARTS, PARTS)])


def functions(z):
    return np.exp(z), np.log(z), np.sqrt(z), np.abs(z)


def assert_c99(got, want):
    """NaN where NumPy has NaN, the same infinities and signed zeros, other values within 4 ulp."""
    for g, w in ((got.real, want.real), (got.imag, want.imag)) if np.iscomplexobj(want) else ((got, want),):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        special = np.isinf(w) | (w == 0)
        np.testing.assert_array_equal(g[special], w[special])
        np.testing.assert_array_equal(np.signbit(g[special]), np.signbit(w[special]))
        finite = np.isfinite(w) & ~special
        np.testing.assert_allclose(g[finite], w[finite], rtol=4 * np.finfo(np.float64).eps, atol=0)


def test_special_values_match_numpy():
    with np.errstate(all="ignore"):
        want = functions(Z)
    f = dfc.jit(functions)
    ir, args, _ = f.specialize(Z)
    for got in (f(Z), dfc.interpret(ir.module, ir.name, *args)):
        for g, w in zip(got, want, strict=True):
            g = np.asarray(g)
            if np.iscomplexobj(w) and not np.iscomplexobj(g):  # the interpreter's packed (..., 2) parts
                g = np.ascontiguousarray(g).view(np.complex128)[..., 0]
            assert_c99(g, w)
