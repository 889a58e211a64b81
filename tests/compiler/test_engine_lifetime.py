"""The engine's compiled code is released: a bounded LRU module cache,
`ExecutionEngine.close()` and the context manager."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from dfc.compiler import engine
from dfc.compiler.engine import ExecutionEngine, clear_jit_cache, set_jit_cache_size
from dfc.compiler.parsing import parse_module

SHIFT = """
func.func @f(%x: tensor<4xf64>) -> tensor<4xf64> {{
  %e = tensor.empty() : tensor<4xf64>
  %r = df.map (%i) in (4) outs(%o = %e : tensor<4xf64>) {{
    %v = df.read %x[%i] : tensor<4xf64>
    %c = arith.constant {k}.0 : f64
    %w = arith.addf %v, %c : f64
    df.write %w, %o[%i] : tensor<4xf64>
  }} -> tensor<4xf64>
  func.return %r : tensor<4xf64>
}}
"""


def shift(k: int, **options) -> ExecutionEngine:
    return ExecutionEngine(parse_module(SHIFT.format(k=k)), **options)


@pytest.fixture
def cache_size():
    """Restores the cache size the process started with."""
    size = engine._CACHE.size
    yield set_jit_cache_size
    set_jit_cache_size(size)


def test_closed_engine_raises_and_a_sharing_engine_keeps_working():
    x = np.arange(4.0)
    first, second = shift(101), shift(101)
    assert first.jit is second.jit
    first.close()
    first.close()
    with pytest.raises(RuntimeError, match="closed"):
        first.invoke("f", x)
    np.testing.assert_array_equal(second.invoke("f", x), x + 101)
    second.close()
    third = shift(101)
    assert third.jit is not None and third.jit is not second.jit
    np.testing.assert_array_equal(third.invoke("f", x), x + 101)


def test_context_manager_releases_the_code():
    x = np.arange(4.0)
    with shift(102) as e:
        np.testing.assert_array_equal(e.invoke("f", x), x + 102)
        jit = e.jit
    assert e.jit is None and not jit.users
    assert all(cached is not jit for cached in engine._CACHE._entries.values())
    with pytest.raises(RuntimeError, match="closed"):
        e.invoke("f", x)


def test_cache_evicts_the_least_recently_used(cache_size):
    cache_size(2)
    a, b = shift(103), shift(104)
    assert shift(103).jit is a.jit  # a is now the most recent
    c = shift(105)
    assert len(engine._CACHE) == 2
    assert shift(103).jit is a.jit and shift(105).jit is c.jit
    assert shift(104).jit is not b.jit  # evicted: compiled again
    np.testing.assert_array_equal(b.invoke("f", np.zeros(4)), np.full(4, 104.0))  # still usable
    clear_jit_cache()
    assert len(engine._CACHE) == 0
    with pytest.raises(ValueError, match="at least 0"):
        cache_size(-1)


CYCLES = """
import gc, sys
from dfc.compiler.engine import ExecutionEngine
from dfc.compiler.parsing import parse_module

SOURCE = sys.argv[1]
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096
def cycle(k):
    e = ExecutionEngine(parse_module(SOURCE.format(k=k)))
    assert e.invoke("f", 1.0) == k + 1.0
    if k % 2:
        e.close()
    else:
        with e:  # the other half leave their engine through the context manager
            pass
for k in range(10**6, 10**6 + 40):  # warm up: the runtime, the allocator, the full module cache
    cycle(k)
gc.collect()
before = rss()
for k in range(int(sys.argv[2])):
    cycle(k)
gc.collect()
print(rss() - before)
"""
SCALAR = """
func.func @f(%x: f64) -> f64 {{
  %c = arith.constant {k}.0 : f64
  %r = arith.addf %x, %c : f64
  func.return %r : f64
}}
"""
SCALAR_MAP = """
func.func @f(%x: f64) -> f64 {{
  %e = tensor.empty() : tensor<4xf64>
  %t = df.map (%i) in (4) outs(%o = %e : tensor<4xf64>) {{
    %c = arith.constant {k}.0 : f64
    %w = arith.addf %x, %c : f64
    df.write %w, %o[%i] : tensor<4xf64>
  }} -> tensor<4xf64>
  %c0 = arith.constant 0 : index
  %r = tensor.extract %t[%c0] : tensor<4xf64>
  func.return %r : f64
}}
"""


def rss_growth(source: str, cycles: int) -> int:
    """Bytes the RSS of a fresh process grows by over `cycles` distinct
    modules compiled at O3, called and released, after a warm-up."""
    proc = subprocess.run([sys.executable, "-c", CYCLES, source, str(cycles)], capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout)


def test_compile_close_cycles_keep_memory_flat():
    """300 modules already at LLVM level (no dfc pipeline, so LLVM's share
    shows): the code and the optimiser's pass manager are given back."""
    growth = rss_growth(SCALAR, 300)
    assert growth < 5 * 2**20, f"RSS grew {growth / 2**20:.1f} MiB over 300 modules"


@pytest.mark.slow
def test_thousand_lowered_modules_keep_memory_flat():
    """1000 modules through the whole pipeline (df maps, bufferization, mem-plan)."""
    growth = rss_growth(SCALAR_MAP, 1000)
    assert growth < 5 * 2**20, f"RSS grew {growth / 2**20:.1f} MiB over 1000 modules"


def test_a_result_held_at_exit_is_quiet():
    """A result array alive when the interpreter shuts down (here one that
    outlives the runtime module's globals) is left to the exiting process."""
    program = (
        "import sys\n"
        "import numpy as np\n"
        "from dfc.compiler.engine import ExecutionEngine\n"
        "from dfc.compiler.parsing import parse_module\n"
        "import dfc.compiler.codegen.runtime as runtime\n"
        f"source = {SHIFT.format(k=1)!r}\n"
        "r = ExecutionEngine(parse_module(source)).invoke('f', np.zeros(4))\n"
        "assert r[0] == 1.0\n"
        "sys.keep = [runtime, sys.modules['__main__']]  # cleared in reverse import order: the runtime first\n"
    )
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
