"""The newcomer's path: a visible API, errors that read as the user's, the REPL and notebook paths."""

import inspect
import linecache
import logging
import subprocess
import sys
import textwrap
import traceback
from pathlib import Path

import numpy as np
import pytest

import dfc
from dfc.dialects.diagnostics import CompileError

ROOT = Path(__file__).resolve().parents[2]


def test_dir_lists_the_public_api_and_every_name_is_documented():
    names = set(dir(dfc))
    assert set(dfc.__all__) <= names
    assert not {"Any", "import_module", "ModuleType"} & names
    for name in dfc.__all__:
        if name == "__version__":
            continue
        obj = getattr(dfc, name)
        assert inspect.getdoc(obj), name
        if inspect.isclass(obj):
            for attr, value in vars(obj).items():
                if not attr.startswith("_") and (callable(value) or isinstance(value, property)):
                    assert inspect.getdoc(getattr(obj, attr)), f"{name}.{attr}"


@pytest.mark.parametrize("module, call", [
    ("jax", lambda: dfc.from_jax(lambda x: x, np.ones(2))),
    ("onnx", lambda: dfc.from_onnx("model.onnx")),
])
def test_a_missing_extra_names_what_to_install(monkeypatch, module, call):
    monkeypatch.setitem(sys.modules, module, None)  # `import module` raises ModuleNotFoundError
    with pytest.raises(ImportError, match=rf'pip install "dfc\[{module}\]"'):
        call()


def test_dfc_torch_without_torch_names_the_extra():
    code = "import sys; sys.modules['torch'] = None\ntry:\n    import dfc.torch\nexcept ImportError as e:\n    print(e)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert 'dfc.torch needs torch, which is not installed: pip install "dfc[torch]"' in out.stdout, out.stderr


def _raising_call(fn, *args):
    with pytest.raises(dfc.FrontendError) as info:
        fn(*args)
    return info.value, traceback.format_exception(info.value)


def test_a_frontend_error_shows_the_line_and_a_caret_without_internal_frames(monkeypatch):
    @dfc.jit
    def bad(x):
        return {1: x}

    monkeypatch.delenv("DFC_TRACEBACK", raising=False)
    err, lines = _raising_call(bad, np.ones(3))
    message = str(err).splitlines()
    assert message[0].endswith("error: unsupported expression: dict")
    assert message[1].strip() == "return {1: x}"
    assert message[2] == " " * message[1].index("{") + "^"
    frames = [line for line in lines if line.startswith("  File ")]
    assert len(frames) <= 3 and not any("translate.py" in f for f in frames), frames
    monkeypatch.setenv("DFC_TRACEBACK", "1")
    _, lines = _raising_call(bad, np.ones(3))
    assert any("translate.py" in line for line in lines)


def test_grad_of_a_non_scalar_function_prints_mlir_types():
    @dfc.jit
    def square(x):
        return x * x

    with pytest.raises(TypeError) as info:
        dfc.grad(square)(np.ones(8))
    assert "returns tensor<8xf64>" in str(info.value) and "TensorType(" not in str(info.value)


def test_the_plain_repl_says_what_to_do():
    code = "import dfc, numpy as np\ndef g(x): return x\ndfc.jit(g)(np.ones(2))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "cannot read the source of g" in out.stderr
    assert "define g in a file and import it, or work in IPython or Jupyter" in out.stderr


def test_a_notebook_cell_compiles_and_its_errors_show_the_cell_line():
    """IPython registers each cell's text in `linecache` under the cell's name, which is all inspect needs."""
    name = "<ipython-input-7-0123456789ab>"
    source = textwrap.dedent("""\
        import numpy as np
        def cell(x):
            return np.sum(x * x)
        def bad_cell(x):
            return x if x else x
        """)
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    try:
        scope: dict = {}
        exec(compile(source, name, "exec"), scope)
        assert dfc.jit(scope["cell"])(np.arange(3.0)) == 5.0
        with pytest.raises(dfc.FrontendError) as info:
            dfc.jit(scope["bad_cell"])(np.ones(2))
        assert str(info.value).startswith(f"{name}:5:")
        assert str(info.value).splitlines()[1] == "    return x if x else x"
    finally:
        del linecache.cache[name]


def test_rich_display_shows_the_signature_and_the_ir():
    @dfc.jit
    def norm(x):
        return np.sum(x * x)

    assert "compiled on its first call" in norm._repr_html_()
    norm(np.ones(4))
    html = norm._repr_html_()
    assert "<code>norm(x)</code>" in html
    assert "@norm: (tensor&lt;4xf64&gt;) -&gt; tensor&lt;f64&gt;" in html
    assert "<details><summary>IR</summary><pre>builtin.module" in html


def test_compiles_log_their_stages(caplog):
    @dfc.jit
    def logged(x):
        return np.sum(x + 1.0)

    with caplog.at_level(logging.INFO, logger="dfc"):
        logged(np.ones(5))
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("expand-library: ") and m.endswith(" ms") for m in messages), messages
    assert any(m.startswith("@logged compiled in ") for m in messages), messages


def test_compile_error_source_line_from_text():
    err = CompileError("bad", "f.mlir:2:3").with_source("a\n\tb c\n")
    assert str(err) == "f.mlir:2:3: error: bad\n\tb c\n\t ^"
    assert str(CompileError("bad", "f.mlir").with_source("a")) == "f.mlir: error: bad"


def test_opt_tool_help_lists_the_levels_and_spaces_every_pass():
    out = subprocess.run([sys.executable, "-m", "dfc.tools.opt_tool", "--help"], capture_output=True, text=True,
                         timeout=120)
    assert "-O0" in out.stdout and "-O1, -O2, -O3" in out.stdout
    assert "--buffer-results-to-out-params returned" in out.stdout


def test_torch_capture_does_not_warn():
    torch = pytest.importorskip("torch")
    import warnings

    import dfc.torch

    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        fast = dfc.torch.compile(torch.nn.Linear(4, 3), (torch.ones(2, 4),))
        assert fast(torch.ones(2, 4)).shape == (2, 3)


def test_opt_tool_diagnostics_show_the_source_line_and_a_caret():
    path = "tests/filecheck/tools/opt-tool/inputs/verify-error.mlir"
    out = subprocess.run([sys.executable, "-m", "dfc.tools.opt_tool", path], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        f"{path}:2:8: error: 'nn.add' op shapes [3] and [4] do not broadcast",
        "  %c = nn.add %a, %b : (tensor<3xf32>, tensor<4xf32>) -> tensor<3xf32>",
        "       ^",
    ]


def test_an_ipython_cell_compiles_and_its_errors_show_the_cell_line():
    """The same in a real IPython shell, where IPython is installed (it is no dependency of dfc)."""
    interactive = pytest.importorskip("IPython.core.interactiveshell")
    shell = interactive.InteractiveShell.instance()
    result = shell.run_cell("import numpy as np, dfc\n@dfc.jit\ndef cell(x):\n    return np.sum(x * x)\n"
                            "value = cell(np.arange(3.0))")
    assert result.success and shell.user_ns["value"] == 5.0
    result = shell.run_cell("@dfc.jit\ndef bad(x):\n    return {1: x}\nbad(np.ones(2))")
    assert isinstance(result.error_in_exec, dfc.FrontendError)
    assert str(result.error_in_exec).splitlines()[1:] == ["    return {1: x}", "           ^"]


def test_help_lists_the_api():
    import pydoc

    text = pydoc.render_doc(dfc, renderer=pydoc.plaintext)
    assert "jit(fn" in text and "class Function" in text and "value_and_grad(" in text
