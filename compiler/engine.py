"""`ExecutionEngine`: compile a module once, call its functions on numpy arrays.

In the style of MLIR's ExecutionEngine: a module still at df/nn level is
lowered with the `default` pipeline first; the result is JIT-compiled through
llvmlite (see `compiler.codegen`). `invoke` checks every argument against the
function's signature (dtype, rank, static sizes; arrays are made C-contiguous)
and raises `TypeError`/`ValueError` naming the argument on a mismatch; for
dynamic dimensions, the sizes the program's maps rely on are checked too
(`compiler.shape_checks`), so no call indexes outside an argument. An
access the compiler cannot prove in bounds is checked where it runs
(`check-bounds`); if one fails, the call raises `IndexError` with its source
location; an integer division by zero raises `ZeroDivisionError` the same way,
as the interpreter does, and `MIN / -1` wraps (a concurrent call into the same
module that fails can make another call raise too: the failure counter is per
module). A call during which an op's `df.WARN_IF` result was true issues one
`RuntimeWarning` per message (the same caveat for concurrent calls).
Each function's calling plan (parameter dtypes and shapes, result layout,
the ctypes entry) is prepared on its first call; after that an argument of
exactly the declared dtype and static shape, C-contiguous and writeable, is
passed by address, and everything else takes the checked, converting path.
The argument slots are packed into the entry's i64 array in one `struct` call,
and a result array frees its buffer through a `__del__` on the buffer (not a
`weakref.finalize`; benchmarks/call_overhead.py measures it).
Compiled code is cached by module text and options in a bounded LRU cache
(`DFC_JIT_CACHE_SIZE` modules, default 16; `set_jit_cache_size`,
`clear_jit_cache`); `ExecutionEngine.close()`, or leaving the engine's
`with` block, releases the machine code once no other open engine shares it.
`vector_math` (default
on) uses the backend's vectorisable exp/tanh polynomials (within ~2 ulp of
libm) instead of scalar libm calls; `fast_math=False` keeps LLVM from
reassociating or contracting float arithmetic (float sums give the same bits
for any thread count either way: docs/architecture.md, "Reproducible sums");
`pipeline` replaces the lowering pipeline;
`parallel_min_work` is the estimated work per thread below which a parallel
loop runs on one thread (0: every parallel loop is split, as tests want).
`invoke(name, *args, out=arrays)` writes the function's array results into
caller-provided arrays (exact dtype and shape, C-contiguous, writeable, not
overlapping an argument or each other) and returns them: the module is
compiled once more with `buffer-results-to-out-params`, so a result computed
into a fresh buffer is computed straight into the caller's array, with no
allocation and no copy.
`ExecutionEngine(module, target="gpu")` runs the module on an NVIDIA GPU
instead (`compiler.cuda_engine`, the same contract).
Functions planned by `mem-plan` share a per-function arena owned by the
compiled module (engines built from the same module and options share it);
`invoke` therefore serialises calls into such a module across threads.
"""

from __future__ import annotations

import ctypes
import functools
import importlib
import math
import struct
import sys
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, MemRefType, ModuleOp, TensorType
from xdsl.ir import Attribute

from dfc import config
from dfc.compiler import progress
from dfc.compiler.codegen import blas_runtime, gemm_kernel, object_cache
from dfc.compiler.codegen.llvm.emitter import DEFAULT_PARALLEL_MIN_WORK, run_time_error
from dfc.compiler.codegen.llvm.jit import JitModule
from dfc.compiler.codegen.runtime import free_function
from dfc.compiler.codegen.target import host_target_machine
from dfc.compiler.gc_pause import paused_gc
from dfc.compiler.interpreter import dtype_of, is_float_dtype
from dfc.compiler.pass_manager import PassManager
from dfc.compiler.shape_checks import AccessBound, access_bounds, check_access, has_dynamic_arguments
from dfc.config import default_threads
from dfc.dialects.diagnostics import verify_located
from dfc.dialects.xdsl_fixes import module_text
from dfc.passes import default_pipeline
from dfc.passes.buffer_results_to_out_params import called_functions

ACCESS_BOUNDS_KEPT = 16
"""Modules whose access bounds are kept for the argument checks of later engines."""
ENGINES: dict[str, str] = {"gpu": "dfc.compiler.cuda_engine:CudaEngine", "cuda": "dfc.compiler.cuda_engine:CudaEngine"}
"""The engines of targets other than `cpu` (subclasses with the same contract),
as `module:Class`, loaded when first used, as passes are (`cuda` is the
deprecated spelling of `gpu`)."""


class JitCache:
    """Compiled modules by (module text, options), the least recently used
    evicted beyond `size`. An evicted module stays alive while an engine holds it."""

    def __init__(self, size: int):
        self.size = size
        self._entries: OrderedDict[tuple, JitModule] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: tuple) -> JitModule | None:
        jit = self._entries.get(key)
        if jit is not None:
            self._entries.move_to_end(key)
        return jit

    def put(self, key: tuple, jit: JitModule) -> None:
        self._entries[key] = jit
        self._entries.move_to_end(key)
        self._evict()

    def discard(self, key: tuple, jit: JitModule) -> None:
        """Forget `key` if it still maps to `jit`."""
        if self._entries.get(key) is jit:
            del self._entries[key]

    def resize(self, size: int) -> None:
        if size < 0:
            raise ValueError(f"JIT cache size must be at least 0, got {size}")
        self.size = size
        self._evict()

    def clear(self) -> None:
        self._entries.clear()

    def _evict(self) -> None:
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)


_CACHE = JitCache(max(0, config.JIT_CACHE_SIZE.value()))


def set_jit_cache_size(size: int) -> None:
    """Keep at most `size` compiled modules for reuse (0: none), evicting now."""
    _CACHE.resize(size)


def clear_jit_cache() -> None:
    """Forget every cached compiled module (engines keep the ones they use)."""
    _CACHE.clear()

_ENTRY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_UPSTREAM = ("builtin", "func", "scf", "memref", "arith", "math", "llvm", "vector")


def lower(module: ModuleOp, threads: int, pipeline: str | None = None, out_params: bool = False,
          fast_math: bool = True, text: str | None = None, keep: bool = False) -> ModuleOp:
    """A copy of `module` lowered to upstream dialects (unchanged if it already is),
    by `pipeline` (default: the `default` pipeline with `threads` threads, for
    code compiled with or without `fast_math`), then, with `out_params`, by
    `buffer-results-to-out-params`.

    Given `text` (`module_text(module)`), a lowering of the same text by the
    same pipeline kept by an earlier call is taken (and no longer kept)
    instead; with `keep`, a copy of this one is kept (the last `LOWERED_KEPT`):
    `memory_budget` lowers a gradient to measure it, then the engine compiles
    that lowering. The result is verified once; `DFC_VERIFY_EACH=1` verifies
    after every pass instead (slower; naming a pass that breaks the IR)."""
    pipeline = pipeline or default_pipeline(threads, blas_runtime.available(), fast_math=fast_math)
    key = (text, pipeline, out_params)
    if text is not None and key in _LOWERED:
        return _LOWERED.pop(key)
    module = module.clone()
    if _needs_lowering(module):
        verify_each = config.VERIFY_EACH.value()
        PassManager.parse(pipeline, verify_each=verify_each).run(module)
        if not verify_each:
            verify_located(module)
    if out_params:
        PassManager.parse("buffer-results-to-out-params").run(module)
    if text is not None and keep:
        _LOWERED[key] = module.clone()
        if len(_LOWERED) > LOWERED_KEPT:
            _LOWERED.popitem(last=False)
    return module


LOWERED_KEPT = 4
_LOWERED: OrderedDict[tuple[str | None, str, bool], ModuleOp] = OrderedDict()


def _needs_lowering(module: ModuleOp) -> bool:
    """Whether `module` still has project ops or tensors."""
    for op in module.walk():
        if op.dialect_name() not in _UPSTREAM or any(isinstance(r.type, TensorType) for r in op.results):
            return True
        if isinstance(op, func.FuncOp) and any(
            isinstance(t, TensorType) for t in (*op.function_type.inputs.data, *op.function_type.outputs.data)
        ):
            return True
    return False


def _access_bounds(module: ModuleOp, text: str) -> dict[str, list[AccessBound]]:
    """What `check_access` verifies before each call (functions with dynamic
    shapes), kept for the last modules by text (engines of one module with
    other options share it)."""
    if not has_dynamic_arguments(module):
        return {}
    if text in _ACCESS_BOUNDS:
        _ACCESS_BOUNDS.move_to_end(text)
        return _ACCESS_BOUNDS[text]
    module = module.clone()
    PassManager.parse("expand-library,canonicalize").run(module)
    bounds = _ACCESS_BOUNDS[text] = access_bounds(module)
    if len(_ACCESS_BOUNDS) > ACCESS_BOUNDS_KEPT:
        _ACCESS_BOUNDS.popitem(last=False)
    return bounds


_ACCESS_BOUNDS: OrderedDict[str, dict[str, list[AccessBound]]] = OrderedDict()


@dataclass(frozen=True)
class CompileOptions:
    """Everything besides the module text that decides the compiled code: with
    the text, the key of the in-process and on-disk caches."""

    opt_level: int
    fast_math: bool
    threads: int
    vector_math: bool
    pipeline: str | None
    out_params: bool
    parallel_min_work: int
    dfc_gemm: bool
    """Whether `blas.gemm` calls dfc's own kernel (`DFC_GEMM`) rather than OpenBLAS."""


def _compile(module: ModuleOp, text: str, options: CompileOptions) -> JitModule:
    """`module` compiled, or loaded from the on-disk cache when it holds it."""
    disk_key = None
    if object_cache.cache_dir() is not None:
        disk_key = object_cache.cache_key(text, options, host_target_machine(options.opt_level))
        if (entry := object_cache.load(disk_key)) is not None:
            return JitModule.from_object(entry, options.opt_level)
    with paused_gc():
        lowered = lower(module, options.threads, options.pipeline, options.out_params, options.fast_math, text)
        progress.stage("LLVM")
        jit = JitModule(
            lowered,
            opt_level=options.opt_level,
            fast_math=options.fast_math,
            num_threads=options.threads,
            parallel_min_work=options.parallel_min_work,
            vector_math=options.vector_math,
        )
    if disk_key is not None:
        object_cache.store(disk_key, jit.object)
    return jit


def _is_buffer(t: Attribute) -> bool:
    return isinstance(t, MemRefType | TensorType)


class ExecutionEngine:
    """JIT-compiled functions of one module, called with numpy arrays."""

    def __new__(cls, module: ModuleOp, target: str = "cpu", *args: Any, **kwargs: Any) -> ExecutionEngine:
        if target in ENGINES and cls is ExecutionEngine:
            if target == "cuda":
                warnings.warn(f"ExecutionEngine target '{target}' is deprecated; use 'gpu'", DeprecationWarning,
                              stacklevel=2)
            module, name = ENGINES[target].split(":")
            cls = getattr(importlib.import_module(module), name)
        return super().__new__(cls)

    def __init__(
        self,
        module: ModuleOp,
        target: str = "cpu",
        opt_level: int = 3,
        fast_math: bool = True,
        threads: int | None = None,
        vector_math: bool = True,
        pipeline: str | None = None,
        *,
        parallel_min_work: int = DEFAULT_PARALLEL_MIN_WORK,
        _out_params: bool = False,
    ):
        if target != "cpu":
            raise ValueError(f"unknown target '{target}' (the engine runs 'cpu' and 'gpu')")
        self.threads = threads or default_threads()
        self.signatures = {
            op.sym_name.data: op.function_type for op in module.ops if isinstance(op, func.FuncOp)
        }
        if _out_params:
            self.signatures = _with_out_params(module, self.signatures)
        text = module_text(module)
        options = CompileOptions(opt_level, fast_math, self.threads, vector_math, pipeline, _out_params,
                                 parallel_min_work, gemm_kernel.enabled())  # fmt: skip
        self._key = (text, options)
        jit = _CACHE.get(self._key)
        if jit is None:
            jit = _compile(module, text, options)
            _CACHE.put(self._key, jit)
        jit.users.add(self)
        self.jit: JitModule | None = jit
        self._plans: dict[str, _CallPlan] = {}
        self.access_bounds = _access_bounds(module, text)
        self._into: ExecutionEngine | None = None
        """The engine for `out=` calls, compiled on the first one."""

    def close(self) -> None:
        """Release the compiled code (when no other open engine shares it);
        calling a function afterwards raises `RuntimeError`. Idempotent."""
        if self._into is not None:
            self._into.close()
        jit, self.jit = self.jit, None
        self._plans.clear()
        if jit is None:
            return
        jit.users.discard(self)
        if not jit.users:
            _CACHE.discard(self._key, jit)
            jit.close()

    def __enter__(self) -> ExecutionEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _plan(self, name: str) -> _CallPlan:
        if self.jit is None:
            raise RuntimeError("the engine is closed")
        if name not in self._plans:
            if name not in self.signatures:
                raise ValueError(f"no function @{name} in the module")
            signature = self.signatures[name]
            entry = _ENTRY(self.jit.entry_address(name))
            self._plans[name] = _CallPlan.of(signature.inputs.data, signature.outputs.data, entry,
                                             self.access_bounds.get(name, []))
        return self._plans[name]

    def invoke(self, name: str, *args: Any, out: np.ndarray | Sequence[np.ndarray] | None = None) -> Any:
        """Call `@name`; returns one numpy array/scalar, or a tuple of them.
        With `out` (one array per array result, in order), the array results
        are written into those arrays, which are returned in their places."""
        if out is not None:
            return self._invoke_into(name, args, (out,) if isinstance(out, np.ndarray) else tuple(out))
        plan = self._plans.get(name) or self._plan(name)
        params = plan.params
        if len(args) != len(params):
            raise TypeError(f"@{name} takes {len(params)} arguments, got {len(args)}")
        slots: list[int] = []
        keep: list[np.ndarray] = []
        for k, (value, p) in enumerate(zip(args, params)):
            if p.fast and type(value) is np.ndarray and value.dtype == p.dtype and value.shape == p.shape:
                try:  # raises for a read-only or non-contiguous array, which takes the checked path
                    slots.append(_addressof(_from_buffer(value)))
                    continue
                except (TypeError, ValueError):
                    pass
            if type(value) in p.scalar_types:
                slots.append(p.slot(value))
            else:
                slots.extend(self._argument(name, k, value, p.type, keep))
        if plan.access_bounds:
            shapes = {k: np.shape(v) for k, (v, p) in enumerate(zip(args, params)) if p.buffer}
            check_access(name, plan.access_bounds, shapes)
        desc = plan.descriptor(slots)
        failures = self.jit.bounds_failures
        failed_before = failures.value if failures is not None else 0
        if self.jit.reentrant:
            plan.entry(desc)
        else:
            with self.jit.lock:
                plan.entry(desc)
        results = []
        at = plan.arg_slots
        for r in plan.results:
            if r.buffer:
                rank = len(r.shape)
                if r.static is not None:  # the declared shape: no sizes to read back
                    results.append(_adopt_static(desc[at], r))
                else:
                    shape = tuple(desc[at + 1 : at + 1 + rank])
                    results.append(_adopt(desc[at], shape, r.dtype))
                at += 1 + rank
            else:
                results.append(_scalar_from_slot(desc[at], r.dtype))
                at += 1
        warned = self.jit.warnings
        mask = warned.value if warned is not None else 0
        if mask:  # cleared before a failure can raise, so that no later call reports these
            warned.value = 0
        if failures is not None and failures.value != failed_before:  # the results are released with `results`
            raise run_time_error(f"@{name}: {self.jit.bounds_failure_message()}")
        if mask:
            for message in self.jit.warning_messages(mask):
                warnings.warn(message, RuntimeWarning, stacklevel=2)
        return results[0] if len(results) == 1 else tuple(results)

    def _invoke_into(self, name: str, args: Sequence[Any], outs: tuple[np.ndarray, ...]) -> Any:
        plan = self._plans.get(name) or self._plan(name)
        buffers = [r for r in plan.results if r.buffer]
        if len(outs) != len(buffers):
            raise TypeError(f"@{name} returns {len(buffers)} array(s), out= gives {len(outs)}")
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        for j, (o, r) in enumerate(zip(outs, buffers)):
            what = f"@{name} out[{j}]"
            if not isinstance(o, np.ndarray):
                raise TypeError(f"{what} must be a numpy array, got {type(o).__name__}")
            if any(d < 0 for d in r.shape):
                raise TypeError(f"{what}: the result {r.type} has a dynamic shape (out= needs static shapes)")
            if o.dtype != r.dtype or o.shape != r.shape:
                raise TypeError(f"{what} must have dtype {r.dtype} and shape {r.shape}, got {o.dtype} {o.shape}")
            if not (o.flags.c_contiguous and o.flags.writeable):
                raise ValueError(f"{what} must be C-contiguous and writeable")
            if any(np.may_share_memory(o, a) for a in arrays):
                raise ValueError(f"{what} overlaps an argument or another out array")
            arrays.append(o)
        if self._into is None:
            from dfc.compiler.parsing import parse_module

            text, o = self._key
            self._into = ExecutionEngine(parse_module(text), opt_level=o.opt_level, fast_math=o.fast_math,
                                         threads=o.threads, vector_math=o.vector_math, pipeline=o.pipeline,
                                         parallel_min_work=o.parallel_min_work, _out_params=True)
        if name not in self._into.signatures:
            raise ValueError(f"out= is not available for @{name}: other functions of the module call it")
        scalars = self._into.invoke(name, *args, *outs)
        scalars = iter(() if scalars is None else scalars if isinstance(scalars, tuple) else (scalars,))
        arrays = iter(outs)
        results = [next(arrays) if r.buffer else next(scalars) for r in plan.results]
        return results[0] if len(results) == 1 else tuple(results)

    def _argument(self, name: str, k: int, value: Any, t: Attribute, keep: list[np.ndarray]) -> list[int]:
        what = f"@{name} argument #{k}"
        if not _is_buffer(t):
            dtype = dtype_of(t)
            if isinstance(value, np.ndarray) and value.ndim != 0:
                raise TypeError(f"{what} must be a scalar of type {t}, got an array of shape {value.shape}")
            if is_float_dtype(dtype):
                if not isinstance(value, int | float | np.floating | np.integer):
                    raise TypeError(f"{what} must be a float, got {type(value).__name__}")
                return [_float_slot(value, dtype)]
            if not isinstance(value, int | np.integer | bool | np.bool_):
                raise TypeError(f"{what} must be an integer, got {type(value).__name__}")
            return [int(value)]
        if not isinstance(value, np.ndarray):
            raise TypeError(f"{what} must be a numpy array of type {t}, got {type(value).__name__}")
        dtype = dtype_of(t.element_type)
        if value.dtype != dtype:
            raise TypeError(f"{what} must have dtype {dtype}, got {value.dtype}")
        shape = t.get_shape()
        if value.ndim != len(shape):
            raise ValueError(f"{what} must have rank {len(shape)} ({t}), got shape {value.shape}")
        for axis, (want, got) in enumerate(zip(shape, value.shape)):
            if want >= 0 and want != got:
                raise ValueError(f"{what} must have size {want} in dimension {axis} ({t}), got shape {value.shape}")
        array = np.ascontiguousarray(value)
        keep.append(array)
        return [array.ctypes.data] + [got for want, got in zip(shape, array.shape) if want < 0]


def _with_out_params(module: ModuleOp, signatures: dict[str, FunctionType]) -> dict[str, FunctionType]:
    """The signatures after `buffer-results-to-out-params` (static-shape array
    results become trailing arguments); called functions are left out."""
    called = called_functions(module)
    converted = {}
    for name, t in signatures.items():
        if name in called:
            continue
        outputs = list(t.outputs.data)
        moved = [_is_buffer(r) and all(d >= 0 for d in r.get_shape()) for r in outputs]
        converted[name] = FunctionType.from_lists(
            [*t.inputs.data, *(r for r, m in zip(outputs, moved) if m)], [r for r, m in zip(outputs, moved) if not m]
        )
    return converted


def _float_slot(value: Any, dtype: np.dtype) -> int:
    """The i64 slot holding a float: its bytes at the start (little-endian)."""
    return int.from_bytes(np.array(value, dtype).tobytes().ljust(8, b"\0"), "little", signed=True)


def _scalar_from_slot(slot: int, dtype: np.dtype) -> Any:
    """The scalar of type `dtype` held by an i64 slot (see `_float_slot`)."""
    if is_float_dtype(dtype):
        raw = (slot & ((1 << 64) - 1)).to_bytes(8, "little")[: dtype.itemsize]
        return np.frombuffer(raw, dtype)[0]
    return dtype.type(slot)


@dataclass(frozen=True)
class _Param:
    """How one argument or result of a function is passed."""

    type: Attribute
    buffer: bool
    dtype: np.dtype
    shape: tuple[int, ...]
    fast: bool
    """A buffer of static, non-empty shape: a C-contiguous, writeable array of
    exactly that dtype and shape is passed by address without further checks."""
    slot: Callable[[float | int], int] | None
    """For a float or integer scalar: the slot of a Python value of `scalar_types`."""
    scalar_types: tuple[type, ...]
    static: tuple[type, int] | None
    """For a non-empty buffer of static shape: the ctypes array type of its bytes, and their number."""

    @classmethod
    def of(cls, t: Attribute) -> _Param:
        buffer = _is_buffer(t)
        dtype = np.dtype(dtype_of(t.element_type if buffer else t))
        shape = tuple(t.get_shape()) if buffer else ()
        # ml_dtypes' bfloat16 (kind "V") has no buffer-protocol format for `from_buffer`
        fast = buffer and dtype.kind != "V" and all(d > 0 for d in shape)
        slot, scalar_types = None, ()
        if not buffer and is_float_dtype(dtype):
            slot, scalar_types = functools.partial(_float_slot, dtype=dtype), (float, int)
        elif not buffer and dtype.kind in "iu":
            slot, scalar_types = int, (int,)
        nbytes = math.prod(shape) * dtype.itemsize
        static = (ctypes.c_char * nbytes, nbytes) if buffer and all(d >= 0 for d in shape) and nbytes else None
        return cls(t, buffer, dtype, shape, fast, slot, scalar_types, static)


@dataclass(frozen=True)
class _CallPlan:
    """A function's parameters, results and compiled entry, prepared once.
    The entry takes one i64 array: the argument slots (a buffer's address and
    its dynamic sizes, a scalar's bits), then room for the results'."""

    params: tuple[_Param, ...]
    results: tuple[_Param, ...]
    arg_slots: int
    entry: Any
    access_bounds: list[AccessBound]
    """The shape relations `check_access` verifies at each call."""
    descriptor_type: type
    pack: struct.Struct

    @classmethod
    def of(cls, inputs: Sequence[Attribute], outputs: Sequence[Attribute], entry: Any,
           bounds: list[AccessBound]) -> _CallPlan:
        params = tuple(_Param.of(t) for t in inputs)
        results = tuple(_Param.of(t) for t in outputs)
        arg_slots = sum(1 + sum(d < 0 for d in p.shape) if p.buffer else 1 for p in params)
        result_slots = sum(1 + len(r.shape) if r.buffer else 1 for r in results)
        descriptor = ctypes.c_int64 * (arg_slots + result_slots + 1)
        return cls(params, results, arg_slots, entry, bounds, descriptor, struct.Struct(f"{arg_slots}q"))

    def descriptor(self, slots: list[int]) -> ctypes.Array:
        """The entry's i64 array with `slots` at its start (an integer beyond
        64 bits wraps around, as in C)."""
        desc = self.descriptor_type()
        try:
            self.pack.pack_into(desc, 0, *slots)
        except struct.error:
            desc = self.descriptor_type(*slots)
        return desc


def _adopt(pointer: int, shape: Sequence[int], dtype: np.dtype) -> np.ndarray:
    """A numpy array over a buffer the compiled code allocated; released
    through the runtime's allocator when the array and its views go."""
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    if nbytes == 0:
        free_function()(pointer, 0)
        return np.empty(shape, dtype)
    buffer = (ctypes.c_char * nbytes).from_address(pointer)
    buffer.release = _Release(pointer, nbytes)
    array = np.frombuffer(buffer, dtype)
    return array if len(shape) == 1 else array.reshape(shape)  # a reshape costs as much as the kernel of a tiny call


def _adopt_static(pointer: int, r: _Param) -> np.ndarray:
    """`_adopt` for a result of static, non-empty shape (its ctypes type prepared once)."""
    array_type, nbytes = r.static
    buffer = array_type.from_address(pointer)
    buffer.release = _Release(pointer, nbytes)
    array = np.frombuffer(buffer, r.dtype)
    return array if len(r.shape) == 1 else array.reshape(r.shape)


class _Release:
    """Frees a runtime allocation when collected (with the buffer that holds it)."""

    __slots__ = ("pointer", "nbytes")

    def __init__(self, pointer: int, nbytes: int):
        self.pointer, self.nbytes = pointer, nbytes

    def __del__(self, free: Callable[[], Any] = free_function, finalizing: Callable[[], bool] = sys.is_finalizing,
                ) -> None:  # bound here: survives module teardown
        if not finalizing():  # at exit the memory goes with the process; the runtime's globals may be gone already
            free()(self.pointer, self.nbytes)


_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof
