"""nn.argsort's merge sort (dialects/nn_expand_sort.py, rows of MERGE_MIN_N and more) on the
interpreter and the engine against NumPy's and PyTorch's stable sorts: the threshold is lowered here so
that short rows (non-powers of two, a last partial run) take the merge path; floats with NaN, -0.0,
infinities and ties, signed, unsigned and boolean integers, descending, top-k, rank 2 along each axis; also
on the simulated GPU, and at the real threshold on the engine."""

import numpy as np
import pytest
from support.gpu_sim import simulated_engine

import dfc.dialects.nn_expand_sort as nn_expand_sort
from dfc.compiler import ExecutionEngine, parse_module
from dfc.compiler.engine import clear_jit_cache
from tests.dialects.test_nn_elementwise import check
from tests.dialects.test_nn_sort import _argsort, _floats, _reference

RNG = np.random.default_rng(35)
SLOW = pytest.mark.slow


@pytest.fixture
def merge_from(monkeypatch):
    """Lowers the merge threshold to `n` (compiled modules cached by their text are dropped around it)."""
    def lower(n: int) -> None:
        monkeypatch.setattr(nn_expand_sort, "MERGE_MIN_N", n)
    clear_jit_cache()
    yield lower
    clear_jit_cache()


@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.float64, marks=SLOW), pytest.param(np.float16, marks=SLOW)])
@pytest.mark.parametrize("shape,axis,descending,threshold", [
    ((9, 3), 0, True, 8), pytest.param((2, 13), 1, False, 8, marks=SLOW), pytest.param((3, 7), 1, False, 8, marks=SLOW),
    pytest.param((17,), 0, True, 8, marks=SLOW), pytest.param((16,), 0, False, 16, marks=SLOW),
    pytest.param((5, 33), 1, True, 16, marks=SLOW), pytest.param((33, 4), 0, False, 16, marks=SLOW),
])
def test_merge_sort_of_floats(merge_from, dtype, shape, axis, descending, threshold):
    """n = 7 below the threshold (rank counting), the others merged, with a partial last run."""
    merge_from(threshold)
    x = _floats(shape, dtype)
    check(_argsort(list(shape), f"f{np.dtype(dtype).itemsize * 8}", axis, "descending" if descending else ""), [x], _reference(x, axis, descending))


@pytest.mark.parametrize("dtype,mlir,flags", [
    (np.uint8, "i8", "unsigned descending"), pytest.param(np.int64, "i64", "", marks=SLOW),
    pytest.param(np.int8, "i8", "descending", marks=SLOW), pytest.param(np.uint64, "i64", "unsigned", marks=SLOW),
    pytest.param(np.int32, "i32", "descending", marks=SLOW),
])
def test_merge_sort_of_integers(merge_from, dtype, mlir, flags):
    merge_from(4)
    info = np.iinfo(dtype)
    x = RNG.integers(max(info.min, -3), min(info.max, 3), (2, 11), endpoint=True).astype(dtype)
    x[0, :4] = [info.min, info.max, info.min, info.max]
    x[1, 6:] = info.max
    expected = _reference(x.astype(np.float64) if info.kind == "u" else x, 1, "descending" in flags)
    signed = x.view({1: np.int8, 4: np.int32, 8: np.int64}[x.itemsize]) if info.kind == "u" else x
    check(_argsort([2, 11], mlir, 1, flags), [signed], expected)


@pytest.mark.parametrize("descending", [pytest.param(True, marks=SLOW), pytest.param(False, marks=SLOW)])
def test_merge_sort_of_booleans(merge_from, descending):
    merge_from(4)
    x = RNG.integers(0, 2, (10, 2)).astype(bool)
    check(_argsort([10, 2], "i1", 0, "descending" if descending else ""), [x], _reference(x, 0, descending))


@pytest.mark.parametrize("flags,k", [pytest.param("descending", 9, marks=SLOW), pytest.param("", 12, marks=SLOW)])
def test_merge_sort_first_k(merge_from, flags, k):
    """A top-k past the selection rounds' reach: the first k of the merged order."""
    merge_from(8)
    x = _floats((2, 21), np.float32)
    check(_argsort([2, 21], "f32", 1, flags, k), [x], _reference(x, 1, "descending" in flags)[:, :k])


def test_merge_sort_on_the_simulated_gpu(merge_from):
    """The GPU lowering of the passes (the placement's wcr writes at data-dependent indices, atomics there)."""
    merge_from(8)
    x = _floats((3, 13), np.float32)
    got = simulated_engine(parse_module(_argsort([3, 13], "f32", 1, "descending"))).invoke("f", x)
    np.testing.assert_array_equal(got, _reference(x, 1, True))


@pytest.mark.slow
@pytest.mark.parametrize("n", [nn_expand_sort.MERGE_MIN_N - 1, nn_expand_sort.MERGE_MIN_N + 1, 5000])
def test_sort_around_the_threshold(n):
    """At the real threshold, on the engine (the interpreter takes seconds a row this long)."""
    x = np.round(RNG.standard_normal((2, n)) * 30)
    x[0, RNG.choice(n, 40, replace=False)] = np.nan
    x[1, RNG.choice(n, 40, replace=False)] = -0.0
    for descending in (False, True):
        got = ExecutionEngine(parse_module(_argsort([2, n], "f64", 1, "descending" if descending else ""))).invoke(
            "f", x)
        np.testing.assert_array_equal(got, _reference(x, 1, descending))
