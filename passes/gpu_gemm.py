"""`blas.gemm` on the GPU: the tiled kernel `lower-dataflow{target=gpu}` launches for it.

`build_gemm(op, kernel, name)` fills the body of the kernel for one
`blas.gemm` (semantics in `dialects.blas`); `passes.gpu_lowering` outlines
and launches it, one block per tile.

Tiling (the shared-memory structure of a SIMT GEMM): a block of THREADS =
256 threads computes a TILE x TILE = 64 x 64 tile of one batch entry's C.
The depth runs in steps of DEPTH = 16. In each step the block copies the A
tile (64 rows x 16) and the B tile (16 x 64 columns) into shared memory,
each thread 4 elements of each, consecutive threads reading consecutive
addresses of the factor as it is stored (along the depth for A, along the
columns for B, the other way when transposed; a gathered factor as an
untransposed one); a barrier; then each thread accumulates its 4 x 4
elements of C (rows `ty + 16 r`, columns `tx + 16 c`, where `(ty, tx)` is
its place in a 16 x 16 grid) in registers out of the shared tiles, with
`math.fma`; a second barrier before the next step overwrites the tiles.
The tiles are `memref.global`s in memory space 3 (NVVM's shared memory) of
the kernel module, stored depth-major in rows of ROW = 65 elements: the
copy's stores by consecutive threads then fall in different banks, and
the products read one broadcast element of A and consecutive elements of B.

Edges: an element past `m`, `n` or `k` is read as 0 (the load's address
is clamped into the factor, its value dropped); only elements inside C are
stored, `beta = 1` adding C's value. The `epilogue` region runs in the
thread that stores the element, right after the store.

The grid is one-dimensional: ceil(n / 64) * ceil(m / 64) * batch blocks,
the column tile fastest (`grid_size`).
"""

from __future__ import annotations

from math import prod
from typing import Protocol

from xdsl.builder import Builder
from xdsl.dialects import arith, gpu, math, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    NoneAttr,
    StringAttr,
    UnitAttr,
    i64,
)
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from dfc.dialects.blas import GemmOp

TILE = 64
"""Rows and columns of C per block."""
DEPTH = 16
"""Depth of one step (the shared tiles' depth)."""
PER_THREAD = 4
"""Rows and columns of C per thread."""
THREADS = (TILE // PER_THREAD) ** 2
ROW = TILE + 1
"""Elements per depth row of a shared tile (one of padding against bank conflicts)."""
SHARED = IntegerAttr(3, i64)
"""The memory space of the shared tiles (NVVM's `addrspace(3)`)."""

_X = gpu.DimensionAttr(gpu.DimensionEnum.X)
_SIDE = TILE // PER_THREAD  # threads along each side of the block's grid


class KernelArgs(Protocol):
    """What `build_gemm` needs of the kernel being built (`gpu_lowering._Kernel`)."""

    entry: Builder
    tid: SSAValue

    def v(self, value: SSAValue) -> SSAValue:
        """The kernel's value for the host value `value`."""
        ...


class _Index:
    """Index arithmetic at a builder."""

    def __init__(self, b: Builder):
        self.b = b

    def c(self, value: int) -> SSAValue:
        return self.b.insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).result

    def add(self, x: SSAValue, y: SSAValue | int) -> SSAValue:
        return self.b.insert(arith.AddiOp(x, self._v(y))).result

    def mul(self, x: SSAValue, y: SSAValue | int) -> SSAValue:
        return self.b.insert(arith.MuliOp(x, self._v(y))).result

    def div(self, x: SSAValue, y: SSAValue | int) -> SSAValue:
        return self.b.insert(arith.DivUIOp(x, self._v(y))).result

    def rem(self, x: SSAValue, y: SSAValue | int) -> SSAValue:
        return self.b.insert(arith.RemUIOp(x, self._v(y))).result

    def min(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.b.insert(arith.MinUIOp(x, y)).result

    def lt(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.b.insert(arith.CmpiOp(x, y, "ult")).result

    def both(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.b.insert(arith.AndIOp(x, y)).result

    def load(self, mem: SSAValue, *indices: SSAValue) -> SSAValue:
        return self.b.insert(memref.LoadOp.get(mem, list(indices))).res

    def _v(self, x: SSAValue | int) -> SSAValue:
        return self.c(x) if isinstance(x, int) else x


def tiles(count: SSAValue, b: Builder) -> SSAValue:
    """ceil(count / TILE)."""
    ix = _Index(b)
    return ix.div(ix.add(count, TILE - 1), TILE)


def grid_size(op: GemmOp, b: Builder) -> SSAValue:
    """The number of blocks of `op`'s kernel, computed at `b` (host code)."""
    ix = _Index(b)
    return ix.mul(ix.mul(tiles(op.n, b), tiles(op.m, b)), op.batch)


def shared_tiles(name: str, op: GemmOp) -> list[memref.GlobalOp]:
    """The two shared tiles (A's, B's) of kernel `name`, for the kernel module."""
    t = _shared_type(op)
    return [memref.GlobalOp.get(StringAttr(f"{name}_{side}"), t, UnitAttr(), alignment=IntegerAttr(16, i64))
            for side in "ab"]  # fmt: skip


def _shared_type(op: GemmOp) -> MemRefType:
    elem = op.c.type.element_type  # type: ignore[attr-defined]
    return MemRefType(elem, [DEPTH, ROW], NoneAttr(), SHARED)


def _flat(b: Builder, mem: SSAValue) -> SSAValue:
    """`mem` (identity layout) as one dimension."""
    t = mem.type
    assert isinstance(t, MemRefType)
    shape = t.get_shape()
    if len(shape) == 1:
        return mem
    size = DYNAMIC_INDEX if DYNAMIC_INDEX in shape else prod(shape)
    group = ArrayAttr([ArrayAttr([IntegerAttr(d, i64) for d in range(len(shape))])])
    collapse = memref.CollapseShapeOp(operands=[mem], properties={"reassociation": group},
                                      result_types=[MemRefType(t.element_type, [size])])  # fmt: skip
    return b.insert(collapse).result


def build_gemm(op: GemmOp, kernel: KernelArgs, name: str) -> None:
    """Build `op`'s kernel body at `kernel.entry` (up to, not including, its return)."""
    b = kernel.entry
    ix = _Index(b)
    v = kernel.v
    m, n, depth = v(op.m), v(op.n), v(op.k)
    bid = b.insert(gpu.BlockIdOp(_X)).result
    col_tiles, row_tiles = tiles(n, b), tiles(m, b)
    rest = ix.div(bid, col_tiles)
    t = ix.div(rest, row_tiles)
    row0, col0 = ix.mul(ix.rem(rest, row_tiles), TILE), ix.mul(ix.rem(bid, col_tiles), TILE)
    ty, tx = ix.div(kernel.tid, _SIDE), ix.rem(kernel.tid, _SIDE)
    shared = _shared_type(op)
    a_tile, b_tile = (b.insert(memref.GetGlobalOp(f"{name}_{side}", shared)).memref for side in "ab")
    elem = shared.element_type
    zero = b.insert(arith.ConstantOp(FloatAttr(0.0, elem))).result  # type: ignore[arg-type]
    a, bb, c = (_flat(b, v(x)) for x in (op.a, op.b, op.c))
    starts = [ix.mul(t, v(s)) for s in (op.stride_a, op.stride_b, op.stride_c)]
    last_m, last_n, last_k = (ix.add(x, -1) for x in (m, n, depth))

    def address(side: str, lb: _Index, outer: SSAValue, p: SSAValue) -> SSAValue:
        """The flat offset of factor `side`'s element (outer, p) in its buffer."""
        start = starts["ab".index(side)]
        table = op.gather(side)
        if table is not None:
            rows, cols = (v(x) for x in table)
            row, col = (outer, p) if side == "a" else (p, outer)
            return lb.add(start, lb.add(lb.load(rows, row), lb.load(cols, col)))
        ld = v(op.lda if side == "a" else op.ldb)
        transposed = op.properties.get(f"transpose_{side}") is not None
        outer_major = transposed != (side == "a")  # A(i, p) = a[i*lda + p]; B(p, j) = b[p*ldb + j]
        return lb.add(start, lb.add(lb.mul(outer, ld), p) if outer_major else lb.add(lb.mul(p, ld), outer))

    def along_depth(side: str) -> bool:
        """Whether consecutive depths of factor `side` are adjacent in memory."""
        if op.gather(side) is not None:
            return side == "a"
        return (op.properties.get(f"transpose_{side}") is not None) != (side == "a")

    def stage(lb: _Index, side: str, k0: SSAValue, e: SSAValue) -> None:
        """Thread element `e` of the step at depth k0: factor `side` into its shared tile."""
        fast = DEPTH if along_depth(side) else TILE  # the extent consecutive threads walk
        first, second = lb.div(e, fast), lb.rem(e, fast)
        o_l, p_l = (first, second) if fast == DEPTH else (second, first)
        outer = lb.add(row0 if side == "a" else col0, o_l)
        p = lb.add(k0, p_l)
        bound, last = (m, last_m) if side == "a" else (n, last_n)
        inside = lb.both(lb.lt(outer, bound), lb.lt(p, depth))
        src = a if side == "a" else bb
        value = lb.load(src, address(side, lb, lb.min(outer, last), lb.min(p, last_k)))
        value = lb.b.insert(arith.SelectOp(inside, value, zero)).result
        lb.b.insert(memref.StoreOp.get(value, a_tile if side == "a" else b_tile, [p_l, o_l]))

    body = Block(arg_types=[IndexType()] + [elem] * PER_THREAD**2)  # the depth steps, C's elements carried
    steps = b.insert(scf.ForOp(ix.c(0), depth, ix.c(DEPTH), [zero] * PER_THREAD**2, Region(body)))
    sb = _Index(Builder(InsertPoint.at_end(body)))
    for q in range(TILE * DEPTH // THREADS):
        e = sb.add(kernel.tid, q * THREADS)
        for side in "ab":
            stage(sb, side, body.args[0], e)
    sb.b.insert(gpu.BarrierOp())
    acc = list(body.args[1:])
    for kk in range(DEPTH):  # unrolled: the shared loads at constant offsets
        p = sb.c(kk)
        av = [sb.load(a_tile, p, sb.add(ty, r * _SIDE)) for r in range(PER_THREAD)]
        bv = [sb.load(b_tile, p, sb.add(tx, j * _SIDE)) for j in range(PER_THREAD)]
        acc = [sb.b.insert(math.FmaOp(av[r], bv[j], acc[r * PER_THREAD + j])).result
               for r in range(PER_THREAD) for j in range(PER_THREAD)]  # fmt: skip
    sb.b.insert(gpu.BarrierOp())
    sb.b.insert(scf.YieldOp(*acc))

    for r in range(PER_THREAD):
        i = ix.add(ix.add(ty, r * _SIDE), row0)
        for s in range(PER_THREAD):
            j = ix.add(ix.add(tx, s * _SIDE), col0)
            then = Block()
            b.insert(scf.IfOp(ix.both(ix.lt(i, m), ix.lt(j, n)), [], Region(then)))
            tb = Builder(InsertPoint.at_end(then))
            tix = _Index(tb)
            at = tix.add(starts[2], tix.add(tix.mul(i, v(op.ldc)), j))
            value = steps.results[r * PER_THREAD + s]
            if op.beta.value.data == 1.0:
                value = tb.insert(arith.AddfOp(value, tix.load(c, at))).result
            tb.insert(memref.StoreOp.get(value, c, [at]))
            if op.epilogue is not None:
                _inline_epilogue(tb, op, kernel, (t, i, j))
            tb.insert(scf.YieldOp())


def _inline_epilogue(b: Builder, op: GemmOp, kernel: KernelArgs, point: tuple[SSAValue, ...]) -> None:
    """A copy of `op`'s epilogue at `b`, its arguments `point` = (t, i, j)."""
    assert op.epilogue is not None
    block = op.epilogue.block
    inside = {x for o in block.walk() for x in o.results}
    inside |= {x for o in block.walk() for r in o.regions for blk in r.blocks for x in blk.args}
    mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, point))
    for inner in block.ops:
        for nested in inner.walk():
            for x in nested.operands:
                if x not in inside and x not in mapping:
                    mapping[x] = kernel.v(x)
        clone = b.insert(inner.clone(value_mapper=mapping))
        mapping.update(zip(inner.results, clone.results))
