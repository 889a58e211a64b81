"""Every Python block of the README runs as written: here, from a folder holding
the README's `examples/` and a small `model.onnx`, or, for the two whose run
takes long, in the test named in `RUN_ELSEWHERE`. A block that needs a missing
extra is skipped."""

import re
import runpy
from pathlib import Path

import pytest

from dfc.passes.autodiff.rules import BACKWARD_RULES

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
BLOCKS = [(README[: m.start()].rpartition("\n## ")[2].split("\n", 1)[0], m.group(1))
          for m in re.finditer(r"```python\n(.*?)```", README, re.S)]
"""(the heading of the section it is in, the code) of each Python block."""
EXTRAS = {"torch": r"\bimport torch\b", "jax": r"\bjax\b", "onnx": r"\bfrom_onnx\b"}
RUN_ELSEWHERE = {
    "NumPy in, gradients out": ("tests/api/test_frontend.py", "test_readme_example_runs"),
    "Training PyTorch models": ("tests/api/test_torch.py", "test_the_documented_example_trains"),
}
"""Sections whose block another test runs as written (it compiles a model's training step, or a time loop)."""


def _write_onnx_model(path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    h = onnx.helper
    graph = h.make_graph([h.make_node("Relu", ["x"], ["y"])], "relu",
                         [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])],
                         [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3])])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]), str(path))


def test_every_block_is_run_by_a_test():
    assert len(BLOCKS) >= 5
    for section, (path, name) in RUN_ELSEWHERE.items():
        assert section in [s for s, _ in BLOCKS], section
        assert f"def {name}(" in (ROOT / path).read_text(), (path, name)


@pytest.mark.parametrize("section, code", [b for b in BLOCKS if b[0] not in RUN_ELSEWHERE],
                         ids=[s for s, _ in BLOCKS if s not in RUN_ELSEWHERE])
def test_readme_block_runs(section, code, tmp_path, monkeypatch):
    for extra, pattern in EXTRAS.items():
        if re.search(pattern, code):
            pytest.importorskip(extra)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    if re.search(EXTRAS["onnx"], code):
        _write_onnx_model(tmp_path / "model.onnx")
    script = tmp_path / "block.py"  # dfc.jit reads a function's source from its file
    script.write_text(code)
    monkeypatch.chdir(tmp_path)
    rules = dict(BACKWARD_RULES)
    try:
        runpy.run_path(str(script))
    finally:  # a block may register a backward rule
        BACKWARD_RULES.clear()
        BACKWARD_RULES.update(rules)
