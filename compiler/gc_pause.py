"""Python's cyclic garbage collector paused while compiling.

A compile allocates millions of short-lived IR objects, and every full
collection (generation 2) scans all live objects again, in whichever stage
happens to trigger it: a share of the compile time that grows with the size
of the live IR and frees little, since that IR stays live until the compile
ends. The collector is paused through `PassManager.run` and the engine's
compile, for a small rise in peak memory: reference counting still frees
every object outside a cycle, and the cycles a compile drops are collected
once the collector runs again. docs/performance-notes.md has the measurements.
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
