"""ONNX Det in float64 beyond its two node tests: a batch of 5x5 matrices, one that
needs row swaps (zeros on the diagonal), a singular one (a zero column: exactly 0),
1x1 matrices, against numpy.linalg.det; the gradient against det(A) inv(A)^T."""

import numpy as np
import pytest

from dfc import interpret
from dfc.importers.onnx_import import from_onnx

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402


def _det_model(shape):
    graph = helper.make_graph([helper.make_node("Det", ["a"], ["d"])], "det",
                              [helper.make_tensor_value_info("a", TensorProto.DOUBLE, shape)],
                              [helper.make_tensor_value_info("d", TensorProto.DOUBLE, shape[:-2])])
    return from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)]))


def test_det_batch_pivoting_singular_and_gradient():
    rng = np.random.default_rng(22)
    a = rng.standard_normal((4, 5, 5))
    a[1] = np.roll(np.eye(5), 1, axis=0) * np.arange(1, 6)  # a permutation times a scale: every pivot swaps
    a[2, :, 3] = 0.0  # singular
    f = _det_model([4, 5, 5])
    got = interpret(f.module, "main", a)
    want = np.linalg.det(a)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14 * np.abs(want).max())
    assert got[2] == 0.0
    seed = rng.standard_normal(4)
    _, grad = interpret(f.autodiff_module(), "main_grad", a, seed)
    for k in (0, 1, 3):
        np.testing.assert_allclose(grad[k], seed[k] * want[k] * np.linalg.inv(a[k]).T, rtol=1e-10, atol=1e-12)


def test_det_of_1x1_matrices():
    a = np.array([[[2.5]], [[-3.0]]])
    np.testing.assert_array_equal(interpret(_det_model([2, 1, 1]).module, "main", a), [2.5, -3.0])
