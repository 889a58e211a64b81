"""Shared by the benchmarks: medians after warm-up, copy bandwidth, the machine they ran on."""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

SETTLE_S = 0.2
"""Idle time before each measurement. A numpy product leaves OpenBLAS's
threads spinning for about 0.1 s (its THREAD_TIMEOUT); a library timed right
after shares the cores with them (dfc's 1024^3 f32 product: 4.6 ms alone,
8.7 ms in the 0.1 s after a numpy product). Each library is timed alone."""


def median_time(fn: Callable[[], object], repeats: int = 7, warmup: int = 2) -> float:
    """Median wall time of `fn()` in seconds, after `SETTLE_S` idle and
    `warmup` untimed calls."""
    time.sleep(SETTLE_S)
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def copy_bandwidth(nbytes: int = 400_000_000) -> float:
    """This machine's memory copy bandwidth in GB/s (read + write bytes), via numpy."""
    src = np.ones(nbytes // 4, np.float32)
    dst = np.empty_like(src)
    seconds = median_time(lambda: np.copyto(dst, src), repeats=5)
    return 2 * src.nbytes / seconds / 1e9


def machine() -> str:
    """What figures depend on, for telling runs on different machines apart:
    the CPU (model, LLVM's name for it, vector ISA), the BLAS numpy and dfc
    call and its kernel set, and each library's thread count."""
    import ctypes
    import platform

    import llvmlite.binding as llvm

    from dfc.compiler.codegen import blas_runtime, gemm_kernel
    from dfc.config import default_threads

    try:
        info = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        info = []
    model = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), platform.processor())
    flags = set(next((line.split(":", 1)[1].split() for line in info if line.startswith("flags")), []))
    isa = " ".join(f for f in ("avx512f", "avx512bw", "avx512_bf16", "avx2", "fma") if f in flags) or "no AVX2"
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    blas_threads = "n/a"
    if blas_runtime.available():
        blas_threads = getattr(ctypes.CDLL(str(blas_runtime.load())), blas_runtime.GET_NUM_THREADS)()
    gemm = f"dfc's {gemm_kernel.vector_bits()}-bit kernel" if gemm_kernel.enabled() else "OpenBLAS"
    threads = f"dfc {default_threads()}, OpenBLAS {blas_threads}"
    if "torch" in sys.modules or installed("torch"):
        import torch

        threads += f", torch {torch.get_num_threads()} (intra-op)"
    return "\n".join([
        f"CPU: {model} (LLVM: {llvm.get_host_cpu_name()}), {os.cpu_count()} logical CPUs, ISA {isa}; "
        f"{platform.system()} {platform.machine()}, Python {platform.python_version()}",
        f"BLAS: numpy {np.__version__} with {blas.get('name')} {blas.get('version')} "
        f"(kernels {blas_runtime.kernels()}); dfc's products call {gemm} (DFC_GEMM={gemm_kernel.mode()})",
        f"threads: {threads}",
    ])


def installed(name: str) -> bool:
    """Whether module `name` can be imported (nothing said when not)."""
    import importlib.util

    return importlib.util.find_spec(name) is not None


def optional(name: str):
    """The module `name`, or None when it is not installed (said on stderr,
    so that a missing column is never silent)."""
    try:
        return __import__(name)
    except ImportError:
        print(f"note: {name} is not installed; its column shows n/a "
              "(pip install -e '.[bench]' installs every reference)", file=sys.stderr)
        return None


def row(label: str, seconds: dict[str, float | None], baseline: str = "numpy", extra: str = "") -> str:
    """One result line: each framework's time and its ratio to the baseline."""
    base = seconds[baseline]
    cells = []
    for name, t in seconds.items():
        if t is None:
            cells.append(f"{name} n/a")
        else:
            cells.append(f"{name} {t * 1e3:8.2f} ms ({base / t:5.2f}x)")
    return f"{label:<23} " + "  ".join(cells) + (f"  {extra}" if extra else "")
