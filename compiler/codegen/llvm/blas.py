"""blas to LLVM IR: `HANDLERS`, the `blas.gemm` handler.

A `blas.gemm` becomes CBLAS (row-major) sgemm/dgemm calls: dfc's own kernel
(`compiler.codegen.gemm_kernel`, when the module's `own_gemm`) or the
OpenBLAS build (`compiler.codegen.blas_runtime`), on the module's threads
(see `_gemm`). An `epilogue` region is outlined (`outline.Outlined`) into
`void (ptr ctx, i64 t, i64 i0, i64 i1, i64 j0, i64 j1)` running it on a
block of elements, which dfc's kernel calls on each panel of C it finishes
(else it runs after the call, on the block). A gathered factor (offset
tables) always goes to dfc's kernel's gather entry.
"""

from __future__ import annotations

from collections.abc import Callable

import llvmlite.ir as ir
from xdsl.ir import Operation

from dfc.compiler.codegen import blas_runtime, gemm_kernel
from dfc.compiler.codegen.llvm.emitter import FunctionEmitter, Handlers, ModuleEmitter
from dfc.compiler.codegen.llvm.outline import Outlined
from dfc.compiler.codegen.llvm.values import ALLOC_ALIGN, I32, I64, PTR, VOID, byte_size
from dfc.compiler.codegen.runtime import BODY_TYPE, declare_runtime

__all__ = ["HANDLERS"]

HANDLERS = Handlers()
"""The blas ops' handlers."""

_CBLAS_ROW_MAJOR, _CBLAS_NO_TRANS, _CBLAS_TRANS = 101, 111, 112


@HANDLERS.register("blas.gemm")
def _gemm(e: FunctionEmitter, op: Operation) -> None:
    """`blas.gemm` as CBLAS gemm calls (none when a size is 0) on the module's
    threads. With dfc's own kernel (`gemm_kernel.enabled()`), the module's
    threads (its pool or the OpenMP team) run the calls on blocks of batch
    entries, else of the rows or the columns of C, whichever are more (or
    along k, `_gemm_by_depth_or`); OpenBLAS, which the kernel calls for
    products narrower than a vector, is set to one thread meanwhile. With
    OpenBLAS's kernels on dfc's own pool, the library's threads do the work:
    the pool is parked and OpenBLAS set to the module's thread count for the
    calls (numpy's products use the same OpenBLAS threads; a second pool
    would compete with them). On a shared OpenMP team (torch's,
    `runtime.use_openmp`), OpenBLAS runs single-threaded on the team's blocks
    as above, so that its threads do not spin beside the team. A product with a gathered factor
    always calls dfc's kernel (its gather entry) on the module's threads,
    each block with its slice of the offset tables."""
    a, b, c = (e.getm(v) for v in op.operands[:3])
    sizes = [e.getv(v) for v in op.operands[3:13]]
    batch, m, n, k = sizes[:4]
    tables = _gemm_tables(e, op)
    get_threads = e.m.declare(blas_runtime.GET_NUM_THREADS, I32, [])
    set_threads = e.m.declare(blas_runtime.SET_NUM_THREADS, VOID, [I32])
    ranged = _gemm_range(e.m, op, c.elem)
    bld = e.b
    zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)
    epilogue = _epilogue(e, op)

    def with_blas_threads(count: int, emit: Callable[[], None]) -> None:
        old = bld.call(get_threads, [])
        differ = bld.icmp_signed("!=", old, ir.Constant(I32, count))
        with bld.if_then(differ):
            bld.call(set_threads, [ir.Constant(I32, count)])
        emit()
        with bld.if_then(differ):
            bld.call(set_threads, [old])

    def whole() -> None:
        bld.call(ranged, [a.ptr, b.ptr, c.ptr, *sizes, *tables, *epilogue, ir.Constant(I64, _GEMM_BY_BATCH), zero,
                          batch])

    def blocks() -> None:
        threads = ir.Constant(I64, e.m.num_threads)
        by_batch = bld.icmp_signed(">=", batch, threads)
        by_cols = bld.icmp_signed(">", n, m)
        axis = bld.select(by_batch, ir.Constant(I64, _GEMM_BY_BATCH),
                          bld.select(by_cols, ir.Constant(I64, _GEMM_BY_COLS), ir.Constant(I64, _GEMM_BY_ROWS)))
        extent = bld.select(by_batch, batch, bld.select(by_cols, n, m))
        # multiply-adds per unit of the split axis
        work = bld.select(by_batch, bld.mul(bld.mul(m, n), k), bld.mul(bld.mul(bld.select(by_cols, m, n), k), batch))
        work = e.call_intrinsic("umax", I64, [work, one])
        min_iters = bld.add(bld.udiv(ir.Constant(I64, e.m.parallel_min_work), work), one)
        fields = [a.ptr, b.ptr, c.ptr, *sizes, *tables, *epilogue, axis]
        ctx_ty = ir.LiteralStructType([x.type for x in fields])
        ctx = e.entry_alloca(ctx_ty, 8, name="gemm.ctx")
        for i, x in enumerate(fields):
            bld.store(x, bld.gep(ctx, [ir.Constant(I32, 0), ir.Constant(I32, i)], inbounds=True, source_etype=ctx_ty))
        body = _gemm_body(e.m, ranged, ctx_ty)
        bld.call(declare_runtime(e.m.ir, "__dfc_parallel_for"), [body, ctx, zero, extent, one, min_iters, threads])

    empty = bld.or_(bld.icmp_signed("==", m, zero), bld.icmp_signed("==", n, zero))
    with bld.if_then(bld.not_(empty)):
        if e.in_parallel or e.m.num_threads <= 1:
            with_blas_threads(1, whole)
            return
        if e.m.own_gemm or _gathers(op):  # dfc's kernels run on the module's threads (OpenBLAS's only for narrow products)
            with_blas_threads(1, lambda: _gemm_by_depth_or(e, op, epilogue, blocks))
            return
        shared = bld.call(declare_runtime(e.m.ir, "__dfc_openmp_shared"), [])
        with bld.if_else(bld.icmp_signed("!=", shared, zero)) as (on_team, on_blas):
            with on_team:
                with_blas_threads(1, lambda: _gemm_by_depth_or(e, op, epilogue, blocks))
            with on_blas:  # the pool's idle workers would spin on the cores OpenBLAS is about to use
                bld.call(declare_runtime(e.m.ir, "__dfc_pool_park"), [])
                with_blas_threads(e.m.num_threads, whole)


_GEMM_BY_ROWS, _GEMM_BY_COLS, _GEMM_BY_BATCH = 0, 1, 2
_DEEP = 8
"""A product is split along its depth when k >= _DEEP * max(m, n)."""


def _gemm_by_depth_or(e: FunctionEmitter, op: Operation, epilogue: tuple[ir.Value, ir.Value],
                      otherwise: Callable[[], None]) -> None:
    """A deep, narrow product (one batch entry, k >= _DEEP * max(m, n): a
    convolution's weight gradient, 6x25 summed over 50,176 positions) split
    along k on the team: chunk j multiplies its slice of A and B into C
    (chunk 0, with beta) or into a scratch block, the blocks are then added
    into C, and `epilogue` (`_epilogue`) runs on the whole product. Split by
    rows or columns, every thread would read all of the operand that is not
    split (all 5 MB of the patches, each). Else, or when the scratch cannot
    be allocated, `otherwise`."""
    a, b, c = (e.getm(v) for v in op.operands[:3])
    batch, m, n, k, lda, ldb, ldc = (e.getv(v) for v in op.operands[3:10])
    tables = _gemm_tables(e, op)
    bld = e.b
    chunks = e.m.num_threads
    one = ir.Constant(I64, 1)
    esize = ir.Constant(I64, byte_size(c.elem))
    deep = bld.and_(bld.icmp_signed("==", batch, one),
                    bld.icmp_signed(">=", k, bld.mul(e.call_intrinsic("smax", I64, [m, n]), ir.Constant(I64, _DEEP))))
    deep = bld.and_(deep, bld.icmp_signed(">=", k, ir.Constant(I64, 4 * chunks)))
    deep = bld.and_(deep, bld.icmp_signed(">=", bld.mul(bld.mul(m, n), k), ir.Constant(I64, e.m.parallel_min_work)))
    slot = e.entry_alloca(PTR, 8, name="gemm.scratch")
    bld.store(ir.Constant(PTR, None), slot)
    block = bld.mul(m, n)
    nbytes = bld.mul(bld.mul(block, ir.Constant(I64, chunks - 1)), esize)
    with bld.if_then(deep):
        bld.store(bld.call(declare_runtime(e.m.ir, "__dfc_alloc"), [ir.Constant(I64, ALLOC_ALIGN), nbytes]), slot)
    scratch = bld.load(slot)
    with bld.if_else(bld.icmp_unsigned("!=", scratch, ir.Constant(PTR, None))) as (split, other):
        with split:
            fields = [a.ptr, b.ptr, c.ptr, scratch, m, n, k, lda, ldb, ldc, *tables]
            ctx_ty = ir.LiteralStructType([x.type for x in fields])
            ctx = e.entry_alloca(ctx_ty, 8, name="gemm.depth.ctx")
            for i, x in enumerate(fields):
                bld.store(x, bld.gep(ctx, [ir.Constant(I32, 0), ir.Constant(I32, i)], inbounds=True,
                                     source_etype=ctx_ty))
            body = _gemm_depth_body(e.m, op, c.elem, ctx_ty, chunks)
            bld.call(declare_runtime(e.m.ir, "__dfc_parallel_for"),
                     [body, ctx, ir.Constant(I64, 0), ir.Constant(I64, chunks), one, one, ir.Constant(I64, chunks)])
            zero = ir.Constant(I64, 0)

            def add_block(j: ir.Value, _: list) -> list:
                part = bld.gep(scratch, [bld.mul(bld.sub(j, one), block)], inbounds=True, source_etype=c.elem)

                def add_row(i: ir.Value, _: list) -> list:
                    def add(l: ir.Value, _: list) -> list:
                        to = bld.gep(c.ptr, [bld.add(bld.mul(i, ldc), l)], inbounds=True, source_etype=c.elem)
                        fr = bld.gep(part, [bld.add(bld.mul(i, n), l)], inbounds=True, source_etype=c.elem)
                        bld.store(bld.fadd(bld.load(to, typ=c.elem), bld.load(fr, typ=c.elem)), to)
                        return []

                    e.loop(zero, n, one, [], add, name="gemm.depth.col")
                    return []

                e.loop(zero, m, one, [], add_row, name="gemm.depth.row")
                return []

            e.loop(one, ir.Constant(I64, chunks), one, [], add_block, name="gemm.depth.chunk")
            bld.call(declare_runtime(e.m.ir, "__dfc_free"), [scratch, nbytes])
            if op.epilogue is not None:
                function, ctx = epilogue
                bld.call(function, [ctx, zero, zero, m, zero, n])
        with other:
            otherwise()


def _gemm_depth_body(m: ModuleEmitter, op: Operation, elem: ir.Type, ctx_ty: ir.LiteralStructType,
                     chunks: int) -> ir.Function:
    """The parallel loop's `void body(ptr ctx, i64 lo, i64 hi)` of
    `_gemm_by_depth_or`: chunks [lo, hi) of the depth."""
    gathers = _gathers(op)
    gemm = _cblas_gemm(m, elem, gather=gathers)
    fn = ir.Function(m.ir, BODY_TYPE, m.fresh_name("gemm.depth"))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    ctx, lo, hi = fn.args
    bld = ir.IRBuilder(fn.append_basic_block("entry"))
    pa, pb, pc, scratch, rows, cols, k, *lds, a_rows, a_cols, b_rows, b_cols = (
        bld.load(bld.gep(ctx, [ir.Constant(I32, 0), ir.Constant(I32, i)], inbounds=True, source_etype=ctx_ty), typ=t)
        for i, t in enumerate(ctx_ty.elements))
    lda, ldb, ldc = (_at_least_one(bld, x) for x in lds)
    gathered_a, gathered_b = op.a_rows is not None, op.b_rows is not None
    trans_a, trans_b = (op.properties.get(p) is not None for p in ("transpose_a", "transpose_b"))
    trans = [ir.Constant(I32, _CBLAS_TRANS if t else _CBLAS_NO_TRANS) for t in (trans_a, trans_b)]
    n_chunks, zero, one = ir.Constant(I64, chunks), ir.Constant(I64, 0), ir.Constant(I64, 1)
    beta = ir.Constant(elem, op.properties["beta"].value.data)

    def chunk(j: ir.Value) -> None:
        k_lo = bld.udiv(bld.mul(j, k), n_chunks)
        depth = bld.sub(bld.udiv(bld.mul(bld.add(j, one), k), n_chunks), k_lo)
        a_ptr = pa if gathered_a else bld.gep(pa, [bld.mul(k_lo, lda) if trans_a else k_lo], inbounds=True,
                                              source_etype=elem)
        b_ptr = pb if gathered_b else bld.gep(pb, [k_lo if trans_b else bld.mul(k_lo, ldb)], inbounds=True,
                                              source_etype=elem)
        first = bld.icmp_signed("==", j, zero)
        part = bld.gep(scratch, [bld.mul(bld.sub(j, one), bld.mul(rows, cols))], inbounds=False, source_etype=elem)
        dest = bld.select(first, pc, part)
        ld = bld.select(first, ldc, cols)
        args = [ir.Constant(I32, _CBLAS_ROW_MAJOR), *trans, rows, cols, depth, ir.Constant(elem, 1.0),
                a_ptr, lda, b_ptr, ldb, bld.select(first, beta, ir.Constant(elem, 0.0)), dest, ld]
        if gathers:  # the depth slice [k_lo, ...) of A's columns and B's rows
            shifted = [_table_at(bld, a_cols, k_lo) if gathered_a else a_cols,
                       _table_at(bld, b_rows, k_lo) if gathered_b else b_rows]
            args += [a_rows, shifted[0], shifted[1], b_cols, *[ir.Constant(PTR, None)] * 2, zero, zero, zero]
        bld.call(gemm, args)

    _each(fn, bld, lo, hi, "chunk", chunk)
    bld.ret_void()
    return fn


def _gemm_range(m: ModuleEmitter, op: Operation, elem: ir.Type) -> ir.Function:
    """`void (ptr a, ptr b, ptr c, i64 batch, m, n, k, lda, ldb, ldc, sa, sb, sc,
    ptr a_rows, a_cols, b_rows, b_cols, ptr epilogue, ptr ctx, i64 axis, i64 lo,
    i64 hi)`: the CBLAS calls of `op`
    for batch entries [lo, hi) (axis 2), or for rows (0) or columns (1)
    [lo, hi) of C in every batch entry, each followed by `op`'s epilogue on
    its block (`_epilogue`; dfc's kernel runs it on each panel it finishes)."""
    with_epilogue, gathers = op.epilogue is not None, _gathers(op)
    gemm = _cblas_gemm(m, elem, with_epilogue, gathers)
    fn = ir.Function(m.ir, ir.FunctionType(VOID, [PTR] * 3 + [I64] * 10 + [PTR] * 6 + [I64] * 3),
                     m.fresh_name("gemm.range"))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    pa, pb, pc, batch, rows, cols, k, lda, ldb, ldc, sa, sb, sc, *tables, epilogue, ctx, axis, lo, hi = fn.args
    gathered_a, gathered_b = op.a_rows is not None, op.b_rows is not None
    trans_a, trans_b = (op.properties.get(p) is not None for p in ("transpose_a", "transpose_b"))
    bld = ir.IRBuilder(fn.append_basic_block("entry"))
    zero = ir.Constant(I64, 0)

    lds = [_at_least_one(bld, v) for v in (lda, ldb, ldc)]
    on = [bld.icmp_signed("==", axis, ir.Constant(I64, x)) for x in (_GEMM_BY_ROWS, _GEMM_BY_COLS, _GEMM_BY_BATCH)]
    t_lo, t_hi = bld.select(on[2], lo, zero), bld.select(on[2], hi, batch)
    r0, c0 = bld.select(on[0], lo, zero), bld.select(on[1], lo, zero)
    m_block = bld.select(on[0], bld.sub(hi, lo), rows)
    n_block = bld.select(on[1], bld.sub(hi, lo), cols)
    a_off = zero if gathered_a else r0 if trans_a else bld.mul(r0, lds[0])
    b_off = zero if gathered_b else bld.mul(c0, lds[1]) if trans_b else c0
    a_rows, a_cols, b_rows, b_cols = tables
    tables = [_table_at(bld, a_rows, r0) if gathered_a else a_rows, a_cols, b_rows,  # this block's rows and columns
              _table_at(bld, b_cols, c0) if gathered_b else b_cols]
    c_off = bld.add(bld.mul(r0, lds[2]), c0)
    beta = ir.Constant(elem, op.properties["beta"].value.data)
    trans = [ir.Constant(I32, _CBLAS_TRANS if t else _CBLAS_NO_TRANS) for t in (trans_a, trans_b)]

    def entry(t: ir.Value) -> None:
        ptrs = [bld.gep(x, [bld.add(bld.mul(t, s), off)], inbounds=True, source_etype=elem)
                for x, s, off in ((pa, sa, a_off), (pb, sb, b_off), (pc, sc, c_off))]
        args = [ir.Constant(I32, _CBLAS_ROW_MAJOR), *trans, m_block, n_block, k, ir.Constant(elem, 1.0),
                ptrs[0], lds[0], ptrs[1], lds[1], beta, ptrs[2], lds[2]]
        if gathers:
            bld.call(gemm, [*args, *tables, epilogue, ctx, t, r0, c0])
            return
        if with_epilogue and m.own_gemm:
            bld.call(gemm, [*args, epilogue, ctx, t, r0, c0])
            return
        bld.call(gemm, args)
        if with_epilogue:
            bld.call(gemm_kernel.epilogue_callee(epilogue), [ctx, t, r0, bld.add(r0, m_block), c0, bld.add(c0, n_block)])

    _each(fn, bld, t_lo, t_hi, "batch", entry)
    bld.ret_void()
    return fn


def _gathers(op: Operation) -> bool:
    """Whether a `blas.gemm` gathers a factor through offset tables."""
    return op.a_rows is not None or op.b_rows is not None  # type: ignore[attr-defined]


def _gemm_tables(e: FunctionEmitter, op: Operation) -> list[ir.Value]:
    """The data pointers of `op`'s offset tables (a_rows, a_cols, b_rows, b_cols), null where a factor is not gathered."""
    return [e.getm(v).ptr if v is not None else ir.Constant(PTR, None) for v in op.tables()]  # type: ignore[attr-defined]


def _table_at(bld: ir.IRBuilder, table: ir.Value, offset: ir.Value) -> ir.Value:
    """`table + offset` (i64 elements)."""
    return bld.gep(table, [offset], inbounds=True, source_etype=I64)


def _at_least_one(bld: ir.IRBuilder, v: ir.Value) -> ir.Value:
    """max(v, 1): CBLAS wants leading dimensions of at least 1."""
    one = ir.Constant(I64, 1)
    return bld.select(bld.icmp_signed("<", v, one), one, v)


def _cblas_gemm(m: ModuleEmitter, elem: ir.Type, epilogue: bool = False, gather: bool = False) -> ir.Function:
    """The declaration of CBLAS's sgemm or dgemm (by `elem`): dfc's own kernel
    when `gemm_kernel.enabled()` (with `epilogue`, its entry that takes one),
    else the OpenBLAS build's; with `gather` (a gathered factor), always dfc's
    kernel's gather entry, which takes the offset tables and an epilogue."""
    single = isinstance(elem, ir.FloatType)
    args = [I32, I32, I32, I64, I64, I64, elem, PTR, I64, PTR, I64, elem, PTR, I64]
    if gather:
        name = gemm_kernel.symbol("f32" if single else "f64", gather=True)
        return m.declare(name, VOID, args + gemm_kernel.gather_args() + gemm_kernel.epilogue_args())
    if m.own_gemm:
        name = gemm_kernel.symbol("f32" if single else "f64", epilogue)
        args += gemm_kernel.epilogue_args() if epilogue else []
    else:
        name = blas_runtime.symbol("sgemm" if single else "dgemm")
    return m.declare(name, VOID, args)


def _epilogue(e: FunctionEmitter, op: Operation) -> tuple[ir.Value, ir.Value]:
    """`op`'s epilogue as a function of `gemm_kernel.EPILOGUE_TYPE` and its
    context, filled here: it runs the region on the elements (t, i, j), i in
    [i0, i1), j in [j0, j1) (j innermost, for LLVM to vectorise). Two null
    pointers without an epilogue."""
    null = ir.Constant(PTR, None)
    if op.epilogue is None:
        return null, null
    block = op.epilogue.block
    out = Outlined(e, op, [], gemm_kernel.EPILOGUE_TYPE.args[1:], e.m.fresh_name(f"{e.func_op.sym_name.data}.epilogue"))
    sub = out.sub
    t, i0, i1, j0, j1 = out.args
    one = ir.Constant(I64, 1)
    sub.values[block.args[0]] = t

    def row(i: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
        sub.values[block.args[1]] = i

        def element(j: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
            sub.values[block.args[2]] = j
            sub.emit_ops(block)
            return []

        sub.loop(j0, j1, one, [], element, name="epilogue.j")
        return []

    sub.loop(i0, i1, one, [], row, name="epilogue.i")
    sub.b.ret_void()
    return out.trampoline, out.ctx


def _each(fn: ir.Function, bld: ir.IRBuilder, lo: ir.Value, hi: ir.Value, name: str,
          body: Callable[[ir.Value], None]) -> None:
    """`for (t = lo; t < hi; t++) body(t)` at the end of `bld`'s block in `fn`."""
    head, step, done = (fn.append_basic_block(x) for x in (name, f"{name}.entry", f"{name}.done"))
    entry = bld.block
    bld.branch(head)
    bld.position_at_end(head)
    t = bld.phi(I64)
    t.add_incoming(lo, entry)
    bld.cbranch(bld.icmp_signed("<", t, hi), step, done)
    bld.position_at_end(step)
    body(t)
    t.add_incoming(bld.add(t, ir.Constant(I64, 1)), bld.block)
    bld.branch(head)
    bld.position_at_end(done)


def _gemm_body(m: ModuleEmitter, ranged: ir.Function, ctx_ty: ir.LiteralStructType) -> ir.Function:
    """The parallel loop's `void body(ptr ctx, i64 lo, i64 hi)` calling
    `ranged` with the fields of the context struct."""
    fn = ir.Function(m.ir, BODY_TYPE, m.fresh_name("gemm.body"))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    bld = ir.IRBuilder(fn.append_basic_block("entry"))
    fields = [bld.load(bld.gep(fn.args[0], [ir.Constant(I32, 0), ir.Constant(I32, i)], inbounds=True,
                               source_etype=ctx_ty), typ=x) for i, x in enumerate(ctx_ty.elements)]
    bld.call(ranged, [*fields, fn.args[1], fn.args[2]])
    bld.ret_void()
    return fn
