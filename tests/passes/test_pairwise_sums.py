"""Float sums are reproducible and accurate: the same bits for 1, 2 and 3
threads (with and without fast-math), and relative errors against a wider
reference within a small multiple of NumPy's pairwise summation, for whole
sums, sums of squares, row and column sums and softmax denominators."""

import numpy as np
import pytest

from dfc.compiler import ExecutionEngine, parse_module
from dfc.compiler.engine import lower

N = 1_000_003
ROWS, COLS = 96, 3001

PROGRAMS = """
func.func @total(%x: tensor<{n}x{t}>) -> tensor<{t}> {{
  %s = nn.reduce %x {{kind = "sum", axes = array<i64: 0>}} : (tensor<{n}x{t}>) -> tensor<{t}>
  func.return %s : tensor<{t}>
}}
func.func @squares(%x: tensor<{n}x{t}>) -> tensor<{t}> {{
  %q = nn.mul %x, %x : (tensor<{n}x{t}>, tensor<{n}x{t}>) -> tensor<{n}x{t}>
  %s = nn.reduce %q {{kind = "sum", axes = array<i64: 0>}} : (tensor<{n}x{t}>) -> tensor<{t}>
  func.return %s : tensor<{t}>
}}
func.func @rows(%x: tensor<{r}x{c}x{t}>) -> tensor<{r}x{t}> {{
  %s = nn.reduce %x {{kind = "sum", axes = array<i64: 1>}} : (tensor<{r}x{c}x{t}>) -> tensor<{r}x{t}>
  func.return %s : tensor<{r}x{t}>
}}
func.func @columns(%x: tensor<{c}x{r}x{t}>) -> tensor<{r}x{t}> {{
  %s = nn.reduce %x {{kind = "sum", axes = array<i64: 0>}} : (tensor<{c}x{r}x{t}>) -> tensor<{r}x{t}>
  func.return %s : tensor<{r}x{t}>
}}
func.func @softmax(%x: tensor<{r}x{c}x{t}>) -> tensor<{r}x{c}x{t}> {{
  %s = nn.softmax %x {{axis = -1 : i64}} : (tensor<{r}x{c}x{t}>) -> tensor<{r}x{c}x{t}>
  func.return %s : tensor<{r}x{c}x{t}>
}}
"""

DTYPES = {np.float32: "f32", np.float64: "f64"}


def _inputs(dtype):
    rng = np.random.default_rng(3)
    x = rng.random(N).astype(dtype)
    m = (rng.standard_normal((ROWS, COLS)) * 3).astype(dtype)
    return {"total": x, "squares": x, "rows": m, "columns": np.ascontiguousarray(m.T), "softmax": m}


def _exact(name, x):
    """The result computed in long double (float64's reference)."""
    w = x.astype(np.longdouble)
    if name == "total":
        return w.sum()
    if name == "squares":
        return (w * w).sum()
    if name == "rows":
        return w.sum(axis=1)
    if name == "columns":
        return w.sum(axis=0)
    e = np.exp(w - w.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _numpy(name, x):
    if name == "total":
        return np.sum(x)
    if name == "squares":
        return np.sum(x * x)
    if name == "rows":
        return np.sum(x, axis=1)
    if name == "columns":
        return np.sum(x, axis=0)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / np.sum(e, axis=1, keepdims=True)


def _error(got, exact):
    return float(np.max(np.abs(np.asarray(got, np.longdouble) - exact) / np.abs(exact)))


@pytest.fixture(scope="module", params=list(DTYPES), ids=list(DTYPES.values()))
def runs(request):
    """{fast_math: {threads: {name: result}}} and the inputs, for one dtype."""
    dtype = request.param
    text = PROGRAMS.format(n=N, r=ROWS, c=COLS, t=DTYPES[dtype])
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
        bound = 4 * max(_error(_numpy(name, x), exact), eps)
        assert _error(results[fast_math][2][name], exact) <= bound, name


def test_threads_do_not_change_the_lowered_sums():
    text = PROGRAMS.format(n=N, r=ROWS, c=COLS, t="f32")
    lowered = {threads: str(lower(parse_module(text), threads=threads)) for threads in (1, 2, 3)}
    for name in ("total", "squares", "columns"):
        bodies = {t: low[low.index(f"@{name}("):].split("func.func")[0] for t, low in lowered.items()}
        assert bodies[1] == bodies[2] == bodies[3], name
