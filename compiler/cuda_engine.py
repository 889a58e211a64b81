"""`ExecutionEngine(module, target="gpu")`: GPU-lowered programs on an NVIDIA GPU.

The module is lowered with `GPU_PIPELINE` and its kernels compiled to PTX for
the device's architecture (`compiler.codegen.nvptx`), then loaded with the
CUDA driver API (ctypes on libcuda; the driver JIT-compiles the PTX). The
host functions, which hold launches, device allocations and copies (see
`passes.gpu_lowering`), are interpreted here; their scalar arith/math follows
the reference interpreter (`compiler.interpreter`).

`invoke(name, *args)` keeps the CPU engine's contract: numpy arrays and
scalars in, checked against the signature (the CPU engine's checks), copied
into device buffers; results copied back as numpy arrays/scalars; every
buffer freed. `run(name, *args)` is the device-resident variant (for
benchmarks): `DeviceArray` or numpy arguments, `DeviceArray` results the
caller frees with `free`; it does not wait for the GPU, unless a kernel
checks bounds.

Bounds checks: a kernel access that `check-bounds` marked (an index read
from data) is guarded by the NVPTX emitter; a failing one is skipped and
counted in the PTX module's global `__dfc_bounds_failures`, with the access's
number (`nvptx.bounds_sites`) in `__dfc_bounds_site`. The engine zeroes the
counter before a call and reads both after it (`cuModuleGetGlobal`), and
raises `IndexError` with the access's source location, as the CPU engine does.

Device memory comes from a process-wide caching pool: a freed buffer is kept
for the next allocation of its (rounded) size. All work runs on the legacy
default stream, so a reused buffer is only touched after the kernels that
used it before; `Driver.trim()` synchronises and returns the pool to CUDA.

Without libcuda or a usable device, creating the engine raises RuntimeError.
A failing driver call raises `CudaError` (a RuntimeError) with the driver's
error name, e.g. `cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE`.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable, Sequence
from ctypes import POINTER, byref, c_char_p, c_float, c_int, c_size_t, c_uint, c_uint64, c_void_p
from dataclasses import dataclass
from typing import Any

import llvmlite.ir as ir
import numpy as np
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseIntOrFPElementsAttr, MemRefType, ModuleOp, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue

from dfc.compiler import interpreter
from dfc.compiler.codegen.llvm.emitter import BOUNDS_FAILURES, BOUNDS_SITE, bounds_message
from dfc.compiler.codegen.nvptx import DEFAULT_ARCH, bounds_sites, compile_ptx, emit_llvm, kernel_params, lower_for_gpu
from dfc.compiler.engine import ExecutionEngine

__all__ = ["CudaEngine", "CudaError", "DeviceArray", "Driver", "cuda_driver"]

_CU = {  # argument types of the driver calls used (all return CUresult)
    "cuInit": [c_uint],
    "cuDeviceGet": [POINTER(c_int), c_int],
    "cuDeviceGetAttribute": [POINTER(c_int), c_int, c_int],
    "cuDevicePrimaryCtxRetain": [POINTER(c_void_p), c_int],
    "cuCtxSetCurrent": [c_void_p],
    "cuCtxSynchronize": [],
    "cuModuleLoadDataEx": [POINTER(c_void_p), c_char_p, c_uint, POINTER(c_int), POINTER(c_void_p)],
    "cuModuleUnload": [c_void_p],
    "cuModuleGetFunction": [POINTER(c_void_p), c_void_p, c_char_p],
    "cuModuleGetGlobal_v2": [POINTER(c_uint64), POINTER(c_size_t), c_void_p, c_char_p],
    "cuMemAlloc_v2": [POINTER(c_uint64), c_size_t],
    "cuMemFree_v2": [c_uint64],
    "cuMemcpyHtoD_v2": [c_uint64, c_void_p, c_size_t],
    "cuMemcpyDtoH_v2": [c_void_p, c_uint64, c_size_t],
    "cuMemcpyDtoD_v2": [c_uint64, c_uint64, c_size_t],
    "cuLaunchKernel": [c_void_p, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_void_p,
                       POINTER(c_void_p), POINTER(c_void_p)],
    "cuGetErrorName": [c_int, POINTER(c_char_p)],
    "cuEventCreate": [POINTER(c_void_p), c_uint],
    "cuEventRecord": [c_void_p, c_void_p],
    "cuEventSynchronize": [c_void_p],
    "cuEventElapsedTime": [POINTER(c_float), c_void_p, c_void_p],
    "cuEventDestroy_v2": [c_void_p],
}  # fmt: skip
_CC_MAJOR, _CC_MINOR = 75, 76  # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_*
_JIT_ERROR_LOG, _JIT_ERROR_LOG_SIZE = 5, 6  # CU_JIT_ERROR_LOG_BUFFER(_SIZE_BYTES)
_GRANULE = 256


class CudaError(RuntimeError):
    """A CUDA driver call failed; `name` is the driver's error name."""

    def __init__(self, call: str, code: int, name: str, detail: str = ""):
        super().__init__(f"{call} failed: {name}" + (f"\n{detail}" if detail else ""))
        self.code = code
        self.name = name


class Driver:
    """The CUDA driver calls the engine needs, on device `ordinal`'s primary context."""

    def __init__(self, ordinal: int = 0):
        try:
            self.lib = ctypes.CDLL("libcuda.so.1")
        except OSError as err:
            raise RuntimeError(f"CUDA is not available: cannot load libcuda ({err})") from None
        for name, argtypes in _CU.items():
            fn = getattr(self.lib, name)
            fn.argtypes, fn.restype = argtypes, c_int
        try:
            self.call("cuInit", 0)
            device = c_int()
            self.call("cuDeviceGet", byref(device), ordinal)
        except CudaError as err:
            raise RuntimeError(f"CUDA is not available: {err}") from None
        self.device = device.value
        self.context = c_void_p()
        self.call("cuDevicePrimaryCtxRetain", byref(self.context), self.device)
        self.activate()
        self._pool: dict[int, list[int]] = {}
        self._sizes: dict[int, int] = {}

    def call(self, name: str, *args: Any) -> None:
        code = getattr(self.lib, name)(*args)
        if code != 0:
            raise CudaError(name, code, self.error_name(code))

    def error_name(self, code: int) -> str:
        text = c_char_p()
        if self.lib.cuGetErrorName(code, byref(text)) != 0 or not text.value:
            return f"CUDA error {code}"
        return text.value.decode()

    def activate(self) -> None:
        """Make the context current on the calling thread."""
        self.call("cuCtxSetCurrent", self.context)

    def arch(self) -> str:
        """`sm_XY` of the device."""
        major, minor = c_int(), c_int()
        self.call("cuDeviceGetAttribute", byref(major), _CC_MAJOR, self.device)
        self.call("cuDeviceGetAttribute", byref(minor), _CC_MINOR, self.device)
        return f"sm_{major.value}{minor.value}"

    def synchronize(self) -> None:
        self.call("cuCtxSynchronize")

    # -- modules and launches

    def load_module(self, ptx: str) -> c_void_p:
        module = c_void_p()
        log = ctypes.create_string_buffer(1 << 14)
        options = (c_int * 2)(_JIT_ERROR_LOG, _JIT_ERROR_LOG_SIZE)
        values = (c_void_p * 2)(ctypes.cast(log, c_void_p), c_void_p(len(log)))
        try:
            self.call("cuModuleLoadDataEx", byref(module), ptx.encode(), 2, options, values)
        except CudaError as err:
            raise CudaError("cuModuleLoadDataEx", err.code, err.name, log.value.decode(errors="replace")) from None
        return module

    def unload_module(self, module: c_void_p) -> None:
        self.call("cuModuleUnload", module)

    def function(self, module: c_void_p, name: str) -> c_void_p:
        fn = c_void_p()
        self.call("cuModuleGetFunction", byref(fn), module, name.encode())
        return fn

    def global_address(self, module: c_void_p, name: str) -> int:
        """The device address of the module's global variable `name`."""
        ptr, size = c_uint64(), c_size_t()
        self.call("cuModuleGetGlobal_v2", byref(ptr), byref(size), module, name.encode())
        return ptr.value

    def launch(self, fn: Any, grid: Sequence[int], block: Sequence[int], params: Sequence[ctypes._SimpleCData]) -> None:
        """Launch `fn` on the default stream; `params` are the kernel's parameter values."""
        pointers = (c_void_p * max(1, len(params)))(*[ctypes.addressof(p) for p in params])
        self.call("cuLaunchKernel", fn, *grid, *block, 0, None, pointers, None)

    # -- memory

    def alloc(self, nbytes: int) -> int:
        """A device buffer of at least `nbytes` (256-byte aligned), from the pool if it can."""
        size = max(_GRANULE, -(-nbytes // _GRANULE) * _GRANULE)
        if self._pool.get(size):
            return self._pool[size].pop()
        ptr = c_uint64()
        try:
            self.call("cuMemAlloc_v2", byref(ptr), size)
        except CudaError as err:
            if err.name != "CUDA_ERROR_OUT_OF_MEMORY":
                raise
            self.trim()
            self.call("cuMemAlloc_v2", byref(ptr), size)
        self._sizes[ptr.value] = size
        return ptr.value

    def free(self, ptr: int) -> None:
        """Return a buffer from `alloc` to the pool."""
        self._pool.setdefault(self._sizes[ptr], []).append(ptr)

    def trim(self) -> None:
        """Wait for the GPU and give every pooled buffer back to CUDA."""
        self.synchronize()
        for buffers in self._pool.values():
            for ptr in buffers:
                self.call("cuMemFree_v2", ptr)
                del self._sizes[ptr]
        self._pool.clear()

    def htod(self, dst: int, src: int, nbytes: int) -> None:
        if nbytes:
            self.call("cuMemcpyHtoD_v2", dst, src, nbytes)

    def dtoh(self, dst: int, src: int, nbytes: int) -> None:
        if nbytes:
            self.call("cuMemcpyDtoH_v2", dst, src, nbytes)

    def dtod(self, dst: int, src: int, nbytes: int) -> None:
        if nbytes:
            self.call("cuMemcpyDtoD_v2", dst, src, nbytes)

    def elapsed_ms(self, work: Callable[[], None], repeat: int = 1) -> float:
        """GPU time of `work()` (issued `repeat` times) per repetition, in ms, by events."""
        start, stop = c_void_p(), c_void_p()
        self.call("cuEventCreate", byref(start), 0)
        self.call("cuEventCreate", byref(stop), 0)
        try:
            self.call("cuEventRecord", start, None)
            for _ in range(repeat):
                work()
            self.call("cuEventRecord", stop, None)
            self.call("cuEventSynchronize", stop)
            ms = c_float()
            self.call("cuEventElapsedTime", byref(ms), start, stop)
            return ms.value / repeat
        finally:
            self.call("cuEventDestroy_v2", start)
            self.call("cuEventDestroy_v2", stop)


@functools.cache
def cuda_driver() -> Driver:
    """The process's driver on device 0 (RuntimeError when CUDA is unavailable)."""
    return Driver()


@dataclass(frozen=True)
class DeviceArray:
    """A row-major array in device memory."""

    ptr: int
    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize


def _param(t: ir.Type, value: Any) -> ctypes._SimpleCData:
    """A scalar kernel parameter of LLVM type `t`."""
    if isinstance(t, ir.IntType):
        ctype = {1: ctypes.c_uint8, 8: ctypes.c_int8, 16: ctypes.c_int16, 32: ctypes.c_int32, 64: ctypes.c_int64}
        return ctype[t.width](int(value))
    if isinstance(t, ir.HalfType):
        return ctypes.c_uint16(int(np.float16(value).view(np.uint16)))
    return (c_float if isinstance(t, ir.FloatType) else ctypes.c_double)(float(value))


_CACHE: dict[tuple[str, str, bool, int], tuple[ModuleOp, str]] = {}


class CudaEngine(ExecutionEngine):
    """The functions of one module, run on the GPU (see the module docstring)."""

    def __init__(
        self,
        module: ModuleOp,
        target: str = "gpu",
        opt_level: int = 3,
        fast_math: bool = True,
        threads: int | None = None,
        arch: str | None = None,
        driver: Driver | None = None,
    ):
        """`threads` is accepted for the CPU engine's signature and ignored; `arch`
        defaults to the device's (`sm_XY`)."""
        self.driver = driver or cuda_driver()
        self.driver.activate()
        self.signatures = {op.sym_name.data: op.function_type for op in module.ops if isinstance(op, func.FuncOp)}
        self.arch = arch or self.driver.arch()
        key = (str(module), self.arch, fast_math, opt_level)
        if key not in _CACHE:
            lowered = lower_for_gpu(module)
            _CACHE[key] = lowered, compile_ptx(emit_llvm(lowered, self.arch, fast_math=fast_math), self.arch, opt_level)
        self.module, self.ptx = _CACHE[key]
        self.functions = {op.sym_name.data: op for op in self.module.ops if isinstance(op, func.FuncOp)}
        self.kernels = self._load_kernels()
        self._sites = [bounds_message(op) for op in bounds_sites(self.module)]
        self._bounds = None  # the device addresses of the failure counter and site, where kernels check
        if self._sites:
            self._bounds = tuple(self.driver.global_address(self._cu_module, n) for n in (BOUNDS_FAILURES, BOUNDS_SITE))
        self._globals: dict[str, DeviceArray] = {}
        self._evaluators: dict[Operation, Callable[..., Sequence[Any]]] = {}
        self._live: set[int] = set()

    def _load_kernels(self) -> dict[str, Any]:
        """Load the PTX; kernel name -> what `Driver.launch` takes."""
        handle = self.driver.load_module(self.ptx)
        self._cu_module = handle
        names = [op.sym_name.data for op in self.module.walk() if op.name == "gpu.func"]
        return {name: self.driver.function(handle, name) for name in names}

    def close(self) -> None:
        """Unload the kernels and free the engine's copies of globals."""
        for array in self._globals.values():
            self.driver.free(array.ptr)
        self._globals.clear()
        if getattr(self, "_cu_module", None) is not None:
            self.driver.synchronize()
            self.driver.unload_module(self._cu_module)
            self._cu_module = None

    # -- arrays

    def to_device(self, array: np.ndarray) -> DeviceArray:
        array = np.ascontiguousarray(array)
        d = DeviceArray(self.driver.alloc(array.nbytes), array.shape, array.dtype)
        self.driver.htod(d.ptr, array.ctypes.data, array.nbytes)
        return d

    def to_host(self, d: DeviceArray) -> np.ndarray:
        array = np.empty(d.shape, d.dtype)
        self.driver.dtoh(array.ctypes.data, d.ptr, d.nbytes)
        return array

    def free(self, d: DeviceArray) -> None:
        self.driver.free(d.ptr)

    # -- calls

    def invoke(self, name: str, *args: Any) -> Any:
        """Call `@name` on numpy arguments; returns numpy results, as the CPU engine does."""
        uploaded: list[DeviceArray] = []
        self._live.clear()
        try:
            self._reset_bounds()
            results = self._run(name, args, uploaded)
            self.driver.synchronize()
            out = [self.to_host(r) if isinstance(r, DeviceArray) else r for r in results]
            self._check_bounds(name)
        finally:  # arguments, results, and whatever an error left allocated
            for ptr in self._live | {d.ptr for d in uploaded}:
                self.driver.free(ptr)
            self._live.clear()
        return out[0] if len(out) == 1 else tuple(out)

    def run(self, name: str, *args: Any) -> Any:
        """Call `@name` on DeviceArray (or numpy) arguments without waiting for the
        GPU; returns DeviceArray results, which the caller frees."""
        uploaded: list[DeviceArray] = []
        self._live.clear()
        try:
            self._reset_bounds()
            results = self._run(name, args, uploaded)
            self._check_bounds(name)
        except BaseException:  # as invoke: nothing stays allocated on an error
            for ptr in self._live | {d.ptr for d in uploaded}:
                self.driver.free(ptr)
            raise
        finally:
            self._live.clear()
        kept = {r.ptr for r in results if isinstance(r, DeviceArray)}
        for d in uploaded:
            if d.ptr not in kept:
                self.driver.free(d.ptr)
        return results[0] if len(results) == 1 else tuple(results)

    def _run(self, name: str, args: Sequence[Any], uploaded: list[DeviceArray]) -> list[Any]:
        if name not in self.signatures:
            raise ValueError(f"no function @{name} in the module")
        inputs = self.signatures[name].inputs.data
        if len(args) != len(inputs):
            raise TypeError(f"@{name} takes {len(inputs)} arguments, got {len(args)}")
        values = []
        for k, (value, t) in enumerate(zip(args, inputs)):
            if isinstance(value, DeviceArray):
                self._check_device(name, k, value, t)
                values.append(value)
                continue
            keep: list[np.ndarray] = []
            self._argument(name, k, value, t, keep)
            if isinstance(t, MemRefType | TensorType):
                uploaded.append(self.to_device(keep[-1]))
                values.append(uploaded[-1])
            else:
                values.append(interpreter._converter(t)(value))
        self.driver.activate()
        return self._call(self.functions[name], values)

    def _reset_bounds(self) -> None:
        if self._bounds is not None:
            zero = np.zeros(1, np.int64)
            self.driver.htod(self._bounds[0], zero.ctypes.data, 8)

    def _check_bounds(self, name: str) -> None:
        """IndexError naming a failed check's access if a kernel counted one (waits for the GPU)."""
        if self._bounds is None:
            return
        counts = np.zeros(2, np.int64)
        for k, address in enumerate(self._bounds):
            self.driver.dtoh(counts[k:].ctypes.data, address, 8)
        if counts[0]:
            raise IndexError(f"@{name}: {self._sites[int(counts[1])]}")

    def _check_device(self, name: str, k: int, d: DeviceArray, t: Attribute) -> None:
        what = f"@{name} argument #{k}"
        if not isinstance(t, MemRefType | TensorType):
            raise TypeError(f"{what} must be a scalar of type {t}, got a device array")
        dtype = interpreter.dtype_of(t.element_type)
        shape = t.get_shape()
        if d.dtype != dtype:
            raise TypeError(f"{what} must have dtype {dtype}, got {d.dtype}")
        if len(d.shape) != len(shape) or any(w >= 0 and w != g for w, g in zip(shape, d.shape)):
            raise ValueError(f"{what} must have shape {t}, got {d.shape}")

    # -- the host interpreter

    def _call(self, f: func.FuncOp, args: Sequence[Any]) -> list[Any]:
        return self._block(f.body.block, dict(zip(f.body.block.args, args)))

    def _block(self, block: Block, env: dict[SSAValue, Any]) -> list[Any]:
        for op in block.ops:
            if op.name in ("func.return", "scf.yield"):
                return [env[v] for v in op.operands]
            results = self._op(op, [env[v] for v in op.operands], env)
            env.update(zip(op.results, results))
        return []

    def _op(self, op: Operation, args: list[Any], env: dict[SSAValue, Any]) -> Sequence[Any]:
        name = op.name
        if name == "gpu.launch_func":
            self._launch(op, env)
        elif name == "gpu.alloc":
            t = op.results[0].type
            dynamic = iter(args)
            shape = tuple(int(next(dynamic)) if d == DYNAMIC_INDEX else d for d in t.get_shape())
            dtype = interpreter.dtype_of(t.element_type)
            ptr = self.driver.alloc(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize)
            self._live.add(ptr)
            return [DeviceArray(ptr, shape, dtype)]
        elif name == "gpu.dealloc":
            self._live.discard(args[0].ptr)
            self.driver.free(args[0].ptr)
        elif name == "gpu.memcpy":
            dst, src = args
            self.driver.dtod(dst.ptr, src.ptr, src.nbytes)
        elif name == "memref.dim":
            return [np.int64(args[0].shape[int(args[1])])]
        elif name == "memref.cast":
            return [DeviceArray(args[0].ptr, args[0].shape, args[0].dtype)]
        elif name == "memref.get_global":
            return [self._global(op.name_.root_reference.data)]
        elif name in ("memref.load", "memref.store"):
            return self._element(op, args)
        elif name == "scf.for":
            lb, ub, step, *carried = args
            body = op.regions[0].block
            for iv in range(int(lb), int(ub), int(step)):
                carried = self._block(body, {**env, **dict(zip(body.args, [np.int64(iv), *carried]))})
            return carried
        elif name == "scf.if":
            region = op.regions[0] if args[0] else op.regions[1]
            return self._block(region.block, env) if region.blocks else []
        elif name == "func.call":
            return self._call(self.functions[op.callee.root_reference.data], args)
        elif op.dialect_name() in ("arith", "math") and type(op) in interpreter._BUILDERS:
            if op not in self._evaluators:
                self._evaluators[op] = interpreter._BUILDERS[type(op)](op)
            return self._evaluators[op](None, *args)
        else:
            raise NotImplementedError(f"CUDA engine: host op '{name}' is not supported")
        return []

    def _launch(self, op: Operation, env: dict[SSAValue, Any]) -> None:
        grid = [int(env[v]) for v in (op.gridSizeX, op.gridSizeY, op.gridSizeZ)]
        block = [int(env[v]) for v in (op.blockSizeX, op.blockSizeY, op.blockSizeZ)]
        if 0 in grid:
            return
        if grid[0] >= 1 << 31 or max(grid[1:]) > 65535:
            raise ValueError(f"grid {grid} exceeds the CUDA limits")
        params: list[ctypes._SimpleCData] = []
        for v in op.kernelOperands:
            value, types = env[v], kernel_params(v.type)
            if isinstance(v.type, MemRefType):
                params.append(c_uint64(value.ptr))
                params += [ctypes.c_int64(s) for s, d in zip(value.shape, v.type.get_shape()) if d == DYNAMIC_INDEX]
            else:
                params.append(_param(types[0], value))
        self.driver.launch(self.kernels[op.kernel.nested_references.data[-1].data], grid, block, params)

    def _element(self, op: Operation, args: list[Any]) -> list[Any]:
        """A host memref.load/store: one element copied from/to the device."""
        store = op.name == "memref.store"
        value, array, *indices = args if store else [None, *args]
        if any(not 0 <= int(i) < n for i, n in zip(indices, array.shape)):
            where = bounds_message(op) if "check_bounds" in op.attributes else f"'{op.name}' index out of bounds"
            raise IndexError(f"{where}: {[int(i) for i in indices]} in shape {array.shape}")
        offset = int(np.ravel_multi_index([int(i) for i in indices], array.shape)) if indices else 0
        address = array.ptr + offset * array.dtype.itemsize
        host = np.array([value if store else 0], array.dtype)
        if store:
            self.driver.htod(address, host.ctypes.data, host.nbytes)
            return []
        self.driver.dtoh(host.ctypes.data, address, host.nbytes)
        return [host[0]]

    def _global(self, name: str) -> DeviceArray:
        """The device copy of `memref.global @name` (uploaded once per engine)."""
        if name not in self._globals:
            op = next(o for o in self.module.ops if isinstance(o, memref.GlobalOp) and o.sym_name.data == name)
            shape, dtype = tuple(op.type.get_shape()), interpreter.dtype_of(op.type.element_type)
            init = op.initial_value
            values = np.array(init.get_values() if isinstance(init, DenseIntOrFPElementsAttr) else [0], dtype)
            self._globals[name] = self.to_device(np.full(shape, values[0]) if values.size == 1 else values.reshape(shape))
        return self._globals[name]
