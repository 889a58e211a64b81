"""dfc's thread pool against OpenMP (libgomp), in one run.

    python -m benchmarks.thread_runtime

The same parallel loop, `y[i] = a * x[i] + y[i]`, compiled by dfc (its pool,
`compiler/codegen/runtime.ll`) and as C with `#pragma omp parallel for` (gcc
-O3 -march=native -fopenmp, called through ctypes), on 2 threads. Small sizes
measure what a parallel loop costs to start and join (back-to-back loops, as
in a time-step loop); large ones the throughput. dfc's function returns a new
array, so each call also copies y once, which the C version (updating y in
place) does not: with 10 loops per call at 2^24 that copy was a tenth of the
traffic and made dfc look 7-12% slower; 40 loops per call make it 2.5%.
Needs gcc with OpenMP.
"""

from __future__ import annotations

import ctypes
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.common import median_time
from dfc.compiler import ExecutionEngine, parse_module

C_SOURCE = """
#include <omp.h>
void saxpy(long n, float a, const float *x, float *y, long repeat, int threads) {
  for (long r = 0; r < repeat; ++r) {
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (long i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
  }
}
"""

DFC = """func.func @saxpy(%a: f32, %x: tensor<{n}xf32>, %y: tensor<{n}xf32>) -> tensor<{n}xf32> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cr = arith.constant {repeat} : index
  %r = scf.for %t = %c0 to %cr step %c1 iter_args(%acc = %y) -> (tensor<{n}xf32>) {{
    %s = df.map (%i) in ({n}) outs(%o = %acc : tensor<{n}xf32>) {{
      %u = df.read %x[%i] : tensor<{n}xf32>
      %v = df.read %acc[%i] : tensor<{n}xf32>
      %w = df.tasklet (%a, %u, %v) : (f32, f32, f32) -> f32 {{
      ^bb0(%p: f32, %q: f32, %z: f32):
        %m = arith.mulf %p, %q : f32
        %k = arith.addf %m, %z : f32
        df.yield %k : f32
      }}
      df.write %w, %o[%i] : tensor<{n}xf32>
    }} -> tensor<{n}xf32>
    scf.yield %s : tensor<{n}xf32>
  }}
  func.return %r : tensor<{n}xf32>
}}"""


def openmp_saxpy(folder: Path):
    src, lib = folder / "saxpy.c", folder / "saxpy.so"
    src.write_text(C_SOURCE)
    subprocess.run(["gcc", "-O3", "-march=native", "-fopenmp", "-shared", "-fPIC", str(src), "-o", str(lib)], check=True)
    fn = ctypes.CDLL(str(lib)).saxpy
    fn.argtypes = [ctypes.c_long, ctypes.c_float, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long, ctypes.c_int]
    return fn


def main() -> None:
    threads = 2
    with tempfile.TemporaryDirectory() as tmp:
        omp = openmp_saxpy(Path(tmp))
        print(f"per parallel loop, {threads} threads (lower is better)")
        for n, repeat in ((1 << 16, 2000), (1 << 20, 200), (1 << 24, 40)):
            x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
            y = np.zeros(n, np.float32)
            engine = ExecutionEngine(parse_module(DFC.format(n=n, repeat=repeat)), threads=threads)
            t_dfc = median_time(lambda: engine.invoke("saxpy", 0.5, x, y), repeats=5) / repeat
            t_omp = median_time(lambda: omp(n, 0.5, x.ctypes.data, y.ctypes.data, repeat, threads), repeats=5) / repeat
            print(f"  n = {n:>9}: dfc pool {t_dfc * 1e6:9.1f} us  OpenMP {t_omp * 1e6:9.1f} us  (OpenMP/dfc {t_omp / t_dfc:.2f}x)")


if __name__ == "__main__":
    main()
