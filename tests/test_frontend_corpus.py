"""The NumPy corpus (tests/frontend_corpus/kernels.py) through `dfc.jit`:
every kernel's result equals NumPy's and its gradient (autodiff of the
frontend's IR) equals float64 central differences of the NumPy code.

The whole corpus runs on the reference interpreter (the semantics); a few
kernels also run compiled (`dfc.jit` / `dfc.vjp`), and all of them with
`DFC_CORPUS_ENGINE=1` (about 3 minutes)."""

import os

import numpy as np
import pytest

from frontend_corpus import kernels
from frontend_corpus.check import check

NAMES = sorted(kernels.CASES)
COMPILED = ["mlp", "jacobi_2d", "lu", "conv2d_bias", "durbin"]


@pytest.mark.parametrize("name", NAMES)
def test_kernel(name):
    check(getattr(kernels, name), kernels.CASES[name](np.random.default_rng(0)))


@pytest.mark.parametrize("name", NAMES if os.environ.get("DFC_CORPUS_ENGINE") else COMPILED)
def test_kernel_compiled(name):
    check(getattr(kernels, name), kernels.CASES[name](np.random.default_rng(0)), engine=True)


def test_corpus_size():
    assert len(NAMES) >= 40
