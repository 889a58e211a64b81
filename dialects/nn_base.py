"""The base classes of nn ops and the type helpers their verifiers share.

`NNOp` verifies the written result type against `infer_type`; the elementwise
bases infer NumPy-broadcast result types. Every nn op family module derives
from these; `dialects.nn` assembles the dialect.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyFloat,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    operand_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

REDUCE_KINDS = ("sum", "max", "min", "mean")


@dataclass(frozen=True)
class External:
    """What the ways in call an nn op: StableHLO and ONNX op names, ATen overload
    packets (`"exp"` for `aten.exp.*`) and NumPy functions (`"exp"` for `np.exp`).

    A bare name says the nn op is exactly that op, and the importers translate it
    one to one from this declaration; text with qualifiers (`"Max (two inputs)"`,
    `"- (maximum with 0)"`) documents a correspondence an importer handles
    itself; "-" says none corresponds."""

    stablehlo: str = "-"
    onnx: str = "-"
    aten: tuple[str, ...] = ()
    numpy: tuple[str, ...] = ()

    def one_to_one(self, way: str) -> str | None:
        """The external name of `way` ("stablehlo" or "onnx") when it is bare, else None."""
        name = getattr(self, way)
        return name if name.isidentifier() else None

_BINARY_FORMAT = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"
_UNARY_FORMAT = "$input attr-dict `:` functional-type(operands, results)"


def _static(t: Attribute, what: str) -> TensorType:
    if not isinstance(t, TensorType):
        raise VerifyException(f"{what} must be a tensor, got {t}")
    if any(d < 0 for d in t.get_shape()):
        raise VerifyException(f"{what} must have a static shape, got {t}")
    return t


def _float_tensor(t: Attribute, what: str) -> TensorType:
    t = _static(t, what)
    if not isinstance(t.element_type, AnyFloat):
        raise VerifyException(f"{what} must have a float element type, got {t}")
    return t


def broadcast_shapes(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...]:
    """numpy's broadcast of two shapes (a 1 takes the other size, 0 included); ValueError if incompatible."""
    rank = max(len(a), len(b))
    pa = (1,) * (rank - len(a)) + tuple(a)
    pb = (1,) * (rank - len(b)) + tuple(b)
    out = []
    for x, y in zip(pa, pb):
        if x != y and 1 not in (x, y):
            raise ValueError(f"shapes {list(a)} and {list(b)} do not broadcast")
        out.append(y if x == 1 else x)
    return tuple(out)


def normalize_axis(axis: int, rank: int) -> int:
    """`axis` in [0, rank), accepting Python-style negatives."""
    if not -rank <= axis < max(rank, 1):
        raise VerifyException(f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


class NNOp(IRDLOperation):
    """Common verification: the written result type equals the inferred one."""

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    EXTERNAL: ClassVar[External] = External()

    def infer_type(self) -> TensorType:
        raise NotImplementedError

    def verify_(self) -> None:
        expected = self.infer_type()
        actual = self.results[0].type
        if actual != expected:
            raise VerifyException(f"result type {actual} does not match the inferred type {expected}")


class ElementwiseBinaryOp(NNOp):
    """`lhs (op) rhs` with numpy broadcasting; both of one float element type."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = _BINARY_FORMAT

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs], result_types=[self.type_of(lhs.type, rhs.type)])

    @classmethod
    def type_of(cls, lhs: Attribute, rhs: Attribute) -> TensorType:
        """The result type for operands of types `lhs` and `rhs`."""
        return _binary_type(lhs, rhs)

    def infer_type(self) -> TensorType:
        return self.type_of(self.lhs.type, self.rhs.type)


class ArithmeticBinaryOp(ElementwiseBinaryOp):
    """`lhs (op) rhs` with numpy broadcasting; both of one float or signless integer element type."""

    @classmethod
    def type_of(cls, lhs: Attribute, rhs: Attribute) -> TensorType:
        return _binary_type(lhs, rhs, integers=True)


def _numeric_tensor(t: Attribute, what: str) -> TensorType:
    t = _static(t, what)
    e = t.element_type
    integer = isinstance(e, IntegerType) and e.signedness.data == Signedness.SIGNLESS and e.width.data > 1
    if not (isinstance(e, AnyFloat) or integer):
        raise VerifyException(f"{what} must have a float or signless integer element type, got {t}")
    return t


def _binary_type(lhs: Attribute, rhs: Attribute, integers: bool = False) -> TensorType:
    check = _numeric_tensor if integers else _float_tensor
    a, b = check(lhs, "lhs"), check(rhs, "rhs")
    if a.element_type != b.element_type:
        raise VerifyException(f"operand element types differ: {a.element_type} and {b.element_type}")
    try:
        shape = broadcast_shapes(a.get_shape(), b.get_shape())
    except ValueError as err:
        raise VerifyException(str(err)) from None
    return TensorType(a.element_type, shape)



class ElementwiseUnaryOp(NNOp):
    """A float function applied to each element."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = _UNARY_FORMAT

    def __init__(self, input: SSAValue):
        super().__init__(operands=[input], result_types=[_float_tensor(input.type, "input")])

    def infer_type(self) -> TensorType:
        return _float_tensor(self.input.type, "input")


