"""The process-wide runtime: thread pool and large-buffer cache."""

from __future__ import annotations

import ctypes
import os
import threading
import time

import numpy as np
import pytest

from dfc.compiler import ExecutionEngine, parse_module
from dfc.compiler.codegen import runtime
from support.openmp_team import openmp_team

_BODY = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
_PARALLEL_FOR = ctypes.CFUNCTYPE(
    None, ctypes.c_void_p, ctypes.c_void_p, *[ctypes.c_int64] * 5
)


def _parallel_for():
    return _PARALLEL_FOR(runtime.install().addresses["__dfc_parallel_for"])


def _record_chunks(lb, ub, step, min_iters, max_threads, pause=0.0, probe=threading.get_ident):
    """Run the pool with a Python body; the (lo, hi, probe()) of every chunk."""
    chunks = []

    def body(ctx, lo, hi):
        chunks.append((lo, hi, probe()))
        time.sleep(pause)  # releases the GIL, so another thread can claim a chunk

    callback = _BODY(body)
    _parallel_for()(ctypes.cast(callback, ctypes.c_void_p), None, lb, ub, step, min_iters, max_threads)
    return sorted(chunks)


@pytest.fixture(params=["dfc", "openmp"])
def pool(request):
    """Each test with dfc's own pool, and with the chunks run on an OpenMP team."""
    if request.param == "dfc":
        runtime.use_openmp(None)
        yield request.param
        return
    with openmp_team():
        yield request.param


def test_openmp_is_found_once_loaded():
    with openmp_team():
        assert "libgomp" in runtime.loaded_openmp()


def test_pool_splits_into_contiguous_chunks_on_several_threads(pool):
    chunks = _record_chunks(0, 1000, 1, 1, 4, pause=0.05)
    assert [(lo, hi) for lo, hi, _ in chunks] == [(0, 250), (250, 500), (500, 750), (750, 1000)]
    assert len({t for *_, t in chunks}) > 1, "every chunk ran on one thread"
    if pool == "openmp":
        in_parallel = ctypes.CDLL(runtime.loaded_openmp()).omp_in_parallel
        assert {inside for *_, inside in _record_chunks(0, 1000, 1, 1, 4, probe=in_parallel)} == {1}


def test_parked_pool_still_runs_every_chunk():
    """`__dfc_pool_park` (called before BLAS calls) only sends idle workers to
    sleep; the next loop wakes them and they take chunks again."""
    park = ctypes.CFUNCTYPE(None)(runtime.install().addresses["__dfc_pool_park"])
    for _ in range(3):
        park()
        chunks = _record_chunks(0, 1000, 1, 1, 4, pause=0.05)
        assert [(lo, hi) for lo, hi, _ in chunks] == [(0, 250), (250, 500), (500, 750), (750, 1000)]
        assert len({t for *_, t in chunks}) > 1, "every chunk ran on one thread"


def test_pool_respects_step_and_min_iters(pool):
    # 10 iterations by step 3 from 5: induction values 5, 8, ..., 32
    chunks = _record_chunks(5, 35, 3, 4, 8)
    assert [(lo, hi) for lo, hi, _ in chunks] == [(5, 20), (20, 35)]
    # too little work for two chunks: one call on the calling thread
    assert _record_chunks(0, 10, 1, 6, 8) == [(0, 10, threading.get_ident())]
    assert _record_chunks(7, 7, 1, 1, 8) == []


def test_back_to_back_jobs_run_each_chunk_once_with_their_own_bounds():
    """Workers that wake late for a job find its chunks claimed (tagged with
    the job) and never run them with a later job's bounds: over many short
    jobs of different ranges, each job's chunks cover its range exactly once."""
    runtime.use_openmp(None)
    seen = []
    callback = _BODY(lambda ctx, lo, hi: seen.append((ctx, lo, hi)))
    for job in range(1, 301):
        n = 2 + job % 7
        _parallel_for()(ctypes.cast(callback, ctypes.c_void_p), job, 0, n, 1, 1, 2)
    by_job = {}
    for job, lo, hi in seen:
        by_job.setdefault(job, []).append((lo, hi))
    assert sorted(by_job) == list(range(1, 301))
    for job, chunks in by_job.items():
        n = 2 + job % 7
        assert sorted(chunks) == [(0, (n + 1) // 2), ((n + 1) // 2, n)], job


def test_pool_reused_by_concurrent_callers(pool):
    """Calls from several Python threads into a parallel module: whichever
    finds the pool busy runs serially, and every result is right."""
    text = """func.func @f(%x: tensor<100000xf32>) -> tensor<100000xf32> {
  %r = df.map (%i) in (100000) outs(%o = %x : tensor<100000xf32>) {
    %u = df.read %x[%i] : tensor<100000xf32>
    %w = df.tasklet (%u) : (f32) -> f32 {
    ^bb0(%p: f32):
      %e = math.exp %p : f32
      df.yield %e : f32
    }
    df.write %w, %o[%i] : tensor<100000xf32>
  } -> tensor<100000xf32>
  func.return %r : tensor<100000xf32>
}"""
    engine = ExecutionEngine(parse_module(text), threads=2)
    assert "__dfc_parallel_for" in engine.jit.llvm_ir
    errors = []

    def worker(seed):
        x = np.random.default_rng(seed).standard_normal(100000).astype(np.float32)
        for _ in range(50):
            if not np.allclose(engine.invoke("f", x), np.exp(x), rtol=1e-5):
                errors.append(seed)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


@pytest.fixture
def cache_limit():
    runtime.set_cache_limit(0)  # start from an empty cache
    yield runtime.set_cache_limit
    runtime.set_cache_limit(1 << 30)


def _doubling_engine(n: int):
    text = f"""func.func @twice(%x: tensor<{n}xf32>) -> tensor<{n}xf32> {{
  %r = nn.add %x, %x : (tensor<{n}xf32>, tensor<{n}xf32>) -> tensor<{n}xf32>
  func.return %r : tensor<{n}xf32>
}}"""
    return ExecutionEngine(parse_module(text), threads=1), np.arange(n, dtype=np.float32)


def _big_result_engine():
    return _doubling_engine(3 << 20)  # 12 MiB of f32


def test_large_results_are_reused_after_release(cache_limit):
    engine, x = _big_result_engine()
    cache_limit(64 << 20)
    first = engine.invoke("twice", x)
    address = first.ctypes.data
    assert address % (2 << 20) == 0, "large buffers are 2 MiB-aligned"
    np.testing.assert_array_equal(first, 2 * x)
    del first
    assert runtime.cached_bytes() == 12 << 20
    second = engine.invoke("twice", x)
    assert second.ctypes.data == address
    assert runtime.cached_bytes() == 0
    np.testing.assert_array_equal(second, 2 * x)


@pytest.mark.parametrize("n, cached", [(250_000, 1 << 20), (8_000, 0)])
def test_medium_results_are_reused_and_small_ones_are_not_kept(cache_limit, n, cached):
    """1,000,000 bytes are kept as 1 MiB (64 KiB steps) and served again (glibc
    would unmap them and the next call fault every page in); 32 KB are freed."""
    engine, x = _doubling_engine(n)
    cache_limit(64 << 20)
    first = engine.invoke("twice", x)
    address = first.ctypes.data
    del first
    assert runtime.cached_bytes() == cached
    second = engine.invoke("twice", x)
    if cached:
        assert second.ctypes.data == address
    assert runtime.cached_bytes() == 0
    np.testing.assert_array_equal(second, 2 * x)


def test_a_view_keeps_a_result_alive(cache_limit):
    engine, x = _big_result_engine()
    cache_limit(64 << 20)
    view = engine.invoke("twice", x)[1:]
    assert runtime.cached_bytes() == 0
    np.testing.assert_array_equal(view, 2 * x[1:])
    del view
    assert runtime.cached_bytes() == 12 << 20


def test_cache_limit_bounds_what_is_kept(cache_limit):
    engine, x = _big_result_engine()
    cache_limit(64 << 20)
    results = [engine.invoke("twice", x) for _ in range(6)]
    del results
    assert runtime.cached_bytes() == 60 << 20  # five of six fit under 64 MiB
    cache_limit(20 << 20)
    assert runtime.cached_bytes() == 12 << 20
    cache_limit(0)
    assert runtime.cached_bytes() == 0
    engine.invoke("twice", x)  # released at once; nothing is kept with limit 0
    assert runtime.cached_bytes() == 0


@pytest.mark.parametrize("triple", ["aarch64-unknown-linux-gnu", "arm64-apple-macosx13.0.0", "x86_64-apple-macosx13.0.0"])
def test_runtime_builds_for_other_targets(triple):
    """The runtime assumes no libc mutex layout and no x86-only instruction
    elsewhere: its IR verifies and compiles to an object for each target."""
    import llvmlite.binding as llvm

    runtime.install()  # initialises LLVM's targets
    text = runtime.runtime_ir(triple)
    assert ("@llvm.x86." in text) == triple.startswith("x86_64")
    mod = llvm.parse_assembly(text)
    mod.triple = triple
    mod.verify()
    try:
        target = llvm.Target.from_triple(triple)
    except RuntimeError as err:  # an llvmlite built without that backend
        pytest.skip(f"no LLVM backend for {triple}: {err}")
    tm = target.create_target_machine(reloc="pic")
    mod.data_layout = str(tm.target_data)
    assert len(tm.emit_object(mod)) > 1000


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs Linux and two CPUs this process may run on")
def test_a_worker_on_its_callers_cpu_moves_and_stays_unpinned():
    """`__dfc_leave_shared_cpu`, which a worker taking a job calls: on the
    CPU the job's caller was on it moves to another CPU it may use and keeps
    its whole affinity; elsewhere it does nothing. Run on a fresh thread
    pinned to one CPU while it posts, then allowed two."""
    rt = runtime.install()
    libc = ctypes.CDLL(None)
    allowed = sorted(os.sched_getaffinity(0))[:2]
    cpus = rt.cpus.value
    seen = {}

    def thread() -> None:
        rt.cpus.value = 1 << 20  # however many workers earlier tests started
        os.sched_setaffinity(0, {allowed[0]})
        rt.job_cpu.value = libc.sched_getcpu()
        os.sched_setaffinity(0, set(allowed))
        rt.leave_shared_cpu()
        seen["moved"] = (libc.sched_getcpu(), os.sched_getaffinity(0))
        rt.job_cpu.value = allowed[0] if libc.sched_getcpu() != allowed[0] else allowed[1]
        rt.leave_shared_cpu()  # not on the caller's CPU: stays
        seen["stayed"] = os.sched_getaffinity(0)

    worker = threading.Thread(target=thread)
    worker.start()
    worker.join()
    rt.job_cpu.value, rt.cpus.value = -1, cpus
    cpu, affinity = seen["moved"]
    assert cpu == allowed[1] and affinity == set(allowed)
    assert seen["stayed"] == set(allowed)
