"""`buffer-results-to-out-params`: returned buffers become caller-provided arguments.

MLIR's pass of the same name, for the engine's `out=` calls. In every
function that no `func.call` in the module calls, each memref result of static
shape becomes a new trailing argument of that type, and the result goes:

- when every `func.return` returns, at that position, the same
  `memref.alloc` of the function body (and at no other position), the
  allocation is replaced by the argument, so the function computes straight
  into the caller's buffer;
- otherwise each return copies the value into the argument (`memref.copy`)
  and then frees it when it is an allocation of the function no longer
  returned.

Scalar results and memref results of dynamic shape stay results. The caller
must pass buffers that overlap no argument and no other out buffer (the engine
checks); the copy rule keeps a function that returns an argument, a global or
a view correct.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, MemRefType, ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter


def called_functions(module: ModuleOp) -> set[str]:
    """The names of the functions some `func.call` in `module` calls (their
    signatures stay)."""
    return {op.callee.root_reference.data for op in module.walk() if isinstance(op, func.CallOp)}


def _static_buffer(t: object) -> bool:
    return isinstance(t, MemRefType) and all(d >= 0 for d in t.get_shape())


def _shared_alloc(returns: list[func.ReturnOp], k: int) -> memref.AllocOp | None:
    """The allocation every return gives as result `k` and as no other result."""
    values = {r.operands[k] for r in returns}
    if len(values) != 1:
        return None
    (value,) = values
    alloc = value.owner
    if not isinstance(alloc, memref.AllocOp) or alloc.dynamic_sizes:
        return None
    if any(v is value for r in returns for j, v in enumerate(r.operands) if j != k):
        return None
    return alloc


def _convert(f: func.FuncOp) -> None:
    outputs = list(f.function_type.outputs.data)
    moved = [k for k, t in enumerate(outputs) if _static_buffer(t)]
    if not moved or f.body.blocks == ():
        return
    returns = [op for op in f.walk() if isinstance(op, func.ReturnOp) and op.parent_op() is f]
    block = f.body.blocks[0]
    params = {k: block.insert_arg(outputs[k], len(block.args)) for k in moved}
    for k in moved:
        alloc = _shared_alloc(returns, k)
        if alloc is not None:
            alloc.memref.replace_all_uses_with(params[k])
            Rewriter.erase_op(alloc)
            continue
        for r in returns:
            Rewriter.insert_op(memref.CopyOp(r.operands[k], params[k]), InsertPoint.before(r))
    for r in returns:
        kept: list[SSAValue] = [v for j, v in enumerate(r.operands) if j not in params]
        copied = {r.operands[k] for k in params if r.operands[k] not in kept}
        for v in copied:  # a buffer the function owned, no longer handed to the caller
            if isinstance(v.owner, memref.AllocOp):
                Rewriter.insert_op(memref.DeallocOp.get(v), InsertPoint.before(r))
        Rewriter.replace_op(r, func.ReturnOp(*kept))
    inputs = [*f.function_type.inputs.data, *(outputs[k] for k in moved)]
    f.function_type = FunctionType.from_lists(inputs, [t for j, t in enumerate(outputs) if j not in params])
    if f.arg_attrs is not None:
        f.arg_attrs = ArrayAttr([*f.arg_attrs.data, *(DictionaryAttr({}) for _ in moved)])
    if f.res_attrs is not None:
        f.res_attrs = ArrayAttr([a for j, a in enumerate(f.res_attrs.data) if j not in params])


@dataclass(frozen=True)
class BufferResultsToOutParamsPass(ModulePass):
    """Turn static-shape memref results of uncalled functions into trailing out arguments."""

    name = "buffer-results-to-out-params"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        called = called_functions(op)
        for f in op.ops:
            if isinstance(f, func.FuncOp) and f.sym_name.data not in called and not f.is_declaration:
                _convert(f)
