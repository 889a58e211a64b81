"""Upstream MLIR (func, scf, memref, arith, math) to LLVM IR, optimised and JIT-compiled.

The translation is direct, op by op, into llvmlite's IR builder, so that the
things LLVM needs to vectorise stay under our control: `getelementptr
inbounds` addressing (pointer provenance is never lost to integers),
`noalias` buffer parameters, and fast-math flags.

    emit_module(module)  -> llvmlite.ir.Module   (unoptimised)
    optimize(ir_module)  -> llvm.ModuleRef       (parsed, verified, O3, vectorised)
    JitModule(module)    -> MCJIT engine; entry_address(name) for ctypes

Values
------
A memref value is a data pointer plus one i64 size per dimension (static
sizes are constants); the layout is row-major with identity strides and no
offset, and element (i0, .., in) lives at `gep inbounds T, ptr, linear`.
`index` is i64. Float arithmetic carries `reassoc contract` (plus any flags the
op itself states) unless `fast_math=False`, which emits no flags at all;
`reassoc` is what lets LLVM vectorise float reductions. `ninf`/`nnan` are never
added by default: programs use -inf initialisers and rely on NaN semantics.

Functions and the entry ABI
---------------------------
Each `func.func @f` becomes an internal function `_dfc_fn_f`: a memref
argument expands to `ptr noalias` (plus `captures(none)` when @f returns no
memref) followed by one i64 per *dynamic* dimension; buffer arguments must
therefore not overlap one another. Results: none -> void; one flattened value
-> that value; otherwise a literal struct of the flattened results (a memref
result flattens to its pointer and its dynamic sizes).

Next to it, the exported wrapper `void _dfc_entry_f(i64 *desc)` reads the
arguments from, and writes the results to, an array of 8-byte slots:

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

Memory: `memref.alloc` calls the runtime's `__dfc_alloc(align, nbytes)`
(`compiler.codegen.runtime`: aligned_alloc, with huge pages and a reuse cache
for buffers of 4 MiB or more; alignment 64, or the op's `alignment` attribute
up to 2 MiB); `memref.dealloc` calls `__dfc_free`; `memref.alloca` is a stack slot (in
the entry block when its size is static); `memref.global` is an LLVM global
(constant if the op is), 64-byte aligned, holding the dense data (zeros when
uninitialised); `memref.view` is its source's pointer plus the byte shift.

Parallel loops
--------------
`scf.parallel` (any rank; the body must end in an operand-less `scf.reduce`)
is parallelised over its first dimension when the emitter runs with
`num_threads > 1`: the body is outlined into `void body(ptr ctx, i64 lo,
i64 hi)`, the outer values it uses are passed through a context struct
(constants and `memref.get_global` are re-materialised instead), and the
process-wide thread pool of `compiler.codegen.runtime` splits the iterations
into contiguous chunks, the calling thread taking chunks too. A loop uses
`min(num_threads, trip_count * work_per_iteration // parallel_min_work)`
threads, and with one runs serially on the caller without the pool
(work is an estimate in ops; trip counts of inner loops whose bounds, or
chunk length `ub = min(lb + X, ..)`, are known before the loop are evaluated
at run time, others count as 1024).
Nested `scf.parallel` ops inside a parallel body run serially. A captured
buffer is `noalias` in the outlined body when it certainly shares no byte with
any other captured buffer: distinct allocations, or views at constant offsets
of one allocation whose byte ranges do not overlap (mem-plan's arena slots).

Math
----
LLVM intrinsics where they exist (exp, exp2, log, log2, log10, sqrt, sin,
cos, fabs, floor, ceil, round, roundeven, trunc, pow, powi, fma, copysign,
maximum/minimum/maxnum/minnum, abs, ctlz/cttz/ctpop, smin/smax/umin/umax);
libm calls for the rest (tanh, erf, erfc, log1p, expm1, tan, atan, atan2,
asin, acos, sinh, cosh, asinh, acosh, atanh, cbrt). LLVM vectorises the
surrounding loop around intrinsic calls but scalarises the calls themselves
(this LLVM build maps no vector math library), and libm calls keep their
loop scalar. `vector_math=True` replaces f32/f64 `math.exp`, `math.log` and
`math.tanh` by inline, vectorisable polynomials instead (`_emit_exp_poly`,
`_emit_log_poly`, `_emit_tanh_poly`; within a few ulp).
"""

from __future__ import annotations

import ctypes
import math as pymath
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import llvmlite.binding as llvm
import llvmlite.ir as ir
import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue

from dfc.compiler.codegen import blas_runtime, gemm_kernel, perf_map
from dfc.compiler.codegen.ir_loop import counted_loop
from dfc.compiler.codegen.object_cache import CachedObject
from dfc.compiler.codegen.runtime import BODY_TYPE, declare_runtime, install, opaque
from dfc.compiler.codegen.target import host_target_machine
from dfc.compiler.diagnostics import location_of
from dfc.compiler.dominance import defined_inside

__all__ = ["emit_module", "optimize", "JitModule", "ENTRY_PREFIX", "DEFAULT_PARALLEL_MIN_WORK"]

ENTRY_PREFIX = "_dfc_entry_"
"""Exported wrappers are named ENTRY_PREFIX + the func.func symbol name."""

DEFAULT_PARALLEL_MIN_WORK = 1 << 17

BOUNDS_FAILURES = "__dfc_bounds_failures"
"""An exported i64 counting the module's failed bounds checks (`check-bounds`):
the engine compares it before and after a call."""
BOUNDS_SITE = "__dfc_bounds_site"
"""An exported pointer to the message of the last failed bounds check."""
"""Default `parallel_min_work`: estimated ops each thread must get before a
parallel loop uses the runtime's thread pool. Handing a loop to awake
(spinning) workers costs a few microseconds on the development machine, and
waking sleeping ones tens; 128K ops (tens of microseconds of vectorised work)
is about the break-even."""

_PTR = ir.PointerType()
_I1 = ir.IntType(1)
_I8 = ir.IntType(8)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_VOID = ir.VoidType()
_ALLOC_ALIGN = 64


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
_NARROW_FLOATS = (ir.HalfType, BFloatType)
"""Types whose libm calls go through f32."""
_TERMINATORS = frozenset({"scf.yield", "scf.condition", "scf.reduce", "func.return"})


def _unsupported(what: str) -> NotImplementedError:
    return NotImplementedError(f"LLVM emitter: unsupported {what}")


# ---------------------------------------------------------------------------
# Types


def _scalar_type(t: Attribute) -> ir.Type:
    if isinstance(t, IndexType):
        return _I64
    if isinstance(t, IntegerType):
        return ir.IntType(t.width.data)
    ctor = _FLOAT_IR.get(type(t))
    if ctor is not None:
        return ctor()
    raise _unsupported(f"type '{t}'")


def _is_float(ty: ir.Type) -> bool:
    return isinstance(ty, (ir.HalfType, BFloatType, ir.FloatType, ir.DoubleType))


def _type_suffix(ty: ir.Type) -> str:
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


def _byte_size(ty: ir.Type) -> int:
    if isinstance(ty, _NARROW_FLOATS):
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


def _check_memref(t: MemRefType) -> None:
    layout = t.layout
    if isinstance(layout, NoneAttr):
        return
    if isinstance(layout, AffineMapAttr) and layout.data == layout.data.identity(len(t.get_shape())):
        return
    raise _unsupported(f"memref layout '{layout}' (only the identity layout is supported)")


def _flat_types(t: Attribute) -> list[ir.Type]:
    """LLVM types a value of type `t` expands to in function signatures."""
    if isinstance(t, MemRefType):
        _check_memref(t)
        return [_PTR] + [_I64 for d in t.get_shape() if d == DYNAMIC_INDEX]
    return [_scalar_type(t)]


@dataclass
class _MemRef:
    """A memref value: data pointer and one i64 size per dimension."""

    ptr: ir.Value
    sizes: list[ir.Value]
    type: MemRefType
    elem: ir.Type

    def flatten(self) -> list[ir.Value]:
        return [self.ptr] + [s for s, d in zip(self.sizes, self.type.get_shape()) if d == DYNAMIC_INDEX]


def _unflatten(t: Attribute, vals: Sequence[ir.Value]) -> ir.Value | _MemRef:
    if isinstance(t, MemRefType):
        it = iter(vals[1:])
        sizes = [next(it) if d == DYNAMIC_INDEX else ir.Constant(_I64, d) for d in t.get_shape()]
        return _MemRef(vals[0], sizes, t, _scalar_type(t.element_type))
    (v,) = vals
    return v


def _flatten(v: ir.Value | _MemRef) -> list[ir.Value]:
    return v.flatten() if isinstance(v, _MemRef) else [v]


def _int_const(v: SSAValue) -> int | None:
    """The value of `v` when it is an integer/index arith.constant."""
    op = v.owner
    if isinstance(op, Operation) and op.name == "arith.constant":
        attr = op.properties.get("value")
        if isinstance(attr, IntegerAttr):
            return attr.value.data
    return None


# ---------------------------------------------------------------------------
# Work estimate (for the parallel threshold)

_EXPENSIVE = ("math.", "arith.div", "arith.rem")
_UNKNOWN_TRIP = 1024
"""Assumed trip count of a loop whose bounds are only known inside the
parallel loop (dynamic bounds are usually data sizes)."""

_Work = int | ir.Value
"""A work estimate: a Python int, or an i64 computed at run time."""


class _WorkEstimator:
    """Estimates the ops one iteration of a parallel body executes, as IR
    evaluated just before the parallel loop starts. The trip count of an inner
    loop is computed at run time when its bounds are defined outside the
    parallel op, or when its upper bound is `lb + X` or `min(lb + X, ...)`
    with X (and the step) defined outside (the chunked loops of lowered
    reductions); otherwise it is `_UNKNOWN_TRIP`."""

    def __init__(self, e: "_FnEmitter", par: Operation):
        self.e = e
        self.par = par

    def add(self, x: _Work, y: _Work) -> _Work:
        if isinstance(x, int) and isinstance(y, int):
            return x + y
        return self.e.b.add(self._v(x), self._v(y))

    def mul(self, x: _Work, y: _Work) -> _Work:
        if isinstance(x, int) and isinstance(y, int):
            return x * y
        return self.e.b.mul(self._v(x), self._v(y))

    @staticmethod
    def _v(x: _Work) -> ir.Value:
        return ir.Constant(_I64, x) if isinstance(x, int) else x

    def value(self, v: SSAValue) -> _Work | None:
        """`v` as a constant or an i64 known before the parallel loop, else None."""
        c = _int_const(v)
        if c is not None:
            return c
        if defined_inside(v, self.par) or v not in self.e.values:
            return None
        x = self.e.values[v]
        if not isinstance(x, ir.Value) or not isinstance(x.type, ir.IntType):
            return None
        return self.e.b.sext(x, _I64) if x.type.width < 64 else x

    @staticmethod
    def span(lb: SSAValue, ub: SSAValue) -> SSAValue | None:
        """X when `ub` is `lb + X` or `min(lb + X, ...)` (chunked loops)."""
        owner = ub.owner
        if not isinstance(owner, Operation):
            return None
        if owner.name in ("arith.minui", "arith.minsi"):
            for cand in owner.operands:
                x = _WorkEstimator.span(lb, cand)
                if x is not None:
                    return x
        if owner.name == "arith.addi":
            a, b = owner.operands
            if a == lb:
                return b
            if b == lb:
                return a
        return None

    def ceil_div(self, n: _Work, d: _Work) -> _Work:
        if isinstance(n, int) and isinstance(d, int):
            return max(0, -(-n // d)) if d > 0 else _UNKNOWN_TRIP
        b = self.e.b
        n, d = self._v(n), self._v(d)
        if not isinstance(d, ir.Constant):  # a step of 0 must not trap here
            d = b.select(b.icmp_signed(">", d, ir.Constant(_I64, 0)), d, ir.Constant(_I64, 1))
        q = b.sdiv(b.add(n, b.sub(d, ir.Constant(_I64, 1))), d)
        return b.select(b.icmp_signed(">", n, ir.Constant(_I64, 0)), q, ir.Constant(_I64, 0))

    def trip(self, lb: SSAValue, ub: SSAValue, step: SSAValue) -> _Work:
        s = self.value(step)
        if s is None:
            return _UNKNOWN_TRIP
        a, b = self.value(lb), self.value(ub)
        if a is not None and b is not None:
            if isinstance(a, int) and isinstance(b, int):
                return self.ceil_div(b - a, s)
            return self.ceil_div(self.e.b.sub(self._v(b), self._v(a)), s)
        x = self.span(lb, ub)
        if x is not None and (xv := self.value(x)) is not None:
            return self.ceil_div(xv, s)
        return _UNKNOWN_TRIP

    def block(self, block: Block) -> _Work:
        w: _Work = 0
        for op in block.ops:
            name = op.name
            if name in _TERMINATORS or name == "arith.constant":
                continue
            if name == "scf.for":
                w = self.add(w, self.mul(self.trip(*op.operands[:3]), self.block(op.regions[0].block)))
            elif name == "scf.parallel":
                n = len(op.regions[0].block.args)
                trips: _Work = 1
                for k in range(n):
                    trips = self.mul(trips, self.trip(op.operands[k], op.operands[n + k], op.operands[2 * n + k]))
                w = self.add(w, self.mul(trips, self.block(op.regions[0].block)))
            elif name == "scf.while":
                w = self.add(w, self.mul(_UNKNOWN_TRIP, sum(1 for r in op.regions for _ in r.block.ops)))
            elif op.regions:
                for r in op.regions:
                    for blk in r.blocks:
                        w = self.add(w, self.block(blk))
            else:
                w = self.add(w, 8 if name.startswith(_EXPENSIVE) else 1)
        return w


# ---------------------------------------------------------------------------
# The module emitter


class _ModuleEmitter:
    def __init__(
        self,
        module: ModuleOp,
        *,
        fast_math: bool,
        num_threads: int,
        parallel_min_work: int,
        vector_math: bool,
    ):
        if int(num_threads) < 1:
            raise ValueError(f"num_threads must be >= 1, got {num_threads}")
        self.module = module
        self.fast_math = fast_math
        self.num_threads = int(num_threads)
        self.parallel_min_work = max(0, int(parallel_min_work))
        self.vector_math = vector_math
        self.own_gemm = gemm_kernel.enabled()
        """Whether `blas.gemm` calls dfc's kernels (`gemm_kernel`) instead of OpenBLAS."""
        self.ir = ir.Module(name="dfc")
        self.ir.triple = llvm.get_process_triple()
        self.ir.data_layout = str(host_target_machine().target_data)
        self.funcs: dict[str, tuple[Operation, ir.Function]] = {}
        self.globals: dict[str, tuple[Operation, ir.GlobalVariable]] = {}
        self._outlined = 0
        self._messages: dict[str, ir.GlobalVariable] = {}
        self._scopes: dict[Operation, dict[tuple, tuple[ir.MDValue, ir.MDValue]]] = {}

    # -- helpers shared by function emitters

    def declare(self, name: str, ret: ir.Type, args: Sequence[ir.Type], *, pure: bool = False) -> ir.Function:
        fn = self.ir.globals.get(name)
        if fn is None:
            fn = ir.Function(self.ir, ir.FunctionType(ret, list(args)), name)
            if pure:
                fn.attributes.add("nounwind")
                fn.attributes.add("readnone")
        return fn

    def bounds_state(self) -> tuple[ir.GlobalVariable, ir.GlobalVariable]:
        """The module's failed-bounds-check counter and last failure message (created on first use)."""
        if BOUNDS_FAILURES not in self.ir.globals:
            count = ir.GlobalVariable(self.ir, _I64, BOUNDS_FAILURES)
            count.initializer = ir.Constant(_I64, 0)
            site = ir.GlobalVariable(self.ir, _PTR, BOUNDS_SITE)
            site.initializer = ir.Constant(_PTR, None)
            opaque(count)
            opaque(site)
        return self.ir.globals[BOUNDS_FAILURES], self.ir.globals[BOUNDS_SITE]

    def message(self, text: str) -> ir.GlobalVariable:
        """A private, NUL-terminated constant string."""
        if text not in self._messages:
            data = bytearray(text.encode() + b"\0")
            gv = ir.GlobalVariable(self.ir, ir.ArrayType(ir.IntType(8), len(data)), f"__dfc_msg.{len(self._messages)}")
            gv.initializer = ir.Constant(gv.value_type, data)
            gv.global_constant = True
            gv.linkage = "private"
            self._messages[text] = opaque(gv)
        return self._messages[text]

    def intrinsic(self, base: str, types: Sequence[ir.Type], ret: ir.Type, args: Sequence[ir.Type]) -> ir.Function:
        name = "llvm." + base + "".join("." + _type_suffix(t) for t in types)
        return self.declare(name, ret, args)

    def view_scopes(self, func_op: Operation) -> dict[tuple, tuple[ir.MDValue, ir.MDValue]]:
        """For each byte range (`_memref_extent`) of the views in `func_op` that
        other views of the same allocation do not overlap (mem-plan's slots):
        its `!alias.scope` and the `!noalias` list of the ranges disjoint from it."""
        if func_op not in self._scopes:
            extents = list(dict.fromkeys(
                x for op in func_op.walk() if op.name == "memref.view" and (x := _memref_extent(op.results[0]))
            ))  # fmt: skip
            disjoint = {x: [y for y in extents if y[0] == x[0] and (y[2] <= x[1] or x[2] <= y[1])] for x in extents}
            scoped = [x for x in extents if disjoint[x]]
            name = func_op.sym_name.data
            domain = self.ir.add_metadata([f"dfc.views.{name}"]) if scoped else None
            scope = {x: self.ir.add_metadata([f"dfc.view.{name}.{k}", domain]) for k, x in enumerate(scoped)}
            self._scopes[func_op] = {
                x: (self.ir.add_metadata([scope[x]]), self.ir.add_metadata([scope[y] for y in disjoint[x]]))
                for x in scoped
            }
        return self._scopes[func_op]

    def fresh_name(self, base: str) -> str:
        self._outlined += 1
        return f"{base}.par{self._outlined}"

    # -- top level

    def run(self) -> ir.Module:
        bodies = []
        for op in self.module.ops:
            if op.name == "memref.global":
                self._emit_global(op)
            elif op.name == "func.func":
                bodies.append(self._declare_func(op))
            else:
                raise _unsupported(f"op '{op.name}' at module level")
        for op, fn in bodies:
            if fn is None:
                continue
            _FnEmitter(self, fn, op, in_parallel=False).emit_func_body()
            self._emit_wrapper(op, fn)
        return self.ir

    def _declare_func(self, op: Operation) -> tuple[Operation, ir.Function | None]:
        name = op.sym_name.data
        ftype = op.function_type
        params = [t for a in ftype.inputs.data for t in _flat_types(a)]
        rets = [t for r in ftype.outputs.data for t in _flat_types(r)]
        ret_ty = _VOID if not rets else rets[0] if len(rets) == 1 else ir.LiteralStructType(rets)
        declaration = not op.body.blocks
        fn = ir.Function(self.ir, ir.FunctionType(ret_ty, params), name if declaration else "_dfc_fn_" + name)
        self.funcs[name] = (op, fn)
        if declaration:
            return op, None
        fn.linkage = "internal"
        fn.attributes.add("nounwind")
        returns_memref = any(isinstance(r, MemRefType) for r in ftype.outputs.data)
        k = 0
        for a in ftype.inputs.data:
            for j, _ in enumerate(_flat_types(a)):
                if isinstance(a, MemRefType) and j == 0:
                    fn.args[k].add_attribute("noalias")
                    if not returns_memref:
                        fn.args[k].add_attribute("captures(none)")
                k += 1
        return op, fn

    def _emit_global(self, op: Operation) -> None:
        name = op.sym_name.data
        t = op.type
        if not isinstance(t, MemRefType):
            raise _unsupported(f"memref.global type '{t}'")
        _check_memref(t)
        elem = _scalar_type(t.element_type)
        n = int(np.prod(t.get_shape(), dtype=np.int64))
        size = n * _byte_size(elem)
        arr_ty = ir.ArrayType(_I8, max(size, 1))
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
            raise _unsupported(f"memref.global initial value '{init}'")
        gv = ir.GlobalVariable(self.ir, arr_ty, "_dfc_global_" + name)
        gv.linkage = "internal"
        gv.global_constant = op.constant is not None
        gv.initializer = const
        align = op.alignment.value.data if op.alignment is not None else 0
        gv.align = max(_ALLOC_ALIGN, align)
        self.globals[name] = (op, gv)

    def _emit_wrapper(self, op: Operation, fn: ir.Function) -> None:
        name = op.sym_name.data
        w = ir.Function(self.ir, ir.FunctionType(_VOID, [_PTR]), ENTRY_PREFIX + name)
        w.attributes.add("nounwind")
        desc = w.args[0]
        desc.name = "desc"
        desc.add_attribute("noalias")
        b = ir.IRBuilder(w.append_basic_block("entry"))
        slot_no = 0

        def slot() -> ir.Value:
            nonlocal slot_no
            p = b.gep(desc, [ir.Constant(_I64, slot_no)], inbounds=True, source_etype=_I64)
            slot_no += 1
            return p

        args: list[ir.Value] = []
        for t in op.function_type.inputs.data:
            if isinstance(t, MemRefType):
                args.append(b.load(slot(), typ=_PTR, align=8))
                args.extend(b.load(slot(), typ=_I64, align=8) for d in t.get_shape() if d == DYNAMIC_INDEX)
            else:
                ty = _scalar_type(t)
                if isinstance(ty, ir.IntType):
                    v = b.load(slot(), typ=_I64, align=8)
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
            n = len(_flat_types(t))
            v = _unflatten(t, flat[k : k + n])
            k += n
            if isinstance(v, _MemRef):
                b.store(v.ptr, slot(), align=8)
                for s in v.sizes:
                    b.store(s, slot(), align=8)
            elif isinstance(v.type, ir.IntType):
                w64 = v if v.type.width == 64 else (b.zext(v, _I64) if v.type.width == 1 else b.sext(v, _I64))
                b.store(w64, slot(), align=8)
            else:
                b.store(v, slot(), align=8)
        b.ret_void()


def _pack(values: Sequence, elem: ir.Type, n: int) -> bytes:
    if len(values) != n:
        raise _unsupported(f"dense initialiser with {len(values)} elements for {n}")
    if isinstance(elem, ir.IntType):
        if elem.width == 1:
            return np.asarray([int(v) & 1 for v in values], dtype=np.uint8).tobytes()
        size = _byte_size(elem)
        mask = (1 << (8 * size)) - 1
        dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[size]
        return np.asarray([int(v) & mask for v in values], dtype=dtype).astype(np.dtype(dtype).newbyteorder("<")).tobytes()
    if isinstance(elem, BFloatType):
        return np.asarray(values, dtype=ml_dtypes.bfloat16).tobytes()
    dtype = {ir.HalfType: "<f2", ir.FloatType: "<f4", ir.DoubleType: "<f8"}[type(elem)]
    return np.asarray(values, dtype=dtype).tobytes()


# ---------------------------------------------------------------------------
# Function bodies

_CMPF = {
    1: ("o", "=="), 2: ("o", ">"), 3: ("o", ">="), 4: ("o", "<"), 5: ("o", "<="), 6: ("o", "!="), 7: ("o", "ord"),
    8: ("u", "=="), 9: ("u", ">"), 10: ("u", ">="), 11: ("u", "<"), 12: ("u", "<="), 13: ("u", "!="), 14: ("u", "uno"),
}  # fmt: skip
_CMPI = {
    0: ("s", "=="), 1: ("s", "!="), 2: ("s", "<"), 3: ("s", "<="), 4: ("s", ">"), 5: ("s", ">="),
    6: ("u", "<"), 7: ("u", "<="), 8: ("u", ">"), 9: ("u", ">="),
}  # fmt: skip
_FBIN = {"arith.addf": "fadd", "arith.subf": "fsub", "arith.mulf": "fmul", "arith.divf": "fdiv", "arith.remf": "frem"}
_IBIN = {
    "arith.addi": "add", "arith.subi": "sub", "arith.muli": "mul", "arith.divsi": "sdiv", "arith.divui": "udiv",
    "arith.remsi": "srem", "arith.remui": "urem", "arith.andi": "and_", "arith.ori": "or_", "arith.xori": "xor",
    "arith.shli": "shl", "arith.shrsi": "ashr", "arith.shrui": "lshr",
}  # fmt: skip
_IMINMAX = {"arith.minsi": "smin", "arith.maxsi": "smax", "arith.minui": "umin", "arith.maxui": "umax"}
_FMINMAX = {"arith.maximumf": "maximum", "arith.minimumf": "minimum", "arith.maxnumf": "maxnum", "arith.minnumf": "minnum"}
_MATH_INTRINSIC1 = {
    "math.exp": "exp", "math.exp2": "exp2", "math.log": "log", "math.log2": "log2", "math.log10": "log10",
    "math.sqrt": "sqrt", "math.sin": "sin", "math.cos": "cos", "math.absf": "fabs", "math.floor": "floor",
    "math.ceil": "ceil", "math.round": "round", "math.roundeven": "roundeven", "math.trunc": "trunc",
}  # fmt: skip
_MATH_LIBM1 = {
    "math.tanh": "tanh", "math.erf": "erf", "math.erfc": "erfc", "math.log1p": "log1p", "math.expm1": "expm1",
    "math.tan": "tan", "math.atan": "atan", "math.asin": "asin", "math.acos": "acos", "math.sinh": "sinh",
    "math.cosh": "cosh", "math.asinh": "asinh", "math.acosh": "acosh", "math.atanh": "atanh", "math.cbrt": "cbrt",
}  # fmt: skip
_CASTS = {
    "arith.sitofp": "sitofp", "arith.uitofp": "uitofp", "arith.fptosi": "fptosi", "arith.fptoui": "fptoui",
    "arith.extf": "fpext", "arith.truncf": "fptrunc", "arith.extsi": "sext", "arith.extui": "zext",
    "arith.trunci": "trunc", "arith.bitcast": "bitcast",
}  # fmt: skip
_REMAT = frozenset({"arith.constant", "memref.get_global"})


def _rematerialisable(v: SSAValue) -> bool:
    """Whether an outlined body recomputes `v` instead of capturing it: a
    constant, a global, or a view of a global at a constant offset."""
    owner = v.owner
    if not isinstance(owner, Operation):
        return False
    return owner.name in _REMAT or (owner.name == "memref.view" and all(map(_rematerialisable, owner.operands)))


OUTLINE_MIN_NESTS = 8
"""A function with at least this many top-level loop nests emits each in a
function of its own (`_outlined_nest`): LLVM's optimisation of one function
grows faster than its size, and a solver or gradient of many small maps is
one function of hundreds of loops."""


class _FnEmitter:
    def __init__(self, mod: _ModuleEmitter, fn: ir.Function, func_op: Operation, *, in_parallel: bool):
        self.m = mod
        self.fn = fn
        self.func_op = func_op
        self.in_parallel = in_parallel
        # allocas go in `entry`, which only branches to `start`
        self.entry = fn.append_basic_block("entry")
        start = fn.append_basic_block("start")
        self._entry_br = ir.IRBuilder(self.entry).branch(start)
        self.b = ir.IRBuilder(start)
        self.values: dict[SSAValue, ir.Value | _MemRef] = {}
        self.view_scopes = mod.view_scopes(func_op)
        self.outline_nests = False
        """Whether the top-level loop nests become functions (`OUTLINE_MIN_NESTS`)."""

    # -- values

    def get(self, v: SSAValue) -> ir.Value | _MemRef:
        try:
            return self.values[v]
        except KeyError:
            raise AssertionError(f"LLVM emitter: value {v} used before definition") from None

    def getv(self, v: SSAValue) -> ir.Value:
        r = self.get(v)
        assert not isinstance(r, _MemRef)
        return r

    def getm(self, v: SSAValue) -> _MemRef:
        r = self.get(v)
        assert isinstance(r, _MemRef)
        return r

    def entry_alloca(self, ty: ir.Type, align: int, name: str = "") -> ir.Value:
        eb = ir.IRBuilder(self.entry)
        eb.position_before(self._entry_br)
        a = eb.alloca(ty, name=name)
        a.align = align
        return opaque(a)

    def fflags(self, op: Operation) -> tuple[str, ...]:
        if not self.m.fast_math:
            return ()
        flags = {"reassoc", "contract"}
        attr = op.properties.get("fastmath")
        if attr is not None:
            flags |= {str(getattr(f, "value", f)) for f in attr.data}
        return tuple(sorted(flags))

    def explicit_fflags(self, op: Operation) -> tuple[str, ...]:
        attr = op.properties.get("fastmath")
        if not self.m.fast_math or attr is None:
            return ()
        return tuple(sorted(str(getattr(f, "value", f)) for f in attr.data))

    # -- blocks

    def emit_ops(self, block: Block) -> Operation | None:
        """Emit every op of `block` but its region terminator, which is returned."""
        for op in block.ops:
            if op.name in _TERMINATORS:
                if op is not block.last_op:
                    raise _unsupported(f"op '{op.name}' before the end of a block")
                return op
            handler = _HANDLERS.get(op.name)
            if handler is None:
                raise _unsupported(f"op '{op.name}'")
            handler(self, op)
            for r in op.results:
                self.name_value(r)
        return None

    def name_value(self, v: SSAValue) -> None:
        """Give the LLVM value of `v` its MLIR name, for readable IR."""
        if v.name_hint is None or v not in self.values:
            return
        x = _flatten(self.values[v])[0]
        if isinstance(x, (ir.Instruction, ir.Argument)) and x.name.startswith("."):
            x.name = v.name_hint

    def single_block(self, region, what: str) -> Block:
        if len(region.blocks) != 1:
            raise _unsupported(f"{what} with {len(region.blocks)} blocks")
        return region.blocks[0]

    def emit_func_body(self) -> None:
        op = self.func_op
        block = self.single_block(op.body, f"func.func @{op.sym_name.data}")
        k = 0
        for i, arg in enumerate(block.args):
            n = len(_flat_types(arg.type))
            for j, a in enumerate(self.fn.args[k : k + n]):
                a.name = (arg.name_hint or f"arg{i}") + (f".size{j - 1}" if j else "")
            self.values[arg] = _unflatten(arg.type, self.fn.args[k : k + n])
            k += n
        self.outline_nests = sum(map(_outlinable, block.ops)) >= OUTLINE_MIN_NESTS
        term = self.emit_ops(block)
        if term is None or term.name != "func.return":
            raise _unsupported("func.func body without func.return")
        flat = [x for v in term.operands for x in _flatten(self.get(v))]
        ret_ty = self.fn.function_type.return_type
        if not flat:
            self.b.ret_void()
        elif len(flat) == 1 and not isinstance(ret_ty, ir.LiteralStructType):
            self.b.ret(flat[0])
        else:
            agg = ir.Constant(ret_ty, ir.Undefined)
            for i, v in enumerate(flat):
                agg = self.b.insert_value(agg, v, i)
            self.b.ret(agg)

    # -- loops

    def loop(
        self,
        lb: ir.Value,
        ub: ir.Value,
        step: ir.Value,
        inits: list[ir.Value],
        body: Callable[[ir.Value, list[ir.Value]], list[ir.Value]],
        name: str = "for",
    ) -> list[ir.Value]:
        """`for (iv = lb; iv < ub; iv += step)` with loop-carried `inits`;
        `body(iv, carried)` emits one iteration and returns the next values.
        Returns the carried values on exit."""
        return counted_loop(self.fn, self.b, lb, ub, step, inits, body, name)

    # -- memref addressing

    def address(self, m: _MemRef, indices: Sequence[SSAValue]) -> ir.Value:
        if not indices:
            return m.ptr
        b = self.b
        idx = self.getv(indices[0])
        for k in range(1, len(indices)):
            idx = b.add(b.mul(idx, m.sizes[k], flags=("nsw",)), self.getv(indices[k]), flags=("nsw",))
        return b.gep(m.ptr, [idx], inbounds=True, source_etype=m.elem)

    def num_elements(self, m: _MemRef) -> ir.Value:
        n: ir.Value = ir.Constant(_I64, 1)
        for s in m.sizes:
            n = self.b.mul(n, s, flags=("nsw",)) if not (isinstance(n, ir.Constant) and n.constant == 1) else s
        return n

    # -- calls

    def report_out_of_bounds(self, op: Operation) -> None:
        """Count a failed bounds check of `op` and record where it happened (see `BOUNDS_FAILURES`)."""
        failures, site = self.m.bounds_state()
        self.b.atomic_rmw("add", failures, ir.Constant(_I64, 1), "monotonic")
        self.b.store(self.m.message(bounds_message(op)), site, align=8)  # any one failure's message

    def call_intrinsic(self, base: str, ty: ir.Type, args: list[ir.Value], flags=()) -> ir.Value:
        fn = self.m.intrinsic(base, [ty], ty, [a.type for a in args])
        return self.b.call(fn, args, fastmath=flags if _is_float(ty) else ())

    def call_libm(self, base: str, args: list[ir.Value], flags=()) -> ir.Value:
        ty = args[0].type
        b = self.b
        if isinstance(ty, _NARROW_FLOATS):
            wide = [b.fpext(a, ir.FloatType()) for a in args]
            return b.fptrunc(self.call_libm(base, wide, flags), ty)
        name = base + ("f" if isinstance(ty, ir.FloatType) else "")
        fn = self.m.declare(name, ty, [ty] * len(args), pure=True)
        return b.call(fn, args, fastmath=flags)


# ---------------------------------------------------------------------------
# Op handlers

_HANDLERS: dict[str, Callable[[_FnEmitter, Operation], None]] = {}


def _handles(*names: str):
    def deco(f):
        for n in names:
            _HANDLERS[n] = f
        return f

    return deco


def _res_type(op: Operation) -> ir.Type:
    return _scalar_type(op.results[0].type)


@_handles("arith.constant")
def _constant(e: _FnEmitter, op: Operation) -> None:
    attr = op.properties["value"]
    ty = _res_type(op)
    if isinstance(attr, IntegerAttr) and isinstance(ty, ir.IntType):
        w = ty.width
        v = attr.value.data & ((1 << w) - 1)
        if w > 1 and v >= 1 << (w - 1):
            v -= 1 << w
        e.values[op.results[0]] = ir.Constant(ty, v)
    elif isinstance(attr, FloatAttr) and _is_float(ty):
        e.values[op.results[0]] = ir.Constant(ty, float(attr.value.data))
    else:
        raise _unsupported(f"arith.constant value '{attr}'")


for _name, _inst in _FBIN.items():

    def _fbin(e: _FnEmitter, op: Operation, _inst=_inst) -> None:
        lhs, rhs = (e.getv(v) for v in op.operands)
        e.values[op.results[0]] = getattr(e.b, _inst)(lhs, rhs, flags=e.fflags(op))

    _HANDLERS[_name] = _fbin


@_handles("arith.negf")
def _negf(e: _FnEmitter, op: Operation) -> None:
    e.values[op.results[0]] = e.b.fneg(e.getv(op.operands[0]), flags=e.fflags(op))


for _name, _inst in _IBIN.items():

    def _ibin(e: _FnEmitter, op: Operation, _inst=_inst) -> None:
        lhs, rhs = (e.getv(v) for v in op.operands)
        e.values[op.results[0]] = getattr(e.b, _inst)(lhs, rhs)

    _HANDLERS[_name] = _ibin

for _name, _intr in _IMINMAX.items():

    def _iminmax(e: _FnEmitter, op: Operation, _intr=_intr) -> None:
        args = [e.getv(v) for v in op.operands]
        e.values[op.results[0]] = e.call_intrinsic(_intr, args[0].type, args)

    _HANDLERS[_name] = _iminmax

for _name, _intr in _FMINMAX.items():

    def _fminmax(e: _FnEmitter, op: Operation, _intr=_intr) -> None:
        args = [e.getv(v) for v in op.operands]
        e.values[op.results[0]] = e.call_intrinsic(_intr, args[0].type, args, e.fflags(op))

    _HANDLERS[_name] = _fminmax


@_handles("arith.ceildivsi", "arith.floordivsi", "arith.ceildivui")
def _divround(e: _FnEmitter, op: Operation) -> None:
    b = e.b
    a, d = (e.getv(v) for v in op.operands)
    zero = ir.Constant(a.type, 0)
    one = ir.Constant(a.type, 1)
    if op.name == "arith.ceildivui":
        q = b.add(b.udiv(b.sub(a, one), d), one)
        e.values[op.results[0]] = b.select(b.icmp_unsigned("==", a, zero), zero, q)
        return
    q = b.sdiv(a, d)
    r = b.srem(a, d)
    inexact = b.icmp_signed("!=", r, zero)
    same_sign = b.icmp_signed("==", b.icmp_signed("<", a, zero), b.icmp_signed("<", d, zero))
    if op.name == "arith.ceildivsi":
        adjust = b.and_(inexact, same_sign)
        e.values[op.results[0]] = b.select(adjust, b.add(q, one), q)
    else:
        adjust = b.and_(inexact, b.not_(same_sign))
        e.values[op.results[0]] = b.select(adjust, b.sub(q, one), q)


@_handles("arith.cmpf")
def _cmpf(e: _FnEmitter, op: Operation) -> None:
    pred = op.properties["predicate"].value.data
    lhs, rhs = (e.getv(v) for v in op.operands)
    if pred == 0:
        e.values[op.results[0]] = ir.Constant(_I1, 0)
    elif pred == 15:
        e.values[op.results[0]] = ir.Constant(_I1, 1)
    else:
        kind, cmp = _CMPF[pred]
        f = e.b.fcmp_ordered if kind == "o" else e.b.fcmp_unordered
        e.values[op.results[0]] = f(cmp, lhs, rhs, flags=e.explicit_fflags(op))


@_handles("arith.cmpi")
def _cmpi(e: _FnEmitter, op: Operation) -> None:
    kind, cmp = _CMPI[op.properties["predicate"].value.data]
    lhs, rhs = (e.getv(v) for v in op.operands)
    f = e.b.icmp_signed if kind == "s" else e.b.icmp_unsigned
    e.values[op.results[0]] = f(cmp, lhs, rhs)


@_handles("arith.select")
def _select(e: _FnEmitter, op: Operation) -> None:
    c = e.getv(op.operands[0])
    x, y = e.get(op.operands[1]), e.get(op.operands[2])
    if isinstance(x, _MemRef):
        vals = [e.b.select(c, p, q) for p, q in zip(x.flatten(), _flatten(y))]
        e.values[op.results[0]] = _unflatten(op.results[0].type, vals)
    else:
        e.values[op.results[0]] = e.b.select(c, x, y)


@_handles("arith.index_cast", "arith.index_castui")
def _index_cast(e: _FnEmitter, op: Operation) -> None:
    v = e.getv(op.operands[0])
    ty = _res_type(op)
    if ty.width == v.type.width:
        r = v
    elif ty.width < v.type.width:
        r = e.b.trunc(v, ty)
    else:
        r = e.b.sext(v, ty) if op.name == "arith.index_cast" else e.b.zext(v, ty)
    e.values[op.results[0]] = r


for _name, _inst in _CASTS.items():

    def _cast(e: _FnEmitter, op: Operation, _inst=_inst) -> None:
        e.values[op.results[0]] = getattr(e.b, _inst)(e.getv(op.operands[0]), _res_type(op))

    _HANDLERS[_name] = _cast


# -- math


for _name, _intr in _MATH_INTRINSIC1.items():

    def _mintr(e: _FnEmitter, op: Operation, _intr=_intr) -> None:
        x = e.getv(op.operands[0])
        if _intr in _POLYNOMIALS and e.m.vector_math and isinstance(x.type, (ir.FloatType, ir.DoubleType)):
            e.values[op.results[0]] = _POLYNOMIALS[_intr](e, x, e.fflags(op))
            return
        e.values[op.results[0]] = e.call_intrinsic(_intr, x.type, [x], e.fflags(op))

    _HANDLERS[_name] = _mintr

for _name, _fn in _MATH_LIBM1.items():

    def _mlibm(e: _FnEmitter, op: Operation, _fn=_fn) -> None:
        x = e.getv(op.operands[0])
        if _fn == "tanh" and e.m.vector_math and isinstance(x.type, (ir.FloatType, ir.DoubleType)):
            e.values[op.results[0]] = _emit_tanh_poly(e, x, e.fflags(op))
            return
        e.values[op.results[0]] = e.call_libm(_fn, [x], e.fflags(op))

    _HANDLERS[_name] = _mlibm


@_handles("math.atan2")
def _atan2(e: _FnEmitter, op: Operation) -> None:
    e.values[op.results[0]] = e.call_libm("atan2", [e.getv(v) for v in op.operands], e.fflags(op))


@_handles("math.powf")
def _powf(e: _FnEmitter, op: Operation) -> None:
    args = [e.getv(v) for v in op.operands]
    e.values[op.results[0]] = e.call_intrinsic("pow", args[0].type, args, e.fflags(op))


@_handles("math.copysign")
def _copysign(e: _FnEmitter, op: Operation) -> None:
    args = [e.getv(v) for v in op.operands]
    e.values[op.results[0]] = e.call_intrinsic("copysign", args[0].type, args, e.fflags(op))


@_handles("math.fpowi")
def _fpowi(e: _FnEmitter, op: Operation) -> None:
    x, n = (e.getv(v) for v in op.operands)
    if n.type.width > 32:
        n = e.b.trunc(n, _I32)
    elif n.type.width < 32:
        n = e.b.sext(n, _I32)
    fn = e.m.intrinsic("powi", [x.type, _I32], x.type, [x.type, _I32])
    e.values[op.results[0]] = e.b.call(fn, [x, n], fastmath=e.fflags(op))


@_handles("math.rsqrt")
def _rsqrt(e: _FnEmitter, op: Operation) -> None:
    x = e.getv(op.operands[0])
    s = e.call_intrinsic("sqrt", x.type, [x], e.fflags(op))
    e.values[op.results[0]] = e.b.fdiv(ir.Constant(x.type, 1.0), s, flags=e.fflags(op))


@_handles("math.fma")
def _fma(e: _FnEmitter, op: Operation) -> None:
    args = [e.getv(v) for v in op.operands]
    e.values[op.results[0]] = e.call_intrinsic("fma", args[0].type, args, e.fflags(op))


@_handles("math.absi")
def _absi(e: _FnEmitter, op: Operation) -> None:
    x = e.getv(op.operands[0])
    fn = e.m.intrinsic("abs", [x.type], x.type, [x.type, _I1])
    e.values[op.results[0]] = e.b.call(fn, [x, ir.Constant(_I1, 0)])


@_handles("math.ctlz", "math.cttz", "math.ctpop")
def _bitcount(e: _FnEmitter, op: Operation) -> None:
    x = e.getv(op.operands[0])
    base = op.name.split(".")[1]
    if base == "ctpop":
        e.values[op.results[0]] = e.call_intrinsic("ctpop", x.type, [x])
    else:
        fn = e.m.intrinsic(base, [x.type], x.type, [x.type, _I1])
        e.values[op.results[0]] = e.b.call(fn, [x, ir.Constant(_I1, 0)])


def _emit_exp_poly(e: _FnEmitter, x: ir.Value, flags) -> ir.Value:
    """exp(x) inline, vectorisable: Cody-Waite reduction x = n*ln2 + r with
    |r| <= ln2/2, a minimax polynomial for exp(r), and 2^n built from the
    exponent bits (split in two factors so that n down to -2*bias stays
    accurate into the subnormals). x = -inf -> 0, large x -> inf, NaN -> NaN.
    Accuracy: within 1-2 ulp over the full range (f32 and f64)."""
    b = e.b
    ty = x.type
    f64 = isinstance(ty, ir.DoubleType)
    ity = _I64 if f64 else _I32
    c = lambda v: ir.Constant(ty, v)  # noqa: E731
    ci = lambda v: ir.Constant(ity, v)  # noqa: E731
    # no fast-math flags here: the reduction relies on exact rounding steps
    if f64:
        hi_lim, lo_lim = 709.782712893384, -745.1332191019412
        ln2_hi, ln2_lo = 6.93147180369123816490e-01, 1.90821492927058770002e-10
        # least-squares fit of exp on [-ln2/2, ln2/2] (max error < 1 ulp)
        coeffs = [1.0, 1.0, 0.5000000000000002, 0.16666666666666707, 0.04166666666661554, 0.008333333333315252,
                  0.0013888888921140484, 0.0001984126991121241, 2.480151537461439e-05, 2.7557210961068024e-06,
                  2.762285143342878e-07, 2.5123105322213725e-08]  # fmt: skip
        mant, bias = 52, 1023
    else:
        hi_lim, lo_lim = 88.72283935546875, -103.97283172607422
        ln2_hi, ln2_lo = 0.693145751953125, 1.428606765330187045e-06
        coeffs = [1.0, 1.0, 0.5, 0.1666657030582428, 0.04166644811630249, 0.008364385925233364, 0.001393545768223703]
        mant, bias = 23, 127
    xc = e.call_intrinsic("minnum", ty, [e.call_intrinsic("maxnum", ty, [x, c(lo_lim)]), c(hi_lim)])
    n = e.call_intrinsic("roundeven", ty, [b.fmul(xc, c(1.4426950408889634))])
    r = b.fsub(xc, b.fmul(n, c(ln2_hi)))
    r = b.fsub(r, b.fmul(n, c(ln2_lo)))
    p = c(coeffs[-1])
    for k in reversed(coeffs[:-1]):
        p = e.call_intrinsic("fma", ty, [p, r, c(k)])
    # 2^n = 2^(n1) * 2^(n - n1), each factor a normal number
    ni = b.fptosi(n, ity)
    n1 = b.ashr(ni, ci(1))
    n2 = b.sub(ni, n1)
    s1 = b.bitcast(b.shl(b.add(n1, ci(bias)), ci(mant)), ty)
    s2 = b.bitcast(b.shl(b.add(n2, ci(bias)), ci(mant)), ty)
    y = b.fmul(b.fmul(p, s1), s2)
    y = b.select(b.fcmp_ordered(">", x, c(hi_lim)), c(float("inf")), y)
    y = b.select(b.fcmp_ordered("<", x, c(lo_lim)), c(0.0), y)
    return b.select(b.fcmp_unordered("uno", x, x), x, y)


def _emit_log_poly(e: _FnEmitter, x: ir.Value, flags) -> ir.Value:
    """log(x) inline, vectorisable: the GPU kernels' `gpu_math.emit_log`
    (exponent bits, an atanh series, IEEE special values; within 1-2 ulp)."""
    from dfc.compiler.codegen.gpu_math import emit_log  # gpu_math builds on this module's exp

    return emit_log(e, x)


def _emit_tanh_poly(e: _FnEmitter, x: ir.Value, flags) -> ir.Value:
    """tanh(x) from the inline exp: for |x| >= 0.625, sign(x)*(1 - 2/(e^(2|x|)+1));
    below, an odd minimax polynomial (no cancellation near 0)."""
    b = e.b
    ty = x.type
    c = lambda v: ir.Constant(ty, v)  # noqa: E731
    ax = e.call_intrinsic("fabs", ty, [x])
    ex = _emit_exp_poly(e, b.fmul(ax, c(2.0)), flags)
    big = b.fsub(c(1.0), b.fdiv(c(2.0), b.fadd(ex, c(1.0))))
    big = e.call_intrinsic("copysign", ty, [big, x])
    x2 = b.fmul(x, x)
    # tanh(x) = x + x^3 P(x^2) on |x| < 0.625, least-squares fits (< 1 ulp)
    if isinstance(ty, ir.DoubleType):
        coeffs = [-0.3333333333333291, 0.1333333333326529, -0.053968253932078054, 0.02186948758384334,
                  -0.008863221000085133, 0.003591988512106368, -0.001454952883597452, 0.0005862900088214364,
                  -0.00022849897134066181, 7.705898988207414e-05, -1.602608790031079e-05]  # fmt: skip
    else:
        coeffs = [-0.3333328521293425, 0.13331512468516818, -0.05374464034403045, 0.020653063925050674,
                  -0.005718891533459834]  # fmt: skip
    p = c(coeffs[-1])
    for k in reversed(coeffs[:-1]):
        p = e.call_intrinsic("fma", ty, [p, x2, c(k)])
    small = e.call_intrinsic("fma", ty, [b.fmul(p, x2), x, x])
    small = e.call_intrinsic("copysign", ty, [small, x])  # tanh(-0) = -0
    return b.select(b.fcmp_ordered("<", ax, c(0.625)), small, big)


_POLYNOMIALS = {"exp": _emit_exp_poly, "log": _emit_log_poly}
"""The LLVM intrinsics that `vector_math` replaces by inline polynomials."""


# -- memref


def _nontemporal(e: _FnEmitter, op: Operation, inst: ir.Instruction) -> None:
    """`nontemporal = true` on a load/store becomes `!nontemporal` (streaming
    stores skip the read-for-ownership of the destination line)."""
    attr = op.properties.get("nontemporal")
    if attr is not None and bool(getattr(attr, "value", attr).data):
        inst.set_metadata("nontemporal", e.m.ir.add_metadata([ir.Constant(_I32, 1)]))


def _scoped(e: _FnEmitter, buf: SSAValue, inst: ir.Instruction) -> None:
    """Alias-scope metadata on an access through a view with disjoint siblings
    (LLVM cannot tell views of one allocation apart when indices vary)."""
    if e.view_scopes and (x := _memref_extent(buf)) in e.view_scopes:
        scope, noalias = e.view_scopes[x]
        inst.set_metadata("alias.scope", scope)
        inst.set_metadata("noalias", noalias)


def _bounds_guard(e: _FnEmitter, op: Operation, m: _MemRef, indices: Sequence[SSAValue]) -> ir.Value | None:
    """For an access marked by `check-bounds`: whether every index lies inside
    `m` (one unsigned compare per dimension, so negative indices fail too)."""
    if "check_bounds" not in op.attributes:
        return None
    ok: ir.Value = ir.Constant(_I1, 1)
    for index, size in zip(indices, m.sizes):
        ok = e.b.and_(ok, e.b.icmp_unsigned("<", e.getv(index), size))
    return ok


def guarded_value(e: _FnEmitter, op: Operation, ok: ir.Value | None, compute: Callable[[], ir.Value],
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


def bounds_message(op: Operation) -> str:
    """What a failed check of the marked access `op` reports."""
    where = location_of(op) or "<unknown location>"
    what = op.attributes["check_bounds"].data  # type: ignore[attr-defined]
    return f"{where}: '{what}' index out of bounds"


@_handles("memref.load")
def _load(e: _FnEmitter, op: Operation) -> None:
    m = e.getm(op.operands[0])
    ok = _bounds_guard(e, op, m, op.operands[1:])

    def load() -> ir.Value:
        inst = e.b.load(e.address(m, op.operands[1:]), typ=m.elem, align=_byte_size(m.elem))
        _nontemporal(e, op, inst)
        _scoped(e, op.operands[0], inst)
        return inst

    e.values[op.results[0]] = guarded_value(e, op, ok, load, m.elem)


@_handles("memref.store")
def _store(e: _FnEmitter, op: Operation) -> None:
    v = e.getv(op.operands[0])
    m = e.getm(op.operands[1])
    ok = _bounds_guard(e, op, m, op.operands[2:])

    def store() -> None:
        inst = e.b.store(v, e.address(m, op.operands[2:]), align=_byte_size(m.elem))
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


def _alloc_sizes(e: _FnEmitter, op: Operation) -> tuple[MemRefType, list[ir.Value]]:
    t = op.results[0].type
    _check_memref(t)
    dyn = iter(op.operands)
    sizes = [e.getv(next(dyn)) if d == DYNAMIC_INDEX else ir.Constant(_I64, d) for d in t.get_shape()]
    return t, sizes


def _alignment(op: Operation) -> int:
    a = op.properties.get("alignment")
    return a.value.data if a is not None else 0


_MAX_ALIGN = 2 << 20


def _byte_count(e: _FnEmitter, m: _MemRef) -> ir.Value:
    return e.b.mul(e.num_elements(m), ir.Constant(_I64, _byte_size(m.elem)), flags=("nsw",))


@_handles("memref.alloc")
def _alloc(e: _FnEmitter, op: Operation) -> None:
    t, sizes = _alloc_sizes(e, op)
    elem = _scalar_type(t.element_type)
    align = max(_ALLOC_ALIGN, _alignment(op))
    if align > _MAX_ALIGN or align & (align - 1):
        raise NotImplementedError(f"memref.alloc alignment {align}: must be a power of two of at most {_MAX_ALIGN}")
    m = _MemRef(ir.Constant(_PTR, None), sizes, t, elem)
    fn = declare_runtime(e.m.ir, "__dfc_alloc")
    ptr = e.b.call(fn, [ir.Constant(_I64, align), _byte_count(e, m)])
    e.values[op.results[0]] = _MemRef(ptr, sizes, t, elem)


@_handles("memref.alloca")
def _alloca(e: _FnEmitter, op: Operation) -> None:
    t, sizes = _alloc_sizes(e, op)
    elem = _scalar_type(t.element_type)
    esize = _byte_size(elem)
    if all(d != DYNAMIC_INDEX for d in t.get_shape()):
        n = int(np.prod(t.get_shape(), dtype=np.int64))
        align = max(_alignment(op), 16 if n * esize >= 16 else esize)
        ptr = e.entry_alloca(ir.ArrayType(elem, max(n, 1)), align)
    else:
        m = _MemRef(ir.Constant(_PTR, None), sizes, t, elem)
        a = e.b.alloca(elem, size=e.num_elements(m))
        a.align = max(_alignment(op), 16)
        ptr = opaque(a)
    e.values[op.results[0]] = _MemRef(ptr, sizes, t, elem)


@_handles("memref.dealloc")
def _dealloc(e: _FnEmitter, op: Operation) -> None:
    m = e.getm(op.operands[0])
    e.b.call(declare_runtime(e.m.ir, "__dfc_free"), [m.ptr, _byte_count(e, m)])


@_handles("memref.copy")
def _copy(e: _FnEmitter, op: Operation) -> None:
    src, dst = e.getm(op.operands[0]), e.getm(op.operands[1])
    nbytes = e.b.mul(e.num_elements(src), ir.Constant(_I64, _byte_size(src.elem)))
    fn = e.m.declare("llvm.memcpy.p0.p0.i64", _VOID, [_PTR, _PTR, _I64, _I1])
    e.b.call(fn, [dst.ptr, src.ptr, nbytes, ir.Constant(_I1, 0)])


@_handles("memref.dim")
def _dim(e: _FnEmitter, op: Operation) -> None:
    m = e.getm(op.operands[0])
    k = _int_const(op.operands[1])
    if k is not None:
        e.values[op.results[0]] = m.sizes[k] if 0 <= k < len(m.sizes) else ir.Constant(_I64, 0)
        return
    idx = e.getv(op.operands[1])
    r: ir.Value = ir.Constant(_I64, 0)
    for j, s in enumerate(m.sizes):
        r = e.b.select(e.b.icmp_signed("==", idx, ir.Constant(_I64, j)), s, r)
    e.values[op.results[0]] = r


@_handles("memref.get_global")
def _get_global(e: _FnEmitter, op: Operation) -> None:
    name = op.properties["name"].root_reference.data
    _, gv = e.m.globals[name]
    t = op.results[0].type
    ptr = opaque(e.b.gep(gv, [ir.Constant(_I64, 0)], inbounds=True, source_etype=_I8))
    e.values[op.results[0]] = _unflatten(t, [ptr])


@_handles("memref.view")
def _view(e: _FnEmitter, op: Operation) -> None:
    src = e.getm(op.operands[0])
    t = op.results[0].type
    _check_memref(t)
    dyn = iter(op.operands[2:])
    sizes = [e.getv(next(dyn)) if d == DYNAMIC_INDEX else ir.Constant(_I64, d) for d in t.get_shape()]
    ptr = e.b.gep(src.ptr, [e.getv(op.operands[1])], inbounds=True, source_etype=_I8)
    e.values[op.results[0]] = _MemRef(ptr, sizes, t, _scalar_type(t.element_type))


@_handles("memref.cast")
def _mcast(e: _FnEmitter, op: Operation) -> None:
    m = e.getm(op.operands[0])
    t = op.results[0].type
    _check_memref(t)
    e.values[op.results[0]] = _MemRef(m.ptr, list(m.sizes), t, m.elem)


@_handles("memref.collapse_shape")
def _collapse(e: _FnEmitter, op: Operation) -> None:
    m = e.getm(op.operands[0])
    t = op.results[0].type
    _check_memref(t)
    sizes = []
    for group in op.properties["reassociation"].data:
        dims = [a.value.data for a in group.data]
        sizes.append(e.num_elements(_MemRef(m.ptr, [m.sizes[d] for d in dims], t, m.elem)))
    e.values[op.results[0]] = _MemRef(m.ptr, sizes, t, m.elem)


@_handles("memref.expand_shape")
def _expand(e: _FnEmitter, op: Operation) -> None:
    m = e.getm(op.operands[0])
    t = op.results[0].type
    _check_memref(t)
    dyn = iter(op.operands[1:])
    static = op.properties["static_output_shape"].get_values()
    sizes = [e.getv(next(dyn)) if d == DYNAMIC_INDEX else ir.Constant(_I64, d) for d in static]
    e.values[op.results[0]] = _MemRef(m.ptr, sizes, t, m.elem)


# -- func


@_handles("func.call")
def _call(e: _FnEmitter, op: Operation) -> None:
    name = op.properties["callee"].root_reference.data
    if name not in e.m.funcs:
        raise _unsupported(f"call to unknown function @{name}")
    _, fn = e.m.funcs[name]
    args = [x for v in op.operands for x in _flatten(e.get(v))]
    r = e.b.call(fn, args)
    ret_ty = fn.function_type.return_type
    if isinstance(ret_ty, ir.LiteralStructType):
        flat = [e.b.extract_value(r, i) for i in range(len(ret_ty.elements))]
    elif isinstance(ret_ty, ir.VoidType):
        flat = []
    else:
        flat = [r]
    k = 0
    for res in op.results:
        n = len(_flat_types(res.type))
        e.values[res] = _unflatten(res.type, flat[k : k + n])
        k += n


# -- blas

_CBLAS_ROW_MAJOR, _CBLAS_NO_TRANS, _CBLAS_TRANS = 101, 111, 112


@_handles("blas.gemm")
def _gemm(e: _FnEmitter, op: Operation) -> None:
    """`blas.gemm` as CBLAS gemm calls (none when a size is 0) on the module's
    threads. With dfc's own kernel (`gemm_kernel.enabled()`), the module's
    threads (its pool or the OpenMP team) run the calls on blocks of batch
    entries, else of the rows or the columns of C, whichever are more (or
    along k, `_gemm_by_depth_or`); OpenBLAS, which the kernel calls for
    products narrower than a vector, is set to one thread meanwhile. With
    OpenBLAS's kernels on dfc's own pool, the library's threads do the work:
    the pool is parked and OpenBLAS set to the module's thread count for the
    calls (beside numpy, whose products use the same OpenBLAS threads, a
    second pool made a 1024^3 f32 product 2x slower). On a shared OpenMP team
    (torch's, `runtime.use_openmp`), OpenBLAS runs single-threaded on the
    team's blocks as above: OpenBLAS's threads spinning beside the team made
    an MLP training step 7-10x slower. A product with a gathered factor
    always calls dfc's kernel (its gather entry) on the module's threads,
    each block with its slice of the offset tables."""
    a, b, c = (e.getm(v) for v in op.operands[:3])
    sizes = [e.getv(v) for v in op.operands[3:13]]
    batch, m, n, k = sizes[:4]
    tables = _gemm_tables(e, op)
    get_threads = e.m.declare(blas_runtime.GET_NUM_THREADS, _I32, [])
    set_threads = e.m.declare(blas_runtime.SET_NUM_THREADS, _VOID, [_I32])
    ranged = _gemm_range(e.m, op, c.elem)
    bld = e.b
    zero, one = ir.Constant(_I64, 0), ir.Constant(_I64, 1)
    epilogue = _epilogue(e, op)

    def with_blas_threads(count: int, emit: Callable[[], None]) -> None:
        old = bld.call(get_threads, [])
        differ = bld.icmp_signed("!=", old, ir.Constant(_I32, count))
        with bld.if_then(differ):
            bld.call(set_threads, [ir.Constant(_I32, count)])
        emit()
        with bld.if_then(differ):
            bld.call(set_threads, [old])

    def whole() -> None:
        bld.call(ranged, [a.ptr, b.ptr, c.ptr, *sizes, *tables, *epilogue, ir.Constant(_I64, _GEMM_BY_BATCH), zero,
                          batch])

    def blocks() -> None:
        threads = ir.Constant(_I64, e.m.num_threads)
        by_batch = bld.icmp_signed(">=", batch, threads)
        by_cols = bld.icmp_signed(">", n, m)
        axis = bld.select(by_batch, ir.Constant(_I64, _GEMM_BY_BATCH),
                          bld.select(by_cols, ir.Constant(_I64, _GEMM_BY_COLS), ir.Constant(_I64, _GEMM_BY_ROWS)))
        extent = bld.select(by_batch, batch, bld.select(by_cols, n, m))
        # multiply-adds per unit of the split axis
        work = bld.select(by_batch, bld.mul(bld.mul(m, n), k), bld.mul(bld.mul(bld.select(by_cols, m, n), k), batch))
        work = e.call_intrinsic("umax", _I64, [work, one])
        min_iters = bld.add(bld.udiv(ir.Constant(_I64, e.m.parallel_min_work), work), one)
        fields = [a.ptr, b.ptr, c.ptr, *sizes, *tables, *epilogue, axis]
        ctx_ty = ir.LiteralStructType([x.type for x in fields])
        ctx = e.entry_alloca(ctx_ty, 8, name="gemm.ctx")
        for i, x in enumerate(fields):
            bld.store(x, bld.gep(ctx, [ir.Constant(_I32, 0), ir.Constant(_I32, i)], inbounds=True, source_etype=ctx_ty))
        body = _gemm_body(e.m, ranged, ctx_ty)
        bld.call(declare_runtime(e.m.ir, "__dfc_parallel_for"), [body, ctx, zero, extent, one, min_iters, threads])

    empty = bld.or_(bld.icmp_signed("==", m, zero), bld.icmp_signed("==", n, zero))
    with bld.if_then(bld.not_(empty)):
        if e.in_parallel or e.m.num_threads <= 1:
            with_blas_threads(1, whole)
            return
        if e.m.own_gemm or _gathers(op):  # dfc's kernels run on the module's threads (OpenBLAS's only for narrow products)
            with_blas_threads(1, lambda: _gemm_by_depth_or(e, op, epilogue, blocks))
            return
        shared = bld.call(declare_runtime(e.m.ir, "__dfc_openmp_shared"), [])
        with bld.if_else(bld.icmp_signed("!=", shared, zero)) as (on_team, on_blas):
            with on_team:
                with_blas_threads(1, lambda: _gemm_by_depth_or(e, op, epilogue, blocks))
            with on_blas:  # the pool's idle workers would spin on the cores OpenBLAS is about to use
                bld.call(declare_runtime(e.m.ir, "__dfc_pool_park"), [])
                with_blas_threads(e.m.num_threads, whole)


_GEMM_BY_ROWS, _GEMM_BY_COLS, _GEMM_BY_BATCH = 0, 1, 2
_DEEP = 8
"""A product is split along its depth when k >= _DEEP * max(m, n)."""


def _gemm_by_depth_or(e: _FnEmitter, op: Operation, epilogue: tuple[ir.Value, ir.Value],
                      otherwise: Callable[[], None]) -> None:
    """A deep, narrow product (one batch entry, k >= _DEEP * max(m, n): a
    convolution's weight gradient, 6x25 summed over 50,176 positions) split
    along k on the team: chunk j multiplies its slice of A and B into C
    (chunk 0, with beta) or into a scratch block, the blocks are then added
    into C, and `epilogue` (`_epilogue`) runs on the whole product. Split by
    rows or columns, every thread would read all of the operand that is not
    split (all 5 MB of the patches, each). Else, or when the scratch cannot
    be allocated, `otherwise`."""
    a, b, c = (e.getm(v) for v in op.operands[:3])
    batch, m, n, k, lda, ldb, ldc = (e.getv(v) for v in op.operands[3:10])
    tables = _gemm_tables(e, op)
    bld = e.b
    chunks = e.m.num_threads
    one = ir.Constant(_I64, 1)
    esize = ir.Constant(_I64, _byte_size(c.elem))
    deep = bld.and_(bld.icmp_signed("==", batch, one),
                    bld.icmp_signed(">=", k, bld.mul(e.call_intrinsic("smax", _I64, [m, n]), ir.Constant(_I64, _DEEP))))
    deep = bld.and_(deep, bld.icmp_signed(">=", k, ir.Constant(_I64, 4 * chunks)))
    deep = bld.and_(deep, bld.icmp_signed(">=", bld.mul(bld.mul(m, n), k), ir.Constant(_I64, e.m.parallel_min_work)))
    slot = e.entry_alloca(_PTR, 8, name="gemm.scratch")
    bld.store(ir.Constant(_PTR, None), slot)
    block = bld.mul(m, n)
    nbytes = bld.mul(bld.mul(block, ir.Constant(_I64, chunks - 1)), esize)
    with bld.if_then(deep):
        bld.store(bld.call(declare_runtime(e.m.ir, "__dfc_alloc"), [ir.Constant(_I64, _ALLOC_ALIGN), nbytes]), slot)
    scratch = bld.load(slot)
    with bld.if_else(bld.icmp_unsigned("!=", scratch, ir.Constant(_PTR, None))) as (split, other):
        with split:
            fields = [a.ptr, b.ptr, c.ptr, scratch, m, n, k, lda, ldb, ldc, *tables]
            ctx_ty = ir.LiteralStructType([x.type for x in fields])
            ctx = e.entry_alloca(ctx_ty, 8, name="gemm.depth.ctx")
            for i, x in enumerate(fields):
                bld.store(x, bld.gep(ctx, [ir.Constant(_I32, 0), ir.Constant(_I32, i)], inbounds=True,
                                     source_etype=ctx_ty))
            body = _gemm_depth_body(e.m, op, c.elem, ctx_ty, chunks)
            bld.call(declare_runtime(e.m.ir, "__dfc_parallel_for"),
                     [body, ctx, ir.Constant(_I64, 0), ir.Constant(_I64, chunks), one, one, ir.Constant(_I64, chunks)])
            zero = ir.Constant(_I64, 0)

            def add_block(j: ir.Value, _: list) -> list:
                part = bld.gep(scratch, [bld.mul(bld.sub(j, one), block)], inbounds=True, source_etype=c.elem)

                def add_row(i: ir.Value, _: list) -> list:
                    def add(l: ir.Value, _: list) -> list:
                        to = bld.gep(c.ptr, [bld.add(bld.mul(i, ldc), l)], inbounds=True, source_etype=c.elem)
                        fr = bld.gep(part, [bld.add(bld.mul(i, n), l)], inbounds=True, source_etype=c.elem)
                        bld.store(bld.fadd(bld.load(to, typ=c.elem), bld.load(fr, typ=c.elem)), to)
                        return []

                    e.loop(zero, n, one, [], add, name="gemm.depth.col")
                    return []

                e.loop(zero, m, one, [], add_row, name="gemm.depth.row")
                return []

            e.loop(one, ir.Constant(_I64, chunks), one, [], add_block, name="gemm.depth.chunk")
            bld.call(declare_runtime(e.m.ir, "__dfc_free"), [scratch, nbytes])
            if op.epilogue is not None:
                function, ctx = epilogue
                bld.call(function, [ctx, zero, zero, m, zero, n])
        with other:
            otherwise()


def _gemm_depth_body(m: _ModuleEmitter, op: Operation, elem: ir.Type, ctx_ty: ir.LiteralStructType,
                     chunks: int) -> ir.Function:
    """The parallel loop's `void body(ptr ctx, i64 lo, i64 hi)` of
    `_gemm_by_depth_or`: chunks [lo, hi) of the depth."""
    gathers = _gathers(op)
    gemm = _cblas_gemm(m, elem, gather=gathers)
    fn = ir.Function(m.ir, BODY_TYPE, m.fresh_name("gemm.depth"))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    ctx, lo, hi = fn.args
    bld = ir.IRBuilder(fn.append_basic_block("entry"))
    pa, pb, pc, scratch, rows, cols, k, *lds, a_rows, a_cols, b_rows, b_cols = (
        bld.load(bld.gep(ctx, [ir.Constant(_I32, 0), ir.Constant(_I32, i)], inbounds=True, source_etype=ctx_ty), typ=t)
        for i, t in enumerate(ctx_ty.elements))
    lda, ldb, ldc = (_at_least_one(bld, x) for x in lds)
    gathered_a, gathered_b = op.a_rows is not None, op.b_rows is not None
    trans_a, trans_b = (op.properties.get(p) is not None for p in ("transpose_a", "transpose_b"))
    trans = [ir.Constant(_I32, _CBLAS_TRANS if t else _CBLAS_NO_TRANS) for t in (trans_a, trans_b)]
    n_chunks, zero, one = ir.Constant(_I64, chunks), ir.Constant(_I64, 0), ir.Constant(_I64, 1)
    beta = ir.Constant(elem, op.properties["beta"].value.data)

    def chunk(j: ir.Value) -> None:
        k_lo = bld.udiv(bld.mul(j, k), n_chunks)
        depth = bld.sub(bld.udiv(bld.mul(bld.add(j, one), k), n_chunks), k_lo)
        a_ptr = pa if gathered_a else bld.gep(pa, [bld.mul(k_lo, lda) if trans_a else k_lo], inbounds=True,
                                              source_etype=elem)
        b_ptr = pb if gathered_b else bld.gep(pb, [k_lo if trans_b else bld.mul(k_lo, ldb)], inbounds=True,
                                              source_etype=elem)
        first = bld.icmp_signed("==", j, zero)
        part = bld.gep(scratch, [bld.mul(bld.sub(j, one), bld.mul(rows, cols))], inbounds=False, source_etype=elem)
        dest = bld.select(first, pc, part)
        ld = bld.select(first, ldc, cols)
        args = [ir.Constant(_I32, _CBLAS_ROW_MAJOR), *trans, rows, cols, depth, ir.Constant(elem, 1.0),
                a_ptr, lda, b_ptr, ldb, bld.select(first, beta, ir.Constant(elem, 0.0)), dest, ld]
        if gathers:  # the depth slice [k_lo, ...) of A's columns and B's rows
            shifted = [_table_at(bld, a_cols, k_lo) if gathered_a else a_cols,
                       _table_at(bld, b_rows, k_lo) if gathered_b else b_rows]
            args += [a_rows, shifted[0], shifted[1], b_cols, *[ir.Constant(_PTR, None)] * 2, zero, zero, zero]
        bld.call(gemm, args)

    _each(fn, bld, lo, hi, "chunk", chunk)
    bld.ret_void()
    return fn


def _gemm_range(m: _ModuleEmitter, op: Operation, elem: ir.Type) -> ir.Function:
    """`void (ptr a, ptr b, ptr c, i64 batch, m, n, k, lda, ldb, ldc, sa, sb, sc,
    ptr a_rows, a_cols, b_rows, b_cols, ptr epilogue, ptr ctx, i64 axis, i64 lo,
    i64 hi)`: the CBLAS calls of `op`
    for batch entries [lo, hi) (axis 2), or for rows (0) or columns (1)
    [lo, hi) of C in every batch entry, each followed by `op`'s epilogue on
    its block (`_epilogue`; dfc's kernel runs it on each panel it finishes)."""
    with_epilogue, gathers = op.epilogue is not None, _gathers(op)
    gemm = _cblas_gemm(m, elem, with_epilogue, gathers)
    fn = ir.Function(m.ir, ir.FunctionType(_VOID, [_PTR] * 3 + [_I64] * 10 + [_PTR] * 6 + [_I64] * 3),
                     m.fresh_name("gemm.range"))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    pa, pb, pc, batch, rows, cols, k, lda, ldb, ldc, sa, sb, sc, *tables, epilogue, ctx, axis, lo, hi = fn.args
    gathered_a, gathered_b = op.a_rows is not None, op.b_rows is not None
    trans_a, trans_b = (op.properties.get(p) is not None for p in ("transpose_a", "transpose_b"))
    bld = ir.IRBuilder(fn.append_basic_block("entry"))
    zero = ir.Constant(_I64, 0)

    lds = [_at_least_one(bld, v) for v in (lda, ldb, ldc)]
    on = [bld.icmp_signed("==", axis, ir.Constant(_I64, x)) for x in (_GEMM_BY_ROWS, _GEMM_BY_COLS, _GEMM_BY_BATCH)]
    t_lo, t_hi = bld.select(on[2], lo, zero), bld.select(on[2], hi, batch)
    r0, c0 = bld.select(on[0], lo, zero), bld.select(on[1], lo, zero)
    m_block = bld.select(on[0], bld.sub(hi, lo), rows)
    n_block = bld.select(on[1], bld.sub(hi, lo), cols)
    a_off = zero if gathered_a else r0 if trans_a else bld.mul(r0, lds[0])
    b_off = zero if gathered_b else bld.mul(c0, lds[1]) if trans_b else c0
    a_rows, a_cols, b_rows, b_cols = tables
    tables = [_table_at(bld, a_rows, r0) if gathered_a else a_rows, a_cols, b_rows,  # this block's rows and columns
              _table_at(bld, b_cols, c0) if gathered_b else b_cols]
    c_off = bld.add(bld.mul(r0, lds[2]), c0)
    beta = ir.Constant(elem, op.properties["beta"].value.data)
    trans = [ir.Constant(_I32, _CBLAS_TRANS if t else _CBLAS_NO_TRANS) for t in (trans_a, trans_b)]

    def entry(t: ir.Value) -> None:
        ptrs = [bld.gep(x, [bld.add(bld.mul(t, s), off)], inbounds=True, source_etype=elem)
                for x, s, off in ((pa, sa, a_off), (pb, sb, b_off), (pc, sc, c_off))]
        args = [ir.Constant(_I32, _CBLAS_ROW_MAJOR), *trans, m_block, n_block, k, ir.Constant(elem, 1.0),
                ptrs[0], lds[0], ptrs[1], lds[1], beta, ptrs[2], lds[2]]
        if gathers:
            bld.call(gemm, [*args, *tables, epilogue, ctx, t, r0, c0])
            return
        if with_epilogue and m.own_gemm:
            bld.call(gemm, [*args, epilogue, ctx, t, r0, c0])
            return
        bld.call(gemm, args)
        if with_epilogue:
            bld.call(gemm_kernel.epilogue_callee(epilogue), [ctx, t, r0, bld.add(r0, m_block), c0, bld.add(c0, n_block)])

    _each(fn, bld, t_lo, t_hi, "batch", entry)
    bld.ret_void()
    return fn


def _gathers(op: Operation) -> bool:
    """Whether a `blas.gemm` gathers a factor through offset tables."""
    return op.a_rows is not None or op.b_rows is not None  # type: ignore[attr-defined]


def _gemm_tables(e: _FnEmitter, op: Operation) -> list[ir.Value]:
    """The data pointers of `op`'s offset tables (a_rows, a_cols, b_rows, b_cols), null where a factor is not gathered."""
    return [e.getm(v).ptr if v is not None else ir.Constant(_PTR, None) for v in op.tables()]  # type: ignore[attr-defined]


def _table_at(bld: ir.IRBuilder, table: ir.Value, offset: ir.Value) -> ir.Value:
    """`table + offset` (i64 elements)."""
    return bld.gep(table, [offset], inbounds=True, source_etype=_I64)


def _at_least_one(bld: ir.IRBuilder, v: ir.Value) -> ir.Value:
    """max(v, 1): CBLAS wants leading dimensions of at least 1."""
    one = ir.Constant(_I64, 1)
    return bld.select(bld.icmp_signed("<", v, one), one, v)


def _cblas_gemm(m: _ModuleEmitter, elem: ir.Type, epilogue: bool = False, gather: bool = False) -> ir.Function:
    """The declaration of CBLAS's sgemm or dgemm (by `elem`): dfc's own kernel
    when `gemm_kernel.enabled()` (with `epilogue`, its entry that takes one),
    else the OpenBLAS build's; with `gather` (a gathered factor), always dfc's
    kernel's gather entry, which takes the offset tables and an epilogue."""
    single = isinstance(elem, ir.FloatType)
    args = [_I32, _I32, _I32, _I64, _I64, _I64, elem, _PTR, _I64, _PTR, _I64, elem, _PTR, _I64]
    if gather:
        name = gemm_kernel.symbol("f32" if single else "f64", gather=True)
        return m.declare(name, _VOID, args + gemm_kernel.gather_args() + gemm_kernel.epilogue_args())
    if m.own_gemm:
        name = gemm_kernel.symbol("f32" if single else "f64", epilogue)
        args += gemm_kernel.epilogue_args() if epilogue else []
    else:
        name = blas_runtime.symbol("sgemm" if single else "dgemm")
    return m.declare(name, _VOID, args)


def _epilogue(e: _FnEmitter, op: Operation) -> tuple[ir.Value, ir.Value]:
    """`op`'s epilogue as a function of `gemm_kernel.EPILOGUE_TYPE` and its
    context, filled here: it runs the region on the elements (t, i, j), i in
    [i0, i1), j in [j0, j1) (j innermost, for LLVM to vectorise). Two null
    pointers without an epilogue."""
    null = ir.Constant(_PTR, None)
    if op.epilogue is None:
        return null, null
    block = op.epilogue.block
    out = _Outlined(e, op, [], gemm_kernel.EPILOGUE_TYPE.args[1:], e.m.fresh_name(f"{e.func_op.sym_name.data}.epilogue"))
    sub = out.sub
    t, i0, i1, j0, j1 = out.args
    one = ir.Constant(_I64, 1)
    sub.values[block.args[0]] = t

    def row(i: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
        sub.values[block.args[1]] = i

        def element(j: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
            sub.values[block.args[2]] = j
            sub.emit_ops(block)
            return []

        sub.loop(j0, j1, one, [], element, name="epilogue.j")
        return []

    sub.loop(i0, i1, one, [], row, name="epilogue.i")
    sub.b.ret_void()
    return out.trampoline, out.ctx


def _each(fn: ir.Function, bld: ir.IRBuilder, lo: ir.Value, hi: ir.Value, name: str,
          body: Callable[[ir.Value], None]) -> None:
    """`for (t = lo; t < hi; t++) body(t)` at the end of `bld`'s block in `fn`."""
    head, step, done = (fn.append_basic_block(x) for x in (name, f"{name}.entry", f"{name}.done"))
    entry = bld.block
    bld.branch(head)
    bld.position_at_end(head)
    t = bld.phi(_I64)
    t.add_incoming(lo, entry)
    bld.cbranch(bld.icmp_signed("<", t, hi), step, done)
    bld.position_at_end(step)
    body(t)
    t.add_incoming(bld.add(t, ir.Constant(_I64, 1)), bld.block)
    bld.branch(head)
    bld.position_at_end(done)


def _gemm_body(m: _ModuleEmitter, ranged: ir.Function, ctx_ty: ir.LiteralStructType) -> ir.Function:
    """The parallel loop's `void body(ptr ctx, i64 lo, i64 hi)` calling
    `ranged` with the fields of the context struct."""
    fn = ir.Function(m.ir, BODY_TYPE, m.fresh_name("gemm.body"))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    bld = ir.IRBuilder(fn.append_basic_block("entry"))
    fields = [bld.load(bld.gep(fn.args[0], [ir.Constant(_I32, 0), ir.Constant(_I32, i)], inbounds=True,
                               source_etype=ctx_ty), typ=x) for i, x in enumerate(ctx_ty.elements)]
    bld.call(ranged, [*fields, fn.args[1], fn.args[2]])
    bld.ret_void()
    return fn


# -- scf


def _bind(e: _FnEmitter, args: Sequence[BlockArgument], flat: Sequence[ir.Value]) -> None:
    k = 0
    for a in args:
        n = len(_flat_types(a.type))
        e.values[a] = _unflatten(a.type, flat[k : k + n])
        k += n


def _flat_operands(e: _FnEmitter, vals: Sequence[SSAValue]) -> list[ir.Value]:
    return [x for v in vals for x in _flatten(e.get(v))]


def _outlinable(op: Operation) -> bool:
    """A loop nest that can be a function of its own: one without results."""
    return op.name in ("scf.for", "scf.parallel") and not op.results


def _outlined_nest(e: _FnEmitter, op: Operation) -> bool:
    """Emit top-level loop nest `op` as the call of a function of its own,
    when `e` outlines its nests; whether it did."""
    if not (e.outline_nests and op.parent_op() is e.func_op and _outlinable(op)):
        return False
    out = _Outlined(e, op, op.operands, [], e.m.fresh_name(f"{e.func_op.sym_name.data}.nest"), direct=True)
    _HANDLERS[op.name](out.sub, op)
    out.sub.b.ret_void()
    e.b.call(out.impl, out.captures)
    return True


@_handles("scf.for")
def _for(e: _FnEmitter, op: Operation) -> None:
    if _outlined_nest(e, op):
        return
    lb, ub, step = (e.getv(v) for v in op.operands[:3])
    inits = _flat_operands(e, op.operands[3:])
    block = e.single_block(op.regions[0], "scf.for")

    def body(iv: ir.Value, carried: list[ir.Value]) -> list[ir.Value]:
        e.values[block.args[0]] = iv
        _bind(e, block.args[1:], carried)
        for a in block.args:
            e.name_value(a)
        term = e.emit_ops(block)
        return _flat_operands(e, term.operands) if term is not None else []

    trip = _small_trip(lb, ub, step, block)
    if trip is not None:
        out = inits
        for k in range(trip):
            out = body(ir.Constant(lb.type, lb.constant + k * step.constant), out)
    else:
        out = e.loop(lb, ub, step, inits, body)
    _bind(e, op.results, out)


_UNROLL_TRIPS, _UNROLL_OPS = 8, 160
"""Loops of at most this many trips, and ops once unrolled, are unrolled."""


def _small_trip(lb: ir.Value, ub: ir.Value, step: ir.Value, block: Block) -> int | None:
    """The trip count of a loop with constant bounds small enough to unroll,
    with every loop inside it when one of them carries a value (a pooling
    window's running maximum), else None.
    LLVM's own unroller is off (`optimize`), and such loops as loops cost a
    branch and an induction update per element and keep the loop around them
    from vectorising."""
    if not all(isinstance(v, ir.Constant) and isinstance(v.constant, int) for v in (lb, ub, step)):
        return None
    trip = _trip(lb.constant, ub.constant, step.constant)
    size = _unrolled_size(block)
    if trip is None or size is None or trip * size > _UNROLL_OPS:
        return None
    if any(o.regions for o in block.ops) and not any(
        o.name == "scf.for" and len(o.regions[0].block.args) > 1 for top in block.ops for o in top.walk()
    ):
        return None  # a nest of copies (im2col's taps): the loop left around it vectorised with gathers, 2x slower
    return trip


def _trip(lb: int | None, ub: int | None, step: int | None) -> int | None:
    """The trip count of constant bounds when it is at most _UNROLL_TRIPS."""
    if lb is None or ub is None or step is None or step <= 0:
        return None
    trip = max(0, -(-(ub - lb) // step))
    return trip if trip <= _UNROLL_TRIPS else None


def _unrolled_size(block: Block) -> int | None:
    """How many ops `block` emits with every loop in it unrolled; None if it
    holds another region, or a loop that is not small and constant."""
    size = 0
    for op in block.ops:
        if op.name == "scf.for":
            trip = _trip(*(_int_const(v) for v in op.operands[:3]))
            inner = _unrolled_size(op.regions[0].block)
            if trip is None or inner is None:
                return None
            size += trip * inner
        elif op.regions:
            return None
        else:
            size += 1
    return size


@_handles("scf.if")
def _if(e: _FnEmitter, op: Operation) -> None:
    b = e.b
    cond = e.getv(op.operands[0])
    then_r, else_r = op.regions
    then_bb = e.fn.append_basic_block("if.then")
    else_bb = e.fn.append_basic_block("if.else") if else_r.blocks else None
    merge_bb = e.fn.append_basic_block("if.end")
    b.cbranch(cond, then_bb, else_bb or merge_bb)
    incoming = []
    for region, bb in ((then_r, then_bb), (else_r, else_bb)):
        if bb is None:
            continue
        b.position_at_end(bb)
        term = e.emit_ops(e.single_block(region, "scf.if"))
        vals = _flat_operands(e, term.operands) if term is not None else []
        incoming.append((vals, b.block))
        b.branch(merge_bb)
    b.position_at_end(merge_bb)
    if op.results:
        phis = []
        for i, v in enumerate(incoming[0][0]):
            p = b.phi(v.type)
            for vals, bb in incoming:
                p.add_incoming(vals[i], bb)
            phis.append(p)
        _bind(e, op.results, phis)


@_handles("scf.while")
def _while(e: _FnEmitter, op: Operation) -> None:
    b = e.b
    inits = _flat_operands(e, op.operands)
    before_r, after_r = op.regions
    before = e.single_block(before_r, "scf.while")
    after = e.single_block(after_r, "scf.while")
    pre = b.block
    head = e.fn.append_basic_block("while.before")
    body_bb = e.fn.append_basic_block("while.after")
    exit_bb = e.fn.append_basic_block("while.exit")
    b.branch(head)
    b.position_at_end(head)
    phis = []
    for v in inits:
        p = b.phi(v.type)
        p.add_incoming(v, pre)
        phis.append(p)
    _bind(e, before.args, phis)
    cond_op = e.emit_ops(before)
    assert cond_op is not None and cond_op.name == "scf.condition"
    cond = e.getv(cond_op.operands[0])
    passed = _flat_operands(e, cond_op.operands[1:])
    b.cbranch(cond, body_bb, exit_bb)
    b.position_at_end(body_bb)
    _bind(e, after.args, passed)
    term = e.emit_ops(after)
    nexts = _flat_operands(e, term.operands) if term is not None else []
    for p, v in zip(phis, nexts, strict=True):
        p.add_incoming(v, b.block)
    b.branch(head)
    b.position_at_end(exit_bb)
    _bind(e, op.results, passed)


@_handles("scf.execute_region")
def _execute_region(e: _FnEmitter, op: Operation) -> None:
    term = e.emit_ops(e.single_block(op.regions[0], "scf.execute_region"))
    _bind(e, op.results, _flat_operands(e, term.operands) if term is not None else [])


def _parallel_parts(op: Operation):
    block = op.regions[0].blocks[0] if len(op.regions[0].blocks) == 1 else None
    if block is None:
        raise _unsupported("scf.parallel with several blocks")
    n = len(block.args)
    if len(op.operands) != 3 * n:
        raise _unsupported("scf.parallel with reductions (init values)")
    last = block.last_op
    if last is None or last.name != "scf.reduce" or last.operands:
        raise _unsupported("scf.parallel whose scf.reduce has operands")
    return block, op.operands[:n], op.operands[n : 2 * n], op.operands[2 * n :]


def _serial_nest(e: _FnEmitter, block: Block, lbs, ubs, steps, dim0: tuple[ir.Value, ir.Value] | None = None) -> None:
    """Emit the iteration space of a parallel body as nested serial loops;
    `dim0` overrides the first dimension's bounds."""
    n = len(block.args)

    def level(k: int) -> None:
        if k == n:
            e.emit_ops(block)
            return
        lb, ub = (dim0 if k == 0 and dim0 is not None else (e.getv(lbs[k]), e.getv(ubs[k])))

        def body(iv: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
            e.values[block.args[k]] = iv
            e.name_value(block.args[k])
            level(k + 1)
            return []

        e.loop(lb, ub, e.getv(steps[k]), [], body, name=f"par{k}")

    level(0)


def _memref_extent(v: SSAValue) -> tuple[object, int, float] | None:
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
            shift, t = _int_const(owner.operands[1]), owner.results[0].type
            if shift is None or not t.has_static_shape():
                return None
            if size == pymath.inf:
                size = pymath.prod(t.get_shape()) * _byte_size(_scalar_type(t.element_type))
            lo += shift
            v = owner.operands[0]
            continue
        if owner.name in ("memref.alloc", "memref.alloca"):
            return owner, lo, lo + size
        if owner.name == "memref.get_global":
            return owner.properties["name"].root_reference.data, lo, lo + size
        return None


class _Outlined:
    """The ops of `op`'s regions in an internal function `impl(captures...,
    extra...)`, reached through a trampoline `void (ptr ctx, extra...)` that
    loads the captures from the context struct `ctx`, which the constructor
    fills at the call site. The values the regions (and `uses`) take from
    outside are captured, except constants, globals and views of a global at
    constant offsets (an arena's buffers), re-materialised inside, where LLVM
    sees their addresses. Emit the body with `sub`, whose function's
    arguments after the captures are `args`, then end it
    (`sub.b.ret_void()`). `direct`: no trampoline; the caller calls
    `impl(*captures)`, which is never inlined."""

    def __init__(self, e: _FnEmitter, op: Operation, uses: Sequence[SSAValue], extra: Sequence[ir.Type], base: str,
                 *, direct: bool = False):
        m = e.m
        captured: list[SSAValue] = []
        remat: list[Operation] = []
        seen: set[SSAValue] = set()
        uses = list(uses)
        for inner in op.walk():
            if inner is not op:
                uses.extend(inner.operands)

        def visit(v: SSAValue) -> None:
            if v in seen or defined_inside(v, op):
                return
            seen.add(v)
            if _rematerialisable(v):
                for x in v.owner.operands:
                    visit(x)
                remat.append(v.owner)
            else:
                captured.append(v)

        for v in uses:
            visit(v)
        flat_caps = [x for v in captured for x in _flatten(e.get(v))]
        cap_types = [x.type for x in flat_caps]

        # noalias for captured buffers certainly disjoint from every other captured one
        extents = {v: _memref_extent(v) for v in captured if isinstance(v.type, MemRefType)}

        def disjoint(v: SSAValue) -> bool:
            x = extents[v]
            return x is not None and not any(
                w is not v and y is not None and y[0] == x[0] and y[1] < x[2] and x[1] < y[2] for w, y in extents.items()
            )

        impl = ir.Function(m.ir, ir.FunctionType(_VOID, [*cap_types, *extra]), base + ".body")
        impl.linkage = "internal"
        impl.attributes.add("nounwind")
        k = 0
        for v in captured:
            n = len(_flat_types(v.type))
            if isinstance(v.type, MemRefType):
                if disjoint(v):
                    impl.args[k].add_attribute("noalias")
                impl.args[k].add_attribute("captures(none)")
            k += n
        self.impl = impl
        self.sub = _FnEmitter(m, impl, e.func_op, in_parallel=e.in_parallel if direct else True)
        _bind(self.sub, captured, impl.args[: len(flat_caps)])
        for r_op in remat:
            _HANDLERS[r_op.name](self.sub, r_op)
        self.args = impl.args[len(flat_caps):]
        if direct:
            impl.attributes.add("noinline")
            self.captures = flat_caps
            return

        ctx_ty = ir.LiteralStructType(cap_types or [_I8])
        self.trampoline = ir.Function(m.ir, ir.FunctionType(_VOID, [_PTR, *extra]), base)
        self.trampoline.linkage = "internal"
        self.trampoline.attributes.add("nounwind")
        tb = ir.IRBuilder(self.trampoline.append_basic_block("entry"))
        ctx_arg = self.trampoline.args[0]
        fields = [
            tb.load(tb.gep(ctx_arg, [ir.Constant(_I32, 0), ir.Constant(_I32, i)], inbounds=True, source_etype=ctx_ty),
                    typ=t)
            for i, t in enumerate(cap_types)
        ]
        tb.call(impl, [*fields, *self.trampoline.args[1:]])
        tb.ret_void()

        self.ctx = e.entry_alloca(ctx_ty, 8, name=f"{base}.ctx")
        for i, v in enumerate(flat_caps):
            e.b.store(v, e.b.gep(self.ctx, [ir.Constant(_I32, 0), ir.Constant(_I32, i)], inbounds=True,
                                 source_etype=ctx_ty))


@_handles("scf.parallel")
def _parallel(e: _FnEmitter, op: Operation) -> None:
    block, lbs, ubs, steps = _parallel_parts(op)
    if e.in_parallel or e.m.num_threads <= 1:
        if _outlined_nest(e, op):
            return
        _serial_nest(e, block, lbs, ubs, steps)
        return
    m = e.m
    base = m.fresh_name(e.func_op.sym_name.data)
    out = _Outlined(e, op, [steps[0], *lbs[1:], *ubs[1:], *steps[1:]], [_I64, _I64], base)
    _serial_nest(out.sub, block, lbs, ubs, steps, dim0=(out.args[0], out.args[1]))
    out.sub.b.ret_void()
    b = e.b
    tramp, ctx = out.trampoline, out.ctx
    # iterations each thread must get: parallel_min_work / (work per iteration)
    est = _WorkEstimator(e, op)
    per_iter: _Work = est.block(block)
    for j in range(1, len(block.args)):
        per_iter = est.mul(per_iter, est.trip(lbs[j], ubs[j], steps[j]))
    if isinstance(per_iter, int):
        min_iters: ir.Value = ir.Constant(_I64, max(1, pymath.ceil(m.parallel_min_work / max(per_iter, 1))))
    else:
        per_iter = e.call_intrinsic("umax", _I64, [per_iter, ir.Constant(_I64, 1)])
        min_iters = b.udiv(ir.Constant(_I64, m.parallel_min_work), per_iter)
        min_iters = b.add(min_iters, ir.Constant(_I64, 1), name="par.min_iters")
    rt = declare_runtime(m.ir, "__dfc_parallel_for")
    threads = ir.Constant(_I64, m.num_threads)
    b.call(rt, [tramp, ctx, e.getv(lbs[0]), e.getv(ubs[0]), e.getv(steps[0]), min_iters, threads])


# ---------------------------------------------------------------------------
# Public API


def emit_module(
    module: ModuleOp,
    *,
    fast_math: bool = True,
    num_threads: int = 1,
    parallel_min_work: int = DEFAULT_PARALLEL_MIN_WORK,
    vector_math: bool = False,
) -> ir.Module:
    """Translate `module` (func/scf/memref/arith/math only) to LLVM IR.

    `fast_math`: `reassoc contract` on float arithmetic (False: no flags, so
    results are bit-reproducible). `num_threads`: threads an `scf.parallel`
    may use (1: serial). `parallel_min_work`: estimated ops per thread below
    which a parallel loop runs serially. `vector_math`: inline vectorisable
    exp/tanh for f32/f64 instead of libm calls. Raises NotImplementedError
    naming the first unsupported op or type.
    """
    return _ModuleEmitter(
        module,
        fast_math=fast_math,
        num_threads=num_threads,
        parallel_min_work=parallel_min_work,
        vector_math=vector_math,
    ).run()


def optimize(ir_module: ir.Module, opt_level: int = 3) -> llvm.ModuleRef:
    """Parse and verify `ir_module`, then run LLVM's default O`opt_level`
    pipeline (new pass manager, loop and SLP vectorisation on from O2, loop
    unrolling off) for the host CPU. Returns the optimised module."""
    tm = host_target_machine(opt_level)
    mod = llvm.parse_assembly(str(ir_module))
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    mod.verify()
    pto = llvm.create_pipeline_tuning_options(speed_level=opt_level)
    pto.loop_vectorization = opt_level >= 2
    pto.slp_vectorization = opt_level >= 2
    # LLVM's unroller grew the mlp gradient's IR 14-fold (O3: 0.7 s of optimisation
    # and 0.4 s of code generation) and bought no kernel time on the benchmarks
    # (mlp/softmax/jacobi gradients, 1024^3 matmul); vectorisation stays on.
    pto.loop_unrolling = False
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    mod.verify()
    return mod


class JitModule:
    """A module compiled for the host and loaded into this process (MCJIT).

    Keep the JitModule alive as long as any address it returned is in use:
    it owns the machine code. Call an entry through ctypes, e.g.
    `ctypes.CFUNCTYPE(None, ctypes.c_void_p)(jit.entry_address("f"))(desc)`
    with `desc` an int64 array laid out as described in this module's
    docstring.
    """

    def __init__(
        self,
        module: ModuleOp,
        *,
        opt_level: int = 3,
        fast_math: bool = True,
        num_threads: int = 1,
        parallel_min_work: int = DEFAULT_PARALLEL_MIN_WORK,
        vector_math: bool = False,
    ):
        install()
        ir_module = emit_module(
            module,
            fast_math=fast_math,
            num_threads=num_threads,
            parallel_min_work=parallel_min_work,
            vector_math=vector_math,
        )
        tm = host_target_machine(opt_level)
        mod = optimize(ir_module, opt_level)
        reentrant = not any(op.name == "memref.global" and op.constant is None for op in module.ops)
        optimized_ir = str(mod)  # before code generation, which rewrites the module
        self._load(CachedObject(tm.emit_object(mod), optimized_ir, reentrant), tm)

    @classmethod
    def from_object(cls, entry: CachedObject, opt_level: int = 3) -> JitModule:
        """Load machine code compiled earlier (see `object_cache`) without compiling."""
        install()
        jit = cls.__new__(cls)
        jit._load(entry, host_target_machine(opt_level))
        return jit

    def _load(self, entry: CachedObject, tm: llvm.TargetMachine) -> None:
        self.object = entry
        """The machine code and optimised IR, as `object_cache` stores them."""
        self.reentrant = entry.reentrant
        """False when the module has writable globals (mem-plan's arenas): its
        functions then share them, so calls into it must not overlap."""
        self.lock = threading.Lock()
        """Held by `ExecutionEngine.invoke` around calls into a non-reentrant module."""
        self.llvm_ir: str = entry.llvm_ir
        """The optimised LLVM IR."""
        blas_runtime.load_if_called(entry.llvm_ir)
        gemm_kernel.load_if_called(entry.llvm_ir)
        self._tm = tm
        empty = llvm.parse_assembly("")
        empty.triple = tm.triple
        self._engine = llvm.create_mcjit_compiler(empty, tm)
        self._engine.add_object_file(llvm.ObjectFileRef.from_data(entry.obj))
        self._engine.finalize_object()
        if perf_map.enabled():
            perf_map.write(entry.obj, self._engine.get_function_address)
        failures = self._engine.get_global_value_address(BOUNDS_FAILURES) if BOUNDS_FAILURES in entry.llvm_ir else 0
        self.bounds_failures = ctypes.c_int64.from_address(failures) if failures else None
        """The module's failed-bounds-check counter (None: it checks no bounds)."""
        self._bounds_site = ctypes.c_char_p.from_address(self._engine.get_global_value_address(BOUNDS_SITE)) if failures else None
        self.users: weakref.WeakSet[object] = weakref.WeakSet()
        """The open `ExecutionEngine`s calling into this module."""

    def close(self) -> None:
        """Free the machine code; no address it returned may be called after."""
        self._engine.close()

    def bounds_failure_message(self) -> str:
        """The message of the last failed bounds check."""
        assert self._bounds_site is not None
        raw = self._bounds_site.value
        return raw.decode() if raw else "index out of bounds"

    def entry_address(self, name: str) -> int:
        """Address of `void _dfc_entry_<name>(i64 *desc)`."""
        addr = self._engine.get_function_address(ENTRY_PREFIX + name)
        if not addr:
            raise KeyError(f"no function @{name} in the JIT module")
        return addr

    def assembly(self) -> str:
        """Host assembly of the optimised module."""
        return self._tm.emit_assembly(llvm.parse_assembly(self.llvm_ir))
