"""The differential tester: a fixed-seed batch agrees, and a planted
miscompile is caught (so the batch can fail)."""

from __future__ import annotations

import io

import pytest

from dfc.tools import difftest


def test_fixed_seed_batch_agrees():
    out = io.StringIO()
    counts = difftest.run(1000, 8, grad=False, stream=out)
    assert counts["agree"] >= 6, counts
    assert not counts.get("disagree"), out.getvalue()


def test_fixed_seed_batch_with_gradients_agrees():
    out = io.StringIO()
    counts = difftest.run(2000, 3, grad=True, stream=out)
    assert not counts.get("disagree"), out.getvalue()


def test_a_planted_in_place_bug_is_caught(monkeypatch):
    """bufferize writing in place whenever it may (ignoring liveness) is found."""
    from dfc.passes import bufferize

    monkeypatch.setattr(bufferize, "is_dead_after", lambda value, op: True)
    outcomes = (difftest.check(difftest.generate(s), grad=False)[0] for s in range(3000, 3040))
    assert "disagree" in outcomes, "no program exposed the planted bug"  # seed 3008 does


@pytest.mark.parametrize("seed", range(5))
def test_generated_programs_are_valid(seed):
    from dfc import parse_module

    parse_module(difftest.generate(seed, long=True).text)
