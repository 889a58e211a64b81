"""`ExecutionEngine`: compile a module once, call its functions on numpy arrays.

In the style of MLIR's ExecutionEngine: a module still at df/nn level is
lowered with the `default` pipeline first; the result is JIT-compiled through
llvmlite (see `compiler.codegen`). `invoke` checks every argument against the
function's signature (dtype, rank, static sizes; arrays are made C-contiguous)
and raises `TypeError`/`ValueError` naming the argument on a mismatch; for
dynamic dimensions, the sizes the program's maps rely on are checked too
(`compiler.shape_checks`), so no call indexes outside an argument.
Compiled code is cached by module text and options. `vector_math` (default
on) uses the backend's vectorisable exp/tanh polynomials (within ~2 ulp of
libm) instead of scalar libm calls; `fast_math=False` gives bit-reproducible
arithmetic (no reassociation); `pipeline` replaces the lowering pipeline.
Functions planned by `mem-plan` share a per-function arena owned by the
compiled module (engines built from the same module and options share it);
`invoke` therefore serialises calls into such a module across threads.
"""

from __future__ import annotations

import ctypes
import math
import os
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp, TensorType
from xdsl.ir import Attribute

from dfc.compiler.codegen import object_cache
from dfc.compiler.codegen.llvm_emitter import JitModule
from dfc.compiler.codegen.runtime import free_function
from dfc.compiler.codegen.target import host_target_machine
from dfc.compiler.diagnostics import verify_located
from dfc.compiler.interpreter import dtype_of
from dfc.compiler.pass_manager import PassManager
from dfc.compiler.shape_checks import AccessBound, access_bounds, check_access, has_dynamic_arguments
from dfc.passes import PIPELINES
from dfc.passes.lower_dataflow import default_threads

_CACHE: dict[tuple, JitModule] = {}
_ENTRY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_UPSTREAM = ("builtin", "func", "scf", "memref", "arith", "math", "llvm", "vector")


def lower(module: ModuleOp, threads: int, pipeline: str | None = None) -> ModuleOp:
    """A copy of `module` lowered to upstream dialects (unchanged if it already is),
    by `pipeline` (default: the `default` pipeline with `threads` threads).

    The result is verified once; `DFC_VERIFY_EACH=1` verifies after every pass
    instead (slower; the test suite sets it, so a pass breaking the IR is named)."""
    module = module.clone()
    if _needs_lowering(module):
        pipeline = pipeline or PIPELINES["default"].replace("lower-dataflow", f"lower-dataflow{{threads={threads}}}")
        verify_each = os.environ.get("DFC_VERIFY_EACH", "") not in ("", "0")
        PassManager.parse(pipeline, verify_each=verify_each).run(module)
        if not verify_each:
            verify_located(module)
    return module


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


def _access_bounds(module: ModuleOp) -> dict[str, list[AccessBound]]:
    """What `check_access` verifies before each call (functions with dynamic shapes)."""
    if not has_dynamic_arguments(module):
        return {}
    module = module.clone()
    PassManager.parse("expand-library,canonicalize").run(module)
    return access_bounds(module)


def _compile(module: ModuleOp, text: str, options: tuple) -> JitModule:
    """`module` compiled, or loaded from the on-disk cache when it holds it."""
    opt_level, fast_math, threads, vector_math, pipeline = options
    disk_key = None
    if object_cache.cache_dir() is not None:
        disk_key = object_cache.cache_key(text, options, host_target_machine(opt_level))
        if (entry := object_cache.load(disk_key)) is not None:
            return JitModule.from_object(entry, opt_level)
    jit = JitModule(
        lower(module, threads, pipeline),
        opt_level=opt_level,
        fast_math=fast_math,
        num_threads=threads,
        vector_math=vector_math,
    )
    if disk_key is not None:
        object_cache.store(disk_key, jit.object)
    return jit


def _is_buffer(t: Attribute) -> bool:
    return isinstance(t, MemRefType | TensorType)


class ExecutionEngine:
    """JIT-compiled functions of one module, called with numpy arrays."""

    def __new__(cls, module: ModuleOp, target: str = "cpu", *args: Any, **kwargs: Any) -> ExecutionEngine:
        if target == "cuda" and cls is ExecutionEngine:  # the GPU engine, same contract
            from dfc.compiler.cuda_engine import CudaEngine

            cls = CudaEngine
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
    ):
        if target != "cpu":
            raise ValueError(f"unknown target '{target}' (the engine runs 'cpu' and 'cuda')")
        self.threads = threads or default_threads()
        self.signatures = {
            op.sym_name.data: op.function_type for op in module.ops if isinstance(op, func.FuncOp)
        }
        text = str(module)
        options = (opt_level, fast_math, self.threads, vector_math, pipeline)
        key = (text, *options)
        if key not in _CACHE:
            _CACHE[key] = _compile(module, text, options)
        self.jit = _CACHE[key]
        self._entries: dict[str, Any] = {}
        self.access_bounds = _access_bounds(module)

    def _entry(self, name: str) -> Any:
        if name not in self._entries:
            self._entries[name] = _ENTRY(self.jit.entry_address(name))
        return self._entries[name]

    def invoke(self, name: str, *args: Any) -> Any:
        """Call `@name`; returns one numpy array/scalar, or a tuple of them."""
        if name not in self.signatures:
            raise ValueError(f"no function @{name} in the module")
        signature = self.signatures[name]
        inputs, outputs = signature.inputs.data, signature.outputs.data
        if len(args) != len(inputs):
            raise TypeError(f"@{name} takes {len(inputs)} arguments, got {len(args)}")
        slots: list[int] = []
        keep: list[np.ndarray] = []
        for k, (value, t) in enumerate(zip(args, inputs)):
            slots.extend(self._argument(name, k, value, t, keep))
        if self.access_bounds.get(name):
            shapes = {k: np.shape(v) for k, (v, t) in enumerate(zip(args, inputs)) if _is_buffer(t)}
            check_access(name, self.access_bounds[name], shapes)
        first_result = len(slots)
        for t in outputs:
            slots.extend([0] * (1 + len(t.get_shape()) if _is_buffer(t) else 1))
        desc = np.array(slots + [0], dtype=np.int64)
        if self.jit.reentrant:
            self._entry(name)(desc.ctypes.data)
        else:
            with self.jit.lock:
                self._entry(name)(desc.ctypes.data)
        results = []
        at = first_result
        for t in outputs:
            if _is_buffer(t):
                rank = len(t.get_shape())
                shape = tuple(int(d) for d in desc[at + 1 : at + 1 + rank])
                results.append(_adopt(int(desc[at]), shape, dtype_of(t.element_type)))
                at += 1 + rank
            else:
                results.append(_scalar_from_slot(desc, at, dtype_of(t)))
                at += 1
        return results[0] if len(results) == 1 else tuple(results)

    def _argument(self, name: str, k: int, value: Any, t: Attribute, keep: list[np.ndarray]) -> list[int]:
        what = f"@{name} argument #{k}"
        if not _is_buffer(t):
            dtype = dtype_of(t)
            if isinstance(value, np.ndarray) and value.ndim != 0:
                raise TypeError(f"{what} must be a scalar of type {t}, got an array of shape {value.shape}")
            if np.dtype(dtype).kind == "f":
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


def _float_slot(value: Any, dtype: np.dtype) -> int:
    """The i64 slot holding a float: its bytes at the start (little-endian)."""
    slot = np.zeros(1, np.int64)
    slot.view(np.uint8)[: np.dtype(dtype).itemsize] = np.array([value], dtype).view(np.uint8)
    return int(slot[0])


def _scalar_from_slot(desc: np.ndarray, at: int, dtype: np.dtype) -> Any:
    raw = desc[at : at + 1]
    if np.dtype(dtype).kind == "f":
        return raw.view(np.uint8)[: np.dtype(dtype).itemsize].view(dtype)[0]
    return np.dtype(dtype).type(raw[0])


def _adopt(pointer: int, shape: Sequence[int], dtype: np.dtype) -> np.ndarray:
    """A numpy array over a buffer the compiled code allocated; released
    through the runtime's allocator when the array goes."""
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    if nbytes == 0:
        free_function()(pointer, 0)
        return np.empty(shape, dtype)
    buffer = (ctypes.c_char * nbytes).from_address(pointer)
    weakref.finalize(buffer, free_function(), pointer, nbytes)
    return np.frombuffer(buffer, dtype).reshape(shape)
