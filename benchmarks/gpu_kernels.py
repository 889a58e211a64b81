"""GPU kernels against the device's own copy bandwidth, in one run.

    python -m benchmarks.gpu_kernels [--quick] [--rows] [--n N]

saxpy over 100M float32 and softmax_loss over 4096x4096 on the CUDA engine,
with arrays resident on the device (`CudaEngine.run`), timed with CUDA events
(median of several runs after a warm-up). Each line gives the kernel time and
its bandwidth as a share of a device-to-device copy measured in the same run;
then the row reductions of `passes.gpu_rows` on 4096x4096 float32 (softmax,
log_softmax, row sum and max, a layer norm without affine terms: their input
read and output written once, at best), checked on a few rows against float64
NumPy; then 4096^3 matrix products in float32 and float64 (the tiled kernel
of `passes.gpu_gemm`, on the FP32/FP64 units) with their TFLOP/s.
`--rows` runs the copy, softmax_loss and the row reductions only, `--n` sets
the matrices' side. A row reduction's line also gives the host's time to
issue one call (`host_ms`): where it nears the GPU time, launches, not the
kernels, bound the rate.
Exits with a message when no GPU is available.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

from benchmarks.cpu_kernels import SAXPY, scaled_example
from dfc.compiler import ExecutionEngine, parse_module


def gpu_ms(driver, work, repeats: int = 7) -> float:
    """Median GPU time of `work()` in ms, after one warm-up."""
    work()
    driver.synchronize()
    return statistics.median(driver.elapsed_ms(work) for _ in range(repeats))


def host_ms(driver, work, repeats: int = 7) -> float:
    """Median wall time of issuing `work()` in ms (the GPU not awaited: the host's share)."""
    times = []
    for _ in range(repeats):
        driver.synchronize()
        start = time.perf_counter()
        work()
        times.append(1e3 * (time.perf_counter() - start))
    driver.synchronize()
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test)")
    parser.add_argument("--rows", action="store_true", help="the copy, softmax_loss and the row reductions only")
    parser.add_argument("--n", type=int, default=0, help="the matrices' side (default 4096, 1024 with --quick)")
    args = parser.parse_args()
    from dfc.compiler.cuda_engine import cuda_driver

    try:
        driver = cuda_driver()
    except RuntimeError as err:
        sys.exit(f"gpu_kernels: {err}")
    n = 10_000_000 if args.quick else 100_000_000
    rows = args.n or (1024 if args.quick else 4096)
    rng = np.random.default_rng(0)

    src, dst = driver.alloc(4 * n), driver.alloc(4 * n)
    copy = gpu_ms(driver, lambda: driver.dtod(dst, src, 4 * n))
    bandwidth = 2 * 4 * n / copy / 1e6
    driver.free(src)
    driver.free(dst)
    print(f"device: {driver.arch()}; device-to-device copy: {bandwidth:.0f} GB/s")

    if not args.rows:
        saxpy(driver, n, bandwidth, rng)
    text = scaled_example("softmax", {"64x512": f"{rows}x{rows}", "64xf32": f"{rows}xf32",
                                      "in (64, 512)": f"in ({rows}, {rows})", "in (64)": f"in ({rows})"})  # fmt: skip
    engine = ExecutionEngine(parse_module(text), target="gpu")
    a, w = (engine.to_device(rng.standard_normal((rows, rows)).astype(np.float32)) for _ in range(2))
    ms = gpu_ms(driver, lambda: engine.free(engine.run("softmax_loss", a, w)))
    host = host_ms(driver, lambda: engine.free(engine.run("softmax_loss", a, w)))
    gbs = 2 * 4 * rows * rows / ms / 1e6  # the inputs, read once at best
    print(f"softmax_loss {rows}x{rows:<7} {ms:8.3f} ms  {gbs:6.0f} GB/s = {100 * gbs / bandwidth:3.0f}% of copy"
          f"  (host {host:.3f} ms)")  # fmt: skip
    for name, (body, out, reference) in row_reductions(rows).items():
        row_reduction(driver, name, body, out, reference, rows, bandwidth, rng)
    if not args.rows:
        matmuls(driver, rows, rng)
    driver.trim()


def saxpy(driver, n: int, bandwidth: float, rng: np.random.Generator) -> None:
    engine = ExecutionEngine(parse_module(SAXPY.format(n=n)), target="gpu")
    x, y = (engine.to_device(rng.standard_normal(n).astype(np.float32)) for _ in range(2))
    ms = gpu_ms(driver, lambda: engine.free(engine.run("saxpy", 2.0, x, y)))
    gbs = 3 * 4 * n / ms / 1e6
    print(f"saxpy {n:<12} {ms:8.3f} ms  {gbs:6.0f} GB/s = {100 * gbs / bandwidth:3.0f}% of copy")
    np.testing.assert_allclose(engine.invoke("saxpy", 2.0, engine.to_host(x), engine.to_host(y))[:8],
                               2.0 * engine.to_host(x)[:8] + engine.to_host(y)[:8], rtol=1e-6)  # fmt: skip
    for d in (x, y):
        engine.free(d)


def row_reductions(n: int) -> dict[str, tuple[str, str, Callable[[np.ndarray], np.ndarray]]]:
    """name: (the body of @f(%x: tensor<n x n x f32>), its result type, a float64 reference)."""
    t, col = f"tensor<{n}x{n}xf32>", f"tensor<{n}x1xf32>"

    def softmax(x: np.ndarray) -> np.ndarray:
        e = np.exp(x - x.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    def layer_norm(x: np.ndarray) -> np.ndarray:
        d = x - x.mean(1, keepdims=True)
        return d / np.sqrt((d * d).mean(1, keepdims=True) + 1e-5)

    return {
        "softmax": (f'%y = nn.softmax %x {{axis = -1 : i64}} : ({t}) -> {t}', t, softmax),
        "log_softmax": (f'%y = nn.log_softmax %x {{axis = -1 : i64}} : ({t}) -> {t}', t, lambda x: np.log(softmax(x))),
        "row sum": (f'%y = nn.reduce %x {{kind = "sum", axes = array<i64: 1>}} : ({t}) -> tensor<{n}xf32>',
                    f"tensor<{n}xf32>", lambda x: x.sum(1)),
        "row max": (f'%y = nn.reduce %x {{kind = "max", axes = array<i64: 1>}} : ({t}) -> tensor<{n}xf32>',
                    f"tensor<{n}xf32>", lambda x: x.max(1)),
        "layer norm": (f"""%mean = nn.reduce %x {{kind = "mean", axes = array<i64: 1>, keepdims}} : ({t}) -> {col}
  %d = nn.sub %x, %mean : ({t}, {col}) -> {t}
  %sq = nn.mul %d, %d : ({t}, {t}) -> {t}
  %var = nn.reduce %sq {{kind = "mean", axes = array<i64: 1>, keepdims}} : ({t}) -> {col}
  %eps = nn.full {{value = 1.0e-05 : f32}} : tensor<f32>
  %ve = nn.add %var, %eps : ({col}, tensor<f32>) -> {col}
  %r = nn.rsqrt %ve : ({col}) -> {col}
  %y = nn.mul %d, %r : ({t}, {col}) -> {t}""", t, layer_norm),
    }  # fmt: skip


def row_reduction(driver, name: str, body: str, out: str, reference: Callable[[np.ndarray], np.ndarray], n: int,
                  bandwidth: float, rng: np.random.Generator) -> None:  # fmt: skip
    """Time one row reduction; its rate counts its input read and its output written once."""
    text = f"func.func @f(%x: tensor<{n}x{n}xf32>) -> {out} {{\n  {body}\n  func.return %y : {out}\n}}"
    engine = ExecutionEngine(parse_module(text), target="gpu")
    x = rng.standard_normal((n, n)).astype(np.float32)
    dx = engine.to_device(x)
    ms = gpu_ms(driver, lambda: engine.free(engine.run("f", dx)))
    host = host_ms(driver, lambda: engine.free(engine.run("f", dx)))
    result = engine.run("f", dx)
    got = engine.to_host(result)
    engine.free(result)
    engine.free(dx)
    np.testing.assert_allclose(got[:4], reference(x[:4].astype(np.float64)), rtol=1e-4, atol=1e-4)
    gbs = (x.nbytes + got.nbytes) / ms / 1e6
    print(f"{name:<12} {n}x{n:<7} {ms:8.3f} ms  {gbs:6.0f} GB/s = {100 * gbs / bandwidth:3.0f}% of copy"
          f"  (host {host:.3f} ms)")  # fmt: skip


def matmuls(driver, rows: int, rng: np.random.Generator) -> None:
    for t, dtype in (("f32", np.float32), ("f64", np.float64)):
        text = MATMUL.format(n=rows, t=t)
        engine = ExecutionEngine(parse_module(text), target="gpu")
        a, b = (rng.standard_normal((rows, rows)).astype(dtype) for _ in range(2))
        da, db = engine.to_device(a), engine.to_device(b)
        ms = gpu_ms(driver, lambda: engine.free(engine.run("matmul", da, db)))
        print(f"matmul {rows}^3 {t:<6} {ms:8.3f} ms  {2 * rows**3 / ms / 1e9:6.1f} TFLOP/s")
        c = engine.run("matmul", da, db)
        np.testing.assert_allclose(engine.to_host(c)[:2], a[:2].astype(np.float64) @ b, rtol=1e-3,
                                   atol=1e-3 * rows**0.5)  # fmt: skip
        for d in (c, da, db):
            engine.free(d)


MATMUL = """func.func @matmul(%a: tensor<{n}x{n}x{t}>, %b: tensor<{n}x{n}x{t}>) -> tensor<{n}x{n}x{t}> {{
  %c = nn.matmul %a, %b : (tensor<{n}x{n}x{t}>, tensor<{n}x{n}x{t}>) -> tensor<{n}x{n}x{t}>
  func.return %c : tensor<{n}x{n}x{t}>
}}"""


if __name__ == "__main__":
    main()
