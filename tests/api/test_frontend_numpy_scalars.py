"""NumPy integer scalars and 0-d integer arrays passed to a jitted function are
strongly typed, as NEP 50 (NumPy 2) says: `int8 array * np.int16(200)` is
int16, `float32 array * np.int64(3)` float64 (a Python int takes the array's
dtype). They remain compile-time integers for sizes, bounds and indices.
Against NumPy (values and dtypes) on the interpreter and compiled; an unsigned
NumPy scalar is a size or index, and a strongly typed value in arithmetic."""

import numpy as np
import pytest

import dfc


def mixes(x, n):
    return x * n, x + n, x[: n - 1] - n, n // 2 + x[0], np.zeros(n) + n


CASES = [
    (np.array([100, -7, 3, 1], np.int8), np.int16(3)),
    (np.array([100, -7, 3, 1], np.int8), np.array(3, np.int16)),
    (np.array([100, -7, 3, 1], np.int8), 3),
    (np.array([100, -7, 3, 1], np.int32), np.int64(3)),
    (np.array([0.5, 1.5, 2.5, 3.5], np.float32), np.int64(3)),
    (np.array([0.5, 1.5, 2.5, 3.5], np.float32), np.int8(3)),
    (np.array([0.5, 1.5, 2.5, 3.5], np.float16), np.int16(3)),
    (np.array([0.5, 1.5, 2.5, 3.5], np.float16), np.int8(3)),
]


def _same(got, want):
    for g, w in zip(got, want, strict=True):
        w = np.asarray(w)
        assert np.asarray(g).dtype == w.dtype, (np.asarray(g).dtype, w.dtype)
        np.testing.assert_allclose(np.asarray(g, np.float64), w.astype(np.float64), rtol=1e-6 if w.dtype.itemsize < 8 else 1e-15)


@pytest.mark.parametrize("x, n", CASES, ids=[f"{x.dtype}-{type(n).__name__}" for x, n in CASES])
def test_numpy_integers_are_strongly_typed_on_the_interpreter(x, n):
    f, ir_args, _ = dfc.jit(mixes).specialize(x.copy(), n)
    _same(dfc.interpret(f.module, f.name, *ir_args), mixes(x.copy(), n))


@pytest.mark.parametrize("x, n", [CASES[0], CASES[4]], ids=["int8-int16", "float32-int64"])
def test_numpy_integers_are_strongly_typed_compiled(x, n):
    _same(dfc.jit(mixes)(x.copy(), n), mixes(x.copy(), n))


def test_a_python_int_and_a_numpy_integer_are_separate_specialisations():
    x, f = np.array([100, -7], np.int8), dfc.jit(mixes)
    assert np.asarray(f(x, 2)[0]).dtype == np.int8
    assert np.asarray(f(x, np.int16(2))[0]).dtype == np.int16


def sized(x, n):
    return x[:n] * 2.0 + np.zeros(n)


def scaled(x, n):
    return x * n


def test_an_unsigned_numpy_integer_is_a_size_and_a_value():
    x = np.arange(5.0)
    np.testing.assert_array_equal(dfc.jit(sized)(x, np.uint32(3)), sized(x, np.uint32(3)))
    for x, n in ((x, np.uint8(3)), (np.arange(5, dtype=np.int8), np.uint8(3)), (np.arange(5, dtype=np.uint16),
                                                                               np.uint64(7))):
        got, want = dfc.jit(scaled)(x, n), scaled(x, n)
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_array_equal(got, want)


def counted(x, n):
    s = x[0] * 0
    for i in range(n - 1):
        if n > 2:
            s = s + x[i] * (-n)
    return s, n * 2 // 3


@pytest.mark.parametrize("n", [np.int16(3), np.int8(-128), np.array(4, np.int32)], ids=["int16", "int8-min", "0-d"])
def test_numpy_integers_stay_compile_time_integers(n):
    """Loop bounds, branches, negation (wrapping at the minimum, as NumPy) and folded arithmetic."""
    x = np.arange(1, 6, dtype=np.int8)
    f, ir_args, _ = dfc.jit(counted).specialize(x.copy(), n)
    with np.errstate(over="ignore"):
        _same(dfc.interpret(f.module, f.name, *ir_args), counted(x.copy(), n))
