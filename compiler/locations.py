"""Source locations that survive rewriting.

The parser gives every op a `FileLineColLoc`; ops a pass creates have none.
MLIR's convention is that an op created by a rewrite carries the location of
the op it replaces. Passes here build replacements with a `Builder` placed
before the op being rewritten, so `install()` makes xDSL's insertion
(`Rewriter.insert_op`, which every `Builder.insert` goes through) give an
inserted op without a location, and the ops nested in it without one, the
location of the op it is inserted before (at the end of a block: of the
block's op, as when a pass fills the body of a map it created). An error found after
`expand-library`, `fuse` or `lower-dataflow` then still points at the line
the user wrote, and `--mlir-print-debuginfo` shows where each op came from.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation
from xdsl.rewriter import InsertPoint, Rewriter

_original_insert_op = Rewriter.insert_op


def inherit_location(op: Operation, loc: FileLineColLoc) -> None:
    """Give `op` and the ops nested in it `loc` where they have no file location."""
    if isinstance(op.location, FileLineColLoc):
        return
    op.location = loc
    for region in op.regions:
        for block in region.blocks:
            for nested in block.ops:
                inherit_location(nested, loc)


def _insert_op(op_or_ops: Operation | Sequence[Operation], insertion_point: InsertPoint) -> None:
    anchor = insertion_point.insert_before or insertion_point.block.parent_op()
    if anchor is not None and isinstance(anchor.location, FileLineColLoc):
        for op in (op_or_ops,) if isinstance(op_or_ops, Operation) else op_or_ops:
            inherit_location(op, anchor.location)
    _original_insert_op(op_or_ops, insertion_point)


def install() -> None:
    """Make insertions propagate locations (idempotent)."""
    Rewriter.insert_op = staticmethod(_insert_op)  # type: ignore[method-assign]
