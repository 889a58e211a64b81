"""np.linalg on stacks of matrices (NumPy's leading dimensions, each matrix on its own): `cholesky`, `qr`,
`eigh`, `eigvalsh`, `svd`, `solve`, `inv` and `det` of an array of rank 3 or more, built from the loops
of `dialects.nn_linalg_builders` (the ones JAX's and PyTorch's calls use); a single matrix keeps its
NumPy loop (linalg_kernels.py). Where NumPy raises LinAlgError (a matrix not positive definite, a
Jacobi iteration that does not converge) the result holds NaN; a singular matrix's solve, inverse
or determinant holds infinities, NaN or 0, as the unstacked ones do. Eigenvectors and singular
vectors equal NumPy's up to each one's sign; Q and R equal NumPy's. `np.linalg.eig` (a general
matrix's complex eigenvalues) is refused by name: it would need a nonsymmetric (Hessenberg QR)
iteration with complex results, which dfc does not build."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np
from xdsl.dialects.builtin import f32, i64
from xdsl.ir import SSAValue

from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_linalg_builders as lb
from dfc.dialects import nn_shape as nns
from dfc.frontend.arrays import View
from dfc.frontend.numpy_args import Handler, astype, bind, expr_of, static
from dfc.frontend.numpy_linalg import LINALG_HANDLERS
from dfc.frontend.numpy_svd import SVD_HANDLERS


def _stack(tr, a: Any, node: ast.AST, what: str, square: bool = True) -> SSAValue | None:
    """a as a float tensor when it is a stack of matrices (rank > 2), else None (the unstacked handler's)."""
    e = expr_of(tr, a, node)
    if e.ndim <= 2:
        return None
    shape = e.static_shape
    if shape is None or (square and shape[-1] != shape[-2]) or 0 in shape:
        raise tr.fail(f"{what} takes stacks of {'square ' if square else ''}matrices of constant, nonzero size, got "
                      f"shape ({', '.join(map(str, e.shape))})", node)
    e = e if e.dtype in ("f32", "f64") and not e.weak else astype(tr, e, "f64", node)
    return tr.em.materialize(e, e.dtype)


def _swap(o: lb.Ops, x: SSAValue) -> SSAValue:
    r = len(lb.shape(x))
    return o(nn.TransposeOp(x, [*range(r - 2), r - 1, r - 2]))


def _triangle(o: lb.Ops, x: SSAValue, direction: str) -> SSAValue:
    """x where row `direction` column (GE: the lower triangle, LE: the upper), else 0."""
    dims, r = lb.shape(x), len(lb.shape(x))
    return o.where(o.cmp(o.iota(dims, r - 2), o.iota(dims, r - 1), direction), x, o.f(0.0, x))


def _nan_unless(o: lb.Ops, ok: SSAValue, x: SSAValue) -> SSAValue:
    """x, NaN in each matrix (ok [*batch]) that is not ok."""
    dims, nb = lb.shape(x), len(lb.shape(ok))
    return o.where(o(nns.BroadcastInDimOp(ok, dims, list(range(nb)))), x, o.f(float("nan"), x))


def _stacked(fallback: Handler, names: tuple[str, ...], defaults: tuple, what: str, square: bool = True):
    """A handler computing stacks with `build(tr, o, a, *rest, node)`, the unstacked ones with `fallback`."""
    def decorate(build):
        def handler(tr, args, kwargs, node):
            bound = bind(tr, args, kwargs, node, what, names, defaults)
            a = _stack(tr, bound[0], node, what, square)
            if a is None:
                return fallback(tr, args, kwargs, node)
            result = build(tr, lb.Ops(tr.em.b), a, *bound[1:], node=node)
            return tuple(View.whole(r) for r in result) if isinstance(result, tuple) else View.whole(result)
        return handler
    return decorate


@_stacked(LINALG_HANDLERS[np.linalg.cholesky], ("a",), (), "np.linalg.cholesky")
def _cholesky(tr, o, a, node):
    factor, failed = lb.cholesky(o, a)
    return _nan_unless(o, o(nne.NotOp(failed)), factor)


@_stacked(LINALG_HANDLERS[np.linalg.qr], ("a", "mode"), ("reduced",), "np.linalg.qr", square=False)
def _qr(tr, o, a, mode, node):
    mode = static(mode)
    if mode not in ("reduced", "complete", "r"):
        raise tr.fail(f"np.linalg.qr's mode {mode!r} is not supported ('reduced', 'complete' or 'r')", node)
    dims = lb.shape(a)
    batch, (m, n), nb = dims[:-2], dims[-2:], len(dims) - 2
    k = min(m, n)
    packed, taus = lb.geqrf(o, a)
    rows = m if mode == "complete" else k
    r = _triangle(o, o(nns.SliceOp(packed, [0] * len(dims), [*batch, rows, n], [1] * len(dims))), "LE")
    if mode == "r":
        return r
    columns = m if mode == "complete" else k
    if columns > n:
        packed = o(nns.PadOp(packed, o.f(0.0, a), [0] * len(dims), [0] * (nb + 1) + [columns - n], [0] * len(dims)))
    elif columns < n:
        packed = o(nns.SliceOp(packed, [0] * len(dims), [*batch, m, columns], [1] * len(dims)))
    return lb.orgqr(o, packed, taus), r


def _eigh_of(tr, o, a, uplo, node, what):
    side = static(uplo)
    if side not in ("L", "U"):
        raise tr.fail(f"{what}'s UPLO must be 'L' or 'U', got {side!r}", node)
    dims, r = lb.shape(a), len(lb.shape(a))
    kept = o.cmp(o.iota(dims, r - 2), o.iota(dims, r - 1), "GE" if side == "L" else "LE")
    w, v, converged = lb.jacobi_eigh(o, o.where(kept, a, _swap(o, a)))
    return _nan_unless(o, converged, w), _nan_unless(o, converged, v)


@_stacked(LINALG_HANDLERS[np.linalg.eigh], ("a", "UPLO"), ("L",), "np.linalg.eigh")
def _eigh(tr, o, a, uplo, node):
    return _eigh_of(tr, o, a, uplo, node, "np.linalg.eigh")


@_stacked(LINALG_HANDLERS[np.linalg.eigvalsh], ("a", "UPLO"), ("L",), "np.linalg.eigvalsh")
def _eigvalsh(tr, o, a, uplo, node):
    return _eigh_of(tr, o, a, uplo, node, "np.linalg.eigvalsh")[0]


@_stacked(SVD_HANDLERS[np.linalg.svd], ("a", "full_matrices", "compute_uv", "hermitian"), (True, True, False),
          "np.linalg.svd", square=False)
def _svd(tr, o, a, full, uv, hermitian, node):
    for name, flag in (("full_matrices", full), ("compute_uv", uv), ("hermitian", hermitian)):
        if not isinstance(static(flag), bool):
            raise tr.fail(f"np.linalg.svd's {name} must be a constant bool", node)
    m, n = lb.shape(a)[-2:]
    wide = m < n
    columns = None if not static(uv) else max(m, n) if static(full) else min(m, n)
    s, u, v, converged = lb.jacobi_svd(o, _swap(o, a) if wide else a, columns)
    s = _nan_unless(o, converged, s)
    if u is None or v is None:
        return s
    u, v = _nan_unless(o, converged, u), _nan_unless(o, converged, v)
    return (v, s, _swap(o, u)) if wide else (u, s, _swap(o, v))


def _lu_solve(o: lb.Ops, a: SSAValue, rhs: SSAValue) -> SSAValue:
    """x with a x = rhs ([*batch, n, k]): getrf of [a | rhs], then back substitution."""
    n = lb.shape(a)[-1]
    lu, _ = lb.getrf(o, o(nns.ConcatenateOp([a, rhs], len(lb.shape(a)) - 1)))
    return lb.back_substitute(o, lu, n)


@_stacked(LINALG_HANDLERS[np.linalg.solve], ("a", "b"), (), "np.linalg.solve")
def _solve(tr, o, a, b, node):
    dims = lb.shape(a)
    e = expr_of(tr, b, node)
    shape = e.static_shape
    vector = e.ndim == 1
    batch, n = dims[:-2], dims[-1]
    if shape is None or (vector and shape[0] != n) or (not vector and (shape[-2] != n or e.ndim > len(dims))):
        raise tr.fail(f"np.linalg.solve: b of shape ({', '.join(map(str, e.shape))}) for a stack of shape {dims}", node)
    rhs = tr.em.materialize(astype(tr, e, "f32" if lb.element(a) == f32 else "f64", node))
    target = [*batch, n, 1 if vector else shape[-1]]
    rhs = o(nns.BroadcastInDimOp(rhs, target, [len(target) - 2] if vector else
                                 list(range(len(target) - len(shape), len(target)))))
    x = _lu_solve(o, a, rhs)
    return o(nn.ReshapeOp(x, [*batch, n])) if vector else x


@_stacked(LINALG_HANDLERS[np.linalg.inv], ("a",), (), "np.linalg.inv")
def _inv(tr, o, a, node):
    return _lu_solve(o, a, lb.eye(o, lb.shape(a), a))


@_stacked(LINALG_HANDLERS[np.linalg.det], ("a",), (), "np.linalg.det")
def _det(tr, o, a, node):
    """The product of U's diagonal in order, negated for each row swap (getrf's pivots)."""
    dims = lb.shape(a)
    nb, n = len(dims) - 2, dims[-1]
    lu, pivots = lb.getrf(o, a)
    diagonal = o(nn.ReduceOp(o(nn.MulOp(lu, lb.eye(o, dims, a))), "sum", [nb + 1]))
    swapped = o.cmp(o(nne.ConvertOp(pivots, i64)), o(nn.AddOp(o.iota([*dims[:-2], n], nb), o.i(1))), "NE")
    product = o(nns.SliceOp(diagonal, [0] * (nb + 1), [*dims[:-2], 1], [1] * (nb + 1)))
    for j in range(1, n):
        product = o(nn.MulOp(product, o(nns.SliceOp(diagonal, [0] * nb + [j], [*dims[:-2], j + 1], [1] * (nb + 1)))))
    product = o(nn.ReshapeOp(product, list(dims[:-2])))
    parity = o(nn.ReduceOp(o(nne.ConvertOp(swapped, lb.element(a))), "sum", [nb]))
    odd = o.cmp(o(nne.RemainderOp(parity, o.f(2.0, a))), o.f(1.0, a), "EQ")
    return o.where(odd, o(nn.NegOp(product)), product)


def _eig(tr, args, kwargs, node):
    raise tr.fail("np.linalg.eig (a general matrix's eigenvalues, complex) is not supported: dfc builds the symmetric "
                  "eigenproblem only (np.linalg.eigh, eigvalsh)", node)


STACKED_LINALG_HANDLERS: dict[Any, Handler] = {
    np.linalg.cholesky: _cholesky, np.linalg.qr: _qr, np.linalg.eigh: _eigh, np.linalg.eigvalsh: _eigvalsh,
    np.linalg.svd: _svd, np.linalg.solve: _solve, np.linalg.inv: _inv, np.linalg.det: _det,
    np.linalg.eig: _eig, np.linalg.eigvals: _eig,
}
"""np.linalg's handlers that take stacks (numpy_api merges them over LINALG_HANDLERS and SVD_HANDLERS)."""
