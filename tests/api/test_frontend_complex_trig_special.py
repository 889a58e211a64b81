"""C99's special values (Annex G) of the complex trigonometric and hyperbolic functions and their inverses
(dfc/frontend/complex_special_values.py) against NumPy on every pair of parts from
{0, -0, 1, -1, 2, -0.5, 800, -800, inf, -inf, NaN}: infinities, NaN and the signs of zero parts exactly,
finite values within 4 ulp of the parts' type (`assert_c99`). Before, 216 of these 1452 values differed, some by a finite
number (arctanh(x + i inf) was 3pi/8 i, arccos(inf + i inf) pi/2). The interpreter checks arctanh at the
special parts in the default run; every function compiled, in both widths, with --slow."""

import itertools

import numpy as np
import pytest

import dfc

PARTS = (0.0, -0.0, 1.0, -1.0, 2.0, -0.5, 800.0, -800.0, np.inf, -np.inf, np.nan)
Z = np.array([complex(a, b) for a, b in itertools.product(PARTS, PARTS)])
NAMES = ("sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh")


def trigonometric(z):
    return np.sin(z), np.cos(z), np.tan(z), np.arcsin(z), np.arccos(z), np.arctan(z)


def hyperbolic(z):
    return np.sinh(z), np.cosh(z), np.tanh(z), np.arcsinh(z), np.arccosh(z), np.arctanh(z)


def inverse(z):
    return np.arctanh(z)


def assert_c99(got, want):
    """NaN where NumPy has NaN, the same infinities and signed zeros, other values within 4 ulp of the parts'
    type."""
    eps = np.finfo(got.real.dtype).eps
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        special = np.isinf(w) | (w == 0)
        np.testing.assert_array_equal(g[special], w[special])
        np.testing.assert_array_equal(np.signbit(g[special]), np.signbit(w[special]))
        finite = np.isfinite(w) & ~special
        np.testing.assert_allclose(g[finite], w[finite], rtol=4 * eps, atol=0)


def _check(fn, got, z):
    with np.errstate(all="ignore"):
        want = fn(z)
    for g, w in zip(got, want, strict=True):
        g = np.asarray(g)
        if not np.iscomplexobj(g):  # the interpreter's packed (..., 2) parts
            g = np.ascontiguousarray(g).view(w.dtype)[..., 0]
        assert g.dtype == w.dtype
        assert_c99(g, w)


def test_interpreter_arctanh():
    """(x + i inf was 3pi/8 i.) The special parts only: the interpreter is slow."""
    z = np.array([complex(a, b) for a, b in itertools.product(PARTS[:2] + PARTS[-3:], PARTS[:2] + PARTS[-3:])])
    f, args, _ = dfc.jit(inverse).specialize(z)
    _check(lambda z: (inverse(z),), (dfc.interpret(f.module, f.name, *args),), z)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("fn", [trigonometric, hyperbolic], ids=lambda f: f.__name__)
def test_compiled(fn, dtype):
    z = Z.astype(dtype)
    _check(fn, dfc.jit(fn)(z), z)
