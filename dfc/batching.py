"""A function batched over a leading dimension of some arguments, in IR: `vmap` for the basis loops.

`batched(module, name, mask, k)` adds `@<name>_batched_<mask>` to `module`: @name with each
argument i where `mask[i]` taking a tensor with one more, leading, dimension of size k, computing in
one pass what k calls of @name on its slices would. A value that depends on no batched argument is
computed once, as in @name (the forward part of a vector-Jacobian product), and one that does gains
the leading dimension: the basis loops of `jacrev`/`jacfwd` (dfc/basis_loops.py) push every seed of
a Jacobian through @f_grad or @f_jvp this way, as JAX's `vmap`, so that products of a matrix and one
vector become products of two matrices (GEMMs) and each loop over elements runs k times as long.

Rules, for an op with a batched operand (any other op is copied as it is):

- `df.map`: one more map variable, outermost, of extent k; a read of a batched tensor and a write to
  a batched output are indexed by it first. An output is batched when its initial value is or a
  write to it stores a batched value (to a fixed point: reading a batched output makes a value
  batched). The outputs left unbatched are computed by a copy of the map without the batched ones,
  since a `wcr` write repeated k times would reduce their values k times.
- nn elementwise ops (`ElementwiseUnaryOp`, `ElementwiseBinaryOp`) and `nn.broadcast`: numpy
  broadcasting, a batched operand first reshaped to the result's rank plus one.
- `nn.dot_general`: the batch dimension a batching dimension of both operands when both are
  batched; a free dimension of one when one is, moved first by a transpose when others precede it.
- `nn.transpose`, `nn.reshape`, `nn.reduce`, `nn.broadcast_in_dim`: their dimensions shifted by one.
- `func.call`: a call of the callee batched in the call's batched arguments (once per callee and
  mask).
- any other nn op with a pure expansion (`nn_expand.EXPANSIONS`: softmax, convolutions, pooling,
  gathers...): its expansion, built aside and batched op by op.
- control flow (`scf.for`, `scf.while`, `scf.if`), `tensor.extract` and scalar `arith`/`math` ops:
  dfc/batching_control.py (a while loop or a branch whose condition varies with the batch runs every
  lane, masked, as JAX's rules do).

Any other op with a batched operand (a map with a nested region reading a batched tensor, a loop
whose trip count varies with the batch) raises `Unbatchable`, and nothing is added: the basis loops
run the seeds one at a time, `dfc.vmap` reports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.builder import Builder
from xdsl.dialects import func, tensor
from xdsl.dialects.builtin import DenseArrayBase, IndexType, ModuleOp, TensorType, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from dfc.batching_control import ControlFlowRules, Unbatchable, liftable, lifted, value_bytes
from dfc.dialects import df, nn
from dfc.dialects import nn_shape as nns
from dfc.dialects.nn_base import ElementwiseBinaryOp, ElementwiseUnaryOp
from dfc.dialects.nn_contract import DotGeneralOp
from dfc.dialects.nn_expand import EXPANSIONS, expand
from dfc.dialects.xdsl_fixes import is_trivially_dead


def batched(module: ModuleOp, name: str, mask: Sequence[bool], k: int) -> tuple[str, list[bool]]:
    """Add @name batched by k in the arguments `mask` selects (and the functions it calls, batched);
    return its name and which of its results are batched (the others are @name's, unbatched)."""
    batcher = _Batcher(module, k)
    result = batcher.function(name, tuple(mask))
    for f in batcher.added:
        module.body.block.add_op(f)
    return result


def bytes_per_row(module: ModuleOp, name: str, mask: Sequence[bool]) -> int:
    """The bytes of every value of @name (and its callees) that batching in `mask` would give a leading
    dimension, per element of it: a bound on what each row adds to the batched pass (not all are live
    at once). Adds nothing to `module`."""
    batcher = _Batcher(module, 1)
    batcher.function(name, tuple(mask))
    return batcher.row_bytes


class _Batcher(ControlFlowRules):
    def __init__(self, module: ModuleOp, k: int):
        self.k = k
        self.functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
        self.done: dict[tuple[str, tuple[bool, ...]], tuple[str, list[bool]]] = {}
        self.added: list[func.FuncOp] = []
        self.row_bytes = 0
        """The bytes of one row of the batched values (their unbatched types)."""

    def function(self, name: str, mask: tuple[bool, ...]) -> tuple[str, list[bool]]:
        key = (name, mask)
        if key in self.done:
            return self.done[key]
        f = self.functions[name]
        if f.is_declaration or len(f.body.blocks) != 1:
            raise Unbatchable(f)
        self.done[key] = ("", [])  # a recursive call finds this and is refused
        inputs = f.function_type.inputs.data
        if any(m and not liftable(t) for t, m in zip(inputs, mask)):
            raise Unbatchable(f)
        block = Block(arg_types=[lifted(t, self.k) if m else t for t, m in zip(inputs, mask)])
        env: dict[SSAValue, SSAValue] = dict(zip(f.body.block.args, block.args))
        batch = {a for a, m in zip(block.args, mask) if m}
        b = Builder(InsertPoint.at_end(block))
        values: list[SSAValue] = []
        for op in f.body.block.ops:
            if isinstance(op, func.ReturnOp):
                values = [env[v] for v in op.arguments]
                b.insert(func.ReturnOp(*values))
            else:
                self.op(op, b, env, batch)
        new_name = base = f"{name}_batched_{''.join('b' if m else 'u' for m in mask)}"
        taken = {*self.functions, *(f.sym_name.data for f in self.added)}
        suffix = 0
        while new_name in taken:  # batched before, by another seed of the module (maybe by another k)
            suffix += 1
            new_name = f"{base}_{suffix}"
        self.added.append(func.FuncOp(new_name, (block.arg_types, [v.type for v in values]), Region(block),
                                      "private"))
        self.done[key] = (new_name, [v in batch for v in values])
        return self.done[key]

    def op(self, op: Operation, b: Builder, env: dict[SSAValue, SSAValue], batch: set[SSAValue]) -> None:
        """Copy `op` batched after `b`, mapping its values in `env` and adding the batched ones to `batch`."""
        if not any(env.get(o) in batch for inner in op.walk() for o in inner.operands):
            used = {o: env[o] for inner in op.walk() for o in inner.operands if o in env}
            new = b.insert(op.clone(value_mapper=used))
            env.update(zip(op.results, new.results))
            return
        if isinstance(op, df.MapOp) and not op.is_buffer_form:
            return self.map(op, b, env, batch)
        if isinstance(op, func.CallOp):
            mask = tuple(env[a] in batch for a in op.arguments)
            name, out_mask = self.function(op.callee.root_reference.data, mask)
            if not name:
                raise Unbatchable(op)
            types = [lifted(r.type, self.k) if m else r.type for r, m in zip(op.results, out_mask)]
            call = b.insert(func.CallOp(name, [env[a] for a in op.arguments], types))
            for old, new, m in zip(op.results, call.results, out_mask):
                env[old] = new
                if m:
                    batch.add(new)
                    self.row_bytes += value_bytes(old.type)
            return
        if self.control(op, b, env, batch):
            return
        if len(op.results) != 1 or not all(_static_tensor(v.type) for v in (*op.operands, *op.results)):
            raise Unbatchable(op)
        if type(op) in EXPANSIONS and not isinstance(op, _RULED):
            return self.expanded(op, b, env, batch)
        result = self.tensor_op(op, b, [env[o] for o in op.operands], [env[o] in batch for o in op.operands])
        env[op.results[0]] = result
        batch.add(result)
        self.row_bytes += value_bytes(op.results[0].type)

    def expanded(self, op: Operation, b: Builder, env: dict[SSAValue, SSAValue], batch: set[SSAValue]) -> None:
        """An nn op without a rule of its own by its pure expansion (maps, nn ops), batched op by op."""
        scratch = Block()
        stand_in = op.clone()
        scratch.add_op(stand_in)
        try:
            value = expand(Builder(InsertPoint.before(stand_in)), stand_in)
            for inner in list(scratch.ops):
                if inner is not stand_in:
                    self.op(inner, b, env, batch)
            env[op.results[0]] = env[value]
        finally:
            for inner in reversed(list(scratch.ops)):
                inner.detach()
                inner.erase()

    def tensor_op(self, op: Operation, b: Builder, args: list[SSAValue], mask: list[bool]) -> SSAValue:
        """The batched result of a one-result op on tensors."""
        k, out = self.k, op.results[0].type
        props = dict(op.properties)
        if isinstance(op, ElementwiseUnaryOp):
            return _rebuild(b, op, args, lifted(out, k), props)
        if isinstance(op, ElementwiseBinaryOp | nn.BroadcastOp):
            rank = out.get_num_dims()
            args = [self.unsqueezed(b, a, rank) if m else a for a, m in zip(args, mask)]
            return _rebuild(b, op, args, lifted(out, k), props)
        if isinstance(op, nn.TransposeOp):
            props["permutation"] = _ints([0, *(p + 1 for p in op.permutation.get_values())])
            return _rebuild(b, op, args, lifted(out, k), props)
        if isinstance(op, nn.ReshapeOp):
            return _rebuild(b, op, args, lifted(out, k), props)
        if isinstance(op, nn.ReduceOp):
            props["axes"] = _ints([a + 1 for a in op.reduced_axes])
            return _rebuild(b, op, args, lifted(out, k), props)
        if isinstance(op, nns.BroadcastInDimOp):
            props["broadcast_dimensions"] = _ints([0, *(d + 1 for d in op.broadcast_dimensions.get_values())])
            return _rebuild(b, op, args, lifted(out, k), props)
        if isinstance(op, DotGeneralOp):
            return self.dot_general(op, b, args, mask)
        raise Unbatchable(op)

    def unsqueezed(self, b: Builder, value: SSAValue, rank: int) -> SSAValue:
        """A batched `value` reshaped to rank + 1 (ones after the batch dimension), for numpy broadcasting."""
        shape = value.type.get_shape()
        if len(shape) == rank + 1:
            return value
        return b.insert(nn.ReshapeOp(value, [shape[0], *[1] * (rank + 1 - len(shape)), *shape[1:]])).results[0]

    def dot_general(self, op: DotGeneralOp, b: Builder, args: list[SSAValue], mask: list[bool]) -> SSAValue:
        def shifted(dims: DenseArrayBase, by: bool) -> list[int]:
            return [d + by for d in dims.get_values()]

        lb, rb = shifted(op.lhs_batching_dimensions, mask[0]), shifted(op.rhs_batching_dimensions, mask[1])
        lc, rc = shifted(op.lhs_contracting_dimensions, mask[0]), shifted(op.rhs_contracting_dimensions, mask[1])
        if all(mask):
            return b.insert(DotGeneralOp(*args, ([0, *lb], [0, *rb]), (lc, rc))).results[0]
        product = b.insert(DotGeneralOp(*args, (lb, rb), (lc, rc))).results[0]
        # the batch dimension is lhs's first free one, or rhs's first after lhs's free ones
        lhs_rank = args[0].type.get_num_dims()
        at = len(lb) + (0 if mask[0] else lhs_rank - len(lb) - len(lc))
        if at == 0:
            return product
        rank = product.type.get_num_dims()
        order = [at, *(d for d in range(rank) if d != at)]
        return b.insert(nn.TransposeOp(product, order)).results[0]

    def map(self, op: df.MapOp, b: Builder, env: dict[SSAValue, SSAValue], batch: set[SSAValue]) -> None:
        """A map's batched outputs by a map with a batch variable, its others by a copy without them."""
        body, out_args = op.body.block, list(op.out_args)
        outer = {o for inner in op.walk() for o in inner.operands if env.get(o) in batch}
        if any(not isinstance(x, int) and x in outer for x in op.bounds):
            raise Unbatchable(op, "an extent that varies with the batch")
        scalars = {o for o in outer if not isinstance(o.type, TensorType)}  # read at the batch variable
        chosen = {i for i, o in enumerate(op.outs) if env[o] in batch}
        while True:  # the values of the body that vary with the batch, to a fixed point over the outputs
            varying: set[SSAValue] = {out_args[i] for i in chosen} | scalars
            for inner in body.ops:
                if isinstance(inner, df.ReadOp):
                    if inner.source in outer or inner.source in varying:
                        varying.add(inner.res)
                elif inner.regions and not isinstance(inner, df.TaskletOp):
                    if any(o in outer or o in varying for nested in inner.walk() for o in nested.operands):
                        raise Unbatchable(inner)
                elif any(o in outer and o not in scalars for o in inner.operands):
                    raise Unbatchable(inner)  # a batched tensor used otherwise than by a read
                elif any(o in varying for o in inner.operands):
                    varying.update(inner.results)
            grown = chosen | {i for i, a in enumerate(out_args) for u in a.uses if isinstance(u.operation, df.WriteOp)
                              and any(v in varying for v in (u.operation.value, *u.operation.indices))}
            if grown == chosen:
                break
            chosen = grown
        unbatched = [i for i in range(len(out_args)) if i not in chosen]
        for keep, batched_part in ((unbatched, False), (sorted(chosen), True)):
            if keep:
                self.map_part(op, keep, batched_part, outer | varying, b, env, batch)

    def map_part(self, op: df.MapOp, keep: list[int], batched_part: bool, varying: set[SSAValue], b: Builder,
                 env: dict[SSAValue, SSAValue], batch: set[SSAValue]) -> None:
        """The map computing outputs `keep` of `op`, with the batch variable when `batched_part`."""
        k, out_args = self.k, list(op.out_args)
        inits = []
        for i in keep:
            init = env[op.outs[i]]
            if batched_part and init not in batch and isinstance(init.owner, tensor.EmptyOp) and not init.owner.dynamic_sizes:
                init = b.insert(tensor.EmptyOp([], lifted(init.type, k))).results[0]  # no values to repeat
            elif batched_part and init not in batch:
                shape = init.type.get_shape()
                init = b.insert(nns.BroadcastInDimOp(init, [k, *shape], list(range(1, len(shape) + 1)))).results[0]
            inits.append(init)
        bounds = [x if isinstance(x, int) else env[x] for x in op.bounds]
        bounds = [k, *bounds] if batched_part else bounds
        block = Block(arg_types=[IndexType()] * len(bounds) + [v.type for v in inits])
        mapper: dict[SSAValue, SSAValue] = {o: env[o] for inner in op.walk() for o in inner.operands if o in env}
        ivs = block.args[1:len(bounds)] if batched_part else block.args[:len(bounds)]
        mapper.update(zip(op.ivs, ivs))
        mapper.update({out_args[i]: a for i, a in zip(keep, block.args[len(bounds):])})
        lead = [block.args[0]] if batched_part else []
        if batched_part:  # a batched scalar of the enclosing block: its lane
            for o in dict.fromkeys(o for inner in op.body.block.ops for o in inner.operands
                                   if not isinstance(o.type, TensorType) and env.get(o) in batch):
                read = df.ReadOp(env[o], lead)
                block.add_op(read)
                mapper[o] = read.res
        for inner in op.body.block.ops:
            if isinstance(inner, df.WriteOp) and inner.dest in out_args:
                if out_args.index(inner.dest) in keep:
                    block.add_op(df.WriteOp(mapper[inner.value], mapper[inner.dest],
                                            [*lead, *(mapper.get(i, i) for i in inner.indices)],
                                            inner.wcr.data if inner.wcr else None))
                continue
            if batched_part and isinstance(inner, df.ReadOp) and inner.source in varying:
                read = df.ReadOp(mapper[inner.source], [*lead, *(mapper.get(i, i) for i in inner.indices)])
                block.add_op(read)
                mapper[inner.res] = read.res
                continue
            new = inner.clone(value_mapper=mapper)
            block.add_op(new)
            mapper.update(zip(inner.results, new.results))
        _erase_dead(block)
        dropped = {out_args[i] for i in range(len(out_args)) if i not in keep}
        if any(o in dropped or (not batched_part and o in batch) for inner in block.walk() for o in inner.operands):
            raise Unbatchable(op)  # a kept output reads a dropped one, or an unbatched one a batched value
        new_map = b.insert(df.MapOp(bounds, inits, block))
        new_map.attributes.update(op.attributes)
        for i, r in zip(keep, new_map.results):
            env[op.results[i]] = r
            if batched_part:
                batch.add(r)
                self.row_bytes += value_bytes(op.results[i].type)


_RULED = (ElementwiseUnaryOp, ElementwiseBinaryOp, nn.BroadcastOp, nn.TransposeOp, nn.ReshapeOp, nn.ReduceOp,
          nns.BroadcastInDimOp, DotGeneralOp)
"""The nn ops batched by a rule of their own rather than through their expansion."""


def _static_tensor(t: Any) -> bool:
    return isinstance(t, TensorType) and all(d >= 0 for d in t.get_shape())


def _ints(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def _rebuild(b: Builder, op: Operation, args: list[SSAValue], result: TensorType, props: dict) -> SSAValue:
    """`op`'s kind of op on `args`, of type `result`, with `props`."""
    new = type(op).create(operands=args, result_types=[result], properties=props, attributes=dict(op.attributes))
    return b.insert(new).results[0]


def _erase_dead(block: Block) -> None:
    changed = True
    while changed:
        changed = False
        for inner in reversed(list(block.ops)):
            if is_trivially_dead(inner):
                inner.detach()
                inner.erase()
                changed = True
