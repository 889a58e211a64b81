"""`np.linalg.cholesky`, `solve`, `inv` and `det`, written as the NumPy loops
the frontend compiles (numpy_linalg.py calls them like jitted functions: a
`func.call` of their specialisation, differentiated through their loops).

They are the textbook algorithms (Cholesky-Banachiewicz; Gaussian elimination
with partial pivoting, as LAPACK's getrf), O(n^3) scalar loops: meant for the
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
