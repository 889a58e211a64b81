"""The project's fixes to xDSL (`compiler/xdsl_fixes.py`) that change no answer, only its cost."""

from pathlib import Path

from dfc.compiler import PassManager, parse_module
from dfc.compiler import xdsl_fixes
from dfc.passes import PIPELINES

EXAMPLES = Path(__file__).parent.parent / "examples"


def test_dead_code_test_agrees_with_xdsls():
    """`_result_only_effects` (first effect decides) answers as xDSL's (all
    effects collected) for every op of the mlp and jacobi-2d gradients, at
    the tensor level, in buffer form and after lowering to loops."""
    passes = PIPELINES["default"].split(",")
    checked = {True: 0, False: 0}
    for name, fn in (("mlp", "mlp"), ("jacobi2d", "jacobi2d")):
        module = parse_module((EXAMPLES / f"{name}.mlir").read_text())
        PassManager.parse(f"autodiff{{func={fn}}}").run(module)
        for stop in ("expand-library", "bufferize", "lower-dataflow"):
            stage = module.clone()
            PassManager.parse(",".join(passes[: passes.index(stop) + 1])).run(stage)
            for op in stage.walk():
                answer = xdsl_fixes._result_only_effects(op)
                assert answer == xdsl_fixes._original_result_only_effects(op), op.name
                checked[answer] += 1
    assert checked[True] > 100 and checked[False] > 100, checked
