"""Typed builders of the scf loops and index constants that lowerings emit."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint


def index_constant(b: Builder, value: int) -> SSAValue:
    """An `arith.constant` of index type."""
    return b.insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).result


def for_loop(b: Builder, lb: SSAValue, ub: SSAValue, inits: Sequence[SSAValue] = ()) -> tuple[scf.ForOp, Builder]:
    """An empty `scf.for lb..ub step 1` and a builder inside it (yield not yet built)."""
    body = Block(arg_types=[IndexType()] + [v.type for v in inits])
    loop = b.insert(scf.ForOp(lb, ub, index_constant(b, 1), list(inits), Region(body)))
    return loop, Builder(InsertPoint.at_end(body))
