"""A module compiled as parts, one per kernel (`llvm.split`), in worker processes (`llvm.workers`)."""

from __future__ import annotations

import ctypes

import llvmlite.binding as llvm
import numpy as np
import pytest

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.codegen.llvm import workers
from dfc.compiler.codegen.llvm.jit import JitModule
from dfc.compiler.codegen.llvm.outline import OUTLINE_MIN_NESTS
from dfc.compiler.codegen.llvm.split import split_module
from dfc.compiler.codegen.object_cache import CachedObject
from dfc.compiler.codegen.target import host_target_machine
from dfc.compiler.engine import clear_jit_cache
from dfc.compiler.interpreter import interpret
from dfc.dialects.diagnostics import CompileError

# Two kernels (noinline) share a constant table and a writable counter; the
# entry calls them through an inlinable helper and passes one by address.
MODULE = """
@table = internal constant [4 x double] [double 1.0, double 2.0, double 3.0, double 4.0], align 64
@only_b = internal constant [2 x double] [double 10.0, double 20.0], align 64
@count = internal global i64 0, align 8
@__dfc_bounds_failures = global i64 0, align 8

define internal void @a(ptr noalias %out) noinline nounwind {
  %p = getelementptr inbounds [4 x double], ptr @table, i64 0, i64 3
  %v = load double, ptr %p, align 8
  store double %v, ptr %out, align 8
  %c = load i64, ptr @count, align 8
  %c1 = add i64 %c, 1
  store i64 %c1, ptr @count, align 8
  ret void
}

define internal void @b(ptr noalias %out) noinline nounwind {
  %p = getelementptr inbounds [4 x double], ptr @table, i64 0, i64 1
  %v = load double, ptr %p, align 8
  %q = getelementptr inbounds [2 x double], ptr @only_b, i64 0, i64 1
  %w = load double, ptr %q, align 8, !alias.scope !1
  %s = fadd double %v, %w
  store double %s, ptr %out, align 8
  %c = load i64, ptr @count, align 8
  %c1 = add i64 %c, 10
  store i64 %c1, ptr @count, align 8
  ret void
}

define internal void @helper(ptr %out, ptr %f) nounwind {
  call void @a(ptr %out)
  %o2 = getelementptr inbounds double, ptr %out, i64 1
  call void %f(ptr %o2)
  ret void
}

define void @_dfc_entry_f(ptr noalias %out) nounwind {
  call void @helper(ptr %out, ptr @b)
  %c = load i64, ptr @count, align 8
  %o3 = getelementptr inbounds double, ptr %out, i64 2
  %d = sitofp i64 %c to double
  store double %d, ptr %o3, align 8
  ret void
}

!0 = distinct !{!0, !"domain"}
!1 = !{!2}
!2 = distinct !{!2, !0, !"scope"}
"""


def _text() -> str:
    tm = host_target_machine(3)
    mod = llvm.parse_assembly(MODULE)
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    return str(mod)


def _parts() -> list[str]:
    mod = llvm.parse_assembly(_text())
    return split_module(str(mod), {g.name: str(g.global_value_type) for g in mod.global_variables})


def test_kernels_are_parts_and_globals_are_defined_once():
    """@a, @b and the entry (with its inlinable helper) are three parts; each
    parses on its own; every function and global is defined in exactly one
    part, and declared where another part uses it."""
    parts = _parts()
    assert len(parts) == 3
    defined: dict[str, int] = {}
    for part in parts:
        mod = llvm.parse_assembly(part)
        mod.verify()
        for value in (*mod.functions, *mod.global_variables):
            if not value.is_declaration:
                defined[value.name] = defined.get(value.name, 0) + 1
    assert defined == {"a": 1, "b": 1, "helper": 1, "_dfc_entry_f": 1, "table": 1, "only_b": 1, "count": 1,
                       "__dfc_bounds_failures": 1}
    entry = next(p for p in parts if "define void @_dfc_entry_f" in p)
    assert "define internal void @helper" in entry  # only its part uses it: it stays internal (inlined)
    assert "@only_b = internal constant" in next(p for p in parts if "@b(" in p and "define void @b" in p)
    assert "!2 = distinct" in next(p for p in parts if "define void @b" in p)


def test_parts_load_into_one_engine_and_share_their_globals():
    """Loaded together, the parts call one another and update one counter: the
    same results as the module compiled whole."""
    compiled = [workers.compile_part(p, 3) for p in _parts()]
    jit = JitModule.from_object(CachedObject(tuple(c.obj for c in compiled), tuple(c.llvm_ir for c in compiled), True))
    out = np.zeros(3)
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(jit.entry_address("f"))(out.ctypes.data)
    np.testing.assert_array_equal(out, [4.0, 22.0, 11.0])
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(jit.entry_address("f"))(out.ctypes.data)
    assert out[2] == 22.0
    assert jit.bounds_failures is not None and jit.bounds_failures.value == 0
    jit.close()


def test_unknown_top_level_lines_and_globals_keep_one_part():
    types = {"table": "[4 x double]", "only_b": "[2 x double]", "count": "i64", "__dfc_bounds_failures": "i64"}
    text = _text() + '\n$c = comdat any\n'
    assert split_module(text, types) == [text]
    del types["count"]
    assert split_module(_text(), types) == [_text()]


@pytest.fixture
def parallel(monkeypatch):
    """Every module of two parts or more compiles on two processes (compiled
    anew: a module this process compiled whole before would be reused)."""
    monkeypatch.setenv("DFC_COMPILE_JOBS", "2")
    monkeypatch.setattr(workers, "PARALLEL_MIN_CHARS", 0)
    clear_jit_cache()
    yield
    clear_jit_cache()


def test_worker_processes_emit_the_same_bytes(parallel):
    """Machine code does not depend on which process compiled a part."""
    parts = _parts()
    here = [workers.compile_part(p, 3) for p in parts]
    there = workers.compile_parts(parts, 3)
    assert [c.obj for c in there] == [c.obj for c in here]
    assert [c.llvm_ir for c in there] == [c.llvm_ir for c in here]


def test_the_engine_compiles_in_parallel_and_agrees_with_the_interpreter(parallel):
    """The gradient of a chain of stencils (outlined loop nests: many parts)
    through the workers agrees with the interpreter."""
    from benchmarks.compile_time import stencil_chain

    module = parse_module(stencil_chain(3, size=10))
    PassManager.parse("autodiff{func=f}").run(module)
    engine = ExecutionEngine(module.clone(), threads=2)
    assert len(engine.jit.object.objs) > OUTLINE_MIN_NESTS
    rng = np.random.default_rng(0)
    x, y, seed = (rng.standard_normal((10, 10)) for _ in range(3))
    for got, want in zip(engine.invoke("f_grad", x, y, seed), interpret(module, "f_grad", x, y, seed), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-12)


def test_a_worker_error_is_raised_here(parallel):
    with pytest.raises(RuntimeError, match="expected"):
        workers.compile_parts([_parts()[0], "this is not LLVM IR\n"], 3)
    workers.compile_parts(_parts(), 3)  # the workers still serve


def test_a_dead_worker_is_an_internal_compile_error(parallel):
    workers.compile_parts(_parts(), 3)
    workers._POOL[0].process.kill()
    with pytest.raises(CompileError, match="internal error: an LLVM worker process exited"):
        workers.compile_parts(_parts(), 3)
    assert len(workers.compile_parts(_parts(), 3)) == 3  # a new worker serves


def test_a_worker_whose_parent_died_exits():
    """An orphaned worker (its compiling process killed) stops within seconds,
    even while its requests' pipe stays open."""
    import os
    import subprocess
    import sys
    import time

    shell = subprocess.Popen(["sh", "-c", f"exec 3<&0; {sys.executable} -m {workers.__name__} $$ <&3 & echo $!"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    pid = int(shell.stdout.readline())
    shell.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] in "ZX":
                    break
        except FileNotFoundError:
            break
        time.sleep(0.2)
    else:
        os.kill(pid, 9)
        pytest.fail("the orphaned worker kept running")
    shell.stdin.close()
    shell.stdout.close()
