"""SSA dominance: every operand must be defined, and before its use.

xDSL's verifier does not check it, and its parser accepts a value used above
the line that defines it. Within a block, the definition must come before the
op that holds the use (or before the ancestor of that op which sits in the
defining block); a value of a block that does not enclose the use is out of
scope. Regions of several blocks (after `convert-scf-to-cf`) are CFGs whose
blocks may use values of dominating sibling blocks: uses across sibling
blocks are left alone there.
"""

from __future__ import annotations

from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.parser.core import ForwardDeclaredValue


def dominance_problem(root: Operation) -> tuple[Operation, str] | None:
    """The first op (in walk order) with an operand that does not dominate it,
    and the message, or None."""
    positions: dict[int, dict[int, int]] = {}

    def position(block: Block, op: Operation) -> int:
        index = positions.get(id(block))
        if index is None:
            index = positions[id(block)] = {id(o): k for k, o in enumerate(block.ops)}
        return index[id(op)]

    for op in root.walk():
        for k, value in enumerate(op.operands):
            if isinstance(value, ForwardDeclaredValue):
                return op, f"operand #{k} is never defined in its scope"
            if not _dominates(value, op, position):
                return op, f"operand #{k} does not dominate this use"
    return None


def _dominates(value: SSAValue, use: Operation, position) -> bool:  # type: ignore[no-untyped-def]
    if isinstance(value, BlockArgument):
        block, definer = value.block, None
    else:
        definer = value.owner
        assert isinstance(definer, Operation)
        block = definer.parent_block()
        if block is None:
            return False
    ancestor: Operation | None = use
    while ancestor is not None and ancestor.parent_block() is not block:
        parent = ancestor.parent_block()
        if parent is not None and _sibling_blocks(parent, block):
            return True
        ancestor = ancestor.parent_op()
    if ancestor is None:
        return False
    return definer is None or position(block, definer) < position(block, ancestor)


def _sibling_blocks(a: Block, b: Block) -> bool:
    """Whether `a` and `b` are different blocks of one multi-block region."""
    region = a.parent
    return region is not None and region is b.parent and a is not b and len(region.blocks) > 1


def defined_inside(value: SSAValue, op: Operation) -> bool:
    """Whether `value` is defined by `op` or within its regions (a result of
    `op` or of a nested op, or an argument of one of their blocks)."""
    owner = value.owner
    defining = owner if isinstance(owner, Operation) else owner.parent_op()
    return defining is not None and op.is_ancestor(defining)


def comes_before(a: Operation, b: Operation) -> bool:
    """Whether `a` comes before `b`, two ops of one block: stepping forward
    from `a` and backward from `b` together, in time linear in the shorter
    walk to an answer (not in the block's length, as positions in a list of
    the block's ops would be)."""
    forward, backward = a.next_op, b.prev_op
    while True:
        if forward is b or backward is a:
            return True
        if forward is None or backward is None:
            return False
        forward, backward = forward.next_op, backward.prev_op
