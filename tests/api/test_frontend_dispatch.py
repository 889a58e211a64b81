"""The fast path of a `dfc.jit` call (positional arrays and Python floats, keyed by
the arguments' dtypes and shapes): it gives what the full path gives, and every
check of the full path still applies to calls that reach it."""

import numpy as np
import pytest

import dfc


@dfc.jit
def axpb(x, y):
    return x * y + 1.0


@dfc.jit
def scale(x: dfc.f64["N"], s):
    return x * s


@dfc.jit
def update(x, y):
    x[:] = x * y + 1.0


@dfc.jit
def update_and_sum(x, y):
    x += y
    return np.sum(x)


@dfc.jit
def same(x, y):
    x[:] = y
    return x


def test_fast_path_matches_numpy_and_is_taken():
    x, y = np.arange(8.0), np.full(8, 2.0)
    for _ in range(3):
        np.testing.assert_allclose(axpb(x, y), x * y + 1.0)
    assert len(axpb._fast) == 1
    np.testing.assert_allclose(axpb(x[:4], y[:4]), x[:4] * y[:4] + 1.0)  # another shape: another entry
    assert len(axpb._fast) == 2
    assert scale(x, 3.0) is not None
    np.testing.assert_allclose(scale(x, 3.0), 3 * x)
    np.testing.assert_allclose(scale(x, 0.5), x / 2)


def test_fast_path_still_refuses_a_wrong_dtype_and_shape():
    x, y = np.arange(8.0), np.full(8, 2.0)
    axpb(x, y)
    axpb(x, y)  # the fast entry exists
    with pytest.raises(ValueError, match="rank 1"):
        scale(np.ones((2, 4)), 2.0)
    scale(x, 2.0)
    with pytest.raises(TypeError, match="dtype float64"):
        scale(x.astype(np.float32), 2.0)
    with pytest.raises(ValueError, match="rank 1"):
        scale(np.ones((2, 4)), 2.0)
    with pytest.raises(TypeError, match="expected an array or a number"):
        axpb(x, "y")
    # an engine-level check on a fast entry's own Function: a mismatched array is refused there too
    fast = axpb._fast[((x.dtype, x.shape), (y.dtype, y.shape))]
    with pytest.raises(ValueError, match="size 8"):
        fast.call((x, np.ones(4)))
    with pytest.raises(TypeError, match="dtype float64"):
        fast.call((x, np.ones(8, np.float32)))


def test_fast_path_with_non_contiguous_arrays():
    """A strided view has its own (dtype, shape) key with a contiguous array of the same shape:
    the engine copies it (reads) and the in-place update is copied back into the view."""
    base, y = np.arange(16.0), np.full(8, 2.0)
    view = base[::2]
    contiguous = np.arange(8.0)
    for _ in range(2):
        np.testing.assert_allclose(axpb(contiguous, y), contiguous * y + 1.0)
        np.testing.assert_allclose(axpb(view, y), view * y + 1.0)
    base, expect = np.arange(16.0), np.arange(16.0)
    for _ in range(3):
        update(base[::2], y)
        expect[::2] = expect[::2] * y + 1.0
        np.testing.assert_allclose(base, expect)  # the odd elements are untouched


def test_fast_path_writes_back_in_place_updates():
    x, y = np.arange(8.0), np.full(8, 2.0)
    expect = x.copy()
    for _ in range(3):
        assert update(x, y) is None
        expect = expect * y + 1.0
        np.testing.assert_allclose(x, expect)
    assert len(update._fast) == 1
    x2 = np.ones(8)
    for _ in range(2):
        total = update_and_sum(x2, y)
    np.testing.assert_allclose(x2, 5.0)
    assert total == pytest.approx(40.0)
    a, b = np.zeros(8), np.arange(8.0)
    for _ in range(2):
        assert same(a, b) is a  # `return x`: the caller's array itself
    np.testing.assert_allclose(a, b)


def test_fast_path_keeps_the_in_place_checks():
    x, y = np.arange(8.0), np.full(8, 2.0)
    update(x, y)
    update(x, y)
    frozen = np.arange(8.0)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        update(frozen, y)
    with pytest.raises(ValueError, match="shares its memory"):
        update(x, x)
    with pytest.raises(ValueError, match="shares its memory"):
        update(x, x[::-1])


@dfc.jit
def scale32(x, s: dfc.f32):
    return x * s


def test_fast_path_is_not_taken_where_arguments_are_converted():
    """An annotated float32 scalar receives a Python float as a float32 array: the full path does that."""
    x = np.arange(4, dtype=np.float32)
    for _ in range(2):
        np.testing.assert_allclose(scale32(x, 2.0), 2 * x)
    assert not scale32._fast
