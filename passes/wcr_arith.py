"""The arithmetic of wcr (write-conflict resolution) kinds: identities and combines.

Shared by the CPU lowering (`lower_dataflow`: registers, private chunk copies)
and the GPU's row reductions (`gpu_rows`: registers, the shared-memory tree).
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, IntegerType
from xdsl.ir import Attribute, SSAValue

from dfc.dialects.df_builders import REDUCE_IDENTITY


def identity(b: Builder, kind: str, t: Attribute) -> SSAValue:
    """The neutral element of wcr `kind` in type `t`."""
    if isinstance(t, AnyFloat):
        return b.insert(arith.ConstantOp(FloatAttr(REDUCE_IDENTITY[kind], t))).result
    assert isinstance(t, IntegerType)
    width = t.width.data
    if width == 1:  # i1 is a boolean (false < true), as the interpreter orders it: max is or, min is and
        return b.insert(arith.ConstantOp(IntegerAttr({"max": 0, "min": 1}[kind], t))).result
    value = {"add": 0, "mul": 1, "max": -(2 ** (width - 1)), "min": 2 ** (width - 1) - 1}[kind]
    return b.insert(arith.ConstantOp(IntegerAttr(value, t))).result


def combine(b: Builder, kind: str, x: SSAValue, y: SSAValue) -> SSAValue:
    """x (kind) y, as the arith op for the element type."""
    if isinstance(x.type, AnyFloat):
        op = {"add": arith.AddfOp, "mul": arith.MulfOp, "max": arith.MaximumfOp, "min": arith.MinimumfOp}[kind]
    elif x.type == IntegerType(1):  # booleans, unsigned: the signed order would put true (-1) below false
        op = {"max": arith.OrIOp, "min": arith.AndIOp}[kind]
    else:
        op = {"add": arith.AddiOp, "mul": arith.MuliOp, "max": arith.MaxSIOp, "min": arith.MinSIOp}[kind]
    return b.insert(op(x, y)).result
