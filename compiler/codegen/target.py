"""The host CPU as an LLVM target, and the process symbols JIT code links to.

LLVM only emits SSE-width code unless the target machine is told the host's
CPU name and features, so every JIT-compiled module is optimised and
code-generated through `host_target_machine()`. JIT code calls libm (`tanhf`,
`erf`, ...), libc (`aligned_alloc`, `free`, `memcpy`) and pthreads; MCJIT
resolves those from libraries loaded into the process, which
`load_runtime_libraries()` makes sure of.
"""

from __future__ import annotations

import ctypes.util
import functools

import llvmlite.binding as llvm

__all__ = ["host_target_machine", "load_runtime_libraries"]


@functools.cache
def _initialise() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_native_asmparser()


@functools.cache
def load_runtime_libraries() -> None:
    """Load libc, libm and libpthread into LLVM's process-wide symbol search,
    so that JIT code can call them (idempotent)."""
    for name in ("c", "m", "pthread"):
        path = ctypes.util.find_library(name)
        if path is not None:
            llvm.load_library_permanently(path)


def host_target_machine(opt_level: int = 3) -> llvm.TargetMachine:
    """A target machine for the host: its triple, CPU name and features
    (AVX2/AVX-512 where present), code model suited to the JIT, and LLVM
    code-generation level `opt_level` (0-3)."""
    _initialise()
    triple = llvm.get_process_triple()
    target = llvm.Target.from_triple(triple)
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(),
        features=llvm.get_host_cpu_features().flatten(),
        opt=opt_level,
        reloc="default",
        codemodel="jitdefault",
    )
