"""`fuse-gemm-gather`: a `blas.gemm` factor that a copy map fills reads its source through offset tables instead.

Runs on buffers, after `contraction-to-blas`. A convolution's im2col product
reads a patch matrix that a map fills by copying the (padded) input, each
element many times over: 9 times for a 3x3 kernel, 25 for 5x5. The factor is
written to memory and read back by the GEMM's packing, which then waits on
memory, so such a product runs well below the kernel's rate on factors that
fit in cache (docs/performance-notes.md). Here the factor becomes
*gathered*: the kernel packs each block of it straight from the source,
through two offset tables of one entry per row and per column, so the
patches never reach memory.

A factor X of a `blas.gemm` G (not already gathered) is rewritten when

- X is a `memref.alloc` that only a map P writes, G reads and a dealloc frees;
- P, before G in G's block, is `X[w] = S[r]`: one `df.read` of a buffer S
  (static shape, row-major, the element type of G) and one plain
  `df.write` of that value, with index arithmetic (`arith`) around them and
  neither access marked by `check-bounds`;
- X is a matrix (rank 2), or a batch of matrices (rank 3) whose first index
  is a map variable g, as G reads it (its leading dimension X's last size);
- the variables of X's row index R and column index C are disjoint and,
  with g, all of P's: P writes X exactly once per element (`is_injective`,
  the extents multiplying to X's sizes);
- S's flat address is f(R's variables) + h(C's variables) + s g + c, each
  term of its expansion using variables of one side only (an affine index
  with a mixed-radix row and column, as im2col's is);
- nothing between P and G writes or frees S, and S is not G's output.

When the address is exactly r * row + column + s g with r at least X's
column count (P only lays a strided matrix out densely: a convolution's
kernel as a features x taps matrix), G reads S in place with leading
dimension r; when it is row + c * column with c at least X's row count (P
transposes one), in place with leading dimension c and G's transposition of
that factor flipped. Otherwise the tables are two index buffers filled by
maps over R's and C's variables, rows[R] = address(R, 0, 0) and cols[C] =
address(0, C, 0) - address(0, 0, 0), so that rows[R] + cols[C] + s g is P's
address for every element, and G reads S through them (`gather_a` /
`gather_b`, transposition resolved into which table indexes rows). Either
way the batch stride becomes s, and P and X are gone. Every element G reads
is one P read, and P's reads are proven in bounds (`check-bounds` marked
none), so the kernel reads inside S.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IndexType, MemRefType, ModuleOp, NoneAttr
from xdsl.ir import BlockArgument, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from dfc.dialects import df
from dfc.dialects.blas import GemmOp
from dfc.dialects.df_builders import index_const
from dfc.dialects.index_exprs import IndexSymbols, depends_on, is_injective
from dfc.passes.check_bounds import CHECK
from dfc.passes.contraction_to_blas import buffer_root
from dfc.passes.fuse_gemm_epilogue import may_write

if TYPE_CHECKING:
    import sympy


@dataclass
class _Copy:
    """A map filling a factor by copying: its write, its read, the variables
    of the factor's row (`rows`) and column (`cols`) index and its batch
    variable, and the source address's parts."""

    map: df.MapOp
    write: df.WriteOp
    read: df.ReadOp
    rows: list[BlockArgument]
    cols: list[BlockArgument]
    batch: BlockArgument | None
    source_strides: list[int]
    """The row-major element strides of the read's buffer."""
    batch_stride: int
    constant: int
    strides: tuple[int, int] | None
    """(r, c) when the address is exactly r * row + c * column + s g (the
    copy only reshapes or transposes a strided matrix), else None."""


def _strides(t: MemRefType) -> list[int] | None:
    """The row-major element strides of a static, identity-layout buffer."""
    shape = t.get_shape()
    if any(s < 0 for s in shape) or not isinstance(t.layout, NoneAttr):
        return None
    return [math.prod(shape[d + 1 :]) for d in range(len(shape))]


def _copy(x: SSAValue) -> _Copy | None:
    """The map that fills factor `x` as the module docstring says, or None."""
    if not isinstance(x.owner, memref.AllocOp) or not isinstance(x.type, MemRefType):
        return None
    maps = [u.operation for u in x.uses if isinstance(u.operation, df.MapOp)]
    if len(maps) != 1 or list(maps[0].outs) != [x]:
        return None
    (p,) = maps
    ops = list(p.body.block.ops)
    writes = [op for op in ops if isinstance(op, df.WriteOp)]
    reads = [op for op in ops if isinstance(op, df.ReadOp)]
    if len(writes) != 1 or len(reads) != 1 or any(not op.name.startswith("arith.") for op in ops
                                                  if op not in (writes[0], reads[0])):
        return None
    (w,), (r,) = writes, reads
    if w.wcr is not None or w.value is not r.res or CHECK in w.attributes or CHECK in r.attributes:
        return None
    if any(u.operation is not w or u.index != 0 for u in r.res.uses):  # an index computed from the value
        return None
    src = r.source
    strides = _strides(src.type) if isinstance(src.type, MemRefType) else None
    if strides is None or src.type.element_type != x.type.element_type:
        return None
    if isinstance(src, BlockArgument) and src.owner is p.body.block:
        return None
    shape, extents, ivs = x.type.get_shape(), p.static_extents, list(p.ivs)
    if len(shape) not in (2, 3) or None in extents:
        return None
    batch = None
    if len(shape) == 3:
        batch = w.indices[0]
        if batch not in ivs or extents[ivs.index(batch)] != shape[0]:
            return None
    rows, cols = (sorted(depends_on(i, ivs), key=ivs.index) for i in w.indices[-2:])
    if set(rows) & set(cols) or len(rows) + len(cols) + (batch is not None) != len(ivs) or batch in rows + cols:
        return None
    if [math.prod(extents[ivs.index(v)] for v in side) for side in (rows, cols)] != list(shape[-2:]):
        return None
    if not is_injective(list(w.indices), ivs, extents):
        return None
    return _separated(p, w, r, rows, cols, batch, strides)


def _separated(p: df.MapOp, w: df.WriteOp, r: df.ReadOp, rows: list[BlockArgument], cols: list[BlockArgument],
               batch: BlockArgument | None, strides: list[int]) -> _Copy | None:
    """`_Copy` when the read's flat address splits into row, column and batch terms."""
    import sympy  # on first use: its import is slow

    symbols = IndexSymbols()
    address = sympy.expand(sum(symbols.to_sympy(i) * s for i, s in zip(r.indices, strides)))
    sides = [{symbols.symbol(v) for v in side} for side in (rows, cols)]
    g = symbols.symbol(batch) if batch is not None else None
    batch_stride = 0
    for term in sympy.Add.make_args(address):
        used = term.free_symbols
        if any(used <= side for side in sides):
            continue
        if g is None or used != {g} or not term.is_polynomial(g) or sympy.degree(term, g) != 1:
            return None
        coefficient = term.coeff(g)
        if not coefficient.is_Integer:
            return None
        batch_stride += int(coefficient)
    constant = address.subs({s: 0 for s in address.free_symbols})
    if not constant.is_Integer:
        return None
    parts = [sympy.Add(*[t for t in sympy.Add.make_args(address) if t.free_symbols and t.free_symbols <= side])
             for side in sides]
    steps = [_multiple(part, symbols.to_sympy(i)) for part, i in zip(parts, w.indices[-2:])]
    return _Copy(p, w, r, rows, cols, batch, strides, batch_stride, int(constant),
                 (steps[0], steps[1]) if None not in steps and constant == 0 else None)


def _multiple(part: sympy.Expr, index: sympy.Expr) -> int | None:
    """The positive integer k with part == k * index, or None.

    Polynomials (the affine indices of a copy) are proportional exactly when
    their coefficients are, which is read off their expansions; anything else
    (floor, mod) is left to `sympy.simplify`, ten times slower."""
    import sympy  # on first use: its import is slow

    if index == 0:
        return None
    variables = part.free_symbols | index.free_symbols
    if part.is_polynomial(*variables) and index.is_polynomial(*variables):
        k = _ratio(sympy.expand(part).as_coefficients_dict(), sympy.expand(index).as_coefficients_dict())
    else:
        k = sympy.simplify(part / index)
    return int(k) if k is not None and k.is_Integer and k > 0 and sympy.expand(part - k * index) == 0 else None


def _ratio(part: dict[sympy.Expr, sympy.Expr], index: dict[sympy.Expr, sympy.Expr]) -> sympy.Expr | None:
    """The constant k with part == k * index, two polynomials given by their
    coefficients per monomial, or None when there is none."""
    part = {m: c for m, c in part.items() if c != 0}
    index = {m: c for m, c in index.items() if c != 0}
    if not index or part.keys() != index.keys():
        return None
    ratios = {part[m] / index[m] for m in index}
    return ratios.pop() if len(ratios) == 1 else None


def _table(b: Builder, copy: _Copy, side: list[BlockArgument], index: SSAValue, subtract: int) -> SSAValue:
    """A buffer of the source address at each value of `index` (the factor's
    row or column index), the other variables 0, less `subtract`."""
    extents = [copy.map.static_extents[list(copy.map.ivs).index(v)] for v in side]
    table = b.insert(memref.AllocOp([], [], MemRefType(IndexType(), [math.prod(extents)]))).memref
    fill = b.insert(df.MapOp(extents, [table]))
    inner = Builder(InsertPoint.at_end(fill.body.block))
    zero = index_const(inner, 0)
    mapping: dict[SSAValue, SSAValue] = {v: zero for v in copy.map.ivs}
    mapping.update(zip(side, fill.ivs))
    needed: set[SSAValue] = {index, *copy.read.indices}
    ops = list(copy.map.body.block.ops)
    for op in reversed(ops):
        if any(res in needed for res in op.results):
            needed |= set(op.operands)
    for op in ops:  # the index arithmetic (`_copy` admits nothing else besides the read and the write)
        if any(res in needed for res in op.results):
            inner.insert(op.clone(value_mapper=mapping))
    address = index_const(inner, -subtract)
    for i, s in zip(copy.read.indices, copy.source_strides):
        term = inner.insert(arith.MuliOp(mapping.get(i, i), index_const(inner, s))).result
        address = inner.insert(arith.AddiOp(address, term)).result
    inner.insert(df.WriteOp(address, fill.out_args[0], [mapping.get(index, index)]))
    return table


def _static(value: SSAValue) -> int | None:
    """The value of index arithmetic on constants, or None."""
    expr = IndexSymbols().to_sympy(value)
    return int(expr) if expr.is_Integer else None


def _readers(x: SSAValue, copy: _Copy) -> list[tuple[GemmOp, list[str]]] | None:
    """The gemms reading factor `x` (with the sides it is), when every use of
    `x` but the copy and deallocs is one and each can gather it; else None."""
    found: dict[GemmOp, list[str]] = {}
    for use in x.uses:
        op = use.operation
        if op is copy.map or isinstance(op, memref.DeallocOp):
            continue
        if not isinstance(op, GemmOp) or use.index > 1:
            return None
        found.setdefault(op, []).append("ab"[use.index])
    shape = x.type.get_shape()
    root = buffer_root(copy.read.source)
    for g, sides in found.items():
        if g.parent is not copy.map.parent or not copy.map.is_before_in_block(g) or buffer_root(g.c) is root:
            return None
        for side in sides:
            ld, stride = _static(getattr(g, f"ld{side}")), _static(getattr(g, f"stride_{side}"))
            if ld != shape[-1] or stride != (shape[-2] * shape[-1] if len(shape) == 3 else 0):
                return None
        op = copy.map.next_op
        while op is not g:
            if may_write(op, {root}):
                return None
            op = op.next_op
    return list(found.items()) or None


def _reread(g: GemmOp, sides: list[str], src: SSAValue, batch_stride: SSAValue | None, *,
            tables: dict[bool, tuple[SSAValue, SSAValue]] | None = None, leading: SSAValue | None = None,
            flip: bool = False) -> None:
    """Replace `g` by the gemm that reads its factors `sides` from `src`:
    through `tables` (by whether that factor is transposed), else in place
    with leading dimension `leading`, transposed once more if `flip`."""
    operands = list(g.operands[:13])
    gathers = {s: g.gather(s) for s in "ab"}
    flags = {s: getattr(g, f"transpose_{s}") is not None for s in "ab"}
    for side in sides:
        k = "ab".index(side)
        operands[k] = src
        if batch_stride is not None:
            operands[10 + k] = batch_stride
        if tables is not None:
            gathers[side] = tables[flags[side]]
            flags[side] = False
        else:
            assert leading is not None
            operands[7 + k] = leading
            flags[side] ^= flip
    epilogue = g.epilogue.detach_block(0) if g.epilogue is not None else None
    new = GemmOp(*operands[:3], tuple(operands[3:7]), tuple(operands[7:10]), tuple(operands[10:13]),
                 beta=g.beta.value.data, epilogue=epilogue, gather_a=gathers["a"], gather_b=gathers["b"],
                 transpose_a=flags["a"], transpose_b=flags["b"])
    Builder(InsertPoint.before(g)).insert(new)
    g.detach()
    g.erase()


def _gather(x: SSAValue) -> None:
    """Every gemm reading factor `x` reads its source instead, when `x` is a
    copy's (see the module docstring): in place when the copy only reshapes
    or transposes a strided matrix, else through offset tables."""
    copy = _copy(x)
    readers = _readers(x, copy) if copy is not None else None
    if copy is None or readers is None:
        return
    b = Builder(InsertPoint.before(copy.map))
    stride = index_const(b, copy.batch_stride) if copy.batch is not None else None
    rows, cols = x.type.get_shape()[-2:]
    tables: tuple[SSAValue, ...] = ()
    if copy.strides is not None and copy.strides[1] == 1 and copy.strides[0] >= cols:  # row-major, ld = r
        for g, sides in readers:
            _reread(g, sides, copy.read.source, stride, leading=index_const(b, copy.strides[0]))
    elif copy.strides is not None and copy.strides[0] == 1 and copy.strides[1] >= rows:  # transposed, ld = c
        for g, sides in readers:
            _reread(g, sides, copy.read.source, stride, leading=index_const(b, copy.strides[1]), flip=True)
    else:
        row_index, col_index = copy.write.indices[-2:]
        major = _table(b, copy, copy.rows, row_index, 0)
        minor = _table(b, copy, copy.cols, col_index, copy.constant)
        tables = (major, minor)
        for g, sides in readers:  # a transposed factor's rows are the buffer's columns
            _reread(g, sides, copy.read.source, stride, tables={False: (major, minor), True: (minor, major)})
    for use in list(x.uses):
        if isinstance(use.operation, memref.DeallocOp):
            after = Builder(InsertPoint.before(use.operation))
            for t in tables:
                after.insert(memref.DeallocOp.get(t))
            use.operation.detach()
            use.operation.erase()
    copy.map.detach()
    copy.map.erase()
    x.owner.detach()
    x.owner.erase()


@dataclass(frozen=True)
class FuseGemmGatherPass(ModulePass):
    """Gather `blas.gemm` factors that copy maps fill straight from their sources (see the module docstring)."""

    name = "fuse-gemm-gather"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        factors = [v for g in op.walk() if isinstance(g, GemmOp) for v in (g.a, g.b)]
        for x in dict.fromkeys(factors):
            _gather(x)
