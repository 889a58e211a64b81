"""Memory against time for a loop's gradient under `autodiff{memory_budget=B}`.

    python -m benchmarks.autodiff_memory [--quick] [--threads N]

The jacobi-2d stencil of examples/jacobi2d.mlir at 512x512 for 200 steps with
each update through sin (the linear stencil's backward sweep needs no forward
value, so nothing would be stored), its gradient compiled with the default
pipeline at several budgets: the full tape (no budget), checkpoints every k
steps with one recomputed segment at a time (the budgets between), and
recomputation from the start (budget 0; quadratic in the steps, so run only
with --quick). Peak is mem-plan's: the largest total of the gradient
function's static buffers alive at once; time is the median call.
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks.common import median_time
from benchmarks.cpu_kernels import scaled_example
from benchmarks.passes import peak_bytes
from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.config import default_threads


def nonlinear_jacobi(size: int, steps: int) -> str:
    """examples/jacobi2d.mlir at size x size for `steps` steps, each update through sin."""
    text = scaled_example("jacobi2d", {
        "64x64": f"{size}x{size}", "(62, 62)": f"({size - 2}, {size - 2})", "(64, 64)": f"({size}, {size})",
        "arith.constant 20 : index": f"arith.constant {steps} : index",
    })
    nonlinear = text.replace("%m = arith.mulf %k, %s3 : f64\n        df.yield %m : f64",
                             "%m = arith.mulf %k, %s3 : f64\n        %q = math.sin %m : f64\n        df.yield %q : f64")
    assert nonlinear.count("math.sin") == 2
    return nonlinear


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="64x64 x 50 steps, the recompute row included")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    threads = args.threads or default_threads()
    size, steps = (64, 50) if args.quick else (512, 200)
    state = 2 * size * size * 8
    budgets = [None, 40 * state, 0] if args.quick else [None, 40 * state]
    text = nonlinear_jacobi(size, steps)
    x = np.random.default_rng(0).standard_normal((size, size))
    print(f"jacobi2d+sin {size}^2 x {steps} gradient, threads {threads}; state {state / 2**20:.2f} MiB, "
          f"full tape {steps * state / 2**20:.0f} MiB")
    want = None
    for budget in budgets:
        module = parse_module(text)
        PassManager.parse("autodiff" + ("" if budget is None else f"{{memory_budget={budget}}}")).run(module)
        peak = peak_bytes(str(module), threads, (), "jacobi2d_grad")
        engine = ExecutionEngine(module, threads=threads)
        got = engine.invoke("jacobi2d_grad", x, np.array(1.0))[1]
        want = got if want is None else want
        seconds = median_time(lambda: engine.invoke("jacobi2d_grad", x, np.array(1.0)), repeats=3, warmup=1)
        label = "no budget" if budget is None else f"budget {budget / 2**20:7.2f} MiB"
        print(f"{label:<22} peak {peak / 2**20:8.2f} MiB  {seconds * 1e3:9.1f} ms  "
              f"max |g - g_full| {np.max(np.abs(got - want)):.1e}")


if __name__ == "__main__":
    main()
