"""A one-line progress display for long compiles (`DFC_PROGRESS`).

`compiling(label)` brackets one user-level compile; the pass manager reports
each stage it starts through `stage(name)`. Once a compile has run for
`DELAY` seconds, a line on stderr names the stage running and the time so
far, rewritten in place (`\\r`: a terminal and Jupyter both redraw it), and
ends as `dfc: compiled <label> in 12.3 s`. Compiles shorter than `DELAY`
print nothing. A compile started inside another (a helper compiled for its
caller) reports under the outer one. `auto` (the default) shows the line when
stderr is a terminal or the process is an IPython kernel; the `dfc` logger
reports the same stages at INFO whatever this setting.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from dfc import config

DELAY = 1.0
"""Seconds a compile runs before its line appears."""


def enabled() -> bool:
    """Whether `DFC_PROGRESS` (on, off, auto) turns the line on for this process."""
    choice = config.PROGRESS.value()
    if choice != "auto":
        return choice == "on"
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty()) or "ipykernel" in sys.modules


class _Line:
    def __init__(self, label: str):
        self.label = label
        self.start = time.perf_counter()
        self.width = 0

    def _write(self, text: str, end: str = "") -> None:
        sys.stderr.write("\r" + text.ljust(self.width) + end)
        sys.stderr.flush()
        self.width = len(text)

    def update(self, stage: str) -> None:
        elapsed = time.perf_counter() - self.start
        if elapsed >= DELAY:
            self._write(f"dfc: compiling {self.label}: {stage} ({elapsed:.1f} s)")

    def finish(self) -> None:
        if self.width:
            self._write(f"dfc: compiled {self.label} in {time.perf_counter() - self.start:.1f} s", "\n")


_lock = threading.Lock()
_current: _Line | None = None


@contextmanager
def compiling(label: str) -> Iterator[None]:
    """Show the progress of the compile of `label` (e.g. `@f`) if it is long."""
    global _current
    with _lock:
        mine = _current is None and enabled()
        if mine:
            _current = _Line(label)
    try:
        yield
    finally:
        if mine:
            with _lock:
                line, _current = _current, None
            line.finish()


def stage(name: str) -> None:
    """A stage of the compile being shown starts (nothing when none is shown)."""
    with _lock:
        if _current is not None:
            _current.update(name)
