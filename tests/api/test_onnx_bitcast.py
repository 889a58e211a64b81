"""ONNX BitCast beyond the node cases: the narrow formats (float8, float4e2m1, int4/uint4, int2/uint2), bool and the
16-bit floats, every code of the source type, against ONNX's reference evaluator (numpy's view) for the byte-wide
types and against the bit rule (the low bits, sign-extended for int4 and int2) for the narrower ones; widths that
differ are refused by name."""

from __future__ import annotations

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes")
onnx = pytest.importorskip("onnx")

from onnx import helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from dfc import CompileError, ExecutionEngine, interpret  # noqa: E402
from dfc.importers.narrow_formats import INT_FORMATS  # noqa: E402
from dfc.importers.onnx_import import import_onnx  # noqa: E402
from dfc.importers.onnx_unsigned import signless, with_onnx_dtype  # noqa: E402


def _dtype(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name, None) or name)


def _model(source: str, target: str, size: int):
    to = helper.np_dtype_to_tensor_dtype(_dtype(target))
    node = helper.make_node("BitCast", ["x"], ["y"], to=to)
    graph = helper.make_graph([node], "g", [
        helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(_dtype(source)), [size])],
        [helper.make_tensor_value_info("y", to, [size])])
    return helper.make_model(graph, opset_imports=[helper.make_operatorsetid("", 26)])


def _every_code(name: str) -> np.ndarray:
    """Every value of `name`: its codes (bool: False, True)."""
    dtype = _dtype(name)
    if name == "bool":
        return np.array([False, True])
    if name in INT_FORMATS:
        bits, signed = INT_FORMATS[name]
        return np.arange(-(1 << bits - 1) if signed else 0, (1 << bits - 1) if signed else 1 << bits).astype(dtype)
    if dtype.itemsize == 2:
        return np.arange(0, 1 << 16, 97, dtype=np.uint16).view(dtype)  # NaN payloads and both zeros among them
    return np.arange(256, dtype=np.uint8)[:16 if name == "float4_e2m1fn" else 256].view(dtype)


def _bits(values: np.ndarray) -> np.ndarray:
    """The code of each element (an int4's value as its two's-complement nibble), as int64."""
    if values.dtype.name in INT_FORMATS:
        return values.astype(np.int64) & ((1 << INT_FORMATS[values.dtype.name][0]) - 1)
    return values.view(f"uint{values.dtype.itemsize * 8}").astype(np.int64)


def _expected(source: str, target: str, x: np.ndarray) -> np.ndarray:
    if _dtype(target).itemsize == 1 and (target in INT_FORMATS or target == "float4_e2m1fn"):
        bits = _bits(x)
        if target in INT_FORMATS and INT_FORMATS[target][1]:
            top = 1 << INT_FORMATS[target][0] - 1
            return ((bits ^ top) - top).astype(_dtype(target))
        return bits.astype(np.uint8).view(_dtype(target)) if target == "float4_e2m1fn" else bits.astype(_dtype(target))
    return ReferenceEvaluator(_model(source, target, x.size)).run(None, {"x": x})[0]


PAIRS = [("float8_e4m3fn", "uint8"), ("uint8", "float8_e5m2"), ("float8_e5m2fnuz", "int8"),
         ("float8_e8m0fnu", "float8_e4m3fnuz"), ("int4", "uint4"), ("uint4", "int4"), ("float4_e2m1fn", "int4"),
         ("int4", "float4_e2m1fn"), ("uint2", "int2"), ("bool", "float8_e4m3fn"), ("int8", "bool"),
         ("float16", "bfloat16"), ("bfloat16", "uint16")]
ENGINE = {("float8_e4m3fn", "uint8"), ("int4", "uint4")}


@pytest.mark.parametrize("source,target", PAIRS, ids=[f"{s}-{t}" for s, t in PAIRS])
def test_bitcast_every_code(source, target):
    x = _every_code(source)
    module = import_onnx(_model(source, target, x.size))[0]
    runs = [interpret(module, "main", signless(x))]
    if (source, target) in ENGINE:
        runs.append(ExecutionEngine(module).invoke("main", signless(x)))
    want = _expected(source, target, x)
    for engine, out in zip(("interpreter", "engine"), runs):
        got = with_onnx_dtype(out, _dtype(target))
        assert got.dtype == _dtype(target), engine
        if target == "bool":  # numpy's view keeps the byte; a bool is its truth
            np.testing.assert_array_equal(got, want.view(np.uint8) != 0, err_msg=engine)
        else:
            np.testing.assert_array_equal(_bits(got), _bits(want), err_msg=engine)


@pytest.mark.parametrize("source,target,message", [
    ("float32", "int16", "BitCast of tensor<3xf32> (32 bits) to int16 (16 bits): the widths differ"),
    ("int4", "uint8", "BitCast of int4 (4 bits) to uint8 (8 bits): the widths differ"),
])
def test_bitcast_of_other_widths_is_refused(source, target, message):
    with pytest.raises(CompileError, match=message.replace("(", r"\(").replace(")", r"\)")):
        import_onnx(_model(source, target, 3))
