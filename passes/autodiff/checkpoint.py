"""Store or recompute a call's values: the `df.checkpoint` attribute of `func.call`.

A call marked `{df.checkpoint = "nothing_saveable"}` (what `dfc.checkpoint`
emits, JAX's `jax.checkpoint`) keeps nothing of the callee's computation from
the forward sweep to the backward sweep but the call's arguments: the reverse
sweep calls `@callee_grad`, which reruns the callee's forward computation and
reverses it (`control.reverse_call`). `"dots_saveable"` keeps the callee's
contraction results (`nn.matmul`, `nn.dot_general`) as well, and recomputes the
rest from them. Every other call is inlined into the gradient's forward
computation before the sweep (`inline_stored_calls`), so that its values are
stored like the caller's own, within the loops' tapes and budget (JAX
differentiates an unmarked call the same way).

Where it matters: the attribute is read by `autodiff` only. No pass before it
inlines calls (the importers inline theirs before the mark exists: a
StableHLO program's `jax.checkpoint` arrives inlined), and the default
pipeline after it keeps functions apart (no inliner), so the recomputation in
`@callee_grad` cannot be merged back into the forward values by `cse`.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, SSAValue

from dfc.dialects.diagnostics import CompileError
from dfc.dialects.nn import MatmulOp
from dfc.dialects.nn_contract import DotGeneralOp

ATTRIBUTE = "df.checkpoint"
"""The discardable attribute of `func.call` naming its checkpoint policy."""

POLICIES = ("nothing_saveable", "dots_saveable")
"""JAX's names (`jax.checkpoint_policies`): save nothing; save contraction results."""

SAVED_OPS = (MatmulOp, DotGeneralOp)
"""What `dots_saveable` keeps: the results of these ops."""


def checkpoint_policy(call: func.CallOp) -> str | None:
    """The call's policy, None when it is not a checkpoint (a located error for an unknown one)."""
    attr = call.attributes.get(ATTRIBUTE)
    if attr is None:
        return None
    if not isinstance(attr, StringAttr) or attr.data not in POLICIES:
        raise CompileError.at(call, f"autodiff: unknown {ATTRIBUTE} policy {attr}: expected one of "
                              + ", ".join(f'"{p}"' for p in POLICIES))
    return attr.data


def inline_stored_calls(f: func.FuncOp, module: ModuleOp, exclude: frozenset[str]) -> None:
    """Inline into `f`, at any depth, every call that is not a checkpoint and whose
    callee has a one-block body, the calls of the inlined bodies too. Calls of
    the functions in `exclude` (f itself, the gradients being built), of a callee
    already being inlined (recursion) and of declarations stay calls, for the
    reverse sweep to differentiate or refuse."""
    bodies = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration}
    _inline_in(f.body.block, bodies, exclude | {f.sym_name.data})


def _inline_in(block: Block, bodies: dict[str, func.FuncOp], chain: frozenset[str]) -> None:
    for op in list(block.ops):
        for region in op.regions:
            for inner in region.blocks:
                _inline_in(inner, bodies, chain)
        if not isinstance(op, func.CallOp) or checkpoint_policy(op) is not None:
            continue
        name = op.callee.root_reference.data
        callee = bodies.get(name)
        if name in chain or callee is None or len(callee.body.blocks) != 1:
            continue
        body = callee.body.block
        mapping: dict[SSAValue, SSAValue] = dict(zip(body.args, op.arguments))
        inlined = Block()
        ret = body.last_op
        assert isinstance(ret, func.ReturnOp)
        for o in body.ops:
            if o is ret:
                break
            clone = o.clone(value_mapper=mapping)
            inlined.add_op(clone)
            mapping.update(zip(o.results, clone.results))
        _inline_in(inlined, bodies, chain | {name})
        results = [mapping.get(v, v) for v in ret.arguments]
        for o in list(inlined.ops):
            o.detach()
            block.insert_op_before(o, op)
        for old, new in zip(op.res, results):
            old.replace_all_uses_with(new)
        block.erase_op(op)
