"""memref to LLVM IR: `HANDLERS`, the memref dialect's handlers, and the guards of checked accesses.

Loads and stores address `gep inbounds` from the data pointer
(`FunctionEmitter.address`), with `!nontemporal` where the op asks and
alias scopes on views with disjoint siblings. `memref.alloc` calls the
runtime's `__dfc_alloc(align, nbytes)` (`compiler.codegen.runtime`;
alignment 64, or the op's `alignment` up to 2 MiB) and `memref.dealloc`
`__dfc_free(ptr, nbytes)`; `memref.alloca` is a stack slot (in the entry
block when its size is static); `memref.get_global` a module global
(`module`); `memref.view` its source's pointer plus the byte shift; casts
and reshapes only change sizes.

An access that `check-bounds` marked is guarded (`bounds_guard`,
`guarded_value`): out of bounds it is skipped (a load gives 0) and the
failure reported (`FunctionEmitter.report_out_of_bounds`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import llvmlite.ir as ir
import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType
from xdsl.ir import Operation, SSAValue

from dfc.compiler.codegen.llvm.emitter import FunctionEmitter, Handlers
from dfc.compiler.codegen.llvm.values import (
    ALLOC_ALIGN,
    I1,
    I8,
    I32,
    I64,
    PTR,
    VOID,
    MemRef,
    byte_size,
    check_memref,
    int_const,
    memref_extent,
    scalar_type,
    unflatten,
)
from dfc.compiler.codegen.runtime import declare_runtime, opaque

__all__ = ["HANDLERS", "bounds_guard", "guarded_value"]

HANDLERS = Handlers()
"""The memref ops' handlers."""

_MAX_ALIGN = 2 << 20


def _nontemporal(e: FunctionEmitter, op: Operation, inst: ir.Instruction) -> None:
    """`nontemporal = true` on a load/store becomes `!nontemporal` (streaming
    stores skip the read-for-ownership of the destination line)."""
    attr = op.properties.get("nontemporal")
    if attr is not None and bool(getattr(attr, "value", attr).data):
        inst.set_metadata("nontemporal", e.m.ir.add_metadata([ir.Constant(I32, 1)]))


def _scoped(e: FunctionEmitter, buf: SSAValue, inst: ir.Instruction) -> None:
    """Alias-scope metadata on an access through a view with disjoint siblings
    (LLVM cannot tell views of one allocation apart when indices vary)."""
    if e.view_scopes and (x := memref_extent(buf)) in e.view_scopes:
        scope, noalias = e.view_scopes[x]
        inst.set_metadata("alias.scope", scope)
        inst.set_metadata("noalias", noalias)


def bounds_guard(e: FunctionEmitter, op: Operation, m: MemRef, indices: Sequence[SSAValue]) -> ir.Value | None:
    """For an access marked by `check-bounds`: whether every index lies inside
    `m` (one unsigned compare per dimension, so negative indices fail too);
    None for an unmarked access."""
    if "check_bounds" not in op.attributes:
        return None
    ok: ir.Value = ir.Constant(I1, 1)
    for index, size in zip(indices, m.sizes):
        ok = e.b.and_(ok, e.b.icmp_unsigned("<", e.getv(index), size))
    return ok


def guarded_value(e: FunctionEmitter, op: Operation, ok: ir.Value | None, compute: Callable[[], ir.Value],
                  ty: ir.Type) -> ir.Value:
    """`compute()` where the bounds check `ok` holds (always when None); where
    it fails, the failure is reported and the value is 0."""
    if ok is None:
        return compute()
    with e.b.if_else(ok) as (inside, outside):
        with inside:
            value = compute()
            inside_bb = e.b.block
        with outside:
            e.report_out_of_bounds(op)
            outside_bb = e.b.block
    phi = e.b.phi(ty)
    phi.add_incoming(value, inside_bb)
    phi.add_incoming(ir.Constant(ty, 0), outside_bb)
    return phi


@HANDLERS.register("memref.load")
def _load(e: FunctionEmitter, op: Operation) -> None:
    m = e.getm(op.operands[0])
    ok = bounds_guard(e, op, m, op.operands[1:])

    def load() -> ir.Value:
        inst = e.b.load(e.address(m, op.operands[1:]), typ=m.elem, align=byte_size(m.elem))
        _nontemporal(e, op, inst)
        _scoped(e, op.operands[0], inst)
        return inst

    e.values[op.results[0]] = guarded_value(e, op, ok, load, m.elem)


@HANDLERS.register("memref.store")
def _store(e: FunctionEmitter, op: Operation) -> None:
    v = e.getv(op.operands[0])
    m = e.getm(op.operands[1])
    ok = bounds_guard(e, op, m, op.operands[2:])

    def store() -> None:
        inst = e.b.store(v, e.address(m, op.operands[2:]), align=byte_size(m.elem))
        _nontemporal(e, op, inst)
        _scoped(e, op.operands[1], inst)

    if ok is None:
        store()
        return
    with e.b.if_else(ok) as (inside, outside):
        with inside:
            store()
        with outside:
            e.report_out_of_bounds(op)


def _alloc_sizes(e: FunctionEmitter, op: Operation) -> tuple[MemRefType, list[ir.Value]]:
    t = op.results[0].type
    check_memref(t)
    dyn = iter(op.operands)
    sizes = [e.getv(next(dyn)) if d == DYNAMIC_INDEX else ir.Constant(I64, d) for d in t.get_shape()]
    return t, sizes


def _alignment(op: Operation) -> int:
    a = op.properties.get("alignment")
    return a.value.data if a is not None else 0


def _byte_count(e: FunctionEmitter, m: MemRef) -> ir.Value:
    return e.b.mul(e.num_elements(m), ir.Constant(I64, byte_size(m.elem)), flags=("nsw",))


@HANDLERS.register("memref.alloc")
def _alloc(e: FunctionEmitter, op: Operation) -> None:
    t, sizes = _alloc_sizes(e, op)
    elem = scalar_type(t.element_type)
    align = max(ALLOC_ALIGN, _alignment(op))
    if align > _MAX_ALIGN or align & (align - 1):
        raise NotImplementedError(f"memref.alloc alignment {align}: must be a power of two of at most {_MAX_ALIGN}")
    m = MemRef(ir.Constant(PTR, None), sizes, t, elem)
    fn = declare_runtime(e.m.ir, "__dfc_alloc")
    ptr = e.b.call(fn, [ir.Constant(I64, align), _byte_count(e, m)])
    e.values[op.results[0]] = MemRef(ptr, sizes, t, elem)


@HANDLERS.register("memref.alloca")
def _alloca(e: FunctionEmitter, op: Operation) -> None:
    t, sizes = _alloc_sizes(e, op)
    elem = scalar_type(t.element_type)
    esize = byte_size(elem)
    if all(d != DYNAMIC_INDEX for d in t.get_shape()):
        n = int(np.prod(t.get_shape(), dtype=np.int64))
        align = max(_alignment(op), 16 if n * esize >= 16 else esize)
        ptr = e.entry_alloca(ir.ArrayType(elem, max(n, 1)), align)
    else:
        m = MemRef(ir.Constant(PTR, None), sizes, t, elem)
        a = e.b.alloca(elem, size=e.num_elements(m))
        a.align = max(_alignment(op), 16)
        ptr = opaque(a)
    e.values[op.results[0]] = MemRef(ptr, sizes, t, elem)


@HANDLERS.register("memref.dealloc")
def _dealloc(e: FunctionEmitter, op: Operation) -> None:
    m = e.getm(op.operands[0])
    e.b.call(declare_runtime(e.m.ir, "__dfc_free"), [m.ptr, _byte_count(e, m)])


@HANDLERS.register("memref.copy")
def _copy(e: FunctionEmitter, op: Operation) -> None:
    src, dst = e.getm(op.operands[0]), e.getm(op.operands[1])
    nbytes = e.b.mul(e.num_elements(src), ir.Constant(I64, byte_size(src.elem)))
    fn = e.m.declare("llvm.memcpy.p0.p0.i64", VOID, [PTR, PTR, I64, I1])
    e.b.call(fn, [dst.ptr, src.ptr, nbytes, ir.Constant(I1, 0)])


@HANDLERS.register("memref.dim")
def _dim(e: FunctionEmitter, op: Operation) -> None:
    m = e.getm(op.operands[0])
    k = int_const(op.operands[1])
    if k is not None:
        e.values[op.results[0]] = m.sizes[k] if 0 <= k < len(m.sizes) else ir.Constant(I64, 0)
        return
    idx = e.getv(op.operands[1])
    r: ir.Value = ir.Constant(I64, 0)
    for j, s in enumerate(m.sizes):
        r = e.b.select(e.b.icmp_signed("==", idx, ir.Constant(I64, j)), s, r)
    e.values[op.results[0]] = r


@HANDLERS.register("memref.get_global")
def _get_global(e: FunctionEmitter, op: Operation) -> None:
    name = op.properties["name"].root_reference.data
    _, gv = e.m.globals[name]
    t = op.results[0].type
    ptr = opaque(e.b.gep(gv, [ir.Constant(I64, 0)], inbounds=True, source_etype=I8))
    e.values[op.results[0]] = unflatten(t, [ptr])


@HANDLERS.register("memref.view")
def _view(e: FunctionEmitter, op: Operation) -> None:
    src = e.getm(op.operands[0])
    t = op.results[0].type
    check_memref(t)
    dyn = iter(op.operands[2:])
    sizes = [e.getv(next(dyn)) if d == DYNAMIC_INDEX else ir.Constant(I64, d) for d in t.get_shape()]
    ptr = e.b.gep(src.ptr, [e.getv(op.operands[1])], inbounds=True, source_etype=I8)
    e.values[op.results[0]] = MemRef(ptr, sizes, t, scalar_type(t.element_type))


@HANDLERS.register("memref.cast")
def _mcast(e: FunctionEmitter, op: Operation) -> None:
    m = e.getm(op.operands[0])
    t = op.results[0].type
    check_memref(t)
    e.values[op.results[0]] = MemRef(m.ptr, list(m.sizes), t, m.elem)


@HANDLERS.register("memref.collapse_shape")
def _collapse(e: FunctionEmitter, op: Operation) -> None:
    m = e.getm(op.operands[0])
    t = op.results[0].type
    check_memref(t)
    sizes = []
    for group in op.properties["reassociation"].data:
        dims = [a.value.data for a in group.data]
        sizes.append(e.num_elements(MemRef(m.ptr, [m.sizes[d] for d in dims], t, m.elem)))
    e.values[op.results[0]] = MemRef(m.ptr, sizes, t, m.elem)


@HANDLERS.register("memref.expand_shape")
def _expand(e: FunctionEmitter, op: Operation) -> None:
    m = e.getm(op.operands[0])
    t = op.results[0].type
    check_memref(t)
    dyn = iter(op.operands[1:])
    static = op.properties["static_output_shape"].get_values()
    sizes = [e.getv(next(dyn)) if d == DYNAMIC_INDEX else ir.Constant(I64, d) for d in static]
    e.values[op.results[0]] = MemRef(m.ptr, sizes, t, m.elem)
