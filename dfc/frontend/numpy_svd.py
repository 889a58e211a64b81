"""np.linalg.svd and svdvals (and the singular values np.linalg.norm's matrix ord 2, -2 and 'nuc' reads) as
calls of linalg_kernels.svd, qr and signed_q (one-sided Jacobi rotations)."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from dfc.frontend.affine import Affine
from dfc.frontend.arrays import Const, Expr
from dfc.frontend.numpy_args import Handler, astype, bind, expr_of, static
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


SVD_HANDLERS: dict[Any, Handler] = {np.linalg.svd: _svd, np.linalg.svdvals: _svdvals}
