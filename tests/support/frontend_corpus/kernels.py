"""NumPy kernels as people write them (PolyBench/npbench ports, small nets,
losses, scalar code), for the frontend corpus test (`test_frontend_corpus.py`).

Plain NumPy: nothing here imports dfc. Each kernel is listed in `CASES` with a
function building its inputs; the test compiles it with `dfc.jit`, compares
the result with NumPy's, and checks `dfc.vjp` (or `dfc.grad` for scalar
results) against float64 central differences of the NumPy function.
"""

from __future__ import annotations

import math

import numpy as np

# --- dense linear algebra (PolyBench) -------------------------------------------------------


def gemm(alpha, beta, C, A, B):
    C *= beta
    C += alpha * A @ B
    return C


def gemver(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    A = A + np.outer(u1, v1) + np.outer(u2, v2)
    x = x + beta * y @ A
    x = x + z
    w = w + alpha * A @ x
    return w


def gesummv(alpha, beta, A, B, x):
    return alpha * A @ x + beta * B @ x


def atax(A, x):
    return (A @ x) @ A


def bicg(A, p, r):
    return np.sum(r @ A) + np.sum(A @ p)


def mvt(x1, x2, y_1, y_2, A):
    x1 += A @ y_1
    x2 += y_2 @ A
    return x1 * x2


def syrk(alpha, beta, C, A):
    n = C.shape[0]
    for i in range(n):
        C[i, : i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, : i + 1] += alpha * A[i, k] * A[: i + 1, k]
    return C


def syr2k(alpha, beta, C, A, B):
    n = C.shape[0]
    for i in range(n):
        C[i, : i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, : i + 1] += A[: i + 1, k] * alpha * B[i, k] + B[: i + 1, k] * alpha * A[i, k]
    return C


def doitgen(A, C4):
    nr, nq, np_ = A.shape
    out = np.zeros_like(A)
    for r in range(nr):
        out[r] = A[r] @ C4
    return out


def k2mm(alpha, beta, A, B, C, D):
    return alpha * A @ B @ C + beta * D


def k3mm(A, B, C, D):
    return (A @ B) @ (C @ D)


def trmm(alpha, A, B):
    m, n = B.shape
    for i in range(m):
        for j in range(n):
            B[i, j] += np.dot(A[i + 1:, i], B[i + 1:, j])
    return alpha * B


def symm(alpha, beta, C, A, B):
    m, n = C.shape
    temp2 = np.empty((n,), dtype=C.dtype)
    C *= beta
    for i in range(m):
        for j in range(n):
            C[:i, j] += alpha * B[i, j] * A[i, :i]
            temp2[j] = B[:i, j] @ A[i, :i]
        C[i, :] += alpha * B[i, :] * A[i, i] + alpha * temp2
    return C


# --- statistics --------------------------------------------------------------------------------


def covariance(M, data):
    mean = np.mean(data, axis=0)
    data = data - mean
    cov = data.T @ data / (M - 1.0)
    return cov


def correlation(M, data):
    mean = np.mean(data, axis=0)
    stddev = np.sqrt(np.mean((data - mean) ** 2, axis=0))
    data = (data - mean) / (np.sqrt(M) * stddev)
    return data.T @ data


# --- stencils ------------------------------------------------------------------------------------


def jacobi_1d(TSTEPS, A, B):
    for t in range(1, TSTEPS):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])
    return np.sum(A * A)


def jacobi_2d(TSTEPS, A, B):
    for t in range(1, TSTEPS):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])
    return np.sum(A * A)


def heat_3d(TSTEPS, A, B):
    for t in range(1, TSTEPS):
        B[1:-1, 1:-1, 1:-1] = (
            0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[:-2, 1:-1, 1:-1])
            + 0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, :-2, 1:-1])
            + 0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, 1:-1, 0:-2])
            + A[1:-1, 1:-1, 1:-1]
        )
        A[1:-1, 1:-1, 1:-1] = (
            0.125 * (B[2:, 1:-1, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[:-2, 1:-1, 1:-1])
            + 0.125 * (B[1:-1, 2:, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, :-2, 1:-1])
            + 0.125 * (B[1:-1, 1:-1, 2:] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, 1:-1, 0:-2])
            + B[1:-1, 1:-1, 1:-1]
        )
    return np.sum(A)


def fdtd_2d(TMAX, ex, ey, hz, _fict_):
    for t in range(TMAX):
        ey[0, :] = _fict_[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])
    return np.sum(hz * hz) + np.sum(ex) + np.sum(ey)


def seidel_2d(TSTEPS, N, A):
    for t in range(0, TSTEPS - 1):
        for i in range(1, N - 1):
            A[i, 1:-1] += A[i - 1, :-2] + A[i - 1, 1:-1] + A[i - 1, 2:] + A[i, 2:] + A[i + 1, :-2] + A[i + 1, 1:-1] + A[i + 1, 2:]
            for j in range(1, N - 1):
                A[i, j] += A[i, j - 1]
                A[i, j] /= 9.0
    return A


def adi_like(TSTEPS, u):
    """A smoothing sweep along rows, then along columns (sequential recurrences)."""
    n = u.shape[0]
    v = np.copy(u)
    for t in range(TSTEPS):
        for j in range(1, n):
            v[:, j] = 0.5 * v[:, j] + 0.5 * v[:, j - 1]
        for i in range(1, n):
            v[i, :] = 0.5 * v[i, :] + 0.5 * v[i - 1, :]
    return v


# --- triangular solvers and factorisations --------------------------------------------------------


def trisolv(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def lu(A):
    N = A.shape[0]
    for i in range(N):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, N):
            A[i, j] -= A[i, :i] @ A[:i, j]
    return A


def ludcmp(A, b):
    N = A.shape[0]
    x = np.zeros_like(b)
    y = np.zeros_like(b)
    for i in range(N):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, N):
            A[i, j] -= A[i, :i] @ A[:i, j]
    for i in range(N):
        y[i] = b[i] - A[i, :i] @ y[:i]
    for i in range(N - 1, -1, -1):
        x[i] = (y[i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]
    return x


def cholesky(A):
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])
    return A


def durbin(r):
    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha
    return y


def gramschmidt(A):
    m, n = A.shape
    Q = np.zeros_like(A)
    R = np.zeros((n, n), dtype=A.dtype)
    for k in range(n):
        nrm = np.dot(A[:, k], A[:, k])
        R[k, k] = np.sqrt(nrm)
        Q[:, k] = A[:, k] / R[k, k]
        for j in range(k + 1, n):
            R[k, j] = np.dot(Q[:, k], A[:, j])
            A[:, j] -= Q[:, k] * R[k, j]
    return np.sum(R) + np.sum(Q * Q)


def back_substitution(U, y):
    n = y.shape[0]
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        s = 0.0
        for j in range(i + 1, n):
            s += U[i, j] * x[j]
        x[i] = (y[i] - s) / U[i, i]
    return x


# --- small nets and losses -------------------------------------------------------------------


def mlp(x, w1, b1, w2, b2, w3, b3, y):
    h = np.maximum(x @ w1 + b1, 0.0)
    h = np.maximum(h @ w2 + b2, 0.0)
    logits = h @ w3 + b3
    m = np.max(logits, axis=1, keepdims=True)
    logp = logits - m - np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return -np.mean(np.sum(logp * y, axis=1))


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def log_softmax_ce(logits, onehot):
    shifted = logits - logits.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -(onehot * logp).sum() / logits.shape[0]


def conv2d_bias(x, w, b):
    """Valid 2-D convolution (NCHW x OIHW) with a per-channel bias."""
    N, C, H, W = x.shape
    O, _, K, _ = w.shape
    out = np.zeros((N, O, H - K + 1, W - K + 1))
    for i in range(K):
        for j in range(K):
            out += np.einsum("nchw,oc->nohw", x[:, :, i:i + H - K + 1, j:j + W - K + 1], w[:, :, i, j])
    return out + b[None, :, None, None]


def maxpool2x2(x):
    return np.maximum(np.maximum(x[:, :, 0::2, 0::2], x[:, :, 0::2, 1::2]), np.maximum(x[:, :, 1::2, 0::2], x[:, :, 1::2, 1::2]))


def layernorm(x, gamma, beta):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return gamma * (x - mu) / np.sqrt(var + 1e-5) + beta


def attention(q, k, v):
    scores = q @ k.T / np.sqrt(q.shape[1])
    scores = scores - scores.max(axis=1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(axis=1, keepdims=True)
    return p @ v


def mse_linear_regression(X, w, b, y):
    pred = X @ w + b
    return np.mean((pred - y) ** 2)


def logistic_regression(X, w, y):
    z = X @ w
    p = 1.0 / (1.0 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def rnn(xs, h0, Wx, Wh):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh)
    return np.sum(h ** 2)


def huber(pred, target):
    d = pred - target
    return np.sum(np.where(np.abs(d) < 1.0, 0.5 * d ** 2, np.abs(d) - 0.5))


# --- scalar-heavy code ------------------------------------------------------------------------


def horner(coeffs, x):
    acc = np.zeros_like(x)
    for i in range(coeffs.shape[0]):
        acc = acc * x + coeffs[i]
    return acc


def dot_loop(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * y[i]
    return s


def piecewise_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            s += x[i] ** 2
        else:
            s += math.sin(x[i])
    return s


def running_max_loss(x):
    m = x[0]
    total = 0.0
    for i in range(1, x.shape[0]):
        m = max(m, x[i])
        total += m
    return total


def cumsum_loop(x):
    y = np.empty_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = y[i - 1] + x[i]
    return y


def trapezoid(y, dx):
    return dx * (np.sum(y) - 0.5 * (y[0] + y[-1]))


def polynomial_eval(a, b, c, x):
    return np.sum(a * x ** 2 + b * x + c / (1 + x ** 2))


def nbody_energy(pos, mass):
    n = pos.shape[0]
    e = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            d = pos[i] - pos[j]
            e -= mass[i] * mass[j] / np.sqrt(np.sum(d * d))
    return e


def matrix_power_trace(A, k):
    P = np.copy(A)
    for i in range(k - 1):
        P = P @ A
    return np.trace(P)


def outer_normalize(x, y):
    M = np.outer(x, y)
    return M / np.linalg.norm(M)


def reverse_dot(x, y):
    return np.dot(x[::-1], y) + np.dot(np.flip(x), y[::-1] * 2.0)


def diag_plus(A, v):
    return np.sum((A + np.diag(v)) ** 2) + np.trace(A.T @ A)


def clamp_sum(x, lo, hi):
    return np.sum(np.clip(x, lo, hi) * x)


def strided_energy(x):
    return np.sum(x[::2] * x[1::2]) + np.sum(x[1:-1:3] ** 3)


def einsum_bilinear(x, A, y):
    return np.einsum("i,ij,j->", x, A, y)


def batched_matmul(A, B):
    return np.sum(np.matmul(A, B) ** 2)


def mixed_precision(x, w):
    return np.sum((x * w).astype(np.float64) ** 2)


def concat_features(a, b):
    h = np.concatenate([a, b * 2.0], axis=1)
    return np.sum(np.tanh(h) * h)


def reshape_pool(x):
    y = x.reshape(4, 2, 3)
    return np.sum(y.max(axis=1) * y.sum(axis=1))


def arange_weights(x):
    w = np.arange(x.shape[0]) * 0.5 + 1.0
    return np.sum(w * x ** 2)


# --- control flow, aliasing, dynamic programming -------------------------------------------------


def alias_update(A):
    B = A
    for i in range(3):
        B[i] += 1.0
    return np.sum(A * A)


def swap_buffers(A, B):
    A, B = A.copy(), B.copy()  # the caller's own arrays swapped in a loop: unsupported.py's swapped_arguments
    for t in range(3):
        B[1:-1] = 0.5 * (A[:-2] + A[2:])
        A, B = B, A
    return np.sum(A * A) + np.sum(B)


def parity_branches(x):
    y = np.zeros_like(x)
    for i in range(x.shape[0]):
        if i % 2 == 0:
            y[i] = x[i] * 2.0
        else:
            y[i] = np.sin(x[i])
    return np.sum(y * y)


def index_counter(x):
    k = 0
    s = 0
    for i in range(x.shape[0]):
        s += x[k] * x[i]
        k += 1
    return s


def scale_rows(A):
    for i in range(A.shape[0]):
        row = A[i]
        row[:] = row * (i + 1.0)
    return np.sum(A ** 2)


def floyd_warshall(path):
    n = path.shape[0]
    for k in range(n):
        path[:] = np.minimum(path, path[:, k][:, None] + path[k, :][None, :])
    return path


def go_fast(a):
    trace = 0.0
    for i in range(a.shape[0]):
        trace += np.tanh(a[i, i])
    return a + trace


def nussinov_like(score):
    n = score.shape[0]
    table = np.zeros((n, n))
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            table[i, j] = max(table[i, j], table[i, j - 1])
            if i + 1 < n:
                table[i, j] = max(table[i, j], table[i + 1, j])
            table[i, j] = max(table[i, j], table[i + 1, j - 1] + score[i, j])
    return table[0, n - 1]


def cross_entropy_labels(logits, labels):
    n, c = logits.shape
    onehot = (labels[:, None] == np.arange(c)[None, :]).astype(logits.dtype)
    logp = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    return -np.sum(onehot * logp) / n


def standardize(x):
    return np.sum(((x - x.mean(axis=0)) / x.std(axis=0)) ** 3) + np.var(x)


def log_cosh_loss(pred, target):
    return np.mean(np.log10(np.cosh(pred - target))) + np.sum(np.sinh(pred) * np.log2(1.0 + target ** 2))


def cross_entropy_gather(logits, labels):
    n = logits.shape[0]
    shifted = logits - logits.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -np.mean(logp[np.arange(n), labels])


def embedding_bag(W, tokens, v):
    e = W[tokens]
    return np.sum(np.tanh(e @ v))


def permuted_dot(x, perm):
    s = 0.0
    for i in range(perm.shape[0]):
        s += x[perm[i]] * x[i]
    return s


def select_columns(A, idx):
    return np.sum(A[:, idx] ** 2) + np.sum(A[idx][:, 0])


def gather_2d(A, r, c):
    return np.sum(A[r, c] * A[r[:, None], c[None, :]].sum(axis=0))


def masked_relu_loss(x, y):
    return np.sum((x > 0) * x * y) + np.sum(np.full((2, 3), x[0]) * np.full((3,), 2))


# --- cases ----------------------------------------------------------------------------------------


def _spd(rng, n):
    a = rng.random((n, n))
    return a @ a.T + n * np.eye(n)


def _cases():
    return {
        "gemm": lambda g: (1.5, 1.2, g.random((5, 6)), g.random((5, 4)), g.random((4, 6))),
        "gemver": lambda g: (1.5, 1.2, g.random((5, 5)), *[g.random(5) for _ in range(8)]),
        "gesummv": lambda g: (1.5, 1.2, g.random((5, 5)), g.random((5, 5)), g.random(5)),
        "atax": lambda g: (g.random((5, 6)), g.random(6)),
        "bicg": lambda g: (g.random((5, 6)), g.random(6), g.random(5)),
        "mvt": lambda g: (g.random(5), g.random(5), g.random(5), g.random(5), g.random((5, 5))),
        "syrk": lambda g: (1.5, 1.2, g.random((5, 5)), g.random((5, 4))),
        "syr2k": lambda g: (1.5, 1.2, g.random((5, 5)), g.random((5, 4)), g.random((5, 4))),
        "doitgen": lambda g: (g.random((3, 4, 5)), g.random((5, 5))),
        "k2mm": lambda g: (1.5, 1.2, g.random((4, 5)), g.random((5, 3)), g.random((3, 6)), g.random((4, 6))),
        "k3mm": lambda g: (g.random((4, 5)), g.random((5, 3)), g.random((3, 6)), g.random((6, 2))),
        "trmm": lambda g: (1.5, g.random((5, 5)), g.random((5, 4))),
        "symm": lambda g: (1.5, 1.2, g.random((4, 5)), g.random((4, 4)), g.random((4, 5))),
        "covariance": lambda g: (7.0, g.random((7, 4))),
        "correlation": lambda g: (7.0, g.random((7, 4))),
        "jacobi_1d": lambda g: (4, g.random(12), g.random(12)),
        "jacobi_2d": lambda g: (4, g.random((8, 8)), g.random((8, 8))),
        "heat_3d": lambda g: (3, g.random((5, 5, 5)), g.random((5, 5, 5))),
        "fdtd_2d": lambda g: (3, g.random((5, 6)), g.random((5, 6)), g.random((5, 6)), g.random(3)),
        "seidel_2d": lambda g: (3, 6, g.random((6, 6))),
        "adi_like": lambda g: (2, g.random((5, 5))),
        "trisolv": lambda g: (np.tril(g.random((6, 6))) + 6 * np.eye(6), g.random(6), g.random(6)),
        "lu": lambda g: (_spd(g, 5),),
        "ludcmp": lambda g: (_spd(g, 5), g.random(5)),
        "cholesky": lambda g: (_spd(g, 5),),
        "durbin": lambda g: (g.random(6) * 0.3,),
        "gramschmidt": lambda g: (g.random((6, 4)) + np.eye(6, 4),),
        "back_substitution": lambda g: (np.triu(g.random((6, 6))) + 6 * np.eye(6), g.random(6)),
        "mlp": lambda g: (g.standard_normal((4, 6)), *[g.standard_normal(s) * 0.5 for s in ((6, 8), 8, (8, 8), 8, (8, 3), 3)],
                          np.eye(3)[g.integers(0, 3, 4)]),
        "softmax": lambda g: (g.standard_normal((3, 5)),),
        "log_softmax_ce": lambda g: (g.standard_normal((4, 5)), np.eye(5)[g.integers(0, 5, 4)]),
        "conv2d_bias": lambda g: (g.standard_normal((2, 2, 5, 5)), g.standard_normal((3, 2, 3, 3)), g.standard_normal(3)),
        "maxpool2x2": lambda g: (g.standard_normal((2, 2, 4, 6)),),
        "layernorm": lambda g: (g.standard_normal((3, 6)), g.standard_normal(6), g.standard_normal(6)),
        "attention": lambda g: (g.standard_normal((4, 3)), g.standard_normal((5, 3)), g.standard_normal((5, 2))),
        "mse_linear_regression": lambda g: (g.standard_normal((6, 3)), g.standard_normal(3), 0.3, g.standard_normal(6)),
        "logistic_regression": lambda g: (g.standard_normal((6, 3)), g.standard_normal(3), (g.random(6) > 0.5) * 1.0),
        "rnn": lambda g: (g.standard_normal((4, 3)), g.standard_normal(5), g.standard_normal((3, 5)) * 0.5,
                          g.standard_normal((5, 5)) * 0.5),
        "huber": lambda g: (g.standard_normal(8) * 2, g.standard_normal(8)),
        "horner": lambda g: (g.standard_normal(4), g.standard_normal(6)),
        "dot_loop": lambda g: (g.standard_normal(6), g.standard_normal(6)),
        "piecewise_sum": lambda g: (g.standard_normal(8),),
        "running_max_loss": lambda g: (g.permutation(8) + g.random(8) * 0.1,),
        "cumsum_loop": lambda g: (g.standard_normal(7),),
        "trapezoid": lambda g: (g.standard_normal(9), 0.25),
        "polynomial_eval": lambda g: (g.standard_normal(5), g.standard_normal(5), g.standard_normal(5), g.standard_normal(5)),
        "nbody_energy": lambda g: (g.standard_normal((4, 3)), g.random(4) + 0.5),
        "matrix_power_trace": lambda g: (g.random((4, 4)) * 0.5, 3),
        "outer_normalize": lambda g: (g.standard_normal(4), g.standard_normal(3)),
        "reverse_dot": lambda g: (g.standard_normal(6), g.standard_normal(6)),
        "diag_plus": lambda g: (g.standard_normal((4, 4)), g.standard_normal(4)),
        "clamp_sum": lambda g: (g.standard_normal(8), -0.5, 0.7),
        "strided_energy": lambda g: (g.standard_normal(10),),
        "einsum_bilinear": lambda g: (g.standard_normal(3), g.standard_normal((3, 4)), g.standard_normal(4)),
        "batched_matmul": lambda g: (g.standard_normal((2, 3, 4)), g.standard_normal((2, 4, 2))),
        "mixed_precision": lambda g: (g.standard_normal(6).astype(np.float32), g.standard_normal(6).astype(np.float32)),
        "concat_features": lambda g: (g.standard_normal((3, 2)), g.standard_normal((3, 4))),
        "reshape_pool": lambda g: (g.standard_normal((4, 6)),),
        "arange_weights": lambda g: (g.standard_normal(6),),
        "alias_update": lambda g: (g.random(4),),
        "swap_buffers": lambda g: (g.random(6), g.random(6)),
        "parity_branches": lambda g: (g.random(5),),
        "index_counter": lambda g: (g.random(5),),
        "scale_rows": lambda g: (g.random((3, 4)),),
        "floyd_warshall": lambda g: (g.random((4, 4)),),
        "go_fast": lambda g: (g.random((4, 4)),),
        "nussinov_like": lambda g: (g.random((5, 5)),),
        "cross_entropy_labels": lambda g: (g.standard_normal((4, 5)), g.integers(0, 5, 4)),
        "standardize": lambda g: (g.standard_normal((5, 3)),),
        "log_cosh_loss": lambda g: (g.standard_normal(6), g.standard_normal(6)),
        "cross_entropy_gather": lambda g: (g.standard_normal((4, 5)), g.integers(0, 5, 4)),
        "embedding_bag": lambda g: (g.standard_normal((6, 3)), g.integers(0, 6, 5), g.standard_normal(3)),
        "permuted_dot": lambda g: (g.standard_normal(6), g.integers(0, 6, 6)),
        "select_columns": lambda g: (g.standard_normal((4, 5)), g.integers(0, 4, 3)),
        "gather_2d": lambda g: (g.standard_normal((4, 5)), g.integers(0, 4, 3), g.integers(0, 5, 3)),
        "masked_relu_loss": lambda g: (g.standard_normal(6), g.standard_normal(6)),
    }


CASES = _cases()
