"""Source locations that survive rewriting.

The parser gives every op a `FileLineColLoc`; ops a pass creates have none.
MLIR's convention is that an op created by a rewrite carries the location of
the op it replaces. Passes here build replacements before the op being
rewritten, or inside a region of an op they created there, so `propagated()`
makes xDSL's block insertion (every `Builder.insert`, `Rewriter` and
`Block.add_op` ends in `Block.insert_op_before` or `Block._attach_op`) give
an inserted op without a location, and the ops nested in it without one, the
location of the op it is inserted before, else of the op owning the block.
An error found after `expand-library`, `fuse` or `lower-dataflow` then still
points at the line the user wrote, and `--mlir-print-debuginfo` shows where
each op came from. While parsing, blocks have no owner yet: nothing changes.

This is the one change to xDSL dfc makes, and only while `propagated()` is
entered (`PassManager.run` enters it around its passes), restoring xDSL's own
methods when the outermost entry exits: importing dfc changes nothing.
Upstream (what this waits for): xDSL creates ops without a location and its
builders and rewriters have no hook to give an inserted op one (MLIR's
builders take a location for every op they create, and a rewrite passes the
location of the op it replaces), so dfc hooks the two `Block` methods every
insertion ends in. Another thread that edits IR while a dfc pass manager
runs sees the propagation too.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Block, Operation

_xdsl_insert_op_before = Block.insert_op_before
_xdsl_attach_op = Block._attach_op  # pyright: ignore[reportPrivateUsage]

_lock = threading.Lock()
_depth = 0
_saved: tuple[object, object] | None = None
"""While `propagated()` is entered: what `Block.insert_op_before` and
`Block._attach_op` were before (restored on exit)."""


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
    _xdsl_insert_op_before(self, new_op, existing_op)


def _attach_op(self: Block, operation: Operation) -> None:
    inherit_location(operation, self.parent_op())
    _xdsl_attach_op(self, operation)


@contextmanager
def propagated() -> Iterator[None]:
    """Make insertions propagate locations inside the block; xDSL's `Block`
    is as it was once the outermost of nested (or concurrent) entries exits."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = (Block.__dict__["insert_op_before"], Block.__dict__["_attach_op"])
            Block.insert_op_before = _insert_op_before  # type: ignore[method-assign]
            Block._attach_op = _attach_op  # type: ignore[method-assign]  # pyright: ignore[reportPrivateUsage]
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                Block.insert_op_before, Block._attach_op = _saved  # type: ignore[method-assign,assignment]
                _saved = None
