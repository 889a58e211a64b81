"""The examples' public signatures, and their values where the interpreter is quick."""

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func

from dfc.compiler import PassManager, parse_module
from dfc.compiler.interpreter import interpret

EXAMPLES = Path(__file__).parents[2] / "examples"

SIGNATURES = {
    "gemm_sum": "(tensor<5x4xf32>, tensor<4x3xf32>) -> tensor<f32>",
    "mlp": "(tensor<8x784xf32>, tensor<8xi64>, tensor<120x784xf32>, tensor<120xf32>, "
    "tensor<32x120xf32>, tensor<32xf32>, tensor<10x32xf32>, tensor<10xf32>) -> tensor<f32>",
    "softmax": "(tensor<64x512xf32>, tensor<64x512xf32>) -> tensor<f32>",
    "jacobi2d": "(tensor<64x64xf64>) -> tensor<f64>",
}
FUNCTIONS = {"gemm_sum": "gemm_sum", "mlp": "mlp", "softmax": "softmax_loss", "jacobi2d": "jacobi2d"}


@pytest.mark.parametrize("example", sorted(SIGNATURES))
def test_signature_and_round_trip(example):
    text = (EXAMPLES / f"{example}.mlir").read_text()
    module = parse_module(text, f"{example}.mlir")
    (f,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    assert f.sym_name.data == FUNCTIONS[example]
    assert str(f.function_type) == SIGNATURES[example]
    assert str(parse_module(str(module))) == str(module)


def test_gemm_sum_value():
    module = parse_module((EXAMPLES / "gemm_sum.mlir").read_text())
    PassManager.parse("expand-library").run(module)
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((5, 4)).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(interpret(module, "gemm_sum", x, y), (x @ y).sum(), rtol=1e-5)
