"""QuantizeLinear and DequantizeLinear beyond ONNX's node cases: ties, clamping and run-time zero points
against ONNX's reference evaluator, on the compiled engine; a float8 zero point other than 0 is refused."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from dfc import CompileError  # noqa: E402
from dfc.importers.onnx_import import from_onnx, import_onnx  # noqa: E402


def _model(node, inputs, output, initializers=()):
    def info(name, dtype, shape):
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), shape)

    graph = helper.make_graph([node], "g", [info(n, *t) for n, t in inputs.items()], [info("y", *output)],
                              [numpy_helper.from_array(v, n) for n, v in initializers])
    return helper.make_model(graph, opset_imports=[helper.make_operatorsetid("", 21)])


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint16])
def test_quantize_rounds_ties_to_even_and_clamps_per_axis(dtype):
    """Halfway quotients (0.5, 1.5, 2.5, -0.5, ...), values past both ends of the range, a run-time zero point."""
    info = np.iinfo(dtype)
    x = np.array([[0.5, 1.5, 2.5, -0.5, -1.5, 1e9, -1e9, 3.0],
                  [0.25, 0.75, -0.25, 5.0, -5.0, 7.0, float(info.max) * 2, float(info.min) * 2]], np.float32)
    scale = np.array([1.0, 0.5], np.float32)
    zp = np.array([info.min // 2 + 1, info.max // 2], dtype)
    model = _model(helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=0),
                   {"x": (np.float32, x.shape), "z": (dtype, zp.shape)}, (dtype, x.shape), [("s", scale)])
    want = ReferenceEvaluator(model).run(None, {"x": x, "z": zp})[0]
    got = from_onnx(model)(x, zp)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")
def test_dequantize_of_uint16_with_float16_output():
    """Values past float16 (65534 * 3) become inf, as the reference's rounding."""
    x = np.array([[0, 1, 65535, 32768], [7, 40000, 2, 65534]], np.uint16)
    scale, zp = np.array([0.001, 3.0], np.float32), np.array([65535, 1], np.uint16)
    model = _model(helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], axis=0, output_dtype=10),
                   {"x": (np.uint16, x.shape)}, (np.float16, x.shape), [("s", scale), ("z", zp)])
    model.opset_import[0].version = 23
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    got = from_onnx(model)(x)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, want)


def test_a_float8_zero_point_other_than_zero_is_refused():
    import ml_dtypes

    model = _model(helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q"),
                   {"x": (np.float32, [3])}, (ml_dtypes.float8_e4m3fn, [3]),
                   [("s", np.array(2.0, np.float32)), ("z", np.array(1.0, ml_dtypes.float8_e4m3fn))])
    with pytest.raises(CompileError, match=r"node 'q' \(QuantizeLinear\): a float8 zero point must be 0"):
        import_onnx(model)


def test_conv_integer_with_a_zero_point_per_output_channel():
    """uint8 x, int8 w with one zero point per output channel, padding (the padded x - zero point is 0)."""
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (1, 2, 5, 4)).astype(np.uint8)
    w = rng.integers(-128, 128, (3, 2, 3, 3)).astype(np.int8)
    zx, zw = np.array(200, np.uint8), np.array([-128, 0, 127], np.int8)
    model = _model(helper.make_node("ConvInteger", ["x", "w", "zx", "zw"], ["y"], pads=[1, 1, 1, 1], strides=[2, 1]),
                   {"x": (np.uint8, x.shape), "w": (np.int8, w.shape), "zx": (np.uint8, []), "zw": (np.int8, [3])},
                   (np.int32, [1, 3, 3, 4]))
    model.opset_import[0].version = 10
    want = ReferenceEvaluator(model).run(None, {"x": x, "w": w, "zx": zx, "zw": zw})[0]
    got = from_onnx(model)(x, w, zx, zw)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)


def test_qlinear_conv_with_per_channel_scales_and_bias():
    """int8 x and w, w_scale and w_zero_point per output channel, an int32 bias, int8 y clamped at both ends."""
    rng = np.random.default_rng(1)
    x = rng.integers(-128, 128, (1, 2, 4, 4)).astype(np.int8)
    w = rng.integers(-128, 128, (3, 2, 2, 2)).astype(np.int8)
    inits = [("xs", np.array(0.05, np.float32)), ("xz", np.array(-3, np.int8)),
             ("ws", np.array([0.01, 0.002, 0.03], np.float32)), ("wz", np.array([0, 5, -7], np.int8)),
             ("ys", np.array(0.4, np.float32)), ("yz", np.array(10, np.int8)),
             ("b", np.array([500, -900000, 7], np.int32))]
    names = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"]
    model = _model(helper.make_node("QLinearConv", names, ["y"], pads=[0, 1, 1, 0]),
                   {"x": (np.int8, x.shape), "w": (np.int8, w.shape)}, (np.int8, [1, 3, 4, 4]), inits)
    model.opset_import[0].version = 10
    want = ReferenceEvaluator(model).run(None, {"x": x, "w": w})[0]
    got = from_onnx(model)(x, w)
    assert got.dtype == np.int8 and (want == 127).any() and (want == -128).any()
    np.testing.assert_array_equal(got, want)
