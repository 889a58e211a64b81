"""MaxPool's Indices output against onnxruntime: pads, strides, dilations, ceil_mode, storage_order, ties
(the first largest of a window wins), 1-D and 2-D windows; the values too."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from dfc import ExecutionEngine, interpret  # noqa: E402
from dfc.importers.onnx_import import import_onnx  # noqa: E402

CASES = {
    "2d_pads_strides": ((2, 3, 5, 6), {"kernel_shape": [3, 2], "pads": [1, 0, 1, 1], "strides": [2, 2]}),
    "2d_dilations_ceil": ((1, 2, 7, 6), {"kernel_shape": [2, 2], "dilations": [2, 1], "strides": [2, 2],
                                         "ceil_mode": 1}),
    "2d_column_major": ((1, 2, 4, 5), {"kernel_shape": [2, 3], "pads": [0, 1, 1, 1], "storage_order": 1}),
    "1d": ((2, 2, 9), {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
}


@pytest.mark.parametrize("name,engine", [
    pytest.param(n, e, id=f"{n}-{'engine' if e else 'interpreter'}",
                 marks=pytest.mark.slow if e and n != "1d" else ())  # ~9 s each to compile
    for n in sorted(CASES) for e in (False, True)])
def test_maxpool_indices_equal_onnxruntime(name, engine):
    shape, attrs = CASES[name]
    x = np.round(np.random.default_rng(0).standard_normal(shape) * 2).astype(np.float32)  # many ties
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("i", TensorProto.INT64, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_operatorsetid("", 12)])
    want_y, want_i = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    module = import_onnx(model)[0]
    y, i = ExecutionEngine(module).invoke("main", x) if engine else interpret(module, "main", x)
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(i, want_i)
