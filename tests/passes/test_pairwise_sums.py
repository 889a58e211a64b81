"""Float sums are reproducible and accurate: the same bits for 1, 2 and 3
threads (with and without fast-math), and relative errors against a wider
reference within a small multiple of NumPy's pairwise summation, for whole
sums, sums of squares, row and column sums and softmax denominators."""

import numpy as np
import pytest

from benchmarks.sums import KERNELS, reference
from dfc.compiler import ExecutionEngine, parse_module
from dfc.compiler.engine import lower

N = 1_000_003
ROWS, COLS = 96, 3001

DTYPES = {np.float32: "f32", np.float64: "f64"}


def _inputs(dtype):
    rng = np.random.default_rng(3)
    x = rng.random(N).astype(dtype)
    m = (rng.standard_normal((ROWS, COLS)) * 3).astype(dtype)
    return {"total": x, "squares": x, "rows": m, "columns": np.ascontiguousarray(m.T), "softmax": m}


def _exact(name, x):
    """The result computed in long double (float64's reference)."""
    return reference(name, x.astype(np.longdouble))


def _error(got, exact):
    return float(np.max(np.abs(np.asarray(got, np.longdouble) - exact) / np.abs(exact)))


@pytest.fixture(scope="module", params=list(DTYPES), ids=list(DTYPES.values()))
def runs(request):
    """{fast_math: {threads: {name: result}}} and the inputs, for one dtype."""
    dtype = request.param
    text = KERNELS.format(n=N, r=ROWS, c=COLS, t=DTYPES[dtype])
    inputs = _inputs(dtype)
    results = {}
    for fast_math in (True, False):
        results[fast_math] = {}
        for threads in (1, 2, 3):
            with ExecutionEngine(parse_module(text), threads=threads, fast_math=fast_math,
                                 parallel_min_work=0) as engine:
                results[fast_math][threads] = {name: engine.invoke(name, x) for name, x in inputs.items()}
    return dtype, inputs, results


@pytest.mark.parametrize("fast_math", [True, False])
def test_bit_identical_for_any_thread_count(runs, fast_math):
    _, inputs, results = runs
    for name in inputs:
        one = np.asarray(results[fast_math][1][name])
        for threads in (2, 3):
            other = np.asarray(results[fast_math][threads][name])
            assert one.tobytes() == other.tobytes(), (name, threads)


@pytest.mark.parametrize("fast_math", [True, False])
def test_as_accurate_as_numpy(runs, fast_math):
    dtype, inputs, results = runs
    eps = np.finfo(dtype).eps
    for name, x in inputs.items():
        exact = _exact(name, x)
        bound = 4 * max(_error(reference(name, x), exact), eps)
        assert _error(results[fast_math][2][name], exact) <= bound, name


def test_threads_do_not_change_the_lowered_sums():
    text = KERNELS.format(n=N, r=ROWS, c=COLS, t="f32")
    lowered = {threads: str(lower(parse_module(text), threads=threads)) for threads in (1, 2, 3)}
    for name in ("total", "squares", "columns"):
        bodies = {t: low[low.index(f"@{name}("):].split("func.func")[0] for t, low in lowered.items()}
        assert bodies[1] == bodies[2] == bodies[3], name
