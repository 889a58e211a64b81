"""`contraction-to-blas`: contraction maps become calls into an optimised BLAS.

Runs on buffers (after bufferize). A top-level map M in buffer form is a
contraction when its body is exactly

    %x = df.read %A[...]          %y = df.read %B[...]
    %p = x * y                    (a tasklet whose body is one mulf, or an arith.mulf)
    df.write %p, %out[...] wcr(add)

with every index a map variable, no variable twice in one access, and the
variables in these roles (an access "has" a variable when it indexes with it):

- k: in both reads, not in the output: exactly one, the reduced dimension;
- row: in the output and in one read (that read is the product's left factor);
- col: in the output's other index and in the other read (none for a
  matrix-vector product: the output then has one index, the row);
- batch: with a rank-3 output, its first index; it must be the first index of
  each read that has it (a read without it is shared by every batch entry).

Each access then addresses a row-major matrix whose leading dimension is the
size of its buffer's last dimension, so M is `blas.gemm` with sizes taken from
M's bounds, `beta = 1` (M accumulates into the output's contents). When an
earlier op is a map that only fills exactly the region M writes with 0.0,
and nothing between them touches the output, the fill is dropped and
`beta = 0`.

A map with several writes (sibling fusion puts the two products of a
gradient, dA = dC @ B^T and dB = A^T @ dC, into one map over the same space;
the gradient of x^T x adds two products into dx) is first split into one map
per write, in body order, when its body is independent contractions, none
reading an output, and each of them then matches.

The rewrite is sound because the call reads and writes exactly the elements
M does (M has no access `check-bounds` marked: all are proven in bounds), and
the buffers cannot overlap: the output's buffer (through views)
is an allocation that neither read's buffer comes from. Nothing happens with
`contraction-to-blas{blas=false}` (the engine's pipeline says so when no BLAS
is installed, `compiler.codegen.blas_runtime.available`), unless the target
is the GPU (`contraction-to-blas{target=gpu}`, where
`lower-dataflow{target=gpu}` launches a tiled kernel for each op,
`passes.gpu_gemm`).

The backend calls dfc's own packed, register-blocked kernel for `blas.gemm`
where the CPU has 512-bit vectors, else OpenBLAS (`DFC_GEMM`,
`compiler.codegen.gemm_kernel`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IndexType, IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from dfc.dialects import df
from dfc.dialects.blas import GemmOp
from dfc.dialects.diagnostics import CompileError
from dfc.passes.check_bounds import CHECK

_VIEWS = (memref.CollapseShapeOp, memref.ExpandShapeOp, memref.CastOp, memref.ReinterpretCastOp, memref.SubviewOp)


def buffer_root(v: SSAValue) -> SSAValue:
    """The buffer `v` is a view of."""
    while isinstance(v.owner, _VIEWS):
        v = v.owner.operands[0]
    return v


def _product(m: df.MapOp) -> tuple[df.ReadOp, df.ReadOp, df.WriteOp] | None:
    """The two reads and the write of a contraction body, or None."""
    parts = df.product_parts(m)
    if parts is None or any(CHECK in a.attributes for a in parts):  # the call would not check what `check-bounds` asks for
        return None
    return parts


def _vars(m: df.MapOp, indices) -> list[int] | None:
    """The map-variable positions an access indexes with, or None."""
    ivs = list(m.ivs)
    pos = [ivs.index(i) if isinstance(i, BlockArgument) and i in ivs else -1 for i in indices]
    return pos if -1 not in pos and len(set(pos)) == len(pos) else None


@dataclass
class _Operand:
    """A factor as a (batch of) row-major matrices: its buffer, whether it is
    stored transposed, and whether it has the batch variable."""

    buffer: SSAValue
    transposed: bool
    batched: bool
    vector: bool  # one non-batch index: a row (left factor) or column (right factor)


def _operand(
    buffer: SSAValue, pos: list[int], free: int | None, k: int, batch: int | None, *, left: bool
) -> _Operand | None:
    """`buffer` indexed by `pos` as the left (rows `free`) or right (columns
    `free`) factor reduced over `k`."""
    batched = batch is not None and batch in pos
    if batched and pos[0] != batch:
        return None
    rest = pos[1:] if batched else pos
    if rest == [k] and free is None:
        return _Operand(buffer, False, batched, True)
    if free is not None and sorted(rest) == sorted([free, k]) and len(rest) == 2:
        return _Operand(buffer, (rest[0] == k) == left, batched, False)
    return None


def _match(m: df.MapOp) -> tuple[GemmPlan, df.WriteOp] | None:
    product = _product(m)
    if product is None:
        return None
    x, y, w = product
    out = m.outs[0]
    elem = out.type.element_type
    if not isinstance(elem, AnyFloat) or elem.bitwidth not in (32, 64):
        return None
    if any(r.source.type.element_type != elem for r in (x, y)):
        return None
    root = buffer_root(out)
    if isinstance(root, BlockArgument) or any(buffer_root(r.source) is root for r in (x, y)):
        return None
    po, px, py = (_vars(m, a.indices) for a in (w, x, y))
    if po is None or px is None or py is None or not 1 <= len(po) <= 3:
        return None
    batch = po[0] if len(po) == 3 else None
    free_o = po[1:] if batch is not None else po
    reduced = (set(px) & set(py)) - set(po)
    if len(reduced) != 1 or set(px) | set(py) | set(po) != set(range(m.rank)):
        return None
    (k,) = reduced
    row = free_o[0]
    col = free_o[1] if len(free_o) == 2 else None
    left, right = ((x, px), (y, py)) if row in px else ((y, py), (x, px))
    if row not in left[1] or row in right[1] or (col is not None and (col not in right[1] or col in left[1])):
        return None
    a = _operand(left[0].source, left[1], row, k, batch, left=True)
    b = _operand(right[0].source, right[1], col, k, batch, left=False)
    if a is None or b is None or a.vector or (col is None) != b.vector:
        return None
    return GemmPlan(m, a, b, batch, row, col, k), w


@dataclass
class GemmPlan:
    """A matched contraction map and the roles of its variables."""

    map: df.MapOp
    a: _Operand
    b: _Operand
    batch: int | None
    row: int
    col: int | None
    k: int


def _slice(block_ops: list[Operation], w: df.WriteOp) -> list[Operation]:
    """The ops of a map body that `w` depends on, `w` included, in body order."""
    needed: set[Operation] = {w}
    for op in reversed(block_ops):
        if op in needed:
            needed |= {v.owner for v in op.operands if isinstance(v.owner, Operation) and v.owner in block_ops}
    return [op for op in block_ops if op in needed]


def _narrowed(t: df.TaskletOp, keep: list[int], b: Builder, mapping: dict[SSAValue, SSAValue]) -> None:
    """A copy of tasklet `t` computing only its results `keep`, inserted by `b`;
    `mapping` takes `t`'s kept results to the copy's."""
    body = list(t.body.block.ops)
    yielded = body[-1].operands
    needed: set[Operation] = {yielded[r].owner for r in keep if isinstance(yielded[r].owner, Operation)}
    for op in reversed(body):
        if op in needed:
            needed |= {v.owner for v in op.operands if isinstance(v.owner, Operation)}
    used = [a for a in t.body.block.args
            if any(a is yielded[r] for r in keep) or any(u.operation in needed for u in a.uses)]
    block = Block(arg_types=[a.type for a in used])
    inner: dict[SSAValue, SSAValue] = dict(zip(used, block.args))
    for op in body[:-1]:
        if op in needed:
            block.add_op(op.clone(value_mapper=inner))
    block.add_op(df.YieldOp(*[inner[yielded[r]] for r in keep]))
    inputs = [mapping.get(t.inputs[a.index], t.inputs[a.index]) for a in used]
    copy = b.insert(df.TaskletOp(inputs, [t.res[r].type for r in keep], block))
    mapping.update({t.res[r]: res for r, res in zip(keep, copy.res)})


def _split(m: df.MapOp) -> list[df.MapOp] | None:
    """`m`, several independent contractions, as one map per write, in body
    order; None (nothing changed) unless each write's part matches `_match`.
    Two writes into one output (the gradient of `x^T x` adds two products into
    dx) become two maps accumulating into it one after the other. The parts
    share no state: each repeats the pure ops (reads, tasklets) it needs."""
    ops = list(m.body.block.ops)
    writes = [op for op in ops if isinstance(op, df.WriteOp)]
    if len(writes) < 2 or {w.dest for w in writes} != set(m.out_args):
        return None
    if any(op.regions and not isinstance(op, df.TaskletOp) for op in ops):
        return None
    if any(v in m.out_args for op in ops for v in op.operands if not (isinstance(op, df.WriteOp) and v is op.dest)):
        return None
    b = Builder(InsertPoint.before(m))
    parts = []
    for w in writes:
        part = _slice(ops, w)
        new = b.insert(df.MapOp(m.bounds, [m.outs[list(m.out_args).index(w.dest)]]))
        mapping: dict[SSAValue, SSAValue] = dict(zip(m.ivs, new.ivs))
        mapping[w.dest] = new.out_args[0]
        inner = Builder(InsertPoint.at_end(new.body.block))
        for op in part:
            if isinstance(op, df.TaskletOp):
                keep = [r for r, res in enumerate(op.res) if any(u.operation in part for u in res.uses)]
                _narrowed(op, keep, inner, mapping)
            else:
                inner.insert(op.clone(value_mapper=mapping))
        for op in reversed(list(new.body.block.ops)):  # what only the narrowed tasklets' other results needed
            if not isinstance(op, df.WriteOp) and all(not r.uses for r in op.results):
                op.detach()
                op.erase()
        parts.append(new)
    if all(_match(p) is not None for p in parts):
        m.detach()
        m.erase()
        return parts
    for p in parts:
        p.detach()
        p.erase()
    return None


class _Emitter:
    """Index arithmetic in front of the map."""

    def __init__(self, m: df.MapOp):
        self.b = Builder(InsertPoint.before(m))
        self.consts: dict[int, SSAValue] = {}

    def const(self, v: int) -> SSAValue:
        if v not in self.consts:
            self.consts[v] = self.b.insert(arith.ConstantOp(IntegerAttr(v, IndexType()))).result
        return self.consts[v]

    def value(self, v: int | SSAValue) -> SSAValue:
        return self.const(v) if isinstance(v, int) else v

    def dim(self, buffer: SSAValue, k: int) -> SSAValue:
        size = buffer.type.get_shape()[k]
        if size >= 0:
            return self.const(size)
        return self.b.insert(memref.DimOp(buffer, self.const(k))).result

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.b.insert(arith.MuliOp(a, b)).result


def _leading(e: _Emitter, buffer: SSAValue, vector_len: SSAValue | None) -> SSAValue:
    """The leading dimension of a matrix access: its buffer's last size, or
    for a one-index access, `vector_len`."""
    if vector_len is not None:
        return vector_len
    return e.dim(buffer, len(buffer.type.get_shape()) - 1)


def _batch_stride(e: _Emitter, op: _Operand) -> SSAValue:
    if not op.batched:
        return e.const(0)
    shape = op.buffer.type.get_shape()
    stride = e.dim(op.buffer, 1)
    for d in range(2, len(shape)):
        stride = e.mul(stride, e.dim(op.buffer, d))
    return stride


def _is_zero_fill(op: Operation, plan: GemmPlan, w: df.WriteOp) -> bool:
    """Whether `op` is a map that only writes 0.0 to exactly the region `w` covers."""
    if not isinstance(op, df.MapOp) or len(op.outs) != 1 or op.outs[0] is not plan.map.outs[0]:
        return False
    ops = list(op.body.block.ops)
    if len(ops) != 1 or not isinstance(ops[0], df.WriteOp) or ops[0].wcr is not None:
        return False
    fill = ops[0]
    if fill.dest is not op.out_args[0] or list(fill.indices) != list(op.ivs):
        return False
    c = fill.value.owner
    if not isinstance(c, arith.ConstantOp) or not isinstance(c.value, FloatAttr) or c.value.value.data != 0.0:
        return False
    region = [plan.map.bounds[plan.map.ivs.index(i)] for i in w.indices]
    return op.bounds == region


def _zero_fill(plan: GemmPlan, w: df.WriteOp) -> df.MapOp | None:
    """The zero fill of the output that the contraction accumulates into:
    an earlier op of the same block, with no op between them touching the
    output's buffer (through any view)."""
    root = buffer_root(plan.map.outs[0])
    op = plan.map.prev_op
    while op is not None:
        if _is_zero_fill(op, plan, w):
            return op  # type: ignore[return-value]
        if any(buffer_root(v) is root for inner in op.walk() for v in inner.operands):
            return None
        op = op.prev_op
    return None


def _rewrite(plan: GemmPlan, w: df.WriteOp) -> None:
    m = plan.map
    fill = _zero_fill(plan, w)
    e = _Emitter(m)
    bounds = [e.value(b) for b in m.bounds]
    one = e.const(1)
    k = bounds[plan.k]
    rows = bounds[plan.row]
    cols = bounds[plan.col] if plan.col is not None else one
    batch = bounds[plan.batch] if plan.batch is not None else one
    lda = _leading(e, plan.a.buffer, None)
    ldb = _leading(e, plan.b.buffer, one if plan.b.vector else None)
    out = m.outs[0]
    ldc = _leading(e, out, one if plan.col is None else None)
    out_op = _Operand(out, False, plan.batch is not None, plan.col is None)
    beta = 1.0
    if fill is not None:
        fill.detach()
        fill.erase()
        beta = 0.0
    e.b.insert(
        GemmOp(
            plan.a.buffer,
            plan.b.buffer,
            out,
            (batch, rows, cols, k),
            (lda, ldb, ldc),
            (_batch_stride(e, plan.a), _batch_stride(e, plan.b), _batch_stride(e, out_op)),
            beta=beta,
            transpose_a=plan.a.transposed,
            transpose_b=plan.b.transposed,
        )
    )
    m.detach()
    m.erase()


def _top_level_maps(module: ModuleOp) -> list[df.MapOp]:
    maps = []
    for op in module.walk():
        if isinstance(op, df.MapOp) and op.is_buffer_form and isinstance(op.outs[0].type, MemRefType):
            parent = op.parent_op()
            while parent is not None and not isinstance(parent, df.MapOp):
                parent = parent.parent_op()
            if parent is None:
                maps.append(op)
    return maps


@dataclass(frozen=True)
class ContractionToBlasPass(ModulePass):
    """Replace contraction maps on buffers by `blas.gemm` calls (see the module docstring).

    Option `target`: "cpu", or "gpu" (the ops become tiled kernels,
    `passes.gpu_gemm`, whether or not a CPU BLAS is installed). Option `blas`:
    whether a CPU BLAS can be called (false: nothing changes on the CPU).
    """

    name = "contraction-to-blas"

    target: str = "cpu"
    blas: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.target not in ("cpu", "gpu"):
            raise CompileError(f"contraction-to-blas: unknown target '{self.target}' (cpu or gpu)")
        if self.target == "cpu" and not self.blas:
            return
        for m in _top_level_maps(op):
            for part in _split(m) or [m]:
                found = _match(part)
                if found is not None:
                    _rewrite(*found)
