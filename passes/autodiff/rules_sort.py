"""Backward rule of `dialects.nn_sort`: `argsort`'s integer permutation passes
no gradient (sorted values are a gather by it, differentiated as one)."""

from __future__ import annotations

from dfc.passes.autodiff.rule_table import RuleTable

SORT_BACKWARD = RuleTable()


@SORT_BACKWARD.rule("nn.argsort")
def _argsort(b, op, grads, required):
    return [None]
