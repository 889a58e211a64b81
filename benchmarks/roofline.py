"""Memory-bound gradients against their traffic floor and a hand-written C version.

    python -m benchmarks.roofline [--quick]

softmax_loss (examples/softmax.mlir at 4096 x 4096 f32): the forward reads x
and w once (2 n^2 floats), value-and-gradient also writes dx and dw (4 n^2).
The floor is those bytes at this machine's copy bandwidth measured in the same
run; benchmarks/c/softmax_loss.c (gcc -O3 -march=native -ffast-math -fopenmp,
built into a temporary directory) is the second reference. Each line gives
milliseconds and the ratio to the floor (1.0 is the roofline).

jacobi2d (examples/jacobi2d.mlir at 512 x 512 f64, 200 steps; its 2 MB grids
stay in cache, so no memory floor applies) against benchmarks/c/jacobi2d.c,
whose gradient is reverse mode written by hand: forward and value-and-gradient
times and dfc's time over C's (at most 1.0: at or below hand-written C).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.common import copy_bandwidth, median_time
from benchmarks.cpu_kernels import scaled_example
from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.config import default_threads

C_SOURCES = Path(__file__).parent / "c"
_F = ctypes.POINTER(ctypes.c_float)
_D = ctypes.POINTER(ctypes.c_double)
_L = ctypes.c_long


def c_library(name: str, threads: int) -> ctypes.CDLL | None:
    """benchmarks/c/`name`.c as a shared library, or None without gcc/OpenMP."""
    out = Path(tempfile.mkdtemp()) / f"{name}.so"
    cmd = ["gcc", "-O3", "-march=native", "-ffast-math", "-fopenmp", "-shared", "-fPIC", str(C_SOURCES / f"{name}.c"),
           "-o", str(out), "-lm"]  # fmt: skip
    if subprocess.run(cmd, capture_output=True).returncode != 0:
        print(f"note: gcc -fopenmp failed on {name}.c; its C column shows n/a")
        return None
    os.environ["OMP_NUM_THREADS"] = str(threads)
    return ctypes.CDLL(str(out))


def c_reference(threads: int) -> ctypes.CDLL | None:
    """The C softmax_loss, or None."""
    lib = c_library("softmax_loss", threads)
    if lib is not None:
        lib.softmax_loss.restype = lib.softmax_loss_grad.restype = ctypes.c_float
        lib.softmax_loss.argtypes = [_F, _F, _L, _L]
        lib.softmax_loss_grad.argtypes = [_F, _F, _L, _L, ctypes.c_float, _F, _F]
    return lib


def _p(a: np.ndarray):
    return a.ctypes.data_as(_F if a.dtype == np.float32 else _D)


def jacobi(quick: bool, threads: int) -> None:
    """jacobi2d's forward and value-and-gradient: dfc against benchmarks/c/jacobi2d.c."""
    n, steps = (128, 20) if quick else (512, 200)
    text = scaled_example("jacobi2d", {"64x64": f"{n}x{n}", "(62, 62)": f"({n - 2}, {n - 2})", "(64, 64)": f"({n}, {n})",
                                       "arith.constant 20 : index": f"arith.constant {steps} : index"})  # fmt: skip
    module = parse_module(text)
    PassManager.parse("autodiff{func=jacobi2d}").run(module)
    engine = ExecutionEngine(module, threads=threads)
    grid, seed = np.random.default_rng(1).standard_normal((n, n)), np.array(1.0)
    lib = c_library("jacobi2d", threads)
    da = np.empty_like(grid)
    if lib is not None:
        lib.jacobi2d.restype = lib.jacobi2d_grad.restype = ctypes.c_double
        lib.jacobi2d.argtypes = [_D, _L, _L]
        lib.jacobi2d_grad.argtypes = [_D, _L, _L, ctypes.c_double, _D]
        value, grad = engine.invoke("jacobi2d_grad", grid, seed)  # the two versions agree before they are timed
        np.testing.assert_allclose(lib.jacobi2d_grad(_p(grid), n, steps, 1.0, _p(da)), value, rtol=1e-9)
        np.testing.assert_allclose(da, grad, rtol=1e-9, atol=1e-12)
    for label, dfc_call, c_call in (
        ("forward", lambda: engine.invoke("jacobi2d", grid), lambda: lib.jacobi2d(_p(grid), n, steps)),
        ("value+grad", lambda: engine.invoke("jacobi2d_grad", grid, seed),
         lambda: lib.jacobi2d_grad(_p(grid), n, steps, 1.0, _p(da))),
    ):
        t_dfc = median_time(dfc_call, repeats=5)
        cells = [f"dfc {t_dfc * 1e3:7.2f} ms"]
        if lib is not None:
            t_c = median_time(c_call, repeats=5)
            cells.append(f"C {t_c * 1e3:7.2f} ms (dfc/C {t_dfc / t_c:4.2f}x)")
        print(f"jacobi2d {n}^2 x{steps} f64 {label:<11}" + "  ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="1024 x 1024")
    args = parser.parse_args()
    n = 1024 if args.quick else 4096
    threads = default_threads()
    bandwidth = copy_bandwidth()
    rng = np.random.default_rng(0)
    x, w = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    module = parse_module(scaled_example("softmax", {"64x512": f"{n}x{n}", "64xf32": f"{n}xf32", "in (64, 512)": f"in ({n}, {n})",
                                                 "in (64)": f"in ({n})"}))
    PassManager.parse("autodiff{func=softmax_loss}").run(module)
    engine = ExecutionEngine(module, threads=threads)
    seed = np.array(1.0, np.float32)
    lib = c_reference(threads)
    dx, dw = np.empty_like(x), np.empty_like(x)
    value, gx, gw = engine.invoke("softmax_loss_grad", x, w, seed)
    if lib is not None:  # the two versions agree before they are timed
        ref = lib.softmax_loss_grad(_p(x), _p(w), n, n, 1.0, _p(dx), _p(dw))
        np.testing.assert_allclose(value, ref, rtol=1e-3)
        np.testing.assert_allclose(gx, dx, rtol=1e-3, atol=1e-6)
        np.testing.assert_allclose(gw, dw, rtol=1e-3, atol=1e-7)
    print(f"machine: copy bandwidth {bandwidth:.1f} GB/s, {threads} threads; softmax_loss {n}x{n} f32")
    for label, floats, dfc_call, c_call in (
        ("forward", 2, lambda: engine.invoke("softmax_loss", x, w),
         lambda: lib.softmax_loss(_p(x), _p(w), n, n)),
        ("value+grad", 4, lambda: engine.invoke("softmax_loss_grad", x, w, seed),
         lambda: lib.softmax_loss_grad(_p(x), _p(w), n, n, 1.0, _p(dx), _p(dw))),
    ):
        floor = floats * n * n * 4 / (bandwidth * 1e9)
        t_dfc = median_time(dfc_call)
        cells = [f"floor {floor * 1e3:6.2f} ms", f"dfc {t_dfc * 1e3:7.2f} ms ({t_dfc / floor:4.2f}x floor)"]
        if lib is not None:
            t_c = median_time(c_call)
            cells.append(f"C {t_c * 1e3:7.2f} ms ({t_c / floor:4.2f}x floor)")
        print(f"{label:<12}" + "  ".join(cells))
    jacobi(args.quick, threads)


if __name__ == "__main__":
    main()
