"""Resize in cubic mode against PyTorch's bicubic interpolation (A = -0.75, edge taps clamped), with
half_pixel and align_corners coordinates, up and down, on the interpreter and the engine."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
torch = pytest.importorskip("torch")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from dfc import ExecutionEngine, interpret  # noqa: E402
from dfc.importers.onnx_import import import_onnx  # noqa: E402


@pytest.mark.parametrize("engine", [False, True], ids=["interpreter", "engine"])
@pytest.mark.parametrize("coordinates,sizes", [("half_pixel", (7, 5)), ("align_corners", (3, 9))])
def test_cubic_resize_equals_torch_bicubic(coordinates, sizes, engine):
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 6)).astype(np.float32)
    out = [2, 3, *sizes]
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="cubic",
                            coordinate_transformation_mode=coordinates)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)],
                              [numpy_helper.from_array(np.array(out, np.int64), "sizes")])
    module = import_onnx(helper.make_model(graph, opset_imports=[helper.make_operatorsetid("", 18)]))[0]
    got = ExecutionEngine(module).invoke("main", x) if engine else interpret(module, "main", x)
    want = torch.nn.functional.interpolate(torch.from_numpy(x), size=sizes, mode="bicubic",
                                           align_corners=coordinates == "align_corners").numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
