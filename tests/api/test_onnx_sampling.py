"""ONNX's sampling operators (`dfc.importers.onnx_sample_ops`) beyond the node suite's cases: DeformConv's
gradients to every input against torch's autograd of an independent implementation (explicit bilinear
weights and gathers), its forms the reference evaluator does not compute (1-D and 3-D), AffineGrid against
F.affine_grid with its gradient, and GridSample's cubic `border` against ONNX's reference evaluator (where
ONNX's semantics is not PyTorch's). Float64, on the interpreter."""

from __future__ import annotations

import math

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402
from support.deform_conv_reference import torch_deform_conv  # noqa: E402

from dfc import interpret  # noqa: E402
from dfc.importers.onnx_import import from_onnx  # noqa: E402


def _model(op: str, inputs: dict[str, tuple], opset: int = 22, **attrs):
    node = helper.make_node(op, list(inputs), ["y"], **attrs)
    graph = helper.make_graph([node], "m", [helper.make_tensor_value_info(k, TensorProto.DOUBLE, s)
                                            for k, s in inputs.items()],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _deform_inputs(rng, x_shape, w_shape, out, offset_group, mask, bias):
    rank, taps = len(out), math.prod(w_shape[2:])
    inputs = {"x": rng.standard_normal(x_shape), "w": rng.standard_normal(w_shape),
              "offset": rng.uniform(-1.6, 1.6, (x_shape[0], offset_group * taps * rank, *out))}
    if bias:
        inputs["b"] = rng.standard_normal(w_shape[0])
    if mask:
        inputs["mask"] = rng.uniform(0.0, 1.0, (x_shape[0], offset_group * taps, *out))
    return inputs


DEFORM = {
    "groups, offset groups, mask, bias": ((1, 4, 3, 3), (4, 2, 2, 2), (3, 2), dict(
        group=2, offset_group=2, pads=[1, 0, 1, 1], strides=[1, 2], dilations=[2, 1])),
    "no mask, no bias": ((2, 2, 4, 4), (3, 2, 2, 3), (3, 2), {}),
}


@pytest.mark.parametrize("name", [name if k == 0 else pytest.param(name, marks=pytest.mark.slow)
                                  for k, name in enumerate(DEFORM)])
def test_deform_conv_gradients_equal_torch(name):
    """Values and the gradients to x, w, offset, mask and bias (a random cotangent) equal torch's autograd of
    `torch_deform_conv`, whose values equal ONNX's reference evaluator's (to float32: it computes the sampling
    points' pixel coordinates in float32)."""
    x_shape, w_shape, out, attrs = DEFORM[name]
    full = "mask" in name and "no mask" not in name
    rng = np.random.default_rng(3)
    inputs = _deform_inputs(rng, x_shape, w_shape, out, attrs.get("offset_group", 1), full, full)
    names = ["x", "w", "offset", "b", "mask"] if full else ["x", "w", "offset"]
    model = _model("DeformConv", {k: inputs[k].shape for k in names}, **attrs)
    rank = len(out)
    tensors = [torch.tensor(inputs[k], requires_grad=True) for k in names]
    want = torch_deform_conv(*tensors[:3], tensors[4] if full else None, tensors[3] if full else None,
                             attrs.get("strides", [1] * rank), attrs.get("pads", [0] * rank)[:rank],
                             attrs.get("dilations", [1] * rank), attrs.get("group", 1), attrs.get("offset_group", 1))
    reference = ReferenceEvaluator(model).run(None, {k: inputs[k] for k in names})[0]
    np.testing.assert_allclose(want.detach().numpy(), reference, rtol=1e-5, atol=1e-6)  # its coordinates are float32
    seed = rng.standard_normal(tuple(want.shape))
    got = interpret(from_onnx(model, parameters=[]).autodiff_module(), "main_grad", *(inputs[k] for k in names), seed)
    want.backward(torch.from_numpy(seed))
    np.testing.assert_allclose(got[0], want.detach().numpy(), rtol=1e-12, atol=1e-12)
    for k, t, g in zip(names, tensors, got[1:]):
        floor = 1e-13 * float(np.abs(t.grad.numpy()).max())
        np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-11, atol=floor, err_msg=k)


@pytest.mark.parametrize("x_shape,w_shape,out,attrs", [
    ((1, 2, 7), (2, 1, 3), (4,), dict(group=2, strides=[2], pads=[1, 2])),
    pytest.param((1, 2, 3, 4, 3), (2, 2, 2, 2, 1), (2, 3, 3), dict(offset_group=2, pads=[0, 1, 0, 0, 0, 0],
                                                                   dilations=[1, 2, 1]), marks=pytest.mark.slow),
])
def test_deform_conv_of_other_ranks_equals_its_definition(x_shape, w_shape, out, attrs):
    """1-D and 3-D deformable convolutions (the reference evaluator computes 2-D only) equal `torch_deform_conv`."""
    rank = len(out)
    inputs = _deform_inputs(np.random.default_rng(5), x_shape, w_shape, out, attrs.get("offset_group", 1), True, False)
    names = ["x", "w", "offset", "", "mask"]
    node = helper.make_node("DeformConv", names, ["y"], **attrs)
    graph = helper.make_graph([node], "m", [helper.make_tensor_value_info(k, TensorProto.DOUBLE, inputs[k].shape)
                                            for k in names if k],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    got = interpret(from_onnx(model, parameters=[]).module, "main", *(inputs[k] for k in names if k))
    pads = attrs.get("pads", [0] * 2 * rank)[:rank]
    want = torch_deform_conv(*(torch.from_numpy(inputs[k]) for k in ("x", "w", "offset", "mask")), None,
                             attrs.get("strides", [1] * rank), pads, attrs.get("dilations", [1] * rank),
                             attrs.get("group", 1), attrs.get("offset_group", 1))
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("inputs,named", [
    ({"x": (1, 1, 4, 4), "w": (1, 1, 2, 2), "offset": (1, 8, 2, 2)}, r"offset \[1, 8, 2, 2\]"),
    ({"x": (1, 1, 4, 4), "w": (1, 1, 2, 2), "offset": (1, 8, 3, 3), "b": (1,), "mask": (1, 4, 9, 1)},
     r"mask \[1, 4, 9, 1\]"),
])
def test_deform_conv_refuses_inputs_of_other_shapes(inputs, named):
    """An offset or mask whose shape is not the convolution's (its output's points, the kernel's taps) is refused,
    naming the shapes, rather than read in another layout."""
    with pytest.raises(Exception, match=rf"DeformConv.*{named}.*do not agree"):
        from_onnx(_model("DeformConv", inputs), parameters=[])


@pytest.mark.parametrize("size", [(2, 3, 4, 1), (2, 1, 3, 1, 5)])
@pytest.mark.parametrize("align", [0, 1])
def test_affine_grid_equals_torch_with_its_gradient(size, align):
    """AffineGrid (an axis of size 1 included, where ONNX's reference divides by 0) equals F.affine_grid, and
    the gradient to theta torch's."""
    rank = len(size) - 2
    theta = np.random.default_rng(7).standard_normal((2, rank, rank + 1))
    node = helper.make_node("AffineGrid", ["theta", "size"], ["y"], align_corners=align)
    graph = helper.make_graph([node], "m", [helper.make_tensor_value_info("theta", TensorProto.DOUBLE, theta.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)],
                              [helper.make_tensor("size", TensorProto.INT64, [len(size)], list(size))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    t = torch.tensor(theta, requires_grad=True)
    want = F.affine_grid(t, list(size), align_corners=bool(align))
    seed = np.random.default_rng(8).standard_normal(tuple(want.shape))
    y, grad = interpret(from_onnx(model, parameters=[]).autodiff_module(), "main_grad", theta, seed)
    want.backward(torch.from_numpy(seed))
    np.testing.assert_allclose(y, want.detach().numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(grad, t.grad.numpy(), rtol=1e-12, atol=1e-13)


CUBIC_BORDER = [((1, 1, 3, 4), (1, 3, 2, 2), 0), ((1, 1, 3, 4), (1, 3, 2, 2), 1), ((1, 2, 6), (1, 5, 1), 0),
                ((1, 1, 2, 3, 3), (1, 2, 1, 2, 3), 1)]


@pytest.mark.parametrize("shape,grid,align", [c if k == 0 else pytest.param(*c, marks=pytest.mark.slow)
                                              for k, c in enumerate(CUBIC_BORDER)])
def test_grid_sample_cubic_border_is_onnxs(shape, grid, align):
    """Cubic GridSample with border padding clamps a point outside the grid's range before its neighbours (not
    PyTorch's way): it equals ONNX's reference evaluator, in 1, 2 and 3 spatial dimensions, both corner
    conventions; the points straddle the edges."""
    rng = np.random.default_rng(9)
    x, g = rng.standard_normal(shape), rng.uniform(-1.8, 1.8, grid)
    model = _model("GridSample", {"x": shape, "g": grid}, mode="cubic", padding_mode="border", align_corners=align)
    got = interpret(from_onnx(model, parameters=[]).module, "main", x, g)
    want = ReferenceEvaluator(model).run(None, {"x": x, "g": g})[0]
    # the evaluator computes the points' pixel coordinates in float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
