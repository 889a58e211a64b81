"""The narrow ONNX element types (float8 x4, float4e2m1, int4/uint4/int2/uint2): the numpy codecs against
ml_dtypes over every code and every rounding boundary, and Cast in the IR (interpreter and engine) against
the codecs."""

from __future__ import annotations

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes")
onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402

from dfc import CompileError, ExecutionEngine, interpret  # noqa: E402
from dfc.importers.narrow_formats import (  # noqa: E402
    E8M0,
    FLOAT_FORMATS,
    INT_FORMATS,
    cast_array,
    decode,
    encode,
    encode_e8m0,
    thresholds,
    wrap_int,
)
from dfc.importers.onnx_import import import_onnx  # noqa: E402
from dfc.importers.onnx_unsigned import signless, with_onnx_dtype  # noqa: E402

FORMATS = sorted(FLOAT_FORMATS)


def _codes_of(array: np.ndarray) -> np.ndarray:
    return np.asarray(array).view(np.uint8)


def _boundary_values(name: str) -> np.ndarray:
    """Every rounding boundary of `name`, the float32 on either side of it, negated, and the specials."""
    t = thresholds(name)
    mids = t[np.isfinite(t)].astype(np.float32)
    near = np.concatenate([mids, np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(-np.inf))])
    specials = np.array([0.0, -0.0, np.inf, -np.inf, 1e6, -1e6, 1e-30, -1e-30, 3e38, -3e38], np.float32)
    values = decode(FLOAT_FORMATS[name], np.arange(1 << FLOAT_FORMATS[name].bits)).astype(np.float32)
    return np.concatenate([near, -near, specials, values[~np.isnan(values)]])


@pytest.mark.parametrize("name", FORMATS)
def test_decode_every_code_as_ml_dtypes(name):
    fmt, dtype = FLOAT_FORMATS[name], np.dtype(getattr(ml_dtypes, name))
    codes = np.arange(1 << fmt.bits, dtype=np.uint8)
    want = codes.view(dtype).astype(np.float64)
    got = decode(fmt, codes)
    np.testing.assert_array_equal(got, want)
    assert (np.signbit(got) == np.signbit(want)).all()


@pytest.mark.parametrize("saturate", [True, False])
@pytest.mark.parametrize("name", FORMATS)
def test_encode_as_ml_dtypes(name, saturate):
    """Every code's value back to its code, every boundary and its neighbours, every float16 and 2^16
    random float32 bit patterns: the code ml_dtypes gives (after ONNX's clip when saturating)."""
    fmt, dtype = FLOAT_FORMATS[name], np.dtype(getattr(ml_dtypes, name))
    rng = np.random.default_rng(0)
    x = np.concatenate([_boundary_values(name), np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32),
                        rng.integers(0, 1 << 32, 1 << 16, dtype=np.uint64).astype(np.uint32).view(np.float32)])
    x = x[~np.isnan(x)]
    info = ml_dtypes.finfo(dtype)
    want = (np.clip(x, float(info.min), float(info.max)) if saturate else x).astype(dtype)
    np.testing.assert_array_equal(encode(fmt, x, saturate), _codes_of(want))
    finite = ~np.isnan(decode(fmt, np.arange(1 << fmt.bits)))
    codes = np.arange(1 << fmt.bits)[finite]
    expected = np.where(fmt.unsigned_zero & (codes == 0), 0, codes)
    np.testing.assert_array_equal(encode(fmt, decode(fmt, codes), saturate=False), expected)


@pytest.mark.parametrize("name", FORMATS)
def test_nan_encodes_to_the_formats_nan(name):
    fmt, dtype = FLOAT_FORMATS[name], np.dtype(getattr(ml_dtypes, name))
    code = encode(fmt, np.array([np.nan]))[0]
    assert code == _codes_of(np.array([np.nan], np.float32).astype(dtype))[0]


@pytest.mark.parametrize("name", sorted(INT_FORMATS))
def test_narrow_integers_wrap_as_ml_dtypes(name):
    dtype = np.dtype(getattr(ml_dtypes, name))
    x = np.arange(-40, 40)
    np.testing.assert_array_equal(wrap_int(name, x), x.astype(dtype).astype(np.int8))
    f = np.arange(-20, 20, 0.75)
    np.testing.assert_array_equal(wrap_int(name, f), f.astype(dtype).astype(np.int8))


def _cast_model(source, target, shape, saturate=1):
    node = helper.make_node("Cast", ["x"], ["y"], to=target, saturate=saturate)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", source, shape)],
                              [helper.make_tensor_value_info("y", target, shape)])
    return helper.make_model(graph, opset_imports=[helper.make_operatorsetid("", 23)])


ONNX_TYPE = {"float8_e4m3fn": TensorProto.FLOAT8E4M3FN, "float8_e4m3fnuz": TensorProto.FLOAT8E4M3FNUZ,
             "float8_e5m2": TensorProto.FLOAT8E5M2, "float8_e5m2fnuz": TensorProto.FLOAT8E5M2FNUZ,
             "float4_e2m1fn": TensorProto.FLOAT4E2M1}


def _run(model, x, engine=False):
    module = import_onnx(model)[0]
    out = ExecutionEngine(module).invoke("main", signless(x)) if engine else interpret(module, "main", signless(x))
    return with_onnx_dtype(out, helper.tensor_dtype_to_np_dtype(model.graph.output[0].type.tensor_type.elem_type))


IR_CI = {("float8_e4m3fn", 1)}
"""The (format, saturate) pairs CI runs on the interpreter (the node cases of CI's subset cover e5m2 and
int4); the others with --slow."""


@pytest.mark.parametrize("name,saturate", [pytest.param(n, s, marks=() if (n, s) in IR_CI else pytest.mark.slow)
                                           for n in FORMATS for s in (1, 0)])
def test_ir_cast_to_and_from_each_format_as_the_codec(name, saturate):
    """Cast float32 -> format (every boundary, its neighbours, the specials, NaN) and format -> float32
    (every code) on the interpreter: the codec's codes and values."""
    fmt = FLOAT_FORMATS[name]
    x = np.append(_boundary_values(name), np.nan).astype(np.float32)
    got = _run(_cast_model(TensorProto.FLOAT, ONNX_TYPE[name], [x.size], saturate), x)
    np.testing.assert_array_equal(_codes_of(got), encode(fmt, x, bool(saturate)))
    codes = np.arange(1 << fmt.bits, dtype=np.uint8).view(np.dtype(getattr(ml_dtypes, name)))
    back = _run(_cast_model(ONNX_TYPE[name], TensorProto.FLOAT, [codes.size]), codes)
    np.testing.assert_array_equal(back, decode(fmt, np.arange(1 << fmt.bits)).astype(np.float32))


@pytest.mark.parametrize("name", ["float8_e4m3fn", pytest.param("float8_e5m2fnuz", marks=pytest.mark.slow)])
def test_engine_cast_agrees_with_the_interpreter(name):
    """float64 -> format -> float16 on the engine: the same codes and values as the interpreter."""
    x = np.append(_boundary_values(name), np.nan).astype(np.float64)
    to = _cast_model(TensorProto.DOUBLE, ONNX_TYPE[name], [x.size])
    np.testing.assert_array_equal(_codes_of(_run(to, x, engine=True)), _codes_of(_run(to, x)))
    np.testing.assert_array_equal(_codes_of(_run(to, x)), encode(FLOAT_FORMATS[name], x))
    codes = np.arange(256, dtype=np.uint8).view(np.dtype(getattr(ml_dtypes, name)))
    back = _cast_model(ONNX_TYPE[name], TensorProto.FLOAT16, [256])
    np.testing.assert_array_equal(_run(back, codes, engine=True), cast_array(codes, np.float16))


def test_arithmetic_on_a_narrow_type_is_refused_by_name():
    node = helper.make_node("Abs", ["x"], ["y"], name="a0")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT8E4M3FN, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT8E4M3FN, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_operatorsetid("", 23)])
    with pytest.raises(CompileError, match=r"node 'a0' \(Abs\): Abs of float8_e4m3fn is not supported"):
        import_onnx(model)


def _e8m0_values() -> np.ndarray:
    """Every power of two of float32 and 1.5 times it, their float32 neighbours, subnormals, specials."""
    powers = np.ldexp(np.float32(1), np.arange(-149, 128)).astype(np.float32)
    marks = np.concatenate([powers, (powers[:-1] * 1.5).astype(np.float32)])
    near = np.concatenate([marks, np.nextafter(marks, np.float32(np.inf)), np.nextafter(marks, np.float32(0))])
    specials = np.array([0.0, np.inf, np.nan, 3.4e38, 1e-45], np.float32)
    return np.concatenate([near, -near[:50], specials])


@pytest.mark.parametrize("saturate", [True, False])
@pytest.mark.parametrize("mode", ["up", "down", "nearest"])
def test_e8m0_encode_as_onnx(mode, saturate):
    from onnx.numpy_helper import to_float8e8m0

    x = _e8m0_values()
    want = to_float8e8m0(x, saturate, mode).view(np.uint8)
    np.testing.assert_array_equal(encode_e8m0(x, saturate, mode), want)


@pytest.mark.slow  # ~6 s each; CI's subset runs the e8m0 node case
@pytest.mark.parametrize("mode,saturate", [("up", 1), ("nearest", 0), ("down", 1)])
def test_ir_cast_to_and_from_e8m0_as_the_codec(mode, saturate):
    x = _e8m0_values()
    node = helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT8E8M0, saturate=saturate, round_mode=mode)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [x.size])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT8E8M0, [x.size])])
    model = helper.make_model(graph, opset_imports=[helper.make_operatorsetid("", 24)])
    np.testing.assert_array_equal(_codes_of(_run(model, x)), encode_e8m0(x, bool(saturate), mode))
    codes = np.arange(256, dtype=np.uint8).view(np.dtype(getattr(ml_dtypes, E8M0)))
    for target, dtype in ((TensorProto.FLOAT, np.float32), (TensorProto.FLOAT16, np.float16)):
        back = _run(_cast_model(TensorProto.FLOAT8E8M0, target, [256]), codes)
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(back, codes.astype(dtype))
