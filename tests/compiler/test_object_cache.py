"""The on-disk cache of compiled objects (`DFC_CACHE_DIR`)."""

import os

import numpy as np
import pytest

from dfc import ExecutionEngine, parse_module
from dfc.compiler import engine
from dfc.compiler.codegen import object_cache
from dfc.compiler.codegen.llvm.jit import JitModule

SCALE = """
func.func @scale(%x: tensor<16xf32>) -> tensor<16xf32> {{
  %e = tensor.empty() : tensor<16xf32>
  %r = df.map (%i) in (16) outs(%o = %e : tensor<16xf32>) {{
    %v = df.read %x[%i] : tensor<16xf32>
    %k = arith.constant {k} : f32
    %y = arith.mulf %v, %k : f32
    df.write %y, %o[%i] : tensor<16xf32>
  }} -> tensor<16xf32>
  func.return %r : tensor<16xf32>
}}
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DFC_CACHE_DIR", str(tmp_path))
    return tmp_path


def fresh_engine(text: str) -> ExecutionEngine:
    """An engine for `text` that cannot come from this process's memory cache."""
    engine._CACHE.clear()
    return ExecutionEngine(parse_module(text))


def refuse_to_compile(monkeypatch):
    def compile_(*args, **kwargs):
        raise AssertionError("compiled although the disk cache holds the module")

    monkeypatch.setattr(JitModule, "__init__", compile_)


def test_second_engine_loads_machine_code_from_disk(cache, monkeypatch):
    x = np.arange(16, dtype=np.float32)
    first = fresh_engine(SCALE.format(k="3.0")).invoke("scale", x)
    assert len(list(cache.glob("*.dfcobj"))) == 1
    refuse_to_compile(monkeypatch)
    second = fresh_engine(SCALE.format(k="3.0"))
    np.testing.assert_array_equal(second.invoke("scale", x), first)
    np.testing.assert_array_equal(first, 3 * x)
    assert "fmul" in second.jit.llvm_ir


def test_different_modules_and_options_get_different_entries(cache):
    fresh_engine(SCALE.format(k="3.0"))
    fresh_engine(SCALE.format(k="4.0"))
    engine._CACHE.clear()
    ExecutionEngine(parse_module(SCALE.format(k="4.0")), opt_level=1)
    assert len(list(cache.glob("*.dfcobj"))) == 3


def test_an_edited_compiler_source_is_a_miss(cache, monkeypatch):
    """The key holds a fingerprint of dfc's sources, so an edited development checkout (same
    version) compiles afresh: here compiler/engine.py seen with another modification time."""
    fresh_engine(SCALE.format(k="3.0"))
    real_stat, edited = os.stat, os.path.realpath(engine.__file__)

    def stat(path, *args, **kwargs):
        result = real_stat(path, *args, **kwargs)
        if os.path.realpath(path) == edited:
            return os.stat_result((*result[:8], result.st_mtime + 1, result[9]))
        return result

    monkeypatch.setattr(object_cache.os, "stat", stat)
    object_cache.source_fingerprint.cache_clear()
    try:
        fresh_engine(SCALE.format(k="3.0"))
    finally:
        object_cache.source_fingerprint.cache_clear()
    assert len(list(cache.glob("*.dfcobj"))) == 2


def test_a_corrupt_entry_is_a_miss(cache):
    fresh_engine(SCALE.format(k="5.0"))
    (entry,) = cache.glob("*.dfcobj")
    entry.write_bytes(entry.read_bytes()[:100])
    x = np.ones(16, np.float32)
    np.testing.assert_array_equal(fresh_engine(SCALE.format(k="5.0")).invoke("scale", x), 5 * x)


def test_size_bound_evicts_least_recently_used(cache, monkeypatch):
    fresh_engine(SCALE.format(k="6.0"))
    (one,) = cache.glob("*.dfcobj")
    monkeypatch.setenv("DFC_CACHE_MAX_MB", str(1.5 * one.stat().st_size / 2**20))
    fresh_engine(SCALE.format(k="7.0"))
    remaining = list(cache.glob("*.dfcobj"))
    assert len(remaining) == 1 and remaining[0] != one


def test_off_without_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("DFC_CACHE_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    fresh_engine(SCALE.format(k="8.0"))
    assert not list(tmp_path.rglob("*.dfcobj"))


SECOND_PROCESS = """
import sys
import numpy as np
from dfc import ExecutionEngine, parse_module
from dfc.compiler.codegen.llvm.jit import JitModule

def compile_(*args, **kwargs):
    raise AssertionError("compiled although the disk cache holds the module")

JitModule.__init__ = compile_
x = np.arange(16, dtype=np.float32)
np.testing.assert_array_equal(ExecutionEngine(parse_module(sys.argv[1])).invoke("scale", x), 8 * x)
assert "sympy" not in sys.modules, "a static module's load imported SymPy"
"""


@pytest.mark.slow  # 2-4 s: a fresh interpreter imports dfc
def test_a_second_process_loads_without_compiling_or_sympy(cache):
    """Another process reads the entry this one wrote, and loading a module
    without dynamic shapes does not pay SymPy's import (0.6 s)."""
    import subprocess
    import sys

    text = SCALE.format(k="8.0")
    fresh_engine(text)
    subprocess.run([sys.executable, "-c", SECOND_PROCESS, text], check=True)
