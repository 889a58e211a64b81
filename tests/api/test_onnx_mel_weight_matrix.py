"""ONNX MelWeightMatrix (`dfc.importers.onnx_spectral_ops`) beyond the node suite's one case: filter banks with
filters of coincident edge bins (more mel bins than the DFT resolves), float64 and float16 outputs, against ONNX's
reference evaluator; edges outside the DFT's bins refused."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from dfc import CompileError, interpret  # noqa: E402
from dfc.importers.onnx_import import import_onnx  # noqa: E402


def _model(mels: int, length: int, rate: int, low: float, high: float, dtype: int):
    inputs = [numpy_helper.from_array(np.array(v, t), n) for n, v, t in (
        ("mels", mels, np.int64), ("length", length, np.int64), ("rate", rate, np.int64),
        ("low", low, np.float32), ("high", high, np.float32))]
    node = helper.make_node("MelWeightMatrix", [t.name for t in inputs], ["y"], output_datatype=dtype)
    graph = helper.make_graph([node], "m", [], [helper.make_tensor_value_info("y", dtype, None)], inputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("mels,length,rate,low,high,dtype", [
    (8, 64, 8000, 0.0, 4000.0, TensorProto.DOUBLE),
    (20, 32, 16000, 100.0, 7000.0, TensorProto.FLOAT),
    (6, 512, 22050, 300.0, 3000.0, TensorProto.FLOAT16),
])
def test_mel_weight_matrix_matches_the_reference(mels, length, rate, low, high, dtype):
    model = _model(mels, length, rate, low, high, dtype)
    want = ReferenceEvaluator(model).run(None, {})[0]
    module, _, _ = import_onnx(model, parameters=[])
    got = interpret(module, "main")
    assert got.dtype == want.dtype and got.shape == want.shape == (length // 2 + 1, mels)
    np.testing.assert_array_equal(got, want)


def test_mel_weight_matrix_refuses_edges_past_the_bins():
    with pytest.raises(CompileError, match="fall outside the 33 DFT bins"):
        import_onnx(_model(8, 64, 8000, 0.0, 9000.0, TensorProto.FLOAT), parameters=[])
