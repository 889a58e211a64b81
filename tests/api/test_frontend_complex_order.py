"""NumPy's order of complex values (dfc/frontend/complex_values.py's comparisons, complex_sort.py):
`<`, `<=`, `>`, `>=` (lexicographic, an imaginary NaN making the real parts' verdict false) and np.sort,
np.argsort, `.sort()` in place, `.argsort()` (the NaN classes R+Rj < R+nanj < nan+Rj < nan+nanj), against
NumPy on every pair of parts from {0, -0, 1, -1, NaN} and on ties; compiled and interpreted."""

import itertools

import numpy as np

import dfc

PARTS = (0.0, -0.0, 1.0, -1.0, np.nan)
GRID = np.array([complex(r, i) for r, i in itertools.product(PARTS, PARTS)])
X = np.array([a for a, _ in itertools.product(GRID, GRID)])
Y = np.array([b for _, b in itertools.product(GRID, GRID)])
RNG = np.random.default_rng(3)
M = (RNG.integers(-1, 2, (3, 7)) + 1j * RNG.integers(-1, 2, (3, 7))).astype(np.complex128)
M[0, 2], M[1, 5] = complex(np.nan, 1), complex(0, np.nan)
M[2, 0], M[2, 6] = complex(np.nan, np.nan), complex(-1, np.nan)


def orders(x, y, m):
    s = m.copy()
    s.sort(axis=0)
    return (x < y, x <= y, x > y, x >= y, np.less(x, 0.5 + 0j), np.greater_equal(1j, y), np.sort(m),
            np.sort(m, axis=0), np.sort(m, axis=None), np.argsort(m, kind="stable"),
            m.argsort(axis=0, kind="stable"), s, np.sort(m.astype(np.complex64))[0])


def test_orders_match_numpy():
    with np.errstate(invalid="ignore"):
        want = orders(X, Y, M)
    f = dfc.jit(orders)
    ir, args, _ = f.specialize(X, Y, M)
    for got in (f(X, Y, M), dfc.interpret(ir.module, ir.name, *args)):
        for g, w in zip(got, want, strict=True):
            g = np.asarray(g)
            if np.iscomplexobj(w) and not np.iscomplexobj(g):  # the interpreter's packed (..., 2) parts
                g = np.ascontiguousarray(g).view(w.dtype)[..., 0]
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)
