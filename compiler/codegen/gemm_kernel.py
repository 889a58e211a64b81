"""dfc's own matrix product: a packed, register-blocked GEMM (the BLIS
structure) generated as LLVM IR for the host's vector width.

`__dfc_sgemm` / `__dfc_dgemm` take CBLAS's row-major gemm arguments
(`order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc`,
64-bit integers, as OpenBLAS's `scipy_cblas_*gemm64_`) and compute
C = alpha op(A) op(B) + beta C on the calling thread; `blas.gemm` calls them
in place of OpenBLAS when `enabled()`, on blocks of C split over the module's
threads as for a single-threaded BLAS.

Structure, for C of m x n with NR = NV vectors of W lanes:

* depth blocks of KC; in each, column blocks of NB: the block of B
  (KC x NB) is packed into slivers of NR columns, row after row of each
  sliver contiguous (a transposed B is transposed W x W in registers);
* A is read in place: row i, depth p at `a + i rs + p cs` (rs = lda, cs = 1,
  or transposed rs = 1, cs = lda); the last m mod MR rows are copied into a
  zero-padded MR-row panel;
* the micro-kernel keeps an MR x NR tile of C in MR x NV vector registers,
  adding per depth step the product of MR broadcast elements of A with the
  sliver's NV vectors, unrolled U steps; the first depth block stores
  alpha tile + beta C (C not read when beta is 0, as BLAS), later ones add.
  Columns past n are masked loads and stores, so nothing outside the three
  matrices is touched.

A product narrower than one vector (n < W), or one whose packing buffer
cannot be allocated, is passed to OpenBLAS (`blas_runtime`).

`__dfc_sgemm_epilogue` / `__dfc_dgemm_epilogue` also take a `blas.gemm`
epilogue (`EPILOGUE_TYPE`: a function and its context) and call it on each
MR x NB panel of C right after the last depth block stores the panel's
tiles, while they are in L1 or L2 (after OpenBLAS, on the whole product).
Per panel rather than per MR x NR tile, whose rows are too short for the
epilogue's vectorised loop.

`__dfc_sgemm_gather` / `__dfc_dgemm_gather` also take four offset tables
(`gather_args`) through which a factor is read, `a[rows[i] + cols[p]]`
(`blas.gemm`'s gathered factors: a convolution's patches read from its
input): B's blocks are packed from them (`pack_b_gathered`: one load per
vector whose offsets are consecutive, else a masked gather), A's rows into
the MR-row panel, and then the epilogue entry's arguments. Such a product
never goes to OpenBLAS, which cannot read through tables; if the kernel's
buffers cannot be allocated it is computed one element at a time.

The kernels are compiled once per process and element type (cached on disk
with the modules when `DFC_CACHE_DIR` is set) and exported to JIT code like
the runtime. `DFC_GEMM` chooses: `auto` (default) uses them where the CPU has
512-bit vectors and OpenBLAS elsewhere (at 256 bits the kernel is no faster
than OpenBLAS's AVX2 kernels), `dfc` always, `blas` never.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import llvmlite.binding as llvm
import llvmlite.ir as ir

from dfc import config
from dfc.compiler.codegen import blas_runtime, object_cache
from dfc.compiler.codegen.ir_loop import counted_loop
from dfc.compiler.codegen.target import host_target_machine, load_runtime_libraries

__all__ = ["EPILOGUE_TYPE", "mode", "auto_choice", "enabled", "vector_bits", "symbol", "gather_args", "epilogue_args",
           "epilogue_callee", "Blocking", "blocking", "kernel_module", "Compiled", "compiled", "install", "load_if_called"]

_I1, _I32, _I64, _PTR, _VOID = ir.IntType(1), ir.IntType(32), ir.IntType(64), ir.PointerType(), ir.VoidType()
_TRANS = 112
"""CBLAS's `CblasTrans`."""

SYMBOLS = {"f32": "__dfc_sgemm", "f64": "__dfc_dgemm"}
EPILOGUE_SYMBOLS = {elem: name + "_epilogue" for elem, name in SYMBOLS.items()}
GATHER_SYMBOLS = {elem: name + "_gather" for elem, name in SYMBOLS.items()}
EPILOGUE_TYPE = ir.FunctionType(_VOID, [_PTR] + [_I64] * 5)
"""`void epilogue(ptr ctx, i64 t, i64 i0, i64 i1, i64 j0, i64 j1)`: runs a
`blas.gemm` epilogue on the elements (t, i, j), i in [i0, i1), j in [j0, j1),
of the product, once they are final."""


def mode() -> str:
    """`DFC_GEMM`: "auto" (the default), "dfc" or "blas"."""
    return config.GEMM.value()


@functools.cache
def vector_bits() -> int:
    """The widest vectors of the host: 512 (AVX-512F), 256 (AVX2 with FMA) or 128."""
    features = {f[1:] for f in llvm.get_host_cpu_features().flatten().split(",") if f.startswith("+")}
    if "avx512f" in features:
        return 512
    return 256 if {"avx2", "fma"} <= features else 128


def auto_choice() -> str:
    """What `DFC_GEMM=auto` picks on this host: "dfc" where the CPU has 512-bit
    vectors, else "blas"."""
    return "dfc" if vector_bits() >= 512 else "blas"


def enabled() -> bool:
    """Whether `blas.gemm` calls dfc's kernels (see `DFC_GEMM`)."""
    chosen = mode()
    return (auto_choice() if chosen == "auto" else chosen) == "dfc"


def symbol(elem: str, epilogue: bool = False, gather: bool = False) -> str:
    """The exported name of the kernel for element type `elem` ("f32" or
    "f64"): CBLAS's arguments, then with `gather` those of `gather_args`
    and `epilogue_args` (the gather entry always takes an epilogue, null for
    none), else with `epilogue` those of `epilogue_args`."""
    return (GATHER_SYMBOLS if gather else EPILOGUE_SYMBOLS if epilogue else SYMBOLS)[elem]


def gather_args() -> list[ir.Type]:
    """What the gather entry takes after CBLAS's arguments: the offset tables
    `a_rows, a_cols, b_rows, b_cols` (i64). With them, element (i, p) of op(A)
    is `a[a_rows[i] + a_cols[p]]` and (p, j) of op(B) `b[b_rows[p] + b_cols[j]]`
    (`blas.gemm`'s gathered operands); null tables leave that operand as
    CBLAS addresses it (its leading dimension and transposition)."""
    return [_PTR] * 4


def epilogue_args() -> list[ir.Type]:
    """What the epilogue entry takes after CBLAS's arguments: the epilogue
    (`EPILOGUE_TYPE`, or null for none), its context, and the batch entry t,
    first row and first column of the block of the product the call computes
    (the epilogue gets the elements' indices in the whole product)."""
    return [_PTR, _PTR, _I64, _I64, _I64]


@dataclass(frozen=True)
class Blocking:
    """Register and cache blocking of one kernel."""

    lanes: int
    """W: elements per vector."""
    rows: int
    """MR: rows of C per tile (broadcast elements of A per depth step)."""
    vectors: int
    """NV: vectors per tile row (NR = NV W columns)."""
    depth: int = 256
    """KC: depth per packed block of B."""
    columns: int = 512
    """NB: columns per packed block of B (a multiple of NR)."""
    unroll: int = 4
    """U: depth steps per iteration of the micro-kernel's loop."""

    @property
    def width(self) -> int:
        return self.lanes * self.vectors


def blocking(elem: str, bits: int) -> Blocking:
    """The blocking for `elem` at `bits`-wide vectors: with 32 vector registers
    (AVX-512) a 12 x 2-vector tile (24 accumulators), with 16 a 6 x 2 one."""
    lanes = bits // (32 if elem == "f32" else 64)
    return Blocking(lanes, 12, 2) if bits >= 512 else Blocking(lanes, 6, 2)


class _Emitter:
    """Loops and vector helpers over one function's IRBuilder."""

    def __init__(self, fn: ir.Function, elem: ir.Type, lanes: int):
        self.fn, self.elem, self.lanes = fn, elem, lanes
        self.b = ir.IRBuilder(fn.append_basic_block("entry"))
        self.vec = ir.VectorType(elem, lanes)
        self.size = 4 if isinstance(elem, ir.FloatType) else 8

    def loop(self, lo: ir.Value, hi: ir.Value, step: int, name: str, body: Callable[[ir.Value, list], list | None],
             carried: Sequence[ir.Value] = ()) -> list[ir.Value]:
        """`for (i = lo; i < hi; i += step)` with values carried through it; returns their final values."""
        return counted_loop(self.fn, self.b, lo, hi, _const(step), carried, lambda i, c: body(i, c) or [], name)

    def min(self, x: ir.Value, y: ir.Value) -> ir.Value:
        return self.b.select(self.b.icmp_signed("<", x, y), x, y)

    def at(self, base: ir.Value, index: ir.Value | int) -> ir.Value:
        """The address of element `index` of `base`."""
        return self.b.gep(base, [_const(index) if isinstance(index, int) else index], inbounds=True,
                          source_etype=self.elem)

    def splat(self, x: ir.Value) -> ir.Value:
        t = ir.VectorType(x.type, self.lanes)
        v = self.b.insert_element(ir.Constant(t, ir.Undefined), x, ir.Constant(_I32, 0))
        return self.b.shuffle_vector(v, ir.Constant(t, ir.Undefined), ir.Constant(ir.VectorType(_I32, self.lanes),
                                                                                   [0] * self.lanes))

    def lanes_below(self, limit: ir.Value) -> ir.Value:
        """The mask of the lanes whose index is below `limit`."""
        iota = ir.Constant(ir.VectorType(_I64, self.lanes), list(range(self.lanes)))
        return self.b.icmp_signed("<", iota, self.splat(limit))


def _const(v: int) -> ir.Constant:
    return ir.Constant(_I64, v)


def _transpose(b: ir.IRBuilder, rows: list[ir.Value]) -> list[ir.Value]:
    """The columns of the W x W matrix whose rows are `rows` (W a power of
    two): log2(W) rounds, each swapping the off-diagonal h x h blocks of
    every 2h x 2h block with two-input shuffles."""
    w = len(rows)
    rows = list(rows)
    h = w // 2
    mask_type = ir.VectorType(_I32, w)
    while h >= 1:
        low = ir.Constant(mask_type, [c + w - h if c & h else c for c in range(w)])
        high = ir.Constant(mask_type, [c + w if c & h else c + h for c in range(w)])
        for i in range(w):
            if not i & h:
                j = i + h
                rows[i], rows[j] = b.shuffle_vector(rows[i], rows[j], low), b.shuffle_vector(rows[i], rows[j], high)
        h //= 2
    return rows


class _Kernel:
    """The IR of one GEMM for one element type and blocking."""

    def __init__(self, module: ir.Module, elem_name: str, shape: Blocking):
        self.mod, self.shape = module, shape
        self.elem = ir.FloatType() if elem_name == "f32" else ir.DoubleType()
        w = shape.lanes
        vec = ir.VectorType(self.elem, w)
        mask = ir.VectorType(_I1, w)
        suffix = f"v{w}{elem_name}"
        self.fma = ir.Function(module, ir.FunctionType(vec, [vec] * 3), f"llvm.fmuladd.{suffix}")
        self.masked_load = ir.Function(module, ir.FunctionType(vec, [_PTR, _I32, mask, vec]),
                                       f"llvm.masked.load.{suffix}.p0")
        self.masked_store = ir.Function(module, ir.FunctionType(_VOID, [vec, _PTR, _I32, mask]),
                                        f"llvm.masked.store.{suffix}.p0")
        index_vec, pointers = ir.VectorType(_I64, w), ir.VectorType(_PTR, w)
        self.masked_load_index = ir.Function(module, ir.FunctionType(index_vec, [_PTR, _I32, mask, index_vec]),
                                             f"llvm.masked.load.v{w}i64.p0")
        self.gather = ir.Function(module, ir.FunctionType(vec, [pointers, _I32, mask, vec]),
                                  f"llvm.masked.gather.{suffix}.v{w}p0")
        self.all_of = ir.Function(module, ir.FunctionType(_I1, [mask]), f"llvm.vector.reduce.and.v{w}i1")
        self.count_trailing = ir.Function(module, ir.FunctionType(ir.IntType(w), [ir.IntType(w), _I1]),
                                          f"llvm.cttz.i{w}")
        self.alloc = ir.Function(module, ir.FunctionType(_PTR, [_I64, _I64]), "aligned_alloc")
        self.free = ir.Function(module, ir.FunctionType(_VOID, [_PTR]), "free")
        args = [_I32, _I32, _I32, _I64, _I64, _I64, self.elem, _PTR, _I64, _PTR, _I64, self.elem, _PTR, _I64]
        routine = "sgemm" if elem_name == "f32" else "dgemm"
        self.blas = ir.Function(module, ir.FunctionType(_VOID, args), blas_runtime.symbol(routine))
        self.micro = self._micro_kernel()
        self.pack_b = self._pack_b()
        self.pack_b_gathered = self._pack_b_gathered()
        self.naive = self._naive()
        self._entries(elem_name, args)

    def _internal(self, name: str, args: list[ir.Type]) -> _Emitter:
        """An emitter on a new internal `void name(args)` of the module."""
        fn = ir.Function(self.mod, ir.FunctionType(_VOID, args), name)
        fn.linkage = "internal"
        return _Emitter(fn, self.elem, self.shape.lanes)

    def _micro_kernel(self) -> ir.Function:
        """`void (i64 kc, ptr a, i64 rs, i64 cs, ptr sliver, ptr c, i64 ldc,
        i64 mr, i64 nr, T alpha, T beta, i1 first)`: the tile of C at `c`,
        rows [0, mr) and columns [0, nr), from `kc` depth steps."""
        s, elem = self.shape, self.elem
        e = self._internal("micro_kernel", [_I64, _PTR, _I64, _I64, _PTR, _PTR, _I64, _I64, _I64, elem, elem, _I1])
        fn, b = e.fn, e.b
        kc, a, rs, cs, sliver, c, ldc, mr, nr, alpha, beta, first = fn.args
        rows = [e.at(a, b.mul(_const(r), rs)) for r in range(s.rows)]
        zero = ir.Constant(e.vec, None)

        def step(p: ir.Value, acc: list[ir.Value]) -> list[ir.Value]:
            line = e.at(sliver, b.mul(p, _const(s.width)))
            bs = [b.load(e.at(line, v * s.lanes), typ=e.vec, align=e.size * s.lanes) for v in range(s.vectors)]
            offset = b.mul(p, cs)
            acc = list(acc)
            for r in range(s.rows):
                x = e.splat(b.load(e.at(rows[r], offset), typ=elem))
                for v in range(s.vectors):
                    acc[r * s.vectors + v] = b.call(self.fma, [x, bs[v], acc[r * s.vectors + v]])
            return acc

        def unrolled(p: ir.Value, acc: list) -> list:
            for u in range(s.unroll):
                acc = step(b.add(p, _const(u)), acc)
            return acc

        main = b.and_(kc, _const(-s.unroll))
        acc = e.loop(_const(0), main, s.unroll, "k", unrolled, [zero] * (s.rows * s.vectors))
        acc = e.loop(main, kc, 1, "k.rest", lambda p, acc: step(p, acc), acc)
        scale = e.splat(alpha)
        keep = b.select(first, e.splat(beta), ir.Constant(e.vec, [1.0] * s.lanes))
        # BLAS: with beta = 0, C is not read (NaNs in it do not propagate)
        read = b.or_(b.not_(first), b.fcmp_unordered("!=", beta, ir.Constant(elem, 0.0)))
        full = b.icmp_signed("==", nr, _const(s.width))
        size = ir.Constant(_I32, e.size)
        for r in range(s.rows):
            with b.if_then(b.icmp_signed("<", _const(r), mr)):
                line = e.at(c, b.mul(_const(r), ldc))
                with b.if_else(full) as (whole, part):
                    for branch, masked in ((whole, False), (part, True)):
                        with branch:
                            for v in range(s.vectors):
                                at = e.at(line, v * s.lanes)
                                value = b.fmul(scale, acc[r * s.vectors + v])
                                if masked:
                                    lanes = e.lanes_below(b.sub(nr, _const(v * s.lanes)))
                                    old = b.call(self.masked_load, [at, size, lanes, zero])
                                else:
                                    old = b.load(at, typ=e.vec, align=e.size)
                                value = b.select(read, b.call(self.fma, [keep, old, value]), value)
                                if masked:
                                    b.call(self.masked_store, [value, at, size, lanes])
                                else:
                                    b.store(value, at, align=e.size)
        b.ret_void()
        return fn

    def _pack_b(self) -> ir.Function:
        """`void (ptr b, i64 ldb, i1 trans, i64 p0, i64 kc, i64 j0, i64 nb, ptr out)`:
        rows [p0, p0 + kc) and columns [j0, j0 + nb) of op(B) into slivers of
        NR columns (kc x NR each, row-major), columns past nb zero."""
        s, elem = self.shape, self.elem
        e = self._internal("pack_b", [_PTR, _I64, _I1, _I64, _I64, _I64, _I64, _PTR])
        fn, b = e.fn, e.b
        src, ldb, trans, p0, kc, j0, nb, out = fn.args
        slivers = b.udiv(b.add(nb, _const(s.width - 1)), _const(s.width))
        zero = ir.Constant(e.vec, None)
        size = ir.Constant(_I32, e.size)

        def sliver_of(j: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
            first = b.add(j0, b.mul(j, _const(s.width)))
            return first, b.sub(nb, b.mul(j, _const(s.width))), e.at(out, b.mul(j, b.mul(kc, _const(s.width))))

        def rows_contiguous(j: ir.Value, _: list) -> None:  # op(B)[p, q] = b[p ldb + q]
            first, left, dst = sliver_of(j)

            def row(p: ir.Value, _: list) -> None:
                line = e.at(src, b.add(b.mul(b.add(p0, p), ldb), first))
                to = e.at(dst, b.mul(p, _const(s.width)))
                for v in range(s.vectors):
                    lanes = e.lanes_below(b.sub(left, _const(v * s.lanes)))
                    x = b.call(self.masked_load, [e.at(line, v * s.lanes), size, lanes, zero])
                    b.store(x, e.at(to, v * s.lanes), align=e.size * s.lanes)

            e.loop(_const(0), kc, 1, "pack.row", row)

        def columns_contiguous(j: ir.Value, _: list) -> None:  # op(B)[p, q] = b[q ldb + p]
            first, left, dst = sliver_of(j)
            blocks = b.and_(kc, _const(-s.lanes))

            def column_at(q: ir.Value | int, p: ir.Value) -> tuple[ir.Value, ir.Value]:
                """Whether column q of the sliver exists, and the address of its element p (b[0] if not)."""
                q = _const(q) if isinstance(q, int) else q
                inside = b.icmp_signed("<", q, left)
                index = b.add(b.mul(b.add(first, q), ldb), b.add(p0, p))
                return inside, e.at(src, b.select(inside, index, _const(0)))

            def block(p: ir.Value, _: list) -> None:  # W depth steps of each W columns, transposed
                for v in range(s.vectors):
                    rows = []
                    for q in range(s.lanes):
                        inside, at = column_at(v * s.lanes + q, p)
                        rows.append(b.select(inside, b.load(at, typ=e.vec, align=e.size), zero))
                    for d, column in enumerate(_transpose(b, rows)):
                        b.store(column, e.at(dst, b.add(b.mul(b.add(p, _const(d)), _const(s.width)),
                                                        _const(v * s.lanes))), align=e.size * s.lanes)

            e.loop(_const(0), blocks, s.lanes, "pack.block", block)

            def rest(p: ir.Value, _: list) -> None:
                def element(q: ir.Value, _: list) -> None:
                    inside, at = column_at(q, p)
                    x = b.select(inside, b.load(at, typ=elem), ir.Constant(elem, 0.0))
                    b.store(x, e.at(dst, b.add(b.mul(p, _const(s.width)), q)))

                e.loop(_const(0), _const(s.width), 1, "pack.column", element)

            e.loop(blocks, kc, 1, "pack.rest", rest)

        with b.if_else(trans) as (transposed, plain):
            with plain:
                e.loop(_const(0), slivers, 1, "pack.sliver", rows_contiguous)
            with transposed:
                e.loop(_const(0), slivers, 1, "pack.sliver", columns_contiguous)
        b.ret_void()
        return fn

    def _pack_b_gathered(self) -> ir.Function:
        """`void (ptr b, ptr rows, ptr cols, i64 p0, i64 kc, i64 j0, i64 nb, ptr out)`:
        as `pack_b` for op(B)[p, q] = b[rows[p] + cols[q]]. Each vector of a
        sliver row whose column offsets are consecutive (a run of an image
        row, for a convolution's patches) is one load per depth step; one
        whose offsets make two runs (the vector crosses from one image row to
        the next) two masked loads; else, per W depth steps whose row offsets are consecutive (the patches
        read transposed, as a weight gradient does), each column's W
        elements are one load and the W x W block is transposed in
        registers; the rest are masked gathers."""
        s, elem = self.shape, self.elem
        e = self._internal("pack_b_gathered", [_PTR] * 3 + [_I64] * 4 + [_PTR])
        fn, b = e.fn, e.b
        src, rows, cols, p0, kc, j0, nb, out = fn.args
        slivers = b.udiv(b.add(nb, _const(s.width - 1)), _const(s.width))
        zero = ir.Constant(e.vec, None)
        size = ir.Constant(_I32, e.size)
        index_vec = ir.VectorType(_I64, s.lanes)
        iota = ir.Constant(index_vec, list(range(s.lanes)))
        base = b.ptrtoint(src, _I64)

        def row_offset(p: ir.Value) -> ir.Value:
            return b.load(b.gep(rows, [b.add(p0, p)], inbounds=True, source_etype=_I64), typ=_I64)

        def sliver(j: ir.Value, _: list) -> None:
            first, left = b.add(j0, b.mul(j, _const(s.width))), b.sub(nb, b.mul(j, _const(s.width)))
            dst = e.at(out, b.mul(j, b.mul(kc, _const(s.width))))
            for v in range(s.vectors):
                rest = b.sub(left, _const(v * s.lanes))  # columns of the sliver from this vector on
                full = b.icmp_signed(">=", rest, _const(s.lanes))
                lanes = e.lanes_below(rest)
                at = b.gep(cols, [b.add(first, _const(v * s.lanes))], inbounds=True, source_etype=_I64)
                offsets = b.call(self.masked_load_index, [at, ir.Constant(_I32, 8), lanes, ir.Constant(index_vec, None)])
                start = b.extract_element(offsets, ir.Constant(_I32, 0))
                byte_offsets = b.mul(offsets, e.splat(_const(e.size)))
                # one run: offsets[q] = start + q; two: lanes [0, r) so, lanes [r, W) from a second start
                shifted = b.sub(offsets, iota)
                first_run = b.icmp_signed("==", shifted, e.splat(start))
                run = b.and_(b.call(self.all_of, [first_run]), full)
                bits = b.bitcast(first_run, ir.IntType(s.lanes))
                r = b.zext(b.call(self.count_trailing, [b.not_(bits), ir.Constant(_I1, 0)]), _I64)
                second = b.extract_element(shifted, b.trunc(e.min(r, _const(s.lanes - 1)), _I32))
                in_either = b.or_(first_run, b.icmp_signed("==", shifted, e.splat(second)))
                two_runs = b.and_(b.call(self.all_of, [in_either]), full)
                head = e.lanes_below(r)
                tail = b.not_(head)

                def store(p: ir.Value, x: ir.Value) -> None:
                    b.store(x, e.at(dst, b.add(b.mul(p, _const(s.width)), _const(v * s.lanes))),
                            align=e.size * s.lanes)

                def contiguous(p: ir.Value, _: list) -> None:
                    store(p, b.load(e.at(src, b.add(row_offset(p), start)), typ=e.vec, align=e.size))

                def spliced(p: ir.Value, _: list) -> None:
                    line = row_offset(p)
                    x = b.call(self.masked_load, [e.at(src, b.add(line, start)), size, head, zero])
                    # lane 0 of this address may lie before b (it is masked off): no inbounds
                    at = b.gep(src, [b.add(line, second)], source_etype=elem)
                    y = b.call(self.masked_load, [at, size, tail, zero])
                    store(p, b.select(head, x, y))

                def gathered(p: ir.Value, _: list) -> None:
                    line = b.add(base, b.mul(row_offset(p), _const(e.size)))
                    pointers = b.inttoptr(b.add(e.splat(line), byte_offsets), ir.VectorType(_PTR, s.lanes))
                    store(p, b.call(self.gather, [pointers, size, lanes, zero]))

                def down_columns(p: ir.Value, _: list) -> None:
                    """W depth steps: W columns each read down W consecutive
                    rows (a transposed factor's run), transposed in registers;
                    W gathers where the rows' offsets are not consecutive."""
                    at = b.gep(rows, [b.add(p0, p)], inbounds=True, source_etype=_I64)
                    firsts = b.load(at, typ=index_vec, align=8)
                    top = b.extract_element(firsts, ir.Constant(_I32, 0))
                    consecutive = b.call(self.all_of, [b.icmp_signed("==", firsts, b.add(e.splat(top), iota))])
                    with b.if_else(consecutive) as (by_columns, by_rows):
                        with by_columns:
                            lines = []
                            for q in range(s.lanes):
                                inside = b.icmp_signed("<", _const(v * s.lanes + q), left)
                                column = b.select(inside, b.extract_element(offsets, ir.Constant(_I32, q)), _const(0))
                                lines.append(b.call(self.masked_load, [e.at(src, b.add(top, column)), size,
                                                                       e.splat(inside), zero]))
                            for d, line in enumerate(_transpose(b, lines)):
                                store(b.add(p, _const(d)), line)
                        with by_rows:
                            for d in range(s.lanes):
                                gathered(b.add(p, _const(d)), [])

                with b.if_else(run) as (whole, broken):
                    with whole:
                        e.loop(_const(0), kc, 1, "pack.run", contiguous)
                    with broken:
                        with b.if_else(two_runs) as (pair, scattered):
                            with pair:
                                e.loop(_const(0), kc, 1, "pack.runs", spliced)
                            with scattered:
                                blocks = b.and_(kc, _const(-s.lanes))
                                e.loop(_const(0), blocks, s.lanes, "pack.columns", down_columns)
                                e.loop(blocks, kc, 1, "pack.gather", gathered)

        e.loop(_const(0), slivers, 1, "pack.sliver", sliver)
        b.ret_void()
        return fn

    def _naive(self) -> ir.Function:
        """`void (i64 m, i64 n, i64 k, T alpha, T beta, ptr a, i64 rs_a, i64 cs_a,
        ptr a_rows, ptr a_cols, ptr b, i64 rs_b, i64 cs_b, ptr b_rows, ptr b_cols,
        ptr c, i64 ldc)`: the product one element at a time, allocating
        nothing (the gather entry's fallback when its buffers cannot be
        allocated). Null tables address that operand by its strides."""
        elem = self.elem
        e = self._internal("naive_gemm", [_I64] * 3 + [elem] * 2 + [_PTR, _I64, _I64, _PTR, _PTR] * 2 + [_PTR, _I64])
        fn, b = e.fn, e.b
        m, n, k, alpha, beta, *operands, c, ldc = fn.args
        zero_slot = b.alloca(_I64)
        b.store(_const(0), zero_slot)
        null = ir.Constant(_PTR, None)

        def element(x: ir.Value, rs: ir.Value, cs: ir.Value, rows: ir.Value, cols: ir.Value, r: ir.Value,
                    q: ir.Value) -> ir.Value:
            gathered = b.icmp_unsigned("!=", rows, null)

            def offset(table: ir.Value, at: ir.Value) -> ir.Value:
                safe = b.gep(b.select(gathered, table, zero_slot), [b.select(gathered, at, _const(0))],
                             source_etype=_I64)
                return b.load(safe, typ=_I64)

            index = b.select(gathered, b.add(offset(rows, r), offset(cols, q)), b.add(b.mul(r, rs), b.mul(q, cs)))
            return b.load(e.at(x, index), typ=elem)

        def row(i: ir.Value, _: list) -> None:
            def column(j: ir.Value, _: list) -> None:
                def term(p: ir.Value, acc: list) -> list:
                    x = element(*operands[:5], i, p)
                    y = element(*operands[5:], p, j)
                    return [b.fadd(acc[0], b.fmul(x, y))]

                (total,) = e.loop(_const(0), k, 1, "naive.k", term, [ir.Constant(elem, 0.0)])
                at = e.at(c, b.add(b.mul(i, ldc), j))
                value = b.fmul(alpha, total)
                with b.if_then(b.fcmp_unordered("!=", beta, ir.Constant(elem, 0.0))):  # beta = 0: C is not read
                    b.store(b.fadd(value, b.fmul(beta, b.load(at, typ=elem))), at)
                with b.if_then(b.fcmp_ordered("==", beta, ir.Constant(elem, 0.0))):
                    b.store(value, at)

            e.loop(_const(0), n, 1, "naive.j", column)

        e.loop(_const(0), m, 1, "naive.i", row)
        b.ret_void()
        return fn

    def _entries(self, elem_name: str, args: list[ir.Type]) -> None:
        """The exported kernels: CBLAS's gemm, the same with an epilogue, and
        with offset tables and an epilogue."""
        driver = self._driver(args)
        null = ir.Constant(_PTR, None)
        plain = ir.Function(self.mod, ir.FunctionType(_VOID, args), SYMBOLS[elem_name])
        b = ir.IRBuilder(plain.append_basic_block("entry"))
        b.call(driver, [*plain.args, *[null] * 4, null, null, _const(0), _const(0), _const(0)])
        b.ret_void()
        with_epilogue = ir.Function(self.mod, ir.FunctionType(_VOID, args + epilogue_args()),
                                    EPILOGUE_SYMBOLS[elem_name])
        b = ir.IRBuilder(with_epilogue.append_basic_block("entry"))
        b.call(driver, [*with_epilogue.args[:len(args)], *[null] * 4, *with_epilogue.args[len(args):]])
        b.ret_void()
        gathered = ir.Function(self.mod, ir.FunctionType(_VOID, args + gather_args() + epilogue_args()),
                               GATHER_SYMBOLS[elem_name])
        b = ir.IRBuilder(gathered.append_basic_block("entry"))
        b.call(driver, list(gathered.args))
        b.ret_void()

    def _driver(self, args: list[ir.Type]) -> ir.Function:
        s, elem = self.shape, self.elem
        e = self._internal("gemm", args + gather_args() + epilogue_args())
        fn, b = e.fn, e.b
        order, trans_a, trans_b, m, n, k, alpha, a, lda, src_b, ldb, beta, c, ldc, *rest = fn.args
        a_rows, a_cols, b_rows, b_cols, epilogue_fn, ctx, t, row0, col0 = rest
        epilogue = epilogue_callee(epilogue_fn)
        null = ir.Constant(_PTR, None)
        has_epilogue = b.icmp_unsigned("!=", epilogue_fn, null)
        gathered_a, gathered_b = (b.icmp_unsigned("!=", x, null) for x in (a_rows, b_rows))
        gathered = b.or_(gathered_a, gathered_b)
        cblas_args = list(fn.args[:len(args)])
        transposed_a = b.icmp_signed("==", trans_a, ir.Constant(_I32, _TRANS))
        transposed_b = b.icmp_signed("==", trans_b, ir.Constant(_I32, _TRANS))
        rs = b.select(transposed_a, _const(1), lda)
        cs = b.select(transposed_a, lda, _const(1))

        def by_blas() -> None:  # gathered operands: one element at a time
            with b.if_else(gathered) as (own, blas):
                with own:
                    b.call(self.naive, [m, n, k, alpha, beta, a, rs, cs, a_rows, a_cols, src_b,
                                        b.select(transposed_b, _const(1), ldb), b.select(transposed_b, ldb, _const(1)),
                                        b_rows, b_cols, c, ldc])
                with blas:
                    b.call(self.blas, cblas_args)
            with b.if_then(has_epilogue):
                b.call(epilogue, [ctx, t, row0, b.add(row0, m), col0, b.add(col0, n)])
            b.ret_void()

        for x in (a, src_b, c):
            x.add_attribute("noalias")
        empty = b.or_(b.icmp_signed("<=", m, _const(0)), b.icmp_signed("<=", n, _const(0)))
        with b.if_then(empty):
            b.ret_void()
        k = b.select(b.icmp_signed("<", k, _const(0)), _const(0), k)
        narrow = b.and_(b.icmp_signed("<", n, _const(s.lanes)), b.not_(gathered))
        with b.if_then(narrow):
            by_blas()
        depth_cap = e.min(_const(s.depth), b.add(k, _const(1)))
        column_cap = b.mul(b.udiv(b.add(e.min(_const(s.columns), n), _const(s.width - 1)), _const(s.width)),
                           _const(s.width))
        def allocate(nbytes: ir.Value) -> ir.Value:  # C11 wants a multiple of the alignment
            return b.call(self.alloc, [_const(64), b.and_(b.add(nbytes, _const(63)), _const(-64))])

        packed = allocate(b.mul(b.mul(depth_cap, column_cap), _const(e.size)))
        edge = allocate(b.mul(depth_cap, _const(s.rows * e.size)))
        null = ir.Constant(_PTR, None)
        failed = b.or_(b.icmp_unsigned("==", packed, null), b.icmp_unsigned("==", edge, null))
        with b.if_then(failed):
            b.call(self.free, [packed])
            b.call(self.free, [edge])
            by_blas()
        whole_rows = b.sub(m, b.srem(m, _const(s.rows)))

        def depth_block(p0: ir.Value, _: list) -> None:
            kc = e.min(_const(s.depth), b.sub(k, p0))
            first = b.icmp_signed("==", p0, _const(0))
            finish = b.and_(has_epilogue, b.icmp_signed(">=", b.add(p0, kc), k))  # the tiles are final

            def column_block(j0: ir.Value, _: list) -> None:
                nb = e.min(_const(s.columns), b.sub(n, j0))
                with b.if_else(gathered_b) as (by_tables, strided):
                    with by_tables:
                        b.call(self.pack_b_gathered, [src_b, b_rows, b_cols, p0, kc, j0, nb, packed])
                    with strided:
                        b.call(self.pack_b, [src_b, ldb, transposed_b, p0, kc, j0, nb, packed])
                slivers = b.udiv(b.add(nb, _const(s.width - 1)), _const(s.width))

                def tiles(i0: ir.Value, mr: ir.Value, panel: ir.Value, rs: ir.Value, cs: ir.Value) -> None:
                    def tile(j: ir.Value, _: list) -> None:
                        col = b.add(j0, b.mul(j, _const(s.width)))
                        nr = e.min(_const(s.width), b.sub(n, col))
                        sliver = e.at(packed, b.mul(j, b.mul(kc, _const(s.width))))
                        b.call(self.micro, [kc, panel, rs, cs, sliver, e.at(c, b.add(b.mul(i0, ldc), col)), ldc, mr,
                                            nr, alpha, beta, first])

                    e.loop(_const(0), slivers, 1, "tile", tile)
                    with b.if_then(finish):  # the MR x NB panel just stored, from L1 and L2
                        i, j = b.add(row0, i0), b.add(col0, j0)
                        b.call(epilogue, [ctx, t, i, b.add(i, mr), j, b.add(j, nb)])

                def gathered_panel(i0: ir.Value, mr: ir.Value) -> None:
                    """Rows [i0, i0 + mr) of a gathered A into the MR-row panel, zero-padded."""
                    last = b.sub(mr, _const(1))
                    offsets = [b.load(b.gep(a_rows, [b.add(i0, e.min(_const(r), last))], inbounds=True,
                                            source_etype=_I64), typ=_I64) for r in range(s.rows)]

                    def copy(p: ir.Value, _: list) -> None:
                        column = b.load(b.gep(a_cols, [b.add(p0, p)], inbounds=True, source_etype=_I64), typ=_I64)
                        for r, offset in enumerate(offsets):
                            x = b.load(e.at(a, b.add(offset, column)), typ=elem)
                            if r:
                                x = b.select(b.icmp_signed("<", _const(r), mr), x, ir.Constant(elem, 0.0))
                            b.store(x, e.at(edge, b.add(b.mul(p, _const(s.rows)), _const(r))))

                    e.loop(_const(0), kc, 1, "gather.depth", copy)
                    tiles(i0, mr, edge, _const(1), _const(s.rows))

                def rows_in_place(i0: ir.Value, _: list) -> None:
                    with b.if_else(gathered_a) as (by_tables, strided):
                        with by_tables:
                            gathered_panel(i0, _const(s.rows))
                        with strided:
                            tiles(i0, _const(s.rows), e.at(a, b.add(b.mul(i0, rs), b.mul(p0, cs))), rs, cs)

                e.loop(_const(0), whole_rows, s.rows, "rows", rows_in_place)
                last_rows = b.icmp_signed("<", whole_rows, m)
                with b.if_then(b.and_(last_rows, gathered_a)):
                    gathered_panel(whole_rows, b.sub(m, whole_rows))
                with b.if_then(b.and_(last_rows, b.not_(gathered_a))):  # the last rows, zero-padded to MR
                    mr = b.sub(m, whole_rows)

                    def copy(p: ir.Value, _: list) -> None:
                        def element(r: ir.Value, _: list) -> None:
                            inside = b.icmp_signed("<", r, mr)
                            index = b.add(b.mul(b.add(whole_rows, r), rs), b.mul(b.add(p0, p), cs))
                            x = b.load(e.at(a, b.select(inside, index, _const(0))), typ=elem)
                            b.store(b.select(inside, x, ir.Constant(elem, 0.0)),
                                    e.at(edge, b.add(b.mul(p, _const(s.rows)), r)))

                        e.loop(_const(0), _const(s.rows), 1, "edge.row", element)

                    e.loop(_const(0), kc, 1, "edge.depth", copy)
                    tiles(whole_rows, mr, edge, _const(1), _const(s.rows))

            e.loop(_const(0), n, s.columns, "columns", column_block)

        # at least one depth block, so that k = 0 still scales C by beta
        e.loop(_const(0), b.select(b.icmp_signed("==", k, _const(0)), _const(1), k), s.depth, "depth", depth_block)
        b.call(self.free, [packed])
        b.call(self.free, [edge])
        b.ret_void()
        return fn


class _Callee:
    """A function pointer with its type, for IRBuilder.call (opaque pointers carry none)."""

    def __init__(self, pointer: ir.Value, function_type: ir.FunctionType):
        self.pointer, self.function_type, self.type = pointer, function_type, pointer.type

    def get_reference(self) -> str:
        return self.pointer.get_reference()


def epilogue_callee(pointer: ir.Value) -> _Callee:
    """The epilogue at `pointer` (`EPILOGUE_TYPE`), as IRBuilder.call's callee."""
    return _Callee(pointer, EPILOGUE_TYPE)


def kernel_module(elem: str, bits: int) -> ir.Module:
    """The LLVM IR module defining `symbol(elem)` for `bits`-wide vectors."""
    module = ir.Module(name=f"dfc_gemm_{elem}")
    _Kernel(module, elem, blocking(elem, bits))
    return module


class Compiled:
    """The kernel for one element type and vector width, loaded into the
    process; its machine code lives as long as this object."""

    def __init__(self, elem: str, bits: int):
        load_runtime_libraries()
        blas_runtime.load()  # the fallback for narrow products
        tm = host_target_machine(3)
        text = str(kernel_module(elem, bits))
        key = object_cache.cache_key(text, ("gemm-kernel",), tm) if object_cache.cache_dir() is not None else ""
        entry = object_cache.load(key)
        if entry is None:
            mod = llvm.parse_assembly(text)
            mod.triple = tm.triple
            mod.data_layout = str(tm.target_data)
            mod.verify()
            # no IR optimisation: the IR is vectorised and unrolled as written, and
            # O3 took 0.13 of the 0.19 s for no measurable speed (1024^3, 256x512x784)
            entry = object_cache.CachedObject((tm.emit_object(mod),), ("",), True)
            object_cache.store(key, entry)
        empty = llvm.parse_assembly("")
        empty.triple = tm.triple
        self._engine = llvm.create_mcjit_compiler(empty, tm)
        self._engine.add_object_file(llvm.ObjectFileRef.from_data(entry.objs[0]))
        self._engine.finalize_object()
        self.address: int = self._engine.get_function_address(SYMBOLS[elem])
        """The address of `symbol(elem)`."""
        self.epilogue_address: int = self._engine.get_function_address(EPILOGUE_SYMBOLS[elem])
        """The address of `symbol(elem, epilogue=True)`."""
        self.gather_address: int = self._engine.get_function_address(GATHER_SYMBOLS[elem])
        """The address of `symbol(elem, gather=True)`."""


@functools.cache
def compiled(elem: str, bits: int) -> Compiled:
    """The kernel for `elem` at `bits`-wide vectors (compiled once per process)."""
    return Compiled(elem, bits)


@functools.cache
def install(elem: str) -> Compiled:
    """The host's kernel for `elem`, exported to JIT code as `symbol(elem)`,
    `symbol(elem, epilogue=True)` and `symbol(elem, gather=True)`."""
    kernel = compiled(elem, vector_bits())
    llvm.add_symbol(SYMBOLS[elem], kernel.address)
    llvm.add_symbol(EPILOGUE_SYMBOLS[elem], kernel.epilogue_address)
    llvm.add_symbol(GATHER_SYMBOLS[elem], kernel.gather_address)
    return kernel


def load_if_called(llvm_ir: str) -> None:
    """Install the kernels the module `llvm_ir` calls."""
    for elem, name in SYMBOLS.items():
        if name in llvm_ir:
            install(elem)
