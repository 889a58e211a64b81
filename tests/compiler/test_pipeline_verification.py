"""Every pass of the engine's pipelines leaves IR that verifies.

The suite's engine compiles verify once, after lowering (as the engine does);
here three examples' gradients go through forms of the `default` pipeline
(threaded with BLAS, serial without fast math where `pairwise-sums` runs,
without BLAS) verifying after every pass, so a pass that breaks the IR fails
naming itself (lit's opt-tool runs do the same for each pass's own inputs).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dfc.compiler import PassManager, parse_module
from dfc.compiler.engine import default_pipeline

EXAMPLES = Path(__file__).parents[2] / "examples"

PIPELINES = {
    "mlp": default_pipeline(2),  # a gradient through contractions: contraction-to-blas, the GEMM epilogues
    "jacobi2d": default_pipeline(1, fast_math=False),  # a stencil's gradient: fusion, pairwise-sums
    "softmax": default_pipeline(2, blas=False),  # reductions and broadcasts, no BLAS
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_every_pass_leaves_verified_ir(name):
    module = parse_module((EXAMPLES / f"{name}.mlir").read_text())
    PassManager.parse(f"autodiff,{PIPELINES[name]}", verify_each=True).run(module)
