"""One small function per construct that issue 15 lists for the subset, each
run by `test_frontend.py::test_listed_construct` (forward vs NumPy, gradient vs
sixth-order differences at rtol 1e-9)."""

import numpy as np


def einsum_matmul(A, B, x):
    return np.einsum("ij,jk->ik", A, B) + np.einsum("ij,j->i", A, x)[:, None] + np.einsum("ik,jk->ij", A, B.T)


def outer(x, y):
    return np.outer(x, y) * np.outer(y[:2], x[1:]).sum()


def trace(A):
    return np.trace(A @ A) + np.trace(A.T)


def diag(A, x):
    return np.diag(x) @ A + np.diag(A)[:, None] * np.diag(np.diag(A))


def keepdims(A):
    return (A - np.max(A, axis=1, keepdims=True)) / np.sum(A, axis=0, keepdims=True) + np.mean(A, keepdims=True)


def float_exponents(A):
    return A ** 1.5 + A ** 0.5 + A ** -2 + A ** 2.0 + np.power(A, A)


def triangular_slices(A, x):
    s = 0.0
    for i in range(A.shape[0]):
        s += np.sum(A[i, :i] * x[:i]) + A[i, i:] @ x[i:]
    return s


def strides(x, A):
    return np.sum(x[::2] * x[1::2]) + np.sum(x[::-1] * x) + np.sum(A[::2, 1::2]) + np.sum(x[1:-1:3])


def reductions_with_axes(A):
    return np.sum(A, axis=(0, 1)) + np.max(A, axis=0).sum() + A.min(axis=-1).sum() + A.mean(0).sum()


def prod_axis(A):
    return np.prod(A, axis=1, keepdims=True) + np.prod(A, axis=0)


CASES = {
    "einsum_matmul": lambda g: (g.standard_normal((3, 4)), g.standard_normal((4, 3)), g.standard_normal(4)),
    "outer": lambda g: (g.standard_normal(3), g.standard_normal(4)),
    "trace": lambda g: (g.standard_normal((4, 4)),),
    "diag": lambda g: (g.standard_normal((3, 3)), g.standard_normal(3)),
    "keepdims": lambda g: (g.random((3, 4)) + 1.0,),
    "float_exponents": lambda g: (g.random((2, 3)) + 0.5,),
    "triangular_slices": lambda g: (g.standard_normal((5, 5)), g.standard_normal(5)),
    "strides": lambda g: (g.standard_normal(10), g.standard_normal((4, 6))),
    "reductions_with_axes": lambda g: (g.standard_normal((3, 4)),),
    "prod_axis": lambda g: (g.random((3, 4)) + 0.5,),
}
