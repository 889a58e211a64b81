"""What `fuse` and `mem-plan` buy: time and peak memory, with and without each.

    python -m benchmarks.passes [--quick] [--threads N]

mlp (the example's sizes), softmax_loss over 4096x4096 and jacobi2d over
512x512 for 200 steps, forward and gradient (`autodiff`), each compiled with
the default pipeline and with `fuse`, `mem-plan` or both left out, side by
side in one run. Time is the median call; peak is the largest total of the
function's static buffers alive at once (mem-plan's own accounting: its
`peak-after` when it runs, its `peak-before` of the same IR when it does not):
buffers the function allocates, its returned results included, its arguments
not.
"""

from __future__ import annotations

import argparse

import numpy as np
from xdsl.dialects import func

from benchmarks.common import median_time
from benchmarks.cpu_kernels import scaled_example
from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.config import default_threads
from dfc.passes import default_pipeline
from dfc.passes.mem_plan import plan_function

VARIANTS = {"default": (), "no fuse": ("fuse",), "no mem-plan": ("mem-plan",), "neither": ("fuse", "mem-plan")}
"""The default pipeline without these passes."""


def peak_bytes(text: str, threads: int, without: tuple[str, ...], name: str) -> int:
    """mem-plan's peak for @name: after planning if the variant plans, else before."""
    module = parse_module(text)
    PassManager.parse(default_pipeline(threads, without=(*without, "mem-plan"))).run(module)
    f = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name)
    stats = plan_function(module, f, 4096, False)
    return stats.before if "mem-plan" in without else stats.after


def measure(label: str, text: str, name: str, args: list, threads: int, repeats: int) -> None:
    cells = []
    for variant, without in VARIANTS.items():
        engine = ExecutionEngine(parse_module(text), pipeline=default_pipeline(threads, without=without), threads=threads)
        seconds = median_time(lambda: engine.invoke(name, *args), repeats=repeats)
        peak = peak_bytes(text, threads, without, name)
        cells.append(f"{variant}: {seconds * 1e3:8.2f} ms {peak / 2**20:7.2f} MiB")
    print(f"{label:<30}" + " | ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test)")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    threads = args.threads or default_threads()
    rows, size, steps = (512, 128, 20) if args.quick else (4096, 512, 200)
    rng = np.random.default_rng(0)
    print(f"threads: {threads}; peak = static buffers the function allocates alive at once (results included)")

    programs = []
    shapes = [(120, 784), (120,), (32, 120), (32,), (10, 32), (10,)]
    params = [(rng.standard_normal(s) * 0.05).astype(np.float32) for s in shapes]
    x, labels = rng.standard_normal((8, 784)).astype(np.float32), rng.integers(0, 10, 8)
    programs.append(("mlp 8x784", open("examples/mlp.mlir").read(), "mlp", [x, labels, *params], np.float32, 7))
    softmax = scaled_example("softmax", {"64x512": f"{rows}x{rows}", "64xf32": f"{rows}xf32",
                                         "in (64, 512)": f"in ({rows}, {rows})", "in (64)": f"in ({rows})"})  # fmt: skip
    a, w = (rng.standard_normal((rows, rows)).astype(np.float32) for _ in range(2))
    programs.append((f"softmax {rows}^2", softmax, "softmax_loss", [a, w], np.float32, 5))
    jacobi = scaled_example("jacobi2d", {"64x64": f"{size}x{size}", "(62, 62)": f"({size - 2}, {size - 2})",
                                         "(64, 64)": f"({size}, {size})",
                                         "arith.constant 20 : index": f"arith.constant {steps} : index"})  # fmt: skip
    programs.append((f"jacobi2d {size}^2 x{steps}", jacobi, "jacobi2d", [rng.standard_normal((size, size))], np.float64, 3))

    for label, text, name, inputs, dtype, repeats in programs:
        measure(f"{label} forward", text, name, inputs, threads, repeats)
        module = parse_module(text)
        PassManager.parse(f"autodiff{{func={name}}}").run(module)
        measure(f"{label} gradient", str(module), f"{name}_grad", [*inputs, np.array(1.0, dtype)], threads, repeats)


if __name__ == "__main__":
    main()
