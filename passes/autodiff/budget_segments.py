"""Store or recompute straight-line code under `memory_budget`: outline segments as checkpoints.

Before the reverse sweep, the values a gradient's forward computation leaves in
its top-level block (its calls inlined) are stored for the backward sweep. When
their bytes exceed the budget, `outline_under_budget` picks contiguous segments
of that block and moves each into a private function called with `{df.checkpoint
= "nothing_saveable"}` (`checkpoint.py`): the reverse sweep then recomputes the
segment in `@segment_grad`, and only its inputs and outputs stay stored. The
recomputation lives in another function, so `cse` cannot merge it back. The
function carries `{df.arena_per_call}` (and so does its gradient, a clone):
mem-plan allocates its buffers at each call instead of in a static arena, so a
recomputed segment holds its values only while it runs, and a segment with no
equal gains as much as one of a class.

Segments: the block is cut at the positions (between two ops) where the bytes
alive across (float tensors defined before and read after, f's arguments
included) are a local minimum; between two cuts lies a candidate (typically a
layer of a network). A candidate holding control flow (an `scf` loop or
branch) or a call is not outlined; maps are (their regions go with them).
Equal candidates (the same function once outlined) share one function, and so
one `@segment_grad`.

The model of what is stored: the bytes of the float tensors the block defines
that the reverse sweep reads (found by sweeping a copy first: a matmul result
only a tanh reads is not stored, the tanh's result is) or the function
returns, less those internal to each outlined segment (read by no later op of
the forward block). It leaves out what the recomputation holds while it runs
and the backward's own buffers: a plan, not a bound on the measured memory,
which `dfc.grad` enforces by tightening this budget (dfc/memory_budget.py).

Selection: greedy, best ratio of bytes saved to recomputed FLOPs first (2mnk
for a contraction, the result's elements otherwise), until the model fits.
Good enough because the segments are disjoint and their savings add, so the
order is the fractional knapsack's, off the least recomputation by at most one
segment; for a chain of equal layers every member has the same ratio, where
any choice of the same count is optimal.

What stays stored: the cut values (each segment's inputs and outputs) and the
ops of no candidate; below that the budget cannot be met, and every candidate
is outlined: the least this scheme stores (best effort, as a loop below its
two-level minimum falls back to recomputation; the model's bytes are returned).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import pairwise

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr, TensorType, UnitAttr
from xdsl.ir import Block, Operation, Region, SSAValue

from dfc.passes.autodiff.checkpoint import ATTRIBUTE, SAVED_OPS
from dfc.passes.autodiff.reverse import is_float, used_from_outside
from dfc.passes.mem_plan import PER_CALL


def tensor_bytes(value: SSAValue) -> int:
    """Bytes of a float tensor of static shape (0 for any other value)."""
    t = value.type
    if not is_float(value) or not isinstance(t, TensorType) or not t.has_static_shape():
        return 0
    return max(1, t.element_type.bitwidth // 8) * math.prod(t.get_shape())


def _flops(op: Operation) -> int:
    """Recomputation cost of op: 2 sqrt(|A| |B| |C|) (= 2mnk) for a contraction, the result's elements otherwise."""
    sizes = [math.prod(v.type.get_shape()) for v in (*op.operands[:2], *op.results)
             if isinstance(v.type, TensorType) and v.type.has_static_shape()]
    if isinstance(op, SAVED_OPS) and len(sizes) >= 3:
        return int(2 * math.sqrt(sizes[0] * sizes[1] * sizes[-1]))
    return max(1, sum(math.prod(r.type.get_shape()) for r in op.results
                      if isinstance(r.type, TensorType) and r.type.has_static_shape()))


def stored_bytes(block: Block, read: set[SSAValue] | None = None) -> int:
    """Bytes of the float tensors the block's ops define (those in `read`, by
    default all): what the backward sweep may keep."""
    return sum(tensor_bytes(r) for op in block.ops for r in op.results if read is None or r in read)


def _last_uses(ops: list[Operation], returned: list[SSAValue]) -> dict[SSAValue, int]:
    """For each value the ops use, the index of the last op using it (len(ops): returned)."""
    last: dict[SSAValue, int] = {}
    for i, op in enumerate(ops):
        for v in used_from_outside(op):
            last[v] = i
    for v in returned:
        last[v] = len(ops)
    return last


def _candidates(f: func.FuncOp, ops: list[Operation], last: dict[SSAValue, int]) -> list[tuple[int, int]]:
    """[start, end) ranges of ops between the cuts: the positions (before op i) where
    the bytes alive across (f's arguments included) are a local minimum."""
    n = len(ops)
    change = [0] * (n + 2)
    defined = [(-1, a) for a in f.body.block.args] + [(i, r) for i, op in enumerate(ops) for r in op.results]
    for i, v in defined:
        if last.get(v, -1) > i:  # alive from position i + 1 to its last use
            change[i + 1] += tensor_bytes(v)
            change[last[v] + 1] -= tensor_bytes(v)
    crossing = [change[0]]
    for i in range(1, n + 1):
        crossing.append(crossing[-1] + change[i])
    cuts = {0, n}
    start = 0
    for i in range(n + 1):
        if i == n or crossing[i + 1] != crossing[i]:  # a run of equal crossings [start, i]
            if (start == 0 or crossing[start - 1] > crossing[i]) and (i == n or crossing[i + 1] > crossing[i]):
                cuts.update(range(start, i + 1))
            start = i + 1
    ordered = sorted(cuts)
    return [(a, b) for a, b in pairwise(ordered)
            if not any(op.name.startswith("scf.") or isinstance(op, func.CallOp) for op in ops[a:b])]


@dataclass
class Segment:
    """A candidate: ops[start:end], as the function `callee` of `inputs` returning `results`."""

    ops: list[Operation]
    inputs: list[SSAValue]
    results: list[SSAValue]
    callee: func.FuncOp
    saved: int  # bytes of the values no later op reads
    flops: int

    @property
    def key(self) -> str:
        """The callee's text: equal segments share a function."""
        return str(self.callee)


def outline_under_budget(f: func.FuncOp, module: ModuleOp, budget: int, read: set[SSAValue] | None = None) -> int:
    """Outline checkpointed segments of f's top-level block until what it stores
    (in the model of the module docstring: the values in `read`, by default all)
    fits in `budget` bytes, or as far as outlining lowers it; the bytes stored in
    that model."""
    block = f.body.block
    ops = list(block.ops)[:-1]  # the return is not a candidate
    stored = stored_bytes(block, read)
    if stored <= budget or not ops:
        return stored
    last = _last_uses(ops, list(block.last_op.operands))
    classes: dict[str, list[Segment]] = {}
    for a, b in _candidates(f, ops, last):
        segment = _segment(ops[a:b], {r for op in ops[a:b] for r in op.results if last.get(r, -1) >= b}, read)
        if segment.saved:
            classes.setdefault(segment.key, []).append(segment)
    ranked = sorted((s for c in classes.values() for s in c), key=lambda s: -s.saved / s.flops)
    names: dict[str, str] = {}
    chosen: list[tuple[Segment, str]] = []
    for segment in ranked:
        if stored <= budget:
            break
        key = segment.key  # before _add_function names the callee
        if key not in names:
            names[key] = _add_function(module, f, segment.callee)
        chosen.append((segment, names[key]))
        stored -= segment.saved
    for segment, name in sorted(chosen, key=lambda c: -ops.index(c[0].ops[0])):  # later first: inputs stay valid
        _replace(f, segment, name)
    return stored


def _segment(ops: list[Operation], outputs: set[SSAValue], read: set[SSAValue] | None) -> Segment:
    """The candidate of `ops`, whose values in `outputs` are read after it; it
    saves the bytes of its other values in `read` (all by default)."""
    defined = {r for op in ops for r in op.results}
    inputs = list(dict.fromkeys(v for op in ops for v in used_from_outside(op) if v not in defined))
    results = [r for op in ops for r in op.results if r in outputs]
    body = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, body.args))
    for op in ops:
        clone = op.clone(value_mapper=mapping)
        body.add_op(clone)
        mapping.update(zip(op.results, clone.results))
    body.add_op(func.ReturnOp(*[mapping[v] for v in results]))
    callee = func.FuncOp("segment", FunctionType.from_lists([v.type for v in inputs], [v.type for v in results]),
                         Region(body), visibility="private")
    callee.location = ops[0].location
    saved = sum(tensor_bytes(r) for r in defined if r not in outputs and (read is None or r in read))
    return Segment(ops, inputs, results, callee, saved, sum(_flops(op) for op in ops))


def _add_function(module: ModuleOp, f: func.FuncOp, callee: func.FuncOp) -> str:
    """Add `callee` to the module as `@<f>_segment` (`_1`, ... if taken); its name."""
    names = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
    base = f"{f.sym_name.data}_segment"
    name = next(n for n in (base + (f"_{k}" if k else "") for k in range(len(names) + 1)) if n not in names)
    callee.sym_name = StringAttr(name)
    callee.attributes["autodiff.segment_of"] = StringAttr(f.sym_name.data)
    callee.attributes[PER_CALL] = UnitAttr()
    module.body.block.add_op(callee)
    return name


def _replace(f: func.FuncOp, segment: Segment, name: str) -> None:
    """Replace the segment's ops by a checkpointed call of `@name`."""
    call = func.CallOp(name, segment.inputs, [v.type for v in segment.results])
    call.attributes[ATTRIBUTE] = StringAttr("nothing_saveable")
    call.location = segment.ops[0].location
    f.body.block.insert_op_before(call, segment.ops[0])
    for old, new in zip(segment.results, call.res):
        old.replace_all_uses_with(new)
    for op in reversed(segment.ops):
        op.detach()
        op.erase()
