"""NumPy's products: dot, matmul, inner, vdot, outer and einsum, as
`nn.dot_general` contractions; `np.linalg.cholesky`, `solve`, `inv` and `det`
as calls of the loops in linalg_kernels.py."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from dfc.frontend.affine import Affine
from dfc.frontend.arrays import Expr
from dfc.frontend.numpy_args import (
    Handler,
    astype,
    bind,
    expr_of,
    no_kwargs,
    static,
)
from dfc.frontend.numpy_shapes import flat, transpose


def matmul(tr, a: Expr, b: Expr, node: ast.AST) -> Expr:
    """`a @ b` as NumPy's matmul: a 1-d operand is a row (a) or a column (b) whose
    dimension is dropped; the dimensions before the last two are batch
    dimensions, aligned from the right and broadcast (a size-1 one is read at 0)."""
    if a.ndim == 0 or b.ndim == 0:
        raise tr.fail("matmul (@) of a 0-d operand: NumPy refuses it (use * to scale)", node)
    if a.ndim <= 2 and b.ndim <= 2:  # no batch dimensions: the shapes may be dynamic
        return tr.em.contract([a, b], ["yz"[2 - a.ndim:], "zx"[:b.ndim]], ("y" if a.ndim == 2 else "") +
                              ("x" if b.ndim == 2 else ""))
    ra, rb = max(a.ndim - 2, 0), max(b.ndim - 2, 0)
    n = max(ra, rb)
    sizes_a = [1] * (n - ra) + tr.em.static(a, "a stacked matmul operand")[:ra]
    sizes_b = [1] * (n - rb) + tr.em.static(b, "a stacked matmul operand")[:rb]
    drop_a, drop_b = [], []  # batch positions broadcast from size 1: read at index 0
    for k, (x, y) in enumerate(zip(sizes_a, sizes_b)):
        if x != y and 1 not in (x, y):
            raise tr.fail(f"matmul (@): batch dimensions {tuple(sizes_a)} and {tuple(sizes_b)} do not broadcast", node)
        if x == 1 and y != 1 and k >= n - ra:
            drop_a.append(k)
        if y == 1 and x != 1 and k >= n - rb:
            drop_b.append(k)
    batch = LETTERS[:n]

    def operand(e: Expr, rank: int, drop: list, matrix: str) -> tuple[Expr, str]:
        first = n - rank
        if drop:
            e = tr.index(e, tuple(0 if first + j in drop else slice(None) for j in range(rank)), node)
        return e, "".join(batch[first + j] for j in range(rank) if first + j not in drop) + matrix

    a, sa = operand(a, ra, drop_a, "yz" if a.ndim >= 2 else "z")
    b, sb = operand(b, rb, drop_b, "zx" if b.ndim >= 2 else "z")
    out = batch + ("y" if "y" in sa else "") + ("x" if "x" in sb else "")
    return tr.em.contract([a, b], [sa, sb], out)


LETTERS = "abcdefghijklmnopqrstuvwxy"  # "z" is the contracted index below


def _two(tr, args, kwargs, node, what: str) -> tuple[Expr, Expr]:
    a, b = bind(tr, args, kwargs, node, what, ("a", "b"))
    return expr_of(tr, a, node), expr_of(tr, b, node)


def _dot(tr, args, kwargs, node):
    """np.dot: a product with a scalar; else the last axis of a against the
    second-to-last of b (its only one when b is a vector)."""
    a, b = _two(tr, args, kwargs, node, "np.dot")
    if a.ndim == 0 or b.ndim == 0:
        return tr.binop("mul", a, b, node)
    if a.ndim <= 2 and b.ndim <= 2:
        return matmul(tr, a, b, node)
    sa = LETTERS[:a.ndim - 1] + "z"
    rest = LETTERS[a.ndim - 1:a.ndim + b.ndim - 2]
    sb = rest[:-1] + "z" + rest[-1:] if b.ndim > 1 else "z"
    return tr.em.contract([a, b], [sa, sb], sa[:-1] + rest)


def _matmul(tr, args, kwargs, node):
    a, b = _two(tr, args, kwargs, node, "np.matmul")
    return matmul(tr, a, b, node)


def _inner(tr, args, kwargs, node):
    """np.inner: a product with a scalar; else the last axes of a and b against each other."""
    a, b = _two(tr, args, kwargs, node, "np.inner")
    if a.ndim == 0 or b.ndim == 0:
        return tr.binop("mul", a, b, node)
    sa = LETTERS[:a.ndim - 1] + "z"
    sb = LETTERS[a.ndim - 1:a.ndim + b.ndim - 2] + "z"
    return tr.em.contract([a, b], [sa, sb], sa[:-1] + sb[:-1])


def _vdot(tr, args, kwargs, node):
    """np.vdot: the dot product of the flattened arrays (real: no conjugate)."""
    a, b = _two(tr, args, kwargs, node, "np.vdot")
    return tr.em.contract([flat(tr, a, node), flat(tr, b, node)], ["z", "z"], "")


def _outer(tr, args, kwargs, node):
    a, b = _two(tr, args, kwargs, node, "np.outer")
    return tr.em.contract([flat(tr, a, node), flat(tr, b, node)], ["i", "j"], "ij")


def _einsum(tr, args, kwargs, node):
    no_kwargs(tr, kwargs, node, ("optimize",))
    if not args or not isinstance(args[0], str):
        raise tr.fail("np.einsum needs a subscripts string first", node)
    spec = args[0].replace(" ", "")
    if "." in spec:
        raise tr.fail("np.einsum with ellipses is not supported", node)
    inputs, _, out = spec.partition("->")
    subscripts = inputs.split(",")
    if "->" not in spec:
        letters = "".join(subscripts)
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    operands = [expr_of(tr, x, node) for x in args[1:]]
    if len(operands) != len(subscripts):
        raise tr.fail(f"np.einsum: {len(subscripts)} subscripts for {len(operands)} operands", node)
    if any(len(set(s)) != len(s) for s in subscripts):
        raise tr.fail("np.einsum with a repeated index in one operand (a diagonal) is not supported", node)
    if len(set(out)) != len(out) or any(c not in inputs for c in out) or not all(c.isalpha() for c in spec if c not in ",->"):
        raise tr.fail(f"np.einsum: invalid subscripts '{args[0]}'", node)
    return tr.em.contract(operands, subscripts, out)


_KERNELS: dict[str, Any] = {}


def kernel(tr, name: str, args: list, node: ast.AST) -> Any:
    """A call of linalg_kernels.`name` (compiled like a jitted function, once per signature)."""
    from dfc.frontend import JitFunction, linalg_kernels

    if name not in _KERNELS:
        _KERNELS[name] = JitFunction(getattr(linalg_kernels, name))
    return tr.callee(tr, _KERNELS[name], args, {}, node)


def _square(tr, a: Any, node: ast.AST, what: str) -> Expr:
    """A square float matrix (integers as float64, as NumPy's linalg computes)."""
    e = expr_of(tr, a, node)
    if e.ndim != 2 or e.shape[0] != e.shape[1] or e.static_shape is None:
        raise tr.fail(f"{what} takes a square matrix of constant size (stacks of matrices are not supported), "
                      f"got shape ({', '.join(map(str, e.shape))})", node)
    return e if e.dtype in ("f32", "f64") and not e.weak else astype(tr, e, "f64", node)


def _cholesky(tr, args, kwargs, node):
    (a,) = bind(tr, args, kwargs, node, "np.linalg.cholesky", ("a",))
    return kernel(tr, "cholesky", [_square(tr, a, node, "np.linalg.cholesky")], node)


def _det(tr, args, kwargs, node):
    (a,) = bind(tr, args, kwargs, node, "np.linalg.det", ("a",))
    return kernel(tr, "det", [_square(tr, a, node, "np.linalg.det")], node)


def _solve(tr, args, kwargs, node):
    a, b = bind(tr, args, kwargs, node, "np.linalg.solve", ("a", "b"))
    m = _square(tr, a, node, "np.linalg.solve")
    rhs = expr_of(tr, b, node)
    if rhs.ndim not in (1, 2) or rhs.shape[0] != m.shape[0]:
        raise tr.fail(f"np.linalg.solve: b must have shape ({m.shape[0]},) or ({m.shape[0]}, k), got "
                      f"({', '.join(map(str, rhs.shape))})", node)
    rhs = astype(tr, rhs, m.dtype, node)
    x = kernel(tr, "solve_matrix", [m, tr.index(rhs, (slice(None), None), node) if rhs.ndim == 1 else rhs], node)
    return tr.index(x, (slice(None), 0), node) if rhs.ndim == 1 else x


def _inv(tr, args, kwargs, node):
    from dfc.frontend.arrays import Const

    (a,) = bind(tr, args, kwargs, node, "np.linalg.inv", ("a",))
    m = _square(tr, a, node, "np.linalg.inv")
    n = m.shape[0]
    i = tr.index(_iota(n), (slice(None), None), node)
    j = tr.index(_iota(n), (None, slice(None)), node)
    eye = tr.elementwise("where", [tr.compare("eq", i, j, node), Const(1.0, m.dtype, False), Const(0.0, m.dtype, False)],
                         node, m.dtype)
    return kernel(tr, "solve_matrix", [m, eye], node)


def _qr(tr, args, kwargs, node):
    """np.linalg.qr(a, mode='reduced'|'complete'|'r') of a matrix of constant shape: Householder reflections
    as LAPACK's (linalg_kernels.qr), so Q and R are NumPy's, signs included."""
    a, mode = bind(tr, args, kwargs, node, "np.linalg.qr", ("a", "mode"), ("reduced",))
    mode = static(mode)
    m = expr_of(tr, a, node)
    if m.ndim != 2 or m.static_shape is None:
        raise tr.fail(f"np.linalg.qr takes a matrix of constant shape (stacks of matrices are not supported), got "
                      f"shape ({', '.join(map(str, m.shape))})", node)
    if mode not in ("reduced", "complete", "r"):
        raise tr.fail(f"np.linalg.qr's mode {mode!r} is not supported ('reduced', 'complete' or 'r')", node)
    m = m if m.dtype in ("f32", "f64") and not m.weak else astype(tr, m, "f64", node)
    rows, cols = m.static_shape
    k = min(rows, cols)
    q, r = kernel(tr, "qr", [m, Affine(rows if mode == "complete" else k)], node)
    if mode == "complete":
        return q, r
    r = tr.index(r, (slice(0, k),), node)
    return r if mode == "r" else (q, r)


EIGH_MAX_SWEEPS = 50
"""Jacobi sweeps before `np.linalg.eigh` gives NaN (NumPy's LinAlgError); a symmetric matrix takes ~5-10."""


def _symmetric(tr, a: Any, uplo: Any, node: ast.AST, what: str) -> Expr:
    """The symmetric matrix NumPy's eigh reads: A's lower triangle mirrored (UPLO='L'), or its upper one."""
    side = static(uplo)
    if side not in ("L", "U"):
        raise tr.fail(f"{what}'s UPLO must be 'L' or 'U', got {side!r}", node)
    m = _square(tr, a, node, what)
    n = m.shape[0]
    i = tr.index(_iota(n), (slice(None), None), node)
    j = tr.index(_iota(n), (None, slice(None)), node)
    kept = tr.compare("ge" if side == "L" else "le", i, j, node)
    return tr.elementwise("where", [kept, m, transpose(tr, m, None, node)], node, m.dtype)


def _eigh_kernel(tr, a: Any, uplo: Any, node: ast.AST, what: str) -> tuple:
    from dfc.frontend.arrays import Const

    m = _symmetric(tr, a, uplo, node, what)
    tol = Const(float(np.finfo(np.float32 if m.dtype == "f32" else np.float64).eps) ** 2, m.dtype, False)
    return kernel(tr, "eigh", [m, Affine(EIGH_MAX_SWEEPS), tol], node)


def _eigh(tr, args, kwargs, node):
    """np.linalg.eigh(a, UPLO='L'): (eigenvalues ascending, eigenvectors as columns) by Jacobi rotations
    (linalg_kernels.eigh); the eigenvectors equal NumPy's up to each column's sign."""
    a, uplo = bind(tr, args, kwargs, node, "np.linalg.eigh", ("a", "UPLO"), ("L",))
    return _eigh_kernel(tr, a, uplo, node, "np.linalg.eigh")


def _eigvalsh(tr, args, kwargs, node):
    a, uplo = bind(tr, args, kwargs, node, "np.linalg.eigvalsh", ("a", "UPLO"), ("L",))
    return _eigh_kernel(tr, a, uplo, node, "np.linalg.eigvalsh")[0]


def _iota(n):
    from dfc.frontend.affine import Affine
    from dfc.frontend.arrays import Iota

    return Iota(Affine(0), 1, n)


LINALG_HANDLERS: dict[Any, Handler] = {
    np.linalg.cholesky: _cholesky, np.linalg.det: _det, np.linalg.qr: _qr, np.linalg.solve: _solve, np.linalg.inv: _inv,
    np.linalg.eigh: _eigh, np.linalg.eigvalsh: _eigvalsh,
    np.dot: _dot, np.matmul: _matmul, np.inner: _inner, np.vdot: _vdot, np.outer: _outer, np.einsum: _einsum,
}
