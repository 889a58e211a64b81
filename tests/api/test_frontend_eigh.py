"""np.linalg.eigh and eigvalsh (dfc/frontend/linalg_kernels.eigh: Jacobi rotations until the off-diagonal part
is negligible) against NumPy: eigenvalues relatively, eigenvectors up to each column's sign, the triangle UPLO
names (the other one ignored, as LAPACK ignores it), float32. The gradient through the data-dependent while
loop is test_numpy_api_coverage.py's eigh_loss case."""

import numpy as np

import dfc

RNG = np.random.default_rng(1)
B = RNG.standard_normal((5, 5))
SYMMETRIC = B + B.T
LOWER_ONLY = SYMMETRIC + np.triu(RNG.standard_normal((5, 5)), 1)  # the upper triangle is not read


def decompositions(a):
    w, v = np.linalg.eigh(a)
    wu, vu = np.linalg.eigh(a.T, UPLO="U")
    return w, v, wu, vu, np.linalg.eigvalsh(a), np.linalg.eigvalsh(a.astype(np.float32))


def test_eigh_matches_numpy():
    want = decompositions(LOWER_ONLY)
    f = dfc.jit(decompositions)
    ir, args, _ = f.specialize(LOWER_ONLY)
    for got in (f(LOWER_ONLY), dfc.interpret(ir.module, ir.name, *args)):
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape
            if g.ndim == 2:  # eigenvectors: orthonormal columns, each NumPy's up to its sign
                g = g * np.sign(np.sum(g * w, axis=0))
            eps = np.finfo(w.dtype).eps
            np.testing.assert_allclose(g, w, rtol=0, atol=40 * eps * np.max(np.abs(w)))

