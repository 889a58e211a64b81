"""Output targets of opt-tool's `-t`: what a module is printed as.

`mlir` prints the IR as is; `llvm` and `asm` lower what is still at df/nn
level with the default pipeline and print the optimised LLVM IR or the host
assembly; `ptx` prints NVPTX assembly for the GPU path.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import ModuleOp


def _jit(module: ModuleOp, threads: int):
    from dfc.compiler.codegen.llvm_emitter import JitModule
    from dfc.compiler.engine import lower

    return JitModule(lower(module, threads), num_threads=threads, vector_math=True)


def llvm_ir(module: ModuleOp, threads: int = 1) -> str:
    return _jit(module, threads).llvm_ir


def assembly(module: ModuleOp, threads: int = 1) -> str:
    return _jit(module, threads).assembly()


def ptx(module: ModuleOp, threads: int = 1) -> str:
    from dfc.compiler.codegen.nvptx import emit_ptx

    return emit_ptx(module)


TARGETS: dict[str, Callable[..., str]] = {"llvm": llvm_ir, "asm": assembly, "ptx": ptx}
