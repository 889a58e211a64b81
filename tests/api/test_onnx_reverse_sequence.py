"""ReverseSequence beyond ONNX's node tests (rank 3, batch-major and time-major,
run-time lengths including 0 and the full length): forward against ONNX
Runtime, and the gradient, which a permutation's adjoint gives: the cotangent
reversed the same way."""

import numpy as np
import pytest

from dfc import interpret
from dfc.importers.onnx_import import from_onnx

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402


def _reverse(x, lengths, time, batch):
    """NumPy's reference: each batch element's first lengths[b] steps reversed."""
    y = x.copy()
    for b, n in enumerate(lengths):
        index = [slice(None)] * x.ndim
        index[batch], index[time] = b, slice(0, n)
        y[tuple(index)] = np.flip(x[tuple(index)], axis=time - (batch < time))
    return y


@pytest.mark.parametrize("time,batch", [(0, 1), (1, 0)])
def test_reverse_sequence_rank3_forward_and_gradient(time, batch):
    steps, batches, features = 5, 4, 3
    shape = [steps, batches, features] if time == 0 else [batches, steps, features]
    node = helper.make_node("ReverseSequence", ["x", "lengths"], ["y"], time_axis=time, batch_axis=batch)
    graph = helper.make_graph([node], "reverse", [helper.make_tensor_value_info("x", TensorProto.DOUBLE, shape),
                                                  helper.make_tensor_value_info("lengths", TensorProto.INT64, [batches])],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 10)])
    rng = np.random.default_rng(time)
    x, lengths = rng.standard_normal(shape), np.array([0, 5, 2, 1], np.int64)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": x, "lengths": lengths})[0]
    np.testing.assert_array_equal(want, _reverse(x, lengths, time, batch))
    f = from_onnx(model)
    np.testing.assert_array_equal(interpret(f.module, "main", x, lengths), want)
    seed = rng.standard_normal(shape)
    _, dx = interpret(f.autodiff_module(), "main_grad", x, lengths, seed)
    np.testing.assert_array_equal(dx, _reverse(seed, lengths, time, batch))
