"""`ExecutionEngine.invoke(..., out=...)`: array results written into caller arrays."""

from pathlib import Path

import numpy as np
import pytest

from dfc.compiler import ExecutionEngine, PassManager, parse_module

EXAMPLES = Path(__file__).parents[2] / "examples"

TWO = """func.func @f(%x: tensor<4x3xf64>, %s: f64) -> (tensor<4x3xf64>, f64, tensor<f64>, tensor<4x3xf64>) {
  %y = nn.mul %x, %x : (tensor<4x3xf64>, tensor<4x3xf64>) -> tensor<4x3xf64>
  %t = nn.reduce %y {kind = "sum", axes = array<i64: 0, 1>} : (tensor<4x3xf64>) -> tensor<f64>
  func.return %y, %s, %t, %x : tensor<4x3xf64>, f64, tensor<f64>, tensor<4x3xf64>
}"""


def test_results_land_in_the_out_arrays_and_agree():
    x = np.arange(12.0).reshape(4, 3)
    engine = ExecutionEngine(parse_module(TWO))
    expected = engine.invoke("f", x, 2.5)
    outs = (np.full((4, 3), np.nan), np.full((), np.nan), np.full((4, 3), np.nan))
    got = engine.invoke("f", x, 2.5, out=outs)
    assert got[0] is outs[0] and got[2] is outs[1] and got[3] is outs[2]  # the returned argument is copied out
    assert got[1] == 2.5
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
    got = engine.invoke("f", x + 1, 1.0, out=outs)  # again, into the same arrays
    np.testing.assert_array_equal(outs[0], (x + 1) ** 2)
    np.testing.assert_array_equal(outs[2], x + 1)


def test_gradient_into_out_arrays_equals_the_plain_call():
    module = parse_module((EXAMPLES / "mlp.mlir").read_text())
    PassManager.parse("autodiff").run(module)
    engine = ExecutionEngine(module)
    rng = np.random.default_rng(0)
    sig = engine.signatures["mlp_grad"]
    args = []
    for t in sig.inputs.data:
        shape, kind = tuple(t.get_shape()), str(t.element_type)
        args.append(rng.integers(0, 10, shape) if kind == "i64" else np.asarray(rng.standard_normal(shape) * 0.1, np.float32))
    expected = engine.invoke("mlp_grad", *args)
    outs = [np.empty_like(e) for e in expected]
    got = engine.invoke("mlp_grad", *args, out=outs)
    for g, o, e in zip(got, outs, expected, strict=True):
        assert g is o
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize(
    "outs, error, message",
    [
        (lambda x: (np.empty((4, 3)),), TypeError, "returns 3 array"),
        (lambda x: (np.empty((4, 3), np.float32), np.empty(()), np.empty((4, 3))), TypeError, r"out\[0\] must have dtype float64"),
        (lambda x: (np.empty((3, 4)), np.empty(()), np.empty((4, 3))), TypeError, "shape"),
        (lambda x: (np.empty((4, 6))[:, ::2], np.empty(()), np.empty((4, 3))), ValueError, "C-contiguous"),
        (lambda x: (x, np.empty(()), np.empty((4, 3))), ValueError, "overlaps an argument"),
        (lambda x: ((b := np.empty((4, 3))), np.empty(()), b), ValueError, "overlaps"),
        (lambda x: ([0.0] * 12, np.empty(()), np.empty((4, 3))), TypeError, "must be a numpy array"),
    ],
)
def test_bad_out_arrays_raise(outs, error, message):
    x = np.ones((4, 3))
    with pytest.raises(error, match=message):
        ExecutionEngine(parse_module(TWO)).invoke("f", x, 1.0, out=outs(x))


def test_dynamic_results_cannot_go_out():
    text = """func.func @g(%x: tensor<?xf64>) -> tensor<?xf64> {
      %c0 = arith.constant 0 : index
      %n = tensor.dim %x, %c0 : tensor<?xf64>
      %e = tensor.empty(%n) : tensor<?xf64>
      %y = df.map (%i) in (%n) outs(%o = %e : tensor<?xf64>) {
        %v = df.read %x[%i] : tensor<?xf64>
        df.write %v, %o[%i] : tensor<?xf64>
      } -> tensor<?xf64>
      func.return %y : tensor<?xf64>
    }"""
    with pytest.raises(TypeError, match="dynamic shape"):
        ExecutionEngine(parse_module(text)).invoke("g", np.ones(3), out=np.empty(3))
