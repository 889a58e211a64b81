"""aten's matrix decompositions and the solvers on them, written as the LAPACK calls JAX writes on CPU
(`stablehlo.custom_call @lapack_<t><routine>_ffi`), which `convert-stablehlo` builds after parsing
(`runtime.CompiledGraph`) from the same nn-op loops as JAX's (`passes/stablehlo_lapack.py`,
`dialects/nn_linalg_builders.py`), so autodiff differentiates them as any loop:

* `linalg_cholesky_ex` (potrf), `cholesky_solve`, `cholesky_inverse` (potrf's factor, trsm twice);
* `linalg_qr` (geqrf, orgqr): torch's Q and R, signs included;
* `_linalg_eigh` (syevd), `_linalg_svd` (gesdd; svdvals, matrix_rank, cond, matrix_norm 2/nuc):
  eigenvectors and singular vectors up to each one's sign;
* `_linalg_det`, `_linalg_slogdet`, `linalg_inv_ex`, `_linalg_solve_ex`, `linalg_lu_factor_ex`,
  `linalg_lu` (getrf: torch's LU and pivots; P from the pivots, then trsm);
* `linalg_pinv` (gesdd: the singular values above max(m, n) eps times the largest inverted);
* `linalg_solve_triangular` (trsm).

`info` is LAPACK's: the first column whose pivot is not positive (Cholesky) or is 0 (LU), 1-based, 0
where none; the factor past it holds NaN or infinities where LAPACK leaves a partial one (torch's
`_ex` variants return both; the checking variants raise, which dfc does not: see docs/torch.md).
An eigen- or singular value decomposition that does not converge has info 1 and NaN values.
Batch dimensions lead (equal for both operands of a solve); float32 and float64."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dfc.torch.aten_common import UnsupportedOp, handler_table
from dfc.torch.ir_text import Value

LINALG_HANDLERS, handles = handler_table()


def lapack(b, routine: str, operands: Sequence[Value], results: Sequence[tuple[Sequence[int], str]],
           **options: str) -> list[Value]:
    """`stablehlo.custom_call @lapack_<s|d><routine>_ffi` with LAPACK's character `options` (uplo='L')."""
    if operands[0].dtype not in ("f32", "f64"):
        raise UnsupportedOp(f"a {routine} of {operands[0].dtype} (float32 and float64 matrices)")
    name = b.fresh()
    kind = {"f32": "s", "f64": "d"}[operands[0].dtype]
    config = ", ".join(f"{k} = {ord(v)} : ui8" for k, v in options.items())
    types = [Value("", tuple(s), t).type for s, t in results]
    head = f"{name}:{len(results)}" if len(results) > 1 else name
    b.lines.append(f"{head} = stablehlo.custom_call @lapack_{kind}{routine}_ffi({', '.join(o.name for o in operands)})"
                   f" {{mhlo.backend_config = {{{config}}}}} : ({', '.join(o.type for o in operands)}) -> "
                   f"({', '.join(types)})")
    if len(results) == 1:
        return [Value(name, tuple(results[0][0]), results[0][1])]
    return [Value(f"{name}#{k}", tuple(s), t) for k, (s, t) in enumerate(results)]


def _matrix(a: Value, what: str, square: bool = True) -> tuple[tuple[int, ...], int, int]:
    if len(a.shape) < 2 or (square and a.shape[-1] != a.shape[-2]) or min(a.shape, default=0) < 0:
        raise UnsupportedOp(f"{what} of shape {list(a.shape)} ({'square ' if square else ''}matrices of static "
                            "shape)")
    if 0 in a.shape:
        raise UnsupportedOp(f"{what} of an empty matrix")
    return a.shape[:-2], a.shape[-2], a.shape[-1]


def _swap(b, x: Value) -> Value:
    r = len(x.shape)
    return b.transpose(x, [*range(r - 2), r - 1, r - 2])


def _triangle(b, x: Value, upper: bool, offset: int = 0) -> Value:
    """x's upper (lower) triangle from diagonal `offset`, the rest 0."""
    dims = x.shape
    rows = b.op("nn.iota", [], dims[-2:], "i64", iota_dimension=0)
    cols = b.op("nn.iota", [], dims[-2:], "i64", iota_dimension=1)
    kept = b.compare("GE" if upper else "LE", b.binary("nn.sub", cols, rows), offset)
    return b.op("nn.select", [kept, x, b.full(0.0, (), x.dtype)], dims, x.dtype)


def _symmetric(b, A: Value, lower: bool) -> Value:
    """The symmetric matrix torch reads (the `lower` triangle mirrored) with torch's symmetric gradient: (A +
    A^T) / 2 plus the stopped difference to the mirrored triangle (0 for a symmetric A)."""
    both = b.binary("nn.mul", b.binary("nn.add", A, _swap(b, A)), 0.5)
    mirrored = b.binary("nn.add", _triangle(b, A, upper=not lower), _triangle(b, _swap(b, A), upper=lower, offset=
                                                                               1 if lower else -1))
    return b.binary("nn.add", both, b.unary("nn.stop_gradient", b.binary("nn.sub", mirrored, both)))


def _eye(b, dims: Sequence[int], dtype: str) -> Value:
    rows = b.op("nn.iota", [], dims[-2:], "i64", iota_dimension=0)
    cols = b.op("nn.iota", [], dims[-2:], "i64", iota_dimension=1)
    return b.broadcast(b.convert(b.compare("EQ", rows, cols), dtype), list(dims))


def _first_failure(b, failed: Value) -> Value:
    """LAPACK's info from per-column failures [*batch, n] (i1): the first failing column, 1-based; 0 if none."""
    n = failed.shape[-1]
    position = b.op("nn.iota", [], failed.shape, "i64", iota_dimension=len(failed.shape) - 1)
    marked = b.op("nn.select", [failed, position, b.full(n, (), "i64")], failed.shape, "i64")
    first = b.reduce("min", marked, [len(failed.shape) - 1])
    info = b.op("nn.select", [b.compare("EQ", first, n), b.full(-1, (), "i64"), first], first.shape, "i64")
    return b.convert(b.binary("nn.add", info, 1), "i32")


def _diagonal(b, x: Value) -> Value:
    return b.reduce("sum", b.binary("nn.mul", x, _eye(b, x.shape, x.dtype)), [len(x.shape) - 1])


def _trsm(b, a: Value, rhs: Value, *, lower: bool, left: bool = True, transpose: bool = False,
          unit: bool = False) -> Value:
    if a.shape[:-2] != rhs.shape[:-2]:
        raise UnsupportedOp(f"a triangular solve of batch dimensions {list(a.shape[:-2])} and {list(rhs.shape[:-2])}"
                            " (equal ones)")
    return lapack(b, "trsm", [a, rhs], [(rhs.shape, rhs.dtype)], side="L" if left else "R",
                  uplo="L" if lower else "U", trans_x="T" if transpose else "N", diag="U" if unit else "N")[0]


@handles("linalg_cholesky_ex.default")
def _cholesky_ex(b, node, A, upper=False, check_errors=False):
    batch, n, _ = _matrix(A, "linalg_cholesky_ex")
    factor, _ = lapack(b, "potrf", [_symmetric(b, A, not upper)], [(A.shape, A.dtype), (batch, "i32")],
                       uplo="U" if upper else "L")
    failed = b.unary("nn.not", b.compare("GT", _diagonal(b, factor), 0.0))
    return factor, _first_failure(b, failed)


def _cholesky_solve(b, rhs: Value, factor: Value, upper: bool) -> Value:
    """x with (L L^T) x = rhs from the factor L (or U = L^T)."""
    y = _trsm(b, factor, rhs, lower=not upper, transpose=upper)
    return _trsm(b, factor, y, lower=not upper, transpose=not upper)


@handles("cholesky_solve.default")
def _cholesky_solve_op(b, node, B, A, upper=False):
    _matrix(A, "cholesky_solve")
    return _cholesky_solve(b, B, A, upper)


@handles("cholesky_inverse.default")
def _cholesky_inverse(b, node, A, upper=False):
    _matrix(A, "cholesky_inverse")
    return _cholesky_solve(b, _eye(b, A.shape, A.dtype), A, upper)


@handles("linalg_qr.default")
def _qr(b, node, A, mode="reduced"):
    batch, m, n = _matrix(A, "linalg_qr", square=False)
    k = min(m, n)
    packed, taus = lapack(b, "geqrf", [A], [(A.shape, A.dtype), ((*batch, k), A.dtype)])
    r_rows = m if mode == "complete" else k
    r = _triangle(b, b.op("nn.slice", [packed], (*batch, r_rows, n), A.dtype, start_indices=[0] * len(A.shape),
                          limit_indices=[*batch, r_rows, n], strides=[1] * len(A.shape)), upper=True)
    if mode == "r":
        return b.full(0.0, (0,), A.dtype), r
    q_cols = m if mode == "complete" else k
    if q_cols > n:
        packed = b.pad(packed, [0] * len(A.shape), [0] * (len(A.shape) - 1) + [q_cols - n], 0.0)
    elif q_cols < n:
        packed = b.op("nn.slice", [packed], (*batch, m, q_cols), A.dtype, start_indices=[0] * len(A.shape),
                      limit_indices=[*batch, m, q_cols], strides=[1] * len(A.shape))
    (q,) = lapack(b, "orgqr", [packed, taus], [(packed.shape, A.dtype)])
    return q, r


def _nan_where(b, info: Value, x: Value) -> Value:
    """x, NaN in each matrix whose info is not 0 (JAX's answer to a failed decomposition)."""
    bad = b.reshape(b.compare("NE", info, 0), [*info.shape] + [1] * (len(x.shape) - len(info.shape)))
    return b.op("nn.select", [bad, b.full(float("nan"), (), x.dtype), x], x.shape, x.dtype)


@handles("_linalg_eigh.default")
def _eigh(b, node, A, UPLO="L", compute_v=True):
    batch, n, _ = _matrix(A, "_linalg_eigh")
    v, w, info = lapack(b, "syevd", [_symmetric(b, A, UPLO == "L")], [(A.shape, A.dtype), ((*batch, n), A.dtype), (batch, "i32")],
                        mode="V" if compute_v else "N", uplo=UPLO)
    if not compute_v:
        return _nan_where(b, info, w), b.full(0.0, (0,), A.dtype)
    return _nan_where(b, info, w), _nan_where(b, info, v)


@handles("_linalg_svd.default")
def _svd(b, node, A, full_matrices=False, compute_uv=True, *, driver=None):
    batch, m, n = _matrix(A, "_linalg_svd", square=False)
    k = min(m, n)
    if not compute_uv:
        shapes = [(*batch, 1, 1), (*batch, 1, 1)]
    elif full_matrices:
        shapes = [(*batch, m, m), (*batch, n, n)]
    else:
        shapes = [(*batch, m, k), (*batch, k, n)]
    _, s, u, vh, info = lapack(b, "gesdd", [A], [(A.shape, A.dtype), ((*batch, k), A.dtype), (shapes[0], A.dtype),
                                                (shapes[1], A.dtype), (batch, "i32")],
                               mode="N" if not compute_uv else "A" if full_matrices else "S")
    if not compute_uv:
        empty = b.full(0.0, (0,), A.dtype)
        return empty, _nan_where(b, info, s), empty
    return _nan_where(b, info, u), _nan_where(b, info, s), _nan_where(b, info, vh)


@handles("linalg_pinv.atol_rtol_tensor")
def _pinv(b, node, A, *, atol=None, rtol=None, hermitian=False):
    """V diag(1 / s) U^T over the singular values above rtol = max(m, n) eps times the largest (torch's default;
    hermitian matrices too); given tolerances are refused."""
    if atol is not None or rtol is not None:
        raise UnsupportedOp("linalg_pinv with atol or rtol")
    batch, m, n = _matrix(A, "linalg_pinv", square=False)
    u, s, vh = _svd(b, node, A, False, True)
    eps = float(np.finfo(np.float32 if A.dtype == "f32" else np.float64).eps)
    largest = b.reduce("max", s, [len(s.shape) - 1], keepdims=True)
    kept = b.compare("GT", s, b.binary("nn.mul", largest, max(m, n) * eps))
    inverse = b.op("nn.select", [kept, b.binary("nn.div", 1.0, b.op("nn.select", [kept, s, b.full(1.0, (), A.dtype)],
                                                                      s.shape, A.dtype)), b.full(0.0, (), A.dtype)],
                   s.shape, A.dtype)
    scaled = b.binary("nn.mul", _swap(b, vh), b.reshape(inverse, (*s.shape[:-1], 1, s.shape[-1])))
    return _matmul(b, scaled, _swap(b, u))


def _lu(b, A: Value, what: str) -> tuple[Value, Value, Value]:
    """(LU, pivots (1-based, i32), info) of LAPACK's getrf."""
    batch, n, _ = _matrix(A, what)
    lu, pivots, _ = lapack(b, "getrf", [A], [(A.shape, A.dtype), ((*batch, n), "i32"), (batch, "i32")])
    return lu, pivots, _first_failure(b, b.compare("EQ", _diagonal(b, lu), 0.0))


def _column(b, x: Value, j: int) -> Value:
    """x[..., j:j + 1]."""
    rank = len(x.shape)
    return b.op("nn.slice", [x], (*x.shape[:-1], 1), x.dtype, start_indices=[0] * (rank - 1) + [j],
                limit_indices=[*x.shape[:-1], j + 1], strides=[1] * rank)


def _permutation(b, pivots: Value) -> Value:
    """perm [*batch, n] (i64) with (P A)[i] = A[perm[i]]: getrf's row swaps i <-> pivots[i] - 1 in order."""
    dims = pivots.shape
    rank, n = len(dims), dims[-1]
    rows = b.op("nn.iota", [], dims, "i64", iota_dimension=rank - 1)
    perm = rows
    target = b.binary("nn.sub", b.convert(pivots, "i64"), 1)
    for j in range(n):
        p = _column(b, target, j)
        at_p = b.compare("EQ", rows, p)
        perm_p = b.reduce("max", b.op("nn.select", [at_p, perm, b.full(0, (), "i64")], dims, "i64"), [rank - 1],
                          keepdims=True)
        perm_j = _column(b, perm, j)
        perm = b.op("nn.select", [b.compare("EQ", rows, j), b.broadcast(perm_p, dims),
                                  b.op("nn.select", [at_p, b.broadcast(perm_j, dims), perm], dims, "i64")], dims, "i64")
    return perm


def _permutation_matrix(b, perm: Value, dtype: str) -> Value:
    """P [*batch, n, n] with P[i, k] = (perm[i] == k)."""
    dims = (*perm.shape, perm.shape[-1])
    cols = b.op("nn.iota", [], dims, "i64", iota_dimension=len(dims) - 1)
    return b.convert(b.compare("EQ", b.reshape(perm, (*perm.shape, 1)), cols), dtype)


def _matmul(b, x: Value, y: Value) -> Value:
    nb = len(x.shape) - 2
    return b.op("nn.dot_general", [x, y], (*x.shape[:-1], y.shape[-1]), x.dtype,
                lhs_batching_dimensions=list(range(nb)), rhs_batching_dimensions=list(range(nb)),
                lhs_contracting_dimensions=[nb + 1], rhs_contracting_dimensions=[nb])


def _lu_solve(b, lu: Value, pivots: Value, rhs: Value) -> Value:
    """x with A x = rhs from A's getrf: P A = L U, so x = U^-1 L^-1 (P rhs)."""
    permuted = _matmul(b, _permutation_matrix(b, _permutation(b, pivots), rhs.dtype), rhs)
    return _trsm(b, lu, _trsm(b, lu, permuted, lower=True, unit=True), lower=False)


def _signs(b, lu: Value, pivots: Value) -> tuple[Value, Value]:
    """(sign of det, U's diagonal): (-1)^(row swaps) times the signs of the diagonal entries."""
    n = pivots.shape[-1]
    swapped = b.compare("NE", b.convert(pivots, "i64"), b.binary("nn.add", b.op("nn.iota", [], (n,), "i64",
                                                                                   iota_dimension=0), 1))
    swaps = b.reduce("sum", b.convert(swapped, lu.dtype), [len(pivots.shape) - 1])
    diagonal = _diagonal(b, lu)
    negatives = b.reduce("sum", b.convert(b.compare("LT", diagonal, 0.0), lu.dtype), [len(pivots.shape) - 1])
    parity = b.binary("nn.remainder", b.binary("nn.add", swaps, negatives), 2.0)
    sign = b.binary("nn.sub", 1.0, b.binary("nn.mul", parity, 2.0))
    zero = b.reduce("max", b.convert(b.compare("EQ", diagonal, 0.0), lu.dtype), [len(pivots.shape) - 1])
    return b.binary("nn.mul", sign, b.binary("nn.sub", 1.0, zero)), diagonal


@handles("_linalg_det.default")
def _det(b, node, A):
    lu, pivots, _ = _lu(b, A, "_linalg_det")
    sign, diagonal = _signs(b, lu, pivots)
    product = b.unary("nn.abs", _column(b, diagonal, 0))  # U's diagonal multiplied in order, as LAPACK's
    for j in range(1, A.shape[-1]):
        product = b.binary("nn.mul", product, b.unary("nn.abs", _column(b, diagonal, j)))
    product = b.reshape(product, A.shape[:-2])
    return b.binary("nn.mul", sign, product), lu, pivots


@handles("_linalg_slogdet.default")
def _slogdet(b, node, A):
    lu, pivots, _ = _lu(b, A, "_linalg_slogdet")
    sign, diagonal = _signs(b, lu, pivots)
    logabs = b.reduce("sum", b.unary("nn.log", b.unary("nn.abs", diagonal)), [len(A.shape) - 2])
    return sign, logabs, lu, pivots


@handles("linalg_inv_ex.default")
def _inv_ex(b, node, A, check_errors=False):
    lu, pivots, info = _lu(b, A, "linalg_inv_ex")
    return _lu_solve(b, lu, pivots, _eye(b, A.shape, A.dtype)), info


@handles("_linalg_solve_ex.default")
def _solve_ex(b, node, A, B, left=True, check_errors=False):
    if not left:
        raise UnsupportedOp("_linalg_solve_ex with left=False")
    lu, pivots, info = _lu(b, A, "_linalg_solve_ex")
    vector = len(B.shape) == len(A.shape) - 1
    rhs = b.reshape(B, (*B.shape, 1)) if vector else B
    x = _lu_solve(b, lu, pivots, rhs)
    return (b.reshape(x, B.shape) if vector else x), lu, pivots, info


@handles("linalg_lu_factor_ex.default")
def _lu_factor_ex(b, node, A, pivot=True, check_errors=False):
    if not pivot:
        raise UnsupportedOp("linalg_lu_factor_ex without pivoting")
    return _lu(b, A, "linalg_lu_factor_ex")


@handles("linalg_lu.default")
def _lu_op(b, node, A, pivot=True):
    if not pivot:
        raise UnsupportedOp("linalg_lu without pivoting")
    lu, pivots, _ = _lu(b, A, "linalg_lu")
    p = _swap(b, _permutation_matrix(b, _permutation(b, pivots), A.dtype))  # A = P L U
    lower = b.binary("nn.add", _triangle(b, lu, upper=False, offset=-1), _eye(b, A.shape, A.dtype))
    return p, lower, _triangle(b, lu, upper=True)


@handles("_linalg_check_errors.default")
def _check_errors(b, node, info, api_name, *, is_matrix):
    """torch.linalg's raise on a failed decomposition, which a compiled program does not do: its result holds
    NaN or infinities there (docs/torch.md)."""
    return None


@handles("linalg_solve_triangular.default")
def _solve_triangular(b, node, A, B, upper, left=True, unitriangular=False):
    _matrix(A, "linalg_solve_triangular")
    return _trsm(b, A, B, lower=not upper, left=left, unit=unitriangular)

