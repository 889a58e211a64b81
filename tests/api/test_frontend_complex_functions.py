"""The trigonometric and hyperbolic functions of complex values and their inverses
(dfc/frontend/complex_functions.py) and the non-linear reductions (complex_reductions.py), against NumPy's
complex128: relatively per element in the interior, near the branch cuts (1e-12 off them) and on them (the
sign of a zero part picks the side, as in NumPy); gradients of real losses through them against float64
Richardson differences of the NumPy function. The interpreter is the semantics; one function is compiled
in CI, all with --slow."""

import re

import numpy as np
import pytest
from support.frontend_corpus.check import gradient_error, richardson_gradient

import dfc

RNG = np.random.default_rng(11)
INTERIOR = RNG.uniform(-3, 3, 6) + 1j * RNG.uniform(-3, 3, 6)
NEAR_CUTS = np.array([2 + 1e-12j, 2 - 1e-12j, -2 + 1e-12j, -2 - 1e-12j, 1e-12 + 2j, -1e-12 + 2j, 1e-12 - 2j,
                      -1e-12 - 2j, 0.6 + 0.8j, 1e-9 + 1e-9j, 40 - 1e-3j, -30 + 2j])
ON_CUTS = np.array([complex(2, 0.0), complex(2, -0.0), complex(-2, 0.0), complex(-2, -0.0), complex(0.0, 2),
                    complex(-0.0, 2), complex(0.0, -2), complex(-0.0, -2), complex(-4, -0.0), complex(0.5, -0.0)])
Z = np.concatenate([INTERIOR, NEAR_CUTS, ON_CUTS])

CI_UFUNCS = ("tanh", "arccos", "arctanh")  # one of each formula family (sin: compiled below; --slow: all)


def interpreted(fn, *args):
    f, ir_args, _ = dfc.jit(fn).specialize(*args)
    out = dfc.interpret(f.module, f.name, *ir_args)
    return out if isinstance(out, tuple) else (out,)


def as_complex(packed):
    packed = np.ascontiguousarray(packed)
    return packed.view(np.complex128)[..., 0]


def assert_close(got, want, rtol=1e-13):
    """Each element within `rtol` of NumPy's relatively to its modulus; a zero part of NumPy's with its sign."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = np.abs(want)
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        np.testing.assert_array_less(np.abs(g - w), rtol * scale + 1e-300)
        zero = w == 0
        np.testing.assert_array_equal(np.signbit(g[zero]), np.signbit(w[zero]))


def sin_of(z):
    return np.sin(z)


def cos_of(z):
    return np.cos(z)


def tan_of(z):
    return np.tan(z)


def sinh_of(z):
    return np.sinh(z)


def cosh_of(z):
    return np.cosh(z)


def tanh_of(z):
    return np.tanh(z)


def arcsin_of(z):
    return np.arcsin(z)


def arccos_of(z):
    return np.arccos(z)


def arctan_of(z):
    return np.arctan(z)


def arcsinh_of(z):
    return np.arcsinh(z)


def arccosh_of(z):
    return np.arccosh(z)


def arctanh_of(z):
    return np.arctanh(z)


def sqrt_of(z):
    return np.sqrt(z)


KERNELS = {f.__name__[:-3]: f for f in (sin_of, cos_of, tan_of, sinh_of, cosh_of, tanh_of, arcsin_of, arccos_of,
                                        arctan_of, arcsinh_of, arccosh_of, arctanh_of, sqrt_of)}


@pytest.mark.parametrize("name", [n if n in CI_UFUNCS else pytest.param(n, marks=pytest.mark.slow) for n in KERNELS])
def test_ufunc_matches_numpy_in_the_interior_and_at_the_branch_cuts(name):
    (got,) = interpreted(KERNELS[name], Z)
    assert_close(as_complex(got), getattr(np, name)(Z))


def reductions(z, A):
    return (np.prod(z), np.prod(A, axis=1), np.prod(A, axis=0, keepdims=True), A.prod(keepdims=True),
            np.cumprod(z), np.cumprod(A, axis=1), A.cumprod(),
            np.max(z), np.min(z), np.max(A, axis=0), A.min(axis=1, keepdims=True), np.maximum(z, z[::-1]),
            np.minimum(z, 1j), np.var(A), np.var(A, axis=0, ddof=1), A.std(axis=1, keepdims=True), np.std(z),
            np.linalg.norm(A), np.linalg.norm(A, axis=1), np.linalg.norm(z, 1), np.linalg.norm(A, np.inf, axis=1),
            np.linalg.norm(z, ord=-np.inf), np.mean(A, axis=1))


def few_reductions(z, A):
    return np.prod(A, axis=1), np.cumprod(z), np.max(A, axis=0), np.var(A, axis=0, ddof=1), np.linalg.norm(A, axis=1)


def ties_and_nans(z, w):
    return np.max(z), np.min(z), np.max(w), np.min(w)


@pytest.mark.parametrize("fn", [few_reductions, pytest.param(reductions, marks=pytest.mark.slow)])
def test_reductions_match_numpy(fn):
    z = RNG.standard_normal(7) + 1j * RNG.standard_normal(7)
    A = RNG.standard_normal((3, 5)) + 1j * RNG.standard_normal((3, 5))
    got = interpreted(fn, z, A)
    want = fn(z, A)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        w = np.asarray(w)
        g = as_complex(g) if w.dtype.kind == "c" else np.asarray(g)
        assert g.shape == w.shape, (k, g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-13 * np.abs(w).max(), err_msg=f"result {k}")


def test_max_and_min_order_lexicographically_and_keep_the_first_nan():
    """Equal real parts are ordered by the imaginary ones; a NaN in either part is kept, the first one when
    there are several (NumPy's maximum.reduce)."""
    z = np.array([1 + 5j, 2 - 1j, 2 + 3j, 2 + 3j, -3 + 9j, 2 + 7j, -3 - 2j, 1.5 + 8j])
    w = np.array([1 + 5j, complex(np.nan, 1), 2 + 7j, complex(0, np.nan), complex(np.nan, 2), -3 + 0j])
    want = ties_and_nans(z, w)
    assert want[0] == 2 + 7j and want[1] == -3 - 2j and np.isnan(want[2]) and want[2].imag == 1
    for k, (g, w) in enumerate(zip(interpreted(ties_and_nans, z, w), want)):
        g = as_complex(g)
        np.testing.assert_array_equal(g.real, w.real, err_msg=f"result {k}")
        np.testing.assert_array_equal(g.imag, w.imag, err_msg=f"result {k}")


def through_a_few(x, y):
    z = x + 1j * y
    return np.prod(z).imag + np.max(z * z).real + np.var(np.sin(z)) + np.linalg.norm(z)


def through_functions(x, y):
    z = x + 1j * y
    w = np.sin(z) * np.arctanh(z / 4) + np.arccos(z / 3) - np.tanh(z)
    return (np.sum(w.real) + np.prod(z).imag + np.max(z * w).real + np.var(w) + np.linalg.norm(w)
            + np.cumprod(z)[-1].real + np.min(w).imag)


def through_every_function(x, y):
    z = (x + 1j * y) / 2
    total = np.cos(z) + np.tan(z) + np.sinh(z) + np.cosh(z) + np.arcsin(z) + np.arctan(z) + np.arcsinh(z)
    total = total + np.arccosh(z + 2) + np.sqrt(z) + np.std(z) + np.linalg.norm(z, 1)
    return np.sum(total.real * total.imag)


@pytest.mark.parametrize("fn", [through_a_few, pytest.param(through_functions, marks=pytest.mark.slow),
                                pytest.param(through_every_function, marks=pytest.mark.slow)])
def test_gradient_of_a_real_loss_through_them(fn):
    """A real loss of real inputs through complex intermediates: reverse mode on the parts against float64
    Richardson differences of the NumPy function."""
    x, y = RNG.uniform(-1, 1, 5), RNG.uniform(-1, 1, 5)
    f, ir_args, positions = dfc.jit(fn).specialize(x, y)
    module = f.autodiff_module((positions[0], positions[1]))
    out = dfc.interpret(module, f.name + "_grad", *ir_args, np.array(1.0))
    np.testing.assert_allclose(out[0], fn(x, y), rtol=1e-13)
    for k in range(2):
        assert gradient_error(out[1 + k], richardson_gradient(fn, [x, y], k)) < 1e-9


def compiled_mix(z):
    return np.cumprod(z), np.max(z), np.tan(z[:2])


def test_compiled_agrees_with_numpy():
    z = np.concatenate([INTERIOR, ON_CUTS])
    for g, w in zip(dfc.jit(compiled_mix)(z), compiled_mix(z)):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=0)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(KERNELS))
def test_compiled_ufunc_matches_numpy(name):
    assert_close(dfc.jit(KERNELS[name])(Z), getattr(np, name)(Z))


def bad_axis(A, k):
    return np.prod(A, axis=(0, k))


def spectral(A):
    return np.linalg.norm(A, 2)


def empty_max(A):
    return np.max(A[:0])


@pytest.mark.parametrize("fn, message", [
    (bad_axis, "np.prod of complex values takes one constant axis (or None)"),
    (spectral, "np.linalg.norm of complex matrices with ord=2 (singular values) is not supported"),
    (empty_max, "np.max of an empty complex array"),
], ids=["tuple-axis", "spectral-norm", "empty-max"])
def test_refusals_are_located(fn, message):
    with pytest.raises(dfc.FrontendError, match=re.escape(message)) as err:
        dfc.jit(fn).specialize(np.ones((2, 2), complex), *((1,) if fn is bad_axis else ()))
    assert err.value.location.startswith(f"{__file__}:{fn.__code__.co_firstlineno + 1}:")


@pytest.mark.parametrize("name", ["tanh", pytest.param("arcsin", marks=pytest.mark.slow)])
def test_complex64_stays_complex64(name):
    """float32 parts throughout (tanh's far branch once built a float64 part), within a few float32 ulp."""
    z = Z[:18].astype(np.complex64)
    (got,) = interpreted(KERNELS[name], z)
    assert got.dtype == np.float32
    want = getattr(np, name)(z)
    err = np.abs(np.ascontiguousarray(got).view(np.complex64)[..., 0] - want) / np.abs(want)
    assert err.max() < 1e-6, err.max()


@pytest.mark.slow
def test_compiled_reductions_match_numpy():
    z = RNG.standard_normal(7) + 1j * RNG.standard_normal(7)
    A = RNG.standard_normal((3, 5)) + 1j * RNG.standard_normal((3, 5))
    for k, (g, w) in enumerate(zip(dfc.jit(reductions)(z, A), reductions(z, A))):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-13 * np.abs(w).max(), err_msg=f"result {k}")
