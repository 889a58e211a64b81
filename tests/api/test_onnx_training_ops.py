"""The optimizer steps of `ai.onnx.preview.training` at the first update (T = 0,
where Adam's learning rate and Momentum's beta are not adjusted) and a later one,
in float64, against the operators' pseudo code written in NumPy (ONNX's node
tests cover only T > 0 in float32)."""

import numpy as np
import pytest

from dfc import interpret
from dfc.importers.onnx_import import from_onnx

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402

DOMAIN = "ai.onnx.preview.training"


def _run(op, names, outputs, values, **attrs):
    node = helper.make_node(op, names, outputs, domain=DOMAIN, **attrs)
    info = [helper.make_tensor_value_info(n, TensorProto.INT64 if n == "T" else TensorProto.DOUBLE, np.shape(v))
            for n, v in zip(names, values)]
    out = [helper.make_tensor_value_info(n, TensorProto.DOUBLE, None) for n in outputs]
    model = helper.make_model(helper.make_graph([node], op, info, out),
                              opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(DOMAIN, 1)])
    return interpret(from_onnx(model).module, "main", *values)


@pytest.mark.parametrize("t", [0, 3])
def test_adam_and_nesterov_momentum_first_and_later_steps(t):
    rng = np.random.default_rng(t)
    r, x, g, v, h = np.array(0.1), *rng.standard_normal((3, 4)), rng.random(4)
    steps = np.array(t, np.int64)
    alpha, beta, eps, norm, post = (float(np.float32(a)) for a in (0.9, 0.99, 1e-3, 0.01, 0.1))  # ONNX's f32 attrs
    got = _run("Adam", ["R", "T", "X", "G", "V", "H"], ["X_new", "V_new", "H_new"], [r, steps, x, g, v, h],
               alpha=alpha, beta=beta, epsilon=eps, norm_coefficient=norm, norm_coefficient_post=post)
    reg = norm * x + g
    v_new, h_new = alpha * v + (1 - alpha) * reg, beta * h + (1 - beta) * reg * reg
    rate = r * np.sqrt(1 - beta ** t) / (1 - alpha ** t) if t > 0 else r
    x_new = (1 - post) * (x - rate * v_new / (np.sqrt(h_new) + eps))
    for a, b in zip(got, (x_new, v_new, h_new)):
        np.testing.assert_allclose(a, b, rtol=1e-14)
    got = _run("Momentum", ["R", "T", "X", "G", "V"], ["X_new", "V_new"], [r, steps, x, g, v],
               alpha=alpha, beta=0.5, mode="nesterov", norm_coefficient=norm)
    v_new = alpha * v + (0.5 if t > 0 else 1.0) * reg
    for a, b in zip(got, (x - r * (reg + alpha * v_new), v_new)):
        np.testing.assert_allclose(a, b, rtol=1e-14)
