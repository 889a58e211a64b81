"""A short fixed-seed batch of `tools/fuzz_opt_tool.py`: no mutated input may
make opt-tool fail internally, hang or die of a signal."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dfc.tools.fuzz_opt_tool import corpus, crash_site, make_case

CASES = 150


@pytest.mark.parametrize("cases", [40, pytest.param(CASES, marks=pytest.mark.slow)])
def test_fixed_seed_batch_has_no_internal_errors(cases, tmp_path):
    out = tmp_path / "fuzz"
    proc = subprocess.run(
        [sys.executable, "-m", "dfc.tools.fuzz_opt_tool", "--seed", "12", "--count", str(cases),
         "--jobs", "2", "--timeout", "60", "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )
    summary = json.loads((out / "summary.json").read_text())
    assert summary["count"] == cases
    assert summary["sites"] == {}, proc.stdout
    assert set(summary["counts"]) <= {"ok", "error"}, summary["counts"]
    assert summary["counts"].get("error", 0) > cases // 4, "the mutations should mostly break the input"
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_cases_are_a_function_of_seed_and_index():
    items = corpus()
    assert make_case(3, 41, items) == make_case(3, 41, items)
    assert make_case(3, 41, items) != make_case(4, 41, items)


def test_crash_site_names_the_innermost_project_and_library_frames():
    stderr = (
        'Traceback (most recent call last):\n'
        '  File "/x/tools/opt_tool.py", line 3, in main\n    run()\n'
        '  File "/x/.venv/lib/python3.11/site-packages/xdsl/ir/core.py", line 9, in verify\n    f()\n'
        "ValueError: boom\n"
    )
    assert crash_site(stderr).endswith("xdsl/ir/core.py:9 (verify): ValueError")
