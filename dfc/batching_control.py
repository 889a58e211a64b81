"""Batching rules for control flow and scalars, the base of `dfc.batching`'s batcher.

A batched scalar (an `f64`, `i1`, `index`... that varies with the batch) is a `tensor<k x T>`.

- `tensor.extract` of a batched tensor at unbatched indices: its batched scalar, read by a map over k.
- a pure `arith`/`math` op on scalars, some batched: a map over k applying it in a tasklet.
- `scf.for` (bounds not batched): the loop once, its iter_args batched where their initial value or
  what the body yields is (to a fixed point); the others stay as they were.
- `scf.while`: its carried values batched likewise. When the condition does not vary with the batch,
  that is all. When it does (a data-dependent trip count per lane), as JAX's `while_loop` batching
  rule: every carried value is batched, the loop runs while any lane's condition holds, and a lane
  whose condition is false keeps its carried values (`arith.select` per element), so that its
  results are those of its own last test. The loop's regions must be free of side effects (a lane
  that is done runs the body again, its result discarded).
- `scf.if`: with a predicate that does not vary, both branches batched in place, a result batched
  when either branch yields a batched value. With a batched predicate, as JAX's `cond` batching
  rule: both branches run (so they must be free of side effects) and each result is selected per
  lane.

Anything else with a batched operand raises `Unbatchable`, naming the op.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Any

from xdsl.builder import Builder
from xdsl.dialects import arith, func, scf, tensor
from xdsl.dialects.builtin import AnyFloat, DenseIntOrFPElementsAttr, IndexType, IntegerType, TensorType, i1
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.traits import is_side_effect_free

from dfc.dialects import df
from dfc.dialects import nn_shape as nns


class Unbatchable(Exception):
    """An op with a batched operand and no batching rule."""

    def __init__(self, op: Operation, why: str = "no batching rule"):
        super().__init__(f"{why} for {op.name} with a batched operand")
        self.op = op


def lifted(t: Any, k: int) -> TensorType:
    """The type `t` (a tensor or a scalar) with a leading dimension k."""
    if isinstance(t, TensorType):
        return TensorType(t.element_type, [k, *t.get_shape()])
    return TensorType(t, [k])


def liftable(t: Any) -> bool:
    """Whether values of type `t` can be batched: a tensor of static shape, or a scalar."""
    if isinstance(t, TensorType):
        return all(d >= 0 for d in t.get_shape())
    return _scalar(t)


def _scalar(t: Any) -> bool:
    return isinstance(t, AnyFloat | IntegerType | IndexType)


def _side_effect_free(regions: Sequence[Region], functions: dict[str, func.FuncOp], seen: set[str]) -> bool:
    """Whether running `regions` (calls followed) has no effect but its results, and cannot trap."""
    for region in regions:
        for op in region.ops:
            if isinstance(op, func.CallOp):
                name = op.callee.root_reference.data
                callee = functions.get(name)
                if callee is None or callee.is_declaration:
                    return False
                if name not in seen:
                    seen.add(name)
                    if not _side_effect_free([callee.body], functions, seen):
                        return False
            elif not isinstance(op, func.ReturnOp | scf.YieldOp | scf.ConditionOp) and not is_side_effect_free(op):
                return False
            elif any(isinstance(inner, _TRAPPING) for inner in op.walk()):
                return False
    return True


_TRAPPING = (arith.DivSIOp, arith.DivUIOp, arith.RemSIOp, arith.RemUIOp, arith.FloorDivSIOp, arith.CeilDivSIOp,
             arith.CeilDivUIOp)
"""Integer divisions: run on a lane whose branch is not taken (or whose loop is done), they may trap."""


class ControlFlowRules:
    """The rules above; `dfc.batching._Batcher` provides `k`, `functions`, `row_bytes` and `op`."""

    k: int
    functions: dict[str, func.FuncOp]
    row_bytes: int

    def op(self, op: Operation, b: Builder, env: dict[SSAValue, SSAValue], batch: set[SSAValue]) -> None:
        raise NotImplementedError

    def control(self, op: Operation, b: Builder, env: dict[SSAValue, SSAValue], batch: set[SSAValue]) -> bool:
        """Batch `op` if one of the rules above is for it; False if none is."""
        if isinstance(op, scf.ForOp):
            self.scf_for(op, b, env, batch)
        elif isinstance(op, scf.WhileOp):
            self.scf_while(op, b, env, batch)
        elif isinstance(op, scf.IfOp):
            self.scf_if(op, b, env, batch)
        elif isinstance(op, tensor.ExtractOp):
            if any(env[i] in batch for i in op.indices):
                raise Unbatchable(op, "an index that varies with the batch")
            source = env[op.tensor]
            value = source if not op.indices else self.lanes(
                b, op.result.type, [source], lambda bb, iv, vals: vals[0], [[env[i] for i in op.indices]])
            env[op.result] = value
            batch.add(value)
        elif (op.dialect_name() in ("arith", "math") and len(op.results) == 1 and not op.regions
              and is_side_effect_free(op) and all(_scalar(v.type) for v in (*op.operands, *op.results))):
            self.scalar(op, b, env, batch)
        else:
            return False
        return True

    # -- scalars -------------------------------------------------------------------------------------

    def lanes(self, b: Builder, element: Attribute, batched: list[SSAValue], build: Any,
              indices: list[list[SSAValue]] | None = None, scalars: Sequence[SSAValue] = ()) -> SSAValue:
        """A `tensor<k x element>` whose lane i is `build(builder, iv, values)` in a map over k, values
        the lanes i of `batched` (read at [i, *indices]) then `scalars` (unbatched), inside a tasklet
        unless `build` returns one of them."""
        k = self.k
        empty = b.insert(tensor.EmptyOp([], TensorType(element, [k]))).results[0]
        block = Block(arg_types=[IndexType(), empty.type])
        iv, out = block.args
        bb = Builder(InsertPoint.at_end(block))
        reads = [bb.insert(df.ReadOp(v, [iv, *(indices[n] if indices else [])])).res
                 for n, v in enumerate(batched)]
        inputs = [*reads, *scalars]
        body = Block(arg_types=[v.type for v in inputs])
        value = build(Builder(InsertPoint.at_end(body)), iv, list(body.args))
        if value in body.args:  # a plain copy: no tasklet
            value = inputs[list(body.args).index(value)]
        else:
            body.add_op(df.YieldOp(value))
            value = bb.insert(df.TaskletOp(inputs, [element], body)).res[0]
        bb.insert(df.WriteOp(value, out, [iv]))
        return b.insert(df.MapOp([k], [empty], block)).results[0]

    def scalar(self, op: Operation, b: Builder, env: dict[SSAValue, SSAValue], batch: set[SSAValue]) -> None:
        """A pure scalar op with batched operands, lane by lane."""
        varying = [o for o in op.operands if env[o] in batch]
        fixed = [o for o in dict.fromkeys(op.operands) if env[o] not in batch]
        order = list(dict.fromkeys(varying)) + fixed

        def build(bb: Builder, iv: SSAValue, values: list[SSAValue]) -> SSAValue:
            mapping = dict(zip(order, values))
            return bb.insert(op.clone(value_mapper=mapping)).results[0]

        distinct = list(dict.fromkeys(varying))
        value = self.lanes(b, op.results[0].type, [env[o] for o in distinct], build,
                           scalars=[env[o] for o in fixed])
        env[op.results[0]] = value
        batch.add(value)
        self.row_bytes += value_bytes(op.results[0].type)

    def spread(self, b: Builder, value: SSAValue) -> SSAValue:
        """An unbatched `value` repeated along a new leading dimension of k."""
        t = value.type
        if isinstance(t, TensorType):
            shape = t.get_shape()
            return b.insert(nns.BroadcastInDimOp(value, [self.k, *shape], list(range(1, len(shape) + 1)))).results[0]
        return self.lanes(b, t, [], lambda bb, iv, vals: vals[0], scalars=[value])

    def select(self, b: Builder, pred: SSAValue, on_true: SSAValue, on_false: SSAValue,
               batch: set[SSAValue]) -> SSAValue:
        """Per lane i, `on_true[i]` where `pred[i]` (a `tensor<k x i1>`), else `on_false[i]`; either may
        be unbatched."""
        t = on_true.type if on_true in batch else lifted(on_true.type, self.k)
        shape = t.get_shape()
        empty = b.insert(tensor.EmptyOp([], t)).results[0]
        block = Block(arg_types=[IndexType()] * len(shape) + [t])
        ivs, out = list(block.args[:-1]), block.args[-1]
        bb = Builder(InsertPoint.at_end(block))
        p = bb.insert(df.ReadOp(pred, ivs[:1])).res
        sides = [bb.insert(df.ReadOp(v, ivs if v in batch else ivs[1:])).res if isinstance(v.type, TensorType) else v
                 for v in (on_true, on_false)]
        body = Block(arg_types=[p.type, *(s.type for s in sides)])
        body.add_op(chosen := arith.SelectOp(*body.args))
        body.add_op(df.YieldOp(chosen.result))
        value = bb.insert(df.TaskletOp([p, *sides], [t.element_type], body)).res[0]
        bb.insert(df.WriteOp(value, out, ivs))
        return b.insert(df.MapOp(list(shape), [empty], block)).results[0]

    # -- regions -------------------------------------------------------------------------------------

    def inline(self, src: Block, args: Sequence[SSAValue], b: Builder, env: dict[SSAValue, SSAValue],
               batch: set[SSAValue]) -> list[SSAValue]:
        """`src`'s ops but its terminator batched after `b`, its arguments bound to `args`; the
        terminator's operands as mapped."""
        env.update(zip(src.args, args))
        term = src.last_op
        assert term is not None
        for op in src.ops:
            if op is not term:
                self.op(op, b, env, batch)
        return [env[v] for v in term.operands]

    def body(self, src: Block, mask: Sequence[bool], env: dict[SSAValue, SSAValue],
             batch: set[SSAValue]) -> tuple[Block, list[SSAValue], list[bool]]:
        """`src` batched into a new block (without terminator) whose arguments are `src`'s, lifted where
        `mask`; with the terminator's operands as mapped and which of them are batched."""
        block = Block(arg_types=[lifted(a.type, self.k) if m else a.type for a, m in zip(src.args, mask)])
        batch.update(a for a, m in zip(block.args, mask) if m)
        values = self.inline(src, block.args, Builder(InsertPoint.at_end(block)), env, batch)
        return block, values, [v in batch for v in values]

    def trial(self, src: Block, mask: Sequence[bool], env: dict[SSAValue, SSAValue],
              batch: set[SSAValue]) -> list[bool]:
        """Which of `src`'s terminator operands are batched when its arguments are as `mask` says."""
        row_bytes = self.row_bytes
        block, _, out = self.body(src, mask, dict(env), set(batch))
        self.row_bytes = row_bytes
        for op in reversed(list(block.ops)):
            op.detach()
            op.erase()
        return out

    def check_liftable(self, op: Operation, types: Sequence[Any], mask: Sequence[bool]) -> None:
        for t, m in zip(types, mask):
            if m and not liftable(t):
                raise Unbatchable(op, f"a value of type {t} that cannot be batched")

    def yielded(self, block: Block, values: list[SSAValue], mask: Sequence[bool], batch: set[SSAValue]) -> list[SSAValue]:
        """`values` with those that `mask` wants batched and are not spread at the end of `block`."""
        b = Builder(InsertPoint.at_end(block))
        return [self.spread(b, v) if m and v not in batch else v for v, m in zip(values, mask)]

    def scf_for(self, op: scf.ForOp, b: Builder, env: dict[SSAValue, SSAValue], batch: set[SSAValue]) -> None:
        if any(env[v] in batch for v in (op.lb, op.ub, op.step)):
            raise Unbatchable(op, "a trip count that varies with the batch")
        src = op.body.block
        carried = [env[v] in batch for v in op.iter_args]
        while True:
            out = self.trial(src, [False, *carried], env, batch)
            grown = [c or o for c, o in zip(carried, out)]
            if grown == carried:
                break
            carried = grown
        self.check_liftable(op, [v.type for v in op.iter_args], carried)
        block, values, _ = self.body(src, [False, *carried], env, batch)
        block.add_op(scf.YieldOp(*self.yielded(block, values, carried, batch)))
        inits = [self.spread(b, env[v]) if m and env[v] not in batch else env[v] for v, m in zip(op.iter_args, carried)]
        new = b.insert(scf.ForOp(env[op.lb], env[op.ub], env[op.step], inits, block))
        new.attributes.update(op.attributes)
        self.bind(op.results, new.results, carried, env, batch)

    def bind(self, old: Sequence[SSAValue], new: Sequence[SSAValue], mask: Sequence[bool],
             env: dict[SSAValue, SSAValue], batch: set[SSAValue]) -> None:
        for o, n, m in zip(old, new, mask):
            env[o] = n
            if m:
                batch.add(n)
                self.row_bytes += value_bytes(o.type)

    def scf_while(self, op: scf.WhileOp, b: Builder, env: dict[SSAValue, SSAValue], batch: set[SSAValue]) -> None:
        before, after = op.before_region.block, op.after_region.block
        carried = [env[v] in batch for v in op.arguments]
        while True:
            cond, *forwarded = self.trial(before, carried, env, batch)
            if cond:
                carried = [True] * len(carried)
                cond, *forwarded = self.trial(before, carried, env, batch)
            grown = [c or o for c, o in zip(carried, self.trial(after, forwarded, env, batch))]
            if grown == carried:
                break
            carried = grown
        types = [v.type for v in op.arguments]
        self.check_liftable(op, types, carried)
        if cond and not _side_effect_free([op.before_region, op.after_region], self.functions, set()):
            raise Unbatchable(op, "a trip count that varies with the batch and a body with side effects")
        inits = [self.spread(b, env[v]) if m and env[v] not in batch else env[v] for v, m in zip(op.arguments, carried)]
        first, (test, *sent), _ = self.body(before, carried, env, batch)
        if not cond:
            first.add_op(scf.ConditionOp(test, *sent))
            second, values, _ = self.body(after, forwarded, env, batch)
            second.add_op(scf.YieldOp(*self.yielded(second, values, carried, batch)))
        else:  # every lane runs until the last is done, a lane that is done keeping its values
            if sent != list(first.args):
                raise Unbatchable(op, "a trip count that varies with the batch and a condition passing on "
                                      "other values than its arguments")
            first.add_op(scf.ConditionOp(self.any_lane(Builder(InsertPoint.at_end(first)), test), *sent))
            second = Block(arg_types=[a.type for a in first.args])
            batch.update(second.args)
            sb = Builder(InsertPoint.at_end(second))
            running, *again = self.inline(before, second.args, sb, env, batch)
            values = self.inline(after, again, sb, env, batch)
            second.add_op(scf.YieldOp(*[self.select(sb, running, v, o, batch) for v, o in zip(values, second.args)]))
        new = b.insert(scf.WhileOp(inits, [v.type for v in sent], [first], [second]))
        new.attributes.update(op.attributes)
        self.bind(op.results, new.results, forwarded, env, batch)

    def any_lane(self, b: Builder, pred: SSAValue) -> SSAValue:
        """The `i1` that is true when some lane of `pred` (a `tensor<k x i1>`) is."""
        init = b.insert(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(TensorType(i1, []), [0]))).result
        block = Block(arg_types=[IndexType(), init.type])
        iv, out = block.args
        bb = Builder(InsertPoint.at_end(block))
        bb.insert(df.WriteOp(bb.insert(df.ReadOp(pred, [iv])).res, out, [], "max"))
        return b.insert(tensor.ExtractOp(b.insert(df.MapOp([self.k], [init], block)).results[0], [], i1)).result

    def scf_if(self, op: scf.IfOp, b: Builder, env: dict[SSAValue, SSAValue], batch: set[SSAValue]) -> None:
        regions = [op.true_region, op.false_region]
        if env[op.cond] not in batch:
            parts = [self.body(r.block, [], env, batch) if r.blocks else None for r in regions]
            mask = [any(p is not None and p[2][i] for p in parts) for i in range(len(op.results))]
            self.check_liftable(op, [r.type for r in op.results], mask)
            for part in parts:
                if part is not None:
                    part[0].add_op(scf.YieldOp(*self.yielded(part[0], part[1], mask, batch)))
            types = [lifted(r.type, self.k) if m else r.type for r, m in zip(op.results, mask)]
            new = b.insert(scf.IfOp(env[op.cond], types, [parts[0][0]], [parts[1][0]] if parts[1] else None))
            new.attributes.update(op.attributes)
            self.bind(op.results, new.results, mask, env, batch)
            return
        if not _side_effect_free(regions, self.functions, set()):
            raise Unbatchable(op, "a predicate that varies with the batch and a branch with side effects")
        self.check_liftable(op, [r.type for r in op.results], [True] * len(op.results))
        branches = [self.inline(r.block, [], b, env, batch) if r.blocks else [] for r in regions]
        pred = env[op.cond]
        for r, yes, no in zip(op.results, *branches):
            value = yes if yes is no else self.select(b, pred, yes, no, batch)
            self.bind([r], [value], [value in batch or value is not yes], env, batch)


def value_bytes(t: Any) -> int:
    """The bytes of a value of type `t` (a static tensor or a scalar)."""
    shape = t.get_shape() if isinstance(t, TensorType) else ()
    element = t.element_type if isinstance(t, TensorType) else t
    return prod(shape) * max(1, getattr(element, "bitwidth", 64) // 8)

