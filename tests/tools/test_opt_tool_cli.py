"""opt-tool as a command: cheap start-up, a quiet broken pipe, progress, and
errors from the Python API that carry no chained xDSL traceback."""

from __future__ import annotations

import importlib
import io
import subprocess
import sys

import pytest

from dfc.compiler import PassManager, parse_module
from dfc.dialects.diagnostics import CompileError
from dfc.passes import PASS_SUMMARIES, PROJECT_PASSES
from dfc.tools.opt_tool import Progress, main

NN_ONLY = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = nn.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
"""


def _loaded_after(code: str) -> set[str]:
    """The modules a fresh interpreter has loaded after running `code`."""
    probe = f"{code}\nimport sys\nprint(' '.join(sorted(sys.modules)), file=sys.stderr)"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return set(proc.stderr.split())


def test_help_imports_no_pass_and_no_sympy():
    """(argparse's --help exits: the probe catches that, so that it prints what was loaded.)"""
    loaded = _loaded_after(
        "import contextlib, io\nfrom dfc.tools.opt_tool import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n    main(['--help'])"
    )
    assert "dfc.tools.opt_tool" in loaded  # the probe printed its modules
    assert "sympy" not in loaded and "llvmlite" not in loaded and "numpy" not in loaded
    assert "dfc.compiler.pass_manager" not in loaded and "dfc.passes.lower_dataflow" not in loaded


def test_parsing_and_expanding_a_small_library_level_file_imports_no_sympy_and_no_numpy(tmp_path):
    """(The library's expansions import NumPy only where they build constants with it.)"""
    src = tmp_path / "f.mlir"
    src.write_text(NN_ONLY)
    loaded = _loaded_after(
        "import contextlib, io\nfrom dfc.tools.opt_tool import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()):\n    assert main([{str(src)!r}, '--cse', '--expand-library']) == 0"
    )
    assert "dfc.dialects.nn_expand_fft" in loaded  # the expansions were imported
    assert "sympy" not in loaded and "llvmlite.binding" not in loaded and "numpy" not in loaded


def test_a_closed_pipe_ends_quietly():
    proc = subprocess.Popen([sys.executable, "-m", "dfc.tools.opt_tool", "--list-passes"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
    proc.stdout.read(1)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) in (0, 141)
    assert err == ""


def test_progress_names_each_pass_and_erases_itself():
    stream = io.StringIO()
    progress = Progress(stream)
    PassManager.parse("cse,expand-library", progress=progress).run(parse_module(NN_ONLY))
    assert "[1/2] cse" in stream.getvalue() and "[2/2] expand-library" in stream.getvalue()
    progress.clear()
    assert stream.getvalue().endswith("\r\033[K")


@pytest.mark.parametrize("text,pipeline", [
    ("func.func @f() {\n  %x = arith.constant 1 : i32\n  func.return %x : i32\n}", ""),  # verifier
    (NN_ONLY.replace("%x : (", "%z : ("), ""),  # undefined value
    (NN_ONLY, "cse{"),  # pipeline syntax
    (NN_ONLY, "autodiff{wrt=7}"),  # a pass fails
])
def test_compile_errors_carry_no_chained_traceback(text, pipeline):
    with pytest.raises(CompileError) as info:
        PassManager.parse(pipeline).run(parse_module(text, "f.mlir"))
    err = info.value
    assert err.__cause__ is None and (err.__suppress_context__ or err.__context__ is None)


def test_help_summaries_are_the_pass_modules_first_lines():
    for name, target in PROJECT_PASSES.items():
        doc = importlib.import_module(target.split(":")[0]).__doc__
        assert doc.splitlines()[0] == f"`{name}`: {PASS_SUMMARIES[name]}", name


def test_on_a_terminal_progress_is_shown_and_erased_before_an_error(tmp_path, monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    src = tmp_path / "f.mlir"
    src.write_text(NN_ONLY)
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    assert main([str(src), "--cse", "--autodiff=wrt=9", "-o", str(tmp_path / "out.mlir")]) == 1
    shown, _, message = err.getvalue().rpartition("\r\033[K")
    assert "[1/2] cse" in shown and "[2/2] autodiff" in shown
    line = NN_ONLY.splitlines()[0]
    assert message == f"{src}:1:1: error: autodiff: @f has no argument #9\n{line}\n^\n"
