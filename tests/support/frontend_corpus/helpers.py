"""Plain (undecorated) helpers that jitted functions in other modules call:
compiled with their callers, resolving names in this module's globals."""

import numpy as np

DECAY = 0.5


def sq(x):
    return x * x


def energy(x):
    return np.sum(sq(x))  # a helper calling a helper of its own module


def damp_into(A, rate=DECAY):
    A *= rate  # in place, no return
