"""The process-wide runtime that JIT-compiled modules call: a thread pool and
an allocator with a cache of large buffers.

`runtime.ll` (LLVM IR) is compiled once per process by `install()`, which
registers its functions as process symbols, so every JIT module links to the
same pool and cache. Emitted modules only declare them (`declare_runtime`):

* `void __dfc_parallel_for(ptr body, ptr ctx, i64 lb, i64 ub, i64 step,
  i64 min_iters, i64 max_threads)` runs `body(ctx, lo, hi)` over the
  induction values [lb, ub) in at most `max_threads` contiguous chunks of
  at least `min_iters` iterations, on as many threads (the caller's
  included). Workers are started on first need and then sleep on a condition
  variable between jobs; chunks are claimed atomically (a compare-and-swap on
  a word tagged with the job, so a worker waking after its job is over claims
  nothing of the next one), so the caller works too, and it waits only for
  chunks claimed by others, not for workers that took the job and found no
  chunk left: a slow-waking or descheduled worker that claimed nothing costs
  nothing. On the loaded 2-core VM (load ~10-14) the gradient of a
  64x256-128-10 MLP with dfc's GEMM kernel took 6.7-14.7 ms a call on 2
  threads (4.5-9.0 on 1) when the caller waited for every worker that had
  taken the job, 7.9-9.7 ms with this (docs/performance-notes.md, issue 36:
  there, too, why products on OpenBLAS's threads stay far slower on a busy
  machine). A loop that fits one chunk, or
  that starts while the pool runs another job (a concurrent call, or a
  parallel loop reached inside a parallel body), runs serially on its caller.
  No Python is involved: ctypes releases the GIL around calls into JIT code.
* Threads sharing a CPU are separated: a worker taking a job on the CPU its
  caller posted it from moves to another CPU it may run on
  (`__dfc_leave_shared_cpu`: its affinity without that CPU, then all of it
  again, so it is never pinned; Linux, through libc's `sched_getcpu` and
  `sched_{get,set}affinity`, which `install()` hands the runtime where they
  exist; not with more threads than CPUs, where sharing is unavoidable), and
  the caller yields its CPU once after posting when a worker was
  asleep or last finished on that CPU, so that such a worker runs (and
  moves) at once instead of after the caller's chunks (on KVM guests the
  scheduler wakes a thread on its waker's CPU while the other vCPUs are
  halted, so the pool's threads would otherwise share one CPU).
* `void __dfc_pool_park()` makes idle workers sleep at once instead of
  spinning for their usual ~0.1 ms; the next parallel loop wakes them. The
  code before a BLAS call parks the pool, so that OpenBLAS's threads get the
  cores.
* `use_openmp()` makes `__dfc_parallel_for` run its chunks on the team of
  the OpenMP runtime already loaded in the process (`GOMP_parallel`: GCC's
  libgomp, or LLVM's libomp through its GOMP entry points) instead of dfc's
  pool. Inside a PyTorch program, whose operators run on libgomp, one pool
  then owns the cores; `dfc.torch` does this when it compiles a module.
* `ptr __dfc_alloc(i64 align, i64 size)` / `void __dfc_free(ptr, i64 size)`:
  `aligned_alloc`/`free`, except that buffers of 64 KiB or more are, on
  release, kept in a cache of at most 64 buffers and `cache limit` bytes,
  from which an allocation of the same size (rounded to 64 KiB, or to 2 MiB
  from 4 MiB on) is served, and those of 4 MiB or more are 2 MiB-aligned and
  advised to use huge pages (as numpy does). A program that allocates its
  results afresh on every call thus reuses memory whose pages are already
  mapped, instead of paying the kernel's page zeroing on first touch: glibc
  unmaps buffers of this size on release, or trims its heap, and a ResNet
  training step (165 saved values of up to 1 MiB) spent a quarter of its time
  in page faults before the cache took buffers under 4 MiB. `DFC_BUFFER_CACHE_MB` sets the initial limit (default 1024;
  0 disables the cache); `set_cache_limit` changes it.
"""

from __future__ import annotations

import ctypes
import functools
import os
from pathlib import Path

import llvmlite.binding as llvm
import llvmlite.ir as ir

from dfc import config
from dfc.compiler.codegen.target import host_target_machine, load_runtime_libraries

__all__ = ["BODY_TYPE", "opaque", "declare_runtime", "install", "set_cache_limit", "cached_bytes", "free_function",
           "use_openmp", "loaded_openmp"]

_I64 = ir.IntType(64)
_PTR = ir.PointerType()

BODY_TYPE = ir.FunctionType(ir.VoidType(), [_PTR, _I64, _I64])
"""The type of an outlined parallel body: void (ptr ctx, i64 lo, i64 hi)."""

_SIGNATURES = {
    "__dfc_parallel_for": ir.FunctionType(ir.VoidType(), [_PTR, _PTR, _I64, _I64, _I64, _I64, _I64]),
    "__dfc_alloc": ir.FunctionType(_PTR, [_I64, _I64]),
    "__dfc_free": ir.FunctionType(ir.VoidType(), [_PTR, _I64]),
    "__dfc_pool_park": ir.FunctionType(ir.VoidType(), []),
    "__dfc_openmp_shared": ir.FunctionType(_I64, []),
}
SOFT_FLOAT = ("__truncsfbf2", "__truncdfbf2", "__truncdfhf2")
"""Conversions LLVM lowers to library calls on some hosts and that some C runtimes lack (libgcc_s of GCC 12):
the runtime defines them, and JIT code resolves them here."""
_EXPORTS = (*_SIGNATURES, *SOFT_FLOAT, "__dfc_set_cache_limit", "__dfc_runtime_init")
_PAUSE = "void @llvm.x86.sse2.pause()"
_FREE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)
_SET_LIMIT = ctypes.CFUNCTYPE(None, ctypes.c_int64)
_INIT = ctypes.CFUNCTYPE(None)


def opaque(value: ir.Value) -> ir.Value:
    """`value`, typed as an opaque `ptr`. llvmlite's IR layer gives allocas
    and globals typed pointers by default, whose element-type checks reject
    the loads and stores of other types that opaque pointers allow."""
    value.type = _PTR
    return value


def declare_runtime(module: ir.Module, name: str) -> ir.Function:
    """The declaration of runtime function `name` in `module`."""
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, _SIGNATURES[name], name)
        fn.attributes.add("nounwind")
    return fn


def runtime_ir(triple: str) -> str:
    """The runtime's LLVM IR for target `triple` (the x86 spin hint only on x86-64)."""
    text = Path(__file__).with_name("runtime.ll").read_text()
    if not triple.startswith("x86_64"):  # spin loops without the x86 pause hint
        text = text.replace(f"call {_PAUSE}", "").replace(f"declare {_PAUSE}", "")
    return text


class _Runtime:
    """The compiled runtime (kept alive for the whole process)."""

    def __init__(self) -> None:
        load_runtime_libraries()
        tm = host_target_machine(2)
        mod = llvm.parse_assembly(runtime_ir(tm.triple))
        mod.triple = tm.triple
        mod.data_layout = str(tm.target_data)
        mod.verify()
        self._engine = llvm.create_mcjit_compiler(mod, tm)
        self._engine.finalize_object()
        self.addresses = {name: self._engine.get_function_address(name) for name in _EXPORTS}
        _INIT(self.addresses["__dfc_runtime_init"])()
        for name in (*_SIGNATURES, *SOFT_FLOAT):
            llvm.add_symbol(name, self.addresses[name])
        self.free = _FREE(self.addresses["__dfc_free"])
        self.set_limit = _SET_LIMIT(self.addresses["__dfc_set_cache_limit"])
        self.bytes = ctypes.c_int64.from_address(self._engine.get_global_value_address("__dfc_cache_bytes"))
        self.gomp_parallel = ctypes.c_void_p.from_address(self._engine.get_global_value_address("__dfc_gomp_parallel"))
        self.leave_shared_cpu = _INIT(self._engine.get_function_address("__dfc_leave_shared_cpu"))
        self.job_cpu = ctypes.c_int64.from_address(self._engine.get_global_value_address("__dfc_job_cpu"))
        self.cpus = ctypes.c_int64.from_address(self._engine.get_global_value_address("__dfc_cpus"))
        libc = ctypes.CDLL(None)
        scheduler = ("sched_getcpu", "sched_getaffinity", "sched_setaffinity")
        if all(hasattr(libc, name) for name in scheduler):  # Linux (glibc, musl)
            for name, slot in zip(scheduler, ("__dfc_getcpu", "__dfc_getaffinity", "__dfc_setaffinity")):
                address = ctypes.cast(getattr(libc, name), ctypes.c_void_p).value
                ctypes.c_void_p.from_address(self._engine.get_global_value_address(slot)).value = address
            self.cpus.value = len(os.sched_getaffinity(0))
        self.set_limit(int(config.BUFFER_CACHE_MB.value() * 2**20))


@functools.cache
def install() -> _Runtime:
    """Compile the runtime and export its symbols to JIT code (once per process)."""
    return _Runtime()


def free_function() -> ctypes._CFuncPtr:
    """`__dfc_free(ptr, nbytes)`, for releasing buffers JIT code returned."""
    return install().free


def set_cache_limit(nbytes: int) -> None:
    """Keep at most `nbytes` of freed large buffers for reuse (0: none),
    releasing cached buffers above the new limit now."""
    install().set_limit(int(nbytes))


def cached_bytes() -> int:
    """Bytes of freed large buffers currently kept for reuse."""
    return install().bytes.value


def loaded_openmp() -> str | None:
    """The path of the OpenMP runtime loaded in this process (one exporting
    `GOMP_parallel`), or None. Linux lists loaded objects in /proc/self/maps."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split(maxsplit=5)[-1].strip() for line in maps if "/lib" in line}
    except OSError:
        return None
    for path in sorted(paths):
        if Path(path).name.startswith(("libgomp", "libomp", "libiomp")):
            try:
                ctypes.CDLL(path).GOMP_parallel
            except (OSError, AttributeError):
                continue
            return path
    return None


def use_openmp(library: str | None) -> None:
    """Run parallel loops on the OpenMP runtime at `library` (a path, see
    `loaded_openmp`), or on dfc's own pool again with None. Process-wide:
    every JIT module's parallel loops switch at their next call."""
    address = None
    if library is not None:
        address = ctypes.cast(ctypes.CDLL(library).GOMP_parallel, ctypes.c_void_p).value
    install().gomp_parallel.value = address
