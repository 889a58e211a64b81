"""Memory against time for a gradient: a loop's under `autodiff{memory_budget=B}`,
and a chain of layers' with and without `df.checkpoint` calls (`dfc.checkpoint`).

    python -m benchmarks.autodiff_memory [--quick] [--threads N]

The jacobi-2d stencil of examples/jacobi2d.mlir at 512x512 for 200 steps with
each update through sin (the linear stencil's backward sweep needs no forward
value, so nothing would be stored), its gradient compiled with the default
pipeline at several budgets: the full tape (no budget), checkpoints every k
steps with one recomputed segment at a time (the budgets between), and
recomputation from the start (budget 0; quadratic in the steps, so run only
with --quick). Peak is mem-plan's: the largest total of the gradient
function's static buffers alive at once; time is the median call.

The layer chain (`layer_chain`: h + tanh(tanh(h w1) w2), 256x32 float64
activations, 8 layers) is measured by `resident_bytes` (passes/resident_memory.py),
which also counts what the functions the gradient calls hold.
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks.common import median_time
from benchmarks.cpu_kernels import scaled_example
from benchmarks.passes import peak_bytes
from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.config import default_threads
from dfc.passes import default_pipeline
from dfc.passes.resident_memory import resident_bytes


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


def layer_chain(layers: int, batch: int, width: int, policy: str | None = None) -> str:
    """`@chain(h0, w1, w2) = sum(h_L * h_L)`, `h_k+1 = @layer(h_k, w1, w2) = h_k +
    tanh(tanh(h_k w1) w2)`: `layers` calls, marked `{df.checkpoint = policy}` when given."""
    t, w = f"tensor<{batch}x{width}xf64>", f"tensor<{width}x{width}xf64>"
    mark = f' {{df.checkpoint = "{policy}"}}' if policy else ""
    calls = "\n".join(f"  %h{k + 1} = func.call @layer(%h{k}, %w1, %w2){mark} : ({t}, {w}, {w}) -> {t}"
                      for k in range(layers))
    return f"""func.func @layer(%h: {t}, %w1: {w}, %w2: {w}) -> {t} {{
  %p = nn.matmul %h, %w1 : ({t}, {w}) -> {t}
  %a = nn.tanh %p : ({t}) -> {t}
  %q = nn.matmul %a, %w2 : ({t}, {w}) -> {t}
  %b = nn.tanh %q : ({t}) -> {t}
  %y = nn.add %b, %h : ({t}, {t}) -> {t}
  func.return %y : {t}
}}
func.func @chain(%h0: {t}, %w1: {w}, %w2: {w}) -> tensor<f64> {{
{calls}
  %s = nn.mul %h{layers}, %h{layers} : ({t}, {t}) -> {t}
  %l = nn.reduce %s {{axes = array<i64: 0, 1>, kind = "sum"}} : ({t}) -> tensor<f64>
  func.return %l : tensor<f64>
}}"""


def lowered_resident_bytes(text: str, threads: int, entry: str) -> int:
    """`resident_bytes` of `entry` in `text` compiled by the default pipeline."""
    module = parse_module(text)
    PassManager.parse(default_pipeline(threads)).run(module)
    return resident_bytes(module, entry, threads)


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
    checkpointed_chain(threads, 4 if args.quick else 8)


def checkpointed_chain(threads: int, layers: int) -> None:
    """The layer chain's gradient (in all three arguments) with its calls stored
    (inlined by autodiff) and checkpointed (recomputed by `@layer_grad`; with
    `dots_saveable`, from the saved matmul results)."""
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((256, 32)), *(rng.standard_normal((32, 32)) / 6 for _ in range(2))]
    print(f"layer chain: {layers} layers of 256x32 float64 (64 KiB activations), threads {threads}")
    want = None
    for policy in (None, "nothing_saveable", "dots_saveable"):
        module = parse_module(layer_chain(layers, 256, 32, policy))
        PassManager.parse("autodiff{func=chain}").run(module)
        resident = lowered_resident_bytes(str(module), threads, "chain_grad")
        engine = ExecutionEngine(module, threads=threads)
        got = engine.invoke("chain_grad", *args, np.array(1.0))[1:]
        want = got if want is None else want
        seconds = median_time(lambda: engine.invoke("chain_grad", *args, np.array(1.0)), repeats=5, warmup=1)
        diff = max(np.max(np.abs(g - w)) / np.max(np.abs(w)) for g, w in zip(got, want))
        print(f"{policy or 'stored':<22} resident {resident / 2**20:8.2f} MiB  {seconds * 1e3:9.2f} ms  "
              f"max |g - g_stored| / max |g_stored| {diff:.1e}")


if __name__ == "__main__":
    main()
