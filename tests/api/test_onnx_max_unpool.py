"""MaxUnpool after MaxPool (its Indices) in 1-D and 2-D, strided and padded, with and
without output_shape, against ONNX's reference evaluator (and ONNX Runtime without
output_shape: with it, ONNX Runtime scatters into output_shape's layout, where
ONNX's reference and node tests scatter into the unpooled shape and pad it); the
gradient reaches each pooled value from its unpooled position."""

import numpy as np
import pytest

from dfc import interpret
from dfc.importers.onnx_import import from_onnx

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402


@pytest.mark.parametrize("shape,kernel,strides,pads,out", [
    ([2, 3, 9], [3], [2], [1, 1], None), ([1, 2, 4, 6], [2, 2], [2, 2], [0, 0, 0, 0], [1, 2, 5, 7])])
def test_max_unpool_after_max_pool(shape, kernel, strides, pads, out):
    pool = helper.make_node("MaxPool", ["x"], ["p", "i"], kernel_shape=kernel, strides=strides, pads=pads)
    inputs = ["p", "i"] + (["size"] if out else [])
    unpool = helper.make_node("MaxUnpool", inputs, ["y"], kernel_shape=kernel, strides=strides, pads=pads)
    inits = [helper.make_tensor("size", TensorProto.INT64, [len(out)], out)] if out else []
    graph = helper.make_graph([pool, unpool], "unpool", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("i", TensorProto.INT64, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
    want, index = ReferenceEvaluator(model).run(None, {"x": x})
    if out is None:
        for a, b in zip(ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
                None, {"x": x}), (want, index)):
            np.testing.assert_array_equal(a, b)
    f = from_onnx(model)
    got, got_index = interpret(f.module, "main", x)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_index, index)
    seed = np.random.default_rng(1).standard_normal(want.shape).astype(np.float32)
    dx = interpret(f.autodiff_module(), "main_grad", x, seed)[-1]
    unpooled = _unpooled(shape, kernel, strides, pads)
    expected = np.zeros(x.size, np.float32)
    for i in index.reshape(-1):  # the pooled max at flat index i lands at i of the unpooled layout
        expected[i] = seed[np.unravel_index(i, unpooled)]
    np.testing.assert_array_equal(dx.reshape(-1), expected)


def _unpooled(shape, kernel, strides, pads):
    pooled = [(n + pads[k] + pads[len(kernel) + k] - kernel[k]) // strides[k] + 1 for k, n in enumerate(shape[2:])]
    return shape[:2] + [(p - 1) * s - (pads[k] + pads[len(kernel) + k]) + kernel[k]
                        for k, (p, s) in enumerate(zip(pooled, strides))]
