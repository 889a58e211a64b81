"""Source locations that survive rewriting.

The parser gives every op a `FileLineColLoc`; ops a pass creates have none.
MLIR's convention is that an op created by a rewrite carries the location of
the op it replaces. Passes here build replacements before the op being
rewritten, or inside a region of an op they created there, so `install()`
makes xDSL's block insertion (every `Builder.insert`, `Rewriter` and
`Block.add_op` ends in `Block.insert_op_before` or `Block._attach_op`) give
an inserted op without a location, and the ops nested in it without one, the
location of the op it is inserted before, else of the op owning the block.
An error found after `expand-library`, `fuse` or `lower-dataflow` then still
points at the line the user wrote, and `--mlir-print-debuginfo` shows where
each op came from. While parsing, blocks have no owner yet: nothing changes.
"""

from __future__ import annotations

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Block, Operation

_original_insert_op_before = Block.insert_op_before
_original_attach_op = Block._attach_op  # pyright: ignore[reportPrivateUsage]


def inherit_location(op: Operation, anchor: Operation | None) -> None:
    """Give `op` and the ops nested in it `anchor`'s file location where they have none."""
    if anchor is None or not isinstance(anchor.location, FileLineColLoc):
        return
    _inherit(op, anchor.location)


def _inherit(op: Operation, loc: FileLineColLoc) -> None:
    if isinstance(op.location, FileLineColLoc):
        return
    op.location = loc
    for region in op.regions:
        for block in region.blocks:
            for nested in block.ops:
                _inherit(nested, loc)


def _insert_op_before(self: Block, new_op: Operation, existing_op: Operation) -> None:
    inherit_location(new_op, existing_op)
    _original_insert_op_before(self, new_op, existing_op)


def _attach_op(self: Block, operation: Operation) -> None:
    inherit_location(operation, self.parent_op())
    _original_attach_op(self, operation)


def install() -> None:
    """Make insertions propagate locations (idempotent)."""
    Block.insert_op_before = _insert_op_before  # type: ignore[method-assign]
    Block._attach_op = _attach_op  # type: ignore[method-assign]  # pyright: ignore[reportPrivateUsage]
