"""mem-plan: the layout checker, peak memory, and programs that compute what they did without it."""

from __future__ import annotations

import io
import re
import threading
from contextlib import redirect_stderr
from functools import cache
from pathlib import Path
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import MemRefType, ModuleOp

import dfc.passes.mem_plan as mem_plan
from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.codegen.llvm.module import emit_module
from dfc.dialects.diagnostics import CompileError
from dfc.passes import PIPELINES
from dfc.passes.mem_plan import Plan, Slot, pack, peak, verify_plan

EXAMPLES = Path(__file__).parents[2] / "examples"
RNG = np.random.default_rng(5)
UNPLANNED = PIPELINES["default"].replace(",mem-plan", "")
ARENA_ONLY = UNPLANNED + ",mem-plan{stack-limit=0}"
WITH_STATS = PIPELINES["default"].replace(",mem-plan", ",mem-plan{print-stats=true}")
"""The default pipeline, printing the peaks."""

CASES = {
    "gemm_sum": ("gemm_sum", np.float32, lambda: [RNG.standard_normal(s).astype(np.float32) for s in [(5, 4), (4, 3)]]),
    "softmax": ("softmax_loss", np.float32, lambda: [RNG.standard_normal((64, 512)).astype(np.float32) for _ in range(2)]),
    "jacobi2d": ("jacobi2d", np.float64, lambda: [RNG.standard_normal((64, 64))]),
    "mlp": ("mlp", np.float32, lambda: [RNG.standard_normal((8, 784)).astype(np.float32), RNG.integers(0, 10, 8)]
            + [(RNG.standard_normal(s) * 0.05).astype(np.float32)
               for s in [(120, 784), (120,), (32, 120), (32,), (10, 32), (10,)]]),
}  # fmt: skip


@cache
def example(name: str):
    """The example's module with its gradient function (`autodiff`)."""
    module = parse_module((EXAMPLES / f"{name}.mlir").read_text())
    PassManager.parse("autodiff").run(module)
    return module


@cache
def lowered(name: str, pipeline: str) -> tuple[ModuleOp, list[Plan], dict[str, tuple[int, int]]]:
    """The example `name` after `pipeline` (once per process: the tests below
    share it), the plans mem-plan made (each passed the checker) and, where
    `pipeline` prints them, the (peak bytes before, after) of each function."""
    plans: list[Plan] = []

    def record(plan: Plan) -> None:
        plans.append(plan)
        verify_plan(plan)

    module, err = example(name).clone(), io.StringIO()
    with patch.object(mem_plan, "verify_plan", record), redirect_stderr(err):
        PassManager.parse(pipeline).run(module)
    peaks = re.findall(r"mem-plan: @(\w+) peak-before=(\d+) peak-after=(\d+)", err.getvalue())
    return module, plans, {f: (int(b), int(a)) for f, b, a in peaks}


# -- the checker ----------------------------------------------------------


def test_checker_rejects_live_buffers_sharing_bytes():
    a, b = Slot("a", 0, 5, 128, 0), Slot("b", 3, 8, 128, 64)  # live together over 3..5, bytes 64..128 shared
    with pytest.raises(CompileError, match="a and b are live together but share arena bytes"):
        verify_plan(Plan("f", (a, b), 192))


def test_checker_rejects_misplaced_slots():
    with pytest.raises(CompileError, match="misplaced"):
        verify_plan(Plan("f", (Slot("a", 0, 1, 64, 32),), 128))  # not 64-byte aligned
    with pytest.raises(CompileError, match="misplaced"):
        verify_plan(Plan("f", (Slot("a", 0, 1, 128, 0),), 64))  # past the arena's end


def test_checker_accepts_reuse_after_death():
    verify_plan(Plan("f", (Slot("a", 0, 2, 128, 0), Slot("b", 3, 8, 128, 0)), 128))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 10), st.integers(1, 8)), max_size=12))
def test_packed_plans_pass_the_checker_and_stay_within_bounds(raw):
    slots = [Slot(f"s{k}", start, start + length, 64 * units) for k, (start, length, units) in enumerate(raw)]
    plan = pack("f", slots)
    verify_plan(plan)
    assert [s.name for s in plan.slots] == [s.name for s in slots]
    assert peak((s.start, s.end, s.size) for s in slots) <= plan.size <= sum(s.size for s in slots)


def test_checker_accepts_the_plans_of_real_programs():
    """Every plan the pass makes for the examples' gradients is checked, and
    also disjoint when replayed point by point."""
    plans = [p for name in ("mlp", "softmax", "jacobi2d") for pipeline in (WITH_STATS, ARENA_ONLY)
             for p in lowered(name, pipeline)[1]]
    assert sum(len(p.slots) > 1 for p in plans) >= 6
    for plan in plans:
        for point in {s.start for s in plan.slots}:
            live = sorted((s.offset, s.offset + s.size) for s in plan.slots if s.start <= point <= s.end)
            assert all(hi <= lo for (_, hi), (lo, _) in zip(live, live[1:]))


# -- peak memory ----------------------------------------------------------


def test_peak_bytes_drop():
    for name in CASES:
        peaks = lowered(name, WITH_STATS)[2]
        assert peaks and all(after <= before for before, after in peaks.values()), peaks
        if name in ("mlp", "jacobi2d"):
            before, after = peaks[f"{CASES[name][0]}_grad"]
            assert after < before


def test_only_returned_buffers_stay_on_the_heap():
    """With no stack frames, the allocs left are the results, which the caller frees."""
    for name in CASES:
        for op in lowered(name, ARENA_ONLY)[0].walk():
            if op.name == "memref.alloc":
                assert "func.return" in {u.operation.name for u in op.results[0].uses}
            if op.name == "func.return":
                assert all(v.owner.name == "memref.alloc" for v in op.operands if isinstance(v.type, MemRefType))


def test_stack_frames_are_in_the_entry_block():
    module = parse_module("""
func.func @f(%x: memref<16xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f32) {
    %t = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
    "memref.copy"(%x, %t) : (memref<16xf32>, memref<16xf32>) -> ()
    %v = memref.load %t[%c0] : memref<16xf32>
    %s = arith.addf %acc, %v : f32
    memref.dealloc %t : memref<16xf32>
    scf.yield %s : f32
  }
  func.return %r : f32
}""")
    PassManager.parse("mem-plan").run(module)
    text = str(emit_module(module))
    body = text[re.search(r'define internal float @"?_dfc_fn_f', text).start() :]
    entry, rest = body.split("start:", 1)
    assert re.search(r"alloca \[64 x i8\], align 64", entry)
    assert "alloca" not in rest and "aligned_alloc" not in body


# -- numerics -------------------------------------------------------------


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("gradient,stack", [
    (True, True), (False, False),
    pytest.param(True, False, marks=pytest.mark.slow), pytest.param(False, True, marks=pytest.mark.slow),
])  # fmt: skip; CI: each value of each option once per program
def test_planned_matches_unplanned(name, gradient, stack):
    fn, dtype, make_args = CASES[name]
    args = make_args()
    if gradient:
        fn, args = f"{fn}_grad", args + [np.array(1.0, dtype)]
    module = example(name)
    planned = _as_tuple(ExecutionEngine(module, pipeline=None if stack else ARENA_ONLY).invoke(fn, *args))
    unplanned = _as_tuple(ExecutionEngine(module, pipeline=UNPLANNED).invoke(fn, *args))
    for p, u in zip(planned, unplanned, strict=True):
        rtol = 1e-12 if p.dtype == np.float64 else 1e-5
        np.testing.assert_allclose(p, u, rtol=rtol, atol=1e-6 * max(1.0, float(np.abs(u).max())))


def _softmax_loss_grad(x, w):
    s = np.exp(x - x.max(1, keepdims=True))
    s /= s.sum(1, keepdims=True)
    return (s * w).sum(), s * (w - (s * w).sum(1, keepdims=True)), s


def _jacobi2d(a):
    a, b = a.copy(), a.copy()
    for _ in range(20):
        b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])
        a[1:-1, 1:-1] = 0.2 * (b[1:-1, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] + b[2:, 1:-1] + b[:-2, 1:-1])
    return a.sum()


def test_arena_reused_across_many_calls():
    softmax, jacobi = (ExecutionEngine(example(name), pipeline=ARENA_ONLY) for name in ("softmax", "jacobi2d"))
    assert not softmax.jit.reentrant and not jacobi.jit.reentrant  # both have arenas
    for _ in range(200):
        x, w = (RNG.standard_normal((64, 512)).astype(np.float32) * 3 for _ in range(2))
        got = softmax.invoke("softmax_loss_grad", x, w, np.array(1.0, np.float32))
        for g, want in zip(got, _softmax_loss_grad(x, w), strict=True):
            np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-5)
        a = RNG.standard_normal((64, 64))
        np.testing.assert_allclose(jacobi.invoke("jacobi2d", a), _jacobi2d(a), rtol=1e-12)


def test_concurrent_calls_are_serialised():
    """Threads share the engine's arena; without the engine's lock this loses results."""
    engine = ExecutionEngine(example("jacobi2d"), pipeline=ARENA_ONLY)
    assert not engine.jit.reentrant
    inputs = [RNG.standard_normal((64, 64)) for _ in range(4)]
    expected = [engine.invoke("jacobi2d", a) for a in inputs]
    wrong: list[int] = []

    def worker(k: int) -> None:
        for _ in range(100):
            if engine.invoke("jacobi2d", inputs[k]) != expected[k]:
                wrong.append(k)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong
