"""`dfc.grad(f, memory_budget=B)` (issue 37): the compiled gradient's measured
memory (`resident_bytes` of its lowered code: arenas, stack frames and heap
along its calls) is at most B for every B from the least the gradient can hold
up; below that a `MemoryBudgetError` naming the least; the gradient is the
stored one's, and float64 central differences'. Programs: an MLP of three
distinct widths (its layers outlined though no two are equal), a residual
chain of equal layers and a distinct tail, a stencil loop between
straight-line code (the loop and the straight-line code share the budget). CI
runs the MLP at one budget; the sweeps run with --slow."""

import inspect

import numpy as np
import pytest

import dfc
from benchmarks.autodiff_memory import layer_chain, nonlinear_jacobi
from dfc.compiler import parse_module
from dfc.memory_budget import MemoryBudgetError, measured_bytes

RNG = np.random.default_rng(37)


def mlp(x, w1, w2, w3):
    h = np.tanh(x @ w1)
    h = np.tanh(h @ w2)
    return np.sum((h @ w3) ** 2)


MLP_ARGS = [RNG.standard_normal((16, 8)), RNG.standard_normal((8, 24)) / 3, RNG.standard_normal((24, 12)) / 5,
            RNG.standard_normal((12, 4)) / 4]
RESIDUAL_ARGS = [RNG.standard_normal((32, 8)), RNG.standard_normal((8, 8)) / 3, RNG.standard_normal((8, 8)) / 3]


def central_differences(f, args, k, eps=1e-6):
    """d f / d args[k] by float64 central differences of the NumPy function `f`."""
    g = np.zeros_like(args[k])
    for i in np.ndindex(args[k].shape):
        plus, minus = [a.copy() for a in args], [a.copy() for a in args]
        plus[k][i] += eps
        minus[k][i] -= eps
        g[i] = (f(*plus) - f(*minus)) / (2 * eps)
    return g


def least_bytes(f, args, argnums):
    """The least the gradient holds, from the error a budget of 1 byte raises."""
    with pytest.raises(MemoryBudgetError, match=r"memory_budget=1 bytes is below the least the gradient of "
                                                r"@\w+ can hold: \d+ bytes measured") as err:
        dfc.grad(f, argnums, memory_budget=1).specialize(*args)
    return err.value.least


def within(f, args, argnums, budget):
    """The gradient under `budget`, its measured bytes asserted within it."""
    fn, ir_args, _ = dfc.grad(f, argnums, memory_budget=budget).specialize(*args)
    held = measured_bytes(fn)
    assert held <= budget, (budget, held)
    out = fn(*ir_args)
    return (out if isinstance(out, tuple) else (out,)), held, fn


def test_budget_error_is_public_and_located_at_the_python_function():
    """`dfc.MemoryBudgetError` is the error raised (a `CompileError`), located at
    the jitted function's `def` line in its file."""
    assert dfc.MemoryBudgetError is MemoryBudgetError and issubclass(MemoryBudgetError, dfc.CompileError)
    with pytest.raises(dfc.MemoryBudgetError) as err:
        dfc.grad(mlp, 1, memory_budget=1).specialize(*MLP_ARGS)
    line = inspect.getsourcelines(mlp)[1]
    assert f"{__file__}:{line}:" in str(err.value)


def recomputed(fn) -> bool:
    """Whether the gradient recomputes a segment (a checkpoint call) or a loop (segments, or none kept)."""
    return any(op.name == "func.call" and "df.checkpoint" in op.attributes or op.name == "arith.minsi"
               for op in fn.module.walk())


def test_mlp_of_distinct_widths_within_a_budget():
    """16x8 -> 24 -> 12 -> 4: a byte below the stored gradient's, some layer is
    recomputed (no two are equal), the measured bytes fit, and the gradient is
    central differences'."""
    argnums = (0, 1, 2, 3)
    full = measured_bytes(dfc.grad(mlp, argnums).specialize(*MLP_ARGS)[0])
    got, _, fn = within(mlp, MLP_ARGS, argnums, full - 1)
    assert recomputed(fn)
    for k, g in enumerate(got):
        want = central_differences(mlp, MLP_ARGS, k)
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8 * np.max(np.abs(want)))


def sweep(f, args, argnums, stored):
    """Budgets from the stored gradient's bytes down to the least: each fits, the
    gradient is the stored one's, the bytes fall to the least (returned)."""
    full = measured_bytes(stored)
    want = stored(*args)
    least = least_bytes(f, args, argnums)
    assert least < full
    held = []
    for budget in (full, *(least + (full - least) * k // 4 for k in (3, 2, 1)), least):
        got, h, _ = within(f, args, argnums, budget)
        held.append(h)
        for g, w in zip(got, want if isinstance(want, tuple) else (want,), strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-13 * np.max(np.abs(w)))
    assert held[0] == full and held[-1] == least, (full, least, held)
    return least


@pytest.mark.slow
def test_budget_sweep_mlp():
    stored, _, _ = dfc.grad(mlp, (0, 1, 2, 3)).specialize(*MLP_ARGS)
    sweep(mlp, MLP_ARGS, (0, 1, 2, 3), stored)


@pytest.mark.slow
def test_budget_sweep_residual_chain():
    """5 layers h + tanh(tanh(h w1) w2) of 32x8 (benchmarks.autodiff_memory.layer_chain):
    the equal layers and the distinct tail recomputed, the least well below the
    stored gradient's bytes; the gradient is central differences'."""
    fn = dfc.Function(parse_module(layer_chain(5, 32, 8)), "chain")
    stored, _, _ = dfc.grad(fn, (0, 1, 2)).specialize(*RESIDUAL_ARGS)
    least = sweep(fn, RESIDUAL_ARGS, (0, 1, 2), stored)
    assert least < measured_bytes(stored) * 2 // 3
    got = stored(*RESIDUAL_ARGS)
    for k in range(3):
        e = np.zeros_like(RESIDUAL_ARGS[k])
        for i in [(0, 0), (2, 5), (7, 3)]:
            e[i] = 1e-6
            plus = [a + e if j == k else a for j, a in enumerate(RESIDUAL_ARGS)]
            minus = [a - e if j == k else a for j, a in enumerate(RESIDUAL_ARGS)]
            np.testing.assert_allclose(got[k][i], (fn(*plus) - fn(*minus)) / 2e-6, rtol=1e-6)
            e[i] = 0


@pytest.mark.slow
def test_budget_sweep_stencil_loop():
    """8x8 jacobi-2d through sin, 12 steps: the loop's tape, checkpoints or
    recomputation and the straight-line values share the budget."""
    fn = dfc.Function(parse_module(nonlinear_jacobi(8, 12)), "jacobi2d")
    x = RNG.standard_normal((8, 8))
    stored, _, _ = dfc.grad(fn).specialize(x)
    sweep(fn, [x], (0,), stored)
    g = stored(x)
    for i in [(0, 0), (3, 4), (7, 6)]:
        e = np.zeros_like(x)
        e[i] = 1e-6
        fd = (fn(x + e) - fn(x - e)) / 2e-6
        np.testing.assert_allclose(g[i], fd, rtol=1e-6, atol=1e-9)
