"""Forms that scientific NumPy kernels use as written (measured on a public
benchmark suite's NumPy kernels compiled verbatim): a helper whose branches
both return, products and reductions whose size depends on a loop variable
(stored into slices), slice and loop bounds read from data (sparse rows),
bit operations on integers (checksums). `np.hstack` and its relatives and `@` between arrays of
any ranks have their cases in test_numpy_api_coverage.py.

The kernels here are this project's own; each runs on the reference
interpreter against NumPy on copies (the result and every argument after the
call), the differentiable ones also against float64 Richardson differences."""

import numpy as np
import pytest
from support.frontend_corpus.check import check, copies

import dfc


def pair_score(a, b):
    if a + b == 3:  # both branches return: no path falls off the end
        return 1
    else:
        return 0


def pairing_table(seq):
    n = seq.shape[0]
    table = np.zeros((n, n), np.int32)
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            table[i, j] = max(table[i, j], table[i + 1, j - 1] + pair_score(seq[i], seq[j]))
            for k in range(i + 1, j):
                table[i, j] = max(table[i, j], table[i, k] + table[k + 1, j])
    return table


def clipped(x, lo):
    if lo > 0.0:
        return np.maximum(x, lo)
    elif lo < -1.0:
        return x * 2.0
    else:
        return x - lo


def two_branch_loss(x, lo):
    return np.sum(clipped(x, lo) ** 2)


def triangle_products(data, scale):
    """A product whose size depends on the loop variable, stored into two slices (a chained assignment)."""
    m = data.shape[1]
    out = np.eye(m, dtype=data.dtype)
    for i in range(m - 1):
        out[i + 1:m, i] = out[i, i + 1:m] = data[:, i] @ data[:, i + 1:m] / scale
    return out


def shrinking_reductions(x):
    """Reductions and einsums along an axis whose extent shrinks with the loop variable."""
    n = x.shape[1]
    acc = np.zeros(n)
    for i in range(1, n):
        acc[i:] += np.sum(x[:, i:] ** 2, axis=0) - np.max(x[1:, :n - i], axis=0)[::-1]
        acc[:n - i] -= np.einsum("k,kj->j", x[:, 0], x[:, i:]) * 0.5
    return acc


def triangle_loss(data, scale):
    return np.sum(np.sin(triangle_products(data, scale)))


def shrinking_loss(x):
    return np.sum(shrinking_reductions(x) ** 2)


def csr_matvec(row, col, val, x):
    """Slice bounds read from data; the two slices are known to have one size."""
    y = np.empty(row.size - 1, val.dtype)
    for i in range(row.size - 1):
        cols = col[row[i]:row[i + 1]]
        vals = val[row[i]:row[i + 1]]
        y[i] = vals @ x[cols]
    return y


def csr_loops(row, col, val, x):
    """Loop bounds read from data."""
    y = np.zeros(row.shape[0] - 1)
    for i in range(row.shape[0] - 1):
        for k in range(row[i], row[i + 1]):
            y[i] += val[k] * x[col[k]]
    return y


def segment_total(v, lo, hi):
    return np.sum(v[lo:hi] ** 2)


def segment_totals(bounds, v):
    """Integers read from data passed to a helper (0-d arrays there) and used as bounds."""
    out = np.zeros(bounds.shape[0] - 1)
    for i in range(bounds.shape[0] - 1):
        out[i] = segment_total(v, bounds[i], bounds[i + 1])
    return out


def csr_loss(row, col, val, x):
    return np.sum(np.tanh(csr_matvec(row, col, val, x)) + csr_loops(row, col, val, x) ** 2)


def _csr(r, dtype):
    row = np.array([0, 2, 2, 5, 6], dtype)
    return row, r.integers(0, 5, 6).astype(dtype), r.standard_normal(6), r.standard_normal(5)


def checksum8(data, poly=0x31):
    """A bit-serial CRC-8: a Python int carried through data-dependent branches, bit operations on elements."""
    reg = 0xFF
    for byte in data:
        reg ^= byte & 0xFF
        for _ in range(8):
            if reg & 0x80:
                reg = ((reg << 1) ^ poly) & 0xFF
            else:
                reg = (reg << 1) & 0xFF
    return ~reg & 0xFF


def bit_fields(words, k):
    """Bit fields of integer arrays: masks, shifts by an array, popcount by halves."""
    low = words & ((1 << k) - 1)
    high = (words >> k) ^ (words << 3)
    count = words - ((words >> 1) & 0x55555555)
    count = (count & 0x33333333) + ((count >> 2) & 0x33333333)
    return low, high, (count + (count >> 4)) & 0x0F0F0F0F, np.invert(words) | low


FORWARD = [
    (checksum8, lambda r: (r.integers(0, 256, 12),)),
    (checksum8, lambda r: (r.integers(0, 256, 5).astype(np.int16), 0x07)),
    (bit_fields, lambda r: (r.integers(0, 2**31, 9), 5)),
    (bit_fields, lambda r: (r.integers(-2**31, 2**31, 9).astype(np.int32), 3)),
    (csr_matvec, lambda r: _csr(r, np.int64)),
    (csr_matvec, lambda r: _csr(r, np.int32)),
    (csr_loops, lambda r: _csr(r, np.int64)),
    (segment_totals, lambda r: (np.array([0, 3, 3, 7, 8]), r.standard_normal(8))),
    (triangle_products, lambda r: (r.random((6, 5)), 3.0)),
    (shrinking_reductions, lambda r: (r.standard_normal((4, 6)),)),
    (pairing_table, lambda r: (r.integers(0, 4, 7),)),
    (clipped, lambda r: (r.random(5) - 0.5, 0.1)),
    (clipped, lambda r: (r.random(5) - 0.5, -2.0)),
    (clipped, lambda r: (r.random(5) - 0.5, -0.5)),
]


def _same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    else:
        want = np.asarray(want)
        got = np.asarray(got)
        assert got.shape == want.shape
        if want.dtype.kind in "biu":
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14 * max(1.0, float(np.max(np.abs(want)))))


@pytest.mark.parametrize("fn, args", FORWARD, ids=[f"{f.__name__}{k}" for k, (f, _) in enumerate(FORWARD)])
def test_forward_matches_numpy(fn, args):
    a = args(np.random.default_rng(0))
    want_args, got_args = copies(a), copies(a)
    want = fn(*want_args)
    f, ir_args, _ = dfc.jit(fn).specialize(*got_args)
    got = dfc.interpret(f.module, f.name, *ir_args)
    _same(got, want)


@pytest.mark.parametrize("lo", [0.1, -2.0, -0.5])
def test_gradient_through_a_helper_whose_branches_return(lo):
    check(two_branch_loss, (np.random.default_rng(1).random(4) - 0.5, lo))


@pytest.mark.parametrize("fn, args", [
    (triangle_loss, lambda r: (r.random((4, 3)), 2.0)),
    (shrinking_loss, lambda r: (r.standard_normal((3, 4)),)),
    (csr_loss, lambda r: _csr(r, np.int64)),
], ids=["triangle", "shrinking", "csr"])
def test_gradient_through_loop_dependent_sizes(fn, args):
    check(fn, args(np.random.default_rng(2)))


def test_loop_dependent_sizes_compiled():
    data = np.random.default_rng(4).random((6, 5))
    np.testing.assert_allclose(dfc.jit(triangle_products)(data, 3.0), triangle_products(data, 3.0), rtol=1e-12)


@pytest.mark.slow
def test_sparse_rows_and_checksums_compiled():
    a = _csr(np.random.default_rng(5), np.int32)
    np.testing.assert_allclose(dfc.jit(csr_matvec)(*a), csr_matvec(*a), rtol=1e-12)
    data = np.random.default_rng(7).integers(0, 256, 16)
    assert dfc.jit(checksum8)(data) == checksum8(data)


def segment_mean(bounds, v):
    seg = v[bounds[0]:bounds[1]]
    return np.sum(seg * 2.0) + len(v[bounds[0]:bounds[1]]) * 1.0


@pytest.mark.parametrize("bounds", [[1, 4], [1, -1], [-3, -1], [-2, 3], [4, 2], [0, -6]])
def test_slice_bounds_read_from_data_wrap_and_empty_as_in_numpy(bounds):
    """A negative bound counts from the end, a reversed slice is empty (both engines)."""
    b, v = np.array(bounds), np.arange(6.0)
    f, ir_args, _ = dfc.jit(segment_mean).specialize(b, v)
    assert float(dfc.interpret(f.module, f.name, *ir_args)) == segment_mean(b, v)
    if bounds == [1, -1]:
        assert float(dfc.jit(segment_mean)(b, v)) == segment_mean(b, v)


def test_a_slice_bound_read_from_data_out_of_range_is_an_index_error():
    row, col, val, x = _csr(np.random.default_rng(6), np.int64)
    row[-1] = 9  # past the end of col and val
    with pytest.raises(IndexError, match="out of bounds"):
        dfc.jit(csr_matvec)(row, col, val, x)


def complex_grid(x):
    return x + x[:, None] * 1j  # a complex grid (test_frontend_complex.py has the complex forms)


def test_a_complex_grid_matches_numpy():
    x = np.linspace(-1.0, 1.0, 3)
    f, ir_args, _ = dfc.jit(complex_grid).specialize(x)
    got = np.ascontiguousarray(dfc.interpret(f.module, f.name, *ir_args)).view(np.complex128)[..., 0]
    np.testing.assert_array_equal(got, complex_grid(x))


def reversed_loop_slices(x):
    """Slices between loop variables, in both orders: a reversed one is empty; a slice of
    one past its length stops at its end; a bound built with max() of loop variables."""
    s = 0.0
    for i in range(5):
        for j in range(5):
            s += np.sum(x[i:j] ** 2) * (i + 1) + len(x[j:i]) * 100.0
            s += np.sum(x[j:i][:2] * 3.0) + np.sum(np.cos(x[max(i - 3, j - 4):i + 1]))
    return s


def wrapping_loop_slices(x, n):
    """A loop variable minus a constant as a bound wraps when negative; a constant
    stop below a loop variable, a step, a reversed tail (x[k::-1])."""
    s = 0.0
    for i in range(5, -1, -1):
        s += np.sum(x[i - 2:i] * x[i - 2:i]) * (i + 1) + np.sum(x[i - 3::-1]) * 10.0
        s += np.sum(np.sin(x[4 - i:i:2])) * 100.0
    for i in range(n):
        s += np.sum(x[i:3] * x[i + 1:4])
    return s


@pytest.mark.parametrize("fn, args", [
    (reversed_loop_slices, lambda: (np.linspace(0.5, 1.7, 6),)),
    (wrapping_loop_slices, lambda: (np.linspace(0.5, 1.7, 6), 5)),
], ids=["reversed", "wrapping"])
@pytest.mark.parametrize("engine", [False, True], ids=["interpreter", "engine"])
def test_slices_between_loop_variables_follow_numpy(fn, args, engine, request):
    """Both engines agree with NumPy (empty reversed slices, wrapped negative bounds)
    and with float64 differences for the gradient (compiled with --slow)."""
    if engine and not request.config.getoption("--slow"):
        pytest.skip("compiled gradients: --slow")
    check(fn, args(), engine=engine)


def test_slices_between_loop_variables_compiled():
    x = np.linspace(0.5, 1.7, 6)
    got, want = dfc.jit(reversed_loop_slices)(x), reversed_loop_slices(x)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
