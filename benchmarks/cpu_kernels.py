"""CPU kernels against numpy, PyTorch and JAX, in one run.

    python benchmarks/cpu_kernels.py [--threads N] [--quick]

Prints, per kernel, each framework's median time and its speed relative to
numpy (higher is faster), the compiled kernel's bandwidth against this
machine's copy bandwidth measured in the same run, and dfc's compile time
(parsed module to callable).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks.common import copy_bandwidth, median_time, optional, row
from dfc.compiler import ExecutionEngine, parse_module

SAXPY = """func.func @saxpy(%a: f32, %x: tensor<{n}xf32>, %y: tensor<{n}xf32>) -> tensor<{n}xf32> {{
  %r = df.map (%i) in ({n}) outs(%o = %y : tensor<{n}xf32>) {{
    %u = df.read %x[%i] : tensor<{n}xf32>
    %v = df.read %y[%i] : tensor<{n}xf32>
    %w = df.tasklet (%a, %u, %v) : (f32, f32, f32) -> f32 {{
    ^bb0(%s: f32, %p: f32, %q: f32):
      %m = arith.mulf %s, %p : f32
      %t = arith.addf %m, %q : f32
      df.yield %t : f32
    }}
    df.write %w, %o[%i] : tensor<{n}xf32>
  }} -> tensor<{n}xf32>
  func.return %r : tensor<{n}xf32>
}}"""

SUM = """func.func @total(%x: tensor<{n}xf32>) -> tensor<f32> {{
  %z = arith.constant dense<0.0> : tensor<f32>
  %r = df.map (%i) in ({n}) outs(%o = %z : tensor<f32>) {{
    %u = df.read %x[%i] : tensor<{n}xf32>
    df.write %u, %o[] wcr(add) : tensor<f32>
  }} -> tensor<f32>
  func.return %r : tensor<f32>
}}"""


def scaled_example(name: str, old: dict[str, str]) -> str:
    text = open(f"examples/{name}.mlir").read()
    for a, b in old.items():
        text = text.replace(a, b)
    return text


def compile_timed(text: str, threads: int | None) -> tuple[ExecutionEngine, float]:
    start = time.perf_counter()
    engine = ExecutionEngine(parse_module(text), threads=threads)
    return engine, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test)")
    args = parser.parse_args()
    torch, jax = optional("torch"), optional("jax")
    if jax is not None:
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
    n = 1_000_000 if args.quick else 10_000_000
    rows, size, steps = (512, 512, 20) if args.quick else (4096, 512, 200)
    bandwidth = copy_bandwidth()
    print(f"copy bandwidth: {bandwidth:.1f} GB/s; threads: {args.threads or 'default'}")
    rng = np.random.default_rng(0)

    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    engine, compile_s = compile_timed(SAXPY.format(n=n), args.threads)
    t = {
        "numpy": median_time(lambda: 2.0 * x + y),
        "dfc": median_time(lambda: engine.invoke("saxpy", 2.0, x, y)),
        "torch": median_time(lambda: 2.0 * tx + ty) if torch and (tx := torch.from_numpy(x)) is not None and (ty := torch.from_numpy(y)) is not None else None,
        "jax": None,
    }
    if jax is not None:
        jx, jy = jnp.asarray(x), jnp.asarray(y)
        f = jax.jit(lambda a, b: 2.0 * a + b)
        t["jax"] = median_time(lambda: f(jx, jy).block_until_ready())
    gbs = 3 * x.nbytes / t["dfc"] / 1e9
    print(row(f"saxpy {n}", t, extra=f"dfc {gbs:.1f} GB/s = {100 * gbs / bandwidth:.0f}% of copy; compile {compile_s:.2f} s"))

    engine, compile_s = compile_timed(SUM.format(n=n), args.threads)
    t = {
        "numpy": median_time(lambda: x.sum()),
        "dfc": median_time(lambda: engine.invoke("total", x)),
        "torch": median_time(lambda: tx.sum()) if torch else None,
        "jax": None,
    }
    if jax is not None:
        g = jax.jit(jnp.sum)
        t["jax"] = median_time(lambda: g(jx).block_until_ready())
    gbs = x.nbytes / t["dfc"] / 1e9
    print(row(f"sum {n}", t, extra=f"dfc {gbs:.1f} GB/s = {100 * gbs / bandwidth:.0f}% of copy; compile {compile_s:.2f} s"))

    text = scaled_example("softmax", {"64x512": f"{rows}x{rows}", "64xf32": f"{rows}xf32", "in (64, 512)": f"in ({rows}, {rows})", "in (64)": f"in ({rows})"})
    engine, compile_s = compile_timed(text, args.threads)
    a, w = rng.standard_normal((rows, rows)).astype(np.float32), rng.standard_normal((rows, rows)).astype(np.float32)

    def np_softmax():
        e = np.exp(a - a.max(1, keepdims=True))
        return (e / e.sum(1, keepdims=True) * w).sum()

    t = {"numpy": median_time(np_softmax, repeats=5), "dfc": median_time(lambda: engine.invoke("softmax_loss", a, w), repeats=5)}
    t["torch"] = median_time(lambda: (torch.softmax(ta, -1) * tw).sum(), repeats=5) if torch and (ta := torch.from_numpy(a)) is not None and (tw := torch.from_numpy(w)) is not None else None
    t["jax"] = None
    if jax is not None:
        ja, jw = jnp.asarray(a), jnp.asarray(w)
        h = jax.jit(lambda p, q: (jax.nn.softmax(p, -1) * q).sum())
        t["jax"] = median_time(lambda: h(ja, jw).block_until_ready(), repeats=5)
    print(row(f"softmax {rows}x{rows}", t, extra=f"compile {compile_s:.2f} s"))

    text = scaled_example("jacobi2d", {"64x64": f"{size}x{size}", "(62, 62)": f"({size - 2}, {size - 2})", "(64, 64)": f"({size}, {size})", "arith.constant 20 : index": f"arith.constant {steps} : index"})
    engine, compile_s = compile_timed(text, args.threads)
    grid = rng.standard_normal((size, size))

    def np_jacobi():
        p, q = grid.copy(), grid.copy()
        for _ in range(steps):
            q[1:-1, 1:-1] = 0.2 * (p[1:-1, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] + p[2:, 1:-1] + p[:-2, 1:-1])
            p[1:-1, 1:-1] = 0.2 * (q[1:-1, 1:-1] + q[1:-1, :-2] + q[1:-1, 2:] + q[2:, 1:-1] + q[:-2, 1:-1])
        return p.sum()

    def torch_jacobi():
        p = torch.from_numpy(grid.copy())
        q = p.clone()
        for _ in range(steps):
            q[1:-1, 1:-1] = 0.2 * (p[1:-1, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] + p[2:, 1:-1] + p[:-2, 1:-1])
            p[1:-1, 1:-1] = 0.2 * (q[1:-1, 1:-1] + q[1:-1, :-2] + q[1:-1, 2:] + q[2:, 1:-1] + q[:-2, 1:-1])
        return p.sum()

    t = {"numpy": median_time(np_jacobi, repeats=3), "dfc": median_time(lambda: engine.invoke("jacobi2d", grid), repeats=3)}
    t["torch"] = median_time(torch_jacobi, repeats=3) if torch else None
    t["jax"] = None
    if jax is not None:

        def step(p, _):
            q = p.at[1:-1, 1:-1].set(0.2 * (p[1:-1, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] + p[2:, 1:-1] + p[:-2, 1:-1]))
            p = p.at[1:-1, 1:-1].set(0.2 * (q[1:-1, 1:-1] + q[1:-1, :-2] + q[1:-1, 2:] + q[2:, 1:-1] + q[:-2, 1:-1]))
            return p, None

        jac = jax.jit(lambda p: jax.lax.scan(step, p, None, length=steps)[0].sum())
        jg = jnp.asarray(grid)
        t["jax"] = median_time(lambda: jac(jg).block_until_ready(), repeats=3)
    print(row(f"jacobi2d {size}^2 x{steps}", t, extra=f"compile {compile_s:.2f} s"))


if __name__ == "__main__":
    main()
