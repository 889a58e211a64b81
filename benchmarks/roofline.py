"""Memory-bound gradients against their traffic floor and a hand-written C version.

    python -m benchmarks.roofline [--quick]

softmax_loss (examples/softmax.mlir at 4096 x 4096 f32): the forward reads x
and w once (2 n^2 floats), value-and-gradient also writes dx and dw (4 n^2).
The floor is those bytes at this machine's copy bandwidth measured in the same
run; benchmarks/c/softmax_loss.c (gcc -O3 -march=native -ffast-math -fopenmp,
built into a temporary directory) is the second reference. Each line gives
milliseconds and the ratio to the floor (1.0 is the roofline).
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
from dfc.passes.lower_dataflow import default_threads

C_SOURCE = Path(__file__).parent / "c" / "softmax_loss.c"
_F = ctypes.POINTER(ctypes.c_float)


def c_reference(threads: int) -> ctypes.CDLL | None:
    """The C version as a shared library, or None without gcc/OpenMP."""
    out = Path(tempfile.mkdtemp()) / "softmax_loss.so"
    cmd = ["gcc", "-O3", "-march=native", "-ffast-math", "-fopenmp", "-shared", "-fPIC", str(C_SOURCE), "-o", str(out), "-lm"]
    if subprocess.run(cmd, capture_output=True).returncode != 0:
        print("note: gcc -fopenmp failed; the C column shows n/a")
        return None
    os.environ["OMP_NUM_THREADS"] = str(threads)
    lib = ctypes.CDLL(str(out))
    lib.softmax_loss.restype = lib.softmax_loss_grad.restype = ctypes.c_float
    lib.softmax_loss.argtypes = [_F, _F, ctypes.c_long, ctypes.c_long]
    lib.softmax_loss_grad.argtypes = [_F, _F, ctypes.c_long, ctypes.c_long, ctypes.c_float, _F, _F]
    return lib


def _p(a: np.ndarray):
    return a.ctypes.data_as(_F)


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


if __name__ == "__main__":
    main()
