"""NumPy's integer ufuncs that loop, as Python compiled like a jitted function (numpy_ufuncs_more.py calls them
on broadcast operands): Euclid's algorithm on |a|, |b|, run until every remainder is 0."""

import numpy as np


def gcd(a, b):
    a = np.abs(a)
    b = np.abs(b)
    while np.any(b != 0):
        nonzero = b != 0
        rest = a % np.where(nonzero, b, 1)
        a = np.where(nonzero, b, a)
        b = np.where(nonzero, rest, 0)
    return a


def lcm(a, b):
    """|a| // gcd * |b| (0 where gcd is 0), as NumPy's."""
    a = np.abs(a)
    b = np.abs(b)
    g = a
    r = b
    while np.any(r != 0):
        nonzero = r != 0
        rest = g % np.where(nonzero, r, 1)
        g = np.where(nonzero, r, g)
        r = np.where(nonzero, rest, 0)
    return np.where(g == 0, 0, a // np.where(g == 0, 1, g) * b)
