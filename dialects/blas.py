"""The blas dialect: calls into an optimised BLAS on buffers.

`contraction-to-blas` rewrites contraction maps into these ops after
bufferize; the LLVM backend calls dfc's own GEMM kernel
(`compiler.codegen.gemm_kernel`) or the BLAS shipped as `scipy-openblas64`
(`compiler.codegen.blas_runtime`), as `DFC_GEMM` chooses; on the GPU each
op is a tiled kernel (`passes.gpu_gemm`). The ops work on row-major buffers with
explicit sizes, leading dimensions and batch strides, as CBLAS does, so the
pass states every address computation in the IR.
"""

from __future__ import annotations

from xdsl.dialects.builtin import AnyFloat, FloatAttr, IndexType, MemRefType, UnitAttr, f64
from xdsl.ir import Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
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
        effects |= {EffectInstance(MemoryEffectKind.READ, t) for t in op.tables() if t is not None}
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

    A factor may be *gathered* through two offset tables (`memref<?xindex>`,
    `fuse-gemm-gather` creates them from the copy map that would have filled
    the factor, a convolution's patches): with `gather_a(%rows, %cols)`,

        A(t, i, p) = a[t*stride_a + rows[i] + cols[p]]

    (likewise `gather_b` for B(t, p, j)), `lda` and `transpose_a` unused. The
    pass that creates the op guarantees that every such element lies inside
    `a`; the kernel packs the gathered elements block by block, so the factor
    never exists in memory.

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
    a_rows = opt_operand_def(MemRefType)
    a_cols = opt_operand_def(MemRefType)
    b_rows = opt_operand_def(MemRefType)
    b_cols = opt_operand_def(MemRefType)
    beta = prop_def(FloatAttr)
    transpose_a = opt_prop_def(UnitAttr)
    transpose_b = opt_prop_def(UnitAttr)
    epilogue = opt_region_def("single_block")

    traits = traits_def(GemmEffects(), NoTerminator())
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))

    assembly_format = (
        "$a `,` $b `,` $c `,` $batch `,` $m `,` $n `,` $k `,` $lda `,` $ldb `,` $ldc `,` "
        "$stride_a `,` $stride_b `,` $stride_c "
        "(`gather_a` `(` $a_rows^ `,` $a_cols `:` type($a_rows) `,` type($a_cols) `)`)? "
        "(`gather_b` `(` $b_rows^ `,` $b_cols `:` type($b_rows) `,` type($b_cols) `)`)? "
        "attr-dict `:` type($a) `,` type($b) `,` type($c) "
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
        gather_a: tuple[SSAValue, SSAValue] | None = None,
        gather_b: tuple[SSAValue, SSAValue] | None = None,
    ):
        """`sizes` is (batch, m, n, k); `leading` (lda, ldb, ldc); `strides` the
        batch strides; `epilogue` the block of the `epilogue` region;
        `gather_a`, `gather_b` a factor's (rows, cols) offset tables."""
        props: dict = {"beta": FloatAttr(beta, f64)}
        if transpose_a:
            props["transpose_a"] = UnitAttr()
        if transpose_b:
            props["transpose_b"] = UnitAttr()
        tables = [[v] if pair is not None else [] for pair in (gather_a, gather_b) for v in (pair or (None, None))]
        super().__init__(operands=[a, b, c, *sizes, *leading, *strides, *tables], properties=props,
                         regions=[[Region(epilogue)] if epilogue is not None else []])

    def tables(self) -> tuple[SSAValue | None, SSAValue | None, SSAValue | None, SSAValue | None]:
        """a_rows, a_cols, b_rows, b_cols (None where a factor is not gathered)."""
        return self.a_rows, self.a_cols, self.b_rows, self.b_cols

    def gather(self, side: str) -> tuple[SSAValue, SSAValue] | None:
        """Factor `side`'s ("a" or "b") (rows, cols) tables, or None when it is not gathered."""
        rows, cols = (self.a_rows, self.a_cols) if side == "a" else (self.b_rows, self.b_cols)
        return (rows, cols) if rows is not None and cols is not None else None

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
        for name in ("a", "b"):
            rows, cols = getattr(self, f"{name}_rows"), getattr(self, f"{name}_cols")
            if (rows is None) != (cols is None):
                raise VerifyException(f"gather_{name} takes two tables, rows and columns")
            if rows is not None:
                if self.properties.get(f"transpose_{name}") is not None:
                    raise VerifyException(f"a gathered factor is not transposed (transpose_{name})")
                for table in (rows, cols):
                    t = table.type
                    assert isinstance(t, MemRefType)
                    if not isinstance(t.element_type, IndexType) or len(t.get_shape()) != 1:
                        raise VerifyException(f"gather_{name}'s tables are memref<?xindex>, got {t}")
        if self.epilogue is not None:
            args = self.epilogue.block.args
            if len(args) != 3 or any(not isinstance(x.type, IndexType) for x in args):
                raise VerifyException("the epilogue's block takes three index arguments (t, i, j)")


BLAS = Dialect("blas", [GemmOp])
