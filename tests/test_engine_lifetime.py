"""The engine's compiled code is released: a bounded LRU module cache,
`ExecutionEngine.close()` and the context manager."""

from __future__ import annotations

import gc

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


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


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


def test_compiling_many_modules_keeps_memory_bounded(cache_size):
    """500 distinct modules at opt level 0 (the O3 pass pipeline keeps about
    80 KiB a module inside LLVM): closed engines and engines merely dropped
    (evicted from the cache) both give their code back. Without eviction or
    close, each module kept about 760 KiB."""
    cache_size(16)
    x = np.zeros(4)
    for k in range(20):  # warm up the runtime and the allocator
        shift(1000 + k, opt_level=0).close()
    gc.collect()
    before = rss_bytes()
    n = 500
    for k in range(n):
        e = shift(k, opt_level=0)
        assert e.invoke("f", x)[0] == k
        if k % 2:
            e.close()
        del e
    gc.collect()
    per_module = (rss_bytes() - before) / n
    assert per_module < 150 * 1024, f"RSS grew {per_module / 1024:.0f} KiB per module"
