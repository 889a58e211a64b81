"""The NumPy corpus (tests/support/frontend_corpus/kernels.py) through `dfc.jit`:
every kernel's result equals NumPy's and its gradient (autodiff of the
frontend's IR) equals float64 central differences of the NumPy code.

The whole corpus runs on the reference interpreter (the semantics), jacobi-2d
also compiled (`dfc.jit` / `dfc.vjp`) and four kernels in float32;
`DFC_CORPUS_ENGINE=1` runs every kernel compiled and 14 in float32 (about 3
minutes)."""

import os

import numpy as np
import pytest

from support.frontend_corpus import kernels
from support.frontend_corpus.check import check

NAMES = sorted(kernels.CASES)
FULL = bool(os.environ.get("DFC_CORPUS_ENGINE"))
COMPILED = ["jacobi_2d"]
FLOAT32_CI = ["mlp", "jacobi_2d", "softmax", "conv2d_bias"]
FLOAT32 = ["gemm", "atax", "covariance", "jacobi_2d", "heat_3d", "cholesky", "mlp", "softmax", "log_softmax_ce",
           "layernorm", "attention", "conv2d_bias", "rnn", "maxpool2x2"]


@pytest.mark.parametrize("name", NAMES)
def test_kernel(name):
    check(getattr(kernels, name), kernels.CASES[name](np.random.default_rng(0)))


@pytest.mark.parametrize("name", NAMES if FULL else COMPILED)
def test_kernel_compiled(name):
    check(getattr(kernels, name), kernels.CASES[name](np.random.default_rng(0)), engine=True)


@pytest.mark.parametrize("name", FLOAT32 if FULL else FLOAT32_CI)
def test_kernel_float32(name):
    """float32 inputs stay float32; results and gradients match float64 NumPy at float32 tolerances."""
    check(getattr(kernels, name), kernels.CASES[name](np.random.default_rng(0)), float32=True)


def test_corpus_size():
    assert len(NAMES) >= 40
