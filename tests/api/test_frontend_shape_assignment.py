"""`a.shape = new_shape` (dfc/frontend/shape_assignment.py): a reshape of the
array a local name holds, as NumPy's in-place reshape of the array object
(mandelbrot2's `Xi.shape = Yi.shape = C.shape = n * m`), against NumPy on the
interpreter; refused, located, where another name, a view or the caller sees
the array."""

import numpy as np
import pytest

import dfc


def reshaped(x):
    a = x * 2.0
    a.shape = (3, 4)
    b = a + 1
    b.shape = -1
    return a, b


def grids(n, m):
    Xi, Yi = np.mgrid[0:n, 0:m]
    C = Xi + Yi * 1j
    Xi.shape = Yi.shape = C.shape = n * m
    return Xi, Yi, C


def _interpret(fn, *args):
    f, ir_args, _ = dfc.jit(fn).specialize(*args)
    return f, dfc.interpret(f.module, f.name, *ir_args)


def test_reshapes_as_numpy():
    x = np.arange(12.0)
    _, got = _interpret(reshaped, x)
    for g, w in zip(got, reshaped(x)):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_complex_and_chained_targets():
    """(The interpreter returns a complex array packed: its last axis holds the real and imaginary parts.)"""
    _, (xi, yi, c) = _interpret(grids, 3, 4)
    want = grids(3, 4)
    np.testing.assert_array_equal(xi, want[0])
    np.testing.assert_array_equal(yi, want[1])
    assert c.shape == (12, 2)
    np.testing.assert_array_equal(c[:, 0] + 1j * c[:, 1], want[2])


def of_parameter(x):
    x.shape = (3, 4)


def of_aliased(x):
    a = x * 2.0
    b = a
    a.shape = (3, 4)
    return b


def of_viewed(x):
    a = x * 2.0
    v = a[:6]
    a.shape = (3, 4)
    return a, v


def wrong_size(x):
    a = x * 2.0
    a.shape = (5, 3)
    return a


@pytest.mark.parametrize("fn, message", [
    (of_parameter, "would change the shape of the caller's array"),
    (of_aliased, "an array that 'b' also names or views"),
    (of_viewed, "an array that 'v' also names or views"),
    (wrong_size, r"cannot reshape an array of 12 elements into shape \(5, 3\)"),
])
def test_refusals_are_located(fn, message):
    with pytest.raises(dfc.FrontendError, match=message) as err:
        dfc.jit(fn).specialize(np.arange(12.0))
    line = fn.__code__.co_firstlineno + {of_parameter: 1, of_aliased: 3, of_viewed: 3, wrong_size: 2}[fn]
    assert f"{__file__}:{line}:5" in str(err.value)
