"""The host module optimised, compiled and loaded into this process.

    optimize(ir_module)  -> llvm.ModuleRef     parsed, verified, O3 for the host CPU (one module: opt-tool's view)
    JitModule(module)    -> MCJIT engine; entry_address(name) for ctypes

The module is emitted by `module.emit_module`, its identical functions
merged, and split into one part per kernel (`split`); each part is optimised
with LLVM's new pass manager (loop and SLP vectorisation on from O2, LLVM's
unroller off: the emitter unrolls small loops itself; a part of light kernels
only, `light_kernels`, at O1) and code-generated to
a relocatable object for the host CPU's name and features, in parallel
processes for a large module (`workers`); the objects are loaded into one
MCJIT engine, which links them, with the runtime
(`compiler.codegen.runtime`) and, where the module calls them, OpenBLAS and
dfc's GEMM kernel. `JitModule.from_object` loads objects compiled earlier
(`object_cache`).
"""

from __future__ import annotations

import ctypes
import threading
import weakref

import llvmlite.binding as llvm
import llvmlite.ir as ir
from llvmlite.binding.newpassmanagers import NewPassManager
from xdsl.dialects.builtin import ModuleOp

from dfc.compiler.codegen import blas_runtime, gemm_kernel, perf_map
from dfc.compiler.codegen.elf_symbols import defined_symbols, undefined_symbols
from dfc.compiler.codegen.llvm import workers
from dfc.compiler.codegen.llvm.emitter import (
    BOUNDS_FAILURES,
    BOUNDS_SITE,
    DEFAULT_PARALLEL_MIN_WORK,
    MAX_WARNINGS,
    WARNING_MESSAGES,
    WARNINGS,
)
from dfc.compiler.codegen.llvm.module import ENTRY_PREFIX, emit_module
from dfc.compiler.codegen.llvm.split import split_module
from dfc.compiler.codegen.llvm.workers import compile_parts, pipeline_options, run_default_pipeline
from dfc.compiler.codegen.object_cache import CachedObject
from dfc.compiler.codegen.runtime import install
from dfc.compiler.codegen.target import host_target_machine
from dfc.dialects.diagnostics import CompileError

__all__ = ["optimize", "merge_identical_functions", "module_parts", "JitModule"]


def optimize(ir_module: ir.Module, opt_level: int = 3) -> llvm.ModuleRef:
    """Parse and verify `ir_module`, then run LLVM's default O`opt_level`
    pipeline (`workers.pipeline_options`) for the host CPU on the whole
    module, after merging identical functions (`merge_identical_functions`).
    Returns the optimised module. (`JitModule` optimises the module's parts
    apart, `module_parts`.)"""
    tm = host_target_machine(opt_level)
    mod = _parsed(ir_module, tm)
    merge_identical_functions(mod, tm)
    run_default_pipeline(mod, tm, pipeline_options(opt_level))
    mod.verify()
    return mod


def module_parts(ir_module: ir.Module, opt_level: int = 3) -> list[str]:
    """`ir_module` parsed, verified, its identical functions merged
    (`merge_identical_functions`) and, from `workers.PARALLEL_MIN_CHARS` of
    IR, split into one module per kernel (`split.split_module`), as text for
    `workers.compile_parts`. A smaller module stays whole: compiled in one
    process anyway, its parts would cost 10-20% more (each parses the
    declarations and sets up the pipeline again: mlp gradient 0.98 against
    0.80 s, 20-map stencil chain 2.2 against 1.8 s)."""
    tm = host_target_machine(opt_level)
    mod = _parsed(ir_module, tm)
    merge_identical_functions(mod, tm)
    text = str(mod)
    if len(text) < workers.PARALLEL_MIN_CHARS:
        return [text]
    return split_module(text, {g.name: str(g.global_value_type) for g in mod.global_variables})


def _parsed(ir_module: ir.Module, tm: llvm.TargetMachine) -> llvm.ModuleRef:
    mod = llvm.parse_assembly(str(ir_module))
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    mod.verify()
    return mod


def merge_identical_functions(mod: llvm.ModuleRef, tm: llvm.TargetMachine) -> None:
    """Merge the functions of `mod` that are identical but for their names
    (LLVM's `mergefunc`: the calls of one go to the other, or it becomes a
    thunk calling it), so that each distinct kernel is optimised and compiled
    once. A model's repeated blocks emit the same loop nests and parallel
    bodies many times: in ResNet-18's training step 904 functions become
    700, and LLVM's optimisation and code generation take 15% less time
    (docs/performance-notes.md). The code of each kept function is the one
    every merged copy would have had."""
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=0))
    mpm = llvm.create_new_module_pass_manager()
    try:
        mpm.add_merge_functions_pass()
        mpm.run(mod, pb)
    finally:
        NewPassManager._dispose(mpm)
        mpm.detach()
        pb.close()


def check_symbols(objs: tuple[bytes, ...]) -> None:
    """Raise `CompileError` naming each symbol the machine code `objs` calls
    that neither they, dfc's runtime nor the process defines (MCJIT would link
    it to address 0: a host whose libgcc lacks a helper LLVM calls, say)."""
    defined = set().union(*map(defined_symbols, objs))
    missing = [name for obj in objs for name in undefined_symbols(obj) or ()
               if name not in defined and not llvm.address_of_symbol(name)]
    if missing:
        raise CompileError(f"the compiled code calls {', '.join(dict.fromkeys(missing))}, which this host does not "
                           f"provide (neither dfc's runtime nor a loaded library defines it)")


class JitModule:
    """A module compiled for the host and loaded into this process (MCJIT).

    Keep the JitModule alive as long as any address it returned is in use:
    it owns the machine code. Call an entry through ctypes, e.g.
    `ctypes.CFUNCTYPE(None, ctypes.c_void_p)(jit.entry_address("f"))(desc)`
    with `desc` an int64 array laid out as `module` describes (the entry ABI).
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
        parts = compile_parts(module_parts(ir_module, opt_level), opt_level)
        reentrant = not any(op.name == "memref.global" and op.constant is None for op in module.ops)
        entry = CachedObject(tuple(p.obj for p in parts), tuple(p.llvm_ir for p in parts), reentrant)
        self._load(entry, host_target_machine(opt_level))

    @classmethod
    def from_object(cls, entry: CachedObject, opt_level: int = 3) -> JitModule:
        """Load machine code compiled earlier (see `object_cache`) without compiling."""
        install()
        jit = cls.__new__(cls)
        jit._load(entry, host_target_machine(opt_level))
        return jit

    def _load(self, entry: CachedObject, tm: llvm.TargetMachine) -> None:
        self.object = entry
        """The machine code and optimised IR of the module's parts, as `object_cache` stores them."""
        self.reentrant = entry.reentrant
        """False when the module has writable globals (mem-plan's arenas): its
        functions then share them, so calls into it must not overlap."""
        self.lock = threading.Lock()
        """Held by `ExecutionEngine.invoke` around calls into a non-reentrant module."""
        self.llvm_ir: str = entry.llvm_ir
        """The optimised LLVM IR."""
        blas_runtime.load_if_called(entry.llvm_ir)
        gemm_kernel.load_if_called(entry.llvm_ir)
        check_symbols(entry.objs)
        self._tm = tm
        empty = llvm.parse_assembly("")
        empty.triple = tm.triple
        self._engine = llvm.create_mcjit_compiler(empty, tm)
        for obj in entry.objs:
            self._engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        self._engine.finalize_object()
        if perf_map.enabled():
            for obj in entry.objs:
                perf_map.write(obj, self._engine.get_function_address)
        failures = self._engine.get_global_value_address(BOUNDS_FAILURES) if BOUNDS_FAILURES in entry.llvm_ir else 0
        self.bounds_failures = ctypes.c_int64.from_address(failures) if failures else None
        """The module's failed-bounds-check counter (None: it checks no bounds)."""
        self._bounds_site = ctypes.c_char_p.from_address(self._engine.get_global_value_address(BOUNDS_SITE)) if failures else None
        warnings = self._engine.get_global_value_address(WARNINGS) if WARNINGS in entry.llvm_ir else 0
        self.warnings = ctypes.c_uint64.from_address(warnings) if warnings else None
        """The module's mask of warnings since the engine last cleared it (None: it issues none)."""
        self._warning_messages = (ctypes.c_char_p * MAX_WARNINGS).from_address(
            self._engine.get_global_value_address(WARNING_MESSAGES)) if warnings else None
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

    def warning_messages(self, mask: int) -> list[str]:
        """The messages of the warnings whose bits `mask` sets (see `WARNINGS`)."""
        assert self._warning_messages is not None
        return [m.decode() for k, m in enumerate(self._warning_messages) if mask >> k & 1 and m is not None]

    def entry_address(self, name: str) -> int:
        """Address of `void _dfc_entry_<name>(i64 *desc)`."""
        addr = self._engine.get_function_address(ENTRY_PREFIX + name)
        if not addr:
            raise KeyError(f"no function @{name} in the JIT module")
        return addr

    def assembly(self) -> str:
        """Host assembly of the optimised module (its parts one after the other)."""
        return "\n".join(self._tm.emit_assembly(llvm.parse_assembly(ir)) for ir in self.object.irs)
