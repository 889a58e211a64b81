"""ONNX import (`dfc.from_onnx`) of models exported by PyTorch: the forward
equals onnxruntime's, and dfc's `autodiff` of the imported model gives the
gradients PyTorch computes for the original model's parameters.

The gradients run on the interpreter except for the embedding model (the
engine); `DFC_IMPORT_ENGINE=1` runs every model on the engine. Weights are
matched to PyTorch's parameters by value (the exporters rename some and store
some transposed), so they are drawn at random first: an exporter merges equal
initializers (LayerNorm's ones), whose gradients would then be sums."""

import io
import os

import numpy as np
import pytest

from dfc import CompileError, interpret
from dfc.compiler.engine import ExecutionEngine
from dfc.importers.onnx_import import from_onnx

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
torch = pytest.importorskip("torch")
pytest.importorskip("onnxscript")


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.ln, self.l2 = torch.nn.Linear(8, 16), torch.nn.LayerNorm(16), torch.nn.Linear(16, 4)

    def forward(self, x):
        return torch.log_softmax(self.l2(torch.nn.functional.gelu(self.ln(self.l1(x)))), -1)


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.fc = torch.nn.Conv2d(3, 4, 3, padding=1, stride=1), torch.nn.Linear(4 * 2 * 2, 5)

    def forward(self, x):
        y = torch.nn.functional.max_pool2d(torch.relu(self.conv(x)), 2)
        y = torch.nn.functional.avg_pool2d(torch.tanh(y), 2)
        return torch.softmax(self.fc(torch.flatten(y, 1)), -1)


class Embed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 4)
        self.w = torch.nn.Parameter(torch.randn(4, 6))

    def forward(self, ids, x):
        e = torch.cat([self.emb(ids), x], -1)[:, 1:6]
        z = torch.where(e > 0, e, 0.1 * e).transpose(0, 1)
        norm = torch.sqrt(z.pow(2).mean(0, keepdim=True) + 1.0)
        return (z / norm) @ torch.sigmoid(x @ self.w)[:, :5]


def _export(model, args, dynamo):
    buffer = io.BytesIO()
    torch.onnx.export(model, args, buffer, dynamo=dynamo, opset_version=18)
    return buffer.getvalue()


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0,
                                                      batch_first=True)

    def forward(self, x):
        return self.layer(x)


CASES = {
    "mlp": (MLP, lambda: (torch.randn(3, 8),), True),
    "convnet": (ConvNet, lambda: (torch.randn(2, 3, 8, 8),), False),
    "embedding": (Embed, lambda: (torch.tensor([1, 7, 3, 0]), torch.randn(4, 4)), False),
    "encoder": (Encoder, lambda: (torch.randn(2, 5, 8),), True),
}
ON_ENGINE = set(CASES) if os.environ.get("DFC_IMPORT_ENGINE") else {"embedding"}


@pytest.mark.parametrize("name", CASES)
def test_forward_equals_onnxruntime_and_gradients_equal_pytorch(name):
    torch.manual_seed(0)
    cls, make_args, dynamo = CASES[name]
    model, args = cls().eval(), make_args()
    with torch.no_grad():  # distinct random weights: an exporter merges equal ones (LayerNorm's ones)
        for p in model.parameters():
            p.normal_(0.0, 0.5)
    data = _export(model, args, dynamo)
    imported = from_onnx(onnx.load_from_string(data))
    inputs = [a.numpy() for a in args]

    session = ort.InferenceSession(data)
    want = session.run(None, {i.name: x for i, x in zip(session.get_inputs(), inputs)})[0]

    module = imported.autodiff_module()
    seed = np.random.default_rng(1).standard_normal(want.shape).astype(np.float32)
    run = ExecutionEngine(module).invoke if name in ON_ENGINE else lambda *a: interpret(module, *a)
    out, *grads = run("main_grad", *inputs, *imported.parameter_values(), seed)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)

    model.zero_grad()
    model(*args).backward(torch.from_numpy(seed))
    floats = [k for k, x in enumerate(inputs) if x.dtype.kind == "f"]
    param_grads = grads[len(floats):]
    assert imported.parameters and len(param_grads) == len(imported.parameters)
    for (pname, value), g in zip(imported.parameters, param_grads):
        torch_param, transposed = _counterpart(model, value)
        want_grad = torch_param.grad.numpy()
        np.testing.assert_allclose(g, want_grad.T if transposed else want_grad, rtol=1e-4, atol=1e-5, err_msg=pname)


def _counterpart(model, value):
    """The PyTorch parameter an ONNX weight holds, and whether the exporter stored
    it transposed (it names some weights `val_N`); every parameter is random, so
    the value identifies it."""
    for p in model.parameters():
        w = p.detach().numpy()
        if w.shape == value.shape and np.array_equal(w, value):
            return p, False
        if w.ndim == 2 and w.T.shape == value.shape and np.array_equal(w.T, value):
            return p, True
    raise AssertionError(f"no PyTorch parameter holds the ONNX weight of shape {value.shape}")


def _gemm_relu(w, b):
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("Gemm", ["x", "fc.w", "fc.b"], ["h"], transB=1), helper.make_node("Relu", ["h"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
                              [numpy_helper.from_array(w, "fc.w"), numpy_helper.from_array(b, "fc.b")])
    return helper.make_model(graph)


def test_call_runs_the_model_with_its_weights():
    rng = np.random.default_rng(0)
    w, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    imported = from_onnx(_gemm_relu(w, b))
    assert [n for n, _ in imported.parameters] == ["fc.w", "fc.b"]
    x = rng.standard_normal((2, 4))  # float64: converted to the model's f32
    np.testing.assert_allclose(imported(x), np.maximum(x.astype(np.float32) @ w.T + b, 0), rtol=1e-5, atol=1e-6)
    assert [n for n, _ in from_onnx(_gemm_relu(w, b), parameters=["fc.b"]).parameters] == ["fc.b"]
    with pytest.raises(CompileError, match="no initializer named 'fc.c'"):
        from_onnx(_gemm_relu(w, b), parameters=["fc.c"])


def test_opt_tool_imports_an_onnx_file(tmp_path, capsys):
    from dfc.tools.opt_tool import run

    path = tmp_path / "gemm_relu.onnx"
    onnx.save(_gemm_relu(np.ones((3, 4), np.float32), np.zeros(3, np.float32)), str(path))
    assert run([str(path), "--import-onnx", "--autodiff"]) == 0
    out = capsys.readouterr().out
    assert "func.func @main(%x: tensor<2x4xf32>, %fc_w: tensor<3x4xf32>, %fc_b: tensor<3xf32>)" in out
    assert "nn.linear %x, %fc_w, %fc_b" in out and "func.func @main_grad" in out


def test_unsupported_operator_names_the_node():
    from onnx import TensorProto, helper

    node = helper.make_node("StringSplit", ["x"], ["y"], name="nz")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    with pytest.raises(CompileError, match=r"g: node 'nz' \(StringSplit\): operator is not supported"):
        from_onnx(helper.make_model(graph))


def test_dynamic_input_dimension_is_refused():
    from onnx import TensorProto, helper

    node = helper.make_node("Relu", ["x"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])])
    with pytest.raises(CompileError, match="input 'x' has a dynamic dimension 'batch'"):
        from_onnx(helper.make_model(graph))
