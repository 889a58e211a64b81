"""Autodiff semantics that follow PyTorch/JAX (issue 12, item 9): relu of NaN,
derivative 0 of floor/ceil/round/trunc/sign, scalar float results; each
through the interpreter and the engine."""

import numpy as np
import pytest
from support.autodiff_checks import check_gradient

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.interpreter import interpret
from dfc.dialects.diagnostics import CompileError
from dfc.passes.autodiff import rules

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(5)

RELU = """func.func @f(%x: tensor<6xf64>) -> tensor<6xf64> {
  %r = nn.relu %x : (tensor<6xf64>) -> tensor<6xf64>
  func.return %r : tensor<6xf64>
}"""
SPECIAL = np.array([np.nan, -0.0, 0.0, 1.5, -2.0, np.inf])


def _run(module, engine: bool, name: str, *args):
    return ExecutionEngine(module).invoke(name, *args) if engine else interpret(module, name, *args)


@pytest.mark.parametrize("engine", [False, True], ids=["interpreter", "engine"])
@pytest.mark.parametrize("through", ["rule", "expansion"])
def test_relu_at_nan_and_zero_matches_pytorch(through, engine, monkeypatch):
    if through == "expansion":
        monkeypatch.delitem(rules.BACKWARD_RULES, "nn.relu")
    module = parse_module(RELU)
    PassManager.parse("autodiff" if engine else "autodiff,expand-library").run(module)
    seed = np.array([2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    value, grad = _run(module, engine, "f_grad", SPECIAL, seed)
    x = torch.tensor(SPECIAL, requires_grad=True)
    y = torch.relu(x)
    y.backward(torch.tensor(seed))
    np.testing.assert_array_equal(value, y.detach().numpy())  # NaN stays NaN; -0.0 == 0.0
    np.testing.assert_array_equal(grad, x.grad.numpy())  # NaN passes the gradient on; relu'(0) = 0


STEP = """func.func @f(%x: tensor<5xf64>) -> tensor<5xf64> {
  %e = tensor.empty() : tensor<5xf64>
  %y = df.map (%i) in (5) outs(%o = %e : tensor<5xf64>) {
    %v = df.read %x[%i] : tensor<5xf64>
    %r = df.tasklet (%v) : (f64) -> f64 {
    ^bb0(%a: f64):
      %s = math.OP %a : f64
      %t = arith.mulf %s, %a : f64
      df.yield %t : f64
    }
    df.write %r, %o[%i] : tensor<5xf64>
  } -> tensor<5xf64>
  func.return %y : tensor<5xf64>
}"""
TORCH_STEP = {"floor": torch.floor, "ceil": torch.ceil, "round": None, "roundeven": torch.round, "trunc": torch.trunc}


@pytest.mark.parametrize("op", sorted(TORCH_STEP))
def test_step_functions_differentiate_to_zero(op):
    """d (step(x) * x) = step(x): finite differences (away from the jumps) and PyTorch."""
    x = np.array([-1.7, -0.3, 0.2, 1.25, 2.6])
    text = STEP.replace("OP", op)
    check_gradient(text, "f", [x], [0])
    if TORCH_STEP[op] is not None:
        module = parse_module(text)
        PassManager.parse("autodiff,expand-library").run(module)
        seed = RNG.standard_normal(5)
        _, grad = interpret(module, "f_grad", x, seed)
        t = torch.tensor(x, requires_grad=True)
        (TORCH_STEP[op](t) * t).backward(torch.tensor(seed))
        np.testing.assert_allclose(grad, t.grad.numpy(), rtol=1e-15)


SIGN = """func.func @f(%x: tensor<5xf64>, %y: tensor<5xf64>) -> tensor<5xf64> {
  %e = tensor.empty() : tensor<5xf64>
  %r = df.map (%i) in (5) outs(%o = %e : tensor<5xf64>) {
    %a = df.read %x[%i] : tensor<5xf64>
    %b = df.read %y[%i] : tensor<5xf64>
    %v = df.tasklet (%a, %b) : (f64, f64) -> f64 {
    ^bb0(%p: f64, %q: f64):
      %one = arith.constant 1.0 : f64
      %s = math.copysign %one, %p : f64
      %m = arith.mulf %s, %q : f64
      %c = math.copysign %q, %p : f64
      %t = arith.addf %m, %c : f64
      df.yield %t : f64
    }
    df.write %v, %o[%i] : tensor<5xf64>
  } -> tensor<5xf64>
  func.return %r : tensor<5xf64>
}"""


def test_sign_differentiates_to_zero():
    """sign(x) * y + copysign(y, x): d/dx = 0 (as torch.sign), d/dy = sign(x) + sign(x) sign(y)."""
    x, y = np.array([-1.5, -0.2, 0.3, 2.0, 4.0]), np.array([0.7, -1.1, 2.0, -0.4, 1.3])
    check_gradient(SIGN, "f", [x, y], [0, 1])
    tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    (torch.sign(tx) * ty + torch.copysign(ty, tx)).sum().backward()
    module = parse_module(SIGN)
    PassManager.parse("autodiff").run(module)
    _, gx, gy = interpret(module, "f_grad", x, y, np.ones(5))
    np.testing.assert_array_equal(gx, tx.grad.numpy())
    np.testing.assert_array_equal(gy, ty.grad.numpy())


SCALAR = """func.func @f(%x: tensor<3xf64>, %w: tensor<3xf64>) -> f64 {
  %p = nn.mul %x, %w : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %s = nn.reduce %p {kind = "sum", axes = array<i64: 0>} : (tensor<3xf64>) -> tensor<f64>
  %v = tensor.extract %s[] : tensor<f64>
  %c1 = arith.constant 1 : index
  %u = tensor.extract %x[%c1] : tensor<3xf64>
  %r = df.tasklet (%v, %u) : (f64, f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %t = math.tanh %a : f64
    %m = arith.mulf %t, %b : f64
    df.yield %m : f64
  }
  func.return %r : f64
}"""


def test_scalar_float_result_is_differentiated():
    module = parse_module(SCALAR)
    PassManager.parse("autodiff").run(module)
    grad = next(op for op in module.ops if op.sym_name.data == "f_grad")
    assert [str(t) for t in grad.function_type.inputs.data][-1] == "f64", "the seed of a scalar result is a scalar"
    x, w = RNG.standard_normal(3), RNG.standard_normal(3)
    check_gradient(SCALAR, "f", [x, w], [0, 1])


INSERT = """func.func @f(%x: tensor<3xf64>, %y: tensor<2xf64>) -> (tensor<3xf64>, f64) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %a = tensor.extract %y[%c0] : tensor<2xf64>
  %b = df.tasklet (%a) : (f64) -> f64 {
  ^bb0(%p: f64):
    %e = math.exp %p : f64
    df.yield %e : f64
  }
  %z = tensor.insert %b into %x[%c2] : tensor<3xf64>
  %t = nn.tanh %z : (tensor<3xf64>) -> tensor<3xf64>
  func.return %t, %b : tensor<3xf64>, f64
}"""


@pytest.mark.parametrize("output", [0, 1])
def test_extract_insert_and_scalar_tasklets(output):
    """tensor.insert overwrites x[2]: its gradient is 0 there; the inserted scalar takes it."""
    x, y = RNG.standard_normal(3), RNG.standard_normal(2)
    check_gradient(INSERT, "f", [x, y], [0, 1], pipeline=f"autodiff{{outputs={output}}}", output=output)


def test_float_ops_outside_tasklets_are_differentiated():
    """Once a located error; now the op is put in a tasklet of its own (issue 12)."""
    text = """func.func @f(%x: tensor<3xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %a = tensor.extract %x[%c0] : tensor<3xf64>
  %b = arith.mulf %a, %a : f64
  func.return %b : f64
}"""
    check_gradient(text, "f", [RNG.standard_normal(3)], [0])


SCALAR_IN_LOOP_AND_IF = """func.func @f(%x: tensor<3xf64>, %flag: i1) -> tensor<3xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %s = tensor.extract %x[%c0] : tensor<3xf64>
  %r = scf.for %t = %c0 to %c3 step %c1 iter_args(%h = %x) -> (tensor<3xf64>) {
    %e = tensor.empty() : tensor<3xf64>
    %m = df.map (%i) in (3) outs(%o = %e : tensor<3xf64>) {
      %a = df.read %h[%i] : tensor<3xf64>
      %v = df.tasklet (%a, %s) : (f64, f64) -> f64 {
      ^bb0(%p: f64, %q: f64):
        %u = arith.mulf %p, %q : f64
        %z = math.sin %u : f64
        df.yield %z : f64
      }
      df.write %v, %o[%i] : tensor<3xf64>
    } -> tensor<3xf64>
    scf.yield %m : tensor<3xf64>
  }
  %y = scf.if %flag -> (tensor<3xf64>) {
    %e2 = tensor.empty() : tensor<3xf64>
    %m2 = df.map (%i) in (3) outs(%o = %e2 : tensor<3xf64>) {
      %a = df.read %r[%i] : tensor<3xf64>
      %v = df.tasklet (%a, %s) : (f64, f64) -> f64 {
      ^bb0(%p: f64, %q: f64):
        %u = arith.mulf %p, %q : f64
        df.yield %u : f64
      }
      df.write %v, %o[%i] : tensor<3xf64>
    } -> tensor<3xf64>
    scf.yield %m2 : tensor<3xf64>
  } else {
    scf.yield %r : tensor<3xf64>
  }
  func.return %y : tensor<3xf64>
}"""


@pytest.mark.parametrize("mode", ["autodiff", "autodiff{recompute=true}"])
@pytest.mark.parametrize("flag", [True, False])
def test_scalar_used_in_a_loop_and_a_branch(flag, mode):
    """s = x[0] scales every iteration and the branch: its adjoint, summed over the
    iterations (a 0-d tensor iter_arg) and returned by the branch, reaches x[0]."""
    check_gradient(SCALAR_IN_LOOP_AND_IF, "f", [RNG.standard_normal(3), np.bool_(flag)], [0], pipeline=mode)


@pytest.mark.parametrize("mode", ["autodiff", "autodiff{recompute=true}"])
def test_scalar_used_in_a_loop(mode):
    """The loop alone (the engine runs it)."""
    text = SCALAR_IN_LOOP_AND_IF.replace("func.return %y : tensor<3xf64>", "func.return %r : tensor<3xf64>")
    check_gradient(text, "f", [RNG.standard_normal(3), np.bool_(True)], [0], pipeline=mode)


SCALAR_ARGUMENT = """func.func @g(%x: tensor<3xf64>, %alpha: f64) -> tensor<3xf64> {
  %e = tensor.empty() : tensor<3xf64>
  %m = df.map (%i) in (3) outs(%o = %e : tensor<3xf64>) {
    %a = df.read %x[%i] : tensor<3xf64>
    %v = df.tasklet (%a, %alpha) : (f64, f64) -> f64 {
    ^bb0(%p: f64, %q: f64):
      %u = arith.mulf %p, %q : f64
      %z = math.tanh %u : f64
      df.yield %z : f64
    }
    df.write %v, %o[%i] : tensor<3xf64>
  } -> tensor<3xf64>
  func.return %m : tensor<3xf64>
}
func.func @f(%x: tensor<3xf64>, %alpha: f64) -> tensor<3xf64> {
  %beta = df.tasklet (%alpha) : (f64) -> f64 {
  ^bb0(%p: f64):
    %q = arith.mulf %p, %p : f64
    df.yield %q : f64
  }
  %y = func.call @g(%x, %beta) : (tensor<3xf64>, f64) -> tensor<3xf64>
  func.return %y : tensor<3xf64>
}"""


def test_scalar_argument_through_a_call():
    """wrt a float scalar argument (explicitly): through a tasklet and a call."""
    x = RNG.standard_normal(3)
    check_gradient(SCALAR_ARGUMENT, "f", [x, 0.7], [0, 1], pipeline="autodiff{func=f wrt=0,1}")
    module = parse_module(SCALAR_ARGUMENT)
    PassManager.parse("autodiff{func=f}").run(module)
    grad = next(op for op in module.ops if op.sym_name.data == "f_grad")
    assert len(grad.function_type.outputs.data) == 2, "by default only the tensor argument gets a gradient"
