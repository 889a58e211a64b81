"""Reverse-mode gradients, evaluated by the reference interpreter, against PyTorch
(and float64 finite differences where PyTorch has no counterpart)."""

from pathlib import Path

import numpy as np
import pytest

from dfc.compiler import PassManager, parse_module
from dfc.compiler.interpreter import interpret
from dfc.dialects.diagnostics import CompileError
from dfc.passes.autodiff import rules

torch = pytest.importorskip("torch")
EXAMPLES = Path(__file__).parents[2] / "examples"
RNG = np.random.default_rng(7)


def gradients(text: str, name: str, *args, pipeline: str = "autodiff", seed=1.0):
    module = parse_module(text)
    PassManager.parse(f"{pipeline},expand-library,canonicalize,cse").run(module)
    f = next(op for op in module.ops if op.sym_name.data == name)
    result_type = f.function_type.outputs.data[0]
    seed_value = np.array(seed, dtype=np.float64 if "f64" in str(result_type) else np.float32)
    return interpret(module, f"{name}_grad", *args, seed_value)


def torch_grads(fn, *arrays):
    tensors = [torch.tensor(a, requires_grad=True) for a in arrays]
    fn(*tensors).sum().backward()
    return [t.grad.numpy() for t in tensors]


def test_gemm_sum_example():
    x, y = RNG.standard_normal((5, 4)).astype(np.float32), RNG.standard_normal((4, 3)).astype(np.float32)
    _, gx, gy = gradients((EXAMPLES / "gemm_sum.mlir").read_text(), "gemm_sum", x, y)
    tx, ty = torch_grads(lambda a, b: a @ b, x, y)
    np.testing.assert_allclose(gx, tx, rtol=1e-5)
    np.testing.assert_allclose(gy, ty, rtol=1e-5)


MLP = """func.func @mlp(%x: tensor<4x12xf32>, %labels: tensor<4xi64>, %w1: tensor<6x12xf32>, %b1: tensor<6xf32>,
                    %w2: tensor<5x6xf32>, %b2: tensor<5xf32>, %w3: tensor<3x5xf32>, %b3: tensor<3xf32>) -> tensor<f32> {
  %h1 = nn.linear %x, %w1, %b1 : (tensor<4x12xf32>, tensor<6x12xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  %a1 = nn.relu %h1 : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %h2 = nn.linear %a1, %w2, %b2 : (tensor<4x6xf32>, tensor<5x6xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  %a2 = nn.relu %h2 : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %l = nn.linear %a2, %w3, %b3 : (tensor<4x5xf32>, tensor<3x5xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %p = nn.log_softmax %l {axis = -1 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %loss = nn.nll_loss %p, %labels : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  func.return %loss : tensor<f32>
}"""


def test_mlp_against_torch_nn():
    shapes = [(6, 12), (6,), (5, 6), (5,), (3, 5), (3,)]
    params = [(RNG.standard_normal(s) * 0.5).astype(np.float32) for s in shapes]
    x = RNG.standard_normal((4, 12)).astype(np.float32)
    labels = np.array([0, 2, 1, 2], dtype=np.int64)
    out = gradients(MLP, "mlp", x, labels, *params)
    model = torch.nn.Sequential(
        torch.nn.Linear(12, 6), torch.nn.ReLU(), torch.nn.Linear(6, 5), torch.nn.ReLU(), torch.nn.Linear(5, 3)
    )
    with torch.no_grad():
        for p, v in zip(model.parameters(), params):
            p.copy_(torch.tensor(v))
    tx = torch.tensor(x, requires_grad=True)
    loss = torch.nn.functional.nll_loss(torch.log_softmax(model(tx), -1), torch.tensor(labels))
    loss.backward()
    np.testing.assert_allclose(out[0], loss.item(), rtol=1e-5)
    np.testing.assert_allclose(out[1], tx.grad.numpy(), rtol=1e-4, atol=1e-6)
    for got, p in zip(out[2:], model.parameters()):
        np.testing.assert_allclose(got, p.grad.numpy(), rtol=1e-4, atol=1e-6)


SOFTMAX = (EXAMPLES / "softmax.mlir").read_text().replace("64x512", "6x10").replace("64xf32", "6xf32")
SOFTMAX = SOFTMAX.replace("in (64, 512)", "in (6, 10)").replace("in (64)", "in (6)")


def test_softmax_loss_example_structure():
    x, w = RNG.standard_normal((6, 10)).astype(np.float32), RNG.standard_normal((6, 10)).astype(np.float32)
    _, gx, gw = gradients(SOFTMAX, "softmax_loss", x, w)
    tx, tw = torch_grads(lambda a, b: torch.softmax(a, -1) * b, x, w)
    np.testing.assert_allclose(gx, tx, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(gw, tw, rtol=1e-5, atol=1e-7)


def test_wcr_max_ties_split_equally():
    text = """func.func @f(%x: tensor<2x2xf64>) -> tensor<2xf64> {
  %init = arith.constant dense<0xFFF0000000000000> : tensor<2xf64>
  %m = df.map (%i, %j) in (2, 2) outs(%o = %init : tensor<2xf64>) {
    %v = df.read %x[%i, %j] : tensor<2x2xf64>
    df.write %v, %o[%j] wcr(max) : tensor<2xf64>
  } -> tensor<2xf64>
  func.return %m : tensor<2xf64>
}"""
    x = np.array([[3.0, 1.0], [3.0, 2.0]])
    _, gx = gradients(text, "f", x, seed=np.ones(2))
    np.testing.assert_array_equal(gx, [[0.5, 0.0], [0.5, 1.0]])


def test_nn_max_reduce_ties_split_equally():
    text = """func.func @f(%x: tensor<2x2xf64>) -> tensor<2xf64> {
  %m = nn.reduce %x {kind = "max", axes = array<i64: 0>} : (tensor<2x2xf64>) -> tensor<2xf64>
  func.return %m : tensor<2xf64>
}"""
    _, gx = gradients(text, "f", np.array([[3.0, 1.0], [3.0, 2.0]]), seed=np.ones(2))
    np.testing.assert_array_equal(gx, [[0.5, 0.0], [0.5, 1.0]])


NN_CASES = {
    "nn.add": ([(3, 1), (4,)], lambda a, b: a + b, "(tensor<3x1xf64>, tensor<4xf64>) -> tensor<3x4xf64>", ""),
    "nn.sub": ([(3, 4), (1, 4)], lambda a, b: a - b, "(tensor<3x4xf64>, tensor<1x4xf64>) -> tensor<3x4xf64>", ""),
    "nn.mul": ([(3, 4), (4,)], lambda a, b: a * b, "(tensor<3x4xf64>, tensor<4xf64>) -> tensor<3x4xf64>", ""),
    "nn.div": ([(3, 4), (3, 1)], lambda a, b: a / (b + 3), None, ""),
    "nn.exp": ([(3, 4)], torch.exp, "(tensor<3x4xf64>) -> tensor<3x4xf64>", ""),
    "nn.tanh": ([(3, 4)], torch.tanh, "(tensor<3x4xf64>) -> tensor<3x4xf64>", ""),
    "nn.relu": ([(3, 4)], torch.relu, "(tensor<3x4xf64>) -> tensor<3x4xf64>", ""),
    "nn.sigmoid": ([(3, 4)], torch.sigmoid, "(tensor<3x4xf64>) -> tensor<3x4xf64>", ""),
    "nn.neg": ([(3, 4)], torch.neg, "(tensor<3x4xf64>) -> tensor<3x4xf64>", ""),
    "nn.matmul": ([(3, 4), (4, 2)], torch.matmul, "(tensor<3x4xf64>, tensor<4x2xf64>) -> tensor<3x2xf64>", ""),
    "nn.linear": ([(3, 4), (2, 4), (2,)], torch.nn.functional.linear,
                  "(tensor<3x4xf64>, tensor<2x4xf64>, tensor<2xf64>) -> tensor<3x2xf64>", ""),
    "nn.transpose": ([(2, 3, 4)], lambda a: a.permute(2, 0, 1), "(tensor<2x3x4xf64>) -> tensor<4x2x3xf64>",
                     "{permutation = array<i64: 2, 0, 1>}"),
    "nn.reshape": ([(2, 6)], lambda a: a.reshape(3, 4), "(tensor<2x6xf64>) -> tensor<3x4xf64>", ""),
    "nn.broadcast": ([(3, 1)], lambda a: a.expand(2, 3, 4), "(tensor<3x1xf64>) -> tensor<2x3x4xf64>", ""),
    "nn.softmax": ([(3, 4)], lambda a: torch.softmax(a, 1), "(tensor<3x4xf64>) -> tensor<3x4xf64>", "{axis = 1 : i64}"),
    "nn.log_softmax": ([(3, 4)], lambda a: torch.log_softmax(a, 0), "(tensor<3x4xf64>) -> tensor<3x4xf64>",
                       "{axis = 0 : i64}"),
    "nn.reduce": ([(3, 4)], lambda a: a.mean(dim=1, keepdim=True), "(tensor<3x4xf64>) -> tensor<3x1xf64>",
                  '{kind = "mean", axes = array<i64: 1>, keepdims}'),
}


def _op_program(op: str, signature: str, attrs: str, n_args: int) -> str:
    ins, out = signature.split(" -> ")
    params = ", ".join(f"%a{k}: {t.strip()}" for k, t in enumerate(ins.strip("()").split(", ")))
    operands = ", ".join(f"%a{k}" for k in range(n_args))
    return f"""func.func @f({params}) -> {out} {{
  %r = {op} {operands} {attrs} : {signature}
  func.return %r : {out}
}}"""


@pytest.mark.parametrize("through", ["rule", "expansion"])
@pytest.mark.parametrize("op", sorted(k for k, v in NN_CASES.items() if v[2]))
def test_nn_op_gradients(op, through, monkeypatch):
    shapes, fn, signature, attrs = NN_CASES[op]
    if through == "expansion":
        monkeypatch.delitem(rules.BACKWARD_RULES, op)
    args = [RNG.standard_normal(s) for s in shapes]
    text = _op_program(op, signature, attrs, len(args))
    out_shape = fn(*[torch.tensor(a) for a in args]).shape
    seed = RNG.standard_normal(tuple(out_shape))
    grads = gradients(text, "f", *args, seed=seed)[1:]
    tensors = [torch.tensor(a, requires_grad=True) for a in args]
    (fn(*tensors) * torch.tensor(seed)).sum().backward()
    for got, t in zip(grads, tensors):
        np.testing.assert_allclose(got, t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_wrt_and_outputs_subsets():
    text = """func.func @f(%a: tensor<3xf64>, %b: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %p = nn.mul %a, %b : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %e = nn.exp %a : (tensor<3xf64>) -> tensor<3xf64>
  func.return %p, %e : tensor<3xf64>, tensor<3xf64>
}"""
    module = parse_module(text)
    PassManager.parse("autodiff{wrt=1 outputs=0},expand-library").run(module)
    a, b, s = RNG.standard_normal(3), RNG.standard_normal(3), RNG.standard_normal(3)
    p, e, gb = interpret(module, "f_grad", a, b, s)
    np.testing.assert_allclose(gb, s * a)


@pytest.mark.parametrize(
    "options,message",
    [("wrt=2", "@f has no argument #2"), ("wrt=1", "argument #1 of @f has type tensor<3xi64>"),
     ("func=g", "no function @g")],
)
def test_errors_name_the_problem(options, message):
    text = """func.func @f(%a: tensor<3xf64>, %l: tensor<3xi64>) -> tensor<3xf64> {
  func.return %a : tensor<3xf64>
}"""
    with pytest.raises(CompileError, match=message):
        PassManager.parse(f"autodiff{{{options}}}").run(parse_module(text))


JACOBI = (EXAMPLES / "jacobi2d.mlir").read_text().replace("64x64", "8x8").replace("(62, 62)", "(6, 6)")
JACOBI = JACOBI.replace("(64, 64)", "(8, 8)").replace("arith.constant 20 : index", "arith.constant 3 : index")


def torch_jacobi(a, steps=3):
    b = a.clone()
    for _ in range(steps):
        b = b.clone()
        b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])
        a = a.clone()
        a[1:-1, 1:-1] = 0.2 * (b[1:-1, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] + b[2:, 1:-1] + b[:-2, 1:-1])
    return a.sum()


def test_jacobi2d_time_loop_without_tape():
    a = RNG.standard_normal((8, 8))
    module = parse_module(JACOBI)
    PassManager.parse("autodiff").run(module)
    grad = next(op for op in module.ops if op.sym_name.data == "jacobi2d_grad")
    backward_loop = [op for op in grad.body.block.ops if op.name == "scf.for"][1]
    assert not any(op.name == "scf.for" for op in backward_loop.body.block.ops), "a linear body recomputes nothing"
    assert "tensor<3x8x8xf64>" not in str(grad), "and keeps no tape"
    PassManager.parse("expand-library").run(module)
    value, ga = interpret(module, "jacobi2d_grad", a, np.array(1.0))
    (ta,) = torch_grads(torch_jacobi, a)
    np.testing.assert_allclose(value, torch_jacobi(torch.tensor(a)).item(), rtol=1e-12)
    np.testing.assert_allclose(ga, ta, rtol=1e-12, atol=1e-14)


NONLINEAR_LOOP = """func.func @f(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<3xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 4 : index
  %r = scf.for %t = %c0 to %n step %c1 iter_args(%h = %x) -> (tensor<3xf64>) {
    %p = nn.mul %h, %w : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    %y = nn.tanh %p : (tensor<3xf64>) -> tensor<3xf64>
    scf.yield %y : tensor<3xf64>
  }
  func.return %r : tensor<3xf64>
}"""


@pytest.mark.parametrize("pipeline", ["autodiff", "autodiff{recompute=true}"])
def test_nonlinear_loop_keeps_a_tape_or_recomputes(pipeline):
    x, w, s = RNG.standard_normal(3), RNG.standard_normal(3), RNG.standard_normal(3)
    _, gx, gw = gradients(NONLINEAR_LOOP, "f", x, w, pipeline=pipeline, seed=s)

    def forward(x, w):
        h = x
        for _ in range(4):
            h = torch.tanh(h * w)
        return h * torch.tensor(s)

    tx, tw = torch_grads(forward, x, w)
    np.testing.assert_allclose(gx, tx, rtol=1e-12)
    np.testing.assert_allclose(gw, tw, rtol=1e-12)
    module = parse_module(NONLINEAR_LOOP)
    PassManager.parse(pipeline).run(module)
    grad = str(module).split("@f_grad")[1]
    taped = "tensor<4x3xf64>" in grad
    assert taped == (pipeline == "autodiff")
    assert grad.count("scf.for") == (2 if taped else 3)  # forward, backward (+ the rerun inside it)


def test_taped_loop_gradient_through_the_engine():
    from dfc.compiler import ExecutionEngine

    x, w, s = RNG.standard_normal(3), RNG.standard_normal(3), RNG.standard_normal(3)
    module = parse_module(NONLINEAR_LOOP)
    PassManager.parse("autodiff").run(module)
    _, gx, gw = ExecutionEngine(module).invoke("f_grad", x, w, s)
    want = gradients(NONLINEAR_LOOP, "f", x, w, pipeline="autodiff{recompute=true}", seed=s)
    np.testing.assert_allclose(gx, want[1], rtol=1e-12)
    np.testing.assert_allclose(gw, want[2], rtol=1e-12)


def _engine_grad(example: str, name: str, *args, seed_dtype=np.float32):
    from dfc.compiler import ExecutionEngine

    module = parse_module((EXAMPLES / f"{example}.mlir").read_text())
    PassManager.parse("autodiff").run(module)
    return ExecutionEngine(module).invoke(f"{name}_grad", *args, np.array(1.0, seed_dtype))


def test_full_size_mlp_gradient_through_the_engine_matches_torch_nn():
    model = torch.nn.Sequential(
        torch.nn.Linear(784, 120), torch.nn.ReLU(), torch.nn.Linear(120, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10)
    )
    x = torch.tensor(RNG.standard_normal((8, 784)).astype(np.float32), requires_grad=True)
    labels = torch.tensor(RNG.integers(0, 10, 8))
    loss = torch.nn.functional.nll_loss(torch.log_softmax(model(x), -1), labels)
    loss.backward()
    params = [p.detach().numpy() for p in model.parameters()]
    out = _engine_grad("mlp", "mlp", x.detach().numpy(), labels.numpy(), *params)
    np.testing.assert_allclose(out[0], loss.item(), rtol=1e-5)
    np.testing.assert_allclose(out[1], x.grad.numpy(), rtol=1e-4, atol=1e-6)
    for got, p in zip(out[2:], model.parameters()):
        np.testing.assert_allclose(got, p.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_full_size_softmax_and_jacobi_gradients_through_the_engine():
    x, w = RNG.standard_normal((64, 512)).astype(np.float32), RNG.standard_normal((64, 512)).astype(np.float32)
    _, gx, gw = _engine_grad("softmax", "softmax_loss", x, w)
    tx, tw = torch_grads(lambda a, b: torch.softmax(a, -1) * b, x, w)
    np.testing.assert_allclose(gx, tx, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(gw, tw, rtol=1e-5, atol=1e-7)
    a = RNG.standard_normal((64, 64))
    _, ga = _engine_grad("jacobi2d", "jacobi2d", a, seed_dtype=np.float64)
    (ta,) = torch_grads(lambda t: torch_jacobi(t, steps=20), a)
    np.testing.assert_allclose(ga, ta, rtol=1e-10, atol=1e-12)


def test_split_forward_and_backward_compose_to_the_gradient():
    from dfc.passes.autodiff.autodiff import split_info

    text = MLP
    module = parse_module(text)
    PassManager.parse("autodiff{split=true},expand-library").run(module)
    info = split_info(module, "mlp")
    assert info.wrt == [0, 2, 3, 4, 5, 6, 7] and info.outputs == [0]
    shapes = [(6, 12), (6,), (5, 6), (5,), (3, 5), (3,)]
    params = [(RNG.standard_normal(s) * 0.5).astype(np.float32) for s in shapes]
    args = [RNG.standard_normal((4, 12)).astype(np.float32), np.array([0, 2, 1, 2], dtype=np.int64), *params]
    loss, *saved = interpret(module, "mlp_fwd", *args)
    assert len(saved) == len(info.saved)
    grads = interpret(module, "mlp_bwd", *saved, np.array(1.0, np.float32))
    expected = gradients(MLP, "mlp", *args)
    np.testing.assert_allclose(loss, expected[0], rtol=1e-6)
    for g, e in zip(grads, expected[1:]):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-7)


HESSIAN = """func.func @f(%x: tensor<5xf64>) -> tensor<f64> {
  %t = nn.tanh %x : (tensor<5xf64>) -> tensor<5xf64>
  %e = nn.exp %x : (tensor<5xf64>) -> tensor<5xf64>
  %p = nn.mul %t, %e : (tensor<5xf64>, tensor<5xf64>) -> tensor<5xf64>
  %q = nn.softmax %p {axis = 0 : i64} : (tensor<5xf64>) -> tensor<5xf64>
  %s = nn.reduce %q {kind = "max", axes = array<i64: 0>} : (tensor<5xf64>) -> tensor<f64>
  func.return %s : tensor<f64>
}"""


def test_hessian_vector_product_against_finite_differences():
    module = parse_module(HESSIAN)
    PassManager.parse("autodiff{func=f},autodiff{func=f_grad wrt=0 outputs=1},expand-library").run(module)
    x, v = RNG.standard_normal(5), RNG.standard_normal(5)
    _, g, hv = interpret(module, "f_grad_grad", x, np.array(1.0), v)

    def grad(point):
        return interpret(module, "f_grad", point, np.array(1.0))[1]

    eps = 1e-5
    fd = (grad(x + eps * v) - grad(x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(hv, fd, rtol=1e-6, atol=1e-8)


BRANCH_AND_CALL = """func.func @inner(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<3xf64> {
  %p = nn.mul %x, %w : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %t = nn.tanh %p : (tensor<3xf64>) -> tensor<3xf64>
  func.return %t : tensor<3xf64>
}
func.func @outer(%x: tensor<3xf64>, %w: tensor<3xf64>, %flag: i1) -> tensor<3xf64> {
  %a = func.call @inner(%x, %w) {df.checkpoint = "nothing_saveable"} : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %b = func.call @inner(%a, %w) {df.checkpoint = "nothing_saveable"} : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %r = scf.if %flag -> (tensor<3xf64>) {
    %e = nn.exp %b : (tensor<3xf64>) -> tensor<3xf64>
    scf.yield %e : tensor<3xf64>
  } else {
    %m = nn.mul %b, %x : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    scf.yield %m : tensor<3xf64>
  }
  func.return %r : tensor<3xf64>
}"""


@pytest.mark.parametrize("flag", [True, False])
def test_calls_and_branches(flag):
    module = parse_module(BRANCH_AND_CALL)
    PassManager.parse("autodiff{func=outer},expand-library").run(module)
    assert sum(op.sym_name.data == "inner_grad" for op in module.ops) == 1, "the checkpointed calls share the callee's gradient"
    x, w, s = RNG.standard_normal(3), RNG.standard_normal(3), RNG.standard_normal(3)
    _, gx, gw = interpret(module, "outer_grad", x, w, np.bool_(flag), s)

    def forward(x, w):
        b = torch.tanh(torch.tanh(x * w) * w)
        return (torch.exp(b) if flag else b * x) * torch.tensor(s)

    tx, tw = torch_grads(forward, x, w)
    np.testing.assert_allclose(gx, tx, rtol=1e-12)
    np.testing.assert_allclose(gw, tw, rtol=1e-12)
