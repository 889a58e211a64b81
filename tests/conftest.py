"""Suite-wide settings and shared fixtures."""

import os

# The engine verifies its lowering once by default; the suite verifies after
# every pass, so that a pass leaving broken IR is named.
os.environ.setdefault("DFC_VERIFY_EACH", "1")

import pytest  # noqa: E402

from dfc.compiler.engine import clear_jit_cache  # noqa: E402


@pytest.fixture(params=["dfc", "blas"])
def gemm_mode(request, monkeypatch):
    """`blas.gemm` calls dfc's own kernel, then OpenBLAS (`DFC_GEMM`), whatever
    the host would choose."""
    monkeypatch.setenv("DFC_GEMM", request.param)
    clear_jit_cache()  # compiled modules are keyed by the choice; start each run clean
    yield request.param
    clear_jit_cache()


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true", default=False,
                     help="also run the tests marked `slow` (full sweeps, model zoos, long differential runs)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="slow: runs with --slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
