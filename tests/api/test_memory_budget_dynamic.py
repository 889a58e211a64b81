"""`dfc.grad(f, memory_budget=B)` where sizes are known only at run time (issue 37): a data-dependent
`while` loop is replayed with a tape of at most the rows B leaves (2 here, for 7 trips: recomputed at run
time; tests/api/test_vmap_control_flow.py runs both sides), so its gradient's measured memory holds B
(and equals float64 central differences); a gradient that allocates a buffer of run-time size has no
bound to hold, and the budget is refused by name (`UnboundedMemoryError`) instead of measured without it.
The lowering that measured the chosen plan is the one compiled."""

import numpy as np
import pytest

import dfc
from dfc.compiler import parse_module
from dfc.memory_budget import MemoryBudgetError, UnboundedMemoryError, measured_bytes


def growth_loss(x, w):
    """As many trips as the data say (3 here)."""
    h, p = x.copy(), w.copy()
    while np.sum(h) < 20.0:
        h, p = h * w + x, p * np.tanh(h)
    return np.sum(h * p)


@pytest.mark.slow
def test_a_data_dependent_while_holds_its_budget():
    """(--slow: two compiled gradients, 20 s on the loaded 2-core VM.)"""
    x, w = np.array([0.3, 0.5, 0.2, 0.4]), np.array([1.1, 1.3, 0.9, 1.2])
    budget = 1000
    fn, ir_args, _ = dfc.grad(growth_loss, (0, 1), memory_budget=budget).specialize(x, w)
    assert measured_bytes(fn) <= budget
    got = fn(*ir_args)
    eps = 1e-6
    for k, g in enumerate(got):
        want = np.zeros_like(g)
        for i in range(g.size):
            args = [x.copy(), w.copy()]
            args[k][i] += eps
            plus = growth_loss(*args)
            args[k][i] -= 2 * eps
            want[i] = (plus - growth_loss(*args)) / (2 * eps)
        np.testing.assert_allclose(g, want, rtol=1e-7)
    stored = dfc.grad(growth_loss, (0, 1))(x, w)
    for a, b in zip(got, stored, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-14)


DYNAMIC = """
func.func @f(%x: tensor<?xf64>) -> tensor<f64> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf64>
  %z = arith.constant dense<0.0> : tensor<f64>
  %s = df.map (%i) in (%n) outs(%o = %z : tensor<f64>) {
    %v = df.read %x[%i] : tensor<?xf64>
    %t = df.tasklet (%v) : (f64) -> f64 {
    ^bb0(%a: f64):
      %b = math.tanh %a : f64
      %c = arith.mulf %b, %b : f64
      df.yield %c : f64
    }
    df.write %t, %o[] wcr(add) : tensor<f64>
  } -> tensor<f64>
  func.return %s : tensor<f64>
}
"""


def test_a_buffer_of_run_time_size_refuses_the_budget():
    """The gradient of a dynamically shaped argument is a buffer of run-time size: no budget is a bound."""
    fn = dfc.Function(parse_module(DYNAMIC), "f")
    x = np.linspace(-1.0, 1.0, 7)
    np.testing.assert_allclose(dfc.grad(fn)(x), 2 * np.tanh(x) * (1 - np.tanh(x) ** 2), rtol=1e-14)
    with pytest.raises(UnboundedMemoryError, match=r"memory_budget cannot be guaranteed for @grad_f: its compiled "
                                                   r"code allocates \d+ buffers? of a size known only at run time "
                                                   r"\(the first a memref<\?xf64>\)") as err:
        dfc.grad(fn, memory_budget=10**9)(x)
    assert isinstance(err.value, MemoryBudgetError) and err.value.location


def test_the_measured_lowering_is_compiled(monkeypatch):
    """The budget lowers the gradient to measure it; the engine then compiles that lowering, not a second one."""
    from dfc.compiler import engine

    pipelines = []
    parse = engine.PassManager.parse
    monkeypatch.setattr(engine.PassManager, "parse", lambda text, **kw: pipelines.append(text) or parse(text, **kw))

    def loss(x, w):
        return np.sum(np.tanh(x @ w) ** 2)

    x, w = np.linspace(-1.0, 1.0, 12).reshape(3, 4), np.linspace(0.5, -0.5, 8).reshape(4, 2)
    got = dfc.grad(loss, 1, memory_budget=10**9)(x, w)
    np.testing.assert_allclose(got, x.T @ (2 * np.tanh(x @ w) * (1 - np.tanh(x @ w) ** 2)), rtol=1e-13)
    lowerings = [p for p in pipelines if p.startswith("expand-library")]
    assert len(lowerings) == 1, pipelines
