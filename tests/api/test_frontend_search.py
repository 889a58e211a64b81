"""np.searchsorted's binary search (dfc/frontend/numpy_search.py) against NumPy: array lengths around powers
of two (each needs a different number of steps), ties, NaN sorted last among values and probes, both sides,
a sorter, integer probes in a float array; compiled and interpreted, one function each."""

import numpy as np

import dfc

RNG = np.random.default_rng(5)
LENGTHS = (1, 3, 8, 9, 33)


def searches(a1, v1, a3, v3, a8, v8, a9, v9, a33, v33, shuffled, order, ints):
    return (np.searchsorted(a1, v1), np.searchsorted(a1, v1, side="right"), np.searchsorted(a3, v3),
            np.searchsorted(a3, v3, side="right"), np.searchsorted(a8, v8), np.searchsorted(a8, v8, side="right"),
            np.searchsorted(a9, v9), np.searchsorted(a9, v9, side="right"), np.searchsorted(a33, v33),
            np.searchsorted(a33, v33, side="right"), np.searchsorted(shuffled, ints, "right", sorter=order),
            np.searchsorted(shuffled, ints, sorter=order))


def probes(a):
    """Every element, every midpoint, the ends beyond, NaN."""
    mids = (a[1:] + a[:-1]) / 2 if len(a) > 1 else a
    return np.concatenate([a, mids, [-np.inf, np.inf, np.nan, a[0] - 1]])


def arguments():
    args = []
    for n in LENGTHS:
        a = np.sort(RNG.integers(0, n // 2 + 2, n).astype(np.float64))  # ties
        a[-1] = np.nan if n % 3 == 0 else a[-1]  # NaN sorts last
        args += [a, probes(a)]
    shuffled = RNG.permutation(np.repeat(np.arange(6.0), 2))
    return args + [shuffled, np.argsort(shuffled, kind="stable"), np.array([[-1, 0, 3], [5, 6, 2]])]


def test_binary_search_matches_numpy():
    args = arguments()
    want = searches(*args)
    f = dfc.jit(searches)
    for got, w in zip(f(*args), want, strict=True):
        np.testing.assert_array_equal(got, w)
    ir, ir_args, _ = f.specialize(*args)
    for got, w in zip(dfc.interpret(ir.module, ir.name, *ir_args), want, strict=True):
        np.testing.assert_array_equal(got, w)
