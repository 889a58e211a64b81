"""The README's test command survives a test that kills its process: pytest's
workers (pytest-xdist, `-n`) report the crash as a failure and the summary of
the others still prints."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_a_crashing_test_is_a_failure_and_the_summary_prints(tmp_path):
    (tmp_path / "test_crash.py").write_text(textwrap.dedent("""
        import os, signal
        def test_before(): pass
        def test_crash(): os.kill(os.getpid(), signal.SIGSEGV)
        def test_after(): pass
    """))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "1", "-p", "no:cacheprovider", "test_crash.py"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert run.returncode == 1, run.stdout + run.stderr
    assert "crashed while running 'test_crash.py::test_crash'" in run.stdout
    assert "1 failed, 2 passed" in run.stdout
