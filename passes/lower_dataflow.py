"""`lower-dataflow`: buffer-form df maps to scf loops on memrefs.

Reads and writes become `memref.load`/`memref.store`, tasklets are inlined.
A top-level map with at least `parallel-threshold` iterations (counting
those of the maps nested in its body, as `fuse-outer` builds) runs its outer
dimension as an `scf.parallel` over `threads` contiguous chunks (with the
next ones, as one index space, where the outer one is too short to give each
thread `CHUNKS_PER_THREAD` iterations); a wcr write (in its body or in a
nested map) whose index does not tell the chunks apart goes to a per-chunk
private buffer (filled with the reduction's
identity) and the chunks are combined after the parallel loop in a fixed
pairwise tree, so the result equals the serial one up to reassociation. When
such a private output is a float sum or product (`ORDERED_KINDS`), the
number of chunks is a function of the map's static sizes alone
(`_Lowering.fixed_chunks`, also with one thread), so the association of its
terms does not depend on the thread count. A map that reads an
output it would privatise, or reduces one output with two wcr kinds, stays
serial. Where a wcr write's index does not depend on the innermost
loop, that loop accumulates in a register (`scf.for` iter_arg, the loop
marked `REDUCTION` for `pairwise-sums`) and combines once, which is what lets
LLVM vectorise sums, maxima and dot products; a one-dimensional map's chunk
is such a loop too.
Otherwise an innermost loop of static extent whose body compares its
variable with constants (the bounds guards and clamps of `scatter-to-gather`)
is split into three loops at the points where the outcomes change, so the
long middle one runs with every guard constant (LLVM folds them away).

With `target=gpu` each top-level map becomes a kernel launch instead, one
thread per iteration (`passes.gpu_lowering`) or, for a row reduction, one
block per row (`passes.gpu_rows`), and each `blas.gemm` the
launch of a tiled shared-memory kernel (`passes.gpu_gemm`).
"""

from __future__ import annotations

import math as pymath
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    IndexType,
    MemRefType,
    ModuleOp,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from dfc import config
from dfc.dialects import df
from dfc.dialects.diagnostics import CompileError
from dfc.dialects.index_exprs import IndexSymbols, affine_form, depends_on
from dfc.passes.check_bounds import checked
from dfc.passes.gpu_lowering import outline_kernels
from dfc.passes.pairwise_sums import REDUCTION
from dfc.passes.scf_builders import for_loop, index_constant
from dfc.passes.wcr_arith import combine, identity

if TYPE_CHECKING:
    import sympy

CHUNKS_PER_THREAD = 4
"""A parallel map's chunked index space has at least this many iterations per
thread where its static extents allow (`_Lowering.chunking`)."""

ORDERED_KINDS = frozenset({"add", "mul"})
"""wcr kinds whose float result depends on the order the terms are combined in."""

FIXED_CHUNKS = 32
"""The most chunks a map with ordered private outputs runs in, whatever the
thread count; its chunked index space has at least this many iterations where
its static extents allow."""

CHUNK_WORK = 32
"""A map with ordered private outputs gets at most one chunk per this many
iterations per element of its private copies (filling and combining a copy
costs two passes over it)."""


def _ordered(private: dict[SSAValue, str | None]) -> bool:
    """Whether a privatised output is a float sum or product."""
    return any(
        kind in ORDERED_KINDS and isinstance(arg.type, MemRefType) and isinstance(arg.type.element_type, AnyFloat)
        for arg, kind in private.items()
    )


def _work(op: df.MapOp, dynamic: int) -> int:
    """Iterations of `op` and of the maps nested in its body (a dynamic extent counts as `dynamic`)."""
    work = 1
    for e in op.static_extents:
        work *= e if e is not None else dynamic
    nested = sum(_work(m, dynamic) for m in op.body.block.ops if isinstance(m, df.MapOp))
    return work * max(nested, 1)


def _output_of(dest: SSAValue, op: df.MapOp) -> SSAValue | None:
    """The output argument of `op` that `dest` (an output argument of `op` or
    of a map nested in it) writes into, or None."""
    while dest not in op.out_args:
        owner = dest.owner if isinstance(dest, BlockArgument) else None
        inner = owner.parent_op() if owner is not None else None
        if not isinstance(inner, df.MapOp) or dest not in inner.out_args or inner is op:
            return None
        dest = inner.outs[inner.out_args.index(dest)]
    return dest


def _chunkable(op: df.MapOp, private: dict[SSAValue, str | None]) -> bool:
    """Whether `op` may run in chunks, given the outputs it would privatise: none
    of them is read in it (each chunk would see its own partial values) or
    reduced with two wcr kinds (the private copies would need two identities)."""
    return None not in private.values() and not any(
        isinstance(r, df.ReadOp) and _output_of(r.source, op) in private for r in op.walk()
    )


def _chunk_disjoint(writes: Sequence[df.WriteOp], outer: SSAValue) -> bool:
    """Whether one dimension of every write's index is the same `a*outer + c`, a != 0."""
    symbols = IndexSymbols()
    for d in range(len(writes[0].indices)):
        forms = [affine_form(w.indices[d]) for w in writes]
        if None not in forms:
            if all(f == forms[0] for f in forms) and forms[0][0].keys() == {outer}:
                return True
            continue
        import sympy  # only for indices that are not affine

        x = symbols.symbol(outer)
        exprs = {sympy.expand(symbols.to_sympy(w.indices[d])) for w in writes}
        if len(exprs) != 1:
            continue
        (e,) = exprs
        if e.free_symbols == {x} and e.is_polynomial(x) and sympy.degree(e, x) == 1:
            return True
    return False


def _flips(d: sympy.Expr, x: sympy.Symbol) -> set[int] | None:
    """Values of x around which the sign of d (x's only symbol, with Max/Min
    of affine terms) can change; None if d is not of that form."""
    import sympy

    extremes = d.atoms(sympy.Max, sympy.Min)
    if extremes:
        m = next(iter(extremes))
        found: set[int] = set()
        for a in m.args:
            for e in (d.subs(m, a), *(a - other for other in m.args if other is not a)):
                inner = _flips(sympy.expand(e), x)
                if inner is None:
                    return None
                found |= inner
        return found
    if x not in d.free_symbols:
        return set()
    if not d.is_polynomial(x) or sympy.degree(d, x) != 1 or d.coeff(x) not in (1, -1):
        return None
    root = -d.subs(x, 0) / d.coeff(x)
    return {int(root), int(root) + 1} if root.is_Integer else None


def _guard_free_range(block: Block, iv: SSAValue, extent: int) -> tuple[int, int] | None:
    """(lo, hi) such that every index comparison, max and min in `block` that
    depends on `iv` alone has one outcome for lo <= iv < hi, the first and
    last quarter of [0, extent) holding every point where an outcome changes.
    None when there is nothing to split."""
    symbols = IndexSymbols()
    points: set[int] = set()
    for op in block.ops:
        if not isinstance(op, arith.CmpiOp | arith.MaxSIOp | arith.MinSIOp):
            continue
        forms = [affine_form(v) for v in op.operands]
        if None not in forms:
            terms = {v: forms[0][0].get(v, 0) - forms[1][0].get(v, 0) for v in {*forms[0][0], *forms[1][0]}}
            terms = {v: c for v, c in terms.items() if c}
            if terms.keys() != {iv}:
                continue
            if terms[iv] not in (1, -1):
                return None
            root = -(forms[0][1] - forms[1][1]) * terms[iv]
            flips = {root, root + 1}
        else:
            import sympy  # only for indices that are not affine

            x = symbols.symbol(iv)
            d = sympy.expand(symbols.to_sympy(op.operands[0]) - symbols.to_sympy(op.operands[1]))
            if d.free_symbols != {x}:
                continue
            flips = _flips(d, x)
        if flips is None:
            return None
        points |= {t for t in flips if 0 < t < extent}
    lo = max((t for t in points if t <= extent // 4), default=0)
    hi = min((t for t in points if t >= extent - extent // 4), default=extent)
    if (lo, hi) == (0, extent) or any(lo < t < hi for t in points):
        return None
    return lo, hi


@dataclass
class _Target:
    """Where an output block argument's writes go: a buffer and an index prefix."""

    buffer: SSAValue
    prefix: list[SSAValue] = field(default_factory=list)


class _Lowering:
    def __init__(self, threads: int, threshold: int):
        self.threads = threads
        self.threshold = threshold
        self.values: dict[SSAValue, SSAValue] = {}
        self.targets: dict[SSAValue, _Target] = {}
        self.accumulators: dict[df.WriteOp, SSAValue] = {}

    def v(self, value: SSAValue) -> SSAValue:
        return self.values.get(value, value)

    def bound(self, b: Builder, bound: int | SSAValue) -> SSAValue:
        return index_constant(b, bound) if isinstance(bound, int) else self.v(bound)

    # -- top level ---------------------------------------------------------

    def top_map(self, op: df.MapOp) -> None:
        if not op.is_buffer_form and op.outs:
            raise CompileError.at(op, "lower-dataflow: run bufferize first (this df.map has tensor outputs)")
        b = Builder(InsertPoint.before(op))
        for arg, buf in zip(op.out_args, op.outs):
            self.targets[arg] = _Target(buf)
        private, chunked, count = None, 0, 1
        if op.rank >= 1 and _work(op, self.threshold) >= self.threshold:
            private, chunked = self.chunking(op)
        if private is not None and _chunkable(op, private):
            count = self.fixed_chunks(op, private, chunked) if _ordered(private) else self.threads
        if count > 1:
            self.parallel(b, op, private, chunked, count)  # type: ignore[arg-type]
        else:
            self.nest(b, op, list(op.ivs), op.bounds)
        op.detach()
        op.erase(safe_erase=False)

    def chunking(self, op: df.MapOp) -> tuple[dict[SSAValue, str | None] | None, int]:
        """How `op` runs in chunks: the outputs to privatise and the number of
        leading dimensions chunked together. The first alone, unless its static
        extent gives fewer than `CHUNKS_PER_THREAD` per thread (a batch of 1
        runs serially, 3 channels on 2 threads split 2:1): then the following static
        dimensions too, but never the innermost (it stays a plain vectorisable
        loop), and only if that privatises no more outputs. (None, 0): serial."""
        extents = op.static_extents
        first = self.privatized(op, op.ivs[:1])
        parts = FIXED_CHUNKS if _ordered(first) else CHUNKS_PER_THREAD * self.threads
        count, total = 1, extents[0]
        while total is not None and total < parts and count < op.rank - 1 and extents[count] is not None:
            total *= extents[count]
            count += 1
        if count > 1:
            wider = self.privatized(op, op.ivs[:count])
            if len(wider) == len(first):
                return wider, count
        return (None, 0) if extents[0] == 1 else (first, 1)

    def fixed_chunks(self, op: df.MapOp, private: dict[SSAValue, str | None], chunked: int) -> int:
        """The number of chunks of a map with ordered private outputs: from its
        static sizes alone (a dynamic one counts as the parallel threshold), at
        most `FIXED_CHUNKS`, one per `CHUNK_WORK` iterations per private element."""
        extent = pymath.prod(e if e is not None else FIXED_CHUNKS for e in op.static_extents[:chunked])
        elements = sum(
            pymath.prod(d if d >= 0 else self.threshold for d in arg.type.get_shape())  # type: ignore[attr-defined]
            for arg in private
        )
        return max(1, min(FIXED_CHUNKS, extent, _work(op, self.threshold) // (CHUNK_WORK * elements)))

    def parallel(self, b: Builder, op: df.MapOp, private: dict[SSAValue, str], chunked: int, count: int) -> None:
        """`op` in `count` chunks of its first `chunked` dimensions (one index
        space); `private`: what `chunking` chose, checked `_chunkable`."""
        if chunked == 1:
            n = self.bound(b, op.bounds[0])
        else:
            n = index_constant(b, pymath.prod(op.static_extents[:chunked]))
        chunks = index_constant(b, count)
        one = index_constant(b, 1)
        size = b.insert(arith.DivUIOp(b.insert(arith.AddiOp(n, b.insert(arith.SubiOp(chunks, one)).result)).result, chunks)).result
        buffers: dict[SSAValue, SSAValue] = {}
        for arg, kind in private.items():
            t = arg.type
            assert isinstance(t, MemRefType)
            dims = [self.dim(b, self.targets[arg].buffer, k) for k, d in enumerate(t.get_shape()) if d < 0]
            priv_type = MemRefType(t.element_type, [count, *t.get_shape()])
            buffers[arg] = b.insert(memref.AllocOp.get(t.element_type, 64, priv_type.get_shape(), dynamic_sizes=dims)).memref
        body = Block(arg_types=[IndexType()])
        pb = Builder(InsertPoint.at_end(body))
        chunk = body.args[0]
        lo = pb.insert(arith.MuliOp(chunk, size)).result
        hi = pb.insert(arith.MinUIOp(pb.insert(arith.AddiOp(lo, size)).result, n)).result
        shared = dict(self.targets)
        for arg, kind in private.items():
            self.fill(pb, buffers[arg], self.targets[arg].buffer, chunk, kind, arg.type)
            self.targets[arg] = _Target(buffers[arg], [chunk])
        if chunked == op.rank:  # one dimension: the chunk is the innermost loop
            self.innermost(pb, op, op.ivs[0], hi, lo)
        else:
            loop, lb = for_loop(pb, lo, hi)
            flat = loop.body.block.args[0]
            for k in reversed(range(1, chunked)):  # the chunked variables from the flat index, last fastest
                extent = index_constant(lb, op.static_extents[k])
                self.values[op.ivs[k]] = lb.insert(arith.RemUIOp(flat, extent)).result
                flat = lb.insert(arith.DivUIOp(flat, extent)).result
            self.values[op.ivs[0]] = flat
            self.nest(lb, op, list(op.ivs[chunked:]), op.bounds[chunked:])
            lb.insert(scf.YieldOp())
        pb.insert(scf.ReduceOp())
        zero = index_constant(b, 0)
        b.insert(scf.ParallelOp([zero], [chunks], [one], Region(body)))
        self.targets = shared
        for arg, kind in private.items():
            self.combine_chunks(b, buffers[arg], self.targets[arg].buffer, kind, arg.type, count)
            b.insert(memref.DeallocOp.get(buffers[arg]))

    def privatized(self, op: df.MapOp, chunked: Sequence[SSAValue]) -> dict[SSAValue, str | None]:
        """Outputs whose wcr writes two chunks might both update, with their wcr
        kind (None: several kinds).

        An output needs no private copies only when, for each chunked variable
        v, some dimension of it is indexed by every wcr write with the same
        `a*v + c` (a != 0): then iterations with different chunked variables
        update different elements.
        """
        writes: dict[SSAValue, list[df.WriteOp]] = {}
        for w in op.walk():
            if isinstance(w, df.WriteOp) and w.wcr_kind and (dest := _output_of(w.dest, op)) is not None:
                writes.setdefault(dest, []).append(w)
        found: dict[SSAValue, str | None] = {}
        for dest, ws in writes.items():
            if not all(_chunk_disjoint(ws, v) for v in chunked):
                kinds = {w.wcr_kind for w in ws}
                found[dest] = kinds.pop() if len(kinds) == 1 else None
        return found

    def dim(self, b: Builder, buf: SSAValue, k: int) -> SSAValue:
        return b.insert(memref.DimOp(buf, index_constant(b, k))).result

    def element_loops(self, b: Builder, buf: SSAValue, shape: Sequence[int]) -> tuple[Builder, list[SSAValue], list[Builder]]:
        """Loops over every element of `shape` (dims of `buf`); the innermost builder and ivs."""
        ivs: list[SSAValue] = []
        builders = []
        for k, d in enumerate(shape):
            ub = index_constant(b, d) if d >= 0 else self.dim(b, buf, k)
            _, inner = for_loop(b, index_constant(b, 0), ub)
            builders.append(inner)
            ivs.append(inner.insertion_point.block.args[0])
            b = inner
        return b, ivs, builders

    def fill(self, b: Builder, priv: SSAValue, out: SSAValue, chunk: SSAValue, kind: str, t: Attribute) -> None:
        """priv[chunk, ...] = identity, over the shape of `out`."""
        assert isinstance(t, MemRefType)
        inner, ivs, builders = self.element_loops(b, out, t.get_shape())
        inner.insert(memref.StoreOp.get(identity(inner, kind, t.element_type), priv, [chunk, *ivs]))
        for lb in reversed(builders):
            lb.insert(scf.YieldOp())

    def combine_chunks(self, b: Builder, priv: SSAValue, out: SSAValue, kind: str, t: Attribute, count: int) -> None:
        """out[...] = out[...] (kind) the `count` chunks' priv[c, ...], combined
        pairwise in a fixed tree (neighbours first)."""
        assert isinstance(t, MemRefType)
        inner, ivs, builders = self.element_loops(b, out, t.get_shape())
        parts = [inner.insert(memref.LoadOp.get(priv, [index_constant(inner, c), *ivs])).res for c in range(count)]
        while len(parts) > 1:
            pairs = [combine(inner, kind, x, y) for x, y in zip(parts[::2], parts[1::2])]
            parts = pairs + parts[len(pairs) * 2 :]
        old = inner.insert(memref.LoadOp.get(out, ivs)).res
        inner.insert(memref.StoreOp.get(combine(inner, kind, old, parts[0]), out, ivs))
        for lb in reversed(builders):
            lb.insert(scf.YieldOp())

    # -- loop nests --------------------------------------------------------

    def nest(self, b: Builder, op: df.MapOp, ivs: list[BlockArgument], bounds: Sequence[int | SSAValue]) -> None:
        """Loops over `ivs` (a suffix of op's variables) around op's body."""
        if not ivs:
            self.body(b, op.body.block)
            return
        if len(ivs) > 1:
            loop, inner = for_loop(b, index_constant(b, 0), self.bound(b, bounds[0]))
            self.values[ivs[0]] = loop.body.block.args[0]
            self.nest(inner, op, ivs[1:], bounds[1:])
            inner.insert(scf.YieldOp())
            return
        self.innermost(b, op, ivs[0], bounds[0])

    def innermost(self, b: Builder, op: df.MapOp, iv: BlockArgument, bound: int | SSAValue,
                  lower: SSAValue | None = None) -> None:
        """The innermost loop (from `lower`, default 0); wcr writes invariant in
        it accumulate in registers, the loop marked `REDUCTION`. Without those,
        a static loop from 0 whose body compares its variable with constants
        (the bounds guards of gathers) is split where the outcomes change, so
        that the long middle part runs without them."""
        writes = self.register_writes(op, iv)
        split = None
        if not writes and isinstance(bound, int) and lower is None:
            split = _guard_free_range(op.body.block, iv, bound)
        if split is not None:
            assert isinstance(bound, int)
            edges = [0, *split, bound]
            for lo, hi in zip(edges, edges[1:]):
                loop, inner = for_loop(b, index_constant(b, lo), index_constant(b, hi))
                self.values[iv] = loop.body.block.args[0]
                self.body(inner, op.body.block)
                inner.insert(scf.YieldOp())
            return
        indices: dict[df.WriteOp, list[SSAValue]] = {}
        inits = []
        for w in writes:
            indices[w] = [self.hoist(b, i) for i in w.indices]
            assert w.wcr_kind is not None
            inits.append(identity(b, w.wcr_kind, w.value.type))
        loop, inner = for_loop(b, lower or index_constant(b, 0), self.bound(b, bound), inits)
        if writes:
            loop.attributes[REDUCTION] = UnitAttr()
        self.values[iv] = loop.body.block.args[0]
        for w, acc in zip(writes, loop.body.block.args[1:]):
            self.accumulators[w] = acc
        self.body(inner, op.body.block)
        inner.insert(scf.YieldOp(*[self.accumulators.pop(w) for w in writes]))
        for w, total in zip(writes, loop.results):
            target = self.targets[w.dest]
            idx = target.prefix + indices[w]
            old = b.insert(checked(w, memref.LoadOp.get(target.buffer, idx))).res
            assert w.wcr_kind is not None
            b.insert(checked(w, memref.StoreOp.get(combine(b, w.wcr_kind, old, total), target.buffer, idx)))

    def register_writes(self, op: df.MapOp, iv: SSAValue) -> list[df.WriteOp]:
        """wcr writes directly in op's body, invariant in `iv`, sole accesses of their output."""
        chosen = []
        for w in op.body.block.ops:
            if not isinstance(w, df.WriteOp) or w.wcr_kind is None or any(depends_on(i, [iv]) for i in w.indices):
                continue
            accesses = [u for u in w.dest.uses if u.operation is not w]
            if not accesses and all(self.hoistable(i, op) for i in w.indices):
                chosen.append(w)
        return chosen

    def hoistable(self, value: SSAValue, op: df.MapOp) -> bool:
        """Whether `value` is computable before op's innermost loop (pure arith on outer values)."""
        owner = value.owner
        if isinstance(value, BlockArgument) or owner.parent_op() is not op:
            return True
        return isinstance(owner, arith.ConstantOp | arith.AddiOp | arith.SubiOp | arith.MuliOp) and all(
            self.hoistable(o, op) for o in owner.operands
        )

    def hoist(self, b: Builder, value: SSAValue) -> SSAValue:
        if value in self.values or not isinstance(value.owner, Operation):
            return self.v(value)
        if isinstance(value.owner.parent_op(), df.MapOp):
            clone = b.insert(value.owner.clone(value_mapper={o: self.hoist(b, o) for o in value.owner.operands}))
            return clone.results[0]
        return value

    # -- bodies ------------------------------------------------------------

    def body(self, b: Builder, block: Block) -> None:
        for op in block.ops:
            if isinstance(op, df.ReadOp):
                source = self.v(op.source)
                if op.source in self.targets:
                    assert not self.targets[op.source].prefix, "reads_private keeps such maps serial"
                    source = self.targets[op.source].buffer
                self.values[op.res] = b.insert(checked(op, memref.LoadOp.get(source, [self.v(i) for i in op.indices]))).res
            elif isinstance(op, df.WriteOp):
                self.write(b, op)
            elif isinstance(op, df.TaskletOp):
                self.inline(b, op)
            elif isinstance(op, df.MapOp):
                for arg, buf in zip(op.out_args, op.outs):
                    self.targets[arg] = self.targets.get(buf, _Target(self.v(buf)))
                self.nest(b, op, list(op.ivs), op.bounds)
            elif isinstance(op, scf.ForOp | scf.IfOp):
                self.region_op(b, op)
            else:
                clone = b.insert(op.clone(value_mapper=dict(self.values)))
                for r, n in zip(op.results, clone.results):
                    self.values[r] = n

    def region_op(self, b: Builder, op: scf.ForOp | scf.IfOp) -> None:
        """An scf.for or scf.if in a map body (reads and scalar code inside,
        as autodiff's reversed scalar loops): the same op, its regions lowered."""
        regions = []
        for region in op.regions:
            blocks = []
            for block in region.blocks:
                new = Block(arg_types=[a.type for a in block.args])
                for old_arg, new_arg in zip(block.args, new.args):
                    self.values[old_arg] = new_arg
                self.body(Builder(InsertPoint.at_end(new)), block)
                blocks.append(new)
            regions.append(Region(blocks))
        clone = b.insert(
            op.create(
                operands=[self.v(o) for o in op.operands],
                result_types=[r.type for r in op.results],
                properties=dict(op.properties),
                attributes=dict(op.attributes),
                regions=regions,
            )
        )
        for r, n in zip(op.results, clone.results):
            self.values[r] = n

    def write(self, b: Builder, op: df.WriteOp) -> None:
        value = self.v(op.value)
        if op in self.accumulators:
            assert op.wcr_kind is not None
            self.accumulators[op] = combine(b, op.wcr_kind, self.accumulators[op], value)
            return
        target = self.targets[op.dest]
        idx = target.prefix + [self.v(i) for i in op.indices]
        if op.wcr_kind is not None:
            old = b.insert(checked(op, memref.LoadOp.get(target.buffer, idx))).res
            value = combine(b, op.wcr_kind, old, value)
        b.insert(checked(op, memref.StoreOp.get(value, target.buffer, idx)))

    def inline(self, b: Builder, op: df.TaskletOp) -> None:
        mapping: dict[SSAValue, SSAValue] = {a: self.v(x) for a, x in zip(op.body.block.args, op.inputs)}
        for inner in op.body.block.ops:
            if isinstance(inner, df.YieldOp):
                for r, y in zip(op.res, inner.values):
                    self.values[r] = mapping.get(y, y)
                return
            clone = b.insert(inner.clone(value_mapper=mapping))
            for r, n in zip(inner.results, clone.results):
                mapping[r] = n


def lower_point(b: Builder, m: df.MapOp, point: Sequence[SSAValue]) -> None:
    """One iteration of buffer-form map `m`, at `point` (a value per map
    variable), inserted by `b`: reads and writes as memref loads and stores,
    tasklets inlined, as `lower-dataflow` lowers a map's body."""
    lowering = _Lowering(1, 0)
    lowering.values.update(zip(m.ivs, point))
    lowering.targets.update((arg, _Target(buffer)) for arg, buffer in zip(m.out_args, m.outs))
    lowering.body(b, m.body.block)


def _inline_tasklet(op: df.TaskletOp) -> None:
    """Replace a tasklet outside any map (scalar code) by its body's ops."""
    b = Builder(InsertPoint.before(op))
    mapping: dict[SSAValue, SSAValue] = dict(zip(op.body.block.args, op.inputs))
    for inner in op.body.block.ops:
        if isinstance(inner, df.YieldOp):
            for r, y in zip(op.res, inner.values):
                r.replace_all_uses_with(mapping.get(y, y))
            break
        clone = b.insert(inner.clone(value_mapper=mapping))
        mapping.update(zip(inner.results, clone.results))
    op.detach()
    op.erase()


def _hoist_constants(module: ModuleOp) -> None:
    """Each constant in a nest of `scf.for`s, moved before the nest: where
    canonicalize's `RehoistConstInLoops` would take it, one loop per round,
    each round a walk of the whole module, so deep nests cost as many
    rounds as they have levels (docs/performance-notes.md)."""
    for constant in [o for o in module.walk() if isinstance(o, arith.ConstantOp)]:
        top = constant
        while isinstance(top.parent_op(), scf.ForOp):
            top = top.parent_op()
        if top is not constant:
            constant.detach()
            top.parent_block().insert_op_before(constant, top)


@dataclass(frozen=True)
class LowerDataflowPass(ModulePass):
    """Lower buffer-form df maps to scf loops (see module docstring).

    Options: `threads` (0: `DFC_NUM_THREADS` or the CPU count),
    `parallel_threshold` (iterations below which a map stays serial),
    `target` ("cpu", or "gpu": kernels and launches, see `passes.gpu_lowering`).
    """

    name = "lower-dataflow"

    threads: int = 0
    parallel_threshold: int = 32768
    target: str = "cpu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for tasklet in [o for o in op.walk() if isinstance(o, df.TaskletOp) and not df.enclosing_maps(o)]:
            _inline_tasklet(tasklet)
        maps = [o for o in op.walk() if isinstance(o, df.MapOp) and not df.enclosing_maps(o)]
        if self.target == "gpu":
            outline_kernels(op, maps)
        elif self.target == "cpu":
            lowering = _Lowering(self.threads or config.default_threads(), self.parallel_threshold)
            for m in maps:
                lowering.top_map(m)
            _hoist_constants(op)
        else:
            raise CompileError(f"lower-dataflow: unknown target '{self.target}' (cpu or gpu)")
        for o in op.walk():
            if o.dialect_name() == "df":
                raise CompileError.at(o, f"lower-dataflow: '{o.name}' outside a df.map cannot be lowered")
