"""Every `DFC_*` environment setting: its name, type, default and meaning.

This is the one place dfc reads its environment. Each setting is read when it
is used (`setting.value()`), so a test or a program may change the environment
between calls. A value that does not parse raises `ConfigError` naming the
variable. `describe()` is what `opt-tool --help-env` prints and
docs/configuration.md lists.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any


class ConfigError(ValueError):
    """A `DFC_*` variable whose value does not parse."""


_FALSE = ("", "0", "false", "no", "off")
_TRUE = ("1", "true", "yes", "on")


@dataclass(frozen=True)
class Setting:
    """One environment variable: `kind` is bool, int, float, str or path; `choices` limits a str."""

    name: str
    kind: str
    default: Any
    help: str
    choices: tuple[str, ...] = ()

    def raw(self) -> str | None:
        """The variable's text, or None when unset or empty."""
        text = os.environ.get(self.name, "").strip()
        return text or None

    def value(self) -> Any:
        """The parsed value, or the default when the variable is unset or empty."""
        text = self.raw()
        if text is None:
            return self.default
        if self.kind == "bool":
            if text.lower() in _FALSE:
                return False
            if text.lower() in _TRUE:
                return True
            raise ConfigError(f"{self.name}={text!r}: expected 0 or 1")
        if self.kind in ("int", "float"):
            try:
                return int(text) if self.kind == "int" else float(text)
            except ValueError:
                raise ConfigError(f"{self.name}={text!r}: expected {'an integer' if self.kind == 'int' else 'a number'}") from None
        if self.choices and text.lower() not in self.choices:
            raise ConfigError(f"{self.name}={text!r}: expected one of {', '.join(self.choices)}")
        return text.lower() if self.choices else text


NUM_THREADS = Setting("DFC_NUM_THREADS", "int", None,
                      "threads of compiled parallel loops (default: the CPUs this process may use)")
GEMM = Setting("DFC_GEMM", "str", "auto",
               "who computes blas.gemm on the CPU: auto (dfc's kernel where the host has AVX-512, else "
               "OpenBLAS), dfc, or blas", ("auto", "dfc", "blas"))
JIT_CACHE_SIZE = Setting("DFC_JIT_CACHE_SIZE", "int", 16,
                         "compiled modules kept in memory for reuse by equal IR (0: none)")
COMPILE_JOBS = Setting("DFC_COMPILE_JOBS", "int", None,
                       "processes optimising and code-generating a large module's LLVM parts (default: the CPUs "
                       "this process may use; 1: this process alone)")
CACHE_DIR = Setting("DFC_CACHE_DIR", "path", None, "directory of the on-disk object cache (unset: no disk cache)")
CACHE_MAX_MB = Setting("DFC_CACHE_MAX_MB", "float", 512.0,
                       "size bound of the on-disk object cache in MiB; storing an entry evicts the least recently used")
BUFFER_CACHE_MB = Setting("DFC_BUFFER_CACHE_MB", "float", 1024.0,
                          "MiB of freed result buffers the runtime keeps for reuse")
VERIFY_EACH = Setting("DFC_VERIFY_EACH", "bool", False,
                      "verify the IR after every pass of the engine's pipeline (naming a pass that breaks it)")
PERF_MAP = Setting("DFC_PERF_MAP", "bool", False,
                   "write /tmp/perf-<pid>.map so that `perf report` names JIT-compiled functions")
TORCH_OPENMP = Setting("DFC_TORCH_OPENMP", "bool", True,
                       "run dfc.torch kernels' parallel loops on the OpenMP runtime torch loaded (0: dfc's own pool)")
TRACEBACK = Setting("DFC_TRACEBACK", "bool", False,
                    "opt-tool and run-tool print the Python traceback of an internal error, and the Python API's "
                    "errors keep dfc's internal frames")
PROGRESS = Setting("DFC_PROGRESS", "str", "auto",
                   "a progress line on stderr for compiles longer than a second: on, off, or auto (on when stderr "
                   "is a terminal or in a Jupyter kernel)", ("auto", "on", "off"))

SETTINGS: tuple[Setting, ...] = (
    NUM_THREADS, GEMM, JIT_CACHE_SIZE, COMPILE_JOBS, CACHE_DIR, CACHE_MAX_MB, BUFFER_CACHE_MB, VERIFY_EACH, PERF_MAP,
    TORCH_OPENMP, TRACEBACK, PROGRESS,
)


def default_threads() -> int:
    """`DFC_NUM_THREADS`, else the number of CPUs this process may use."""
    threads = NUM_THREADS.value()
    if threads is not None:
        return max(1, threads)
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def describe() -> str:
    """One paragraph per setting: name, type, default, meaning, and the value now if set."""
    lines = []
    for s in SETTINGS:
        kind = "|".join(s.choices) if s.choices else s.kind
        default = "unset" if s.default is None else str(s.default).lower() if s.kind == "bool" else str(s.default)
        now = f" (now: {s.raw()})" if s.raw() is not None else ""
        lines.append(f"{s.name} ({kind}, default {default}){now}\n    {s.help}")
    return "\n".join(lines)
