"""A simulated CUDA device, to test the GPU lowering and the CUDA engine without a GPU.

    engine = simulated_engine(module)        # a CudaEngine on a fresh SimulatedDriver
    engine.invoke("f", x, y)                 # numpy in, numpy out, as on a GPU

`SimulatedDriver` has the interface of `compiler.cuda_engine.Driver`. Device
memory is host numpy byte buffers at fake device addresses (with unmapped gaps
between them); an address maps to (buffer, offset), so the engine's
`ptr + offset` element copies work. Fresh allocations are filled with 0xFF
bytes (NaN floats, -1 integers), as the real pool does not clear memory.

`launch(fn, grid, block, params)` runs the kernel by interpreting its
`gpu.func` from `driver.module` (the engine's lowered module, which the test
hands over after building the engine: `simulated_engine` does). Kernels run
SIMT-style, vectorised over all threads of the launch: a value is a numpy
array over the active threads, or a numpy scalar when uniform; `scf.if` on a
per-thread condition runs each region on the threads that take it, `scf.for`
loops in Python (masked per iteration when its bounds differ between
threads); `memref.load` gathers, `memref.store` scatters and
`memref.atomic_rmw` is a `ufunc.at` (in thread order). Parameters are decoded
from the ctypes values the engine passes, by `kernel_params` of the
`gpu.func` argument types.

Accesses marked `check_bounds` are guarded as the NVPTX emitter guards them:
threads whose indices leave the buffer skip the access (a load yields 0), and
the failures are counted in the module's globals `__dfc_bounds_failures` and
`__dfc_bounds_site` (`global_address`, which the engine reads after a call).

Besides the values, a launch checks what a GPU would trip over or hide:
parameter count and sizes, block size against `gpu.known_block_size`
(`.reqntid`), launch limits, accesses outside a memref's dimensions or
outside live allocations (use after free, overruns), two threads storing
different values to one element in one store (a race), integer division by
zero, the `arg_attrs` claims (a write through an `llvm.readonly` argument, an
`llvm.noalias` one overlapping another argument that is not read-only too),
and the PTX declaring each kernel the engine asks for. An op it does not know
raises SimulationError naming it.

Shared memory (`memref.get_global` of memory space 3, a `blas.gemm` kernel's
tiles, a row reduction's tree) is one buffer per block, filled with NaN. Since threads run in
lockstep, every store would be visible to every later load, which would hide
a missing barrier; so `gpu.barrier` must be reached by all threads of a block
together, and a shared access raises when it reads or overwrites an element
that another thread stored since the last barrier, or overwrites one that
another thread read since then.

Math ops the NVPTX emitter inlines (exp, log, sin, erf, powf, remf, ...:
`gpu_math`) run the emitter's own IR compiled for the host (`device_math`),
so results carry the kernel's rounding; other arithmetic runs in numpy.

Not modelled: timing, the PTX code itself, warp-level behaviour (threads run in lockstep,
op by op, so a store is visible to every later op of every thread) and
memory ordering between threads.
"""

from __future__ import annotations

import bisect
import ctypes
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import llvmlite.ir as ir
import numpy as np
from support.device_math import DEVICE_MATH_OPS, device_math
from xdsl.dialects import arith, gpu
from xdsl.dialects.builtin import DYNAMIC_INDEX, FloatAttr, IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from dfc.compiler import ExecutionEngine
from dfc.compiler.codegen.llvm.emitter import BOUNDS_FAILURES, BOUNDS_SITE
from dfc.compiler.codegen.nvptx import bounds_sites, kernel_params
from dfc.passes.gpu_gemm import SHARED
from dfc.compiler.cuda_engine import CudaEngine
from dfc.compiler.interpreter import _converter, dtype_of

__all__ = ["SimulatedDriver", "SimulationError", "simulated_engine"]

_BASE = 1 << 40  # the first fake device address
_GRANULE = 256
_GAP = 1 << 12  # unmapped bytes after each allocation
_GARBAGE = 0xFF
_BOUNDS = (BOUNDS_FAILURES, BOUNDS_SITE)


class SimulationError(RuntimeError):
    """The simulated device caught an error (an invalid access, a race, a bad launch)."""


def simulated_engine(module: ModuleOp, **options: Any) -> CudaEngine:
    """`ExecutionEngine(module, target="gpu")` on a fresh SimulatedDriver (`engine.driver`)."""
    driver = SimulatedDriver()
    engine = ExecutionEngine(module, target="gpu", driver=driver, **options)
    assert isinstance(engine, CudaEngine)
    driver.module = engine.module
    return engine


class SimulatedDriver:
    """`compiler.cuda_engine.Driver`'s interface on host memory; `module` holds the kernels `launch` runs."""

    def __init__(self, module: ModuleOp | None = None, arch: str = "sm_90"):
        self.module = module
        self._arch = arch
        self._buffers: dict[int, np.ndarray] = {}  # base address -> bytes
        self._bases: list[int] = []  # sorted live bases
        self._freed: dict[int, int] = {}  # base -> size of freed buffers (for messages)
        self._next = _BASE
        self._modules: dict[int, str] = {}
        self._globals: dict[tuple[int, str], int] = {}  # (module, name) -> address
        self._sites: tuple[ModuleOp | None, dict[Operation, int]] = (None, {})
        self.launches: list[tuple[str, tuple[int, ...], tuple[int, ...]]] = []
        """(kernel, grid, block) of every launch, in order."""

    # -- context

    def activate(self) -> None:
        pass

    def arch(self) -> str:
        return self._arch

    def synchronize(self) -> None:
        pass

    def trim(self) -> None:
        pass

    def elapsed_ms(self, work: Callable[[], None], repeat: int = 1) -> float:
        for _ in range(repeat):
            work()
        return 0.0

    # -- modules and launches

    def load_module(self, ptx: str) -> int:
        handle = len(self._modules) + 1
        self._modules[handle] = ptx
        return handle

    def unload_module(self, handle: int) -> None:
        if self._modules.pop(handle, None) is None:
            raise SimulationError(f"unload of module {handle}, which is not loaded")
        for key in [k for k in self._globals if k[0] == handle]:
            self.free(self._globals.pop(key))

    def global_address(self, handle: int, name: str) -> int:
        """The module's i64 global `name` (0 at load), which the PTX must declare."""
        if not re.search(rf"\.global \.align 8 \.u64 {re.escape(name)}\b", self._modules[handle]):
            raise SimulationError(f"the PTX has no global '.u64 {name}'")
        if (handle, name) not in self._globals:
            address = self.alloc(8)
            self._buffers[address][:8] = 0
            self._globals[handle, name] = address
        return self._globals[handle, name]

    def bounds_failure(self, handle: int, site: int, count: int) -> None:
        """Kernel code of module `handle` counts `count` failed checks of access `site`."""
        failures, where = (self.resolve(self._globals[handle, n], 8)[0][:8].view(np.int64) for n in _BOUNDS)
        failures[0] += count
        where[0] = site

    def sites(self) -> dict[Operation, int]:
        """Marked kernel access -> its number (`nvptx.bounds_sites` of `module`)."""
        if self._sites[0] is not self.module:
            self._sites = (self.module, {op: k for k, op in enumerate(bounds_sites(self.module))})
        return self._sites[1]

    def function(self, handle: int, name: str) -> tuple[int, str]:
        if not re.search(rf"\.entry\s+{re.escape(name)}\s*\(", self._modules[handle]):
            raise SimulationError(f"the PTX has no kernel '.entry {name}'")
        return handle, name

    def kernel(self, name: str) -> gpu.FuncOp:
        """The `gpu.func` @name of `self.module`."""
        if self.module is None:
            raise SimulationError("SimulatedDriver.module is not set: hand it the engine's lowered module")
        for op in self.module.walk():
            if isinstance(op, gpu.FuncOp) and op.sym_name.data == name:
                return op
        raise SimulationError(f"no gpu.func @{name} in the module")

    def launch(self, fn: tuple[int, str], grid: Sequence[int], block: Sequence[int],
               params: Sequence[ctypes._SimpleCData]) -> None:  # fmt: skip
        handle, name = fn
        if handle not in self._modules:
            raise SimulationError(f"launch of @{name} from an unloaded module")
        self.launches.append((name, tuple(grid), tuple(block)))
        _Launch(self, handle, self.kernel(name), tuple(grid), tuple(block), params).run()

    # -- memory

    @property
    def live(self) -> dict[int, int]:
        """Base address -> size of every allocated buffer (not the modules' globals)."""
        globals_ = set(self._globals.values())
        return {base: buf.size for base, buf in self._buffers.items() if base not in globals_}

    def alloc(self, nbytes: int) -> int:
        size = max(_GRANULE, -(-nbytes // _GRANULE) * _GRANULE)
        base = self._next
        self._next += size + _GAP
        self._buffers[base] = np.full(size, _GARBAGE, np.uint8)
        bisect.insort(self._bases, base)
        return base

    def free(self, ptr: int) -> None:
        if ptr not in self._buffers:
            state = "already freed" if ptr in self._freed else "not allocated"
            raise SimulationError(f"free of device pointer {ptr:#x}, which is {state}")
        self._freed[ptr] = self._buffers.pop(ptr).size
        self._bases.remove(ptr)

    def resolve(self, address: int, nbytes: int, what: str = "access") -> tuple[np.ndarray, int]:
        """The buffer holding bytes [address, address + nbytes) and the offset in it."""
        k = bisect.bisect_right(self._bases, address) - 1
        if k >= 0:
            base = self._bases[k]
            buf = self._buffers[base]
            if address + nbytes <= base + buf.size:
                return buf, address - base
        for base, size in self._freed.items():
            if base <= address < base + size:
                raise SimulationError(f"{what}: device address {address:#x} is in a freed buffer")
        raise SimulationError(f"{what}: {nbytes} bytes at device address {address:#x} overrun every live buffer")

    def _host(self, address: int, nbytes: int, what: str) -> int:
        buf, offset = self.resolve(address, nbytes, what)
        return buf.ctypes.data + offset

    def htod(self, dst: int, src: int, nbytes: int) -> None:
        if nbytes:
            ctypes.memmove(self._host(dst, nbytes, "htod"), src, nbytes)

    def dtoh(self, dst: int, src: int, nbytes: int) -> None:
        if nbytes:
            ctypes.memmove(dst, self._host(src, nbytes, "dtoh"), nbytes)

    def dtod(self, dst: int, src: int, nbytes: int) -> None:
        if nbytes:
            ctypes.memmove(self._host(dst, nbytes, "dtod"), self._host(src, nbytes, "dtod"), nbytes)


# ---------------------------------------------------------------------------
# Kernels


class _Mem:
    """A memref kernel value: an array viewing device memory."""

    def __init__(self, array: np.ndarray, t: MemRefType, what: str, readonly: bool = False):
        self.array, self.type, self.what, self.readonly = array, t, what, readonly
        self.flat = array.reshape(-1)
        self.shape = array.shape


class _Shared(_Mem):
    """A shared-memory buffer (`memref.get_global` of memory space 3): one copy
    per block, and per element the thread that last wrote it and the one (-2:
    several) that read it since the last barrier, to catch a missing barrier."""

    def __init__(self, t: MemRefType, blocks: int, name: str):
        shape = tuple(t.get_shape())
        super().__init__(np.full((blocks, *shape), np.nan, dtype_of(t.element_type)), t, f"shared @{name}")
        self.shape = shape
        self.size = math.prod(shape)
        n = self.flat.size
        self.writer, self.written = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
        self.reader, self.read = np.full(n, -1, np.int64), np.full(n, -1, np.int64)


class _Frame:
    """The values of one region execution over a subset of the launch's threads:
    `threads` (global ids), `sel` picking them from the parent's (None: the same)."""

    def __init__(self, parent: _Frame | None, sel: np.ndarray | None, threads: np.ndarray | None = None):
        self.env: dict[SSAValue, Any] = {}
        self.parent, self.sel = parent, sel
        if threads is None:
            assert parent is not None
            threads = parent.threads if sel is None else parent.threads[sel]
        self.threads = threads

    def get(self, v: SSAValue) -> Any:
        if v in self.env:
            return self.env[v]
        if self.parent is None:
            raise SimulationError(f"value {v} used before its definition")
        x = self.parent.get(v)
        if self.sel is not None and isinstance(x, np.ndarray):
            x = x[self.sel]
        self.env[v] = x
        return x


def _out(x: Any, dtype: np.dtype) -> Any:
    """`x` as `dtype`: an array over threads, or a numpy scalar when 0-d."""
    a = np.asarray(x)
    if a.dtype != dtype:
        a = a.astype(dtype) if dtype != np.bool_ else (a.astype(np.int64) & 1).astype(np.bool_)
    return a[()] if a.ndim == 0 else a


def _as_signed(x: Any) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype == np.bool_:
        return -a.astype(np.int64)  # i1 true is -1
    return a.view(f"i{a.dtype.itemsize}") if a.dtype.kind == "u" else a


def _as_unsigned(x: Any) -> np.ndarray:
    a = np.asarray(x)
    return a.astype(np.uint8) if a.dtype == np.bool_ else a.view(f"u{a.dtype.itemsize}")


def _trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = a // b
    return q + ((a % b != 0) & ((a < 0) != (b < 0)))


_FLOAT_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply, "arith.divf": np.divide,
    "arith.remf": np.fmod, "arith.maximumf": np.maximum, "arith.minimumf": np.minimum,
    "arith.maxnumf": np.fmax, "arith.minnumf": np.fmin, "math.powf": np.power, "math.copysign": np.copysign,
}  # fmt: skip
_INT_BINARY: dict[str, tuple[Callable[[Any, Any], Any], bool]] = {  # (fn, operands unsigned)
    "arith.addi": (np.add, False), "arith.subi": (np.subtract, False), "arith.muli": (np.multiply, False),
    "arith.andi": (np.bitwise_and, False), "arith.ori": (np.bitwise_or, False), "arith.xori": (np.bitwise_xor, False),
    "arith.maxsi": (np.maximum, False), "arith.minsi": (np.minimum, False),
    "arith.maxui": (np.maximum, True), "arith.minui": (np.minimum, True),
    "arith.shli": (np.left_shift, False), "arith.shrsi": (np.right_shift, False), "arith.shrui": (np.right_shift, True),
    "arith.divsi": (_trunc_div, False), "arith.remsi": (lambda a, b: a - b * _trunc_div(a, b), False),
    "arith.divui": (np.floor_divide, True), "arith.remui": (np.remainder, True),
    "arith.floordivsi": (np.floor_divide, False), "arith.ceildivsi": (lambda a, b: -(-a // b), False),
}  # fmt: skip
_DIVISIONS = {"arith.divsi", "arith.remsi", "arith.divui", "arith.remui", "arith.floordivsi", "arith.ceildivsi"}


def _round_away(x: Any) -> Any:
    r = np.trunc(x)
    return r + np.where(np.abs(x - r) >= 0.5, np.sign(x), 0).astype(np.asarray(x).dtype)


_UNARY: dict[str, Callable[[Any], Any]] = {
    "arith.negf": np.negative, "math.absf": np.abs, "math.absi": np.abs, "math.exp": np.exp, "math.exp2": np.exp2,
    "math.expm1": np.expm1, "math.log": np.log, "math.log2": np.log2, "math.log10": np.log10,
    "math.log1p": np.log1p, "math.sqrt": np.sqrt, "math.rsqrt": lambda x: 1 / np.sqrt(x), "math.tanh": np.tanh,
    "math.sin": np.sin, "math.cos": np.cos, "math.floor": np.floor, "math.ceil": np.ceil, "math.trunc": np.trunc,
    "math.round": _round_away, "math.roundeven": np.rint,
}  # fmt: skip
_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
        "ge": np.greater_equal}  # fmt: skip
_ATOMIC: dict[int, tuple[np.ufunc | None, bool]] = {  # memref.atomic_rmw kind -> (ufunc, unsigned); None: assign
    0: (np.add, False), 1: (np.add, False), 2: (None, False), 3: (np.maximum, False), 4: (np.maximum, False),
    5: (np.maximum, True), 6: (np.minimum, False), 7: (np.minimum, False), 8: (np.minimum, True),
    9: (np.multiply, False), 10: (np.multiply, False), 11: (np.bitwise_or, False), 12: (np.bitwise_and, False),
    13: (np.fmax, False), 14: (np.fmin, False),
}  # fmt: skip
_SPECIAL = ("gpu.thread_id", "gpu.block_id", "gpu.block_dim", "gpu.grid_dim")


def _param_size(t: ir.Type) -> int:
    if isinstance(t, ir.PointerType):
        return 8
    if isinstance(t, ir.IntType):
        return -(-t.width // 8)
    return {ir.HalfType: 2, ir.FloatType: 4, ir.DoubleType: 8}[type(t)]


class _Launch:
    """One kernel launch, interpreted over all its threads at once."""

    def __init__(self, driver: SimulatedDriver, handle: int, kernel: gpu.FuncOp, grid: tuple[int, ...],
                 block: tuple[int, ...], params: Sequence[ctypes._SimpleCData]):  # fmt: skip
        self.driver, self.handle, self.kernel, self.grid, self.block = driver, handle, kernel, grid, block
        self.name = kernel.sym_name.data
        if len(grid) != 3 or len(block) != 3 or min(grid + block) < 1:
            raise self.error(f"invalid launch grid {grid} block {block}")
        if math.prod(block) > 1024 or block[0] > 1024 or block[1] > 1024 or block[2] > 64:
            raise self.error(f"block {block} exceeds the CUDA limits")
        if grid[0] >= 1 << 31 or grid[1] > 65535 or grid[2] > 65535:
            raise self.error(f"grid {grid} exceeds the CUDA limits")
        known = kernel.known_block_size
        if known is not None and tuple(known.get_values()) != block:
            raise self.error(f"launched with block {block}, but its .reqntid is {known.get_values()}")
        self.args = self._decode(params)
        self._check_aliasing()
        self.shared: dict[str, _Shared] = {}
        self.epoch = 0  # barriers passed

    def error(self, message: str) -> SimulationError:
        return SimulationError(f"kernel @{self.name}: {message}")

    def _decode(self, params: Sequence[ctypes._SimpleCData]) -> list[Any]:
        """The kernel's argument values from the launch's parameter values."""
        inputs = self.kernel.function_type.inputs.data
        expected = [p for t in inputs for p in kernel_params(t)]
        if len(params) != len(expected):
            raise self.error(f"takes {len(expected)} parameters, got {len(params)}")
        for k, (p, want) in enumerate(zip(params, expected)):
            if ctypes.sizeof(p) != _param_size(want):
                raise self.error(f"parameter #{k} is a {type(p).__name__}, the kernel expects {want}")
        values = iter(p.value for p in params)
        attrs = self.kernel.attributes.get("arg_attrs")
        args: list[Any] = []
        for k, t in enumerate(inputs):
            what = f"argument #{k} ({t})"
            if isinstance(t, MemRefType):
                ptr = next(values)
                shape = tuple(int(next(values)) if d == DYNAMIC_INDEX else d for d in t.get_shape())
                if min(shape, default=0) < 0:
                    raise self.error(f"{what} has a negative size {shape}")
                dtype = dtype_of(t.element_type)
                if ptr % dtype.itemsize:
                    raise self.error(f"{what} is misaligned ({ptr:#x})")
                buf, offset = self.driver.resolve(ptr, math.prod(shape) * dtype.itemsize, f"kernel @{self.name} {what}")
                readonly = attrs is not None and "llvm.readonly" in attrs.data[k].data
                args.append(_Mem(np.ndarray(shape, dtype, buffer=buf, offset=offset), t, what, readonly))
            else:
                dtype, raw = dtype_of(t), next(values)
                if dtype == np.float16:
                    args.append(np.array(raw, np.uint16).view(np.float16)[()])
                else:
                    args.append(dtype.type(raw) if dtype.kind == "f" else _converter(t)(raw))
        return args

    def _check_aliasing(self) -> None:
        """`llvm.noalias` arguments must not overlap another memref argument unless both are `llvm.readonly`."""
        attrs = self.kernel.attributes.get("arg_attrs")
        flags = [set(d.data) for d in attrs.data] if attrs is not None else [set() for _ in self.args]
        mems = [(k, a, flags[k]) for k, a in enumerate(self.args) if isinstance(a, _Mem)]
        for k, a, fa in mems:
            lo = a.array.__array_interface__["data"][0]
            for j, b, fb in mems:
                start = b.array.__array_interface__["data"][0]
                overlap = j != k and lo < start + b.array.nbytes and start < lo + a.array.nbytes
                if overlap and "llvm.noalias" in fa and not {"llvm.readonly"} <= fa & fb:
                    raise self.error(f"{a.what} is llvm.noalias but overlaps {b.what}")

    def run(self) -> None:
        total = math.prod(self.grid) * math.prod(self.block)
        frame = _Frame(None, None, np.arange(total, dtype=np.int64))
        body = self.kernel.body.block
        frame.env.update(zip(body.args, self.args))
        with np.errstate(all="ignore"):
            self.region(body, frame)

    def region(self, block: Block, frame: _Frame) -> list[Any]:
        """Run `block` on `frame`'s threads; the values its terminator yields."""
        for op in block.ops:
            if op.name in ("scf.yield", "gpu.return"):
                return [frame.get(v) for v in op.operands]
            results = self.op(op, frame, [frame.get(v) for v in op.operands])
            frame.env.update(zip(op.results, results))
        return []

    # -- ops

    def op(self, op: Operation, frame: _Frame, args: list[Any]) -> Sequence[Any]:
        name = op.name
        t = op.results[0].type if op.results else None
        if name in _SPECIAL:
            return [self.special(op, frame.threads)]
        if name == "arith.constant":
            value = op.value
            if not isinstance(value, IntegerAttr | FloatAttr):
                raise self.error(f"unsupported constant {value}")
            return [_converter(t)(value.value.data)]
        if name in DEVICE_MATH_OPS:
            return [_out(device_math(name, dtype_of(t))(*args), dtype_of(t))]
        if name in _FLOAT_BINARY:
            return [_out(_FLOAT_BINARY[name](*args), dtype_of(t))]
        if name in _INT_BINARY:
            return [self.integer(op, args)]
        if name in _UNARY:
            return [_out(_UNARY[name](args[0]), dtype_of(t))]
        if name == "math.fma":
            return [_out(args[0] * args[1] + args[2], dtype_of(t))]
        if name == "arith.cmpi":
            predicate = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
            read = _as_unsigned if predicate.startswith("u") else _as_signed
            return [_out(_CMP[predicate[-2:]](read(args[0]), read(args[1])), np.dtype(np.bool_))]
        if name == "arith.cmpf":
            return [self.cmpf(arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data], *args)]
        if name == "arith.select":
            cond, a, b = args
            return [_out(np.where(cond, a, b), dtype_of(t))]
        if name in ("arith.index_cast", "arith.extsi", "arith.trunci", "arith.sitofp", "arith.fptosi",
                    "arith.extf", "arith.truncf"):  # fmt: skip
            return [self.cast(op, _as_signed(args[0]), dtype_of(t))]
        if name in ("arith.index_castui", "arith.extui", "arith.uitofp", "arith.fptoui"):
            return [self.cast(op, _as_unsigned(args[0]), dtype_of(t))]
        if name == "arith.bitcast":
            return [_out(np.asarray(args[0]).view(dtype_of(t)), dtype_of(t))]
        if name in ("memref.load", "memref.store", "memref.atomic_rmw"):
            return self.guarded(op, frame, args) if "check_bounds" in op.attributes else self.unguarded(op, frame, args)
        if name == "memref.dim":
            mem, index = args
            if isinstance(index, np.ndarray) or not 0 <= index < len(mem.shape):
                raise self.error(f"memref.dim of dimension {index} of {mem.type}")
            return [np.int64(mem.shape[int(index)])]
        if name == "memref.cast":
            shape = tuple(int(n) for n in args[0].array.shape)
            if any(d not in (DYNAMIC_INDEX, n) for d, n in zip(t.get_shape(), shape)):
                raise self.error(f"memref.cast of shape {shape} to {t}")
            return [_Mem(args[0].array, t, args[0].what, args[0].readonly)]
        if name == "memref.collapse_shape":
            return [self.collapse(op, args[0])]
        if name == "memref.get_global":
            return [self.shared_buffer(op)]
        if name == "gpu.barrier":
            self.barrier(frame)
            return []
        if name == "scf.if":
            return self.if_(op, frame, args[0])
        if name == "scf.for":
            return self.for_(op, frame, *args)
        raise self.error(f"the simulator does not handle op '{name}'")

    def collapse(self, op: Operation, mem: _Mem) -> _Mem:
        if isinstance(mem, _Shared):
            raise self.error("memref.collapse_shape of shared memory is not simulated")
        groups = [[a.value.data for a in g.data] for g in op.properties["reassociation"].data]
        shape = tuple(math.prod(mem.shape[d] for d in g) for g in groups)
        return _Mem(mem.array.reshape(shape), op.results[0].type, mem.what, mem.readonly)

    def shared_buffer(self, op: Operation) -> _Shared:
        """The launch's shared buffer of `memref.get_global` (memory space 3 only)."""
        t = op.results[0].type
        name = op.properties["name"].root_reference.data
        if t.memory_space != SHARED:
            raise self.error(f"memref.get_global of '{t}' (only shared memory, space 3, is simulated)")
        if name not in self.shared:
            self.shared[name] = _Shared(t, self.grid[0] * self.grid[1] * self.grid[2], name)
        return self.shared[name]

    def barrier(self, frame: _Frame) -> None:
        """gpu.barrier: every thread of a block reaching it together (no divergence)."""
        per_block = math.prod(self.block)
        counts = np.bincount(frame.threads // per_block)
        if np.any((counts != 0) & (counts != per_block)):
            block = int(np.flatnonzero((counts != 0) & (counts != per_block))[0])
            raise self.error(f"gpu.barrier reached by {counts[block]} of the {per_block} threads of block {block}")
        self.epoch += 1

    def shared_access(self, op: Operation, frame: _Frame, mem: _Shared, flat: Any, store: bool) -> None:
        """Record a shared access; raise for one that races with another thread's
        since the last barrier (a read of, or a store to, what another thread stored;
        a store to what another thread read)."""
        n = frame.threads.size
        flat, threads = np.broadcast_to(flat, (n,)), frame.threads
        other_wrote = (mem.written[flat] == self.epoch) & (mem.writer[flat] != threads)
        other_read = store & (mem.read[flat] == self.epoch) & (mem.reader[flat] != threads)
        if np.any(other_wrote | other_read):
            k = int(np.flatnonzero(other_wrote | other_read)[0])
            what, who = (("stored", mem.writer) if other_wrote[k] else ("read", mem.reader))
            raise self.error(
                f"missing barrier: thread {threads[k]} {'stores to' if store else 'reads'} element {flat[k]} of "
                f"{mem.what}, which thread {who[flat[k]]} {what} since the last barrier"
            )
        if store:
            mem.writer[flat], mem.written[flat] = threads, self.epoch
            return
        reader = np.where((mem.read[flat] != self.epoch) | (mem.reader[flat] == threads), threads, -2)
        order = np.argsort(flat, kind="stable")
        shared = (flat[order][1:] == flat[order][:-1]) & (threads[order][1:] != threads[order][:-1])
        reader[order[1:][shared]] = reader[order[:-1][shared]] = -2
        mem.reader[flat], mem.read[flat] = reader, self.epoch

    def special(self, op: Operation, threads: np.ndarray) -> Any:
        d = "xyz".index(op.properties["dimension"].data.value)
        if op.name == "gpu.block_dim":
            return np.int64(self.block[d])
        if op.name == "gpu.grid_dim":
            return np.int64(self.grid[d])
        per_block = math.prod(self.block)
        if op.name == "gpu.thread_id":
            ids, sizes = threads % per_block, self.block
        else:
            ids, sizes = threads // per_block, self.grid
        return ids // math.prod(sizes[:d]) % sizes[d]

    def integer(self, op: Operation, args: list[Any]) -> Any:
        fn, unsigned = _INT_BINARY[op.name]
        dtype = dtype_of(op.results[0].type)
        a, b = ((_as_unsigned if unsigned else _as_signed)(x) for x in args)
        if dtype == np.bool_ and not unsigned:
            a, b = a.astype(np.uint8), b.astype(np.uint8)
        if op.name in _DIVISIONS and np.any(b == 0):
            raise self.error(f"'{op.name}' divides by zero")
        r = fn(a, b)
        if r.dtype.kind == "u" and dtype.kind == "i":
            r = np.asarray(r).view(f"i{r.dtype.itemsize}")
        return _out(r, dtype)

    def cmpf(self, predicate: str, a: Any, b: Any) -> Any:
        ordered = ~(np.isnan(a) | np.isnan(b))
        if predicate in ("false", "true"):
            r = np.full(np.broadcast(a, b).shape, predicate == "true")
        elif predicate in ("ord", "uno"):
            r = ordered if predicate == "ord" else ~ordered
        else:
            holds = _CMP[predicate[1:]](a, b)
            r = holds & ordered if predicate[0] == "o" else holds | ~ordered
        return _out(r, np.dtype(np.bool_))

    def cast(self, op: Operation, x: np.ndarray, dtype: np.dtype) -> Any:
        if x.dtype.kind == "f" and dtype.kind != "f":
            if not np.all(np.isfinite(x)):
                raise self.error(f"'{op.name}' of a non-finite value")
            x = np.trunc(x)
        if dtype.kind == "i" and x.dtype.kind == "u" and x.dtype.itemsize >= dtype.itemsize:
            x = x.view(f"i{x.dtype.itemsize}")
        return _out(x, dtype)

    def flat(self, op: Operation, frame: _Frame, mem: _Mem, indices: Sequence[Any]) -> Any:
        """The row-major element offsets of `indices` in `mem`, checked against its dimensions."""
        if len(indices) != len(mem.shape):
            raise self.error(f"'{op.name}' with {len(indices)} indices into {mem.type}")
        flat: Any = np.int64(0)
        for axis, (i, n) in enumerate(zip(indices, mem.shape)):
            bad = (i < 0) | (i >= n)
            if np.any(bad):
                j = int(np.flatnonzero(bad)[0]) if isinstance(bad, np.ndarray) else 0
                thread = int(frame.threads[j])
                index = int(i[j]) if isinstance(i, np.ndarray) else int(i)
                per_block = math.prod(self.block)
                raise self.error(
                    f"'{op.name}' out of bounds: index {index} in dimension {axis} of {mem.what}, "
                    f"of size {n} (thread {thread % per_block} of block {thread // per_block})"
                )
            flat = flat * n + i
        if isinstance(mem, _Shared):
            flat = flat + frame.threads // math.prod(self.block) * mem.size
        return flat

    def unguarded(self, op: Operation, frame: _Frame, args: list[Any]) -> list[Any]:
        """memref.load, store or atomic_rmw."""
        if op.name == "memref.load":
            mem, *indices = args
            flat = self.flat(op, frame, mem, indices)
            if isinstance(mem, _Shared):
                self.shared_access(op, frame, mem, flat, store=False)
            return [mem.flat[flat]]
        if op.name == "memref.store":
            self.store(op, frame, args)
            return []
        return [self.atomic(op, frame, args)]

    def guarded(self, op: Operation, frame: _Frame, args: list[Any]) -> list[Any]:
        """A marked access (`check_bounds`): threads whose indices leave the buffer
        skip it (a load yields 0) and are counted in the module's failure global."""
        first = 0 if op.name == "memref.load" else 1
        mem, indices = args[first], args[first + 1 :]
        n = frame.threads.size
        ok = np.ones(n, np.bool_)
        for i, size in zip(indices, mem.shape):
            ok &= np.broadcast_to((np.asarray(i) >= 0) & (np.asarray(i) < size), (n,))
        if ok.all():  # the plain access, keeping uniform values uniform
            return self.unguarded(op, frame, args)
        if op not in self.driver.sites():
            raise self.error(f"'{op.name}' is marked check_bounds but is not in the module's bounds sites")
        self.driver.bounds_failure(self.handle, self.driver.sites()[op], int(n - ok.sum()))
        if not any(isinstance(i, np.ndarray) for i in indices):  # uniform indices: every thread fails alike
            return [] if op.name == "memref.store" else [dtype_of(op.results[0].type).type(0)]
        sel = np.flatnonzero(ok)
        inner = _Frame(frame, sel)
        picked = [a[sel] if isinstance(a, np.ndarray) and a.shape == (n,) else a for a in args]
        if op.name == "memref.store":
            if sel.size:
                self.store(op, inner, picked)
            return []
        if op.name == "memref.atomic_rmw" and not op.results[0].uses:
            if sel.size:
                self.atomic(op, inner, picked)
            return [None]
        result = np.zeros(n, dtype_of(op.results[0].type))
        if sel.size:
            result[sel] = (mem.flat[self.flat(op, inner, mem, picked[1:])] if op.name == "memref.load"
                           else self.atomic(op, inner, picked))  # fmt: skip
        return [result]

    def writable(self, op: Operation, mem: _Mem) -> None:
        if mem.readonly:
            raise self.error(f"'{op.name}' writes {mem.what}, which is llvm.readonly")

    def store(self, op: Operation, frame: _Frame, args: list[Any]) -> None:
        value, mem, *indices = args
        self.writable(op, mem)
        flat = self.flat(op, frame, mem, indices)
        if isinstance(mem, _Shared):
            self.shared_access(op, frame, mem, flat, store=True)
        n = frame.threads.size
        if isinstance(flat, np.ndarray) or isinstance(value, np.ndarray):
            flat, value = np.broadcast_to(flat, (n,)), np.broadcast_to(value, (n,))
            order = np.argsort(flat, kind="stable")
            f, v = flat[order], value[order]
            same = f[1:] == f[:-1]
            differ = v[1:] != v[:-1]
            if v.dtype.kind == "f":
                differ &= ~(np.isnan(v[1:]) & np.isnan(v[:-1]))
            if np.any(same & differ):
                k = int(np.flatnonzero(same & differ)[0])
                raise self.error(
                    f"data race: threads {frame.threads[order[k]]} and {frame.threads[order[k + 1]]} store "
                    f"{v[k]} and {v[k + 1]} to element {f[k]} of {mem.what}"
                )
        mem.flat[flat] = value

    def atomic(self, op: Operation, frame: _Frame, args: list[Any]) -> Any:
        value, mem, *indices = args
        self.writable(op, mem)
        kind = op.properties["kind"].value.data
        if kind not in _ATOMIC:
            raise self.error(f"memref.atomic_rmw kind {kind} is not simulated")
        fn, unsigned = _ATOMIC[kind]
        n = frame.threads.size
        flat = np.broadcast_to(self.flat(op, frame, mem, indices), (n,))
        value = np.broadcast_to(np.asarray(value, mem.flat.dtype), (n,))
        target = mem.flat
        if unsigned:
            target, value = _as_unsigned(target), _as_unsigned(value)
        if not op.results[0].uses:  # the old values are not needed: in one go
            if fn is None:
                target[flat] = value
            else:
                fn.at(target, flat, value)
            return None
        old = np.empty(n, target.dtype)  # each thread's old value, in thread order
        for k in range(n):
            old[k] = target[flat[k]]
            target[flat[k]] = value[k] if fn is None else fn(old[k], value[k])
        return _out(old.view(mem.flat.dtype), mem.flat.dtype)

    def if_(self, op: Operation, frame: _Frame, cond: Any) -> list[Any]:
        then, other = op.regions
        if not isinstance(cond, np.ndarray):
            region = then if cond else other
            return self.region(region.block, _Frame(frame, None)) if region.blocks else []
        taken = np.flatnonzero(cond)
        if taken.size == cond.size or (taken.size == 0 and not other.blocks):
            return self.region(then.block, _Frame(frame, None)) if taken.size else []
        if taken.size == 0:
            return self.region(other.block, _Frame(frame, None))
        results = self.region(then.block, _Frame(frame, taken))
        if not other.blocks:
            return []
        rest = np.flatnonzero(~cond)
        merged = []
        for r, a, b in zip(op.results, results, self.region(other.block, _Frame(frame, rest))):
            if isinstance(r.type, MemRefType):
                raise self.error("scf.if yielding a memref on a per-thread condition is not simulated")
            out = np.empty(cond.size, dtype_of(r.type))
            out[taken], out[rest] = a, b
            merged.append(out)
        return merged

    def for_(self, op: Operation, frame: _Frame, lb: Any, ub: Any, step: Any, *init: Any) -> list[Any]:
        body = op.regions[0].block
        iv_dtype = dtype_of(body.args[0].type)
        carried = list(init)
        if not any(isinstance(x, np.ndarray) for x in (lb, ub, step)):
            if step <= 0:
                raise self.error(f"scf.for with step {step}")
            for iv in range(int(lb), int(ub), int(step)):
                inner = _Frame(frame, None)
                inner.env.update(zip(body.args, [iv_dtype.type(iv), *carried]))
                carried = self.region(body, inner)
            return carried
        n = frame.threads.size  # bounds differing between threads: each iteration on the threads still looping
        lb, ub, step = (np.broadcast_to(np.asarray(x, np.int64), (n,)) for x in (lb, ub, step))
        if np.any(step <= 0):
            raise self.error("scf.for with a non-positive step")
        trips = np.maximum(0, -(-(ub - lb) // step))
        carried = [np.array(np.broadcast_to(c, (n,))) for c in carried]
        for k in range(int(trips.max(initial=0))):
            active = np.flatnonzero(trips > k)
            inner = _Frame(frame, active)
            inner.env[body.args[0]] = (lb[active] + k * step[active]).astype(iv_dtype)
            inner.env.update(zip(body.args[1:], [c[active] for c in carried]))
            for c, r in zip(carried, self.region(body, inner)):
                c[active] = r
        return carried
