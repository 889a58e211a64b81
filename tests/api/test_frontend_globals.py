"""Module globals a jitted function reads are frozen when it first compiles (as Numba freezes them): a later
change of the global does not reach it, in any specialisation; applying `dfc.jit` again reads it anew."""

import numpy as np

import dfc

SCALE = 2.0


def scaled(x):
    return x * SCALE


def test_globals_are_frozen_at_the_first_compilation():
    global SCALE
    f = dfc.jit(scaled)
    x = np.arange(3.0)
    try:
        np.testing.assert_array_equal(f(x), x * 2.0)
        SCALE = 5.0
        np.testing.assert_array_equal(f(x), x * 2.0)  # the compiled specialisation: the value it was built with
        np.testing.assert_array_equal(f(np.arange(4.0)), np.arange(4.0) * 2.0)  # a new one too: one snapshot
        np.testing.assert_array_equal(dfc.jit(scaled)(x), x * 5.0)  # jit again: the global read anew
        np.testing.assert_array_equal(scaled(x), x * 5.0)
    finally:
        SCALE = 2.0
