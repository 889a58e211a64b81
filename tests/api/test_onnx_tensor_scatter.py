"""TensorScatter (the KV-cache update of opset 24) with run-time write indices,
'circular' writes that wrap past the cache's end and 'linear' ones, against the
operator's pseudo code in NumPy; the gradient of the cache and of the update
(each element goes to where it lands)."""

import numpy as np
import pytest

from dfc import interpret
from dfc.importers.onnx_import import from_onnx

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402


def _pseudo_code(past, update, write, axis, mode):
    present = past.copy()
    for prefix in np.ndindex(past.shape[:axis]):
        for i in range(update.shape[axis]):
            k = write[prefix[0]] + i
            present[(*prefix, k % past.shape[axis] if mode == "circular" else k)] = update[(*prefix, i)]
    return present


@pytest.mark.parametrize("mode,write", [("circular", [3, 0, 5]), ("linear", [0, 2, 1])])
def test_tensor_scatter_against_the_pseudo_code(mode, write):
    past_shape, update_shape = [3, 2, 4, 5], [3, 2, 2, 5]
    node = helper.make_node("TensorScatter", ["past", "update", "write"], ["present"], mode=mode)
    graph = helper.make_graph([node], "scatter", [
        helper.make_tensor_value_info("past", TensorProto.DOUBLE, past_shape),
        helper.make_tensor_value_info("update", TensorProto.DOUBLE, update_shape),
        helper.make_tensor_value_info("write", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info("present", TensorProto.DOUBLE, past_shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
    rng = np.random.default_rng(len(mode))
    past, update, write = rng.standard_normal(past_shape), rng.standard_normal(update_shape), np.array(write)
    f = from_onnx(model)
    want = _pseudo_code(past, update, write, 2, mode)
    np.testing.assert_array_equal(interpret(f.module, "main", past, update, write), want)
    seed = rng.standard_normal(past_shape)
    _, d_past, d_update = interpret(f.autodiff_module(), "main_grad", past, update, write, seed)
    landed = _pseudo_code(np.zeros(past_shape), np.ones(update_shape), write, 2, mode)
    np.testing.assert_array_equal(d_past, np.where(landed == 1, 0.0, seed))
    np.testing.assert_array_equal(_pseudo_code(np.zeros(past_shape), d_update, write, 2, mode),
                                  np.where(landed == 1, seed, 0.0))
