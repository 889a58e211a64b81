"""`np.linalg.cholesky`, `solve`, `inv`, `det`, `qr`, `eigh` and `svd`, written as the NumPy loops
the frontend compiles (numpy_linalg.py calls them like jitted functions: a
`func.call` of their specialisation, differentiated through their loops).

They are the textbook algorithms (Cholesky-Banachiewicz; Gaussian elimination
with partial pivoting, as LAPACK's getrf; Householder QR, as LAPACK's geqrf; cyclic Jacobi rotations for the
symmetric eigenproblem, one-sided ones for the SVD), O(n^3) scalar loops: meant for the
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


def eigh(A, max_sweeps, tol):
    """Eigenvalues (ascending) and eigenvectors (columns) of the symmetric A by cyclic Jacobi rotations:
    sweeps over every pair (p, q) zero M[p, q] (Numerical Recipes' rotation, tan = 1 / (2 theta) where
    theta^2 + 1 rounds to theta^2) until the off-diagonal sum of squares is at most `tol` times the total
    (convergence is quadratic: a handful of sweeps); NaN if that takes more than `max_sweeps` (where
    LAPACK raises LinAlgError). The eigenvectors are the accumulated rotations, normalised and orthogonal;
    each column's sign is the iteration's, not necessarily LAPACK's."""
    n = A.shape[0]
    rows = np.arange(n)
    outside = rows[:, None] != rows[None, :]
    M = A.copy()
    V = np.eye(n, dtype=A.dtype)
    total = np.sum(M * M)
    off = np.sum(np.where(outside, M, 0.0) ** 2)
    sweeps = 0
    while off > tol * total and sweeps < max_sweeps:
        for p in range(n - 1):
            for q in range(p + 1, n):
                apq = M[p, q]
                if apq != 0.0:
                    d = M[q, q] - M[p, p]
                    t = apq / d
                    if np.abs(d) < 1e8 * np.abs(apq):
                        theta = d / (2.0 * apq)
                        t = 1.0 / (np.abs(theta) + np.sqrt(theta * theta + 1.0))
                        t = -t if theta < 0.0 else t
                    c = 1.0 / np.sqrt(t * t + 1.0)
                    s = t * c
                    mp = M[:, p].copy()
                    mq = M[:, q].copy()
                    M[:, p] = c * mp - s * mq
                    M[:, q] = s * mp + c * mq
                    mp = M[p, :].copy()
                    mq = M[q, :].copy()
                    M[p, :] = c * mp - s * mq
                    M[q, :] = s * mp + c * mq
                    vp = V[:, p].copy()
                    vq = V[:, q].copy()
                    V[:, p] = c * vp - s * vq
                    V[:, q] = s * vp + c * vq
        off = np.sum(np.where(outside, M, 0.0) ** 2)
        sweeps += 1
    w = np.where(off > tol * total, np.nan, np.diag(M))
    order = np.argsort(w)
    return w[order], V[:, order]


def svd(A, max_sweeps, tol):
    """Singular values (descending), left vectors (m x n, m >= n) and right vectors (n x n, as columns) of A by
    one-sided Jacobi rotations (Hestenes): sweeps over every column pair (p, q) rotate both columns of the
    working copy (and of V) so that they are orthogonal, where their squared product exceeds `tol` times the
    product of their squared norms (the rotation is eigh's, on the 2 x 2 Gram matrix), until a sweep rotates
    nothing; NaN if that takes more than `max_sweeps`. The singular values are the column norms, U the
    columns over their norms (a zero column stays zero: the caller completes U)."""
    m, n = A.shape
    W = A.copy()
    V = np.eye(n, dtype=A.dtype)
    rotated = 1
    sweeps = 0
    while rotated > 0 and sweeps < max_sweeps:
        rotated = 0
        for p in range(n - 1):
            for q in range(p + 1, n):
                app = np.sum(W[:, p] * W[:, p])
                aqq = np.sum(W[:, q] * W[:, q])
                apq = np.sum(W[:, p] * W[:, q])
                if apq * apq > tol * app * aqq:
                    rotated += 1
                    d = aqq - app
                    t = apq / d
                    if np.abs(d) < 1e8 * np.abs(apq):
                        theta = d / (2.0 * apq)
                        t = 1.0 / (np.abs(theta) + np.sqrt(theta * theta + 1.0))
                        t = -t if theta < 0.0 else t
                    c = 1.0 / np.sqrt(t * t + 1.0)
                    s = t * c
                    wp = W[:, p].copy()
                    wq = W[:, q].copy()
                    W[:, p] = c * wp - s * wq
                    W[:, q] = s * wp + c * wq
                    vp = V[:, p].copy()
                    vq = V[:, q].copy()
                    V[:, p] = c * vp - s * vq
                    V[:, q] = s * vp + c * vq
        sweeps += 1
    norms = np.sqrt(np.sum(W * W, axis=0))
    sv = np.where(rotated > 0, np.nan, norms)
    order = np.argsort(-sv)
    U = W / np.where(norms > 0.0, norms, 1.0)
    return sv[order], U[:, order], V[:, order]


def signed_q(Q, R):
    """Q with the sign of each of its first columns flipped where R's diagonal is negative: for the QR of a
    matrix whose columns are orthonormal or zero (svd's U), those columns are the matrix's own and the rest
    an orthonormal completion."""
    n = R.shape[1]
    P = Q.copy()
    P[:, :n] = Q[:, :n] * np.where(np.diag(R) < 0.0, -1.0, 1.0)
    return P


def pinv_of(U, s, Vh, rcond):
    """NumPy's pinv from the reduced SVD: Vh^T diag(1/s) U^T over the singular values above `rcond` times the
    largest (the others' reciprocals are 0)."""
    large = s > rcond * np.max(s)
    inverse = np.where(large, 1.0 / np.where(large, s, 1.0), 0.0)
    return Vh.T @ (inverse[:, None] * U.T)


def rank_of(s, tol):
    """NumPy's matrix_rank from the singular values: how many exceed `tol`."""
    return np.sum(s > tol)


def cond_of(top, bottom, A):
    """NumPy's cond from two singular values: top / bottom, a NaN as infinity unless A holds a NaN."""
    r = top / bottom
    return np.where(np.isnan(r) & ~np.any(np.isnan(A)), np.inf, r)
