"""Suite-wide settings and shared fixtures."""

# The engine verifies its lowering once by default, and so does the suite
# (a pass that leaves broken IR fails the test at that verification): lit's
# opt-tool runs and tests/compiler/test_pipeline_verification.py verify after
# every pass, naming the pass; `DFC_VERIFY_EACH=1` does so for any test.
import pytest

from dfc.compiler.engine import clear_jit_cache


def _gemm_modes(ci_both: bool) -> list:
    """dfc's kernel and OpenBLAS; with `ci_both` false the one `DFC_GEMM=auto`
    would not pick on this host runs only with --slow."""
    from dfc.compiler.codegen import gemm_kernel

    host = gemm_kernel.auto_choice()
    return [pytest.param(m, marks=() if ci_both or m == host else pytest.mark.slow) for m in ("dfc", "blas")]


def _use_gemm(mode: str, monkeypatch):
    monkeypatch.setenv("DFC_GEMM", mode)
    clear_jit_cache()  # compiled modules are keyed by the choice; start each run clean
    yield mode
    clear_jit_cache()


@pytest.fixture(params=_gemm_modes(ci_both=True))
def gemm_mode(request, monkeypatch):
    """`blas.gemm` calls dfc's own kernel, then OpenBLAS (`DFC_GEMM`), whatever
    the host would choose."""
    yield from _use_gemm(request.param, monkeypatch)


@pytest.fixture(params=_gemm_modes(ci_both=False))
def host_gemm_mode(request, monkeypatch):
    """`gemm_mode` where CI runs only the GEMM the host would choose (both with --slow)."""
    yield from _use_gemm(request.param, monkeypatch)


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
