"""`scatter-to-gather`: stencil-shaped `wcr(add)` scatters become gathers.

The adjoint of a stencil (reads `x[i+a, j+b]` at several offsets) is a scatter:
one `wcr(add)` write per read, at the same offsets, into a zero-filled tensor.
Run in parallel such a map needs private copies per thread, and each element
is read, added and stored once per offset. This pass rewrites output k of a
top-level tensor-level map M when

- its initial value is a splat 0.0 constant, and every use of its block
  argument is a `wcr(add)` write directly in M's body (at least two of them),
- each write's index is a translation of M's variables, `[v_0 + c_0, ...]`
  (output rank = map rank, constant offsets, static extents and shape), and
- the written values depend only on reads, tasklets and index arithmetic of
  M's body that do not read M's own outputs,

into a new map G over the output's shape: for each element p and each write
r, the iteration `q = p - c_r` is clamped into M's iteration space, r's value
is recomputed there, and the values of the iterations that exist (a bounds
guard, only in dimensions where one can fall outside) are summed by one
tasklet and written with a plain write. The clamp keeps every recomputed read
at an index M itself reads, so no access leaves its buffer. M loses output k.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from dfc.dialects import df
from dfc.dialects.df_builders import empty
from dfc.dialects.df_canonicalization import splat_value, without_outputs
from dfc.dialects.index_exprs import translation
from dfc.passes.fuse import _slice


def _candidate(m: df.MapOp, k: int) -> list[tuple[df.WriteOp, list[int]]] | None:
    """The writes of output k with their offsets, when the rewrite applies."""
    t = m.res[k].type
    if not isinstance(t, TensorType) or splat_value(m.outs[k]) != 0.0 or None in m.static_extents:
        return None
    if len(t.get_shape()) != m.rank or any(d < 0 for d in t.get_shape()):
        return None
    writes = []
    for use in m.out_args[k].uses:
        w = use.operation
        if not isinstance(w, df.WriteOp) or w.dest is not m.out_args[k] or w.wcr_kind != "add" or w.parent_op() is not m:
            return None
        offsets = translation(list(w.indices), list(m.ivs))
        if offsets is None:
            return None
        writes.append((w, offsets))
    if len(writes) < 2:
        return None
    for w, _ in writes:
        for op in _slice(m, w.value):
            if isinstance(op, df.MapOp | df.WriteOp) or any(v in m.out_args for v in op.operands):
                return None
    return writes


def _index(b: Builder, value: int) -> SSAValue:
    return b.insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).result


@dataclass
class _Gather:
    """Builds G's body: one recomputed value (and guard) per write."""

    m: df.MapOp
    g: df.MapOp
    b: Builder

    def shifted(self, offsets: list[int]) -> tuple[list[SSAValue], SSAValue | None]:
        """The clamped iteration p - c and whether it lies in M's space (None: always)."""
        b = self.b
        ivs: list[SSAValue] = []
        guard: SSAValue | None = None
        shape = self.g.static_extents
        for p, c, extent, size in zip(self.g.ivs, offsets, self.m.static_extents, shape):
            q = b.insert(arith.SubiOp(p, _index(b, c))).result if c else p
            low, high = c > 0, size - 1 - c > extent - 1  # type: ignore[operator]
            if low:
                ok = b.insert(arith.CmpiOp(q, _index(b, 0), "sge")).result
                guard = ok if guard is None else b.insert(arith.AndIOp(guard, ok)).result
                q = b.insert(arith.MaxSIOp(q, _index(b, 0))).result
            if high:
                ok = b.insert(arith.CmpiOp(q, _index(b, extent), "slt")).result  # type: ignore[arg-type]
                guard = ok if guard is None else b.insert(arith.AndIOp(guard, ok)).result
                q = b.insert(arith.MinSIOp(q, _index(b, extent - 1))).result  # type: ignore[operator]
            ivs.append(q)
        return ivs, guard

    def value(self, write: df.WriteOp, offsets: list[int]) -> tuple[SSAValue, SSAValue | None]:
        ivs, guard = self.shifted(offsets)
        mapping: dict[SSAValue, SSAValue] = dict(zip(self.m.ivs, ivs))
        for op in _slice(self.m, write.value):
            clone = self.b.insert(op.clone(value_mapper=mapping))
            mapping.update(zip(op.results, clone.results))
        return mapping.get(write.value, write.value), guard

    def total(self, terms: list[tuple[SSAValue, SSAValue | None]]) -> SSAValue:
        """One tasklet summing the terms, each masked by its guard."""
        inputs = [v for v, _ in terms] + [g for _, g in terms if g is not None]
        body = Block(arg_types=[v.type for v in inputs])
        tb = Builder(InsertPoint.at_end(body))
        t = terms[0][0].type
        zero = tb.insert(arith.ConstantOp(FloatAttr(0.0, t))).result  # type: ignore[arg-type]
        guards = iter(body.args[len(terms) :])
        acc: SSAValue | None = None
        for (_, guard), v in zip(terms, body.args):
            x: SSAValue = v if guard is None else tb.insert(arith.SelectOp(next(guards), v, zero)).result
            acc = x if acc is None else tb.insert(arith.AddfOp(acc, x)).result
        assert acc is not None
        tb.insert(df.YieldOp(acc))
        return self.b.insert(df.TaskletOp(inputs, [t], body)).res[0]


def scatter_to_gather(m: df.MapOp) -> bool:
    """Rewrite the first output of `m` the pass applies to; True if one was."""
    for k in range(len(m.outs)):
        writes = _candidate(m, k)
        if writes is None:
            continue
        t = m.res[k].type
        assert isinstance(t, TensorType)
        b = Builder(InsertPoint.before(m))  # last reader first: M may then update in place
        g = b.insert(df.MapOp(list(t.get_shape()), [empty(b, t)]))
        gb = Builder(InsertPoint.at_end(g.body.block))
        gather = _Gather(m, g, gb)
        total = gather.total([gather.value(w, offsets) for w, offsets in writes])
        gb.insert(df.WriteOp(total, g.out_args[0], list(g.ivs)))
        m.res[k].replace_all_uses_with(g.res[0])
        for w, _ in writes:
            w.detach()
            w.erase()
        if len(m.outs) > 1:
            new = without_outputs(m, {k})
            m.parent_block().insert_op_before(new, m)  # type: ignore[union-attr]
            for old, result in zip([r for j, r in enumerate(m.res) if j != k], new.res):
                old.replace_all_uses_with(result)
            m.detach()
            m.erase()
        else:
            m.detach()
            m.erase(safe_erase=False)
        return True
    return False


@dataclass(frozen=True)
class ScatterToGatherPass(ModulePass):
    """Stencil-shaped wcr(add) scatters of top-level maps become gathers."""

    name = "scatter-to-gather"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        changed = True
        while changed:  # one walk per round, not per rewrite: a rewritten map is erased, its remainder new
            changed = False
            for m in _top_maps(op):
                if scatter_to_gather(m):
                    changed = True


def _top_maps(op: ModuleOp) -> list[df.MapOp]:
    return [
        m for m in op.walk()
        if isinstance(m, df.MapOp) and not m.is_buffer_form and not isinstance(m.parent_op(), df.MapOp)
    ]

