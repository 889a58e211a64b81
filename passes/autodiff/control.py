"""Adjoints of `scf.if` (branch by branch) and `func.call` (through the
callee's gradient function, generated once per callee and reused)."""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from dfc.dialects.diagnostics import CompileError
from dfc.passes.autodiff.checkpoint import checkpoint_policy, forward_with_contractions
from dfc.passes.autodiff.reverse import (
    Reverser,
    is_float,
    mark_varied,
    used_from_outside,
)


def reverse_if(rev: Reverser, op: scf.IfOp) -> None:
    """An `scf.if` on the same condition whose branches reverse the forward ones."""
    captured = [v for v in used_from_outside(op) if is_float(v) and v in rev.varied]
    seeds = [rev.adj.get(r) for r in op.results]
    regions = []
    for forward in (op.true_region, op.false_region):
        block = Block()
        b = Builder(InsertPoint.at_end(block))
        inner = rev.nested(b, set(rev.varied))
        yielded = []
        if forward.blocks:
            body = forward.block
            mapping: dict[SSAValue, SSAValue] = {}
            for o in body.ops:
                if isinstance(o, scf.YieldOp):
                    yielded = [mapping.get(v, v) for v in o.arguments]
                    continue
                clone = b.insert(o.clone(value_mapper=mapping))
                mapping.update(zip(o.results, clone.results))
            cloned = list(block.ops)
            mark_varied(cloned, inner.varied)
            for y, s in zip(yielded, seeds):
                inner.add(y, s)
            inner.block(cloned)
        grads = [inner.as_tensor(inner.adj[c]) if c in inner.adj else inner.tensor_zeros_like(c) for c in captured]
        b.insert(scf.YieldOp(*grads))  # a scalar's adjoint as a 0-d tensor
        regions.append(Region(block))
    types = [c.type if isinstance(c.type, TensorType) else TensorType(c.type, []) for c in captured]
    back = rev.b.insert(scf.IfOp(op.cond, types, regions[0], regions[1]))
    for c, g in zip(captured, back.results):
        rev.add(c, rev.like(c, g))


def reverse_call(rev: Reverser, op: func.CallOp) -> None:
    """Call the callee's gradient function (generating it on first use). A call
    the gradient did not inline is a checkpoint (passes/autodiff/checkpoint.py);
    under `dots_saveable` the forward call becomes one of `@callee_dots`, whose
    extra results the gradient function reads."""
    module = rev.module
    assert isinstance(module, ModuleOp)
    name = op.callee.root_reference.data
    callee = next((f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name), None)
    if callee is None or callee.is_declaration:
        raise CompileError.at(op, f"autodiff: cannot differentiate the call to @{name}: it has no body")
    types = callee.function_type
    # every float tensor argument, as the pass's default (so that @f_grad serves both), and varied float scalars
    wrt = [k for k, v in enumerate(op.arguments) if is_float(v) and (isinstance(v.type, TensorType) or v in rev.varied)]
    outputs = [k for k, t in enumerate(types.outputs.data) if is_float(op.res[k])]
    if name in rev.in_progress:
        raise CompileError.at(op, f"autodiff: cannot differentiate the recursive call to @{name}")
    assert rev.call_gradient is not None
    seeds = [rev.adj.get(op.res[k]) or rev.zeros_like(op.res[k]) for k in outputs]
    arguments = list(op.arguments)
    saved: list[SSAValue] = []
    if checkpoint_policy(op) == "dots_saveable":
        fwd = forward_with_contractions(module, callee, rev.in_progress)
        if len(fwd.function_type.outputs.data) > len(op.res):
            forward = func.CallOp(fwd.sym_name.data, arguments, fwd.function_type.outputs.data)
            forward.location = op.location
            op.parent_block().insert_op_before(forward, op)
            for old, new in zip(op.res, forward.res):
                old.replace_all_uses_with(new)
            saved = list(forward.res[len(op.res):])
            op.parent_block().erase_op(op)
    grad = rev.call_gradient(module, callee, wrt, outputs, rev.recompute, rev.in_progress, contractions=bool(saved))
    operands = [*arguments, *saved, *seeds]
    if [v.type for v in operands] != list(grad.function_type.inputs.data):
        raise CompileError.at(op, f"autodiff: internal error: @{grad.sym_name.data} does not read the "
                              f"{len(saved)} contraction results @{name} saves for it")
    call = rev.b.insert(func.CallOp(grad.sym_name.data, operands, grad.function_type.outputs.data))
    for k, g in zip(wrt, call.res[len(op.res) :]):
        rev.add(arguments[k], g)
