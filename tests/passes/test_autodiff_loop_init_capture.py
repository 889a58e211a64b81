"""Regression: a value that is both an scf.for iter_args initial value and used
inside the body gets the gradient of both uses (the body's was dropped)."""

import numpy as np
import pytest

from dfc import PassManager, interpret, parse_module

LOOP = """func.func @f(%A: tensor<3x3xf64>) -> tensor<3x3xf64> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%p = %A) -> (tensor<3x3xf64>) {{
    %q = {op} %p, %A : (tensor<3x3xf64>, tensor<3x3xf64>) -> tensor<3x3xf64>
    scf.yield %q : tensor<3x3xf64>
  }}
  func.return %r : tensor<3x3xf64>
}}"""


@pytest.mark.parametrize("op", ["nn.mul", "nn.matmul"])
def test_init_and_body_use_both_get_gradient(op):
    module = parse_module(LOOP.format(op=op))
    PassManager.parse("autodiff").run(module)
    rng = np.random.default_rng(0)
    a, seed = rng.random((3, 3)), rng.random((3, 3))
    got = interpret(module, "f_grad", a, seed)[1]
    f = (lambda x: x * x * x) if op == "nn.mul" else (lambda x: x @ x @ x)
    h, fd = 1e-6, np.zeros((3, 3))
    for idx in np.ndindex(3, 3):
        e = np.zeros((3, 3))
        e[idx] = h
        fd[idx] = np.sum((f(a + e) - f(a - e)) * seed) / (2 * h)
    np.testing.assert_allclose(got, fd, rtol=1e-6)
