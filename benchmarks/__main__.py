"""Every CPU benchmark in one run, side by side with numpy, PyTorch and JAX.

    python -m benchmarks [--quick]

In order: the machine (CPU model and ISA, BLAS and its kernel set, thread counts, copy bandwidth), contractions (matmul 1024^3
f32/f64, the MLP's skinny products, the MLP value and gradient, convolutions),
gradient cost (mlp, softmax_loss 4096^2, jacobi-2d 512^2 x 200), Hessian-vector products, Jacobians and
Hessians (against JAX and torch.func), softmax_loss
against its memory-traffic floor and a hand-written C version, memory-bound
kernels against the copy bandwidth, reproducible sums (their cost and
errors), compile times, call overhead, the thread runtime, the NumPy
frontend, and PyTorch training. Each section is its own
module (`python -m benchmarks.<name>` runs one); ratios are what count, since
absolute times move from run to run.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time

from benchmarks.common import copy_bandwidth, machine
from dfc.compiler.codegen import blas_runtime

SECTIONS = ("contractions", "autodiff_cost", "second_order", "roofline", "cpu_kernels", "sums", "compile_time",
            "call_overhead", "thread_runtime", "frontend", "torch_training")
TAKES_QUICK = {"contractions", "autodiff_cost", "second_order", "roofline", "cpu_kernels", "sums", "compile_time",
               "torch_training"}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.strip().splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and fewer repeats (a smoke test)")
    quick = parser.parse_args().quick
    print(machine(), flush=True)
    print(f"memory: copy bandwidth {copy_bandwidth():.1f} GB/s", flush=True)
    if blas_runtime.avx512_left_unused():
        told = os.environ.get("OPENBLAS_CORETYPE")
        why = f"OPENBLAS_CORETYPE={told} in the environment" if told else "it does not know this CPU"
        print(f"note: OpenBLAS leaves this CPU's AVX-512 unused ({why}): numpy's products (and dfc's with "
              "DFC_GEMM=blas) run its AVX2 kernels", flush=True)
    for name in SECTIONS:
        module = importlib.import_module(f"benchmarks.{name}")
        print(f"\n== {name}: {module.__doc__.strip().splitlines()[0]}", flush=True)
        sys.argv = [name, *(["--quick"] if quick and name in TAKES_QUICK else [])]
        start = time.perf_counter()
        module.main()
        print(f"({name}: {time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
