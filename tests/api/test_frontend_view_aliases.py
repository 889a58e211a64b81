"""Views NumPy shares memory with that the frontend holds as separate values
(dfc/frontend/aliases.py): an array chosen by a run-time condition
(`v = x.reshape(2, 3) if c else y`, an `if` merging `v = x[1:]`), a view a
helper returns, a name a loop carries. An in-place update NumPy would show
through the other name is refused, located at the update (these returned the
stale copy before); uses without such an update compile and match NumPy on
the engine and the interpreter."""

import numpy as np
import pytest

import dfc


def chosen_reshape(x, c):
    x = x.copy()
    v = x.reshape(2, 3) if c > 0 else np.zeros((2, 3))
    x[0] = 5
    return v + 0


def merged_reshape(x, c):
    x = x.copy()
    if c > 0:
        v = x.reshape(2, 3)
    else:
        v = np.zeros((2, 3))
    x += 1
    return v + 0


def chosen_slice(x, c):
    x = x.copy()
    v = x[1:] if c > 0 else np.zeros(5)
    x[1] = 5
    return v + 0


def chosen_transpose(x, c):
    x = x.reshape(2, 3).copy()
    v = x.T if c > 0 else np.zeros((3, 2))
    x[0, 0] = 7
    return v + 0


def view_of_chosen(x, c):
    x = x.copy()
    v = x.reshape(2, 3) if c > 0 else np.ones((2, 3))
    w = v[1:]
    x[3] = 5
    return w + 0


def reshape_of_chosen(x, c):
    y = x * 2
    v = y if c > 0 else y[::-1]
    w = v.reshape(2, 3)
    y[0] = 9
    return w + 0


def write_through_chosen(x, c):
    y = x * 1.0
    if c > 0:
        v = y
    else:
        v = x + 1
    v[0] = 7
    return y + 0


def _reshaped(a):
    return a.reshape(2, 3)


def _tail(a):
    return a[1:]


def helper_reshape(x, c):
    x = x.copy()
    v = _reshaped(x)
    x[0] = 5
    return v + 0


def helper_slice(x, c):
    x = x.copy()
    v = _tail(x)
    x[1] = 5
    return v + 0


def loop_carried_view(x, c):
    x = x.copy()
    v = np.zeros((2, 3))
    for i in range(3):
        v = x.reshape(2, 3)
    x[0] = 5
    return v + 0


REFUSED = [(chosen_reshape, "x[0] = 5"), (merged_reshape, "x += 1"), (chosen_slice, "x[1] = 5"),
           (chosen_transpose, "x[0, 0] = 7"), (view_of_chosen, "x[3] = 5"), (reshape_of_chosen, "y[0] = 9"),
           (write_through_chosen, "v[0] = 7"),
           (helper_reshape, "x[0] = 5"), (helper_slice, "x[1] = 5")]


@pytest.mark.parametrize("fn,line", REFUSED, ids=[f.__name__ for f, _ in REFUSED])
def test_update_seen_through_a_view_is_refused(fn, line):
    with pytest.raises(dfc.FrontendError, match="views of the same memory in NumPy") as err:
        dfc.jit(fn)(np.arange(6.0), 1.0)
    assert line in str(err.value)


def test_loop_carrying_a_view_is_refused():
    with pytest.raises(dfc.FrontendError, match="'v' is carried by this loop as a view of the array 'x' holds"):
        dfc.jit(loop_carried_view)(np.arange(6.0), 1.0)


def chosen_read_only(x, c):
    v = x.reshape(2, 3) if c > 0 else np.ones((2, 3))
    return v * 2


def ping_pong(x, c):
    a = x.copy()
    b = x * 2
    for i in range(3):
        b[1:] = a[1:] + c
        a, b = b, a
    return a + 0


def rebound_in_loop(x, c):
    x = x.copy()
    v = x
    for i in range(3):
        v = v + c
    x[0] = 9
    return v + 0


def helper_view_read(x, c):
    v = _tail(x)
    return v * c


KEPT = [(fn, c) for fn in (chosen_read_only, ping_pong, rebound_in_loop, helper_view_read) for c in (1.0, -1.0)]


@pytest.mark.parametrize("fn,c", [pytest.param(fn, c, marks=() if (fn, c) == (rebound_in_loop, -1.0) else pytest.mark.slow)
                                  for fn, c in KEPT], ids=[f"{fn.__name__}-{c}" for fn, c in KEPT])
def test_views_without_stale_updates_match_numpy(fn, c):
    """(One case in the default run; the others with --slow.)"""
    x = np.arange(6.0)
    want = fn(x.copy(), c)
    np.testing.assert_allclose(dfc.jit(fn)(x.copy(), c), want, rtol=1e-15, atol=0)
    f, ir_args, _ = dfc.jit(fn).specialize(x.copy(), c)
    got = dfc.interpret(f.module, f.name, *ir_args)
    np.testing.assert_allclose(got[0] if isinstance(got, tuple | list) else got, want, rtol=1e-15, atol=0)
