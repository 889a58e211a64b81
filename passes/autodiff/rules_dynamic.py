"""Backward rule of `dialects.nn_dynamic`: `nonzero`'s integer coordinates pass
no gradient (`gather_points` by them is differentiated through its expansion,
a scatter-add of the cotangent back to the points)."""

from __future__ import annotations

from dfc.passes.autodiff.rule_table import RuleTable

DYNAMIC_BACKWARD = RuleTable()


@DYNAMIC_BACKWARD.rule("nn.nonzero")
def _nonzero(b, op, grads, required):
    return [None]
