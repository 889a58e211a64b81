"""Compile work does not depend on data sizes (issue 36).

The same program at a small size and at 8192 goes through the same passes
to IR of the same structure, and no attribute of it holds more than a few
elements: splat constants stay in their one-element form from the builders
to the LLVM IR, so no stage packs, scans or prints a tensor's elements.
The stages up to `bufferize` also take the same time at both sizes
(`test_compile_time_is_independent_of_sizes`, with --slow: even the least of
five CPU-time samples moved by a fifth on a loaded machine, where the
structural checks above cannot); `python -m
benchmarks.compile_time --only sizes` prints the whole compile's times.
"""

from __future__ import annotations

import time

import pytest
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp

from benchmarks.compile_time import mlp, softmax_loss
from dfc.compiler import PassManager, parse_module
from dfc.compiler.codegen.llvm.module import emit_module
from dfc.dialects.xdsl_fixes import module_text
from dfc.passes import PIPELINES


def largest_attribute(module: ModuleOp) -> int:
    """The most bytes any dense elements attribute of `module` holds."""
    sizes = [len(a.data.data) for op in module.walk() for a in (*op.properties.values(), *op.attributes.values())
             if isinstance(a, DenseIntOrFPElementsAttr)]
    return max(sizes, default=0)


def compile_stages(text: str, fn: str) -> tuple[list[int], list[int], list[int]]:
    """Op counts after autodiff and after each pass of the default pipeline
    up to `bufferize` (lowering then picks serial or parallel loops and GEMMs
    by size), the largest dense attribute after every pass, and the lengths
    of the lowered IR's text and of the LLVM IR."""
    module = parse_module(text)
    PassManager.parse(f"autodiff{{func={fn}}}").run(module)
    counts, largest, lowering = [len(list(module.walk()))], [largest_attribute(module)], False
    for p in PassManager.parse(PIPELINES["default"]).passes:
        PassManager(passes=[p]).run(module)
        largest.append(largest_attribute(module))
        if not lowering:
            counts.append(len(list(module.walk())))
        lowering = lowering or p.name == "bufferize"
    llvm_ir = str(emit_module(module, fast_math=True, num_threads=2, parallel_min_work=1 << 17, vector_math=True))
    return counts, largest, [len(module_text(module)), len(llvm_ir)]


@pytest.mark.parametrize("fn, small, large", [
    ("softmax_loss", softmax_loss(64, 512), softmax_loss(8192, 8192)),
    pytest.param("mlp", mlp(64), mlp(8192), marks=pytest.mark.slow),  # the softmax case in CI
])
def test_compile_work_is_independent_of_sizes(fn, small, large):
    small_counts, small_largest, small_text = compile_stages(small, fn)
    large_counts, large_largest, large_text = compile_stages(large, fn)
    assert large_counts == small_counts
    assert max(large_largest) <= 64 and max(small_largest) <= 64, (small_largest, large_largest)
    # Lowering picks parallel loops and GEMMs with epilogues at the larger
    # size (the mlp's lowered text doubles); nothing grows with the data.
    assert large_text[0] < 3 * small_text[0] and large_text[1] < 1.5 * small_text[1], (small_text, large_text)


def front_cpu_seconds(text: str, fn: str) -> float:
    """CPU seconds of parsing `text`, differentiating `@fn` and running the
    default pipeline up to `bufferize` (the stages whose work
    `test_compile_work_is_independent_of_sizes` shows to be the same at
    every size; lowering then picks loops by size, by design)."""
    passes = PIPELINES["default"].split(",")
    pipeline = ",".join(passes[: passes.index("bufferize") + 1])
    start = time.process_time()
    module = parse_module(text)
    PassManager.parse(f"autodiff{{func={fn}}}", verify_each=False).run(module)
    PassManager.parse(pipeline, verify_each=False).run(module)
    return time.process_time() - start


@pytest.mark.slow  # a measurement of time: CI checks the work (test_compile_work_is_independent_of_sizes)
@pytest.mark.parametrize("fn, small, large", [
    ("softmax_loss", softmax_loss(64, 512), softmax_loss(8192, 8192)),
    ("mlp", mlp(64), mlp(8192)),
])
def test_compile_time_is_independent_of_sizes(fn, small, large):
    """The same program at 64 and at 8192 compiles in the same time, within
    20%: of each, the least of five samples of three compiles, alternated
    (the process's CPU time, so that other processes on the machine count
    little; one compile takes a few tenths of a second, and single runs
    moved by a third on a loaded machine)."""
    times: dict[str, list[float]] = {"small": [], "large": []}
    front_cpu_seconds(small, fn)  # first use: imports, caches
    for _ in range(5):
        times["small"].append(sum(front_cpu_seconds(small, fn) for _ in range(3)))
        times["large"].append(sum(front_cpu_seconds(large, fn) for _ in range(3)))
    t_small, t_large = min(times["small"]), min(times["large"])
    assert abs(t_large - t_small) <= 0.2 * min(t_small, t_large), times
