"""GPU kernels against the device's own copy bandwidth, in one run.

    python -m benchmarks.gpu_kernels [--quick]

saxpy over 100M float32 and softmax_loss over 4096x4096 on the CUDA engine,
with arrays resident on the device (`CudaEngine.run`), timed with CUDA events
(median of several runs after a warm-up). Each line gives the kernel time and
its bandwidth as a share of a device-to-device copy measured in the same run;
then 4096^3 matrix products in float32 and float64 (the tiled kernel of
`passes.gpu_gemm`, on the FP32/FP64 units) with their TFLOP/s.
Exits with a message when no GPU is available.
"""

from __future__ import annotations

import argparse
import statistics
import sys

import numpy as np

from benchmarks.cpu_kernels import SAXPY, scaled_example
from dfc.compiler import ExecutionEngine, parse_module


def gpu_ms(driver, work, repeats: int = 7) -> float:
    """Median GPU time of `work()` in ms, after one warm-up."""
    work()
    driver.synchronize()
    return statistics.median(driver.elapsed_ms(work) for _ in range(repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test)")
    args = parser.parse_args()
    from dfc.compiler.cuda_engine import cuda_driver

    try:
        driver = cuda_driver()
    except RuntimeError as err:
        sys.exit(f"gpu_kernels: {err}")
    n = 10_000_000 if args.quick else 100_000_000
    rows = 1024 if args.quick else 4096
    rng = np.random.default_rng(0)

    src, dst = driver.alloc(4 * n), driver.alloc(4 * n)
    copy = gpu_ms(driver, lambda: driver.dtod(dst, src, 4 * n))
    bandwidth = 2 * 4 * n / copy / 1e6
    driver.free(src)
    driver.free(dst)
    print(f"device: {driver.arch()}; device-to-device copy: {bandwidth:.0f} GB/s")

    engine = ExecutionEngine(parse_module(SAXPY.format(n=n)), target="gpu")
    x, y = (engine.to_device(rng.standard_normal(n).astype(np.float32)) for _ in range(2))
    ms = gpu_ms(driver, lambda: engine.free(engine.run("saxpy", 2.0, x, y)))
    gbs = 3 * 4 * n / ms / 1e6
    print(f"saxpy {n:<12} {ms:8.3f} ms  {gbs:6.0f} GB/s = {100 * gbs / bandwidth:3.0f}% of copy")
    np.testing.assert_allclose(engine.invoke("saxpy", 2.0, engine.to_host(x), engine.to_host(y))[:8],
                               2.0 * engine.to_host(x)[:8] + engine.to_host(y)[:8], rtol=1e-6)  # fmt: skip

    text = scaled_example("softmax", {"64x512": f"{rows}x{rows}", "64xf32": f"{rows}xf32",
                                      "in (64, 512)": f"in ({rows}, {rows})", "in (64)": f"in ({rows})"})  # fmt: skip
    engine = ExecutionEngine(parse_module(text), target="gpu")
    a, w = (engine.to_device(rng.standard_normal((rows, rows)).astype(np.float32)) for _ in range(2))
    ms = gpu_ms(driver, lambda: engine.free(engine.run("softmax_loss", a, w)))
    gbs = 2 * 4 * rows * rows / ms / 1e6  # the inputs, read once at best
    print(f"softmax {rows}x{rows:<7} {ms:8.3f} ms  {gbs:6.0f} GB/s = {100 * gbs / bandwidth:3.0f}% of copy")

    for t, dtype in (("f32", np.float32), ("f64", np.float64)):
        text = MATMUL.format(n=rows, t=t)
        engine = ExecutionEngine(parse_module(text), target="gpu")
        a, b = (rng.standard_normal((rows, rows)).astype(dtype) for _ in range(2))
        da, db = engine.to_device(a), engine.to_device(b)
        ms = gpu_ms(driver, lambda: engine.free(engine.run("matmul", da, db)))
        print(f"matmul {rows}^3 {t:<6} {ms:8.3f} ms  {2 * rows**3 / ms / 1e9:6.1f} TFLOP/s")
        c = engine.run("matmul", da, db)
        np.testing.assert_allclose(engine.to_host(c)[:2], a[:2].astype(np.float64) @ b, rtol=1e-3, atol=1e-3 * rows**0.5)
        for d in (c, da, db):
            engine.free(d)
    driver.trim()


MATMUL = """func.func @matmul(%a: tensor<{n}x{n}x{t}>, %b: tensor<{n}x{n}x{t}>) -> tensor<{n}x{n}x{t}> {{
  %c = nn.matmul %a, %b : (tensor<{n}x{n}x{t}>, tensor<{n}x{n}x{t}>) -> tensor<{n}x{n}x{t}>
  func.return %c : tensor<{n}x{n}x{t}>
}}"""


if __name__ == "__main__":
    main()
