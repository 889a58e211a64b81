"""Matrix decompositions from nn ops and `scf.for` loops, shared by the ways in (`convert-stablehlo`'s
LAPACK calls, which dfc.torch writes too, and NumPy's stacked `np.linalg` calls): Cholesky, LU with
partial pivoting and back substitution, Householder QR in LAPACK's packed form and its Q, the
symmetric eigenproblem and the SVD by Jacobi rotations.

Each builder takes an `Ops` (where to insert) and operands of static shape [*batch, m, n]: the
batch dimensions lead and every matrix is decomposed on its own. Loops are `scf.for`s whose step
counter is carried as a 0-d i64 tensor (nn's dynamic slices take tensors), with no data-dependent
branch: a step that LAPACK skips is a `select` of its result, so autodiff differentiates the loops
as any other, and the derivative of a rotation is smooth where its angle is 0 (the eigenvectors'
derivatives of a diagonal matrix come from the rotations of angle 0).

* `geqrf`: LAPACK's geqrf (dlarfg's reflectors): column k's reflector maps the column below the
  diagonal to beta = -sign(alpha) norm (alpha the diagonal entry, + for 0), tau = (beta - alpha) /
  beta, v = x / (alpha - beta) with v_k = 1 stored below the diagonal; a column already 0 below
  the diagonal has tau = 0 and keeps alpha.
* `orgqr`: the first columns of H_0 H_1 ... H_{k-1} (LAPACK's orgqr) from geqrf's packed form.
* `jacobi_eigh`: cyclic Jacobi rotations of a symmetric matrix (`SWEEPS` sweeps over every pair
  p < q, each rotation zeroing M[p, q]; tan = 2 a_pq sign(d) / (|d| + sqrt(d^2 + 4 a_pq^2)), d =
  a_qq - a_pp, Numerical Recipes' angle written without its division by a_pq); eigenvalues
  ascending, eigenvectors as columns (each column's sign is the iteration's, not LAPACK's), and
  whether the off-diagonal part fell to eps^2 of the matrix's squared norm (else the caller reports
  LAPACK's failure, info > 0).
* `jacobi_svd`: one-sided Jacobi rotations (Hestenes) of the columns of a matrix with m >= n, the
  same rotation on each pair's 2 x 2 Gram matrix; singular values descending, U = the rotated
  columns over their norms completed to an orthonormal basis (`complete_columns`), V as columns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    TensorType,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from dfc.dialects import nn
from dfc.dialects import nn_contract as nnc
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_shape as nns
from dfc.dialects.nn_sort import ArgsortOp

SWEEPS = 12
"""Jacobi sweeps (a fixed count: convergence is quadratic, a matrix of a few hundred rows takes ~10);
rotations after convergence have angles of rounding size and change nothing."""


def shape(v: SSAValue) -> tuple[int, ...]:
    assert isinstance(v.type, TensorType)
    return tuple(v.type.get_shape())


def element(v: SSAValue) -> Attribute:
    assert isinstance(v.type, TensorType)
    return v.type.element_type


class Ops:
    """Inserts ops at a builder's point: `ops(op)` is op's first result."""

    def __init__(self, builder: Builder):
        self.builder = builder

    def __call__(self, op: Operation) -> SSAValue:
        self.builder.insert(op)
        return op.results[0]

    def f(self, value: float, like: SSAValue) -> SSAValue:
        """A 0-d float of `like`'s element type."""
        return self(nn.FullOp(FloatAttr(value, element(like)), []))  # type: ignore[arg-type]

    def i(self, value: int) -> SSAValue:
        return self(nn.FullOp(IntegerAttr(value, i64), []))

    def iota(self, dims: Sequence[int], axis: int) -> SSAValue:
        return self(nns.IotaOp(TensorType(i64, dims), axis))

    def where(self, pred: SSAValue, on_true: SSAValue, on_false: SSAValue) -> SSAValue:
        return self(nne.SelectOp(pred, on_true, on_false))

    def cmp(self, a: SSAValue, b: SSAValue, direction: str) -> SSAValue:
        return self(nne.CompareOp(a, b, direction))

    def loop(self, count: int, inits: Sequence[SSAValue],
             body: Callable[[Ops, SSAValue, list[SSAValue]], Sequence[SSAValue]]) -> list[SSAValue]:
        """An `scf.for` of `count` steps carrying `inits`: body(ops, k, values) -> the next values, with
        k the step (a 0-d i64 tensor) and ops inserting into the loop's body."""
        t0 = self.i(0)
        block = Block(arg_types=[IndexType(), t0.type, *(v.type for v in inits)])
        inner = Ops(Builder(InsertPoint.at_end(block)))
        k, values = block.args[1], list(block.args[2:])
        results = body(inner, k, values)
        block.add_op(scf.YieldOp(inner(nn.AddOp(k, inner.i(1))), *results))
        bounds = [self(arith.ConstantOp.from_int_and_width(v, IndexType())) for v in (0, count, 1)]
        loop = scf.ForOp(*bounds, [t0, *inits], Region(block))
        self.builder.insert(loop)
        return list(loop.results[1:])


def _slice(o: Ops, x: SSAValue, starts: Sequence[SSAValue], sizes: Sequence[int]) -> SSAValue:
    """x[..., starts : starts + sizes] over the trailing len(starts) dimensions (whole batch dimensions)."""
    batch = shape(x)[:len(shape(x)) - len(starts)]
    zero = o.i(0)
    return o(nns.DynamicSliceOp(x, [zero] * len(batch) + list(starts), [*batch, *sizes]))


def _dot(o: Ops, a: SSAValue, b: SSAValue, nb: int, ca: int, cb: int) -> SSAValue:
    """The batched product contracting a's dimension ca with b's cb (the nb leading ones batch)."""
    return o(nnc.DotGeneralOp(a, b, (list(range(nb)), list(range(nb))), ([ca], [cb])))


def eye(o: Ops, dims: Sequence[int], like: SSAValue) -> SSAValue:
    """The identity's first columns, [*batch, m, n], in `like`'s element type."""
    nb = len(dims) - 2
    same = o.cmp(o.iota(dims, nb), o.iota(dims, nb + 1), "EQ")
    return o(nne.ConvertOp(same, element(like)))


def geqrf(o: Ops, a: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(packed, taus) as LAPACK's geqrf: R on and above the diagonal, the reflectors' v below it."""
    dims = shape(a)
    nb, (m, n) = len(dims) - 2, dims[-2:]
    batch, k_count = dims[:-2], min(m, n)
    taus0 = o(nn.FullOp(FloatAttr(0.0, element(a)), [*batch, k_count]))  # type: ignore[arg-type]

    def step(o: Ops, k: SSAValue, values: list[SSAValue]) -> list[SSAValue]:
        r, taus = values
        zero, one = o.f(0.0, a), o.f(1.0, a)
        rows = o.iota([*batch, m, 1], nb)
        x = _slice(o, r, [o.i(0), k], [m, 1])
        alpha = _slice(o, r, [k, k], [1, 1])
        below = o.where(o.cmp(rows, k, "GT"), x, zero)
        ss = o(nn.ReduceOp(o(nn.MulOp(below, below)), "sum", [nb], keepdims=True))
        nonzero = o.cmp(ss, zero, "GT")
        norm = o(nn.SqrtOp(o(nn.AddOp(o(nn.MulOp(alpha, alpha)), o.where(nonzero, ss, one)))))
        beta = o.where(o.cmp(alpha, zero, "GE"), o(nn.NegOp(norm)), norm)
        tau = o.where(nonzero, o(nn.DivOp(o(nn.SubOp(beta, alpha)), beta)), zero)
        v = o.where(nonzero, o(nn.DivOp(below, o(nn.SubOp(alpha, beta)))), zero)
        v = o.where(o.cmp(rows, k, "EQ"), one, v)
        w = o(nn.MulOp(tau, _dot(o, v, r, nb, nb, nb)))  # [*batch, 1, n]
        later = o.cmp(o.iota([*batch, 1, n], nb + 1), k, "GT")
        r = o(nn.SubOp(r, o.where(later, o(nn.MulOp(v, w)), zero)))
        diagonal = o.where(nonzero, beta, alpha)
        column = o.where(o.cmp(rows, k, "LT"), x, o.where(o.cmp(rows, k, "EQ"), diagonal, v))
        r = o(nns.DynamicUpdateSliceOp(r, column, [o.i(0)] * nb + [o.i(0), k]))
        here = o.cmp(o.iota([*batch, k_count], nb), k, "EQ")
        taus = o.where(here, o(nn.ReshapeOp(tau, [*batch, 1])), taus)
        return [r, taus]

    return tuple(o.loop(k_count, [a, taus0], step))  # type: ignore[return-value]


def orgqr(o: Ops, packed: SSAValue, taus: SSAValue) -> SSAValue:
    """The first n columns of H_0 ... H_{k-1} from packed [*batch, m, n] and taus [*batch, k]."""
    dims = shape(packed)
    nb, m = len(dims) - 2, dims[-2]
    batch, k_count = dims[:-2], shape(taus)[-1]
    last = o.i(k_count - 1)

    def step(o: Ops, r: SSAValue, values: list[SSAValue]) -> list[SSAValue]:
        (q,) = values
        j = o(nn.SubOp(last, r))
        zero, one = o.f(0.0, packed), o.f(1.0, packed)
        rows = o.iota([*batch, m, 1], nb)
        v = _slice(o, packed, [o.i(0), j], [m, 1])
        v = o.where(o.cmp(rows, j, "LT"), zero, o.where(o.cmp(rows, j, "EQ"), one, v))
        tau = o(nn.ReshapeOp(_slice(o, taus, [j], [1]), [*batch, 1, 1]))
        w = o(nn.MulOp(tau, _dot(o, v, q, nb, nb, nb)))
        return [o(nn.SubOp(q, o(nn.MulOp(v, w))))]

    return o.loop(k_count, [eye(o, dims, packed)], step)[0]


def complete_columns(o: Ops, u: SSAValue, columns: int) -> SSAValue:
    """[*batch, m, columns]: u's columns (orthonormal or 0) followed, and where 0 replaced, by an orthonormal
    completion: the QR of u, each of Q's first columns signed as R's diagonal entry (+ for 0)."""
    dims = shape(u)
    m, n = dims[-2:]
    packed, taus = geqrf(o, u)
    if columns > n:
        zero = o.f(0.0, u)
        packed = o(nns.PadOp(packed, zero, [0] * len(dims), [0] * (len(dims) - 1) + [columns - n], [0] * len(dims)))
    q = orgqr(o, packed, taus)
    diagonal = o(nn.ReduceOp(o(nn.MulOp(packed, eye(o, shape(packed), u))), "sum", [len(dims) - 2], keepdims=True))
    sign = o.where(o.cmp(diagonal, o.f(0.0, u), "LT"), o.f(-1.0, u), o.f(1.0, u))
    within = o.cmp(o.iota([1] * (len(dims) - 1) + [columns], len(dims) - 1), o.i(n), "LT")
    return o(nn.MulOp(q, o.where(within, sign, o.f(1.0, u))))


def _angle(o: Ops, app: SSAValue, aqq: SSAValue, apq: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(c, s) of the Jacobi rotation zeroing apq: tan = 2 apq sign(d) / (|d| + sqrt(d^2 + 4 apq^2)), d = aqq - app
    (sign(0) = +1: 45 degrees), 0 where d and apq are both 0."""
    zero, one = o.f(0.0, app), o.f(1.0, app)
    d = o(nn.SubOp(aqq, app))
    two_apq = o(nn.MulOp(o.f(2.0, app), apq))
    radicand = o(nn.AddOp(o(nn.MulOp(d, d)), o(nn.MulOp(two_apq, two_apq))))
    still = o.cmp(radicand, zero, "EQ")
    denominator = o(nn.AddOp(o(nne.AbsOp(d)), o(nn.SqrtOp(o.where(still, one, radicand)))))
    signed = o.where(o.cmp(d, zero, "GE"), two_apq, o(nn.NegOp(two_apq)))
    t = o.where(still, zero, o(nn.DivOp(signed, denominator)))
    c = o(nn.DivOp(one, o(nn.SqrtOp(o(nn.AddOp(o(nn.MulOp(t, t)), one))))))
    return c, o(nn.MulOp(t, c))


def _pairs(o: Ops, n: int) -> tuple[SSAValue, SSAValue, int]:
    """The pairs p < q in cyclic order, as two i64 constants, and their count."""
    p, q = np.triu_indices(n, 1)
    count = len(p)
    typ = TensorType(i64, [count])
    tables = [o(nn.ConstantOp(DenseIntOrFPElementsAttr.from_list(typ, [int(x) for x in t]))) for t in (p, q)]
    return tables[0], tables[1], count


def _at(o: Ops, table: SSAValue, r: SSAValue) -> SSAValue:
    return o(nn.ReshapeOp(o(nns.DynamicSliceOp(table, [r], [1])), []))


def _rotate_columns(o: Ops, x: SSAValue, p: SSAValue, q: SSAValue, c: SSAValue, s: SSAValue) -> SSAValue:
    """x with columns p, q replaced by c x_p - s x_q and s x_p + c x_q (c, s of shape [*batch, 1, 1])."""
    rows = shape(x)[-2]
    zero = o.i(0)
    xp, xq = _slice(o, x, [zero, p], [rows, 1]), _slice(o, x, [zero, q], [rows, 1])
    new_p = o(nn.SubOp(o(nn.MulOp(c, xp)), o(nn.MulOp(s, xq))))
    new_q = o(nn.AddOp(o(nn.MulOp(s, xp)), o(nn.MulOp(c, xq))))
    nb = len(shape(x)) - 2
    x = o(nns.DynamicUpdateSliceOp(x, new_p, [zero] * nb + [zero, p]))
    return o(nns.DynamicUpdateSliceOp(x, new_q, [zero] * nb + [zero, q]))


def _swap_last(o: Ops, x: SSAValue) -> SSAValue:
    r = len(shape(x))
    return o(nn.TransposeOp(x, [*range(r - 2), r - 1, r - 2]))


def _sweeps(o: Ops, n: int, inits: list[SSAValue],
            rotate: Callable[[Ops, SSAValue, SSAValue, list[SSAValue]], list[SSAValue]]) -> list[SSAValue]:
    """`SWEEPS` cyclic sweeps over the pairs p < q of n: rotate(ops, p, q, values) -> the next values."""
    if n < 2:
        return inits
    ps, qs, count = _pairs(o, n)

    def sweep(o: Ops, _: SSAValue, values: list[SSAValue]) -> list[SSAValue]:
        def pair(o: Ops, r: SSAValue, values: list[SSAValue]) -> list[SSAValue]:
            return rotate(o, _at(o, ps, r), _at(o, qs, r), values)

        return o.loop(count, values, pair)

    return o.loop(SWEEPS, inits, sweep)


def _sorted(o: Ops, keys: SSAValue, columns: Sequence[SSAValue], descending: bool) -> list[SSAValue]:
    """keys [*batch, n] sorted, and each of `columns` [*batch, r, n] permuted alike (a permutation product)."""
    dims = shape(keys)
    nb, n = len(dims) - 1, dims[-1]
    order = o(ArgsortOp(keys, nb, descending=descending))
    picks = o.cmp(o.iota([*dims, n], nb), o(nns.BroadcastInDimOp(order, [*dims, n], [*range(nb), nb + 1])), "EQ")
    perm = o(nne.ConvertOp(picks, element(keys)))  # perm[.., i, j] = (order[j] == i)
    return [_dot(o, keys, perm, nb, nb, nb)] + [_dot(o, c, perm, nb, nb + 1, nb) for c in columns]


def _diagonal(o: Ops, x: SSAValue) -> SSAValue:
    return o(nn.ReduceOp(o(nn.MulOp(x, eye(o, shape(x), x))), "sum", [len(shape(x)) - 1]))


def _off_diagonal(o: Ops, x: SSAValue) -> SSAValue:
    """x with its diagonal 0."""
    return o.where(o(nne.ConvertOp(eye(o, shape(x), x), i1)), o.f(0.0, x), x)


def jacobi_eigh(o: Ops, a: SSAValue) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(eigenvalues ascending [*batch, n], eigenvectors [*batch, n, n] as columns, converged [*batch] i1) of the
    symmetric a (both triangles read)."""
    dims = shape(a)
    nb, n = len(dims) - 2, dims[-1]

    def rotate(o: Ops, p: SSAValue, q: SSAValue, values: list[SSAValue]) -> list[SSAValue]:
        m, v = values
        c, s = _angle(o, _slice(o, m, [p, p], [1, 1]), _slice(o, m, [q, q], [1, 1]), _slice(o, m, [p, q], [1, 1]))
        m = _swap_last(o, _rotate_columns(o, _swap_last(o, _rotate_columns(o, m, p, q, c, s)), p, q, c, s))
        return [m, _rotate_columns(o, v, p, q, c, s)]

    m, v = _sweeps(o, n, [a, eye(o, dims, a)], rotate)
    squares = o(nn.MulOp(m, m))
    total = o(nn.ReduceOp(squares, "sum", [nb, nb + 1]))
    off = o(nn.ReduceOp(_off_diagonal(o, squares), "sum", [nb, nb + 1]))
    eps = float(np.finfo(np.float32 if element(a) == f32 else np.float64).eps)
    converged = o.cmp(off, o(nn.MulOp(o.f(eps * eps, a), total)), "LE")
    w, vectors = _sorted(o, _diagonal(o, m), [v], descending=False)
    return w, vectors, converged


def jacobi_svd(o: Ops, a: SSAValue, columns: int | None) -> tuple[SSAValue, SSAValue | None, SSAValue | None,
                                                                  SSAValue]:
    """(singular values descending [*batch, n], U [*batch, m, columns], V [*batch, n, n] as columns, converged
    [*batch] i1) of a [*batch, m, n] with m >= n; no U and V when `columns` is None."""
    dims = shape(a)
    nb, (m, n) = len(dims) - 2, dims[-2:]
    assert m >= n, "jacobi_svd: wide matrices are decomposed as their transpose"

    def rotate(o: Ops, p: SSAValue, q: SSAValue, values: list[SSAValue]) -> list[SSAValue]:
        w, v = values
        zero = o.i(0)
        wp, wq = _slice(o, w, [zero, p], [m, 1]), _slice(o, w, [zero, q], [m, 1])
        gram = [o(nn.ReduceOp(o(nn.MulOp(x, y)), "sum", [nb], keepdims=True)) for x, y in ((wp, wp), (wq, wq), (wp, wq))]
        c, s = _angle(o, *gram)
        return [_rotate_columns(o, w, p, q, c, s), _rotate_columns(o, v, p, q, c, s)]

    w, v = _sweeps(o, n, [a, eye(o, [*dims[:-2], n, n], a)], rotate)
    gram = _dot(o, w, w, nb, nb, nb)  # [*batch, n, n]
    norms2 = _diagonal(o, gram)
    scale = o(nn.MulOp(o(nns.BroadcastInDimOp(norms2, [*dims[:-2], n, n], [*range(nb), nb])),
                      o(nns.BroadcastInDimOp(norms2, [*dims[:-2], n, n], [*range(nb), nb + 1]))))
    eps = float(np.finfo(np.float32 if element(a) == f32 else np.float64).eps)
    outside = _off_diagonal(o, o(nn.MulOp(gram, gram)))
    tolerance = o(nn.MulOp(o.f((100.0 * m * eps) ** 2, a), scale))
    converged = o(nn.ReduceOp(o(nne.ConvertOp(o.cmp(outside, tolerance, "LE"), f32)), "min", [nb, nb + 1]))
    converged = o.cmp(converged, o(nn.FullOp(FloatAttr(1.0, f32), [])), "EQ")
    norms = o(nn.SqrtOp(norms2))
    if columns is None:
        return _sorted(o, norms, [], descending=True)[0], None, None, converged
    s, w, v = _sorted(o, norms, [w, v], descending=True)
    zero = o.f(0.0, a)
    positive = o.cmp(s, zero, "GT")
    safe = o.where(positive, s, o.f(1.0, a))
    row = [*dims[:-2], 1, n]
    u = o.where(o(nn.ReshapeOp(positive, row)), o(nn.DivOp(w, o(nn.ReshapeOp(safe, row)))), zero)
    return s, complete_columns(o, u, columns), v, converged



def cholesky(o: Ops, a: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(L, failed): the lower Cholesky factor of a's lower triangle, column by column (v = a[:, j] - L L[j, :]^T,
    column j = v / sqrt(v_j) at and below the diagonal), and per matrix [*batch] i1 whether a pivot v_j was not
    positive (L holds NaN from there)."""
    dims = shape(a)
    nb, n = len(dims) - 2, dims[-1]
    zero_f = o(nn.FullOp(FloatAttr(0.0, element(a)), dims))  # type: ignore[arg-type]

    def step(o: Ops, j: SSAValue, values: list[SSAValue]) -> list[SSAValue]:
        (lf,) = values
        column = _slice(o, a, [o.i(0), j], [n, 1])
        row = _slice(o, lf, [j, o.i(0)], [1, n])
        v = o(nn.SubOp(column, _dot(o, lf, row, nb, nb + 1, nb + 1)))
        root = o(nn.SqrtOp(_slice(o, v, [j, o.i(0)], [1, 1])))
        below = o.cmp(o.iota([*dims[:-1], 1], nb), j, "GE")
        col = o.where(below, o(nn.DivOp(v, root)), o.f(0.0, a))
        return [o(nns.DynamicUpdateSliceOp(lf, col, [o.i(0)] * nb + [o.i(0), j]))]

    factor = o.loop(n, [zero_f], step)[0]
    positive = o.cmp(o.where(o(nne.ConvertOp(eye(o, dims, a), i1)), factor, o.f(1.0, a)), o.f(0.0, a), "GT")
    ok = o(nn.ReduceOp(o(nne.ConvertOp(positive, f32)), "min", [nb, nb + 1]))
    return factor, o(nne.NotOp(o.cmp(ok, o(nn.FullOp(FloatAttr(1.0, f32), [])), "EQ")))


def getrf(o: Ops, a: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(LU, ipiv) of LAPACK's getrf for the first n columns of a [*batch, n, n + k] (the k more columns, a right
    side, take the same row swaps and elimination): for each column j the row of the largest |a_ij| at or
    below the diagonal (the first on ties, as idamax) swapped with row j, the multipliers a_ij / a_jj stored
    below the diagonal (none under a zero pivot: the column stays as it is, as LAPACK leaves it) and the
    later columns updated. ipiv [*batch, n] i32, 1-based."""
    dims = shape(a)
    nb, n, width = len(dims) - 2, dims[-2], dims[-1]
    batch, e = dims[:-2], element(a)
    p0 = o(nn.FullOp(IntegerAttr(0, i32), [*batch, n]))

    def step(o: Ops, j: SSAValue, values: list[SSAValue]) -> list[SSAValue]:
        m, piv = values
        zero = o.i(0)
        rows, cols = o.iota(dims, nb), o.iota(dims, nb + 1)
        column = o(nn.ReshapeOp(_slice(o, m, [zero, j], [n, 1]), [*batch, n]))
        at_or_below = o.cmp(o.iota([*batch, n], nb), j, "GE")
        p = o(nnc.ArgMaxOp(o.where(at_or_below, o(nne.AbsOp(column)), o.f(-1.0, a)), nb))
        pb = o(nns.BroadcastInDimOp(p, dims, list(range(nb))))
        source = o.where(o.cmp(rows, j, "EQ"), pb, o.where(o.cmp(rows, pb, "EQ"),
                                                           o(nns.BroadcastInDimOp(j, dims, [])), rows))
        square = [*batch, n, n]
        swap = o(nne.ConvertOp(o.cmp(o(nns.SliceOp(source, [0] * (nb + 2), square, [1] * (nb + 2))),
                                     o.iota(square, nb + 1), "EQ"), e))
        m = _dot(o, swap, m, nb, nb + 1, nb)
        pivot = _slice(o, m, [j, j], [1, 1])
        below = o.cmp(rows, j, "GT")
        multipliers = o(nn.DivOp(_slice(o, m, [zero, j], [n, 1]), pivot))
        nonzero = o.cmp(pivot, o.f(0.0, a), "NE")
        multipliers = o.where(o(nne.AndOp(below, o(nns.BroadcastInDimOp(nonzero, dims, list(range(nb + 2)))))),
                              o(nns.BroadcastInDimOp(multipliers, dims, list(range(nb + 2)))), o.f(0.0, a))
        row = o.where(o.cmp(cols, j, "GT"), _slice(o, m, [j, zero], [1, width]), o.f(0.0, a))
        m = o(nn.SubOp(m, o(nn.MulOp(multipliers, row))))
        m = o.where(o(nne.AndOp(below, o.cmp(cols, j, "EQ"))), multipliers, m)
        one_based = o(nne.ConvertOp(o(nn.AddOp(p, o.i(1))), i32))
        here = o.cmp(o.iota([*batch, n], nb), j, "EQ")
        return [m, o.where(here, o(nns.BroadcastInDimOp(one_based, [*batch, n], list(range(nb)))), piv)]

    lu, pivots = o.loop(n, [a, p0], step)
    return lu, pivots


def back_substitute(o: Ops, lu: SSAValue, n: int) -> SSAValue:
    """x [*batch, n, k] with U x = c, U the upper triangle of lu's first n columns and c its other k (getrf's
    eliminated right side), row by row from the last."""
    dims = shape(lu)
    nb, k = len(dims) - 2, dims[-1] - n
    batch = dims[:-2]
    u = o(nns.SliceOp(lu, [0] * (nb + 2), [*batch, n, n], [1] * (nb + 2)))
    c = o(nns.SliceOp(lu, [0] * (nb + 1) + [n], [*batch, n, n + k], [1] * (nb + 2)))
    last = o.i(n - 1)

    def step(o: Ops, t: SSAValue, values: list[SSAValue]) -> list[SSAValue]:
        (x,) = values
        i = o(nn.SubOp(last, t))
        zero = o.i(0)
        row = _slice(o, u, [i, zero], [1, n])
        later = o.where(o.cmp(o.iota([*batch, 1, n], nb + 1), i, "GT"), row, o.f(0.0, lu))
        rest = _dot(o, later, x, nb, nb + 1, nb)  # [*batch, 1, k]
        value = o(nn.DivOp(o(nn.SubOp(_slice(o, c, [i, zero], [1, k]), rest)), _slice(o, u, [i, i], [1, 1])))
        return [o(nns.DynamicUpdateSliceOp(x, value, [zero] * nb + [i, zero]))]

    x0 = o(nn.FullOp(FloatAttr(0.0, element(lu)), [*batch, n, k]))  # type: ignore[arg-type]
    return o.loop(n, [x0], step)[0]
