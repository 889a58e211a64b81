"""The environment settings (dfc/config.py): one place that lists and parses every `DFC_*` variable."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from dfc import config

ROOT = Path(__file__).resolve().parent.parent


def test_values_parse_by_kind(monkeypatch):
    monkeypatch.setenv("DFC_NUM_THREADS", " 3 ")
    monkeypatch.setenv("DFC_GEMM", "BLAS")
    monkeypatch.setenv("DFC_VERIFY_EACH", "0")
    monkeypatch.setenv("DFC_CACHE_MAX_MB", "0.5")
    assert config.NUM_THREADS.value() == 3 and config.default_threads() == 3
    assert config.GEMM.value() == "blas"
    assert config.VERIFY_EACH.value() is False
    assert config.CACHE_MAX_MB.value() == 0.5
    monkeypatch.delenv("DFC_NUM_THREADS")
    assert config.NUM_THREADS.value() is None and config.default_threads() >= 1


@pytest.mark.parametrize("name, text, expected", [
    ("DFC_NUM_THREADS", "two", "expected an integer"),
    ("DFC_GEMM", "mkl", "expected one of auto, dfc, blas"),
    ("DFC_VERIFY_EACH", "maybe", "expected 0 or 1"),
    ("DFC_BUFFER_CACHE_MB", "lots", "expected a number"),
])
def test_a_bad_value_names_the_variable(monkeypatch, name, text, expected):
    monkeypatch.setenv(name, text)
    setting = next(s for s in config.SETTINGS if s.name == name)
    with pytest.raises(config.ConfigError, match=f"{name}='{text}': {expected}"):
        setting.value()


def test_every_variable_the_code_reads_is_a_setting():
    """No module reads a DFC_* variable except through dfc.config (tests and benchmarks aside)."""
    names = {s.name for s in config.SETTINGS}
    readers = []
    for folder in ("compiler", "dialects", "passes", "dfc", "tools"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text()
            reads = r"environ\.get\(\s*['\"]DFC_|environ\[\s*['\"]DFC_[A-Z_]+['\"]\s*\](?!\s*=)"
            if path.name != "config.py" and re.search(reads, text):
                readers.append(str(path.relative_to(ROOT)))
            for name in set(re.findall(r"\bDFC_[A-Z_]+\b", text)) - names - {"DFC_UNIVERSE"}:
                readers.append(f"{path.relative_to(ROOT)} names {name}")
    assert not readers, readers


def test_described_and_documented():
    described = config.describe()
    documented = (ROOT / "docs" / "configuration.md").read_text()
    for s in config.SETTINGS:
        assert s.name in described and f"`{s.name}`" in documented, s.name


def test_opt_tool_prints_the_settings():
    out = subprocess.run([sys.executable, "-m", "dfc.tools.opt_tool", "--help-env"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert all(s.name in out.stdout for s in config.SETTINGS)
