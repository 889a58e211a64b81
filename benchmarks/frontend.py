"""The NumPy frontend: compile time of `dfc.grad` and run time against hand-written IR.

    python -m benchmarks.frontend

1. Compile time of `dfc.grad` for an MLP (8x784 -> 128 -> 64 -> 10, softmax
   cross-entropy) and Jacobi-2D (64x64, 20 steps): the first call, split into
   the frontend (AST to IR), autodiff, the lowering pipeline and LLVM, then a
   second call with the same signature (cached).
2. Run time (median) of the frontend's kernels against the README's hand-written
   IR for the same computation (examples/jacobi2d.mlir, examples/gemm_sum.mlir),
   forward and gradient, on the same engine.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

import dfc
from benchmarks.common import median_time
from dfc import ExecutionEngine, PassManager, parse_module
from dfc.compiler.engine import lower
from dfc.config import default_threads

EXAMPLES = Path(__file__).parent.parent / "examples"


def mlp(x, w1, b1, w2, b2, w3, b3, y):
    h = np.maximum(x @ w1 + b1, 0.0)
    h = np.maximum(h @ w2 + b2, 0.0)
    logits = h @ w3 + b3
    m = np.max(logits, axis=1, keepdims=True)
    logp = logits - m - np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return -np.mean(np.sum(logp * y, axis=1))


def jacobi2d(A):
    B = A.copy()
    for t in range(20):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])
    return np.sum(A)


def gemm_sum(X, Y):
    return np.sum(X @ Y)


def mlp_args(rng):
    sizes = [(784, 128), (128, 64), (64, 10)]
    params = []
    for m, n in sizes:
        params += [(rng.standard_normal((m, n)) * 0.05).astype(np.float32), np.zeros(n, np.float32)]
    return [rng.standard_normal((8, 784)).astype(np.float32), *params, np.eye(10, dtype=np.float32)[rng.integers(0, 10, 8)]]


def compile_time(fn, args, argnums) -> dict[str, float]:
    jf = dfc.jit(fn)
    t0 = time.perf_counter()
    f, ir_args, positions = jf.specialize(*args)
    t1 = time.perf_counter()
    module = f.autodiff_module(tuple(positions[k] for k in argnums))
    t2 = time.perf_counter()
    lower(module, default_threads())
    t3 = time.perf_counter()
    grad = dfc.grad(jf, argnums)
    start = time.perf_counter()
    grad(*args)
    first = time.perf_counter() - start
    start = time.perf_counter()
    grad(*args)
    second = time.perf_counter() - start
    return {"frontend": t1 - t0, "autodiff": t2 - t1, "pipeline": t3 - t2, "first dfc.grad call": first,
            "second call": second}


def run_times(fn, mlir_file: str, name: str, args) -> list[tuple[str, float, float]]:
    hand = parse_module((EXAMPLES / mlir_file).read_text())
    PassManager.parse(f"autodiff{{func={name}}}").run(hand)
    f = dfc.jit(fn).specialize(*args)[0]
    ours = f.autodiff_module()
    rows = []
    for label, module, fname in (("hand-written IR", hand, name), ("dfc.jit (NumPy)", ours, f.name)):
        engine = ExecutionEngine(module)
        seed = np.array(1.0, args[0].dtype)
        fwd = median_time(lambda: engine.invoke(fname, *[a.copy() for a in args]))
        bwd = median_time(lambda: engine.invoke(f"{fname}_grad", *[a.copy() for a in args], seed))
        rows.append((label, fwd, bwd))
    return rows


def main() -> None:
    rng = np.random.default_rng(0)
    print("compile time of dfc.grad (s)")
    for label, fn, args, argnums in (
        ("mlp", mlp, mlp_args(rng), (1, 2, 3, 4, 5, 6)),
        ("jacobi-2d", jacobi2d, [rng.random((64, 64))], (0,)),
    ):
        times = compile_time(fn, args, argnums)
        print(f"  {label:10s} " + "  ".join(f"{k} {v:.2f}" for k, v in times.items()))
    print("run time, median (ms): forward / gradient")
    for fn, file, name, args in (
        (jacobi2d, "jacobi2d.mlir", "jacobi2d", [rng.random((64, 64))]),
        (gemm_sum, "gemm_sum.mlir", "gemm_sum", [rng.random((5, 4)).astype(np.float32), rng.random((4, 3)).astype(np.float32)]),
    ):
        for label, fwd, bwd in run_times(fn, file, name, args):
            print(f"  {name:10s} {label:16s} {fwd * 1e3:8.3f} / {bwd * 1e3:8.3f}")


if __name__ == "__main__":
    main()
