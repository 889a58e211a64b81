"""Python's cyclic garbage collector paused while compiling.

A compile allocates millions of short-lived IR objects, and every full
collection (generation 2) scans all live objects again: 2.0 s of the 28 s
`benchmarks.compile_time` spends, landing in whichever stage happens to
trigger it. With the collector paused through `PassManager.run` and the
engine's compile, the 20/40/80-map stencil gradients compiled 7-8% faster and
a small ResNet's first training step 12.4 -> 11.0 s, its peak memory +1%
(reference counting still frees every object outside a cycle; the cycles a
compile drops are collected once the collector runs again).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the collector for the block, when it is enabled; enable it again after."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
