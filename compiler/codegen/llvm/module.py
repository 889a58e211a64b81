"""Module assembly for the host: func.func, func.call, memref.global and the exported entry wrappers.

    emit_module(module, **options) -> llvmlite.ir.Module      (unoptimised; `jit.optimize` next)

`HOST_HANDLERS` is what the host translates: arith, math, memref, scf,
blas and func.call.

Functions and the entry ABI
---------------------------
Each `func.func @f` becomes an internal function `_dfc_fn_f`: a memref
argument expands to `ptr noalias` (plus `captures(none)` when @f returns no
memref) followed by one i64 per *dynamic* dimension; buffer arguments must
therefore not overlap one another. Results: none -> void; one flattened value
-> that value; otherwise a literal struct of the flattened results (a memref
result flattens to its pointer and its dynamic sizes). A body-less
`func.func` is an external declaration under its own name.

Next to it, the exported wrapper `void _dfc_entry_f(i64 *desc)`
(`ENTRY_PREFIX`) reads the arguments from, and writes the results to, an
array of 8-byte slots:

* arguments, in order: a memref takes one slot for its data pointer, then one
  slot per dynamic dimension (its size); a scalar takes one slot;
* then results, in order: a memref result writes its data pointer, then every
  dimension size (static ones too); a scalar result writes one slot.

A scalar slot holds: an integer or index sign-extended to i64 (i1 is written
zero-extended, 0 or 1, and read from the slot's low bit); f64 as its bits;
f32 (f16) as a float (half) in the slot's first 4 (2) bytes, i.e. read and
written through a `float*` cast of the slot's address, the other bytes
untouched. Memref results are buffers the function allocated
(`memref.alloc`); the caller owns them and releases them with the runtime's
`__dfc_free(ptr, nbytes)`.

`memref.global` is an internal LLVM global (constant if the op is), 64-byte
aligned or more, holding the dense data (zeros when uninitialised).
"""

from __future__ import annotations

from collections.abc import Sequence

import llvmlite.binding as llvm
import llvmlite.ir as ir
import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseIntOrFPElementsAttr, MemRefType, ModuleOp, UnitAttr
from xdsl.ir import Operation

from dfc.compiler.codegen import gemm_kernel
from dfc.compiler.codegen.llvm import arith, blas, math, memref, scf
from dfc.compiler.codegen.llvm.emitter import DEFAULT_PARALLEL_MIN_WORK, FunctionEmitter, Handlers, ModuleEmitter
from dfc.compiler.codegen.llvm.outline import outlines_nests
from dfc.compiler.codegen.llvm.values import (
    ALLOC_ALIGN,
    I8,
    I64,
    PTR,
    VOID,
    BFloatType,
    MemRef,
    byte_size,
    check_memref,
    flat_types,
    scalar_type,
    unflatten,
    unsupported,
)
from dfc.compiler.codegen.target import host_target_machine

__all__ = ["emit_module", "HOST_HANDLERS", "ENTRY_PREFIX"]

ENTRY_PREFIX = "_dfc_entry_"
"""Exported wrappers are named ENTRY_PREFIX + the func.func symbol name."""

_FUNC = Handlers()


@_FUNC.register("func.call")
def _call(e: FunctionEmitter, op: Operation) -> None:
    name = op.properties["callee"].root_reference.data
    if name not in e.m.funcs:
        raise unsupported(f"call to unknown function @{name}")
    _, fn = e.m.funcs[name]
    args = e.flat_operands(op.operands)
    r = e.b.call(fn, args)
    ret_ty = fn.function_type.return_type
    if isinstance(ret_ty, ir.LiteralStructType):
        flat = [e.b.extract_value(r, i) for i in range(len(ret_ty.elements))]
    elif isinstance(ret_ty, ir.VoidType):
        flat = []
    else:
        flat = [r]
    e.bind(op.results, flat)


HOST_HANDLERS = Handlers({**arith.HANDLERS, **math.HANDLERS, **memref.HANDLERS, **scf.HANDLERS, **blas.HANDLERS,
                          **_FUNC})  # fmt: skip
"""Every op the host emitter translates."""


def emit_module(
    module: ModuleOp,
    *,
    fast_math: bool = True,
    num_threads: int = 1,
    parallel_min_work: int = DEFAULT_PARALLEL_MIN_WORK,
    vector_math: bool = False,
) -> ir.Module:
    """Translate `module` (func/scf/memref/arith/math/blas only) to LLVM IR for the host.

    `fast_math`: `reassoc contract` on float arithmetic (False: no flags, so
    LLVM keeps the order the IR states). `num_threads`: threads an `scf.parallel`
    may use (1: serial). `parallel_min_work`: estimated ops per thread below
    which a parallel loop runs serially. `vector_math`: inline vectorisable
    exp/log/tanh for f32/f64 instead of intrinsics and libm calls. Raises
    NotImplementedError naming the first unsupported op or type.
    """
    m = ModuleEmitter(
        module,
        handlers=HOST_HANDLERS,
        triple=llvm.get_process_triple(),
        data_layout=str(host_target_machine().target_data),
        fast_math=fast_math,
        num_threads=num_threads,
        parallel_min_work=parallel_min_work,
        vector_math=vector_math,
        own_gemm=gemm_kernel.enabled(),
    )
    bodies = []
    for op in module.ops:
        if op.name == "memref.global":
            _emit_global(m, op)
        elif op.name == "func.func":
            bodies.append(_declare_func(m, op))
        else:
            raise unsupported(f"op '{op.name}' at module level")
    for op, fn in bodies:
        if fn is None:
            continue
        e = FunctionEmitter(m, fn, op, in_parallel=False)
        e.outline_nests = outlines_nests(op)
        e.emit_func_body()
        _emit_wrapper(m, op, fn)
    return m.ir


def _declare_func(m: ModuleEmitter, op: Operation) -> tuple[Operation, ir.Function | None]:
    name = op.sym_name.data
    ftype = op.function_type
    params = [t for a in ftype.inputs.data for t in flat_types(a)]
    rets = [t for r in ftype.outputs.data for t in flat_types(r)]
    ret_ty = VOID if not rets else rets[0] if len(rets) == 1 else ir.LiteralStructType(rets)
    declaration = not op.body.blocks
    fn = ir.Function(m.ir, ir.FunctionType(ret_ty, params), name if declaration else "_dfc_fn_" + name)
    m.funcs[name] = (op, fn)
    if declaration:
        return op, None
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    returns_memref = any(isinstance(r, MemRefType) for r in ftype.outputs.data)
    k = 0
    for a in ftype.inputs.data:
        for j, _ in enumerate(flat_types(a)):
            if isinstance(a, MemRefType) and j == 0:
                fn.args[k].add_attribute("noalias")
                if not returns_memref:
                    fn.args[k].add_attribute("captures(none)")
            k += 1
    return op, fn


def _emit_global(m: ModuleEmitter, op: Operation) -> None:
    name = op.sym_name.data
    t = op.type
    if not isinstance(t, MemRefType):
        raise unsupported(f"memref.global type '{t}'")
    check_memref(t)
    elem = scalar_type(t.element_type)
    n = int(np.prod(t.get_shape(), dtype=np.int64))
    size = n * byte_size(elem)
    arr_ty = ir.ArrayType(I8, max(size, 1))
    init = op.initial_value
    if isinstance(init, DenseIntOrFPElementsAttr):
        values = init.get_values()
        if len(values) == 1 and n != 1:
            values = values * n
        data = _pack(values, elem, n)
        const = ir.Constant(arr_ty, bytearray(data) if data else None)
    elif init is None or isinstance(init, UnitAttr):
        const = ir.Constant(arr_ty, None)
    else:
        raise unsupported(f"memref.global initial value '{init}'")
    gv = ir.GlobalVariable(m.ir, arr_ty, "_dfc_global_" + name)
    gv.linkage = "internal"
    gv.global_constant = op.constant is not None
    gv.initializer = const
    align = op.alignment.value.data if op.alignment is not None else 0
    gv.align = max(ALLOC_ALIGN, align)
    m.globals[name] = (op, gv)


def _pack(values: Sequence, elem: ir.Type, n: int) -> bytes:
    if len(values) != n:
        raise unsupported(f"dense initialiser with {len(values)} elements for {n}")
    if isinstance(elem, ir.IntType):
        if elem.width == 1:
            return np.asarray([int(v) & 1 for v in values], dtype=np.uint8).tobytes()
        size = byte_size(elem)
        mask = (1 << (8 * size)) - 1
        dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[size]
        return np.asarray([int(v) & mask for v in values], dtype=dtype).astype(np.dtype(dtype).newbyteorder("<")).tobytes()
    if isinstance(elem, BFloatType):
        return np.asarray(values, dtype=ml_dtypes.bfloat16).tobytes()
    dtype = {ir.HalfType: "<f2", ir.FloatType: "<f4", ir.DoubleType: "<f8"}[type(elem)]
    return np.asarray(values, dtype=dtype).tobytes()


def _emit_wrapper(m: ModuleEmitter, op: Operation, fn: ir.Function) -> None:
    name = op.sym_name.data
    w = ir.Function(m.ir, ir.FunctionType(VOID, [PTR]), ENTRY_PREFIX + name)
    w.attributes.add("nounwind")
    desc = w.args[0]
    desc.name = "desc"
    desc.add_attribute("noalias")
    b = ir.IRBuilder(w.append_basic_block("entry"))
    slot_no = 0

    def slot() -> ir.Value:
        nonlocal slot_no
        p = b.gep(desc, [ir.Constant(I64, slot_no)], inbounds=True, source_etype=I64)
        slot_no += 1
        return p

    args: list[ir.Value] = []
    for t in op.function_type.inputs.data:
        if isinstance(t, MemRefType):
            args.append(b.load(slot(), typ=PTR, align=8))
            args.extend(b.load(slot(), typ=I64, align=8) for d in t.get_shape() if d == DYNAMIC_INDEX)
        else:
            ty = scalar_type(t)
            if isinstance(ty, ir.IntType):
                v = b.load(slot(), typ=I64, align=8)
                args.append(b.trunc(v, ty) if ty.width < 64 else v)
            else:
                args.append(b.load(slot(), typ=ty, align=8))
    res = b.call(fn, args)
    outs = op.function_type.outputs.data
    ret_ty = fn.function_type.return_type
    if isinstance(ret_ty, ir.LiteralStructType):
        flat = [b.extract_value(res, i) for i in range(len(ret_ty.elements))]
    else:
        flat = [] if isinstance(ret_ty, ir.VoidType) else [res]
    k = 0
    for t in outs:
        n = len(flat_types(t))
        v = unflatten(t, flat[k : k + n])
        k += n
        if isinstance(v, MemRef):
            b.store(v.ptr, slot(), align=8)
            for s in v.sizes:
                b.store(s, slot(), align=8)
        elif isinstance(v.type, ir.IntType):
            w64 = v if v.type.width == 64 else (b.zext(v, I64) if v.type.width == 1 else b.sext(v, I64))
            b.store(w64, slot(), align=8)
        else:
            b.store(v, slot(), align=8)
    b.ret_void()
