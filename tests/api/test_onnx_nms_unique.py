"""NonMaxSuppression and Unique along an axis beyond ONNX's node tests, against ONNX's reference
evaluator (Unique's in first-occurrence order: NumPy's `unique(axis=)` reordered; the reference's is
wrong off axis 0): NMS of random boxes with tied scores (both box formats, with and without a score threshold,
several batches and classes), and Unique of the slices of a 3-D input along its middle axis with repeated
slices, sorted and in first-occurrence order, every output."""

import numpy as np
import pytest

from dfc import interpret
from dfc.compiler.engine import ExecutionEngine
from dfc.importers.onnx_import import from_onnx

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402


def _model(node, inputs, outputs, opset=11):
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                              [helper.make_tensor_value_info(n, t, None) for n, t in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("centered,thresholded", [(0, True), (1, False)])
def test_nms_random_boxes_with_ties_match_the_reference(centered, thresholded):
    rng = np.random.default_rng(centered)
    batches, classes, count = 2, 3, 9
    corners = rng.uniform(0, 4, (batches, count, 2, 2)).astype(np.float32)
    boxes = corners.reshape(batches, count, 4)  # unordered corners (flipped coordinates) or (xc, yc, w, h)
    scores = rng.choice(np.float32([0.1, 0.3, 0.5, 0.9]), (batches, classes, count))  # many ties
    names = ["boxes", "scores", "max_output", "iou", "score"][:5 if thresholded else 4]
    node = helper.make_node("NonMaxSuppression", names, ["selected"], center_point_box=centered)
    inputs = [("boxes", TensorProto.FLOAT, boxes.shape), ("scores", TensorProto.FLOAT, scores.shape),
              ("max_output", TensorProto.INT64, [1]), ("iou", TensorProto.FLOAT, [1]),
              ("score", TensorProto.FLOAT, [1])][:len(names)]
    model = _model(node, inputs, [("selected", TensorProto.INT64)])
    args = [boxes, scores, np.array([4], np.int64), np.float32([0.2]), np.float32([0.2])][:len(names)]
    want = ReferenceEvaluator(model).run(None, dict(zip(names, args)))[0]
    assert 4 < len(want) < batches * classes * count
    f = from_onnx(model)
    np.testing.assert_array_equal(interpret(f.module, "main", *args), want)


def test_nms_on_the_engine_matches_the_reference():
    rng = np.random.default_rng(7)
    boxes = rng.uniform(0, 3, (1, 6, 4)).astype(np.float32)
    scores = rng.choice(np.float32([0.2, 0.6]), (1, 2, 6))
    node = helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_output", "iou"], ["selected"])
    model = _model(node, [("boxes", TensorProto.FLOAT, boxes.shape), ("scores", TensorProto.FLOAT, scores.shape),
                          ("max_output", TensorProto.INT64, [1]), ("iou", TensorProto.FLOAT, [1])],
                   [("selected", TensorProto.INT64)])
    args = [boxes, scores, np.array([3], np.int64), np.float32([0.1])]
    want = ReferenceEvaluator(model).run(None, dict(zip(["boxes", "scores", "max_output", "iou"], args)))[0]
    module = from_onnx(model).module
    np.testing.assert_array_equal(ExecutionEngine(module).invoke("main", *args), want)


@pytest.mark.parametrize("sorted_", [1, 0])
def test_unique_slices_along_an_axis_match_the_reference(sorted_):
    rng = np.random.default_rng(sorted_)
    slices = rng.integers(0, 2, (2, 5, 3)).astype(np.float32)
    x = slices[:, rng.integers(0, 5, 8), :]  # 8 slices along axis 1, some repeated
    outputs = ["y", "indices", "inverse", "counts"]
    node = helper.make_node("Unique", ["x"], outputs, axis=-2, sorted=sorted_)
    model = _model(node, [("x", TensorProto.FLOAT, x.shape)],
                   [("y", TensorProto.FLOAT)] + [(n, TensorProto.INT64) for n in outputs[1:]])
    y, first, inverse, counts = np.unique(x, axis=1, return_index=True, return_inverse=True, return_counts=True)
    if not sorted_:  # ONNX's reference takes the slices along axis 0 here (wrong): reorder np.unique's own
        order = np.argsort(first)
        y, first, counts, inverse = y[:, order], first[order], counts[order], np.argsort(order)[inverse.reshape(-1)]
    want = [y, first, inverse.reshape(-1), counts]
    assert 1 < y.shape[1] < 8
    got = interpret(from_onnx(model).module, "main", x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_unique_rows_with_nan_and_signed_zero_on_both_engines():
    """Rows holding NaN are distinct (NaN != NaN), -0.0 equals 0.0: as ONNX's reference (np.unique)."""
    x = np.array([[1, np.nan, 2], [0, -0.0, 3], [1, np.nan, 2], [0, 0, 3], [np.nan, 1, 1], [0, 0, 3]])
    outputs = ["y", "indices", "inverse", "counts"]
    model = _model(helper.make_node("Unique", ["x"], outputs, axis=0), [("x", TensorProto.DOUBLE, x.shape)],
                   [("y", TensorProto.DOUBLE)] + [(n, TensorProto.INT64) for n in outputs[1:]])
    want = ReferenceEvaluator(model).run(None, {"x": x})
    assert want[0].shape == (4, 3)
    module = from_onnx(model).module
    for got in (interpret(module, "main", x), ExecutionEngine(module).invoke("main", x)):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
