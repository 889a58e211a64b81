"""The reverse sweep: adjoints of tensor programs, op by op, last op first.

`Reverser` walks a block backwards, holding one adjoint tensor per forward
value that has one (fan-out contributions are summed). nn ops use their
backward rule (`rules.py`) or, without one, the reverse of their pure
expansion. A `df.map` is reversed over the same iteration space: its body is
recomputed, each write's value takes its adjoint from the result's adjoint
(a tie-split share for `wcr(max|min)`), tasklets are differentiated with
SymPy (`tasklet_diff.py`), and each read sends its adjoint to the source's
gradient with `wcr(add)`. Where two plain writes of one iteration hit the
same element, the last one (in program order) wins, as in the interpreter,
and alone receives the adjoint. An `scf.for` over scalars in a map body runs
backwards in the backward body, rerunning the forward loop up to the
iteration it reverses. Outside maps, float scalars have scalar adjoints
(tasklets, `tensor.extract`, `tensor.insert`). `scf.for` loops run backwards (`loops.py`);
`scf.if` and `func.call` are in `control.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, func, scf, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    FileLineColLoc,
    FloatAttr,
    IndexType,
    IntegerAttr,
    TensorType,
)
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from dfc.dialects import df, nn
from dfc.dialects.df_builders import Scalar, elementwise, map_op, splat, tasklet
from dfc.dialects.diagnostics import CompileError
from dfc.dialects.index_exprs import constant_difference
from dfc.dialects.nn_expand import expand
from dfc.passes.autodiff.rules import BACKWARD_RULES


def is_float(value: SSAValue) -> bool:
    t = value.type
    return isinstance(t.element_type if isinstance(t, TensorType) else t, AnyFloat)


def used_from_outside(op: Operation) -> list[SSAValue]:
    """Values `op` and its regions use that are defined outside `op`."""
    found: list[SSAValue] = []
    for inner in op.walk():
        for v in inner.operands:
            owner = v.owner if isinstance(v.owner, Operation) else v.owner.parent_op()
            if (owner is None or not op.is_ancestor(owner)) and v not in found:
                found.append(v)
    return found


def used_in_body(op: Operation) -> list[SSAValue]:
    """Values the ops inside `op`'s regions use that are defined outside `op`
    (not `op`'s own operands, unless its body uses them too)."""
    found: list[SSAValue] = []
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                found.extend(v for v in used_from_outside(inner) if v not in found and not defined_inside(v, op))
    return found


def defined_inside(value: SSAValue, op: Operation) -> bool:
    """Whether `value` is defined in one of `op`'s regions (at any depth)."""
    owner = value.owner if isinstance(value.owner, Operation) else value.owner.parent_op()
    return owner is not None and op.is_ancestor(owner)


def mark_varied(ops: Sequence[Operation], varied: set[SSAValue]) -> None:
    """Add to `varied` the float values of `ops` (and nested) that depend on it."""
    for op in ops:
        if any(v in varied for v in used_from_outside(op)):
            for inner in op.walk():
                varied.update(r for r in inner.results if is_float(r))
                for region in inner.regions:
                    for blk in region.blocks:
                        varied.update(a for a in blk.args if is_float(a))


class Reverser:
    """Builds adjoints at `b` for the ops of one block, in reverse order."""

    def __init__(self, b: Builder, varied: set[SSAValue], parent: Reverser | None = None):
        self.b = b
        self.varied = varied
        self.adj: dict[SSAValue, SSAValue] = {}
        self.placeholders: list = parent.placeholders if parent else []  # loops.Placeholder
        self.module = parent.module if parent else None  # where callees' gradients go
        self.recompute = parent.recompute if parent else False  # loops: recompute, not tape
        self.in_progress: frozenset[str] = parent.in_progress if parent else frozenset()  # functions being differentiated
        # how loops, branches and calls reverse (`scf.for`: loops.py; `scf.if`, `func.call`: control.py),
        # and the gradient function of a callee: set on the root by the autodiff pass
        self.structured: dict[type[Operation], Callable[[Reverser, Operation], None]] = parent.structured if parent else {}
        self.call_gradient: Callable[..., func.FuncOp] | None = parent.call_gradient if parent else None

    def nested(self, b: Builder, varied: set[SSAValue]) -> Reverser:
        """A reverser for a nested region, sharing this one's module and placeholders."""
        return Reverser(b, varied, self)

    def add(self, value: SSAValue, g: SSAValue | None) -> None:
        """Accumulate `g` into the adjoint of `value`."""
        if g is None or value not in self.varied:
            return
        if value in self.adj and isinstance(value.type, TensorType):
            g = self.sum(self.adj[value], g)
        elif value in self.adj:
            g = tasklet(self.b, [self.adj[value], g], g.type, lambda s, a: s.add(a[0], a[1]))
        self.adj[value] = g

    def sum(self, a: SSAValue, g: SSAValue) -> SSAValue:
        """a + g, tensors of one type (static or dynamic shape)."""
        if a.type.has_static_shape():  # type: ignore[union-attr]
            return self.b.insert(nn.AddOp(a, g)).result
        return self.pointwise(a, [a, g], lambda s, v: s.add(v[0], v[1]))

    def as_tensor(self, g: SSAValue) -> SSAValue:
        """`g`, or the scalar `g` as a 0-d tensor."""
        if isinstance(g.type, TensorType):
            return g
        return self.b.insert(tensor.InsertOp(g, splat(self.b, TensorType(g.type, []), 0.0), [])).result

    def tensor_zeros_like(self, value: SSAValue) -> SSAValue:
        """Zeros of `value`'s shape, or a 0-d zero tensor for a scalar (where its adjoint is summed)."""
        if isinstance(value.type, TensorType):
            return self.zeros_like(value)
        return splat(self.b, TensorType(value.type, []), 0.0)

    def like(self, value: SSAValue, g: SSAValue) -> SSAValue:
        """`g` in `value`'s form: the element of a 0-d `g` where `value` is a scalar."""
        if isinstance(value.type, TensorType):
            return g
        return self.b.insert(tensor.ExtractOp(g, [], value.type)).result

    def zeros_like(self, value: SSAValue) -> SSAValue:
        """A zero tensor of `value`'s shape (read from `value` where dynamic), or a zero scalar."""
        t = value.type
        if not isinstance(t, TensorType):
            return self.b.insert(arith.ConstantOp(FloatAttr(0.0, t))).result  # type: ignore[arg-type]
        if t.has_static_shape():
            return splat(self.b, t, 0.0)
        return self.pointwise(value, [], lambda s, a: s.const(0.0, t.element_type))

    def pointwise(self, like: SSAValue, inputs: Sequence[SSAValue], body) -> SSAValue:
        """out[idx] = body(inputs[idx]) over the shape of `like` (static or dynamic);
        the inputs have that shape."""
        t = like.type
        assert isinstance(t, TensorType)
        if t.has_static_shape():
            return elementwise(self.b, t, inputs, body)
        bounds: list[int | SSAValue] = []
        for k, d in enumerate(t.get_shape()):
            if d == DYNAMIC_INDEX:
                axis = self.b.insert(arith.ConstantOp(IntegerAttr(k, IndexType()))).result
                bounds.append(self.b.insert(tensor.DimOp(like, axis)).result)
            else:
                bounds.append(d)
        shell = self.b.insert(tensor.EmptyOp([x for x in bounds if isinstance(x, SSAValue)], t)).tensor

        def build(mb: Builder, ivs, outs) -> None:
            values = [mb.insert(df.ReadOp(x, list(ivs))).res for x in inputs]
            value = tasklet(mb, values, t.element_type, body) if values else body(Scalar(mb), [])
            mb.insert(df.WriteOp(value, outs[0], list(ivs)))

        return map_op(self.b, bounds, [shell], build).res[0]

    def block(self, ops: Sequence[Operation]) -> None:
        """Adjoints through `ops` (forward order), last op first."""
        for op in reversed(list(ops)):
            if not any(r in self.adj for r in op.results):
                continue
            block = self.b.insertion_point.block
            before = set(block.ops)
            self.op(op)
            for new in block.ops:
                if new not in before:
                    for inner in new.walk():
                        if not isinstance(inner.location, FileLineColLoc):
                            inner.location = op.location  # the adjoint's ops point at their forward op

    def op(self, op: Operation) -> None:
        if isinstance(op, df.MapOp):
            MapReverser(self, op).run()
        elif op.name in BACKWARD_RULES and (gradients := self.by_rule(op)) is not None:
            for v, g in zip(op.operands, gradients):
                self.add(v, g)
        elif isinstance(op, nn.NNOp):
            self.through_expansion(op)
        elif (reverse_structured := self.structured.get(type(op))) is not None:
            reverse_structured(self, op)
        elif isinstance(op, df.TaskletOp):
            self.scalar_tasklet(op)
        elif isinstance(op, tensor.ExtractOp):
            g = self.b.insert(tensor.InsertOp(self.adj[op.result], self.zeros_like(op.tensor), op.indices)).result
            self.add(op.tensor, g)
        elif isinstance(op, tensor.InsertOp):
            g = self.adj[op.result]
            self.add(op.scalar, self.b.insert(tensor.ExtractOp(g, op.indices, op.scalar.type)).result)
            zero = self.zeros_like(op.scalar)
            self.add(op.dest, self.b.insert(tensor.InsertOp(zero, g, op.indices)).result)
        elif isinstance(op, arith.ConstantOp | tensor.EmptyOp | tensor.DimOp):
            return
        else:
            raise CompileError.at(op, f"autodiff: cannot differentiate '{op.name}': no backward rule")

    def by_rule(self, op: Operation) -> Sequence[SSAValue | None] | None:
        """The operands' gradients from `op`'s backward rule; None where the
        rule leaves `op` to its expansion."""
        grads = [self.adj.get(r) or self.zeros_like(r) for r in op.results]
        required = [v in self.varied and is_float(v) for v in op.operands]
        return BACKWARD_RULES[op.name](self.b, op, grads, required)

    def scalar_tasklet(self, op: df.TaskletOp) -> None:
        """A tasklet outside any map: its gradient tasklet, on scalars."""
        wrt = [k for k, v in enumerate(op.inputs) if v in self.varied and is_float(v)]
        if not wrt:
            return
        seeds = [self.adj.get(r) or self.zeros_like(r) if is_float(r) else None for r in op.res]
        from dfc.passes.autodiff.tasklet_diff import UnsupportedOpError, gradient_tasklet  # SymPy: on first use

        try:
            grads = gradient_tasklet(op, seeds, wrt, self.b)
        except UnsupportedOpError as err:
            raise CompileError.at(err.op, f"autodiff: {err}") from None
        for k, g in zip(wrt, grads):
            self.add(op.inputs[k], g)

    def through_expansion(self, op: Operation) -> None:
        """Differentiate an nn op without a rule through its pure expansion,
        recomputed where the adjoint is built."""
        block = self.b.insertion_point.block
        start = len(list(block.ops))
        value = expand(self.b, op)
        ops = list(block.ops)[start:]
        mark_varied(ops, self.varied)
        self.adj[value] = self.adj[op.results[0]]
        for o in reversed(ops):
            if any(r in self.adj for r in o.results):
                self.op(o)


def _same_element(a: df.WriteOp, b: df.WriteOp) -> bool | None:
    """Whether two writes of one iteration hit the same element: True or False
    where the index expressions prove it, else None."""
    diffs = [constant_difference(x, y) for x, y in zip(a.indices, b.indices)]
    if any(d is not None and d != 0 for d in diffs):
        return False
    return True if all(d == 0 for d in diffs) else None


def product_share(s: Scalar, a: Sequence[SSAValue]) -> SSAValue:
    """g times the product of the other factors of a wcr(mul) element, from
    (factor, g, number of zero factors, product of the nonzero ones): the
    product over the factor where none is 0; where exactly one is, that one
    gets the product of the others and the rest get 0."""
    x, g, zeros, product = a
    zero, one = s.const(0.0, x.type), s.const(1.0, x.type)
    only_zero = s.select(s.eq(zeros, one), product, zero)
    others = s.select(s.eq(zeros, zero), s.div(product, x), s.select(s.eq(x, zero), only_zero, zero))
    return s.mul(g, others)


class _Scope:
    """Where a map body's adjoints are built: the builder, the forward values'
    clones (`mapping`) and the adjoints of the body's scalars."""

    def __init__(self, b: Builder, mapping: dict[SSAValue, SSAValue], varied: set[SSAValue]):
        self.b = b
        self.mapping = mapping
        self.varied = varied
        self.adj: dict[SSAValue, SSAValue] = {}

    def add(self, value: SSAValue, g: SSAValue) -> None:
        if value in self.varied:
            adj = self.adj
            adj[value] = tasklet(self.b, [adj[value], g], g.type, lambda t, a: t.add(a[0], a[1])) if value in adj else g


class MapReverser:
    """The adjoint of one tensor-level df.map."""

    def __init__(self, outer: Reverser, op: df.MapOp):
        self.outer = outer
        self.b = outer.b
        self.op = op
        self.grads = [outer.adj.get(r) for r in op.res]
        self.writes: dict[int, list[df.WriteOp]] = {}
        outs = list(op.out_args)
        for w in op.walk():
            if isinstance(w, df.WriteOp) and w.dest in outs:  # (a nested map's own outputs are rejected in body)
                self.writes.setdefault(outs.index(w.dest), []).append(w)

    def run(self) -> None:
        if self.op.is_buffer_form:
            raise CompileError.at(self.op, "autodiff: differentiate before bufferize (this map writes memrefs)")
        kinds = {k: self.kind(k) for k in self.writes if self.grads[k]}
        self.stored: dict[df.WriteOp, tuple[SSAValue, list[SSAValue]]] = {}
        if any(kind in ("max", "min", "mul") for kind in kinds.values()):
            self.store_candidates([k for k, kind in kinds.items() if kind in ("max", "min", "mul")])
        self.ties = {k: self.tie_counts(k) for k, kind in kinds.items() if kind in ("max", "min")}
        self.products = {k: self.zeros_and_product(k) for k, kind in kinds.items() if kind == "mul"}
        sources = [
            v for v in used_from_outside(self.op)
            if isinstance(v.type, TensorType) and v in self.outer.varied and is_float(v)
            and any(isinstance(u.operation, df.ReadOp) and self.op.is_ancestor(u.operation) for u in v.uses)
        ]
        scalars = [
            v for v in used_from_outside(self.op)
            if not isinstance(v.type, TensorType) and v in self.outer.varied and is_float(v)
        ]
        if sources or scalars:  # before the inits' gradients, which may then update the seeds in place
            sums = [splat(self.b, TensorType(v.type, []), 0.0) for v in scalars]  # summed over the iterations
            bmap = self.b.insert(df.MapOp(self.op.bounds, [*[self.outer.zeros_like(s) for s in sources], *sums]))
            self.grad_outs = dict(zip(sources, bmap.out_args))
            self.scalar_outs = dict(zip(scalars, bmap.out_args[len(sources) :]))
            self.body(self.op, bmap, {})
            for s, g in zip(sources, bmap.res):
                self.outer.add(s, g)
            for v, g in zip(scalars, bmap.res[len(sources) :]):
                self.outer.add(v, self.b.insert(tensor.ExtractOp(g, [], v.type)).result)
        for k, init in enumerate(self.op.outs[: len(self.grads)]):
            if self.grads[k] is not None and init in self.outer.varied:
                self.outer.add(init, self.init_gradient(k, self.ties.get(k)))

    def kind(self, k: int) -> str | None:
        kinds = {w.wcr_kind for w in self.writes[k]}
        if len(kinds) > 1:
            raise CompileError.at(self.op, "autodiff: an output written with different wcr kinds")
        return kinds.pop()

    # -- the candidates of wcr(max|min) outputs --------------------------------

    def store_candidates(self, outputs: list[int]) -> None:
        """Make the forward map also store every value it writes to `outputs`
        (one element per iteration, nested maps' iterations included), so that
        the backward finds the extremum by comparing the very values the
        reduction took: two separate computations of one value need not be
        bit-equal (fast-math, fusion), and a recomputed maximum could then
        match nothing and get no gradient."""
        op, b = self.op, self.b
        writes = [w for k in outputs for w in self.writes[k]]
        b_before = Builder(InsertPoint.before(op))
        chains: list[list[df.MapOp]] = []
        for w in writes:  # the nested maps around each write
            chain: list[df.MapOp] = []
            m = w.parent_op()
            while m is not op:
                assert isinstance(m, df.MapOp)
                chain.insert(0, m)
                m = m.parent_op()
            chains.append(chain)
        block = op.body.detach_block(0)
        stores = []
        for w, chain in zip(writes, chains):
            bounds = [*op.bounds, *[x for inner in chain for x in inner.bounds]]
            if any(not isinstance(x, int) and defined_inside(x, op) for x in bounds):
                raise CompileError.at(
                    w, "autodiff: wcr(max|min) in a nested map whose bounds depend on the enclosing map is not "
                    "differentiable (its candidates cannot be stored)"
                )
            shape = [x if isinstance(x, int) else DYNAMIC_INDEX for x in bounds]
            t = TensorType(w.value.type, shape)
            empty = b_before.insert(tensor.EmptyOp([x for x in bounds if not isinstance(x, int)], t)).tensor
            arg = block.insert_arg(t, len(block.args))
            ivs = [*block.args[: op.rank], *[iv for inner in chain for iv in inner.ivs]]
            Builder(InsertPoint.after(w)).insert(df.WriteOp(w.value, arg, ivs))
            stores.append((w, empty, ivs))
        new = df.MapOp(op.bounds, [*op.outs, *[e for _, e, _ in stores]], Region(block))
        new.attributes |= op.attributes
        new.location = op.location
        b_before.insert(new)
        for old_r, new_r in zip(op.res, new.res):
            old_r.replace_all_uses_with(new_r)
            if old_r in self.outer.adj:
                self.outer.adj[new_r] = self.outer.adj.pop(old_r)
            if old_r in self.outer.varied:
                self.outer.varied.add(new_r)
        op.detach()
        op.erase()
        self.op = new
        values = new.res[len(new.res) - len(stores) :]
        self.stored = {w: (v, ivs) for (w, _, ivs), v in zip(stores, values)}

    def stored_value(self, b: Builder, w: df.WriteOp, mapping: dict[SSAValue, SSAValue]) -> SSAValue:
        """The value `w` wrote in the forward iteration that `mapping` reverses."""
        values, ivs = self.stored[w]
        return b.insert(df.ReadOp(values, [mapping[iv] for iv in ivs])).res

    # -- the initial values' gradients ----------------------------------------

    def init_gradient(self, k: int, ties: SSAValue | None) -> SSAValue | None:
        g = self.grads[k]
        assert g is not None
        kind = self.kind(k) if k in self.writes else None
        if k not in self.writes or kind == "add":
            return g
        result = self.op.res[k]
        if kind in ("max", "min"):
            assert ties is not None
            init = self.op.outs[k]
            return self.outer.pointwise(
                result, [init, result, g, ties],
                lambda s, a: s.select(s.eq(a[0], a[1]), s.div(a[2], a[3]), s.const(0.0, a[2].type)),
            )
        if kind == "mul":
            zeros, product = self.products[k]
            return self.outer.pointwise(result, [self.op.outs[k], g, zeros, product], product_share)
        if self.covers(k):
            return None
        # plain writes: the overwritten elements get no gradient
        mask = self.b.insert(df.MapOp(self.op.bounds, [g]))
        self.zero_written(self.op, mask, {}, k, mask.out_args[0])
        return mask.res[0]

    def zero_written(self, source: df.MapOp, target: df.MapOp, mapping: dict, k: int, dest: SSAValue) -> None:
        """Write 0 into `dest` where `source` (and its nested maps) writes output
        k; `target` runs over `source`'s space."""

        def zero(b: Builder, o: df.WriteOp, mapping: dict) -> None:
            value = b.insert(arith.ConstantOp(FloatAttr(0.0, o.value.type))).result
            b.insert(df.WriteOp(value, dest, [mapping.get(i, i) for i in o.indices]))

        self.each_write(source, target, mapping, k, self.clone_indices, zero)

    def each_write(self, source: df.MapOp, target: df.MapOp, mapping: dict, k: int, clone, visit) -> None:
        """`visit(builder, write, mapping)` for each write to output k of `source`
        or of its nested maps, rebuilt as maps nested in `target` (which runs
        over `source`'s space); `clone(source, target, mapping)` first copies
        into each the part of the body the visit needs."""
        mapping = clone(source, target, dict(mapping))
        b = Builder(InsertPoint.at_end(target.body.block))
        for o in source.body.block.ops:
            if isinstance(o, df.MapOp):
                nested = b.insert(df.MapOp([x if isinstance(x, int) else mapping.get(x, x) for x in o.bounds], []))
                self.each_write(o, nested, mapping, k, clone, visit)
            elif isinstance(o, df.WriteOp) and o in self.writes[k]:
                visit(b, o, mapping)

    def covers(self, k: int) -> bool:
        """Whether the map's plain writes overwrite every element of output k."""
        (w, *rest) = self.writes[k]
        shape = self.op.res[k].type.get_shape()  # type: ignore[union-attr]
        return not rest and w.parent_op() is self.op and list(w.indices) == list(self.op.ivs) and tuple(
            self.op.static_extents
        ) == tuple(shape)

    def clone_indices(self, source: df.MapOp, target: df.MapOp, mapping: dict[SSAValue, SSAValue]) -> dict:
        """Clone `source`'s index arithmetic (integer ops) into `target`'s body."""
        mapping.update(zip(source.ivs, target.ivs))
        b = Builder(InsertPoint.at_end(target.body.block))
        for o in source.body.block.ops:
            if isinstance(o, arith.ConstantOp | arith.AddiOp | arith.SubiOp | arith.MuliOp | arith.IndexCastOp):
                clone = b.insert(o.clone(value_mapper=mapping))
                mapping.update(zip(o.results, clone.results))
        return mapping

    def tie_counts(self, k: int) -> SSAValue:
        """How many candidates (the initial value and written values) equal each extremum."""
        result, init = self.op.res[k], self.op.outs[k]
        one_if_equal = lambda s, a: s.select(s.eq(a[0], a[1]), s.const(1.0, a[0].type), s.const(0.0, a[0].type))  # noqa: E731
        start = self.outer.pointwise(result, [init, result], one_if_equal)
        counts = self.b.insert(df.MapOp(self.op.bounds, [start]))

        def hit(mb: Builder, value: SSAValue, idx: list[SSAValue]) -> None:
            r = mb.insert(df.ReadOp(result, idx)).res
            mb.insert(df.WriteOp(tasklet(mb, [value, r], r.type, one_if_equal), counts.out_args[0], idx, "add"))

        self.each_candidate(self.op, counts, {}, k, hit)
        return counts.res[0]

    def zeros_and_product(self, k: int) -> tuple[SSAValue, SSAValue]:
        """For each element of the wcr(mul) output k: how many of its factors
        (the initial value and the written values) are 0, and the product of
        the others."""
        result, init = self.op.res[k], self.op.outs[k]
        is_zero = lambda s, a: s.select(s.eq(a[0], s.const(0.0, a[0].type)), s.const(1.0, a[0].type), s.const(0.0, a[0].type))  # noqa: E731
        or_one = lambda s, a: s.select(s.eq(a[0], s.const(0.0, a[0].type)), s.const(1.0, a[0].type), a[0])  # noqa: E731
        start = [self.outer.pointwise(result, [init], is_zero), self.outer.pointwise(result, [init], or_one)]
        acc = self.b.insert(df.MapOp(self.op.bounds, start))

        def factor(mb: Builder, value: SSAValue, idx: list[SSAValue]) -> None:
            mb.insert(df.WriteOp(tasklet(mb, [value], value.type, is_zero), acc.out_args[0], idx, "add"))
            mb.insert(df.WriteOp(tasklet(mb, [value], value.type, or_one), acc.out_args[1], idx, "mul"))

        self.each_candidate(self.op, acc, {}, k, factor)
        return acc.res[0], acc.res[1]

    def each_candidate(self, source: df.MapOp, target: df.MapOp, outer_mapping: dict, k: int, emit) -> None:
        """`emit(builder, value, indices)` for each write to output k of `source`
        (or of its nested maps), with the stored value it wrote; `target`
        runs over `source`'s space."""

        def candidate(b: Builder, o: df.WriteOp, mapping: dict) -> None:
            emit(b, self.stored_value(b, o, mapping), [mapping.get(i, i) for i in o.indices])

        self.each_write(source, target, outer_mapping, k, self.clone_forward, candidate)

    def clone_forward(self, source: df.MapOp, target: df.MapOp, mapping: dict[SSAValue, SSAValue]) -> dict:
        """Recompute `source`'s body (all but its writes) inside `target`'s body."""
        mapping.update(zip(source.ivs, target.ivs))
        b = Builder(InsertPoint.at_end(target.body.block))
        for o in source.body.block.ops:
            if isinstance(o, df.WriteOp | df.MapOp):
                continue
            for w in o.walk():
                if isinstance(w, df.WriteOp | df.MapOp) and w is not o:
                    raise CompileError.at(w, f"autodiff: '{w.name}' in a loop of a map body is not supported")
            clone = b.insert(o.clone(value_mapper=mapping))
            mapping.update(zip(o.results, clone.results))
        return mapping

    # -- the backward body -------------------------------------------------

    def overwriting(self, o: df.WriteOp) -> list[df.WriteOp] | None:
        """The later plain writes of the same iteration that may hit `o`'s element
        (None: one always does). A later write nested in a map that does not
        enclose `o` may run any number of times: unless provably elsewhere, it is
        an error."""
        if o.wcr_kind is not None:
            return []
        plain = [w for w in self.op.walk() if isinstance(w, df.WriteOp) and w.wcr_kind is None and w.dest == o.dest]
        later = []
        for w in plain[plain.index(o) + 1 :]:
            same = _same_element(o, w)
            if same is False:
                continue
            enclosing = w.parent_op()
            if enclosing is None or not enclosing.is_ancestor(o):
                raise CompileError.at(
                    o, "autodiff: a later write in a nested map may overwrite this element in the same iteration; "
                    "which write wins is not decidable here (write to distinct elements, or use a wcr)"
                )
            if same is True:
                return None
            later.append(w)
        return later

    @staticmethod
    def unless_overwritten(b: Builder, gv: SSAValue, idx: list[SSAValue], later: list[list[SSAValue]]) -> SSAValue:
        """`gv`, or 0 where a later write of the same iteration hits the same element
        (the last write wins, and only it receives the adjoint)."""
        hit = None
        for other in later:  # never 0-d: a later write to the same indices skips this one
            same = None
            for i, j in zip(idx, other):
                eq = b.insert(arith.CmpiOp(i, j, "eq")).result
                same = eq if same is None else b.insert(arith.AndIOp(same, eq)).result
            hit = same if hit is None else b.insert(arith.OrIOp(hit, same)).result
        assert hit is not None
        return tasklet(b, [gv, hit], gv.type, lambda t, a: t.select(a[1], t.const(0.0, a[0].type), a[0]))

    def reverse_op(self, o: Operation, scope: _Scope) -> None:
        """The adjoint of one op of a map body (or of a loop in it), built at `scope.b`."""
        b, s, mapping, adj, add = scope.b, Scalar(scope.b), scope.mapping, scope.adj, scope.add
        if isinstance(o, df.MapOp):
            if o.outs:
                raise CompileError.at(o, "autodiff: a nested map with its own outputs is not supported")
            nested = b.insert(df.MapOp([mapping.get(x, x) if not isinstance(x, int) else x for x in o.bounds], []))
            crossing = [v for v in used_from_outside(o) if v in self.outer.varied and not isinstance(v.type, TensorType)]
            if crossing:
                raise CompileError.at(o, "autodiff: a nested map uses a differentiated scalar of its parent map")
            self.body(o, nested, mapping)
        elif isinstance(o, df.WriteOp):
            k = list(self.op.out_args).index(o.dest)
            g = self.grads[k] if k < len(self.grads) else None  # (not the stored candidates)
            if g is None or o.value not in self.outer.varied:
                return
            idx = [mapping.get(i, i) for i in o.indices]
            later = self.overwriting(o)
            if later is None:
                return  # always overwritten in the same iteration: the last write takes the adjoint
            gv = b.insert(df.ReadOp(g, idx)).res
            if later:
                gv = self.unless_overwritten(b, gv, idx, [[mapping.get(i, i) for i in w.indices] for w in later])
            if o.wcr_kind in ("max", "min"):
                r = b.insert(df.ReadOp(self.op.res[k], idx)).res
                n = b.insert(df.ReadOp(self.ties[k], idx)).res
                gv = tasklet(
                    b, [self.stored_value(b, o, mapping), r, gv, n], gv.type,
                    lambda t, a: t.select(t.eq(a[0], a[1]), t.div(a[2], a[3]), t.const(0.0, a[2].type)),
                )
            elif o.wcr_kind == "mul":
                zeros, product = (b.insert(df.ReadOp(x, idx)).res for x in self.products[k])
                gv = tasklet(b, [self.stored_value(b, o, mapping), gv, zeros, product], gv.type, product_share)
            add(o.value, gv)
        elif isinstance(o, df.TaskletOp):
            if not any(r in adj for r in o.res):
                return
            wrt = [k for k, v in enumerate(o.inputs) if v in self.outer.varied and is_float(v)]
            if not wrt:
                return
            clone = mapping[o.res[0]].owner
            assert isinstance(clone, df.TaskletOp)
            seeds = [adj.get(r) or s.const(0.0, r.type) if is_float(r) else None for r in o.res]
            from dfc.passes.autodiff.tasklet_diff import UnsupportedOpError, gradient_tasklet  # SymPy: on first use

            try:
                grads = gradient_tasklet(clone, seeds, wrt, b)
            except UnsupportedOpError as err:
                raise CompileError.at(err.op, f"autodiff: {err}") from None
            for k, g in zip(wrt, grads):
                add(o.inputs[k], g)
        elif isinstance(o, df.ReadOp):
            if o.res in adj and o.source in self.grad_outs:
                idx = [mapping.get(i, i) for i in o.indices]
                b.insert(df.WriteOp(adj[o.res], self.grad_outs[o.source], idx, "add"))
        elif isinstance(o, scf.ForOp) and any(r in adj for r in o.results):
            self.scalar_loop(o, scope)
        elif isinstance(o, arith.ConstantOp):
            return
        elif any(r in adj for r in o.results):
            raise CompileError.at(o, f"autodiff: cannot differentiate '{o.name}' in a map body")

    def scalar_loop(self, loop: scf.ForOp, scope: _Scope) -> None:
        """The adjoint of an scf.for over scalars in a map body: a loop running
        backwards whose iteration t reruns the forward loop up to t (no tape)
        and reverses its body; the reads send their adjoints from inside it."""
        inner_ops = [o for o in loop.body.block.ops if not isinstance(o, scf.YieldOp)]  # no writes (clone_forward)
        b, mapping, body = scope.b, scope.mapping, loop.body.block
        clone = mapping[loop.results[0]].owner
        assert isinstance(clone, scf.ForOp)
        carried = [j for j, r in enumerate(loop.results) if is_float(r)]
        captured = [v for v in used_in_body(loop) if v in self.outer.varied and is_float(v)]
        inside = [u.operation for v in captured if isinstance(v.type, TensorType) for u in v.uses if loop.is_ancestor(u.operation)]
        if not all(isinstance(u, df.ReadOp) for u in inside):
            raise CompileError.at(loop, "autodiff: a loop in a map body uses a differentiated tensor other than by df.read")
        captured = [v for v in captured if not isinstance(v.type, TensorType)]
        seeds = [scope.adj.get(loop.results[j]) or Scalar(b).const(0.0, loop.results[j].type) for j in carried]
        acc = [Scalar(b).const(0.0, v.type) for v in captured]
        one = b.insert(arith.ConstantOp(IntegerAttr(1, IndexType()))).result
        zero = b.insert(arith.ConstantOp(IntegerAttr(0, IndexType()))).result
        span = b.insert(arith.SubiOp(clone.ub, clone.lb)).result
        n = b.insert(arith.DivUIOp(b.insert(arith.AddiOp(span, b.insert(arith.SubiOp(clone.step, one)).result)).result, clone.step)).result
        block = Block(arg_types=[IndexType(), *[x.type for x in seeds + acc]])
        back = b.insert(scf.ForOp(zero, n, one, seeds + acc, Region(block)))
        ib = Builder(InsertPoint.at_end(block))
        k = block.args[0]
        last = ib.insert(arith.SubiOp(n, one)).result
        steps = ib.insert(arith.SubiOp(last, k)).result
        t = ib.insert(arith.AddiOp(clone.lb, ib.insert(arith.MuliOp(steps, clone.step)).result)).result
        rerun = ib.insert(clone.clone())
        rerun.operands = [clone.lb, t, clone.step, *clone.iter_args]
        inner = _Scope(ib, {**mapping, body.args[0]: t, **dict(zip(body.args[1:], rerun.results))}, self.outer.varied)
        for o in inner_ops:
            copy = ib.insert(o.clone(value_mapper=inner.mapping))
            inner.mapping.update(zip(o.results, copy.results))
        yielded = body.last_op
        assert isinstance(yielded, scf.YieldOp)
        for j, g in zip(carried, block.args[1:]):
            inner.add(yielded.arguments[j], g)
        for o in reversed(inner_ops):
            self.reverse_op(o, inner)
        new_seeds = [inner.adj.get(body.args[1 + j]) or Scalar(ib).const(0.0, seeds[i].type) for i, j in enumerate(carried)]
        new_acc = []
        for v, a in zip(captured, block.args[1 + len(carried) :]):
            g = inner.adj.get(v)
            new_acc.append(a if g is None else tasklet(ib, [a, g], a.type, lambda t, x: t.add(x[0], x[1])))
        ib.insert(scf.YieldOp(*new_seeds, *new_acc))
        for j, g in zip(carried, back.results):
            scope.add(loop.iter_args[j], g)
        for v, g in zip(captured, back.results[len(carried) :]):
            scope.add(v, g)

    def body(self, source: df.MapOp, target: df.MapOp, outer_mapping: dict[SSAValue, SSAValue]) -> None:
        mapping = self.clone_forward(source, target, dict(outer_mapping))
        scope = _Scope(Builder(InsertPoint.at_end(target.body.block)), mapping, self.outer.varied)
        for o in reversed(list(source.body.block.ops)):
            self.reverse_op(o, scope)
        b, adj = scope.b, scope.adj
        for v in adj:
            if v in self.scalar_outs:
                b.insert(df.WriteOp(adj[v], self.scalar_outs[v], [], "add"))
            elif isinstance(v, BlockArgument) and v.owner is not source.body.block and v not in source.out_args:
                raise CompileError.at(source, "autodiff: a map body uses a differentiated scalar defined outside it")
