"""NVPTX backend: the kernels of a GPU-lowered module as PTX, through llvmlite.

    emit_ptx(module, arch="sm_90") -> str    PTX text (`ptxas -arch=sm_90` accepts it)

A module still at df/nn/tensor level is first lowered (on a copy) with
`GPU_PIPELINE`; the kernels are then the `gpu.func ... kernel` ops that
`lower-dataflow{target=gpu}` outlined (see `passes.gpu_lowering`). Host code
is not compiled here: the CUDA engine runs it.

Kernels are translated op by op by `KernelEmitter`, a subclass of the host
emitter's `FunctionEmitter` (`compiler.codegen.llvm.emitter`: same `index` =
i64, memref and fast-math conventions), with `KERNEL_HANDLERS`: the host's
arith handlers and those of `_KERNEL_OPS`, and the kernel-only ones below.
The result is `ptx_kernel` functions of triple `nvptx64-nvidia-cuda`,
optimised at O3 for `arch` (sm_70 or newer: warp aggregation uses
`match.any.sync`).

* Parameters: each kernel argument flattens as in the CPU ABI
  (`kernel_params`): a memref is a `ptr addrspace(1)` (global memory) plus
  one i64 per dynamic dimension, a scalar its LLVM type. `arg_attrs`
  `llvm.noalias` and `llvm.readonly` become `noalias`/`readonly`, which is what
  lets NVPTX load read-only buffers with `ld.global.nc`.
* `gpu.thread_id`/`block_id`/`block_dim`/`grid_dim` read `%tid`/`%ctaid`/
  `%ntid`/`%nctaid` (`gpu.known_block_size` makes `block_dim` a constant).
* `memref.atomic_rmw` (add, mul, max, min; float or integer): when the warp
  is full and every lane targets the same element (`activemask`,
  `match.any.sync`), the lanes reduce with `shfl.sync.bfly` and lane 0
  issues one atomic; otherwise each lane issues its own. add, integer max/min
  are `atom.global` instructions, float max/min (`fmaximum`, NaN-propagating
  like `arith.maximumf`) LLVM expands to a CAS loop, mul is a CAS loop here.
* `gpu.barrier` is `bar.sync 0`; a `memref.get_global` of memory space 3
  (a `blas.gemm` kernel's shared tiles, `passes.gpu_gemm`; a row
  reduction's tree, `passes.gpu_rows`) is an uninitialised `addrspace(3)`
  array, i.e. `.shared` memory.
* Math without libm or libdevice: exp, exp2, log, log2, log10, expm1, log1p,
  sin, cos, tan, asin, acos, atan, atan2, sinh, cosh, tanh, asinh, acosh,
  atanh, cbrt, erf, powf and `arith.remf` (exact fmod) are inline range
  reduction + polynomials (`gpu_math`, with its accuracy table); sqrt, fma,
  fabs, floor, ceil, trunc, round(even), copysign, min/max are native
  instructions; f16 computes in f32. Other math ops (erfc, ...) are rejected
  with NotImplementedError, as are allocation, copies and calls in kernels.
"""

from __future__ import annotations

import functools
import math
import re

import llvmlite.binding as llvm
import llvmlite.ir as ir
from xdsl.dialects import gpu
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, ModuleOp, ShapedType, TensorType
from xdsl.ir import Attribute, Operation

from dfc.compiler.codegen.gpu_math import MATH1, MATH2
from dfc.compiler.codegen.llvm import arith, memref, scf
from dfc.compiler.codegen.llvm import math as math_ops
from dfc.compiler.codegen.llvm.emitter import (
    BOUNDS_FAILURES,
    BOUNDS_SITE,
    TERMINATORS,
    FunctionEmitter,
    Handler,
    Handlers,
    ModuleEmitter,
)
from dfc.compiler.codegen.llvm.memref import bounds_guard, guarded_value
from dfc.compiler.codegen.llvm.values import MemRef, scalar_type
from dfc.compiler.codegen.llvm.workers import run_default_pipeline
from dfc.passes.gpu_gemm import SHARED

__all__ = ["emit_ptx", "emit_llvm", "compile_ptx", "lower_for_gpu", "needs_lowering", "kernel_params", "bounds_sites",
           "KernelEmitter", "KERNEL_HANDLERS", "GPU_PIPELINE", "DEFAULT_ARCH"]  # fmt: skip

DEFAULT_ARCH = "sm_90"
TRIPLE = "nvptx64-nvidia-cuda"
GPU_PIPELINE = ("expand-library,canonicalize,cse,bufferize,check-bounds,contraction-to-blas{target=gpu},"
                "lower-dataflow{target=gpu},canonicalize,cse")
"""What lowers a df/nn-level module for the GPU: host functions launching kernels (`gpu.func`)."""

_GLOBAL_PTR = ir.PointerType(addrspace=1)
_I1 = ir.IntType(1)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_VOID = ir.VoidType()
_DEVICE = 'syncscope("device") monotonic'
_ATOMIC_WCR = {0: "add", 1: "add", 3: "max", 4: "max", 6: "min", 7: "min", 9: "mul", 10: "mul"}
_KERNEL_OPS = frozenset({
    "math.sqrt", "math.rsqrt", "math.absf", "math.floor", "math.ceil", "math.trunc", "math.round",
    "math.roundeven", "math.fma", "math.copysign", "math.absi", "math.ctlz", "math.cttz", "math.ctpop",
    "memref.load", "memref.store", "memref.dim", "memref.cast", "memref.collapse_shape",
    "memref.expand_shape", "scf.for", "scf.if", "scf.while", "scf.execute_region",
})  # fmt: skip
"""Ops the host handlers translate as the GPU needs them (besides arith)."""
_INTRINSICS = re.compile(
    r"llvm\.(nvvm\..*|(fma|sqrt|fabs|floor|ceil|trunc|round|roundeven|copysign|minnum|maxnum|minimum|maximum"
    r"|smin|smax|umin|umax|abs|ctlz|cttz|ctpop)\..*)"
)
"""Declarations NVPTX can lower (anything else would need a libm it lacks)."""


def _unsupported(what: str) -> NotImplementedError:
    return NotImplementedError(f"NVPTX emitter: unsupported {what}")


def needs_lowering(module: ModuleOp) -> bool:
    """Whether `module` is still at df/nn/tensor/blas level (`GPU_PIPELINE` lowers it)."""
    for op in module.walk():
        if op.dialect_name() in ("df", "nn", "tensor", "blas"):
            return True
        if op.name == "func.func" and any(isinstance(t, TensorType) for t in op.function_type.inputs.data):
            return True
    return False


def lower_for_gpu(module: ModuleOp) -> ModuleOp:
    """A copy of `module`, lowered with GPU_PIPELINE if it is still at df/nn level."""
    module = module.clone()
    if needs_lowering(module):
        from dfc.compiler.pass_manager import PassManager

        PassManager.parse(GPU_PIPELINE).run(module)
    return module


def kernel_params(t: Attribute) -> list[ir.Type]:
    """The LLVM parameters a kernel argument of type `t` flattens to."""
    if isinstance(t, MemRefType):
        return [_GLOBAL_PTR] + [_I64 for d in t.get_shape() if d == DYNAMIC_INDEX]
    if isinstance(t, ShapedType):
        raise _unsupported(f"kernel argument type '{t}'")
    return [scalar_type(t)]


# ---------------------------------------------------------------------------
# Kernels


class KernelEmitter(FunctionEmitter):
    """Emits one kernel body with the module's `KERNEL_HANDLERS`; a kernel
    ends in `gpu.return`. `known_block`: the block size when the kernel states
    it; `sites`: the number of each checked access (`bounds_sites`)."""

    terminators = TERMINATORS | {"gpu.return"}
    stops_early = False  # a thread's loops are short; the counter is a device global
    checks_division = False  # PTX's integer division does not trap
    known_block: tuple[int, ...] | None = None
    sites: dict[Operation, int]

    def unsupported(self, what: str) -> NotImplementedError:
        return _unsupported(what)

    def handler(self, op: Operation) -> Handler:
        handler = self.m.handlers.get(op.name)
        if handler is None:
            raise _unsupported(f"op '{op.name}' in a kernel")
        return handler

    def report_out_of_bounds(self, op: Operation) -> None:
        """Count a failed check in the device global BOUNDS_FAILURES and store
        the access's number (`bounds_sites`) in BOUNDS_SITE."""
        failures, site = (_device_global(self.m.ir, name) for name in (BOUNDS_FAILURES, BOUNDS_SITE))
        self.b.atomic_rmw("add", failures, ir.Constant(_I64, 1), _DEVICE)
        self.b.store_atomic(ir.Constant(_I64, self.sites[op]), site, "monotonic", align=8)

    def report_warning(self, message: str) -> None:
        """Kernels issue no warnings (the engine reads no warning counter)."""

    def nvvm(self, name: str, ret: ir.Type, args: list[ir.Value]) -> ir.Value:
        fn = self.m.declare("llvm.nvvm." + name, ret, [a.type for a in args])
        return self.b.call(fn, args)


def bounds_sites(module: ModuleOp) -> list[Operation]:
    """The accesses in `module`'s kernels that `check-bounds` marked, numbered by
    their position here (what a failed check stores in BOUNDS_SITE)."""
    return [
        access
        for k in module.walk()
        if isinstance(k, gpu.FuncOp) and k.kernel is not None
        for access in k.walk()
        if "check_bounds" in access.attributes
    ]


def _device_global(module: ir.Module, name: str) -> ir.GlobalVariable:
    """The i64 `name` in global memory (0 at load; the engine reads it with cuModuleGetGlobal)."""
    if name not in module.globals:
        g = ir.GlobalVariable(module, _I64, name, addrspace=1)
        g.initializer = ir.Constant(_I64, 0)
        g.align = 8
    return module.globals[name]


def _emit_kernel(m: ModuleEmitter, op: gpu.FuncOp, sites: dict[Operation, int]) -> None:
    name = op.sym_name.data
    inputs = op.function_type.inputs.data
    fn = ir.Function(m.ir, ir.FunctionType(_VOID, [p for t in inputs for p in kernel_params(t)]), name)
    fn.calling_convention = "ptx_kernel"
    attrs = op.attributes.get("arg_attrs")
    e = KernelEmitter(m, fn, op, in_parallel=True)
    e.sites = sites
    if op.known_block_size is not None:
        e.known_block = op.known_block_size.get_values()
        set.add(fn.attributes, f'"nvvm.reqntid"="{",".join(map(str, e.known_block))}"')  # PTX .reqntid
    block = e.single_block(op.body, f"gpu.func @{name}")
    k = 0
    for i, (arg, t) in enumerate(zip(block.args, inputs)):
        n = len(kernel_params(t))
        params = fn.args[k : k + n]
        k += n
        if not isinstance(t, MemRefType):
            e.values[arg] = params[0]
            continue
        flags = attrs.data[i].data if attrs is not None else {}
        for flag in ("noalias", "readonly"):
            if f"llvm.{flag}" in flags:  # set.add: llvmlite's list lacks `readonly`, printed as is
                set.add(params[0].attributes, flag)
        ptr = e.b.addrspacecast(params[0], ir.PointerType(), name=arg.name_hint or f"arg{i}")
        it = iter(params[1:])
        sizes = [next(it) if d == DYNAMIC_INDEX else ir.Constant(_I64, d) for d in t.get_shape()]
        e.values[arg] = MemRef(ptr, sizes, t, scalar_type(t.element_type))
    term = e.emit_ops(block)
    if term is None or term.name != "gpu.return" or term.operands:
        raise _unsupported(f"kernel @{name} not ending in an operand-less gpu.return")
    e.b.ret_void()


# -- handlers

_GPU_HANDLERS = Handlers()
"""The kernel-only handlers (gpu ops, atomics, shared memory, inline math)."""
_SREG = {"gpu.thread_id": "tid", "gpu.block_id": "ctaid", "gpu.block_dim": "ntid", "gpu.grid_dim": "nctaid"}


@_GPU_HANDLERS.register(*_SREG)
def _sreg(e: KernelEmitter, op: Operation) -> None:
    dim = op.properties["dimension"].data.value  # "x", "y" or "z"
    if op.name == "gpu.block_dim" and e.known_block is not None:
        e.values[op.results[0]] = ir.Constant(_I64, e.known_block["xyz".index(dim)])
        return
    v = e.nvvm(f"read.ptx.sreg.{_SREG[op.name]}.{dim}", _I32, [])
    e.values[op.results[0]] = e.b.zext(v, _I64)


def _float(ty: ir.Type) -> bool:
    return isinstance(ty, (ir.HalfType, ir.FloatType, ir.DoubleType))


def _bits(ty: ir.Type) -> int:
    return {ir.HalfType: 16, ir.FloatType: 32, ir.DoubleType: 64}[type(ty)] if _float(ty) else ty.width


def _combine(e: KernelEmitter, wcr: str, x: ir.Value, y: ir.Value) -> ir.Value:
    b = e.b
    if _float(x.type):
        if wcr == "add":
            return b.fadd(x, y)
        if wcr == "mul":
            return b.fmul(x, y)
        return e.call_intrinsic("maximum" if wcr == "max" else "minimum", x.type, [x, y])
    if wcr == "add":
        return b.add(x, y)
    if wcr == "mul":
        return b.mul(x, y)
    return e.call_intrinsic("smax" if wcr == "max" else "smin", x.type, [x, y])


def _shfl_xor(e: KernelEmitter, v: ir.Value, offset: int) -> ir.Value:
    """`v` of the lane `laneid ^ offset` (a full warp), any type up to 64 bits."""
    b = e.b
    width = _bits(v.type)
    iv = b.bitcast(v, ir.IntType(width)) if _float(v.type) else v

    def shfl(x: ir.Value) -> ir.Value:
        args = [ir.Constant(_I32, -1), x, ir.Constant(_I32, offset), ir.Constant(_I32, 31)]
        return e.nvvm("shfl.sync.bfly.i32", _I32, args)

    if width == 64:
        lo = shfl(b.trunc(iv, _I32))
        hi = shfl(b.trunc(b.lshr(iv, ir.Constant(_I64, 32)), _I32))
        r = b.or_(b.zext(lo, _I64), b.shl(b.zext(hi, _I64), ir.Constant(_I64, 32)))
    elif width == 32:
        r = shfl(iv)
    else:
        r = b.trunc(shfl(b.zext(iv, _I32)), iv.type)
    return b.bitcast(r, v.type) if _float(v.type) else r


def _atomic(e: KernelEmitter, wcr: str, addr: ir.Value, v: ir.Value) -> ir.Value:
    """The atomic `*addr = *addr (wcr) v` at device scope; returns the old value."""
    b = e.b
    if wcr == "add":
        return b.atomic_rmw("fadd" if _float(v.type) else "add", addr, v, _DEVICE)
    if wcr in ("max", "min"):
        return b.atomic_rmw(("f" + wcr + "imum") if _float(v.type) else wcr, addr, v, _DEVICE)
    ity = ir.IntType(_bits(v.type))  # mul: a compare-and-swap loop on the bits
    entry = b.block
    first = b.load(addr, typ=ity, align=_bits(v.type) // 8)
    loop = e.fn.append_basic_block("atomic.cas")
    done = e.fn.append_basic_block("atomic.done")
    b.branch(loop)
    b.position_at_end(loop)
    old = b.phi(ity)
    old.add_incoming(first, entry)
    value = b.bitcast(old, v.type) if _float(v.type) else old
    new = _combine(e, wcr, value, v)
    pair = b.cmpxchg(addr, old, b.bitcast(new, ity) if _float(v.type) else new, _DEVICE, "monotonic")
    seen = b.extract_value(pair, 0)
    old.add_incoming(seen, loop)
    b.cbranch(b.extract_value(pair, 1), done, loop)
    b.position_at_end(done)
    return b.bitcast(seen, v.type) if _float(v.type) else seen


@_GPU_HANDLERS.register("memref.atomic_rmw")
def _atomic_rmw(e: KernelEmitter, op: Operation) -> None:
    kind = op.properties["kind"].value.data
    if kind not in _ATOMIC_WCR:
        raise _unsupported(f"memref.atomic_rmw kind {kind}")
    v = e.getv(op.operands[0])
    if _bits(v.type) not in (16, 32, 64):
        raise _unsupported(f"atomic on {v.type}")
    m = e.getm(op.operands[1])
    ok = bounds_guard(e, op, m, op.operands[2:])
    update = lambda: _atomic_update(e, op, _ATOMIC_WCR[kind], v, e.address(m, op.operands[2:]))  # noqa: E731
    e.values[op.results[0]] = guarded_value(e, op, ok, update, v.type)


def _atomic_update(e: KernelEmitter, op: Operation, wcr: str, v: ir.Value, addr: ir.Value) -> ir.Value:
    """The atomic update of `op`; its old value (undefined where it has no uses:
    the warp's lanes then combine first when they all target one element)."""
    if op.results[0].uses:  # the old value is wanted: no aggregation
        return _atomic(e, wcr, addr, v)
    b = e.b
    mask = e.nvvm("activemask", _I32, [])
    peers = e.nvvm("match.any.sync.i64", _I32, [mask, b.ptrtoint(addr, _I64)])
    full = ir.Constant(_I32, -1)
    uniform = b.and_(b.icmp_unsigned("==", mask, full), b.icmp_unsigned("==", peers, full))
    entry = b.block
    reduce_bb = e.fn.append_basic_block("warp.reduce")
    atomic_bb = e.fn.append_basic_block("warp.atomic")
    done_bb = e.fn.append_basic_block("warp.done")
    b.cbranch(uniform, reduce_bb, atomic_bb)
    b.position_at_end(reduce_bb)
    total = v
    for offset in (16, 8, 4, 2, 1):
        total = _combine(e, wcr, total, _shfl_xor(e, total, offset))
    lane0 = b.icmp_unsigned("==", e.nvvm("read.ptx.sreg.laneid", _I32, []), ir.Constant(_I32, 0))
    reduced = b.block
    b.cbranch(lane0, atomic_bb, done_bb)
    b.position_at_end(atomic_bb)
    x = b.phi(v.type)
    x.add_incoming(v, entry)
    x.add_incoming(total, reduced)
    _atomic(e, wcr, addr, x)
    b.branch(done_bb)
    b.position_at_end(done_bb)
    return ir.Constant(v.type, ir.Undefined)


@_GPU_HANDLERS.register("gpu.barrier")
def _barrier(e: KernelEmitter, op: Operation) -> None:
    e.nvvm("barrier0", _VOID, [])


@_GPU_HANDLERS.register("memref.get_global")
def _shared_global(e: KernelEmitter, op: Operation) -> None:
    """A `memref.global` of memory space 3 (the kernel module's shared tiles,
    `passes.gpu_gemm`, and row buffers, `passes.gpu_rows`): an uninitialised
    `addrspace(3)` array of the module."""
    t = op.results[0].type
    assert isinstance(t, MemRefType)
    if t.memory_space != SHARED:
        raise _unsupported(f"memref.get_global of '{t}' in a kernel (only shared memory, space 3)")
    name = op.properties["name"].root_reference.data
    if name not in e.m.ir.globals:
        g = ir.GlobalVariable(e.m.ir, ir.ArrayType(scalar_type(t.element_type), math.prod(t.get_shape())), name,
                              addrspace=3)  # fmt: skip
        g.linkage = "internal"
        g.initializer = ir.Constant(g.value_type, ir.Undefined)
        g.align = 16
    ptr = e.b.addrspacecast(e.m.ir.globals[name], ir.PointerType())
    e.values[op.results[0]] = MemRef(ptr, [ir.Constant(_I64, d) for d in t.get_shape()], t,
                                     scalar_type(t.element_type))  # fmt: skip


@_GPU_HANDLERS.register(*MATH1, *MATH2)
def _math(e: KernelEmitter, op: Operation) -> None:
    args = [e.getv(v) for v in op.operands]
    fn = MATH1.get(op.name) or MATH2[op.name]
    if isinstance(args[0].type, ir.HalfType):  # computed in f32
        r = e.b.fptrunc(fn(e, *(e.b.fpext(x, ir.FloatType()) for x in args)), args[0].type)
    else:
        r = fn(e, *args)
    e.values[op.results[0]] = r


KERNEL_HANDLERS = Handlers({
    **arith.HANDLERS,
    **{name: h for table in (math_ops.HANDLERS, memref.HANDLERS, scf.HANDLERS) for name, h in table.items()
       if name in _KERNEL_OPS},
    **_GPU_HANDLERS,
})  # fmt: skip
"""Every op a kernel may hold: the host's arith and `_KERNEL_OPS` handlers,
replaced by the kernel-only ones where both have one."""


# ---------------------------------------------------------------------------
# Public API


@functools.cache
def _target(arch: str, opt_level: int) -> llvm.TargetMachine:
    if not re.fullmatch(r"sm_\d+[af]?", arch):
        raise ValueError(f"invalid GPU architecture '{arch}' (expected e.g. sm_90)")
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    return llvm.Target.from_triple(TRIPLE).create_target_machine(cpu=arch, opt=opt_level)


def emit_llvm(module: ModuleOp, arch: str = DEFAULT_ARCH, *, fast_math: bool = True) -> ir.Module:
    """The kernels of `module` (already GPU-lowered) as an unoptimised LLVM module."""
    m = ModuleEmitter(module, handlers=KERNEL_HANDLERS, triple=TRIPLE, data_layout=str(_target(arch, 3).target_data),
                      fast_math=fast_math, num_threads=1, parallel_min_work=0, vector_math=True)
    names: set[str] = set()
    sites = {access: k for k, access in enumerate(bounds_sites(module))}
    for op in module.walk():
        if isinstance(op, gpu.FuncOp) and op.kernel is not None:
            if op.sym_name.data in names:
                raise _unsupported(f"two kernels named @{op.sym_name.data}")
            names.add(op.sym_name.data)
            _emit_kernel(m, op, sites)
    for g in m.ir.globals.values():
        if isinstance(g, ir.Function) and not g.blocks and not _INTRINSICS.fullmatch(g.name):
            raise _unsupported(f"call to '{g.name}' in a kernel (no libm or libc on the GPU)")
    return m.ir


def compile_ptx(ir_module: ir.Module, arch: str = DEFAULT_ARCH, opt_level: int = 3) -> str:
    """Verify, optimise (O`opt_level`) and compile `ir_module` to PTX for `arch`."""
    tm = _target(arch, opt_level)
    mod = llvm.parse_assembly(str(ir_module))
    mod.verify()
    run_default_pipeline(mod, tm, llvm.create_pipeline_tuning_options(speed_level=opt_level))
    return tm.emit_assembly(mod)


def emit_ptx(module: ModuleOp, arch: str = DEFAULT_ARCH, *, fast_math: bool = True, opt_level: int = 3) -> str:
    """PTX for the kernels of `module`, lowered first with GPU_PIPELINE if it is
    still at df/nn level. Raises NotImplementedError for what kernels cannot do."""
    return compile_ptx(emit_llvm(lower_for_gpu(module), arch, fast_math=fast_math), arch, opt_level)

