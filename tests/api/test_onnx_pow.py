"""ONNX Pow of integer bases (and unsigned exponents) against numpy's `power(x, y).astype(x.dtype)`, ONNX's
reference: exact and wrapping for integer exponents, in float64 then truncated for float ones; on the
interpreter and the engine."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import helper  # noqa: E402

from dfc import ExecutionEngine, interpret  # noqa: E402
from dfc.importers.onnx_import import import_onnx  # noqa: E402
from dfc.importers.onnx_unsigned import signless, with_onnx_dtype  # noqa: E402


def _pow(x: np.ndarray, y: np.ndarray, engine: bool) -> np.ndarray:
    def info(name, a):
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)

    graph = helper.make_graph([helper.make_node("Pow", ["x", "y"], ["z"])], "g", [info("x", x), info("y", y)],
                              [info("z", x)])
    module = import_onnx(helper.make_model(graph, opset_imports=[helper.make_operatorsetid("", 15)]))[0]
    run = ExecutionEngine(module).invoke if engine else lambda name, *a: interpret(module, name, *a)
    return with_onnx_dtype(run("main", signless(x), signless(y)), x.dtype)


BASES = [0, 1, -1, 2, -2, 3, -3, 7, 10, -10, 123457]
EXPONENTS = [0, 1, 2, 3, 5, 13, 31, 32, 63, 64, 100, 2**40 + 3]


@pytest.mark.parametrize("dtype,engine", [
    pytest.param(d, e, id=f"{d}-{'engine' if e else 'interpreter'}",
                 marks=pytest.mark.slow if not e and d != "int64" else ())  # the interpreter's 64 steps take ~6 s
    for d in ("int32", "int64", "uint8", "uint64") for e in (False, True)])
def test_integer_power_is_exact_and_wraps(dtype, engine):
    """Every base with every exponent (up to 2^40 + 3): numpy's wrapped integer power."""
    bases, exponents = np.meshgrid(BASES, EXPONENTS)
    x = bases.reshape(-1).astype(np.int64).astype(dtype)
    y = exponents.reshape(-1).astype(np.int64)
    unsigned = dtype[0] == "u"
    want = np.power(x.astype(np.uint64 if unsigned else np.int64), y.astype(np.uint64) if unsigned else y).astype(dtype)
    np.testing.assert_array_equal(_pow(x, y, engine), want)


def test_integer_base_with_negative_integer_exponent_truncates():
    x = np.array([1, -1, -1, 2, -3, 0], np.int32)
    y = np.array([-3, -3, -2, -1, -2, 4], np.int32)
    np.testing.assert_array_equal(_pow(x, y, False), [1, -1, 1, 0, 0, 0])


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint16"])
def test_integer_base_with_float_exponent_truncates_the_float64_power(dtype):
    x = np.array([1, 2, 3, 10, 7, 0], dtype)
    y = np.array([4.0, 0.5, 2.5, 3.0, -1.0, 2.0], np.float32)
    with np.errstate(all="ignore"):
        want = np.power(x, y).astype(dtype)
    np.testing.assert_array_equal(_pow(x, y, False), want)


def test_float_base_with_unsigned_exponent_uses_its_value():
    x = np.array([1.5, -2.0, 0.5], np.float32)
    y = np.array([3, 2**32 - 1, 2], np.uint32)
    with np.errstate(over="ignore"):
        want = np.power(x, y).astype(np.float32)  # numpy computes float32 ** uint32 in float64
    np.testing.assert_allclose(_pow(x, y, False), want, rtol=1e-6)
