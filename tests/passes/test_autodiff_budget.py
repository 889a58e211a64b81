"""Store or recompute under a memory budget (issue 37, item 3): `autodiff{memory_budget=B}`
keeps a loop's full tape when it fits in B bytes, else checkpoints the loop
state every k-th iteration and recomputes each segment into a k-row tape in the
backward sweep, else recomputes from the start. The gradient is the same at
every budget (bit-identical on the engine), and mem-plan's peak of the compiled
gradient exceeds the peak without any tape by at most B."""

import numpy as np
import pytest
from support.autodiff_checks import check_gradient

import dfc
from benchmarks.autodiff_memory import nonlinear_jacobi as stencil
from benchmarks.passes import peak_bytes
from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.interpreter import interpret


def gradient_module(text: str, options: str):
    module = parse_module(text)
    PassManager.parse(f"autodiff{{{options}}}").run(module)
    return module


@pytest.mark.parametrize("budget", [pytest.param(10**9, marks=pytest.mark.slow), 4500, 0], ids=str)  # full tape: --slow
def test_small_stencil_against_central_differences(budget):
    """5x5, 13 steps (a 400-byte state, the full tape 5,200 bytes; the straight-line
    code's 816 bytes come first out of the shared budget): full tape (1e9),
    checkpoints every 3 steps (4,500 bytes: 3,600 for segments of 3, 3, 3, 3, 1),
    recomputation (0)."""
    x = np.random.default_rng(5).standard_normal((5, 5))
    text = stencil(5, 13)
    if budget == 4500:
        assert any(op.name == "arith.minsi" for op in gradient_module(text, "memory_budget=4500").walk())  # segments
    check_gradient(text, "jacobi2d", [x], [0], pipeline=f"autodiff{{memory_budget={budget}}}", rtol=1e-6)


@pytest.mark.parametrize("n, steps, budget", [
    pytest.param(16, 60, 80_000, marks=pytest.mark.slow),  # 8 checkpoints every 8 steps and an 8-row tape: 64 KiB
    pytest.param(32, 200, 600_000, marks=pytest.mark.slow),  # 15 checkpoints every 14 steps, a 14-row tape: 480 KiB
])  # fmt: skip
def test_stencil_budget_holds_and_gradient_is_unchanged(n, steps, budget):
    """n x n, `steps` steps (32x32x200: a 16 KiB state, the full tape 3.2 MB):
    within its budget the compiled gradient's peak is within the budget of the
    peak without a tape, and the gradient is bit-identical to the full tape's."""
    text = stencil(n, steps)
    x = np.random.default_rng(7).standard_normal((n, n))
    base = peak_bytes(str(gradient_module(text, "recompute=true")), 1, (), "jacobi2d_grad")
    full = gradient_module(text, "")
    want = ExecutionEngine(full).invoke("jacobi2d_grad", x, np.array(1.0))[1]
    assert peak_bytes(str(full), 1, (), "jacobi2d_grad") - base >= steps * 2 * n * n * 8  # the tape of a and b
    module = gradient_module(text, f"memory_budget={budget}")
    assert any(op.name == "arith.minsi" for op in module.walk())  # checkpointed segments
    peak = peak_bytes(str(module), 1, (), "jacobi2d_grad")
    assert base < peak <= base + budget, (budget, base, peak)
    got = ExecutionEngine(module).invoke("jacobi2d_grad", x, np.array(1.0))[1]
    np.testing.assert_array_equal(got, want)


def test_budget_through_dfc_grad_and_value_and_grad():
    """dfc.grad's budget bounds the compiled gradient's measured bytes (30 steps of
    8 float64: 2,240 bytes with the full tape, 960 with checkpoints, 320 with
    recomputation: 1,000 and 500 bytes); below the least, a MemoryBudgetError at
    the function."""
    from dfc.memory_budget import MemoryBudgetError, measured_bytes

    def loss(x, w):
        for _ in range(30):
            x = np.sin(x * w) + x
        return np.sum(x)

    x, w = np.random.default_rng(2).standard_normal(8), np.random.default_rng(3).standard_normal(8)
    want = dfc.grad(loss)(x, w)
    for budget, checkpointed in ((1000, True), (500, False)):
        fn, _, _ = dfc.grad(loss, memory_budget=budget).specialize(x, w)
        assert measured_bytes(fn) <= budget
        assert any(op.name == "arith.minsi" for op in fn.module.walk()) == checkpointed
        np.testing.assert_allclose(fn(x, w), want, rtol=1e-12)
    value, g = dfc.value_and_grad(loss, memory_budget=1000)(x, w)
    np.testing.assert_allclose(g, want, rtol=1e-12)
    # the IR function of a Python `loss` is @loss, or @loss_<n> when the process compiled another `loss` first
    with pytest.raises(MemoryBudgetError, match=r"memory_budget=100 bytes is below the least the gradient of "
                                                r"@loss(_\d+)? can hold: \d+ bytes measured"):
        dfc.grad(loss, memory_budget=100)(x, w)


def test_interpreter_agrees_at_every_budget():
    text = stencil(8, 12)
    x = np.random.default_rng(9).standard_normal((8, 8))
    results = []
    for options in ("", "memory_budget=10500", "memory_budget=0"):  # full tape, checkpoints, recomputation
        module = gradient_module(text, options)
        PassManager.parse("expand-library").run(module)
        results.append(interpret(module, "jacobi2d_grad", x, np.array(1.0))[1])
    for r in results[1:]:
        np.testing.assert_allclose(r, results[0], rtol=1e-12)


STEPPED = """func.func @f(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<3xf64> {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c200 = arith.constant 200 : index
  %r = scf.for %t = %c2 to %c200 step %c3 iter_args(%h = %x) -> (tensor<3xf64>) {
    %p = nn.mul %h, %w : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    %q = nn.tanh %p : (tensor<3xf64>) -> tensor<3xf64>
    %y = nn.add %q, %h : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    scf.yield %y : tensor<3xf64>
  }
  func.return %r : tensor<3xf64>
}"""


@pytest.mark.parametrize("case", ["30 trips", "nested 3x16x2", "from 2 step 3"])
def test_checkpointed_loops_against_central_differences(case):
    """Checkpoints (500 bytes of 24-byte states and rows) in a loop of 30 trips,
    in the middle one of three nested loops, and in a loop of 66 trips from 2 by 3."""
    from test_autodiff_loops import loops

    text = {"30 trips": loops(1, [30]), "nested 3x16x2": loops(3, [3, 16, 2]), "from 2 step 3": STEPPED}[case]
    assert any(op.name == "arith.minsi" for op in gradient_module(text, "memory_budget=500").walk())
    rng = np.random.default_rng(4)
    check_gradient(text, "f", [rng.standard_normal(3), rng.standard_normal(3)], [0, 1], pipeline="autodiff{memory_budget=500}")
