"""Light kernels (`llvm.light_kernels`): outlined loops of little work, compiled with LLVM's light pipeline."""

from __future__ import annotations

import numpy as np
import pytest

from dfc.compiler import ExecutionEngine, parse_module
from dfc.compiler.codegen.llvm import workers
from dfc.compiler.codegen.llvm.light_kernels import LIGHT_WORK
from dfc.compiler.codegen.llvm.work_estimate import static_work
from dfc.compiler.engine import clear_jit_cache

SMALL, LARGE = 64, 4 * LIGHT_WORK

# A parallel loop over SMALL elements (light), one over LARGE (not; its body
# differs, else LLVM's mergefunc would make it call the first's), and a
# chunked parallel loop over the rows of an 8 x SMALL matrix whose chunk size
# is the constant expression 9 / 2 (8 x SMALL x 3 ops: light).
MODULE = f"""
func.func @f(%a: memref<{SMALL}xf32>, %b: memref<{LARGE}xf32>, %m: memref<8x{SMALL}xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c9 = arith.constant 9 : index
  %cs = arith.constant {SMALL} : index
  %cl = arith.constant {LARGE} : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  "scf.parallel"(%c0, %cs, %c1) <{{operandSegmentSizes = array<i32: 1, 1, 1, 0>}}> ({{
  ^bb0(%i: index):
    %x = memref.load %a[%i] : memref<{SMALL}xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %a[%i] : memref<{SMALL}xf32>
    scf.reduce
  }}) : (index, index, index) -> ()
  "scf.parallel"(%c0, %cl, %c1) <{{operandSegmentSizes = array<i32: 1, 1, 1, 0>}}> ({{
  ^bb0(%i: index):
    %x = memref.load %b[%i] : memref<{LARGE}xf32>
    %y = arith.mulf %x, %three : f32
    memref.store %y, %b[%i] : memref<{LARGE}xf32>
    scf.reduce
  }}) : (index, index, index) -> ()
  %chunk = arith.divui %c9, %c2 : index
  "scf.parallel"(%c0, %c2, %c1) <{{operandSegmentSizes = array<i32: 1, 1, 1, 0>}}> ({{
  ^bb0(%c: index):
    %lo = arith.muli %c, %chunk : index
    %hi0 = arith.addi %lo, %chunk : index
    %hi = arith.minui %hi0, %c8 : index
    scf.for %r = %lo to %hi step %c1 {{
      scf.for %j = %c0 to %cs step %c1 {{
        %x = memref.load %m[%r, %j] : memref<8x{SMALL}xf32>
        %y = arith.addf %x, %two : f32
        memref.store %y, %m[%r, %j] : memref<8x{SMALL}xf32>
      }}
    }}
    scf.reduce
  }}) : (index, index, index) -> ()
  func.return
}}
"""


def _loops():
    return [op for op in parse_module(MODULE).walk() if op.name == "scf.parallel"]


def test_static_work_counts_the_ops_of_every_iteration():
    """Three ops per element; the chunked loop's trip count is read off its
    bounds (`min(lo + 9 / 2, 8)`); a loop with a bound known only at run time has none."""
    small, large, chunked = _loops()
    assert static_work(small) == 3 * SMALL
    assert static_work(large) == 3 * LARGE
    assert static_work(chunked) == 2 * (3 + 4 * SMALL * 3)  # per chunk: its bounds, then 4 rows
    dynamic = parse_module("""
    func.func @g(%a: memref<?xf32>, %n: index) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      scf.for %i = %c0 to %n step %c1 {
        %x = memref.load %a[%i] : memref<?xf32>
        memref.store %x, %a[%i] : memref<?xf32>
      }
      func.return
    }""")
    assert static_work(next(op for op in dynamic.walk() if op.name == "scf.for")) is None


@pytest.fixture
def split_parts(monkeypatch):
    """Every module compiles as parts (in this process), compiled anew."""
    monkeypatch.setattr(workers, "PARALLEL_MIN_CHARS", 0)
    monkeypatch.setenv("DFC_COMPILE_JOBS", "1")
    clear_jit_cache()
    yield
    clear_jit_cache()


def test_light_kernels_compile_light_and_compute_the_same(split_parts):
    """The small loops' parts are compiled without vectorisation, the large
    loop's part is vectorised; the results are those of NumPy."""
    engine = ExecutionEngine(parse_module(MODULE), threads=2)
    irs = engine.jit.object.irs
    light = [ir for ir in irs if workers._light(ir)]
    assert len(light) == 2 and all("x float>" not in ir for ir in light)
    heavy = [ir for ir in irs if f"!{workers.LIGHT_KIND}" not in ir and "x float>" in ir]
    assert len(heavy) == 1
    rng = np.random.default_rng(0)
    a, b, m = (rng.standard_normal(s).astype(np.float32) for s in (SMALL, LARGE, (8, SMALL)))
    want = (a * 2, b * 3, m + 2)
    engine.invoke("f", a, b, m)
    for got, expected in zip((a, b, m), want, strict=True):
        np.testing.assert_array_equal(got, expected)


def test_a_light_body_merged_with_a_heavy_one_stays_vectorised(split_parts):
    """A small and a large loop with the same body: LLVM's mergefunc keeps one
    body for both, and the part the large loop runs is still vectorised."""
    same = MODULE.replace("%y = arith.mulf %x, %three : f32", "%y = arith.mulf %x, %two : f32")
    engine = ExecutionEngine(parse_module(same), threads=2)
    assert any("x float>" in ir for ir in engine.jit.object.irs)
    rng = np.random.default_rng(1)
    a, b, m = (rng.standard_normal(s).astype(np.float32) for s in (SMALL, LARGE, (8, SMALL)))
    want = (a * 2, b * 2, m + 2)
    engine.invoke("f", a, b, m)
    for got, expected in zip((a, b, m), want, strict=True):
        np.testing.assert_array_equal(got, expected)
