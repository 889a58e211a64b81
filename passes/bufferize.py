"""`bufferize`: tensors to memrefs, updating dead buffers in place.

Every function is rebuilt with memref arguments and results. A `df.map`
becomes its buffer form, writing into its initial value's buffer when that
buffer is owned by the function (never an argument or a constant) and the
initial value is dead after the map; otherwise into a fresh copy. Tensor
`scf.for` iter_args become loop-invariant buffers (a yielded value that is
not the iter_arg itself is copied back into it; the buffer of another
iter_arg, as when two swap places, is copied aside first). An `scf.if` with tensor
results gets memref results: each branch yields a buffer it owns (one it
made, or a copy of a value from outside the branch), which the if's result
then owns. An `scf.while` carries its tensors the same way as `scf.for`
(its condition must pass them on unchanged). Results are fresh buffers
(`memref.alloc` with 64-byte alignment) that the caller owns; every other
buffer the function allocates is freed before it returns.

The in-place rule (`is_dead_after`) is decided in the block that defines the
value: the writer's ancestor there must come after every use, and no loop or
map may stand between that block and the writer, since a body that repeats
reads the value again in its next iteration. Donor buffers (`donor`) obey the
same rule, plus reads only at the element each iteration writes.

A fresh buffer needs no copy of the initial value only when it comes from
`tensor.empty` or when the map's plain writes cover every element of that
output (`_overwrites_all`). Both questions are asked per output: a map may
start several outputs from one tensor, and each is answered for itself.
An initial value that holds one value everywhere (a splat constant, or a
map's output that one plain write of a value from outside fills,
`_splat_of`) is filled again into the fresh buffer instead of copied: the
fill writes what a copy reads and writes, and a zero fill before a product
is what `contraction-to-blas` folds into the GEMM (`beta = 0`). CSE merges
equal zero tensors, so two convolutions' gradients of one shape start from
one tensor, which would otherwise be copied into each of them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf, tensor
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from dfc.dialects import df
from dfc.dialects.diagnostics import CompileError
from dfc.dialects.dominance import comes_before
from dfc.dialects.xdsl_fixes import is_splat

ALIGNMENT = 64

# Ops whose body runs more than once per execution of the op.
_REPEATING = (scf.ForOp, scf.WhileOp, df.MapOp)


def memref_of(t: Attribute) -> Attribute:
    """The memref type holding a tensor type; other types unchanged."""
    if isinstance(t, TensorType):
        return MemRefType(t.element_type, t.get_shape())
    return t


def _ancestor_in(block: Block, op: Operation) -> Operation | None:
    while op is not None and op.parent_block() is not block:
        op = op.parent_op()
    return op


def is_dead_after(value: SSAValue, op: Operation) -> bool:
    """Whether no use of `value` can observe a write made by `op`.

    Proven in `value`'s own block: `op` runs inside the ancestor `anchor` of
    that block, and no use may run after `op` (`_may_run_after`: compared
    level by level from `anchor` inwards; a use in the other branch of an
    scf.if never runs in the same execution). Each op between `value`'s block
    and `op` must run its body at most once per execution of `anchor`; a loop
    or map there repeats `op` while `value` stays live (the next iteration
    reads it again), so `value` is not dead.
    """
    block = value.block if isinstance(value, BlockArgument) else value.owner.parent_block()
    if block is None:
        return False
    anchor = _ancestor_in(block, op)
    if anchor is None:
        return False
    enclosing = op.parent_op()
    while enclosing is not None and enclosing is not anchor.parent_op():
        if isinstance(enclosing, _REPEATING):
            return False
        enclosing = enclosing.parent_op()
    chain = [op]
    while chain[-1] is not anchor:
        chain.append(chain[-1].parent_op())
    return not any(_may_run_after(use.operation, chain) for use in value.uses)


def _may_run_after(user: Operation, chain: list[Operation]) -> bool:
    """Whether `user` may run after `chain[0]` within one run of the block of
    `chain[-1]` (`chain`: `chain[0]` and its ancestors up to that block)."""
    for k in range(len(chain) - 1, -1, -1):
        level = chain[k]
        block = level.parent_block()
        assert block is not None
        u = _ancestor_in(block, user)
        if u is None:  # in another region of chain[k + 1]
            return k + 1 >= len(chain) or not isinstance(chain[k + 1], scf.IfOp)
        if u is not level:
            return comes_before(level, u)
    return False  # `user` is inside chain[0] itself


def _no_conflicting_read(value: SSAValue, user: Operation) -> bool:
    """Whether overwriting `value`'s buffer in `user` cannot change what `user` reads.

    True when `user` reads `value` nowhere inside, or (for a map) only at the
    very element each iteration writes: reads and plain writes of that output
    all index by the map variables in order.
    """
    inner = [u.operation for u in value.uses if u.operation is not user and user.is_ancestor(u.operation)]
    if not inner:
        return True
    outs = [a for a, o in zip(user.out_args, user.outs) if o == value] if isinstance(user, df.MapOp) else []
    return _reads_only_where_written(user, inner, outs)


def _reads_only_where_written(user: Operation, reads: Sequence[Operation], outs: Sequence[SSAValue]) -> bool:
    """Whether `user` is a map whose `reads` (of one tensor) all come, in its
    body, before every write to the outputs `outs`, each reading the element
    the iteration writes: reads and plain writes all index by the map
    variables in order. Such reads see the old value even when the outputs
    share the tensor's buffer."""
    if not isinstance(user, df.MapOp):
        return False
    ivs = list(user.ivs)
    body = user.body.block
    if not all(isinstance(r, df.ReadOp) and r.parent_block() is body and list(r.indices) == ivs for r in reads):
        return False
    writes = [u.operation for a in outs for u in a.uses]
    if not all(isinstance(w, df.WriteOp) and w.wcr is None and list(w.indices) == ivs for w in writes):
        return False
    position = {o: k for k, o in enumerate(body.ops)}
    first_write = min((position[_ancestor_in(body, w)] for w in writes), default=len(position))
    return all(position[r] < first_write for r in reads)


def _overwrites_all(user: Operation, out: int | None) -> bool:
    """Whether `user` is a map whose plain writes replace every element of its
    output number `out` (so the initial contents need no copy). Other outputs
    initialised with the same tensor do not count: each needs its own answer."""
    if not isinstance(user, df.MapOp) or user.is_buffer_form or out is None:
        return False
    t = user.outs[out].type
    assert isinstance(t, TensorType)
    writes = [u.operation for u in user.out_args[out].uses]
    if len(writes) != 1 or not isinstance(w := writes[0], df.WriteOp) or w.parent_op() is not user:
        return False
    return w.wcr is None and list(w.indices) == list(user.ivs) and tuple(user.static_extents) == t.get_shape()


def _splat_of(value: SSAValue) -> SSAValue | Attribute | None:
    """What every element of the tensor `value` holds, when it is a splat
    constant (the element's attribute) or a map fills it with one value (its
    only write to that output, a plain one, replaces every element): a value
    from outside the map, or the attribute of a constant. None otherwise."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp):
        dense = owner.value
        splat = isinstance(dense, DenseIntOrFPElementsAttr) and is_splat(dense)
        return next(dense.iter_attrs(), None) if splat else None
    if not isinstance(owner, df.MapOp) or not _overwrites_all(owner, value.index):  # type: ignore[attr-defined]
        return None
    (use,) = owner.out_args[value.index].uses  # type: ignore[attr-defined]
    scalar = use.operation.operands[0]
    if isinstance(scalar.owner, arith.ConstantOp):
        return scalar.owner.value
    return None if owner.is_ancestor(scalar.owner) else scalar  # a block argument's owner is its block


def _locate(first: Operation | None, location: Attribute) -> None:
    """Give `first` and the ops after it that have no location `location`
    (what bufferize built for one op keeps that op's place in the source)."""
    op = first
    while op is not None:
        if isinstance(op.location, UnknownLoc):
            op.location = location
        op = op.next_op


@dataclass
class _Scope:
    """Buffers allocated in one block, to free at its end (except kept ones)."""

    owned: list[SSAValue] = field(default_factory=list)


class _Bufferizer:
    def __init__(self, module: ModuleOp):
        self.module = module
        self.map: dict[SSAValue, SSAValue] = {}
        self.owned: set[SSAValue] = set()  # buffers this function may overwrite
        self.scope_of: dict[SSAValue, _Scope] = {}
        self.globals = 0

    # -- helpers -----------------------------------------------------------

    def v(self, value: SSAValue) -> SSAValue:
        return self.map.get(value, value)

    def alloc_like(self, b: Builder, t: MemRefType, like: SSAValue | None, scope: _Scope) -> SSAValue:
        dynamic = []
        for k, d in enumerate(t.get_shape()):
            if d < 0:
                assert like is not None
                index = b.insert(arith.ConstantOp(IntegerAttr(k, IndexType()))).result
                dynamic.append(b.insert(memref.DimOp(like, index)).result)
        return self.alloc(b, t, dynamic, scope)

    def alloc(self, b: Builder, t: MemRefType, dynamic: Sequence[SSAValue], scope: _Scope) -> SSAValue:
        buf = b.insert(
            memref.AllocOp.get(t.element_type, ALIGNMENT, t.get_shape(), dynamic_sizes=dynamic)
        ).memref
        scope.owned.append(buf)
        self.owned.add(buf)
        self.scope_of[buf] = scope
        return buf

    def drop_alloc(self, buf: SSAValue) -> None:
        """Erase the unused allocation `buf` (a tensor.empty a donor replaced)."""
        self.scope_of.pop(buf).owned.remove(buf)
        self.owned.discard(buf)
        assert isinstance(buf.owner, Operation) and not buf.uses
        buf.owner.detach()
        buf.owner.erase()

    def copy(self, b: Builder, src: SSAValue, scope: _Scope) -> SSAValue:
        assert isinstance(src.type, MemRefType)
        dst = self.alloc_like(b, src.type, src, scope)
        b.insert(memref.CopyOp(src, dst))
        return dst

    def writable(
        self, b: Builder, value: SSAValue, user: Operation, scope: _Scope, taken: set[SSAValue], out: int | None = None
    ) -> SSAValue:
        """A buffer holding `value` that `user` may overwrite (as its output
        number `out` when `user` is a map)."""
        buf = self.v(value)
        if isinstance(value.owner, tensor.EmptyOp) and value.has_one_use() and (donor := self.donor(user, out, taken)):
            self.drop_alloc(buf)
            return donor
        if buf in self.owned and buf not in taken and is_dead_after(value, user) and _no_conflicting_read(value, user):
            taken.add(buf)
            return buf
        if isinstance(value.owner, tensor.EmptyOp) or _overwrites_all(user, out):  # nothing to copy
            assert isinstance(buf.type, MemRefType)
            return self.donor(user, out, taken) or self.alloc_like(b, buf.type, buf, scope)
        scalar = _splat_of(value)
        if scalar is not None:  # filling a fresh buffer moves half the bytes a copy does
            assert isinstance(buf.type, MemRefType)
            fresh = self.alloc_like(b, buf.type, buf, scope)
            outside = isinstance(scalar, SSAValue)
            self.fill(b, fresh, self.v(scalar) if outside else b.insert(arith.ConstantOp(scalar)).result)
            return fresh
        return self.copy(b, buf, scope)

    def fill(self, b: Builder, buf: SSAValue, scalar: SSAValue | None) -> None:
        """A map writing `scalar` (a value of the new IR) to every element of `buf` (none: leave it)."""
        assert isinstance(buf.type, MemRefType)
        fill = b.insert(df.MapOp(list(buf.type.get_shape()), [buf]))
        if scalar is not None:
            inner = Builder(InsertPoint.at_end(fill.body.block))
            inner.insert(df.WriteOp(scalar, fill.out_args[0], list(fill.ivs)))

    def donor(self, user: Operation, out: int | None, taken: set[SSAValue]) -> SSAValue | None:
        """The buffer of another tensor that the map `user` may write its
        output number `out` into, instead of a fresh buffer: a dead, owned
        tensor of the same type that `user` reads only at the element each
        iteration writes to that output (e.g. `g + dx` accumulating a
        gradient into `g`). None if there is none."""
        if not isinstance(user, df.MapOp) or out is None:
            return None
        value = user.outs[out]
        outs = [user.out_args[out]]
        t = value.type
        if not isinstance(t, TensorType) or not t.has_static_shape():
            return None
        for r in user.body.block.ops:
            if not isinstance(r, df.ReadOp) or r.source.type != t or r.source == value:
                continue
            x = r.source
            buf = self.v(x)
            inner = [u.operation for u in x.uses if user.is_ancestor(u.operation)]
            if buf in self.owned and buf not in taken and is_dead_after(x, user) and _reads_only_where_written(user, inner, outs):
                taken.add(buf)
                return buf
        return None

    # -- ops ---------------------------------------------------------------

    def function(self, f: func.FuncOp) -> None:
        if f.is_declaration:
            return
        self.map, self.owned = {}, set()
        old = f.body.block
        new = Block(arg_types=[memref_of(t) for t in old.arg_types])
        for a, n in zip(old.args, new.args):
            self.map[a] = n
            n.name_hint = a.name_hint
        scope = _Scope()
        self.block(old, new, scope, is_function=True)
        f.body.detach_block(old)
        f.body.add_block(new)
        old.erase(safe_erase=False)
        f.function_type = FunctionType.from_lists(
            [memref_of(t) for t in f.function_type.inputs.data],
            [memref_of(t) for t in f.function_type.outputs.data],
        )

    def block(self, old: Block, new: Block, scope: _Scope, is_function: bool = False) -> None:
        b = Builder(InsertPoint.at_end(new))
        for op in list(old.ops):
            last = new.last_op
            if isinstance(op, func.ReturnOp) and is_function:
                self.ret(b, op, scope)
            elif isinstance(op, scf.YieldOp) and not is_function and self.on_yield is not None:
                self.on_yield(b, op, scope)
            elif isinstance(op, scf.ConditionOp):
                self.condition(b, op, scope)
            else:
                self.op(b, op, scope)
            _locate(last.next_op if last is not None else new.first_op, op.location)

    loop_buffers: list[SSAValue | None] | None = None
    on_yield: Callable[[Builder, scf.YieldOp, _Scope], None] | None = None
    """How the innermost scf.for or scf.if being rebuilt ends its regions."""

    def op(self, b: Builder, op: Operation, scope: _Scope) -> None:
        if isinstance(op, df.MapOp):
            self.df_map(b, op, scope)
        elif isinstance(op, df.ReadOp):
            self.map[op.res] = b.insert(df.ReadOp(self.v(op.source), [self.v(i) for i in op.indices])).res
        elif isinstance(op, df.WriteOp):
            b.insert(df.WriteOp(self.v(op.value), self.v(op.dest), [self.v(i) for i in op.indices], op.wcr_kind))
        elif isinstance(op, tensor.EmptyOp):
            t = memref_of(op.tensor.type)
            assert isinstance(t, MemRefType)
            self.map[op.tensor] = self.alloc(b, t, [self.v(d) for d in op.dynamic_sizes], scope)
        elif isinstance(op, arith.ConstantOp) and isinstance(op.result.type, TensorType):
            self.constant(b, op, scope)
        elif isinstance(op, tensor.DimOp):
            self.map[op.result] = b.insert(memref.DimOp(self.v(op.source), self.v(op.index))).result
        elif isinstance(op, tensor.ExtractOp):
            self.map[op.result] = b.insert(memref.LoadOp.get(self.v(op.tensor), [self.v(i) for i in op.indices])).res
        elif isinstance(op, tensor.InsertOp):
            buf = self.writable(b, op.dest, op, scope, set())
            b.insert(memref.StoreOp.get(self.v(op.scalar), buf, [self.v(i) for i in op.indices]))
            self.map[op.result] = buf
        elif isinstance(op, scf.ForOp):
            self.for_loop(b, op, scope)
        elif isinstance(op, scf.IfOp):
            self.if_op(b, op, scope)
        elif isinstance(op, scf.WhileOp):
            self.while_loop(b, op, scope)
        elif isinstance(op, func.CallOp):
            call = b.insert(
                func.CallOp(op.callee, [self.v(a) for a in op.arguments], [memref_of(t) for t in op.res.types])
            )
            for r, n in zip(op.res, call.res):
                self.map[r] = n
                if isinstance(n.type, MemRefType):
                    scope.owned.append(n)
                    self.owned.add(n)
        elif any(isinstance(t, TensorType) for o in op.walk() for t in (*o.operand_types, *o.result_types)):
            raise CompileError.at(op, f"bufferize: '{op.name}' on tensors is not supported")
        else:
            clone = b.insert(op.clone(value_mapper=dict(self.map)))
            for r, n in zip(op.results, clone.results):
                self.map[r] = n

    def constant(self, b: Builder, op: arith.ConstantOp, scope: _Scope) -> None:
        value = op.value
        assert isinstance(value, DenseIntOrFPElementsAttr)
        t = memref_of(op.result.type)
        assert isinstance(t, MemRefType)
        if is_splat(value):  # allocate and fill with a map
            buf = self.alloc(b, t, [], scope)
            first = next(value.iter_attrs(), None)
            self.fill(b, buf, b.insert(arith.ConstantOp(first)).result if first is not None else None)
            self.map[op.result] = buf
            return
        name = f"__dfc_constant_{self.globals}"
        self.globals += 1
        self.module.body.block.insert_op_before(
            memref.GlobalOp.get(StringAttr(name), t, value, constant=UnitAttr(), alignment=ALIGNMENT),
            self.module.body.block.first_op,
        )
        self.map[op.result] = b.insert(memref.GetGlobalOp(name, t)).memref

    def df_map(self, b: Builder, op: df.MapOp, scope: _Scope) -> None:
        if op.is_buffer_form:
            outs = [self.v(o) for o in op.outs]
        else:
            if op.outs and df.enclosing_maps(op):
                raise CompileError.at(op, "bufferize: a df.map with outputs inside another df.map is not supported")
            taken: set[SSAValue] = set()
            outs = [self.writable(b, o, op, scope, taken, k) for k, o in enumerate(op.outs)]
        bounds = [bd if isinstance(bd, int) else self.v(bd) for bd in op.bounds]
        new = b.insert(df.MapOp(bounds, outs))
        new.attributes |= op.attributes
        for a, n in zip(op.body.block.args, new.body.block.args):
            self.map[a] = n
            n.name_hint = a.name_hint
        self.block(op.body.block, new.body.block, scope)
        for r, buf in zip(op.res, outs):
            self.map[r] = buf

    def for_loop(self, b: Builder, op: scf.ForOp, scope: _Scope) -> None:
        taken: set[SSAValue] = set()
        buffers: list[SSAValue | None] = []
        scalars: list[SSAValue] = []
        for init in op.iter_args:
            if isinstance(init.type, TensorType):
                buffers.append(self.writable(b, init, op, scope, taken))
            else:
                buffers.append(None)
                scalars.append(self.v(init))
        body = Block(arg_types=[op.body.block.args[0].type] + [s.type for s in scalars])
        self.map[op.body.block.args[0]] = body.args[0]
        scalar_args = iter(body.args[1:])
        for arg, buf in zip(op.body.block.args[1:], buffers):
            self.map[arg] = buf if buf is not None else next(scalar_args)
        outer, self.loop_buffers = self.loop_buffers, buffers
        outer_yield, self.on_yield = self.on_yield, self.loop_yield
        inner = _Scope()
        self.block(op.body.block, body, inner)
        self.loop_buffers, self.on_yield = outer, outer_yield
        loop = b.insert(scf.ForOp(self.v(op.lb), self.v(op.ub), self.v(op.step), scalars, Region(body)))
        results = iter(loop.results)
        for r, buf in zip(op.results, buffers):
            self.map[r] = buf if buf is not None else next(results)

    def while_loop(self, b: Builder, op: scf.WhileOp, scope: _Scope) -> None:
        """scf.while: as scf.for, each tensor carried in one buffer, the before
        and after regions and the results all reading it; the condition must
        pass its tensor arguments on unchanged."""
        before_old, after_old = op.before_region.block, op.after_region.block
        cond = before_old.last_op
        assert isinstance(cond, scf.ConditionOp)
        for k, (arg, passed) in enumerate(zip(before_old.args, cond.args)):
            if isinstance(arg.type, TensorType) and passed is not arg:
                raise CompileError.at(op, f"bufferize: an scf.while whose condition passes on another tensor than "
                                          f"its argument #{k} is not supported")
        taken: set[SSAValue] = set()
        buffers: list[SSAValue | None] = []
        scalars: list[SSAValue] = []
        for init in op.arguments:
            if isinstance(init.type, TensorType):
                buffers.append(self.writable(b, init, op, scope, taken))
            else:
                buffers.append(None)
                scalars.append(self.v(init))
        regions = []
        outer, self.loop_buffers = self.loop_buffers, buffers
        outer_yield, self.on_yield = self.on_yield, self.loop_yield
        for old in (before_old, after_old):
            new = Block(arg_types=[s.type for s in scalars])
            scalar_args = iter(new.args)
            for arg, buf in zip(old.args, buffers):
                if buf is None:
                    self.map[arg] = scalar = next(scalar_args)
                    scalar.name_hint = arg.name_hint
                else:
                    self.map[arg] = buf
            self.block(old, new, _Scope())
            regions.append(Region(new))
        self.loop_buffers, self.on_yield = outer, outer_yield
        loop = b.insert(scf.WhileOp(scalars, [s.type for s in scalars], regions[0], regions[1]))
        results = iter(loop.results)
        for r, buf in zip(op.results, buffers):
            self.map[r] = buf if buf is not None else next(results)

    def condition(self, b: Builder, op: scf.ConditionOp, scope: _Scope) -> None:
        """The end of an scf.while's before region: its scalars go on (the tensors stay in their buffers)."""
        assert self.loop_buffers is not None
        flag = self.v(op.condition)
        self.free(b, scope, keep=())
        b.insert(scf.ConditionOp(flag, *(self.v(v) for v, buf in zip(op.args, self.loop_buffers) if buf is None)))

    def if_op(self, b: Builder, op: scf.IfOp, scope: _Scope) -> None:
        """scf.if with memref results: each branch yields a buffer it owns (a
        copy of a value it did not make), which the if's result then owns."""
        regions = []
        outer_yield, self.on_yield = self.on_yield, self.branch_yield
        for region in (op.true_region, op.false_region):
            if not region.blocks:
                regions.append(Region())
                continue
            block = Block()
            self.block(region.block, block, _Scope())
            regions.append(Region(block))
        self.on_yield = outer_yield
        new = b.insert(scf.IfOp(self.v(op.cond), [memref_of(t) for t in op.result_types], regions[0], regions[1]))
        for r, n in zip(op.results, new.results):
            self.map[r] = n
            if isinstance(n.type, MemRefType):
                scope.owned.append(n)
                self.owned.add(n)

    def branch_yield(self, b: Builder, op: scf.YieldOp, scope: _Scope) -> None:
        results = []
        for value in op.arguments:
            buf = self.v(value)
            if isinstance(buf.type, MemRefType) and (buf not in scope.owned or buf in results):
                buf = self.copy(b, buf, scope)
            results.append(buf)
        self.free(b, scope, keep=results)
        b.insert(scf.YieldOp(*results))

    def loop_yield(self, b: Builder, op: scf.YieldOp, scope: _Scope) -> None:
        assert self.loop_buffers is not None
        scalars = []
        moves = []
        for value, buf in zip(op.arguments, self.loop_buffers):
            if buf is None:
                scalars.append(self.v(value))
            elif self.v(value) != buf:
                src = self.v(value)
                if src in self.loop_buffers:  # another iter_arg's buffer (they swap places): copy it aside first
                    src = self.copy(b, src, scope)
                moves.append((src, buf))
        for src, buf in moves:
            b.insert(memref.CopyOp(src, buf))
        self.free(b, scope, keep=())
        b.insert(scf.YieldOp(*scalars))

    def ret(self, b: Builder, op: func.ReturnOp, scope: _Scope) -> None:
        results = []
        for value in op.arguments:
            buf = self.v(value)
            if isinstance(buf.type, MemRefType) and (buf not in scope.owned or buf in results):
                buf = self.copy(b, buf, scope)
            results.append(buf)
        self.free(b, scope, keep=results)
        b.insert(func.ReturnOp(*results))

    def free(self, b: Builder, scope: _Scope, keep: Sequence[SSAValue]) -> None:
        for buf in scope.owned:
            if buf not in keep:
                b.insert(memref.DeallocOp.get(buf))


@dataclass(frozen=True)
class BufferizePass(ModulePass):
    """Convert tensor programs to memref programs (see module docstring)."""

    name = "bufferize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        bufferizer = _Bufferizer(op)
        for f in [o for o in op.ops if isinstance(o, func.FuncOp)]:
            bufferizer.function(f)
