"""Fuzz opt-tool with mutated inputs and random pass flags.

    python -m dfc.tools.fuzz_opt_tool --seed S --count N [--jobs J] [--timeout T] [--reduce] [--out DIR]

Case k of seed S is a fixed function of (S, k): a mutation of one of the
examples or FileCheck inputs (`fuzz_mutations`), with that file's RUN-line
flags, often changed. Each case runs `opt-tool` in its own process (forked
from this one after the compiler is imported, so a case costs its own work,
not the interpreter's start) with a wall-clock limit. Exit 0 (output) and 1
(a reported error) are fine; an internal error (exit 2), any other exit
status, a signal or the time limit is a failure. Failures are grouped by
crash site (the innermost frame of the traceback, or the signal or timeout)
and, with `--reduce`, each site's first input is reduced line by line.
`DIR/summary.json` holds the counts and the sites; `DIR/sites/` the inputs.
The exit status is 1 when anything failed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import select
import shlex
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dfc.tools.fuzz_mutations import mutate_flags, mutate_text

ROOT = Path(__file__).resolve().parent.parent
RUN_LINE = re.compile(r"//\s*RUN:\s*(?:not\s+)?opt-tool\s+%s[ \t]*([^|\n]*)")
SKIPPED_FLAGS = ("--print-ir", "--time-passes", "-o")
INTERNAL = 70
"""The forked process's exit status for an exception that escaped opt-tool."""


@dataclass(frozen=True)
class Case:
    """One fuzz input: the bytes opt-tool reads and its arguments (the input path excluded)."""

    index: int
    source: str
    data: bytes
    flags: tuple[str, ...]


@dataclass
class Outcome:
    case: Case
    kind: str
    """'ok', 'error' (exit 1), 'internal', 'exit', 'signal' or 'timeout'."""
    site: str = ""
    seconds: float = 0.0
    detail: str = ""


@dataclass
class Summary:
    seed: int
    count: int
    counts: dict[str, int] = field(default_factory=dict)
    sites: dict[str, dict[str, object]] = field(default_factory=dict)
    seconds: float = 0.0


Item = tuple[str, str, list[tuple[str, ...]]]


def corpus() -> list[Item]:
    """(name, text, flag lists) of every example and FileCheck input; the
    flag lists of a FileCheck file are its RUN lines' opt-tool flags."""
    items: list[Item] = []
    files = sorted((ROOT / "examples").glob("*.mlir")) + sorted((ROOT / "tests" / "filecheck").rglob("*.mlir"))
    for path in files:
        text = path.read_text()
        runs = [_flags(m.group(1)) for m in RUN_LINE.finditer(text)] or [()]
        items.append((str(path.relative_to(ROOT)), text, list(dict.fromkeys(runs))))
    return items


def _flags(text: str) -> tuple[str, ...]:
    try:
        words = shlex.split(text.split("2>")[0].split("&&")[0])
    except ValueError:
        return ()
    return tuple(w for w in words if not w.startswith(SKIPPED_FLAGS) and "%" not in w)


def make_case(seed: int, index: int, items: Sequence[Item]) -> Case:
    rng = random.Random(f"{seed}:{index}")
    name, text, runs = rng.choice(items)
    flags = rng.choice(runs)
    data = mutate_text(text, rng) if rng.random() < 0.9 else text.encode()
    new_flags = mutate_flags(flags, rng) if rng.random() < 0.6 else list(flags)
    return Case(index, name, data, tuple(new_flags))


def _child(case: Case, path: str, err_fd: int) -> None:
    """Runs in the forked process: opt-tool on `path`; exit `INTERNAL` marks an internal error."""
    from dfc.tools import opt_tool

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(err_fd, 2)
    os.environ["DFC_TRACEBACK"] = "1"
    sys.stdout = open(1, "w", closefd=False)
    sys.stderr = open(2, "w", closefd=False)
    try:
        rc = opt_tool.main([path, *case.flags])
    except SystemExit as exit:
        rc = exit.code if isinstance(exit.code, int) else 1
    except BaseException:  # what opt-tool reports as an internal error
        traceback.print_exc()
        rc = INTERNAL
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)


@dataclass
class _Running:
    case: Case
    pid: int
    start: float
    path: str
    err: str


def _start(case: Case, work: str) -> _Running:
    fd, path = tempfile.mkstemp(suffix=".mlir", dir=work)
    os.write(fd, case.data)
    os.close(fd)
    err = path + ".err"
    err_fd = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            _child(case, path, err_fd)
        finally:
            os._exit(5)
    os.close(err_fd)
    return _Running(case, pid, time.monotonic(), path, err)


def _finish(run: _Running, status: int | None) -> Outcome:
    seconds = time.monotonic() - run.start
    stderr = Path(run.err).read_text(errors="replace")
    for p in (run.path, run.err):
        os.unlink(p)
    if status is None:
        return Outcome(run.case, "timeout", "timeout", seconds)
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        return Outcome(run.case, "signal", name, seconds, stderr[-2000:])
    rc = os.WEXITSTATUS(status)
    if rc == 0:
        return Outcome(run.case, "ok", seconds=seconds)
    if rc == 1:
        return Outcome(run.case, "error", seconds=seconds, detail=stderr.strip().splitlines()[-1:][0] if stderr.strip() else "")
    kind = "internal" if rc == INTERNAL else "exit"
    return Outcome(run.case, kind, crash_site(stderr) if kind == "internal" else f"exit {rc}", seconds, stderr[-3000:])


def crash_site(stderr: str) -> str:
    """`file:line (function): ExceptionType` of a traceback's innermost frame,
    preceded by the innermost project frame when that is another one."""
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', stderr)
    lines = [ln for ln in stderr.strip().splitlines() if ln and not ln.startswith(" ")]
    exc = lines[-1].split(":")[0] if lines else "?"
    if not frames:
        return exc
    own = [f for f in frames if f[0].startswith(str(ROOT)) and "site-packages" not in f[0]]
    shown = [f for f in (own[-1:] + frames[-1:]) if f] if own and own[-1] != frames[-1] else frames[-1:]
    return " > ".join(f"{_short(file)}:{line} ({func})" for file, line, func in shown) + f": {exc}"


def _short(file: str) -> str:
    marker = "site-packages/"
    return file.split(marker, 1)[1] if marker in file else os.path.relpath(file, ROOT)


def run_cases(cases: Sequence[Case], jobs: int, timeout: float, work: str) -> list[Outcome]:
    """Every case's outcome, `jobs` at a time."""
    pending = list(reversed(cases))
    running: dict[int, _Running] = {}
    outcomes: list[Outcome] = []
    while pending or running:
        while pending and len(running) < jobs:
            r = _start(pending.pop(), work)
            running[r.pid] = r
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid in running:
            outcomes.append(_finish(running.pop(pid), status))
            continue
        now = time.monotonic()
        for r in [r for r in running.values() if now - r.start > timeout]:
            os.killpg(r.pid, signal.SIGKILL)
            os.waitpid(r.pid, 0)
            outcomes.append(_finish(running.pop(r.pid), None))
        select.select([], [], [], 0.005)
    return sorted(outcomes, key=lambda o: o.case.index)


def reduce_case(outcome: Outcome, timeout: float, work: str) -> bytes:
    """The failing input with as many lines removed as keep the same crash site."""
    lines = outcome.case.data.splitlines(keepends=True)

    def same(candidate: list[bytes]) -> bool:
        case = Case(outcome.case.index, outcome.case.source, b"".join(candidate), outcome.case.flags)
        got = run_cases([case], 1, timeout, work)[0]
        return got.kind == outcome.kind and got.site == outcome.site

    chunk = max(1, len(lines) // 2)
    while chunk >= 1:
        k = 0
        while k < len(lines):
            candidate = lines[:k] + lines[k + chunk :]
            if candidate and same(candidate):
                lines = candidate
            else:
                k += chunk
        chunk //= 2
    return b"".join(lines)


FAILURES = ("internal", "exit", "signal", "timeout")


def summarize(seed: int, outcomes: Sequence[Outcome], out: Path | None, reduce: bool, timeout: float, work: str) -> Summary:
    summary = Summary(seed, len(outcomes))
    for o in outcomes:
        summary.counts[o.kind] = summary.counts.get(o.kind, 0) + 1
        if o.kind not in FAILURES:
            continue
        site = summary.sites.setdefault(o.site, {"kind": o.kind, "count": 0, "first": o.case.index,
                                                   "source": o.case.source, "flags": list(o.case.flags),
                                                   "detail": o.detail[-1500:]})
        site["count"] = int(site["count"]) + 1  # type: ignore[call-overload]
        if out is not None and site["count"] == 1:
            sites = out / "sites"
            sites.mkdir(parents=True, exist_ok=True)
            n = len(summary.sites)
            (sites / f"{n:03d}.mlir").write_bytes(o.case.data)
            (sites / f"{n:03d}.flags").write_text(shlex.join(o.case.flags) + "\n")
            if reduce and o.kind != "timeout":
                (sites / f"{n:03d}.reduced.mlir").write_bytes(reduce_case(o, timeout, work))
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fuzz_opt_tool", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--start", type=int, default=0, help="first case index (to run a seed in chunks)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per input")
    parser.add_argument("--reduce", action="store_true", help="reduce each crash site's first input")
    parser.add_argument("--out", type=Path, default=None, help="folder for summary.json and failing inputs")
    args = parser.parse_args(argv)
    _preload()
    items = corpus()
    cases = [make_case(args.seed, k, items) for k in range(args.start, args.start + args.count)]
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="dfc-fuzz-") as work:
        outcomes = run_cases(cases, args.jobs, args.timeout, work)
        seconds = time.monotonic() - start
        summary = summarize(args.seed, outcomes, args.out, args.reduce, args.timeout, work)
    summary.seconds = round(seconds, 1)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "summary.json").write_text(json.dumps(asdict(summary), indent=1) + "\n")
    print(f"{summary.count} cases in {summary.seconds} s: {summary.counts}")
    for site, info in sorted(summary.sites.items(), key=lambda s: -int(s[1]["count"])):  # type: ignore[call-overload]
        print(f"  {info['count']:5d} {info['kind']:8s} {site}  (case {info['first']}, {info['source']})")
    return 1 if summary.sites else 0


def _preload() -> None:
    """Import the compiler and every project pass once, before forking."""
    from dfc.passes import get_all_passes
    from dfc.passes import PROJECT_PASSES
    from dfc.tools import opt_tool  # noqa: F401

    passes = get_all_passes()
    for name in PROJECT_PASSES:
        passes[name]()


if __name__ == "__main__":
    sys.exit(main())
