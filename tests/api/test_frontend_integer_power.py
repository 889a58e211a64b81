"""Integer powers of integer arrays (`a ** e`, `np.power(a, e)` with an
integer exponent array): by squaring over every bit of the exponent,
wrapping as NumPy's, against NumPy on the interpreter (the bits; it returns
unsigned arrays as their signless bits) over exponents up to the width and
edge bases (0, 1, -1, the top bit); NumPy's ValueError for negative integer
exponents is a located refusal of what could hold one (a signed exponent
array, a negative constant)."""

import numpy as np
import pytest

import dfc


def powers(a, e):
    return a ** e, np.power(a, e), a ** 3


def bool_power(a, b):
    return a ** b


def _interpret(fn, *args):
    f, ir_args, _ = dfc.jit(fn).specialize(*args)
    out = dfc.interpret(f.module, f.name, *ir_args)
    return out if isinstance(out, list | tuple) else [out]


@pytest.mark.parametrize("base, exponent", [
    (np.int32, np.uint8),
    *(pytest.param(b, e, marks=pytest.mark.slow) for b, e in ((np.int64, np.uint64), (np.uint8, np.uint8),
                                                              (np.int16, np.uint16), (np.uint64, np.uint64))),
])
def test_integer_powers_match_numpy(base, exponent):
    bits = np.dtype(exponent).itemsize * 8
    e = np.array([0, 1, 2, 3, 5, 7, 8, 9, bits - 1, bits - 2, 30 % bits, 13], exponent)
    a = np.array([2, 3, 0, 1, 7, 5, 250 % 128, 3, 2, 1, 7, -1 if np.dtype(base).kind == "i" else 255], base)
    want = powers(a, e)
    for g, w in zip(_interpret(powers, a, e), want):
        assert g.dtype.itemsize == w.dtype.itemsize and g.dtype.kind in (w.dtype.kind, "i")
        np.testing.assert_array_equal(g.view(w.dtype), w)


def test_bool_power_is_int8():
    a, b = np.array([True, False, True, False]), np.array([True, True, False, False])
    (got,) = _interpret(bool_power, a, b)
    want = bool_power(a, b)
    assert got.dtype == want.dtype == np.int8
    np.testing.assert_array_equal(got, want)


def signed_exponent(a, e):
    return np.power(a, e)


def negative_constant(a):
    return a ** -1


@pytest.mark.parametrize("fn, message", [
    (signed_exponent, "to the power of a signed integer array: NumPy raises ValueError where an exponent is negative"),
    (negative_constant, r"Integers to negative integer powers are not allowed \(NumPy's ValueError\)"),
])
def test_negative_exponents_are_refused(fn, message):
    args = (np.array([2, 3]), np.array([1, 2])) if fn is signed_exponent else (np.array([2, 3]),)
    with pytest.raises(dfc.FrontendError, match=message) as err:
        dfc.jit(fn).specialize(*args)
    assert f"{__file__}:{fn.__code__.co_firstlineno + 1}:" in str(err.value)


def python_int_powers(x, n):
    total = 0.0
    for i in range(n):
        total += x[i ** 2 % 5] * (i + 1) ** 3  # constant exponents of a loop variable: products
    return total


def run_time_exponent(x):
    for i in range(100):  # more iterations than are unrolled
        x[0] += 2 ** i


def test_powers_of_python_ints():
    x = np.arange(5.0)
    (got,) = _interpret(python_int_powers, x, 4)
    assert got == python_int_powers(x, 4)
    with pytest.raises(dfc.FrontendError, match=r"a power of Python ints whose exponent is known only at run time") \
            as err:
        dfc.jit(run_time_exponent).specialize(x)
    assert f"{__file__}:{run_time_exponent.__code__.co_firstlineno + 2}:" in str(err.value)
