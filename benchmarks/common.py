"""Timing helpers shared by the benchmarks: medians after warm-up, copy bandwidth."""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable

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
