"""Running a test's parallel loops on an OpenMP team."""

import contextlib
import ctypes

import pytest

from dfc.compiler.codegen import runtime


@contextlib.contextmanager
def openmp_team():
    """Parallel loops on an OpenMP team (GCC's libgomp, as torch ships it)
    through `runtime.use_openmp`; skips the test without libgomp."""
    try:
        ctypes.CDLL("libgomp.so.1")
    except OSError:
        pytest.skip("no libgomp.so.1 on this machine")
    runtime.use_openmp(runtime.loaded_openmp())
    try:
        yield
    finally:
        runtime.use_openmp(None)
