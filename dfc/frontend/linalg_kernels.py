"""`np.linalg.cholesky`, `solve`, `inv`, `det` and `qr`, written as the NumPy loops
the frontend compiles (numpy_linalg.py calls them like jitted functions: a
`func.call` of their specialisation, differentiated through their loops).

They are the textbook algorithms (Cholesky-Banachiewicz; Gaussian elimination
with partial pivoting, as LAPACK's getrf; Householder QR, as LAPACK's geqrf), O(n^3) scalar loops: meant for the
small systems of scientific kernels, not for large dense algebra. Where
LAPACK raises `LinAlgError` (a matrix that is not positive definite, a
singular one) they give NaN or infinities instead."""

import numpy as np


def cholesky(A):
    n = A.shape[0]
    L = np.zeros_like(A)
    for i in range(n):
        for j in range(i):
            L[i, j] = (A[i, j] - np.sum(L[i, :j] * L[j, :j])) / L[j, j]
        L[i, i] = np.sqrt(A[i, i] - np.sum(L[i, :i] * L[i, :i]))
    return L


def solve_matrix(A, B):
    """x with A x = B for B of shape (n, k): LU with partial pivoting of a copy of A, the same row swaps and
    elimination applied to a copy of B, then back substitution."""
    n = A.shape[0]
    M = A.copy()
    X = B.copy()
    for k in range(n):
        p = k
        best = np.abs(M[k, k])
        for r in range(k + 1, n):
            if np.abs(M[r, k]) > best:
                best = np.abs(M[r, k])
                p = r
        if p != k:
            row = M[k, :].copy()
            M[k, :] = M[p, :]
            M[p, :] = row
            rhs = X[k, :].copy()
            X[k, :] = X[p, :]
            X[p, :] = rhs
        for r in range(k + 1, n):
            f = M[r, k] / M[k, k]
            M[r, k + 1:] -= f * M[k, k + 1:]
            X[r, :] -= f * X[k, :]
    for k in range(n - 1, -1, -1):
        for r in range(k + 1, n):
            X[k, :] -= M[k, r] * X[r, :]
        X[k, :] = X[k, :] / M[k, k]
    return X


def det(A):
    """The product of U's diagonal, negated for each row swap (LU with partial pivoting of a copy of A)."""
    n = A.shape[0]
    M = A.copy()
    d = 1.0
    for k in range(n):
        p = k
        best = np.abs(M[k, k])
        for r in range(k + 1, n):
            if np.abs(M[r, k]) > best:
                best = np.abs(M[r, k])
                p = r
        if p != k:
            row = M[k, :].copy()
            M[k, :] = M[p, :]
            M[p, :] = row
            d = -d
        for r in range(k + 1, n):
            f = M[r, k] / M[k, k]
            M[r, k + 1:] -= f * M[k, k + 1:]
        d = d * M[k, k]
    return d


def qr(A, q_cols):
    """Householder QR as LAPACK's geqrf/orgqr compute it, so Q and R equal NumPy's (the same signs): column
    k's reflector maps the column below the diagonal to beta = -sign(alpha) * norm (alpha = R[k, k], +1 for
    alpha = 0), tau = (beta - alpha) / beta, v = x / (alpha - beta) with v[k] = 1; a column that is already
    zero below the diagonal gets tau = 0 (R[k, k] keeps its sign). Q is the product of the reflectors applied
    to the first `q_cols` columns of the identity. Vectors are full-length and masked (rows > k), so no
    array has a loop-dependent size."""
    m, n = A.shape
    K = min(m, n)
    R = A.copy()
    V = np.zeros((m, K), dtype=A.dtype)
    taus = np.zeros(K, dtype=A.dtype)
    rows = np.arange(m)
    for k in range(K):
        below = np.where(rows > k, R[:, k], 0.0)
        ss = np.sum(below * below)
        if ss > 0.0:
            alpha = R[k, k]
            norm = np.sqrt(alpha * alpha + ss)
            beta = -norm if alpha >= 0.0 else norm
            tau = (beta - alpha) / beta
            v = below / (alpha - beta)
            v[k] = 1.0
            w = tau * (v @ R)
            R -= np.outer(v, w)
            R[:, k] = np.where(rows > k, 0.0, R[:, k])
            R[k, k] = beta
            V[:, k] = v
            taus[k] = tau
    Q = np.eye(m, q_cols, dtype=A.dtype)
    for k in range(K - 1, -1, -1):
        Q -= taus[k] * np.outer(V[:, k], V[:, k] @ Q)
    return Q, R
