"""Canonicalization patterns of the nn dialect, run by xDSL's `canonicalize`.

Shape ops that do nothing disappear (a reshape, broadcast or identity
transpose to the input's own type); chains compose (reshape of a reshape,
transpose of a transpose); a double negation cancels.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from dfc.dialects import nn


class DropNoOpShapeOp(RewritePattern):
    """`nn.reshape`/`nn.broadcast`/`nn.transpose` to the input's type, identity permutation."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, nn.ReshapeOp | nn.BroadcastOp | nn.TransposeOp):
            return
        if isinstance(op, nn.TransposeOp) and list(op.permutation.get_values()) != list(
            range(len(op.permutation.get_values()))
        ):
            return
        if op.input.type == op.result.type:
            rewriter.replace(op, [], [op.input])


class ComposeReshapes(RewritePattern):
    """reshape(reshape(x)) -> reshape(x)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, nn.ReshapeOp) and isinstance(inner := op.input.owner, nn.ReshapeOp):
            assert isinstance(op.result.type, TensorType)
            rewriter.replace(op, nn.ReshapeOp(inner.input, op.result.type.get_shape()))


class ComposeTransposes(RewritePattern):
    """transpose(transpose(x, p), q) -> transpose(x, p o q)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, nn.TransposeOp) and isinstance(inner := op.input.owner, nn.TransposeOp):
            p, q = inner.permutation.get_values(), op.permutation.get_values()
            rewriter.replace(op, nn.TransposeOp(inner.input, [p[k] for k in q]))


class CancelDoubleNegation(RewritePattern):
    """neg(neg(x)) -> x."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, nn.NegOp) and isinstance(inner := op.input.owner, nn.NegOp):
            rewriter.replace(op, [], [inner.input])


SHAPE_PATTERNS = (DropNoOpShapeOp(), ComposeReshapes(), ComposeTransposes())
NEG_PATTERNS = (CancelDoubleNegation(),)
