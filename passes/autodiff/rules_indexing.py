"""Backward rule of `nn.scatter`. Each update receives the output gradient at the
element it was written to: 0 for a dropped window, and with `replace` only the
update that won the element (the last one). The operand receives the gradient
everywhere for `add`, and where no update replaced its element for `replace`; the other
kinds (mul, max, min) have no rule (an error at the op)."""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, TensorType, i64

from dfc.dialects.df_builders import Scalar, empty, map_op, read, tasklet, write
from dfc.dialects.diagnostics import CompileError
from dfc.dialects.nn_expand_indexing import operand_index, scatter_winners
from dfc.dialects.nn_expand_shape import linear_index
from dfc.dialects.nn_indexing import ScatterOp
from dfc.passes.autodiff.rule_table import RuleTable

INDEXING_BACKWARD = RuleTable()


def _kept_if(s: Scalar, v) -> object:
    """v[0] where the i1 v[1] holds, else 0."""
    return s.select(v[1], v[0], s.const(0.0, v[0].type))


@INDEXING_BACKWARD.rule("nn.scatter")
def _scatter(b: Builder, op, grads, required):
    assert isinstance(op, ScatterOp)
    (g,) = grads
    u_type, out_type = op.updates.type, op.result.type
    assert isinstance(u_type, TensorType) and isinstance(out_type, TensorType)
    dims, ivd, shape = op.gather_dims(), op.index_vector_dim.value.data, out_type.get_shape()
    if op.kind.data not in ("add", "replace"):
        raise CompileError.at(op, f"autodiff: nn.scatter of kind '{op.kind.data}' is not differentiable (add and "
                                  "replace are)")
    replace = op.kind.data == "replace"
    winners = scatter_winners(b, op) if replace else None
    g_updates = None
    if required[2]:

        def build(mb, ivs, outs) -> None:
            index, fits = operand_index(mb, dims, ivd, shape, op.scatter_indices, ivs, clamp=True)
            value = read(mb, g, index)
            if winners is not None:
                position = linear_index(mb, ivs, u_type.get_shape())
                won = mb.insert(arith.CmpiOp(read(mb, winners, index), position, "eq")).result
                fits = won if fits is None else mb.insert(arith.AndIOp(fits, won)).result
            if fits is not None:
                value = tasklet(mb, [value, fits], value.type, _kept_if)
            write(mb, value, outs[0], ivs)

        g_updates = map_op(b, list(u_type.get_shape()), [empty(b, u_type)], build).res[0]
    g_operand = g if required[0] else None
    if required[0] and winners is not None:

        def keep(mb, ivs, outs) -> None:
            zero = mb.insert(arith.ConstantOp(IntegerAttr(0, i64))).result
            none = mb.insert(arith.CmpiOp(read(mb, winners, ivs), zero, "slt")).result
            write(mb, tasklet(mb, [read(mb, g, ivs), none], out_type.element_type, _kept_if), outs[0], ivs)

        g_operand = map_op(b, list(shape), [empty(b, out_type)], keep).res[0]
    return [g_operand, None, g_updates]
