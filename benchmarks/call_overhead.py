"""Call overhead: `ExecutionEngine.invoke` on a function of eight 4-element
arrays (one tiny map, one result), against the cheapest comparable call in
numpy, PyTorch and JAX (one elementwise op on the same arrays), in one run;
`dfc out=` writes the result into a caller array (no allocation; numpy's
column uses `out=` the same way).

The second line is the dispatch of a `@dfc.jit` call (issue 33, item 8):
`kernel(x, y) = x * y + 1.0` on two 8-element float64 arrays called through
`dfc.jit` (signature lookup, argument checks, result wrapping), through its
compiled entry (`ExecutionEngine.invoke` of the same specialisation), with
numpy and with `jax.jit` (when installed), with each time's ratio to numpy's.
docs/performance-notes.md keeps the figures.

    python -m benchmarks.call_overhead
"""

from __future__ import annotations

import numpy as np

import dfc
from benchmarks.common import median_time, optional
from dfc.compiler import ExecutionEngine, parse_module

ARGS = ", ".join(f"%a{k}: tensor<4xf32>" for k in range(8))
TEXT = f"""func.func @f({ARGS}) -> tensor<4xf32> {{
  %r = df.map (%i) in (4) outs(%o = %a0 : tensor<4xf32>) {{
    %u = df.read %a1[%i] : tensor<4xf32>
    df.write %u, %o[%i] : tensor<4xf32>
  }} -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}}"""


@dfc.jit
def kernel(x, y):
    return x * y + 1.0


def per_call(fn, calls: int = 2000) -> float:
    """Median seconds per call over batches of `calls` calls."""
    def batch():
        for _ in range(calls):
            fn()
    return median_time(batch) / calls


def main() -> None:
    torch, jax = optional("torch"), optional("jax")
    xs = [np.ones(4, np.float32) for _ in range(8)]
    engine = ExecutionEngine(parse_module(TEXT))
    out = np.empty(4, np.float32)
    times = {"numpy": per_call(lambda: np.add(xs[0], xs[1])), "numpy out=": per_call(lambda: np.add(xs[0], xs[1], out=out)),
             "dfc": per_call(lambda: engine.invoke("f", *xs)), "dfc out=": per_call(lambda: engine.invoke("f", *xs, out=out))}
    times["torch"] = None
    if torch is not None:
        ts = [torch.from_numpy(x) for x in xs]
        times["torch"] = per_call(lambda: torch.add(ts[0], ts[1]))
    times["jax"] = None
    if jax is not None:
        js = [jax.numpy.asarray(x) for x in xs]
        f = jax.jit(lambda *a: a[0] + a[1])
        times["jax"] = per_call(lambda: f(*js).block_until_ready())
    cells = [f"{k} {'n/a' if t is None else f'{t * 1e6:.1f} us'}" for k, t in times.items()]
    print("per call, 8 arrays:  " + "  ".join(cells))
    dispatch = jit_dispatch(jax)
    base = dispatch["numpy"]
    cells = [f"{k} {'n/a' if t is None else f'{t * 1e6:.1f} us ({t / base:.1f}x)'}" for k, t in dispatch.items()]
    print("per call, x * y + 1.0 on 8 float64 (x numpy):  " + "  ".join(cells))


def jit_dispatch(jax) -> dict[str, float | None]:
    """Seconds per call of `kernel` on two 8-element float64 arrays: through `dfc.jit`,
    through its compiled entry, with numpy and with `jax.jit` (None without JAX)."""
    x, y = np.linspace(0.0, 1.0, 8), np.full(8, 2.0)
    kernel(x, y)
    function = kernel._fast[((x.dtype, x.shape), (y.dtype, y.shape))].function
    engine, name = function._engine, function.name
    times = {"dfc.jit": per_call(lambda: kernel(x, y)), "entry": per_call(lambda: engine.invoke(name, x, y)),
             "numpy": per_call(lambda: x * y + 1.0), "jax.jit": None}
    if jax is not None:
        f = jax.jit(lambda a, b: a * b + 1.0)
        jx, jy = jax.numpy.asarray(x), jax.numpy.asarray(y)
        times["jax.jit"] = per_call(lambda: f(jx, jy).block_until_ready())
    return times


if __name__ == "__main__":
    main()
