"""Reproducible float sums: what `pairwise-sums` and the fixed chunks cost.

Per kernel and dtype: numpy; dfc (default pipeline, fast-math); dfc without
`pairwise-sums` (the same fixed chunks, each summed in one loop: the blocks'
cost); dfc with `fast_math=False` (blocks of 32 added in order); and each
one's error against a long-double reference (the largest over the largest
value). Ratios are numpy's time over each column's (above 1: faster than
numpy).

    python -m benchmarks.sums [--quick]
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks.common import median_time, row
from dfc.compiler import ExecutionEngine, parse_module
from dfc.config import default_threads
from dfc.passes import default_pipeline

KERNELS = """
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
"""The kernels, formatted with sizes n, r, c and element type t (also the
programs of tests/passes/test_pairwise_sums.py)."""


def reference(name: str, x: np.ndarray):
    """Kernel `name` computed by NumPy in `x`'s dtype (long double: the exact reference)."""
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


def _error(got, x: np.ndarray, name: str) -> float:
    """The largest error over the largest exact value (a row summing to nearly
    0 would make an elementwise relative error meaningless)."""
    exact = np.asarray(reference(name, x.astype(np.longdouble)))
    return float(np.max(np.abs(np.asarray(got, np.longdouble) - exact)) / np.max(np.abs(exact)))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sums")
    parser.add_argument("--quick", action="store_true", help="small sizes")
    quick = parser.parse_args().quick
    n, r, c = (1 << 18, 256, 1024) if quick else (1 << 22, 1024, 4096)
    threads = default_threads()
    unblocked = default_pipeline(threads, without=("pairwise-sums",))
    print(f"{threads} threads; sums of {n} elements, rows and softmax of {r}x{c}; errors against long double")
    rng = np.random.default_rng(0)
    for dtype, t in ((np.float32, "f32"), (np.float64, "f64")):
        text = KERNELS.format(n=n, r=r, c=c, t=t)
        engines = {"dfc": ExecutionEngine(parse_module(text)),
                   "unblocked": ExecutionEngine(parse_module(text), pipeline=unblocked),
                   "in order": ExecutionEngine(parse_module(text), fast_math=False)}
        flat, matrix = rng.random(n).astype(dtype), rng.standard_normal((r, c)).astype(dtype)
        inputs = {"total": flat, "squares": flat, "rows": matrix, "columns": np.ascontiguousarray(matrix.T),
                  "softmax": matrix}
        for name, x in inputs.items():
            seconds = {"numpy": median_time(lambda x=x, name=name: reference(name, x))}
            errors = [f"numpy {_error(reference(name, x), x, name):.1e}"]
            for label, engine in engines.items():
                seconds[label] = median_time(lambda engine=engine, x=x, name=name: engine.invoke(name, x))
                errors.append(f"{label} {_error(engine.invoke(name, x), x, name):.1e}")
            print(row(f"{name} {t}", seconds, extra="errors: " + ", ".join(errors)), flush=True)
        for engine in engines.values():
            engine.close()


if __name__ == "__main__":
    main()
