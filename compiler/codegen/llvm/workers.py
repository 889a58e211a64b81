"""LLVM optimisation and code generation of a module's parts, in parallel processes.

    compile_part(text, opt_level)   -> CompiledPart      one part, in this process
    compile_parts(texts, opt_level) -> [CompiledPart]    all, in the order of `texts`
    python -m dfc.compiler.codegen.llvm.workers           a worker: parts in on stdin, objects out on stdout

llvmlite serialises every call into LLVM behind one lock, so threads cannot
share the work; processes can. `compile_parts` compiles a large module's
parts (`split.split_module`) on `DFC_COMPILE_JOBS` processes (default: the
CPUs this process may use): this one and jobs - 1 workers, started on the
first such module and kept for the process's life (a worker imports only
llvmlite, `dfc.config` and the target: a fifth of a second). A module of
less than `PARALLEL_MIN_CHARS` of IR is not split (`jit.module_parts`) and
compiles here, so small programs pay no start-up. Each part is compiled by the same function
wherever it runs, so the machine code is the same bytes whichever process
compiled it and however many there are.
"""

from __future__ import annotations

import atexit
import os
import pickle
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import IO, Any

import llvmlite.binding as llvm
from llvmlite.binding.newpassmanagers import NewPassManager

from dfc import config
from dfc.compiler.codegen.target import host_target_machine

__all__ = ["CompiledPart", "compile_part", "compile_parts", "pipeline_options", "run_default_pipeline", "shutdown",
           "PARALLEL_MIN_CHARS", "LIGHT_KIND", "LIGHT_OPT_LEVEL"]

PARALLEL_MIN_CHARS = 500_000
"""Modules of less LLVM IR than this (about 2 s of LLVM's work) compile in this process alone."""

LIGHT_KIND = "dfc.light"
"""The function metadata marking a light kernel (`light_kernels`)."""

LIGHT_OPT_LEVEL = 1
"""The pipeline of a part whose functions are all light: O1, no vectorisation."""


@dataclass(frozen=True)
class CompiledPart:
    """One part compiled: its object file, its optimised IR, and the CPU
    seconds its optimisation and code generation took (in whichever process ran them)."""

    obj: bytes
    llvm_ir: str
    opt_seconds: float
    codegen_seconds: float


def pipeline_options(opt_level: int) -> llvm.PipelineTuningOptions:
    """LLVM's default pipeline at O`opt_level`: loop and SLP vectorisation on
    from O2, loop unrolling off."""
    pto = llvm.create_pipeline_tuning_options(speed_level=opt_level)
    pto.loop_vectorization = opt_level >= 2
    pto.slp_vectorization = opt_level >= 2
    # LLVM's unroller grew the mlp gradient's IR 14-fold (O3: 0.7 s of optimisation
    # and 0.4 s of code generation) and bought no kernel time on the benchmarks
    # (mlp/softmax/jacobi gradients, 1024^3 matmul); vectorisation stays on.
    pto.loop_unrolling = False
    return pto


def run_default_pipeline(mod: llvm.ModuleRef, tm: llvm.TargetMachine, pto: llvm.PipelineTuningOptions) -> None:
    """Run LLVM's default module pipeline for `pto`'s speed level on `mod`.

    The pass manager is freed here: llvmlite's `ModulePassManager` inherits a
    no-op `_dispose` (its `ObjectRef` base comes first), so closing or
    collecting it would keep the whole pipeline of every compiled module."""
    pb = llvm.create_pass_builder(tm, pto)
    mpm = pb.getModulePassManager()
    try:
        mpm.run(mod, pb)
    finally:
        NewPassManager._dispose(mpm)
        mpm.detach()
        pb.close()


_MACHINES: dict[int, llvm.TargetMachine] = {}


def compile_part(text: str, opt_level: int) -> CompiledPart:
    """Parse and verify the module `text` (triple and data layout set), run
    LLVM's default pipeline (`pipeline_options`) for the host CPU, and emit
    its object file; at `LIGHT_OPT_LEVEL` at most (pipeline and code
    generation) when all its functions are light kernels."""
    if _light(text):
        opt_level = min(opt_level, LIGHT_OPT_LEVEL)
    tm = _MACHINES.get(opt_level) or _MACHINES.setdefault(opt_level, host_target_machine(opt_level))
    start = time.process_time()
    mod = llvm.parse_assembly(text)
    mod.verify()
    run_default_pipeline(mod, tm, pipeline_options(opt_level))
    mod.verify()
    optimized_ir = str(mod)  # before code generation, which rewrites the module
    middle = time.process_time()
    obj = tm.emit_object(mod)
    return CompiledPart(obj, optimized_ir, middle - start, time.process_time() - middle)


def _light(text: str) -> bool:
    """Whether every function the module `text` defines is marked light
    (`!dfc.light`: its work per call is small, `light_kernels`)."""
    defines = text.count("\ndefine ")
    return defines > 0 and text.count(f" !{LIGHT_KIND} !") == defines


def jobs() -> int:
    """`DFC_COMPILE_JOBS`, or the CPUs this process may use."""
    return config.COMPILE_JOBS.value() or len(os.sched_getaffinity(0))


def compile_parts(texts: list[str], opt_level: int) -> list[CompiledPart]:
    """Each part of `texts` compiled (`compile_part`), in their order: on
    `jobs()` processes when there are several parts of `PARALLEL_MIN_CHARS`
    or more together, else here. Raises what compiling a part raised; a
    worker that dies raises an internal `CompileError`."""
    n = min(jobs(), len(texts))
    if n <= 1 or sum(map(len, texts)) < PARALLEL_MIN_CHARS:
        return [compile_part(text, opt_level) for text in texts]
    results: list[CompiledPart | None] = [None] * len(texts)
    queue = iter(sorted(range(len(texts)), key=lambda k: -len(texts[k])))  # longest first: the last finish together
    taken = threading.Lock()
    errors: list[BaseException] = []

    def drain(compile_one) -> None:
        while not errors:
            with taken:
                k = next(queue, None)
            if k is None:
                return
            try:
                results[k] = compile_one(texts[k], opt_level)
            except BaseException as e:  # noqa: BLE001 - re-raised in the calling thread
                errors.append(e)

    with _POOL_LOCK:
        threads = [threading.Thread(target=drain, args=(w.compile,), daemon=True) for w in _pool(n - 1)]
        for t in threads:
            t.start()
        drain(compile_part)
        for t in threads:
            t.join()
    if errors:
        raise errors[0]
    return results  # type: ignore[return-value]


class _Worker:
    """A worker process and the pipes to it."""

    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", __name__, str(os.getpid())], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE)

    def compile(self, text: str, opt_level: int) -> CompiledPart:
        try:
            _send(self.process.stdin, (text, opt_level))
            reply = _receive(self.process.stdout)
        except OSError:  # the pipe broke: the worker is gone
            reply = None
        if reply is None:
            _discard_pool()
            from dfc.dialects.diagnostics import CompileError

            raise CompileError(f"internal error: an LLVM worker process exited (status {self.process.wait()})")
        if isinstance(reply, BaseException):
            raise reply
        return CompiledPart(*reply)

    def close(self) -> None:
        try:
            self.process.stdin.close()
        except OSError:  # it died: nothing was waiting in the pipe
            pass
        self.process.wait()
        self.process.stdout.close()


_POOL_LOCK = threading.Lock()
_POOL: list[_Worker] = []
_POOL_PID = [os.getpid()]


def _pool(n: int) -> list[_Worker]:
    """`n` workers, started as needed (a forked child starts its own)."""
    if _POOL_PID[0] != os.getpid():
        _POOL.clear()
        _POOL_PID[0] = os.getpid()
    while len(_POOL) < n:
        _POOL.append(_Worker())
    return _POOL[:n]


def _discard_pool() -> None:
    for w in _POOL:
        w.process.kill()
        w.close()
    _POOL.clear()


def shutdown() -> None:
    """Stop the worker processes (they start again when needed); at exit too."""
    with _POOL_LOCK:
        if _POOL_PID[0] == os.getpid():
            for w in _POOL:
                w.close()
        _POOL.clear()


atexit.register(shutdown)


def _send(stream: IO[bytes], value: Any) -> None:
    data = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)))
    stream.write(data)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    """The next value on `stream`, or None at its end."""
    head = stream.read(8)
    if len(head) < 8:
        return None
    (size,) = struct.unpack("<Q", head)
    data = stream.read(size)
    return pickle.loads(data) if len(data) == size else None


def _serve(parent: int) -> None:
    """A worker's loop: (text, opt_level) in, the fields of its `CompiledPart`
    (or the exception raised) out, until stdin closes or the process `parent`
    is gone (checked each second, also while LLVM runs: a part a killed
    compile left would take the CPU for nothing). (Fields, not the object:
    here the class belongs to `__main__`.)"""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing else may write to the replies' pipe
    while (request := _receive(requests)) is not None:
        try:
            part = compile_part(*request)
            reply: Any = (part.obj, part.llvm_ir, part.opt_seconds, part.codegen_seconds)
        except Exception as e:  # noqa: BLE001 - sent to the parent, which raises it
            reply = RuntimeError(f"{type(e).__name__}: {e}")
        _send(replies, reply)


if __name__ == "__main__":
    _serve(int(sys.argv[1]))
