"""examples/quickstart.ipynb runs in a Jupyter kernel: a jitted function, its
gradient (checked inside against finite differences), the `dfc` log and the
rich display."""

import os
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "quickstart.ipynb"


def _outputs(cell, kind):
    return [o for o in cell.outputs if o.output_type == kind]


def test_quickstart_notebook_executes(monkeypatch, tmp_path):
    # the kernel spec runs `python`: the one of this environment
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert not any(_outputs(c, "error") for c in code)
    checks = _outputs(code[4], "execute_result")[0].data["text/plain"]
    assert checks == "(True, True)"
    log = "".join(o.text for c in code for o in _outputs(c, "stream") if o.name == "stderr")
    assert "dfc.function: @loss compiled in" in log and "@grad_loss compiled in" in log
    display = _outputs(code[-1], "execute_result")[0].data
    assert "text/html" in display and "loss" in display["text/html"] and "tensor&lt;3x2xf64&gt;" in display["text/html"]
