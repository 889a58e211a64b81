"""The progress line of long compiles (`DFC_PROGRESS`): shown once a compile
passes the delay, with its stages, ending in the total; silent when off, for
short compiles, and for compiles nested in one already shown."""

import numpy as np
import pytest

from dfc.compiler import parse_module, progress
from dfc.compiler.pass_manager import PassManager
from dfc.function import Function

PROGRAM = """
func.func @f(%x: tensor<8xf64>) -> tensor<8xf64> {
  %y = nn.exp %x : (tensor<8xf64>) -> tensor<8xf64>
  func.return %y : tensor<8xf64>
}
"""


def _compile_and_call() -> np.ndarray:
    return Function(parse_module(PROGRAM), "f")(np.zeros(8))


def test_a_long_compile_shows_its_stages_and_total(monkeypatch, capsys):
    monkeypatch.setenv("DFC_PROGRESS", "on")
    monkeypatch.setattr(progress, "DELAY", 0.0)
    np.testing.assert_array_equal(_compile_and_call(), np.ones(8))
    err = capsys.readouterr().err
    lines = err.split("\n")
    assert lines[-1] == "" and len(lines) == 2, err  # one line, redrawn with \r, ended once
    frames = lines[0].split("\r")[1:]
    assert frames[0].startswith("dfc: compiling @f: ") and frames[-1].startswith("dfc: compiled @f in ")
    assert any("lower-dataflow" in frame for frame in frames)
    assert any(": LLVM (" in frame for frame in frames)


@pytest.mark.parametrize("setting, delay", [("off", 0.0), ("on", 3600.0), ("auto", 0.0)])
def test_silent_when_off_short_or_not_a_terminal(monkeypatch, capsys, setting, delay):
    monkeypatch.setenv("DFC_PROGRESS", setting)
    monkeypatch.setattr(progress, "DELAY", delay)
    _compile_and_call()  # under pytest stderr is captured: not a terminal, not a kernel
    assert capsys.readouterr().err == ""


def test_a_nested_compile_reports_under_the_outer(monkeypatch, capsys):
    monkeypatch.setenv("DFC_PROGRESS", "on")
    monkeypatch.setattr(progress, "DELAY", 0.0)
    with progress.compiling("@outer"):
        with PassManager().stage("first"):
            pass
        with progress.compiling("@inner"):
            progress.stage("second")
    frames = capsys.readouterr().err.split("\r")[1:]
    assert [f.split(" (")[0].strip() for f in frames[:2]] == ["dfc: compiling @outer: first", "dfc: compiling @outer: second"]
    assert frames[-1].startswith("dfc: compiled @outer in ") and "@inner" not in "".join(frames)
