"""Python ints stored into integer dtypes: out of the dtype's range is NumPy 2's OverflowError (NEP 50), a
located `FrontendError` in compiled code, never a wrapped value; an integer-annotated scalar parameter
(`n: dfc.i32`) checks every value it is passed."""

import numpy as np
import pytest

import dfc


def store(a, n):
    a[0] = n
    return a


def filled(n):
    return np.full(3, n, dtype=np.int8)


def cast(n):
    return np.int8(n)


def cast_loop_index(a):
    for i in range(200):
        a[0] = np.int8(i)
    return a


def loop_store(a):
    for i in range(300):
        a[1] = i
    return a


CASES = [(store, (np.zeros(3, np.int8), 300), 1, "Python integer 300 out of bounds for int8"),
         (store, (np.zeros(3, np.uint16), -1), 1, "Python integer -1 out of bounds for uint16"),
         (filled, (300,), 1, "Python integer 300 out of bounds for int8"),
         (cast, (-129,), 1, "Python integer -129 out of bounds for int8"),
         (cast_loop_index, (np.zeros(2, np.int8),), 2, "takes values from 0 to 199, out of bounds for int8"),
         (loop_store, (np.zeros(2, np.uint8),), 2, "takes values from 0 to 299, out of bounds for uint8")]


@pytest.mark.parametrize("fn, args, line, message", CASES, ids=[f"{c[0].__name__}-{c[3].split()[-1]}" for c in CASES])
def test_a_python_int_out_of_an_integer_dtype_is_numpys_overflow_error(fn, args, line, message):
    with pytest.raises(OverflowError):
        fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    with pytest.raises(dfc.FrontendError, match=message) as err:
        dfc.jit(fn)(*args)
    assert err.value.location.startswith(f"{__file__}:{fn.__code__.co_firstlineno + line}:")


def test_python_ints_in_range_and_numpy_integers_store_as_numpy_does():
    a = np.zeros(3, np.int8)
    np.testing.assert_array_equal(dfc.jit(store)(a.copy(), -128), store(a.copy(), -128))
    np.testing.assert_array_equal(dfc.jit(filled)(127), filled(127))
    assert dfc.jit(cast)(-128) == cast(-128)
    # a NumPy integer wraps around when cast (NumPy's C cast), as NumPy does
    wide = np.int64(300)
    assert dfc.jit(cast)(wide) == np.int8(wide.astype(np.int8)) == 44
    np.testing.assert_array_equal(dfc.jit(lambda_full)(wide), np.full(2, wide, dtype=np.int8))


def lambda_full(n):
    return np.full(2, n, dtype=np.int8)


@dfc.jit
def shifted(a, n: dfc.i32):
    return a + n


def test_an_integer_annotated_scalar_is_range_checked_at_every_call():
    a = np.arange(3, dtype=np.int32)
    np.testing.assert_array_equal(shifted(a, 2**31 - 1 - 2), a + np.int32(2**31 - 3))
    np.testing.assert_array_equal(shifted(a, np.int16(-5)), a - 5)
    line = shifted.fn.__code__.co_firstlineno + 1  # the `def` line (after the decorator)
    for value, message in [(2**31, "Python integer 2147483648 out of bounds for int32"),
                           (-2**31 - 1, "Python integer -2147483649 out of bounds for int32"),
                           (3.7, "takes an integer, got 3.7 .a float would be truncated"),
                           (np.float64(2.0), "takes an integer"), (np.ones(2, np.int32), "takes an integer")]:
        with pytest.raises(dfc.FrontendError, match=message) as err:
            shifted(a, value)
        assert err.value.location.startswith(f"{__file__}:{line}:"), err.value.location
    with pytest.raises(OverflowError):  # NumPy refuses the same Python ints for an int32 array
        a + 2**31
