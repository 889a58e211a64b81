"""np.linalg.svd and svdvals (and the singular values np.linalg.norm's matrix ord 2, -2 and 'nuc' reads) as
calls of linalg_kernels.svd, qr and signed_q (one-sided Jacobi rotations); pinv, matrix_rank and cond from
them (linalg_kernels.pinv_of, rank_of, cond_of)."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from dfc.frontend.affine import Affine
from dfc.frontend.arrays import Const, Expr
from dfc.frontend.numpy_args import MISSING, Handler, astype, bind, expr_of, static
from dfc.frontend.numpy_linalg import kernel
from dfc.frontend.numpy_shapes import transpose

SVD_MAX_SWEEPS = 50
"""Jacobi sweeps before `np.linalg.svd` gives NaN singular values (NumPy's LinAlgError); a matrix takes ~5-10."""


def _matrix(tr, a: Any, node: ast.AST, what: str) -> Expr:
    """A float matrix of constant shape (integers as float64, as NumPy's linalg computes)."""
    e = expr_of(tr, a, node)
    if e.ndim != 2 or e.static_shape is None:
        raise tr.fail(f"{what} takes a matrix of constant shape (stacks of matrices are not supported), got shape "
                      f"({', '.join(map(str, e.shape))})", node)
    return e if e.dtype in ("f32", "f64") and not e.weak else astype(tr, e, "f64", node)


def singular(tr, a: Any, node: ast.AST, what: str, vectors: bool = False, full: bool = False) -> Any:
    """The singular values of `a` (descending), and with `vectors` (U, S, Vh) as np.linalg.svd's (U and Vh
    square with `full`). A wide matrix is decomposed as its transpose, whose U and V swap."""
    m = _matrix(tr, a, node, what)
    rows, cols = m.static_shape
    wide = rows < cols
    if wide:
        m = transpose(tr, m, None, node)
    tall, short = max(rows, cols), min(rows, cols)
    eps = float(np.finfo(np.float32 if m.dtype == "f32" else np.float64).eps)
    tol = Const(tall * eps * eps, m.dtype, False)
    if not vectors:
        return kernel(tr, "svd", [m, Affine(SVD_MAX_SWEEPS), tol], node)[0]
    s, u, v = kernel(tr, "svd", [m, Affine(SVD_MAX_SWEEPS), tol], node)
    q, r = kernel(tr, "qr", [u, Affine(tall if full else short)], node)  # U orthonormal at any rank, completed
    u = kernel(tr, "signed_q", [q, r], node)
    return (v, s, transpose(tr, u, None, node)) if wide else (u, s, transpose(tr, v, None, node))


def _svd(tr, args, kwargs, node):
    """np.linalg.svd(a, full_matrices=True, compute_uv=True, hermitian=False) of a matrix of constant shape:
    U and Vh are NumPy's up to the sign of each singular pair (and the choice of the completing columns)."""
    a, full, uv, hermitian = bind(tr, args, kwargs, node, "np.linalg.svd",
                                  ("a", "full_matrices", "compute_uv", "hermitian"), (True, True, False))
    for name, flag in (("full_matrices", full), ("compute_uv", uv), ("hermitian", hermitian)):
        if not isinstance(static(flag), bool):
            raise tr.fail(f"np.linalg.svd's {name} must be a constant bool", node)
    return singular(tr, a, node, "np.linalg.svd", static(uv), static(full))


def _svdvals(tr, args, kwargs, node):
    (a,) = bind(tr, args, kwargs, node, "np.linalg.svdvals", ("x",))
    return singular(tr, a, node, "np.linalg.svdvals")


def _eps(m: Expr) -> float:
    return float(np.finfo(np.float32 if m.dtype == "f32" else np.float64).eps)


def _matrix_rank(tr, args, kwargs, node):
    """np.linalg.matrix_rank(A, tol=None, hermitian=False, rtol=None) of a matrix: the singular values above
    tol, or above rtol (max(m, n) eps by default) times the largest."""
    a, tol, _, rtol = bind(tr, args, kwargs, node, "np.linalg.matrix_rank", ("A", "tol", "hermitian", "rtol"),
                           (None, False, None))
    m = _matrix(tr, a, node, "np.linalg.matrix_rank")
    if static(tol) is not None and static(rtol) is not None:
        raise tr.fail("np.linalg.matrix_rank: tol and rtol can't be both set", node)
    s = singular(tr, m, node, "np.linalg.matrix_rank")
    if static(tol) is None:
        relative = Const(max(m.static_shape) * _eps(m), m.dtype, False) if static(rtol) is None else rtol
        tol = tr.binop("mul", tr.index(s, (0,), node), expr_of(tr, relative, node), node)  # s[0] is the largest
    return kernel(tr, "rank_of", [s, astype(tr, expr_of(tr, tol, node), m.dtype, node)], node)


def _pinv(tr, args, kwargs, node):
    """np.linalg.pinv(a, rcond=None, hermitian=False, rtol=...) of a matrix: the reduced SVD's pseudo-inverse
    over the singular values above rcond (1e-15 by default, rtol's max(m, n) eps when rtol=None) times the
    largest."""
    a, rcond, _, rtol = bind(tr, args, kwargs, node, "np.linalg.pinv", ("a", "rcond", "hermitian", "rtol"),
                             (None, False, MISSING))
    m = _matrix(tr, a, node, "np.linalg.pinv")
    if static(rcond) is not None and rtol is not MISSING:
        raise tr.fail("np.linalg.pinv: rtol and rcond can't be both set", node)
    if static(rcond) is None:
        default = 1e-15 if rtol is MISSING else max(m.static_shape) * _eps(m)
        rcond = Const(default, m.dtype, False) if rtol is MISSING or static(rtol) is None else rtol
    u, s, vh = singular(tr, m, node, "np.linalg.pinv", vectors=True)
    return kernel(tr, "pinv_of", [u, s, vh, astype(tr, expr_of(tr, rcond, node), m.dtype, node)], node)


def _cond(tr, args, kwargs, node):
    """np.linalg.cond(x, p=None) with p None or 2 (largest over smallest singular value) or -2 (the inverse);
    NaN as infinity unless x holds a NaN. The norms of the inverse (p 1, inf, 'fro', ...) are refused."""
    x, p = bind(tr, args, kwargs, node, "np.linalg.cond", ("x", "p"), (None,))
    order = static(p)
    if order not in (None, 2, -2):
        raise tr.fail(f"np.linalg.cond with p={order!r} is not supported (None, 2, -2)", node)
    m = _matrix(tr, x, node, "np.linalg.cond")
    s = singular(tr, m, node, "np.linalg.cond")
    largest, smallest = tr.index(s, (0,), node), tr.index(s, (s.shape[0] - 1,), node)
    top, bottom = (smallest, largest) if order == -2 else (largest, smallest)
    return kernel(tr, "cond_of", [top, bottom, m], node)


SVD_HANDLERS: dict[Any, Handler] = {np.linalg.svd: _svd, np.linalg.svdvals: _svdvals,
                                    np.linalg.matrix_rank: _matrix_rank, np.linalg.pinv: _pinv, np.linalg.cond: _cond}
