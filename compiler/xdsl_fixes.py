"""Fixes to xDSL 0.74 behaviour the project depends on, applied on import.

* `dense<0xFF800000> : tensor<4xf32>`: MLIR reads a hexadecimal element of a
  float dense literal as the bit pattern of the float (here -inf), and xDSL
  prints non-finite splats that way, but xDSL 0.74 parses it as the integer
  4286578688 converted to float, so a printed -inf does not round-trip. The
  fix reinterprets hexadecimal float elements as bits, as MLIR does.
* `DenseIntOrFPElementsAttr.is_splat` unpacks every element into a Python
  object (seconds for a 2048x2048 zero tensor, which autodiff creates); the
  replacement compares the raw bytes shifted by one element.
* `cse` keys ops by a hash that ignores their regions, so all maps over one
  space with the same (CSE'd) `tensor.empty` outputs collide and are compared
  structurally pairwise: quadratic in the maps of a block (13 s of 35 for a
  gradient of 60 stencil maps). The hash now also covers a fingerprint of the
  regions: the nested ops' names and the values they use from outside, which
  structurally equivalent ops share.
* xDSL 0.74 has no `arith.remf` (MLIR's C `fmod`: the remainder of
  `lhs / rhs` with the sign of `lhs`); `RemFOp` defines it in the arith
  dialect (the LLVM backend emits `frem`).
"""

from __future__ import annotations

import functools
import math
import struct

from xdsl.dialects.arith import Arith, FloatingPointLikeBinaryOperation
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, Float16Type, Float32Type, Float64Type
from xdsl.ir import Block, Operation
from xdsl.irdl import irdl_op_definition, traits_def
from xdsl.parser.attribute_parser import AttrParser
from xdsl.traits import Pure
from xdsl.transforms.common_subexpression_elimination import OperationInfo

_BIT_FORMATS = {Float16Type: ("<H", "<e"), Float32Type: ("<I", "<f"), Float64Type: ("<Q", "<d")}

_Element = AttrParser._TensorLiteralElement  # pyright: ignore[reportPrivateUsage]
_original_to_type = _Element.to_type


def _to_type(self: _Element, parser: AttrParser, type):  # type: ignore[no-untyped-def]
    formats = _BIT_FORMATS.get(type.__class__)
    text = self.span.text.lstrip("-").lower()
    if formats is not None and text.startswith("0x") and isinstance(self.value, int):
        if self.is_negative:
            parser.raise_error("hexadecimal float literal cannot be negative", at_position=self.span)
        int_format, float_format = formats
        try:
            return struct.unpack(float_format, struct.pack(int_format, self.value))[0]
        except struct.error:
            parser.raise_error(f"hexadecimal literal does not fit {type}", at_position=self.span)
    return _original_to_type(self, parser, type)


_Element.to_type = _to_type  # type: ignore[method-assign]


def _is_splat(self: DenseIntOrFPElementsAttr) -> bool:
    return _all_elements_equal(self.data.data, math.prod(self.get_shape()))


@functools.lru_cache(maxsize=64)
def _all_elements_equal(data: bytes, n: int) -> bool:
    """Whether the `n` equal-sized elements packed in `data` are all equal
    (cached: canonicalize asks again for every use of a large constant)."""
    if n <= 1:
        return True
    k = len(data) // n
    return data[k:] == data[:-k]


DenseIntOrFPElementsAttr.is_splat = _is_splat  # type: ignore[method-assign]


_original_info_hash = OperationInfo.__hash__


def _region_fingerprint(op: Operation) -> int:
    """A hash of what structural equivalence compares in `op`'s regions: each
    nested op's name, and the values it uses that are defined outside `op`."""
    parts: list[object] = []
    for region in op.regions:
        for inner in region.walk():
            parts.append(inner.name)
            for v in inner.operands:
                owner = v.owner
                where = owner.parent_op() if isinstance(owner, Block) else owner
                if where is not op and (where is None or not op.is_ancestor(where)):
                    parts.append(v)
    return hash(tuple(parts))


def _info_hash(self: OperationInfo) -> int:
    if not self.op.regions:
        return _original_info_hash(self)
    return hash((_original_info_hash(self), _region_fingerprint(self.op)))


OperationInfo.__hash__ = _info_hash  # type: ignore[method-assign]


@irdl_op_definition
class RemFOp(FloatingPointLikeBinaryOperation):
    """The remainder of `lhs / rhs`, with the sign of `lhs` (C `fmod`)."""

    name = "arith.remf"

    traits = traits_def(Pure())


if RemFOp not in Arith._operations:  # pyright: ignore[reportPrivateUsage]
    Arith._operations.append(RemFOp)  # pyright: ignore[reportPrivateUsage]
