"""`pairwise-sums`: float sum loops run in fixed blocks whose sums are combined pairwise.

`lower-dataflow` marks each loop it builds that accumulates wcr writes in
registers (`scf.for` iter_args starting at the reduction's identity, each
combined with one term per iteration) with the unit attribute `REDUCTION`.
Such a loop of step 1 whose trip count is not statically at most `block`,
with a float sum or product checked to have that form (`_ordered`), becomes a loop over blocks of `block` consecutive iterations (the last one
shorter): each block accumulates its float sums and products from the
identity in a loop of its own (the loop LLVM vectorises), and the block
results are combined in a binary-counter cascade, a per-accumulator stack of
64 partial results on the stack (`memref.alloca`): after block k, the
partials of the trailing-one levels of k are folded into it, so partials of
equal size are combined pairwise, and at the end the levels of the block
count's set bits, lowest first. The association of the terms is therefore a
function of the trip count alone: the error grows with log2(trips / block)
instead of the trip count (NumPy's pairwise summation), and does not
depend on how the iterations around the loop are split between threads
(`lower-dataflow` fixes the chunks of float reductions for that). Other
accumulators (maxima, minima, integers: exact in any order) are carried
through the blocks. The mark is removed. Runs after `reuse-sibling-loops`,
which matches the unblocked loops.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IndexType, IntegerType, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from dfc.dialects.index_exprs import int_constant
from dfc.passes.scf_builders import for_loop, index_constant

REDUCTION = "df.reduction"
"""The unit attribute of an `scf.for` whose iter_args are wcr accumulators."""

_LEVELS = 64
"""Stack levels: one per bit of the block count."""

_IDENTITIES = {arith.AddfOp: 0.0, arith.MulfOp: 1.0}
"""The float sums and products, with the value each block starts from."""


def _ordered(loop: scf.ForOp) -> list[int]:
    """The iter_args of `loop` that are float sums or products: the initial
    value is the identity constant, and the yielded value is `arith.addf`/
    `mulf` of the iter_arg and a term, each used only there."""
    body = loop.body.block
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)
    found = []
    for k, (init, acc, new) in enumerate(zip(loop.iter_args, body.args[1:], yielded.operands)):
        owner, start = new.owner, init.owner
        if (type(owner) in _IDENTITIES and isinstance(acc.type, AnyFloat) and acc in owner.operands
                and acc.has_one_use() and new.has_one_use() and isinstance(start, arith.ConstantOp)
                and isinstance(start.value, FloatAttr) and start.value.value.data == _IDENTITIES[type(owner)]):
            found.append(k)
    return found


def _index_to_i64(b: Builder, v: SSAValue) -> SSAValue:
    return b.insert(arith.IndexCastOp(v, IntegerType(64))).result


def _i64_to_index(b: Builder, v: SSAValue) -> SSAValue:
    return b.insert(arith.IndexCastOp(v, IndexType())).result


def _combine(b: Builder, like: Operation, x: SSAValue, y: SSAValue) -> SSAValue:
    """x (op) y with the op of accumulator update `like`."""
    return b.insert(type(like)(x, y)).result


def _blocked(loop: scf.ForOp, ordered: list[int], block: int) -> None:
    """Replace `loop` by its blocked form (see the module docstring)."""
    b = Builder(InsertPoint.before(loop))
    body = loop.body.block
    updates = [body.last_op.operands[k].owner for k in ordered]  # type: ignore[union-attr]
    size = index_constant(b, block)
    one = index_constant(b, 1)
    zero = index_constant(b, 0)
    trips = b.insert(arith.SubiOp(loop.ub, loop.lb)).result
    blocks = b.insert(arith.DivUIOp(b.insert(arith.AddiOp(trips, b.insert(arith.SubiOp(size, one)).result)).result,
                                    size)).result
    stacks = [b.insert(memref.AllocaOp.get(loop.iter_args[k].type, 64, [_LEVELS])).memref for k in ordered]
    carried = [k for k in range(len(loop.iter_args)) if k not in ordered]
    outer, ob = for_loop(b, zero, blocks, [loop.iter_args[k] for k in carried])
    kb = outer.body.block.args[0]
    lo = ob.insert(arith.AddiOp(loop.lb, ob.insert(arith.MuliOp(kb, size)).result)).result
    hi = ob.insert(arith.MinUIOp(ob.insert(arith.AddiOp(lo, size)).result, loop.ub)).result
    inits = list(loop.iter_args)
    for k, v in zip(carried, outer.body.block.args[1:]):
        inits[k] = v
    region = loop.detach_region(loop.body)
    inner = ob.insert(scf.ForOp(lo, hi, loop.step, inits, region))
    level = _i64_to_index(ob, ob.insert(xmath.CountTrailingZerosOp(
        _index_to_i64(ob, ob.insert(arith.AddiOp(kb, one)).result))).result)
    for k, stack, update in zip(ordered, stacks, updates):
        fold, fb = for_loop(ob, zero, level, [inner.results[k]])
        partial = fb.insert(memref.LoadOp.get(stack, [fold.body.block.args[0]])).res
        fb.insert(scf.YieldOp(_combine(fb, update, partial, fold.body.block.args[1])))
        ob.insert(memref.StoreOp.get(fold.results[0], stack, [level]))
    ob.insert(scf.YieldOp(*[inner.results[k] for k in carried]))
    results: list[SSAValue] = list(loop.results)
    for k, v in zip(carried, outer.results):
        results[k] = v
    width = b.insert(arith.ConstantOp.from_int_and_width(_LEVELS, IntegerType(64))).result
    used = _i64_to_index(b, b.insert(arith.SubiOp(width, b.insert(xmath.CountLeadingZerosOp(
        _index_to_i64(b, blocks))).result)).result)
    for k, stack, update in zip(ordered, stacks, updates):
        fold, fb = for_loop(b, zero, used, [loop.iter_args[k]])
        lvl, acc = fold.body.block.args
        bit = fb.insert(arith.AndIOp(fb.insert(arith.ShRUIOp(blocks, lvl)).result, one)).result
        taken = fb.insert(arith.CmpiOp(bit, zero, "ne")).result
        then, other = Region(Block()), Region(Block())
        tb = Builder(InsertPoint.at_end(then.block))
        partial = tb.insert(memref.LoadOp.get(stack, [lvl])).res
        tb.insert(scf.YieldOp(_combine(tb, update, partial, acc)))
        Builder(InsertPoint.at_end(other.block)).insert(scf.YieldOp(acc))
        choice = fb.insert(scf.IfOp(taken, [acc.type], then, other))
        fb.insert(scf.YieldOp(choice.results[0]))
        results[k] = fold.results[0]
    for old, new in zip(loop.results, results):
        old.replace_all_uses_with(new)
    loop.detach()
    loop.erase()


@dataclass(frozen=True)
class PairwiseSumsPass(ModulePass):
    """Block the loops `lower-dataflow` marked `REDUCTION` and sum the blocks
    pairwise (see the module docstring). Option: `block`, the iterations of one
    block."""

    name = "pairwise-sums"

    block: int = 128

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for loop in [o for o in op.walk() if isinstance(o, scf.ForOp) and REDUCTION in o.attributes]:
            del loop.attributes[REDUCTION]
            ordered = _ordered(loop)
            lb, ub = int_constant(loop.lb), int_constant(loop.ub)
            short = lb is not None and ub is not None and ub - lb <= self.block
            if ordered and not short and int_constant(loop.step) == 1:
                _blocked(loop, ordered, self.block)
