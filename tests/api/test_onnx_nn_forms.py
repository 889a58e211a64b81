"""ONNX node forms beyond the node cases' data: BatchNormalization in training mode and Einsum's
diagonals (forward and gradient against PyTorch in float64), integer MaxPool and Resize's
tf_crop_and_resize (against onnxruntime and ONNX's reference evaluator)."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
torch = pytest.importorskip("torch")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from dfc import interpret  # noqa: E402
from dfc.importers.onnx_import import from_onnx  # noqa: E402

F64 = TensorProto.DOUBLE


def _model(node, inputs, outputs, initializers=(), opset=18):
    graph = helper.make_graph([node], "g", inputs, outputs, [numpy_helper.from_array(v, n) for n, v in initializers])
    return helper.make_model(graph, opset_imports=[helper.make_operatorsetid("", opset)])


def _info(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def test_batchnorm_training_mode_and_its_gradient_equal_torch():
    """y with the batch's statistics and the updated running mean and variance (ONNX's momentum is
    torch's 1 - momentum; ONNX keeps the biased variance); d(y . seed) / d(x, scale, bias) by torch."""
    rng = np.random.default_rng(0)
    x, scale, bias = rng.standard_normal((3, 2, 4)), rng.standard_normal(2), rng.standard_normal(2)
    mean, var = rng.standard_normal(2), rng.uniform(0.5, 2, 2)
    node = helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y", "m", "v"],
                            training_mode=1, momentum=0.8, epsilon=1e-3)
    model = _model(node, [_info(n, F64, s) for n, s in (("x", [3, 2, 4]), ("scale", [2]), ("bias", [2]))],
                   [_info("y", F64, [3, 2, 4]), _info("m", F64, [2]), _info("v", F64, [2])],
                   [("mean", mean), ("var", var)], opset=15)
    f = from_onnx(model, parameters=[])
    y, m, v = interpret(f.module, "main", x, scale, bias)
    tx, ts, tb = (torch.tensor(a, requires_grad=True) for a in (x, scale, bias))
    eps = float(np.float32(1e-3))  # an ONNX float attribute is a float32
    want = torch.nn.functional.batch_norm(tx, None, None, ts, tb, training=True, eps=eps)
    np.testing.assert_allclose(y, want.detach().numpy(), rtol=1e-12, atol=1e-12)
    momentum = float(np.float32(0.8))
    np.testing.assert_allclose(m, momentum * mean + (1 - momentum) * x.mean(axis=(0, 2)), rtol=1e-14)
    np.testing.assert_allclose(v, momentum * var + (1 - momentum) * x.var(axis=(0, 2)), rtol=1e-14)
    seed = rng.standard_normal(x.shape)
    want.backward(torch.from_numpy(seed))
    _, _, _, *grads = interpret(f.autodiff_module(), "main_grad", x, scale, bias, seed, np.zeros(2), np.zeros(2))
    for got, t in zip(grads, (tx, ts, tb)):
        np.testing.assert_allclose(got, t.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("equation,shapes", [("iij,jk->ik", [(3, 3, 2), (2, 4)]),
                                             pytest.param("bii->bi", [(2, 3, 3)], marks=pytest.mark.slow),
                                             pytest.param("iii->", [(3, 3, 3)], marks=pytest.mark.slow),
                                             pytest.param("ij,jj->ij", [(2, 3), (3, 3)], marks=pytest.mark.slow)])
def test_einsum_diagonals_and_their_gradient_equal_torch(equation, shapes):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) for s in shapes]
    names = [f"a{k}" for k in range(len(arrays))]
    want = np.einsum(equation, *arrays)
    model = _model(helper.make_node("Einsum", names, ["y"], equation=equation),
                   [_info(n, F64, s) for n, s in zip(names, shapes)], [_info("y", F64, want.shape)])
    f = from_onnx(model)
    np.testing.assert_allclose(interpret(f.module, "main", *arrays), want, rtol=1e-14)
    tensors = [torch.tensor(a, requires_grad=True) for a in arrays]
    seed = rng.standard_normal(want.shape)
    torch.einsum(equation, *tensors).backward(torch.from_numpy(seed))
    _, *grads = interpret(f.autodiff_module(), "main_grad", *arrays, seed)
    for got, t in zip(grads, tensors):
        np.testing.assert_allclose(got, t.grad.numpy(), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("dtype", [np.uint8, pytest.param(np.int8, marks=pytest.mark.slow)])
def test_integer_max_pool_equals_onnxruntime(dtype):
    """Extreme values included (the padding never wins: it is below every value of the type)."""
    ort = pytest.importorskip("onnxruntime")
    info = np.iinfo(dtype)
    x = np.random.default_rng(2).integers(info.min, info.max, (1, 2, 5, 5), endpoint=True).astype(dtype)
    x[0, 0, 0, 0], x[0, 1, 4, 4] = info.min, info.max
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    model = _model(helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 2], pads=[1, 1, 1, 0], strides=[2, 2]),
                   [_info("x", elem, x.shape)], [_info("y", elem, None)], opset=12)
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    np.testing.assert_array_equal(from_onnx(model)(x), want)  # the engine, the model's dtype


@pytest.mark.parametrize("mode", ["linear", pytest.param("nearest", marks=pytest.mark.slow),
                                  pytest.param("cubic", marks=pytest.mark.slow)])
def test_resize_tf_crop_and_resize_equals_the_reference(mode):
    """A crop reaching outside the input (extrapolation_value there) and a one-row output."""
    from onnx.reference import ReferenceEvaluator

    x = np.random.default_rng(3).standard_normal((1, 2, 5, 6)).astype(np.float32)
    for roi, sizes in (([0.1, -0.2, 0.8, 1.3], [4, 7]), ([0.4, 0.3, 0.6, 0.5], [1, 3])):
        node = helper.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], mode=mode, axes=[2, 3],
                                coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-4.0)
        model = _model(node, [_info("x", TensorProto.FLOAT, x.shape)], [_info("y", TensorProto.FLOAT, None)],
                       [("roi", np.array(roi, np.float32)), ("sizes", np.array(sizes, np.int64))], opset=19)
        want = ReferenceEvaluator(model).run(None, {"x": x})[0]
        np.testing.assert_allclose(interpret(from_onnx(model).module, "main", x), want, rtol=1e-5, atol=1e-6)
