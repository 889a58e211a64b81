"""`fuse-gemm-epilogue`: the elementwise maps around a `blas.gemm` run inside it, block by block.

Runs on buffers, after `contraction-to-blas`. For a `blas.gemm` G writing
C, at most two maps become G's `epilogue` region:

- F, the bias fill: the nearest op before G that uses C's buffer, when G
  accumulates (beta = 1) and F is a map over exactly G's elements writing
  only C, each element its own, from reads of other buffers (`nn.linear`'s
  broadcast bias). G gets beta = 0 and the epilogue adds F's value to the
  product, so C is written once instead of filled, then read and written;
- M, the consumer: the first op after G that uses C's buffer, when it is a
  map over exactly G's elements whose every access is point-wise: it reads C
  only at the element itself, writes (without wcr) at a permutation of its
  variables, never into A or B or a function argument (which may be A or
  B), into C only at the element itself, and reads
  no other buffer it writes (a relu, a residual add, the gradient's relu
  mask, each elementwise op the product feeds). G moves down to M's place
  (the ops between do not use C's buffer and do not write A's, B's or F's
  inputs) and M's body becomes the rest of the epilogue.

G's element (t, i, j) is C[i], C[i, j] or C[t, i, j] by C's rank (1: a
matrix-vector product, 2, 3: batched), which the pass checks against G's
leading dimension and batch stride (C must have the identity layout);
"exactly G's elements" means the map's bounds equal G's sizes. A map with
nested maps or region ops other than tasklets is left alone.

The epilogue is F's body (its write made an accumulation, `wcr(add)`) and
M's, lowered for the element (t, i, j) as `lower-dataflow` lowers a map's
body (`lower_point`); bounds checks that `check-bounds` marked stay. Running
it on each element once that element of C is final, in any order, equals
running G, F's additions and M in program order: every element's epilogue
touches only that element's data, and nothing G, F or M depend on moves
across a write to it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp, NoneAttr, StringAttr
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from dfc.dialects import df
from dfc.dialects.blas import GemmOp
from dfc.passes.contraction_to_blas import buffer_root
from dfc.passes.lower_dataflow import lower_point

_Size = int | SSAValue


def _constant(v: _Size) -> int | None:
    if isinstance(v, int):
        return v
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    if isinstance(owner, arith.MuliOp):  # a batch stride
        x, y = _constant(owner.lhs), _constant(owner.rhs)
        return x * y if x is not None and y is not None else None
    return None


def _same(x: _Size, y: _Size) -> bool:
    """Whether two sizes are provably equal."""
    return x is y or (_constant(x) is not None and _constant(x) == _constant(y))


def _is_dim(v: SSAValue, buffer: SSAValue, k: int) -> bool:
    """Whether index `v` is the size of dimension `k` of `buffer`."""
    size = buffer.type.get_shape()[k]
    if size >= 0:
        return _constant(v) == size
    owner = v.owner
    return isinstance(owner, memref.DimOp) and owner.source is buffer and _constant(owner.index) == k


def _domain(g: GemmOp) -> list[_Size] | None:
    """The sizes of G's elements as indices of C ([m], [m, n] or [batch, m, n]),
    or None when C's layout is not the one G addresses."""
    c = g.c.type
    assert isinstance(c, MemRefType)
    if not isinstance(c.layout, NoneAttr):
        return None
    batch, m, n = g.batch, g.m, g.n
    shape = c.get_shape()
    if len(shape) == 1 and _same(batch, 1) and _same(n, 1) and _same(g.ldc, 1):
        return [m]
    if len(shape) == 2 and _same(batch, 1) and _is_dim(g.ldc, g.c, 1):
        return [m, n]
    if (len(shape) == 3 and _is_dim(g.ldc, g.c, 2) and min(shape[1:]) >= 0
            and _constant(g.stride_c) == shape[1] * shape[2]):
        return [batch, m, n]
    return None


@dataclass
class _Access:
    buffer: SSAValue
    indices: list[SSAValue]


def _accesses(m: df.MapOp) -> tuple[list[_Access], list[_Access]] | None:
    """The reads and writes of `m`'s body, with out arguments replaced by
    their buffers; None if the body has nested maps, region ops other than
    tasklets, wcr writes or memref operands outside reads and writes."""
    outs = dict(zip(m.out_args, m.outs))
    reads, writes = [], []
    for op in m.body.block.ops:
        if isinstance(op, df.ReadOp):
            reads.append(_Access(outs.get(op.source, op.source), list(op.indices)))
        elif isinstance(op, df.WriteOp):
            if op.wcr is not None:
                return None
            writes.append(_Access(outs.get(op.dest, op.dest), list(op.indices)))
        elif (op.regions and not isinstance(op, df.TaskletOp)) or any(
                isinstance(v.type, MemRefType) for inner in op.walk() for v in inner.operands):
            return None
    return reads, writes


def _accesses_over(op: Operation, domain: list[_Size]) -> tuple[list[_Access], list[_Access]] | None:
    """`_accesses` of `op` when it is a buffer-form map whose bounds are `domain`."""
    if not (isinstance(op, df.MapOp) and op.is_buffer_form and len(op.bounds) == len(domain)
            and all(_same(x, y) for x, y in zip(op.bounds, domain))):
        return None
    return _accesses(op)


def _fill_inputs(f: Operation, g: GemmOp, domain: list[_Size]) -> set[SSAValue] | None:
    """The buffers `f` reads (their roots) when it is a bias fill G can add in
    its epilogue (see the module docstring), else None."""
    found = _accesses_over(f, domain)
    if found is None or g.beta.value.data != 1.0:
        return None
    reads, writes = found
    inputs = {buffer_root(r.buffer) for r in reads}
    own_element = len(writes) == 1 and writes[0].buffer is g.c and writes[0].indices == list(f.ivs)
    return inputs if own_element and buffer_root(g.c) not in inputs else None


def _is_consumer(m: Operation, g: GemmOp, domain: list[_Size]) -> bool:
    """Whether `m` is a map G can run as its epilogue (see the module docstring)."""
    found = _accesses_over(m, domain)
    if found is None:
        return False
    reads, writes = found
    ivs = list(m.ivs)
    c = buffer_root(g.c)
    inputs = {buffer_root(g.a), buffer_root(g.b)}
    written = set()
    for w in writes:
        root = buffer_root(w.buffer)
        if len(w.indices) != len(ivs) or set(w.indices) != set(ivs) or root in inputs:
            return False
        if isinstance(root, BlockArgument):  # an argument may alias A or B
            return False
        if root is c and (w.buffer is not g.c or w.indices != ivs):
            return False
        written.add(root)
    for r in reads:
        root = buffer_root(r.buffer)
        if root is c:
            if r.buffer is not g.c or r.indices != ivs:
                return False
        elif root in written:
            return False
    return True


def may_write(op: Operation, roots: set[SSAValue]) -> bool:
    """Whether `op` may write a buffer with one of `roots` (any use but a read counts)."""
    for inner in op.walk():
        for k, v in enumerate(inner.operands):
            if buffer_root(v) not in roots:
                continue
            if isinstance(inner, df.ReadOp) and v is inner.source:
                continue
            if isinstance(inner, memref.LoadOp | memref.DimOp) and k == 0 or isinstance(inner, GemmOp) and v is not inner.c:
                continue
            return True
    return False


def _between(first: Operation, last: Operation) -> list[Operation]:
    """The ops strictly between `first` and `last` (one block, `first` before `last`)."""
    ops, op = [], first.next_op
    while op is not None and op is not last:
        ops.append(op)
        op = op.next_op
    return ops


class _RootsUsed:
    """The buffer roots each op uses (its nested ops' operands included),
    found once per op for the whole pass: the search for a gemm's neighbours
    passes the same ops for every gemm of a block (ResNet-18's gradient: 34,000
    visits of the ops of one block for its 62 gemms). A fusion erases the ops
    it fuses and changes the ops around them (`changed_inside`)."""

    def __init__(self) -> None:
        self._roots: dict[Operation, frozenset[SSAValue]] = {}

    def changed_inside(self, op: Operation) -> None:
        """Forget the roots of the ops `op` is nested in."""
        while (op := op.parent_op()) is not None:
            self._roots.pop(op, None)

    def __call__(self, op: Operation) -> frozenset[SSAValue]:
        roots = self._roots.get(op)
        if roots is None:
            roots = self._roots[op] = frozenset(buffer_root(v) for inner in op.walk() for v in inner.operands)
        return roots


def _neighbour(g: GemmOp, forward: bool, roots_used: _RootsUsed) -> Operation | None:
    """The nearest op after (or before) G in its block that uses C's buffer."""
    root = buffer_root(g.c)
    op = g.next_op if forward else g.prev_op
    while op is not None and root not in roots_used(op):
        op = op.next_op if forward else op.prev_op
    return op


def _fuse(g: GemmOp, roots_used: _RootsUsed) -> None:
    domain = _domain(g)
    if domain is None or g.epilogue is not None:
        return
    fill = _neighbour(g, forward=False, roots_used=roots_used)
    moved = _fill_inputs(fill, g, domain) if fill is not None else None
    if moved is None or any(may_write(op, moved) for op in _between(fill, g)):
        fill, moved = None, set()
    consumer = _neighbour(g, forward=True, roots_used=roots_used)
    if consumer is not None and not _is_consumer(consumer, g, domain):
        consumer = None
    if consumer is not None:
        kept = {buffer_root(v) for v in (g.a, g.b, *g.tables()) if v is not None} | moved
        if any(may_write(op, kept) for op in _between(g, consumer)):
            consumer = None
    if fill is None and consumer is None:
        return
    block = Block(arg_types=[IndexType()] * 3)
    point = {1: block.args[1:2], 2: block.args[1:], 3: block.args[:]}[len(domain)]
    b = Builder(InsertPoint.at_end(block))
    if fill is not None:
        (write,) = [op for op in fill.body.block.ops if isinstance(op, df.WriteOp)]
        write.properties["wcr"] = StringAttr("add")  # the fill's value added to the product
        lower_point(b, fill, point)
    if consumer is not None:
        lower_point(b, consumer, point)
    ops = g.operands
    fused = GemmOp(g.a, g.b, g.c, tuple(ops[3:7]), tuple(ops[7:10]), tuple(ops[10:13]),
                   beta=0.0 if fill is not None else g.beta.value.data, transpose_a=g.transpose_a is not None,
                   transpose_b=g.transpose_b is not None, epilogue=block,
                   gather_a=g.gather("a"), gather_b=g.gather("b"))
    Builder(InsertPoint.before(consumer if consumer is not None else g)).insert(fused)
    roots_used.changed_inside(fused)
    for op in (fill, g, consumer):
        if op is not None:
            op.detach()
            op.erase()


@dataclass(frozen=True)
class FuseGemmEpiloguePass(ModulePass):
    """Move the bias fill before and the elementwise map after each `blas.gemm` into its epilogue (see the module docstring)."""

    name = "fuse-gemm-epilogue"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        roots_used = _RootsUsed()
        for g in [o for o in op.walk() if isinstance(o, GemmOp)]:
            _fuse(g, roots_used)
