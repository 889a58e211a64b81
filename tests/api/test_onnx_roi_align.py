"""ONNX RoiAlign (`dfc.importers.onnx_roi_ops`) beyond the node suite's cases (which all sample 2 x 2 points a
bin of regions inside the image): adaptive sampling counts (`sampling_ratio` 0, a count per region and axis),
regions reaching outside the image, `spatial_scale`, both coordinate transformations and both modes, against
ONNX's reference evaluator in float64; the gradient to X against float64 central differences of the reference
evaluator."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from dfc import CompileError, interpret  # noqa: E402
from dfc.compiler.engine import ExecutionEngine  # noqa: E402
from dfc.importers.onnx_import import from_onnx, import_onnx  # noqa: E402

ROIS = np.array([[0.0, 0.0, 9.0, 11.0], [3.0, -4.0, 7.0, 5.0], [-4.0, 2.0, 10.0, 13.0], [5.0, 5.0, 5.4, 5.2]])
"""Regions in input pixels (x1, y1, x2, y2) at spatial_scale 0.5 over a 6 x 5 image: one inside, two reaching
outside (past -1 and past the size), one smaller than a pixel."""


def _model(x: np.ndarray, rois: np.ndarray, batch: np.ndarray, **attrs):
    node = helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"], **attrs)
    graph = helper.make_graph([node], "m", [helper.make_tensor_value_info("x", TensorProto.DOUBLE, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)],
                              [numpy_helper.from_array(rois, "rois"), numpy_helper.from_array(batch, "batch")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])


def _case(mode: str, transform: str, ratio: int):
    x = np.random.default_rng(3).standard_normal((2, 2, 6, 5))
    return x, _model(x, ROIS, np.array([1, 0, 1, 0], np.int64), mode=mode, coordinate_transformation_mode=transform,
                     sampling_ratio=ratio, spatial_scale=0.5, output_height=2, output_width=2)


@pytest.mark.parametrize("mode,transform,ratio,engine", [
    ("avg", "output_half_pixel", 0, False), ("max", "half_pixel", 0, False),
    pytest.param("avg", "half_pixel", 3, False, marks=pytest.mark.slow),
    pytest.param("max", "output_half_pixel", 2, False, marks=pytest.mark.slow),
    pytest.param("avg", "half_pixel", 0, True, marks=pytest.mark.slow),
])
def test_roi_align_matches_the_reference(mode, transform, ratio, engine):
    x, model = _case(mode, transform, ratio)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    module, _, _ = import_onnx(model, parameters=[])
    got = ExecutionEngine(module).invoke("main", x) if engine else interpret(module, "main", x)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("mode", ["avg", pytest.param("max", marks=pytest.mark.slow)])
def test_roi_align_gradient_to_x(mode):
    """The gradient to X (a random cotangent) equals float64 central differences of the reference evaluator's
    RoiAlign (linear in X for avg; for max, piecewise linear with its pieces' ties apart by far more than the
    step)."""
    x, model = _case(mode, "half_pixel", 0)
    reference = ReferenceEvaluator(model)
    seed = np.random.default_rng(4).standard_normal(reference.run(None, {"x": x})[0].shape)
    _, grad = interpret(from_onnx(model, parameters=[]).autodiff_module(), "main_grad", x, seed)
    step, numeric = 1e-6, np.zeros_like(x)
    for k in np.ndindex(x.shape):
        moved = [x.copy(), x.copy()]
        moved[0][k] += step
        moved[1][k] -= step
        up, down = (float((reference.run(None, {"x": m})[0] * seed).sum()) for m in moved)
        numeric[k] = (up - down) / (2 * step)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)
    assert np.abs(numeric).max() > 0.1


def test_roi_align_adaptive_counts_need_known_rois():
    x = np.zeros((1, 1, 4, 4))
    node = helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"], sampling_ratio=0)
    graph = helper.make_graph([node], "m", [helper.make_tensor_value_info("x", TensorProto.DOUBLE, x.shape),
                                            helper.make_tensor_value_info("rois", TensorProto.DOUBLE, (1, 4))],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)],
                              [numpy_helper.from_array(np.zeros(1, np.int64), "batch")])
    with pytest.raises(CompileError, match="input 'rois' must be a constant"):
        import_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)]))
