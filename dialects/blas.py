"""The blas dialect: calls into an optimised BLAS on buffers.

`contraction-to-blas` rewrites contraction maps into these ops after
bufferize; the LLVM backend calls dfc's own GEMM kernel
(`compiler.codegen.gemm_kernel`) or the BLAS shipped as `scipy-openblas64`
(`compiler.codegen.blas_runtime`), as `DFC_GEMM` chooses. The ops work on row-major buffers with
explicit sizes, leading dimensions and batch strides, as CBLAS does, so the
pass states every address computation in the IR.
"""

from __future__ import annotations

from xdsl.dialects.builtin import AnyFloat, FloatAttr, IndexType, MemRefType, UnitAttr, f64
from xdsl.ir import Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    opt_region_def,
    prop_def,
    traits_def,
)
from xdsl.traits import EffectInstance, MemoryEffect, MemoryEffectKind, NoTerminator
from xdsl.utils.exceptions import VerifyException


class GemmEffects(MemoryEffect):
    """Reads `a` and `b`; reads and writes `c`; with an epilogue, may read
    and write any buffer."""

    @classmethod
    def get_effects(cls, op: Operation) -> set[EffectInstance]:
        assert isinstance(op, GemmOp)
        effects = {
            EffectInstance(MemoryEffectKind.READ, op.a),
            EffectInstance(MemoryEffectKind.READ, op.b),
            EffectInstance(MemoryEffectKind.READ, op.c),
            EffectInstance(MemoryEffectKind.WRITE, op.c),
        }
        if op.epilogue is not None:
            effects |= {EffectInstance(MemoryEffectKind.READ), EffectInstance(MemoryEffectKind.WRITE)}
        return effects


@irdl_op_definition
class GemmOp(IRDLOperation):
    """A batch of matrix products accumulated into `c`, as CBLAS's strided batched gemm.

    For `t` in `[0, batch)`, `i` in `[0, m)`, `j` in `[0, n)`, with every buffer
    read as its flat row-major element sequence:

        c[t*stride_c + i*ldc + j] = sum(A(t, i, p) * B(t, p, j) for p in [0, k))
                                    + beta * c[t*stride_c + i*ldc + j]

    where `A(t, i, p)` is `a[t*stride_a + i*lda + p]`, or `a[t*stride_a + p*lda + i]`
    with `transpose_a` (likewise `B(t, p, j)` with `ldb`, `transpose_b`). `beta` is 0
    (`c` is only written) or 1 (accumulate). `a`, `b` and `c` must not overlap and
    the addressed elements must lie inside their buffers; the pass that creates the
    op guarantees both.

        blas.gemm %a, %b, %c, %batch, %m, %n, %k, %lda, %ldb, %ldc, %sa, %sb, %sc
            {beta = 1.0 : f64, transpose_b} : memref<8x784xf32>, memref<120x784xf32>, memref<8x120xf32>

    The optional `epilogue` region (one block, arguments `(t, i, j)` of type
    index, no terminator; memref/arith/math ops) runs once for every element
    `(t, i, j)` of the product, after that element of `c` is final: the
    backend runs it on each panel of tiles as the kernel finishes storing it,
    while it is in cache, so a bias, an activation or a gradient's mask costs
    no pass over memory. The elements run in no particular order, so each
    must touch only what belongs to it (`fuse-gemm-epilogue` creates the
    region and guarantees this):

        blas.gemm ... : memref<256x784xf32>, memref<512x784xf32>, memref<256x512xf32> epilogue {
        ^bb0(%t: index, %i: index, %j: index):
          %v = memref.load %c[%i, %j] : memref<256x512xf32>
          ...
        }
    """

    name = "blas.gemm"

    a = operand_def(MemRefType)
    b = operand_def(MemRefType)
    c = operand_def(MemRefType)
    batch = operand_def(IndexType)
    m = operand_def(IndexType)
    n = operand_def(IndexType)
    k = operand_def(IndexType)
    lda = operand_def(IndexType)
    ldb = operand_def(IndexType)
    ldc = operand_def(IndexType)
    stride_a = operand_def(IndexType)
    stride_b = operand_def(IndexType)
    stride_c = operand_def(IndexType)
    beta = prop_def(FloatAttr)
    transpose_a = opt_prop_def(UnitAttr)
    transpose_b = opt_prop_def(UnitAttr)
    epilogue = opt_region_def("single_block")

    traits = traits_def(GemmEffects(), NoTerminator())
    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = (
        "$a `,` $b `,` $c `,` $batch `,` $m `,` $n `,` $k `,` $lda `,` $ldb `,` $ldc `,` "
        "$stride_a `,` $stride_b `,` $stride_c attr-dict `:` type($a) `,` type($b) `,` type($c) "
        "(`epilogue` $epilogue^)?"
    )

    def __init__(
        self,
        a: SSAValue,
        b: SSAValue,
        c: SSAValue,
        sizes: tuple[SSAValue, SSAValue, SSAValue, SSAValue],
        leading: tuple[SSAValue, SSAValue, SSAValue],
        strides: tuple[SSAValue, SSAValue, SSAValue],
        *,
        beta: float,
        transpose_a: bool = False,
        transpose_b: bool = False,
        epilogue: Block | None = None,
    ):
        """`sizes` is (batch, m, n, k); `leading` (lda, ldb, ldc); `strides` the
        batch strides; `epilogue` the block of the `epilogue` region."""
        props: dict = {"beta": FloatAttr(beta, f64)}
        if transpose_a:
            props["transpose_a"] = UnitAttr()
        if transpose_b:
            props["transpose_b"] = UnitAttr()
        super().__init__(operands=[a, b, c, *sizes, *leading, *strides], properties=props,
                         regions=[[Region(epilogue)] if epilogue is not None else []])

    def verify_(self) -> None:
        types = [v.type for v in (self.a, self.b, self.c)]
        assert all(isinstance(t, MemRefType) for t in types)
        elems = {t.element_type for t in types}
        if len(elems) != 1:
            raise VerifyException(f"a, b and c must have one element type, got {', '.join(map(str, types))}")
        (elem,) = elems
        if not isinstance(elem, AnyFloat) or elem.bitwidth not in (32, 64):
            raise VerifyException(f"expected f32 or f64 buffers, got {elem}")
        if self.beta.value.data not in (0.0, 1.0):
            raise VerifyException(f"beta must be 0 or 1, got {self.beta.value.data}")
        if self.epilogue is not None:
            args = self.epilogue.block.args
            if len(args) != 3 or any(not isinstance(x.type, IndexType) for x in args):
                raise VerifyException("the epilogue's block takes three index arguments (t, i, j)")


BLAS = Dialect("blas", [GemmOp])
