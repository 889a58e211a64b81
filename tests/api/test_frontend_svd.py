"""np.linalg.svd, svdvals and the singular-value norms (dfc/frontend/numpy_svd.py: one-sided Jacobi rotations,
U completed by Householder QR) against NumPy: singular values relatively, U and Vh up to the sign of each
singular pair (the reconstruction U S Vh, orthonormality and |U|, |Vh| for distinct values), tall, wide,
rank-deficient (a zero singular value: U still orthonormal) and float32. The gradient through the
data-dependent while loop is test_numpy_api_coverage.py's svd_loss case."""

import numpy as np
import pytest

import dfc

RNG = np.random.default_rng(2)
TALL = RNG.standard_normal((4, 3))
RANK1 = np.outer([1.0, 2.0, -1.0, 0.5], [2.0, 0.5, 1.0])  # singular values (s, 0, 0): TALL's shape, one kernel
WIDE32 = RNG.standard_normal((2, 3)).astype(np.float32)


def decompositions(a, b, c):
    u, s, vh = np.linalg.svd(a)
    ur, sr, vhr = np.linalg.svd(a, full_matrices=False)
    ub, sb, vhb = np.linalg.svd(b)
    uc, sc, vhc = np.linalg.svd(c, full_matrices=False)
    return (u, s, vh, ur, sr, vhr, ub, sb, vhb, uc, sc, vhc, np.linalg.svd(c, compute_uv=False),
            np.linalg.svdvals(a), np.linalg.norm(a, 2), np.linalg.norm(a, -2), np.linalg.norm(a, "nuc", keepdims=True))


def check(got, want, a):
    """got against NumPy's want = (U, S, Vh) of a: S relatively, U and Vh orthonormal, U S Vh = a."""
    (u, s, vh), (wu, ws, wvh) = got, want
    eps = np.finfo(a.dtype).eps
    assert all(g.dtype == w.dtype and g.shape == w.shape for g, w in zip(got, want, strict=True))
    np.testing.assert_allclose(s, ws, rtol=0, atol=20 * eps * ws[0])
    k = len(s)
    for q in (u.T, vh):  # orthonormal columns of U, rows of Vh
        np.testing.assert_allclose(q @ q.T, np.eye(len(q)), rtol=0, atol=20 * eps)
    np.testing.assert_allclose((u[:, :k] * s) @ vh[:k], a, rtol=0, atol=20 * eps * ws[0])
    distinct = ws > 1e3 * eps * ws[0]  # those pairs' vectors are unique up to sign
    distinct[1:] &= np.diff(ws) < -1e3 * eps * ws[0]
    np.testing.assert_allclose(np.abs(u[:, :k][:, distinct]), np.abs(wu[:, :k][:, distinct]), rtol=0, atol=1e3 * eps)
    np.testing.assert_allclose(np.abs(vh[:k][distinct]), np.abs(wvh[:k][distinct]), rtol=0, atol=1e3 * eps)


def test_svd_matches_numpy():
    want = decompositions(TALL, RANK1, WIDE32)
    f = dfc.jit(decompositions)
    ir, args, _ = f.specialize(TALL, RANK1, WIDE32)
    for got in (f(TALL, RANK1, WIDE32), dfc.interpret(ir.module, ir.name, *args)):
        check(got[0:3], want[0:3], TALL)
        check(got[3:6], want[3:6], TALL)
        check(got[6:9], want[6:9], RANK1)
        check(got[9:12], want[9:12], WIDE32)
        for g, w in zip(got[12:], want[12:], strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=20 * np.finfo(w.dtype).eps, atol=0)


def stacked(a):
    return np.linalg.svdvals(a)


def test_svdvals_refuses_stacks():
    """np.linalg.svd of stacks is numpy_linalg_stacked.py's (tests/api/test_linalg_family.py); svdvals, pinv,
    matrix_rank and cond of stacks are refused by name."""
    with pytest.raises(dfc.FrontendError, match=r"np.linalg.svdvals takes a matrix of constant shape .*\(2, 3, 3\)"):
        dfc.jit(stacked)(np.ones((2, 3, 3)))
