"""LLVM types and values of the emitted code: how MLIR types and memref values map to llvmlite.

`index` is i64, integers their width, f16/bf16/f32/f64 LLVM's half, bfloat,
float and double. A memref value (`MemRef`) is a data pointer plus one i64
size per dimension (static sizes are constants), row-major with identity
strides and no offset: element (i0, .., in) lives at `gep inbounds T, ptr,
linear`. In signatures (`flat_types`) a memref flattens to its pointer and
its *dynamic* sizes. Also here: `memref_extent`, the allocation and byte
range a memref value certainly lies in (what alias scopes and `noalias` on
outlined bodies are derived from).
"""

from __future__ import annotations

import math as pymath
from collections.abc import Sequence
from dataclasses import dataclass

import llvmlite.ir as ir
import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

__all__ = ["PTR", "I1", "I8", "I32", "I64", "VOID", "ALLOC_ALIGN", "BFloatType", "NARROW_FLOATS", "MemRef",
           "unsupported", "scalar_type", "is_float", "type_suffix", "byte_size", "check_memref", "flat_types",
           "unflatten", "flatten", "int_const", "memref_extent"]  # fmt: skip

PTR = ir.PointerType()
I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
VOID = ir.VoidType()
ALLOC_ALIGN = 64
"""Alignment of heap buffers and globals (bytes)."""


class BFloatType(ir.types._BaseFloatType):
    """LLVM's `bfloat` (llvmlite has no class for it): bf16 storage; LLVM
    computes each operation in f32 and rounds, as ml_dtypes does."""

    null = "0.0"
    intrinsic_name = "bf16"

    def __str__(self) -> str:
        return "bfloat"

    def format_constant(self, value: float) -> str:
        bits = int(np.asarray(value, ml_dtypes.bfloat16).view(np.uint16))
        return f"0xR{bits:04X}"


BFloatType._create_instance()


_FLOAT_IR = {Float16Type: ir.HalfType, BFloat16Type: BFloatType, Float32Type: ir.FloatType, Float64Type: ir.DoubleType}
NARROW_FLOATS = (ir.HalfType, BFloatType)
"""Types whose libm calls go through f32."""


def unsupported(what: str) -> NotImplementedError:
    """The error for what the LLVM emitter cannot translate."""
    return NotImplementedError(f"LLVM emitter: unsupported {what}")


def scalar_type(t: Attribute) -> ir.Type:
    """The LLVM type of a scalar MLIR type (index, integer, float)."""
    if isinstance(t, IndexType):
        return I64
    if isinstance(t, IntegerType):
        return ir.IntType(t.width.data)
    ctor = _FLOAT_IR.get(type(t))
    if ctor is not None:
        return ctor()
    raise unsupported(f"type '{t}'")


def is_float(ty: ir.Type) -> bool:
    return isinstance(ty, (ir.HalfType, BFloatType, ir.FloatType, ir.DoubleType))


def type_suffix(ty: ir.Type) -> str:
    """The suffix of an overloaded intrinsic's name for `ty` (f32, i64, ...)."""
    if isinstance(ty, ir.HalfType):
        return "f16"
    if isinstance(ty, BFloatType):
        return "bf16"
    if isinstance(ty, ir.FloatType):
        return "f32"
    if isinstance(ty, ir.DoubleType):
        return "f64"
    if isinstance(ty, ir.IntType):
        return f"i{ty.width}"
    raise AssertionError(ty)


def byte_size(ty: ir.Type) -> int:
    """Bytes one element of `ty` occupies in memory."""
    if isinstance(ty, NARROW_FLOATS):
        return 2
    if isinstance(ty, ir.FloatType):
        return 4
    if isinstance(ty, ir.DoubleType):
        return 8
    assert isinstance(ty, ir.IntType)
    n = 1
    while n * 8 < ty.width:
        n *= 2
    return n


def check_memref(t: MemRefType) -> None:
    """Raise unless `t` has the identity layout (the only one supported)."""
    layout = t.layout
    if isinstance(layout, NoneAttr):
        return
    if isinstance(layout, AffineMapAttr) and layout.data == layout.data.identity(len(t.get_shape())):
        return
    raise unsupported(f"memref layout '{layout}' (only the identity layout is supported)")


def flat_types(t: Attribute) -> list[ir.Type]:
    """LLVM types a value of type `t` expands to in function signatures."""
    if isinstance(t, MemRefType):
        check_memref(t)
        return [PTR] + [I64 for d in t.get_shape() if d == DYNAMIC_INDEX]
    return [scalar_type(t)]


@dataclass
class MemRef:
    """A memref value: data pointer and one i64 size per dimension."""

    ptr: ir.Value
    sizes: list[ir.Value]
    type: MemRefType
    elem: ir.Type

    def flatten(self) -> list[ir.Value]:
        return [self.ptr] + [s for s, d in zip(self.sizes, self.type.get_shape()) if d == DYNAMIC_INDEX]


def unflatten(t: Attribute, vals: Sequence[ir.Value]) -> ir.Value | MemRef:
    """The value of type `t` from its flattened parts (`flat_types`)."""
    if isinstance(t, MemRefType):
        it = iter(vals[1:])
        sizes = [next(it) if d == DYNAMIC_INDEX else ir.Constant(I64, d) for d in t.get_shape()]
        return MemRef(vals[0], sizes, t, scalar_type(t.element_type))
    (v,) = vals
    return v


def flatten(v: ir.Value | MemRef) -> list[ir.Value]:
    return v.flatten() if isinstance(v, MemRef) else [v]


def int_const(v: SSAValue) -> int | None:
    """The value of `v` when it is an integer/index arith.constant."""
    op = v.owner
    if isinstance(op, Operation) and op.name == "arith.constant":
        attr = op.properties.get("value")
        if isinstance(attr, IntegerAttr):
            return attr.value.data
    return None


def memref_extent(v: SSAValue) -> tuple[object, int, float] | None:
    """The allocation a memref value certainly lies in (a key for the function
    argument, alloc, alloca or global) and the bytes [lo, hi) of it that the
    value spans, following casts, reshapes and views at constant offsets of
    static size; None if unknown."""
    lo, size = 0, pymath.inf
    while True:
        owner = v.owner
        if isinstance(owner, Block):
            parent = owner.parent_op()
            return (v, lo, lo + size) if parent is not None and parent.name == "func.func" else None
        if owner.name in ("memref.cast", "memref.collapse_shape", "memref.expand_shape"):
            v = owner.operands[0]
            continue
        if owner.name == "memref.view":
            shift, t = int_const(owner.operands[1]), owner.results[0].type
            if shift is None or not t.has_static_shape():
                return None
            if size == pymath.inf:
                size = pymath.prod(t.get_shape()) * byte_size(scalar_type(t.element_type))
            lo += shift
            v = owner.operands[0]
            continue
        if owner.name in ("memref.alloc", "memref.alloca"):
            return owner, lo, lo + size
        if owner.name == "memref.get_global":
            return owner.properties["name"].root_reference.data, lo, lo + size
        return None
