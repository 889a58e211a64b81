"""Jacobians in one compiled call: `jacrev` and `jacfwd` over a basis, in IR.

`basis_loop(module, callee, ...)` adds a function that runs `@callee` (a
vector-Jacobian product `@f_grad` or a Jacobian-vector product `@f_jvp`) for
every basis vector of one of its seed arguments (a one at flat index i, zeros
elsewhere; the other seeds zero) and stacks the results it keeps along a new
first dimension: the whole Jacobian is one call of compiled code instead of one
call from Python per row. All n seeds go through one pass of `@callee` batched
by `dfc.batching` (JAX's `vmap`: the seed-free forward part computed once, the
products by a seed become products by the n x n identity, GEMMs), which holds
n times the memory of the seeded values; past `BATCH_BYTES` of them, an
`scf.for` runs blocks of as many seeds as fit. When an op of `@callee` has no
batching rule, an `scf.for` over the seeds calls `@callee` once per row.

`jacobian_rows(fn, kind, wrt, which)` compiles such a module (a loop per
seed) once per `Function`, kind and `wrt`, and calls it.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, ModuleOp, TensorType, i64
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from dfc.batching import Unbatchable, batched, bytes_per_row
from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_shape as nns
from dfc.function import Function, call_arguments

_COMPILED: weakref.WeakKeyDictionary[Function, dict[tuple, Any]] = weakref.WeakKeyDictionary()
"""Per `Function`, the engines of its basis loops by (kind, wrt)."""


def batchable(types: Sequence[Any]) -> bool:
    """Whether every type is a float tensor of static shape (what a basis loop seeds and stacks)."""
    return all(isinstance(t, TensorType) and all(d >= 0 for d in t.get_shape()) for t in types)


def basis_loop(module: ModuleOp, callee: func.FuncOp, fixed: int, which: int, keep: Sequence[int], name: str) -> None:
    """Add `@name(the first `fixed` arguments of @callee) -> [n, *shape of result r] for r in keep` to
    `module`: row i holds @callee's results r for the seeds (its arguments after the first `fixed`) all zero
    but seed `which`, whose flat element i is 1 (n its number of elements). One batched pass when
    `dfc.batching` batches @callee, else a loop over the rows."""
    try:
        _basis_batch(module, callee, fixed, which, keep, name)
    except Unbatchable:
        _basis_rows(module, callee, fixed, which, keep, name)


def _full(b: Builder, value: float | int, element: Any, shape: Sequence[int]) -> SSAValue:
    attr = IntegerAttr(value, element) if element == i64 else FloatAttr(float(value), element)
    return b.insert(nn.FullOp(attr, shape)).results[0]  # type: ignore[arg-type]


BATCH_BYTES = 64 * 2**20
"""The most bytes of seeded values one batched pass holds (`seed_bytes` per seed): a larger basis runs
in blocks of as many seeds as fit, at least one."""


def seed_bytes(module: ModuleOp, name: str, mask: Sequence[bool], n: int) -> int:
    """The bytes each of n seeds adds to a batched pass of @name (batched in `mask`): the model
    `dfc.batching.bytes_per_row` (every seeded value as if all were alive at once) when all n fit in
    `BATCH_BYTES` by it, else measured, the model being a bound that can be several times too large
    (or, missing the lowering's temporaries, too small): `resident_bytes` (passes/resident_memory.py)
    of @name batched by 4 seeds, lowered by the default pipeline on one thread, over 4 (what does not
    vary with the seeds counted as if it did, so that k seeds' pass holds about k times this at most;
    buffers of run-time size, which it cannot count, left out)."""
    model = bytes_per_row(module, name, mask)
    if n * model <= BATCH_BYTES:
        return model
    from dfc.compiler.engine import lower
    from dfc.passes.resident_memory import resident_bytes

    copy = module.clone()
    batched_name, _ = batched(copy, name, mask, 4)
    for op in copy.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == batched_name:
            op.sym_visibility = None  # an entry: kept by the pipeline
    return max(1, -(-resident_bytes(lower(copy, 1), batched_name, 1) // 4))


def _basis_batch(module: ModuleOp, callee: func.FuncOp, fixed: int, which: int, keep: Sequence[int],
                 name: str) -> None:
    """The basis function as one call of @callee batched in seed `which` by the identity's rows, or as
    an `scf.for` over blocks of k rows (the last block's rows past n seeded with zeros and dropped)."""
    inputs, results = list(callee.function_type.inputs.data), list(callee.function_type.outputs.data)
    seeds = inputs[fixed:]
    basis = seeds[which]
    n = math.prod(basis.get_shape())
    mask = [k == fixed + which for k in range(len(inputs))]
    k = max(1, min(n, BATCH_BYTES // seed_bytes(module, callee.sym_name.data, mask, n)))
    blocks = -(-n // k)
    batched_name, batched_results = batched(module, callee.sym_name.data, mask, k)
    entry = Block(arg_types=inputs[:fixed])
    b = Builder(InsertPoint.at_end(entry))
    zeros = [_full(b, 0.0, t.element_type, t.get_shape()) for t in seeds]
    one, zero = _full(b, 1.0, basis.element_type, []), _full(b, 0.0, basis.element_type, [])
    columns = b.insert(nns.IotaOp(TensorType(i64, [k, n]), 1)).results[0]
    block_rows = b.insert(nns.IotaOp(TensorType(i64, [k, n]), 0)).results[0]
    types = [TensorType(t.element_type, [k, *t.get_shape()]) if m else t for t, m in zip(results, batched_results)]
    stacked_types = [TensorType(results[r].element_type, [blocks * k, *results[r].get_shape()]) for r in keep]

    def block_of_rows(b: Builder, offset: SSAValue | None) -> list[SSAValue]:
        """Rows offset .. offset + k of the kept results (offset None: 0)."""
        rows = block_rows if offset is None else b.insert(nn.AddOp(block_rows, offset)).results[0]
        hit = b.insert(nne.CompareOp(rows, columns, "EQ")).results[0]
        seed = b.insert(nne.SelectOp(hit, one, zero)).results[0]
        seed = b.insert(nn.ReshapeOp(seed, [k, *basis.get_shape()])).results[0]
        args = [*entry.args, *(seed if s == which else z for s, z in enumerate(zeros))]
        call = b.insert(func.CallOp(batched_name, args, types))
        values = []
        for r in keep:
            value, shape = call.results[r], results[r].get_shape()
            if not batched_results[r]:  # the seed does not reach it: every row the same
                value = b.insert(nns.BroadcastInDimOp(value, [k, *shape], list(range(1, len(shape) + 1)))).results[0]
            values.append(value)
        return values

    if blocks == 1:
        stacked = block_of_rows(b, None)
    else:
        start = _full(b, 0, i64, [])
        bounds = [b.insert(arith.ConstantOp(IntegerAttr(v, IndexType()))).result for v in (0, blocks, 1)]
        body = Block(arg_types=[IndexType(), start.type, *stacked_types])
        inner = Builder(InsertPoint.at_end(body))
        offset = body.args[1]
        origin = _full(inner, 0, i64, [])
        updated = []
        for acc, rows in zip(body.args[2:], block_of_rows(inner, offset)):
            at = [offset, *[origin] * (rows.type.get_num_dims() - 1)]
            updated.append(inner.insert(nns.DynamicUpdateSliceOp(acc, rows, at)).results[0])
        step = inner.insert(nn.AddOp(offset, _full(inner, k, i64, []))).results[0]
        inner.insert(scf.YieldOp(step, *updated))
        accumulators = [_full(b, 0.0, t.element_type, t.get_shape()) for t in stacked_types]
        loop = b.insert(scf.ForOp(*bounds, [start, *accumulators], body))
        stacked = list(loop.results[1:])
        if blocks * k != n:
            stacked = [b.insert(nns.SliceOp(v, [0] * v.type.get_num_dims(), [n, *v.type.get_shape()[1:]],
                                            [1] * v.type.get_num_dims())).results[0] for v in stacked]
    b.insert(func.ReturnOp(*stacked))
    module.body.block.add_op(func.FuncOp(name, (inputs[:fixed], [v.type for v in stacked]), Region(entry)))


def _basis_rows(module: ModuleOp, callee: func.FuncOp, fixed: int, which: int, keep: Sequence[int],
                name: str) -> None:
    """The basis function as an `scf.for` over the rows, one call of @callee each."""
    inputs, results = list(callee.function_type.inputs.data), list(callee.function_type.outputs.data)
    seeds = inputs[fixed:]
    basis = seeds[which]
    n = math.prod(basis.get_shape())
    stacked = [TensorType(results[r].element_type, [n, *results[r].get_shape()]) for r in keep]
    entry = Block(arg_types=inputs[:fixed])
    b = Builder(InsertPoint.at_end(entry))

    def full(value: float | int, element: Any, shape: Sequence[int]) -> SSAValue:
        return _full(b, value, element, shape)

    zeros = [full(0.0, t.element_type, t.get_shape()) for t in seeds]
    flat = b.insert(nns.IotaOp(TensorType(i64, [n]), 0)).results[0]
    one, zero = full(1.0, basis.element_type, []), full(0.0, basis.element_type, [])
    start = full(0, i64, [])
    bounds = [b.insert(arith.ConstantOp(IntegerAttr(v, IndexType()))).result for v in (0, n, 1)]
    body = Block(arg_types=[IndexType(), start.type, *stacked])
    outer, b = b, Builder(InsertPoint.at_end(body))
    counter = body.args[1]
    hit = b.insert(nne.CompareOp(flat, counter, "EQ")).results[0]
    seed = b.insert(nne.SelectOp(hit, one, zero)).results[0]
    seed = b.insert(nn.ReshapeOp(seed, basis.get_shape())).results[0]
    args = [*entry.args, *(seed if k == which else z for k, z in enumerate(zeros))]
    call = b.insert(func.CallOp(callee.sym_name.data, args, results))
    origin = full(0, i64, [])
    rows = []
    for acc, r in zip(body.args[2:], keep):
        shape = results[r].get_shape()
        row = b.insert(nn.ReshapeOp(call.results[r], [1, *shape])).results[0]
        rows.append(b.insert(nns.DynamicUpdateSliceOp(acc, row, [counter] + [origin] * len(shape))).results[0])
    step = b.insert(nn.AddOp(counter, full(1, i64, []))).results[0]
    b.insert(scf.YieldOp(step, *rows))
    b = outer
    accumulators = [full(0.0, t.element_type, t.get_shape()) for t in stacked]
    loop = b.insert(scf.ForOp(*bounds, [start, *accumulators], body))
    b.insert(func.ReturnOp(*loop.results[1:]))
    module.body.block.add_op(func.FuncOp(name, (inputs[:fixed], stacked), Region(entry)))


def jacobian_rows(fn: Function, kind: str, wrt: Sequence[int], which: int, args: Sequence[Any]) -> list[np.ndarray]:
    """The stacked rows of fn's Jacobian by one compiled basis loop: kind "rev" seeds float result
    `which` of `@f_grad` (wrt: the gradients kept, one [n, *argument shape] each), kind "fwd" seeds
    tangent `which` of `@f_jvp` (one [n, *result shape] per result). One module per kind and `wrt` holds
    the loops of every seed, compiled once."""
    from dfc.compiler import progress
    from dfc.compiler.engine import ExecutionEngine

    key = (kind, tuple(wrt))
    compiled = _COMPILED.setdefault(fn, {})
    if key not in compiled:
        module = fn.autodiff_module(tuple(wrt)) if kind == "rev" else fn.jvp_module(wrt)
        callee = next(op for op in module.ops if isinstance(op, func.FuncOp)
                      and op.sym_name.data == f"{fn.name}_{'grad' if kind == 'rev' else 'jvp'}")
        outputs, inputs = len(fn.outputs), len(fn.inputs)
        keep = list(range(outputs, outputs + (len(wrt) if kind == "rev" else outputs)))
        for seed in range(len(callee.function_type.inputs.data) - inputs):
            basis_loop(module, callee, inputs, seed, keep, f"{fn.name}_jac{kind}_{seed}")
        with progress.compiling(f"@{fn.name}_jac{kind}"):
            compiled[key] = ExecutionEngine(module, threads=fn.threads)
    out = compiled[key].invoke(f"{fn.name}_jac{kind}_{which}", *call_arguments(fn.inputs, args))
    return list(out) if isinstance(out, tuple) else [out]
