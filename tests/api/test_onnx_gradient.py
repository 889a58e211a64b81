"""ONNX's `Gradient` operator (dfc/importers/onnx_gradient.py) against torch's autograd (float64,
interpreter): first order at the node's inputs, and a gradient of the model's weights through it (second
order); the refusals name the node."""

from __future__ import annotations

import numpy as np
import pytest

from dfc import CompileError, interpret
from dfc.importers.onnx_import import from_onnx, import_onnx

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

D = TensorProto.DOUBLE
RNG = np.random.default_rng(0)
W = RNG.standard_normal((3, 4))


def _model(gradient_inputs: list[str], y_shape: list[int] | None = None) -> onnx.ModelProto:
    """y = ReduceSum(tanh(X W) * Z) (W a weight), and Gradient(xs=[X, W], zs=[Z], y) at `gradient_inputs`."""
    reduce = [helper.make_node("ReduceSum", ["p"], ["y"], keepdims=0)] if y_shape is None else [
        helper.make_node("Identity", ["p"], ["y"])]
    nodes = [helper.make_node("MatMul", ["X", "W"], ["h"]), helper.make_node("Tanh", ["h"], ["t"]),
             helper.make_node("Mul", ["t", "Z"], ["p"]), *reduce,
             helper.make_node("Gradient", gradient_inputs, ["dX", "dW"], name="grad",
                              domain="ai.onnx.preview.training", xs=["X", "W"], zs=["Z"], y="y")]
    info = helper.make_tensor_value_info
    graph = helper.make_graph(nodes, "g", [info("X", D, [2, 3]), info("Z", D, [2, 4]), info("X1", D, [2, 3])],
                              [info("y", D, y_shape or []), info("dX", D, [2, 3]), info("dW", D, [3, 4])],
                              [numpy_helper.from_array(W, "W")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18),
                                                   helper.make_opsetid("ai.onnx.preview.training", 1)])


def _torch_gradients(torch, x, z):
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(W, requires_grad=True)
    y = (torch.tanh(xt @ wt) * torch.from_numpy(z)).sum()
    return (y, *torch.autograd.grad(y, (xt, wt), create_graph=True)), wt


def test_gradient_equals_torch_at_the_nodes_inputs_and_differentiates_again():
    """dy/dX and dy/dW at X1 (not X: the Gradient's inputs set the point) equal torch's; the gradient of
    W through the model's dX output (second order) equals torch's double backward."""
    torch = pytest.importorskip("torch")
    x, z, x1 = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 4)), RNG.standard_normal((2, 3))
    f = from_onnx(_model(["X1", "W", "Z"]))
    assert [name for name, _ in f.parameters] == ["W"]
    y, dx, dw = interpret(f.module, "main", x, z, x1, W)
    (ty, *_), _ = _torch_gradients(torch, x, z)
    (_, tdx, tdw), wt = _torch_gradients(torch, x1, z)
    np.testing.assert_allclose(y, ty.item(), rtol=1e-14)
    np.testing.assert_allclose(dx, tdx.detach().numpy(), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(dw, tdw.detach().numpy(), rtol=1e-13, atol=1e-15)

    seed = RNG.standard_normal((2, 3))
    outputs = interpret(f.autodiff_module((3,)), "main_grad", x, z, x1, W, np.array(0.0), seed, np.zeros((3, 4)))
    want, = torch.autograd.grad((tdx * torch.from_numpy(seed)).sum(), wt)
    np.testing.assert_allclose(outputs[-1], want.numpy(), rtol=1e-12, atol=1e-14)


def test_gradient_refusals_name_the_node():
    with pytest.raises(CompileError, match=r"node 'grad' \(Gradient\): Gradient of y 'y' of tensor<2x4xf64>"):
        import_onnx(_model(["X", "W", "Z"], y_shape=[2, 4]))
    model = _model(["X", "W", "Z"])
    gradient = model.graph.node[-1]
    kept = [a for a in gradient.attribute if a.name != "zs"]
    del gradient.attribute[:]
    gradient.attribute.extend(kept)
    del gradient.input[-1]
    with pytest.raises(CompileError, match=r"node 'grad' \(Gradient\): y 'y' depends on 'Z', which is neither"):
        import_onnx(model)
