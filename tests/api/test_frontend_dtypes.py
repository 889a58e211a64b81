"""Array arguments of every NumPy dtype: bool, int8 and int16 compute as NumPy
does (NEP 50 promotion: int8 + int16 is int16, int8 with float16 is float16,
np.sqrt of int8 is float16, sums are int64, true division float64), against
NumPy on the interpreter and compiled; extended precision (real and complex)
is a `dfc.FrontendError` naming the dtype, located at the parameter in the
`def` (unsigned integers: test_frontend_unsigned.py; complex64 and complex128:
test_frontend_complex.py)."""

import warnings

import numpy as np
import pytest
from support.frontend_corpus.check import copies

import dfc


def small_ints(a, b, x, m):
    return (a + b, a * 3, a // 2, a % 3, np.maximum(a, b), a / b, a + x, b * x.astype(np.float32), np.sum(a),
            np.max(a), np.min(b), np.mean(a), a.astype(np.float32), x.astype(np.int8), a > b, -a, np.abs(b),
            a * 2.5, np.where(m, a, b), np.sum(m), m & (a > 0), np.cumsum(a), a[m].sum(), np.sqrt(b))


def halves(h, a):
    return h * 2.0 + 1.0, np.sqrt(a), h + a, np.sum(h * h)


ARGS = (np.array([1, -5, 7, 100], np.int8), np.array([3, 2, -1, 300], np.int16), np.array([0.5, 1.5, 2.5, 3.5]),
        np.array([True, False, True, True]))


def _same(got, want):
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype, f"result {k}: {g.dtype}, NumPy {w.dtype}"
        np.testing.assert_allclose(g, w, rtol=1e-3 if w.dtype == np.float16 else 1e-6 if w.dtype == np.float32
                                   else 1e-12, err_msg=f"result {k}")


@pytest.mark.parametrize("engine", [False, True], ids=["interpreter", "compiled"])
def test_int8_int16_and_bool_arguments_compute_as_numpy(engine):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = small_ints(*copies(ARGS))
    if engine:
        got = dfc.jit(small_ints)(*copies(ARGS))
    else:
        f, ir_args, _ = dfc.jit(small_ints).specialize(*copies(ARGS))
        got = dfc.interpret(f.module, f.name, *ir_args)
    _same(got, want)


def test_float16_arguments_on_the_interpreter():
    args = (np.array([0.5, 1.25, -2.0], np.float16), np.array([1, 4, 9], np.int8))
    f, ir_args, _ = dfc.jit(halves).specialize(*args)
    _same(dfc.interpret(f.module, f.name, *ir_args), halves(*args))


def takes(x, y):
    return np.sum(x) + y


@pytest.mark.parametrize("x, y, name, message", [
    (np.ones(3, np.clongdouble), 1.0, "x", f"has dtype {np.dtype(np.clongdouble)}: extended-precision complex"),
    (np.ones(3), np.clongdouble(1j), "y", "extended-precision complex numbers are not supported"),
    (np.ones(3, np.longdouble), 1.0, "x", f"has dtype {np.dtype(np.longdouble)}, not a supported dtype"),
])
def test_unsupported_dtypes_are_located_at_the_parameter(x, y, name, message):
    with pytest.raises(dfc.FrontendError, match=message) as err:
        dfc.jit(takes)(x, y)
    line = takes.__code__.co_firstlineno
    col = 1 + len("def takes(") + (0 if name == "x" else len("x, "))
    assert err.value.location == f"{__file__}:{line}:{col}", err.value.location
    assert f"argument '{name}' of takes" in err.value.message
