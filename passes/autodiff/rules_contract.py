"""Backward rules of `dialects.nn_contract`. The gradients of `dot_general` are
`dot_general`s of the output gradient with the other operand (contracting the
other operand's free dimensions), transposed to the operand's dimension order,
as in JAX. `argmax`/`argmin` pass no gradient.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.ir import SSAValue

from dfc.dialects import nn
from dfc.dialects import nn_contract as nc
from dfc.passes.autodiff.rule_table import RuleTable

CONTRACT_BACKWARD = RuleTable()


def _operand_gradient(
    b: Builder,
    g: SSAValue,
    other: SSAValue,
    rank: int,
    mine: tuple[Sequence[int], Sequence[int]],
    theirs: tuple[Sequence[int], Sequence[int]],
    other_rank: int,
    g_free: Sequence[int],
) -> SSAValue:
    """The gradient of the operand with (batch, contracting) dimensions `mine`, whose
    partner `other` has `theirs`; `g_free` are g's dimensions that belong to `other`."""
    (my_batch, my_contract), (their_batch, their_contract) = mine, theirs
    their_free = nc.free_dimensions(other_rank, their_batch, their_contract)
    nb = len(my_batch)
    grad = b.insert(
        nc.DotGeneralOp(g, other, (list(range(nb)), list(their_batch)), (list(g_free), their_free))
    ).results[0]
    # grad's dimensions as dimensions of this operand: batch, own free, then contracting (by the other's order)
    labels = [*my_batch, *nc.free_dimensions(rank, my_batch, my_contract)]
    labels += [my_contract[their_contract.index(d)] for d in sorted(their_contract)]
    permutation = [labels.index(d) for d in range(rank)]
    if permutation == sorted(permutation):
        return grad
    return b.insert(nn.TransposeOp(grad, permutation)).results[0]


@CONTRACT_BACKWARD.rule("nn.dot_general")
def _dot_general(b, op, grads, required):
    assert isinstance(op, nc.DotGeneralOp)
    (g,) = grads
    (lb, rb), (lc, rc) = op.dimensions()
    lhs_rank, rhs_rank = len(op.lhs.type.get_shape()), len(op.rhs.type.get_shape())
    nb = len(lb)
    n_lhs_free = lhs_rank - nb - len(lc)
    n_rhs_free = rhs_rank - nb - len(rc)
    lhs_free_in_g = list(range(nb, nb + n_lhs_free))
    rhs_free_in_g = list(range(nb + n_lhs_free, nb + n_lhs_free + n_rhs_free))
    g_lhs = _operand_gradient(b, g, op.rhs, lhs_rank, (lb, lc), (rb, rc), rhs_rank, rhs_free_in_g) if required[0] else None
    g_rhs = _operand_gradient(b, g, op.lhs, rhs_rank, (rb, rc), (lb, lc), lhs_rank, lhs_free_in_g) if required[1] else None
    return [g_lhs, g_rhs]


@CONTRACT_BACKWARD.rule("nn.argmax")
@CONTRACT_BACKWARD.rule("nn.argmin")
def _arg(b, op, grads, required):
    return [None]
