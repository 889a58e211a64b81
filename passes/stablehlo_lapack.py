"""The LAPACK calls JAX emits on CPU (`stablehlo.custom_call @lapack_<t><routine>_ffi`) in
`convert-stablehlo`, for the routines dfc builds from nn ops:

* `potrf` (Cholesky, `jnp.linalg.cholesky`, `cho_factor`): an `scf.for` over the
  columns j of the factor L (zeros at first): v = a[:, j] - L L[j, :]^T, then
  column j is v / sqrt(v_j) below the diagonal and 0 above, written back by
  `nn.dynamic_update_slice`; only the `uplo` triangle of a is read (`U` as the
  lower factor of a^T, transposed). `info` counts the columns whose pivot v_j
  is not positive (LAPACK's is the first such column: JAX only tests it
  against 0). Batch dimensions lead; differentiable.
* `getrf` (LU with partial pivoting, `inv`, `solve`, `slogdet`, `lu`): an
  `scf.for` over the columns j: the row of the largest |a_ij| at or below the
  diagonal (the first on ties, as LAPACK's `idamax`) swapped with row j by a
  one-hot permutation product, the multipliers a_ij / a_jj stored below the
  diagonal (none under a zero pivot: the column is zero there, as LAPACK
  leaves it) and the trailing rows updated by their outer product with row j;
  `ipiv` 1-based as LAPACK's, `info` the number of zero pivots. Square
  matrices; the pivot choice has no gradient, the rest is differentiable.
* `geqrf` and `orgqr` (Householder QR, `qr`, `lstsq`): LAPACK's packed reflectors and taus, and Q
  from them (`dialects.nn_linalg_builders.geqrf`, `orgqr`).
* `syevd` (symmetric eigenproblem, `eigh`, `eigvalsh`): the `uplo` triangle mirrored, then cyclic
  Jacobi rotations (`nn_linalg_builders.jacobi_eigh`); `info` 1 where they did not converge (JAX
  answers NaN). Eigenvectors are LAPACK's up to each column's sign.
* `gesdd` (SVD, `svd`, `pinv`, `matrix_rank`, `cond`, `norm`): one-sided Jacobi rotations of the
  matrix (of its transpose when wide) (`nn_linalg_builders.jacobi_svd`), U completed by a QR for
  `full_matrices`; `info` as syevd's. Singular vectors are LAPACK's up to the sign of each pair.
* `trsm` (triangular solve, `solve_triangular`, `inv`, `cho_solve`): the
  `triangular_solve` conversion with its `side`, `uplo`, `trans_x` and `diag`
  (`passes.stablehlo_linalg`).

Any other target is an error at the call naming it (`describe`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects.builtin import BoolAttr, FloatAttr, IntegerAttr, TensorType, f64, i32, i64
from xdsl.ir import Operation, SSAValue

from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_linalg_builders as lb
from dfc.dialects import nn_shape as nns
from dfc.dialects.diagnostics import CompileError
from dfc.dialects.stablehlo_attrs import Transpose, TransposeAttr
from dfc.dialects.stablehlo_bits import TriangularSolveOp
from dfc.dialects.stablehlo_custom_call import CustomCallOp, describe

LOWER, LEFT, UNIT, NO_TRANSPOSE, TRANSPOSE = ord("L"), ord("L"), ord("U"), ord("N"), ord("T")
"""LAPACK's option characters, as JAX passes them (their codes)."""


def _shape(v: SSAValue) -> tuple[int, ...]:
    assert isinstance(v.type, TensorType)
    return tuple(v.type.get_shape())


def _option(op: CustomCallOp, name: str) -> int:
    if op.options is None or name not in op.options.data:
        raise CompileError.at(op, f"convert-stablehlo: 'stablehlo.custom_call' {describe(op)} without its "
                                  f"'{name}' option is not supported")
    value = op.options.data[name]
    assert isinstance(value, IntegerAttr)
    return value.value.data


class LapackConversions:
    """`on_custom_call`, mixed into the converter (`b`, `ins`, `on_triangular_solve`, `_swap_last`)."""

    b: Builder
    ins: Callable[[Operation], SSAValue]
    on_triangular_solve: Callable[[TriangularSolveOp], Sequence[SSAValue]]
    _swap_last: Callable[[SSAValue], SSAValue]

    def on_custom_call(self, op: CustomCallOp) -> Sequence[SSAValue]:
        target = op.call_target_name.data
        routine = target.split("_")[1][1:] if target.startswith("lapack_") and target.count("_") >= 1 else ""
        if routine == "potrf" and len(op.inputs) == 1 and len(op.outputs) == 2:
            return self._potrf(op)
        if routine == "trsm" and len(op.inputs) == 2 and len(op.outputs) == 1:
            return self._trsm(op)
        if routine == "getrf" and len(op.inputs) == 1 and len(op.outputs) == 3:
            return self._getrf(op)
        if routine == "geqrf" and len(op.inputs) == 1 and len(op.outputs) == 2:
            return lb.geqrf(lb.Ops(self.b), op.inputs[0])
        if routine == "orgqr" and len(op.inputs) == 2 and len(op.outputs) == 1:
            return [lb.orgqr(lb.Ops(self.b), *op.inputs)]
        if routine == "syevd" and len(op.inputs) == 1 and len(op.outputs) == 3:
            return self._syevd(op)
        if routine == "gesdd" and len(op.inputs) == 1 and len(op.outputs) == 5:
            return self._gesdd(op)
        raise CompileError.at(op, f"convert-stablehlo: 'stablehlo.custom_call' {describe(op)} is not supported "
                                  "(dfc.jit compiles NumPy's linalg functions)")

    def _trsm(self, op: CustomCallOp) -> Sequence[SSAValue]:
        a, b = op.inputs
        trans = _option(op, "trans_x")
        if trans not in (NO_TRANSPOSE, TRANSPOSE):
            raise CompileError.at(op, f"convert-stablehlo: {describe(op)} with trans_x {chr(trans)!r} is not "
                                      "supported (real matrices: N or T)")
        transpose = Transpose.NO_TRANSPOSE if trans == NO_TRANSPOSE else Transpose.TRANSPOSE
        solve = TriangularSolveOp.create(
            operands=[a, b], result_types=[op.outputs[0].type],
            properties={"left_side": BoolAttr.from_bool(_option(op, "side") == LEFT),
                        "lower": BoolAttr.from_bool(_option(op, "uplo") == LOWER),
                        "unit_diagonal": BoolAttr.from_bool(_option(op, "diag") == UNIT),
                        "transpose_a": TransposeAttr(transpose)})
        solve.location = op.location
        return self.on_triangular_solve(solve)

    def _getrf(self, op: CustomCallOp) -> Sequence[SSAValue]:
        (a,) = op.inputs
        shape = _shape(a)
        if len(shape) < 2 or shape[-1] != shape[-2]:
            raise CompileError.at(op, f"convert-stablehlo: {describe(op)} of {a.type}: square matrices expected")
        nb, e = len(shape) - 2, a.type.element_type  # type: ignore[union-attr]
        lu, pivots = lb.getrf(lb.Ops(self.b), a)
        eye = self.ins(nne.CompareOp(self.ins(nns.IotaOp(TensorType(i64, shape), nb)),
                                     self.ins(nns.IotaOp(TensorType(i64, shape), nb + 1)), "EQ"))
        zero_pivot = self.ins(nne.AndOp(eye, self.ins(nne.CompareOp(lu, self.ins(nn.FullOp(FloatAttr(0.0, e), [])),
                                                                    "EQ"))))
        counts = self.ins(nn.ReduceOp(self.ins(nne.ConvertOp(zero_pivot, f64)), "sum", [nb, nb + 1]))
        return [lu, pivots, self.ins(nne.ConvertOp(counts, i32))]

    def _potrf(self, op: CustomCallOp) -> Sequence[SSAValue]:
        (a,) = op.inputs
        shape = _shape(a)
        if len(shape) < 2 or shape[-1] != shape[-2]:
            raise CompileError.at(op, f"convert-stablehlo: {describe(op)} of {a.type}: square matrices expected")
        lower = _option(op, "uplo") == LOWER
        if not lower:
            a = self._swap_last(a)
        factor, info = self._cholesky(a, shape[:-2], shape[-1])
        return [factor if lower else self._swap_last(factor), info]

    def _cholesky(self, a: SSAValue, batch: tuple[int, ...], n: int) -> tuple[SSAValue, SSAValue]:
        """(L, info): the lower Cholesky factor of a's lower triangle (`nn_linalg_builders.cholesky`); info counts
        the columns whose pivot is not positive."""
        factor, _ = lb.cholesky(lb.Ops(self.b), a)
        nb = len(batch)
        e = a.type.element_type  # type: ignore[union-attr]
        eye = self.ins(nne.CompareOp(self.ins(nns.IotaOp(TensorType(i64, [*batch, n, n]), nb)),
                                     self.ins(nns.IotaOp(TensorType(i64, [*batch, n, n]), nb + 1)), "EQ"))
        diagonal = self.ins(nne.SelectOp(eye, factor, self.ins(nn.FullOp(FloatAttr(1.0, e), []))))
        failed = self.ins(nne.NotOp(self.ins(nne.CompareOp(diagonal, self.ins(nn.FullOp(FloatAttr(0.0, e), [])),
                                                           "GT"))))
        counts = self.ins(nn.ReduceOp(self.ins(nne.ConvertOp(failed, f64)), "sum", [nb, nb + 1]))
        return factor, self.ins(nne.ConvertOp(counts, i32))

    def _info(self, converged: SSAValue) -> SSAValue:
        """LAPACK's info from a decomposition's convergence flags: 0 where it converged, else 1."""
        return self.ins(nne.ConvertOp(self.ins(nne.NotOp(converged)), i32))

    def _syevd(self, op: CustomCallOp) -> Sequence[SSAValue]:
        (a,) = op.inputs
        shape = _shape(a)
        if len(shape) < 2 or shape[-1] != shape[-2]:
            raise CompileError.at(op, f"convert-stablehlo: {describe(op)} of {a.type}: square matrices expected")
        nb = len(shape) - 2
        rows = self.ins(nns.IotaOp(TensorType(i64, shape), nb))
        cols = self.ins(nns.IotaOp(TensorType(i64, shape), nb + 1))
        kept = self.ins(nne.CompareOp(rows, cols, "GE" if _option(op, "uplo") == LOWER else "LE"))
        symmetric = self.ins(nne.SelectOp(kept, a, self._swap_last(a)))
        w, v, converged = lb.jacobi_eigh(lb.Ops(self.b), symmetric)
        return [v, w, self._info(converged)]

    def _gesdd(self, op: CustomCallOp) -> Sequence[SSAValue]:
        (a,) = op.inputs
        shape = _shape(a)
        mode = chr(_option(op, "mode"))
        if len(shape) < 2 or mode not in "ASN":
            raise CompileError.at(op, f"convert-stablehlo: {describe(op)} of {a.type} with mode {mode!r} is not "
                                      "supported (matrices; modes A, S, N)")
        m, n = shape[-2:]
        wide = m < n
        tall = self._swap_last(a) if wide else a
        vectors = None if mode == "N" else (max(m, n) if mode == "A" else min(m, n))
        s, u, v, converged = lb.jacobi_svd(lb.Ops(self.b), tall, vectors)
        u_type, vt_type = op.outputs[2].type, op.outputs[3].type
        if u is None or v is None:
            u, vt = (self.ins(nn.FullOp(FloatAttr(0.0, t.element_type), t.get_shape()))  # type: ignore[union-attr]
                     for t in (u_type, vt_type))
        else:
            u, vt = (v, self._swap_last(u)) if wide else (u, self._swap_last(v))
        return [a, s, u, vt, self._info(converged)]
