"""The BLAS that `blas.gemm` calls: OpenBLAS as the NumPy/SciPy project packages
it (64-bit integers, symbols named `scipy_cblas_dgemm64_`, ...).

The instance numpy's wheels bundle is preferred: calls from compiled code and
from numpy then share one thread pool (two OpenBLAS pools on the same cores
wait on each other's spinning threads). Otherwise the `scipy-openblas64` package (a
dependency) provides it. The library is loaded into the process, and its
symbols exported to JIT code, only when a compiled module calls it.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
from pathlib import Path

SYMBOL_PREFIX = "scipy_cblas_"
_PATTERN = "libscipy_openblas64_*"


def symbol(routine: str) -> str:
    """The exported name of CBLAS's `cblas_<routine>`, e.g. `sgemm`."""
    return f"{SYMBOL_PREFIX}{routine}64_"


GET_CORENAME = "scipy_openblas_get_corename64_"
"""`char *()`: the kernel set the library picked for this CPU at load."""
GET_NUM_THREADS = "scipy_openblas_get_num_threads64_"
"""`int ()`: the number of threads the library's calls use."""
SET_NUM_THREADS = "scipy_openblas_set_num_threads64_"
"""`void (int)`: set that number."""


def _exports_gemm(path: Path) -> bool:
    try:
        return hasattr(ctypes.CDLL(str(path)), symbol("dgemm"))
    except OSError:
        return False


@functools.cache
def library() -> Path | None:
    """The library file: numpy's own when it bundles one, else the package's; None without either."""
    import numpy

    here = Path(numpy.__file__).parent
    for folder in (here.parent / "numpy.libs", here / ".dylibs"):
        for path in sorted(folder.glob(_PATTERN)):
            if _exports_gemm(path):
                return path
    if importlib.util.find_spec("scipy_openblas64") is None:
        return None
    import scipy_openblas64

    path = Path(scipy_openblas64.get_lib_dir()) / scipy_openblas64.get_library(fullname=True)
    return path if _exports_gemm(path) else None


def available() -> bool:
    """Whether a BLAS to call is installed."""
    return library() is not None


@functools.cache
def load() -> Path:
    """Load the library (once per process) so JIT code resolves its symbols."""
    import llvmlite.binding as llvm

    path = library()
    if path is None:
        raise RuntimeError("no BLAS to call: install scipy-openblas64 (a dependency of dfc)")
    llvm.load_library_permanently(str(path))
    return path


def load_if_called(llvm_ir: str) -> None:
    """Load the library when the module `llvm_ir` calls into it."""
    if SYMBOL_PREFIX in llvm_ir:
        load()


_AVX512 = {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}
_AVX512_KERNELS = {"skylakex", "cooperlake", "sapphirerapids"}


def kernels() -> str | None:
    """The kernel set OpenBLAS picked for this CPU ("Haswell", "SkylakeX", ...),
    None without a BLAS."""
    if library() is None:
        return None
    get = getattr(ctypes.CDLL(str(load())), GET_CORENAME)
    get.restype = ctypes.c_char_p
    return get().decode()


def avx512_left_unused() -> bool:
    """Whether this CPU runs AVX-512 (Linux's flags) but OpenBLAS picked kernels
    without it: because `OPENBLAS_CORETYPE` in the environment says so, or
    because it does not know the CPU (docs/performance-notes.md has what that
    costs). The library reads the variable when it loads, before numpy's
    import returns."""
    try:
        flags = next((line.split() for line in Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("flags")), [])
    except OSError:
        return False
    name = kernels()
    return _AVX512 <= set(flags) and name is not None and name.lower() not in _AVX512_KERNELS
