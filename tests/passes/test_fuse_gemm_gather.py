"""`fuse-gemm-gather` (passes/fuse_gemm_gather.py): convolutions' products
read their input through offset tables, and give PyTorch's values and
gradients on one thread and with every product split over two (by rows,
columns, batch entries and depth), at sizes past the GEMM kernel's blocks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.codegen import blas_runtime
from dfc.dialects.blas import GemmOp
from dfc.passes import PIPELINES
from tests.dialects.test_nn_conv import _conv_text, _torch_conv

pytestmark = pytest.mark.skipif(not blas_runtime.available(), reason="scipy-openblas64 is not installed")

UP_TO_GATHER = PIPELINES["default"].split(",fuse-gemm-epilogue")[0]

# (input NCHW, kernel OIHW, stride, padding, dilation, groups): the kernel's
# depth blocks (288 and 576 > 256 taps), column blocks (512) and row edges;
# patches by tap and by position (rows of 6); groups; strides and dilation;
# a weight gradient deep enough to be split along its depth
CASES = [
    ((2, 32, 12, 12), (20, 32, 3, 3), 1, 1, 1, 1),
    ((1, 64, 9, 20), (20, 64, 3, 3), 1, 0, 1, 1),
    ((3, 8, 6, 6), (24, 8, 3, 3), 1, 1, 1, 1),
    ((2, 12, 17, 18), (36, 6, 3, 2), 2, (1, 0), (1, 2), 2),
    ((8, 3, 20, 20), (32, 3, 5, 5), 1, 2, 1, 1),
]


def _products(text: str, grad: bool) -> list[GemmOp]:
    module = parse_module(text)
    PassManager.parse(("autodiff," if grad else "") + UP_TO_GATHER).run(module)
    return [op for op in module.walk() if isinstance(op, GemmOp)]


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_convolution_products_gather_their_input(case, layout):
    """Every product of the forward and the gradient reads the input (or the
    kernel) through tables: no patch matrix is left for it to read."""
    x_shape, k_shape, *params = CASES[case]
    text = _conv_text(x_shape, k_shape, *params, layout=layout)
    for grad in (False, True):
        products = _products(text, grad)
        assert products
        gathered = [g for g in products if g.b_rows is not None or g.a_rows is not None]
        assert len(gathered) >= (2 if grad else 1), [str(g) for g in products]
        for g in gathered:  # a gathered factor is read from the (padded) input or the kernel itself
            assert all(len(x.type.get_shape()) == 4 for x, rows in ((g.a, g.a_rows), (g.b, g.b_rows)) if rows)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_gathered_convolutions_match_torch(case, threads, host_gemm_mode):
    """Values and gradients (float64) against PyTorch; with two threads
    every product is split (`parallel_min_work=0`). Gathered products run on
    dfc's kernel whatever `DFC_GEMM` says; the others follow it."""
    x_shape, k_shape, stride, padding, dilation, groups = CASES[case]
    text = _conv_text(x_shape, k_shape, stride, padding, dilation, groups, dtype="f64")
    rng = np.random.default_rng(case)
    x, k = rng.standard_normal(x_shape), rng.standard_normal(k_shape)
    tx, tk = torch.tensor(x, requires_grad=True), torch.tensor(k, requires_grad=True)
    y = _torch_conv(tx, tk, stride, padding, dilation, groups)
    seed = rng.standard_normal(tuple(y.shape))
    y.backward(torch.tensor(seed))
    module = parse_module(text)
    PassManager.parse("autodiff").run(module)
    engine = ExecutionEngine(module, threads=threads, parallel_min_work=0)
    np.testing.assert_allclose(engine.invoke("f", x, k), y.detach().numpy(), rtol=1e-11, atol=1e-11)
    _, dx, dk = engine.invoke("f_grad", x, k, seed)
    np.testing.assert_allclose(dx, tx.grad.numpy(), rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(dk, tk.grad.numpy(), rtol=1e-11, atol=1e-11)


def test_multiple_agrees_with_simplify():
    """`_multiple` reads proportional polynomials off their coefficients; it must
    give what sympy.simplify of the quotient gives (kept for floor/mod indices)."""
    import sympy

    from dfc.passes.fuse_gemm_gather import _multiple

    x, y, z = sympy.symbols("x y z", integer=True, nonnegative=True)
    cases = [(147 * x, x), (49 * x + 7 * y + z, 49 * x + 7 * y + z), (1444 * x + 38 * y + z, 49 * x + 7 * y + z),
             (6 * x + 4 * y, 3 * x + 2 * y), (x + y, 2 * x + 2 * y), (-2 * x, x), (2 * x + 1, x), (3 * x, 0 * x),
             (4 * sympy.floor(x / 3), 2 * sympy.floor(x / 3)), (2 * sympy.Mod(x, 3), sympy.Mod(x, 3) + x)]
    for part, index in cases:
        k = None if index == 0 else sympy.simplify(part / index)
        expected = int(k) if k is not None and k.is_Integer and k > 0 else None
        assert _multiple(part, index) == expected, (part, index)
    assert _multiple(6 * x + 4 * y, 3 * x + 2 * y) == 2 and _multiple(x + y, 2 * x + 2 * y) is None
