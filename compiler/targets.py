"""Output targets of opt-tool's `-t`: what a module is printed as.

`mlir` prints the IR as is; `llvm` and `asm` lower what is still at df/nn
level with the default pipeline and print the optimised LLVM IR or the host
assembly; `gpu` prints the GPU kernels as NVPTX assembly. Every step runs as a
stage of the caller's `PassManager`, so `--time-passes` counts the lowering
passes (as `lower/NAME`), LLVM IR emission, LLVM optimisation and code
generation, and the progress display names them.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import ModuleOp

from dfc.compiler.pass_manager import PassManager


def _lower(module: ModuleOp, manager: PassManager, pipeline: str, needed: bool) -> ModuleOp:
    """A copy of `module` run through `pipeline` when `needed`, timed as `lower/NAME` stages."""
    module = module.clone()
    if needed:
        lowering = PassManager.parse(pipeline, progress=manager.progress)
        lowering.run(module)
        manager.timings += [(f"lower/{name}", t) for name, t in lowering.timings]
    return module


def _host_optimised(module: ModuleOp, manager: PassManager, threads: int):
    with manager.stage("load the backend"):
        from dfc.compiler.codegen.llvm.jit import optimize
        from dfc.compiler.codegen.llvm.module import emit_module
        from dfc.compiler.engine import _needs_lowering
        from dfc.compiler.codegen import blas_runtime
        from dfc.passes import default_pipeline

    pipeline = default_pipeline(threads, blas_runtime.available())
    lowered = _lower(module, manager, pipeline, _needs_lowering(module))
    with manager.stage("emit LLVM IR"):
        ir_module = emit_module(lowered, num_threads=threads, vector_math=True)
    with manager.stage("LLVM optimisation (O3)"):
        return optimize(ir_module, 3)


def llvm_ir(module: ModuleOp, manager: PassManager, threads: int = 1) -> str:
    return str(_host_optimised(module, manager, threads))


def assembly(module: ModuleOp, manager: PassManager, threads: int = 1) -> str:
    from dfc.compiler.codegen.target import host_target_machine

    optimised = _host_optimised(module, manager, threads)
    with manager.stage("code generation"):
        return host_target_machine(3).emit_assembly(optimised)


def gpu(module: ModuleOp, manager: PassManager, threads: int = 1) -> str:
    with manager.stage("load the backend"):
        from dfc.compiler.codegen.nvptx import GPU_PIPELINE, compile_ptx, emit_llvm, needs_lowering

    lowered = _lower(module, manager, GPU_PIPELINE, needs_lowering(module))
    with manager.stage("emit LLVM IR"):
        ir_module = emit_llvm(lowered)
    with manager.stage("LLVM optimisation and PTX generation"):
        return compile_ptx(ir_module)


TARGETS: dict[str, Callable[..., str]] = {"llvm": llvm_ir, "asm": assembly, "gpu": gpu}
