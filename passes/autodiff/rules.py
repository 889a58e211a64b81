"""The backward rules of library ops, keyed by op name, and the API to register more.

`BACKWARD_RULES` merges the `RuleTable` of every op family (`rule_table.py`
says what a rule is). Ops without a rule are differentiated through their pure
expansion (`dialects.nn_expand`).
"""

from __future__ import annotations

from collections.abc import Callable

from dfc.passes.autodiff.rule_table import BackwardRule
from dfc.passes.autodiff.rules_contract import CONTRACT_BACKWARD
from dfc.passes.autodiff.rules_conv import CONV_BACKWARD
from dfc.passes.autodiff.rules_core import CORE_BACKWARD
from dfc.passes.autodiff.rules_dynamic import DYNAMIC_BACKWARD
from dfc.passes.autodiff.rules_elementwise import ELEMENTWISE_BACKWARD
from dfc.passes.autodiff.rules_fft import FFT_BACKWARD
from dfc.passes.autodiff.rules_indexing import INDEXING_BACKWARD
from dfc.passes.autodiff.rules_shape import SHAPE_BACKWARD
from dfc.passes.autodiff.rules_sort import SORT_BACKWARD
from dfc.passes.autodiff.rules_special import SPECIAL_BACKWARD
from dfc.passes.autodiff.rules_window import WINDOW_BACKWARD

BACKWARD_RULES: dict[str, BackwardRule] = {
    **CORE_BACKWARD, **ELEMENTWISE_BACKWARD, **SHAPE_BACKWARD, **CONTRACT_BACKWARD, **WINDOW_BACKWARD,
    **INDEXING_BACKWARD, **CONV_BACKWARD, **SORT_BACKWARD, **FFT_BACKWARD,
    **DYNAMIC_BACKWARD, **SPECIAL_BACKWARD,
}


def register_backward(op_name: str) -> Callable[[BackwardRule], BackwardRule]:
    """Decorator registering `rule` as the backward rule of ops named `op_name` (an extension's ops)."""

    def register(rule: BackwardRule) -> BackwardRule:
        BACKWARD_RULES[op_name] = rule
        return rule

    return register
