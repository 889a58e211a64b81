"""PyTorch's whole OpInfo database (`op_db`) through `dfc.torch.compile`, classified.

For each OpInfo, its samples in float64 (and in int64 and bool where the OpInfo
supports them, or int64 alone for an integer-only op) run through the compiled
program and eager PyTorch (the machinery of test_aten_coverage.py: many
independent cases in one program, compared element by element and
relatively); gradients against `torch.autograd` for the first passing float64
sample of each differentiable OpInfo. Each sample is one of

- ``right``: equal to eager (values, and the gradient where compared);
- ``refused``: an `UnsupportedOpError` naming the op (or a run-time index error);
- ``wrong``: a compiled result that differs from eager's (shape, dtype or a number);
- ``crash``: an internal error (any other exception);
- ``unexportable``: `torch.export` itself cannot capture the sample (dfc never sees it).

An OpInfo is ``wrong`` or ``crash`` if any sample is, else ``right`` if a sample
is right, else ``refused`` if a sample is refused, else ``unexportable``. OpInfos
whose values are random or undefined (`UNCOMPARED`) are listed, not run.

    python tests/api/opinfo_sweep.py [--samples N] [--only REGEX] [--json FILE]

prints the counts and every wrong/crash sample.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch.utils import _pytree as pytree

sys.path.insert(0, str(Path(__file__).parent))
import test_aten_coverage as coverage  # noqa: E402

from dfc.torch.module import FunctionModule  # noqa: E402

UNCOMPARED = re.compile(
    r"(^|[._])(rand|randn|randint|rand_like|randn_like|randint_like|normal|bernoulli|multinomial|uniform|"
    r"exponential|cauchy|geometric|log_normal|empty|empty_like|new_empty|new_empty_strided|empty_strided|"
    r"empty_permuted)([._]|$)|dropout|rrelu|alpha_dropout|feature_alpha_dropout")
"""OpInfo names whose results are drawn at random or left undefined by torch: no value to compare."""

UNEXPORTABLE = re.compile(r"torch\.export could not capture|torch\.export cannot capture")
"""A refusal that is torch.export's own failure (`capture.export`): dfc never saw the program."""

ORDER = ("crash", "wrong", "right", "refused", "unexportable")


@dataclass
class Outcome:
    """One OpInfo's samples by class, and a line of detail per sample that is not right."""

    samples: Counter = field(default_factory=Counter)
    details: dict[str, str] = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        for kind in ORDER:
            if self.samples[kind]:
                return kind
        return "no samples"


def _classify(name: str, status: str) -> str:
    if status == "pass":
        return "right"
    if status.startswith("refused"):
        return "unexportable" if UNEXPORTABLE.search(status) else "refused"
    return "wrong" if status.startswith(f"FAIL: {name}") else "crash"


def sample_cases(name: str, dtype: torch.dtype, limit: int | None) -> list[coverage.Case]:
    """The first `limit` samples (all: None) of OpInfo `name` in `dtype` whose inputs are real tensors,
    whose eager run succeeds and whose results are real tensors."""
    info = coverage.op_db()[name]
    torch.manual_seed(0)
    try:
        samples = info.sample_inputs_func(info, "cpu", dtype, False)
        picked = []
        for k, sample in enumerate(samples):
            if limit is not None and len(picked) >= limit:
                break
            picked.append((k, sample))
    except Exception:  # noqa: BLE001 - a sample generator that fails for this dtype has no samples here
        return []
    op = coverage._pointed(info.op, coverage.SELECTIONS[name]) if name in coverage.SELECTIONS else info.op
    cases = []
    for k, sample in picked:
        fn, tensors = coverage._sample_fn(op, sample)
        if not tensors or any(t.is_complex() for t in tensors):
            continue
        try:
            result = fn(*(t.clone() for t in tensors))
        except Exception:  # noqa: BLE001 - a sample eager itself rejects
            continue
        leaves = pytree.tree_leaves(result)
        if not leaves or not all(isinstance(x, torch.Tensor) and not x.is_complex() for x in leaves):
            continue
        exact = None
        if info.op is torch.nn.functional.hardsigmoid:
            def exact(module, sample=sample):
                module.fn = coverage._sample_fn(coverage.hardsigmoid, sample)[0]
        grad = dtype.is_floating_point and info.supports_autograd and not (
            info.name == "scatter" and "reduce" in sample.kwargs)
        suffix = "" if dtype == torch.float64 else f":{str(dtype).removeprefix('torch.')}"
        cases.append(coverage.Case(f"{name}#{k}{suffix}", FunctionModule(fn), tensors, grad=grad, opinfo=True,
                                   exact=exact))
    return cases


def dtypes_of(name: str) -> list[torch.dtype]:
    supported = coverage.op_db()[name].supported_dtypes("cpu")
    floats = [torch.float64] if torch.float64 in supported else []
    return floats + [t for t in (torch.int64, torch.bool) if t in supported and (floats or t == torch.int64)]


def sweep(names: list[str], limit: int | None, batch: int = 60, grad: bool = True, log=print) -> dict[str, Outcome]:
    """Each OpInfo of `names` classified (`limit` samples per dtype; None: all)."""
    outcomes = {name: Outcome() for name in names}
    owner: dict[str, str] = {}
    runnable: list[coverage.Case] = []
    for name in names:
        if UNCOMPARED.search(name):
            outcomes[name].details[name] = "random or undefined values: not compared"
            continue
        for dtype in dtypes_of(name):
            for c in sample_cases(name, dtype, limit if dtype == torch.float64 else 1):
                owner[c.name] = name
                runnable.append(c)
    log(f"{len(runnable)} samples of {len(names)} OpInfos")
    start = time.time()
    status = coverage.run_in_batches(runnable, False, batch)
    log(f"values: {time.time() - start:.0f} s")
    if grad:
        firsts: dict[str, coverage.Case] = {}
        for c in runnable:
            if c.grad and status[c.name] == "pass" and ":" not in c.name:
                firsts.setdefault(owner[c.name], c)
        start = time.time()
        grads = coverage.run_in_batches(list(firsts.values()), True, batch // 2)
        log(f"gradients of {len(firsts)} samples: {time.time() - start:.0f} s")
        status.update({n: s for n, s in grads.items() if s != "pass"})
    for c in runnable:
        kind = _classify(c.name, status[c.name])
        outcomes[owner[c.name]].samples[kind] += 1
        if kind != "right":
            outcomes[owner[c.name]].details[c.name] = status[c.name]
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=1, help="float64 samples per OpInfo (0: all)")
    parser.add_argument("--only", default="", help="a regular expression the OpInfo names must match")
    parser.add_argument("--no-grad", action="store_true")
    parser.add_argument("--chunk", type=int, default=40, help="OpInfos compiled together, in a process of their own")
    parser.add_argument("--json", default="opinfo_sweep.json", help="every OpInfo's classes and details (a rerun "
                                                                     "sweeps only the OpInfos it lacks)")
    parser.add_argument("--worker", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        _write(sweep(args.worker, args.samples or None, grad=not args.no_grad), args.json)
        return
    path = Path(args.json)
    done = json.loads(path.read_text()) if path.exists() else {}
    names = [n for n in coverage.op_db() if re.search(args.only, n) and n not in done and dtypes_of(n)]
    queue = [names[k:k + args.chunk] for k in range(0, len(names), args.chunk)]
    while queue:  # each chunk in a process of its own: one that dies (a fault in torch) is split, then named
        chunk = queue.pop(0)
        part = path.with_suffix(".part.json")
        part.unlink(missing_ok=True)
        command = [sys.executable, __file__, "--samples", str(args.samples), "--json", str(part), "--worker", *chunk]
        died = subprocess.run(command + ["--no-grad"] * args.no_grad).returncode or not part.exists()
        if died and len(chunk) > 1:
            queue[:0] = [chunk[:len(chunk) // 2], chunk[len(chunk) // 2:]]
            continue
        done.update({chunk[0]: {"verdict": "crash", "samples": {"crash": 1}, "details": {chunk[0]: "the process "
                     "died"}}} if died else json.loads(part.read_text()))
        path.write_text(json.dumps(done, indent=1))
        print(f"{len(done)} OpInfos: {Counter(o['verdict'] for o in done.values())}", flush=True)
    for name, o in done.items():
        if o["verdict"] in ("wrong", "crash"):
            print(f"{o['verdict'].upper()} {name}: " + "; ".join(f"{k}: {v[:300]}" for k, v in o["details"].items()
                                                                 if not v.startswith("refused")))
    samples = sum((Counter(o["samples"]) for o in done.values()), Counter())
    print(json.dumps({"opinfos": Counter(o["verdict"] for o in done.values()), "samples": samples}, indent=1))


def _write(outcomes: dict[str, Outcome], path: str) -> None:
    Path(path).write_text(json.dumps(
        {n: {"verdict": o.verdict, "samples": dict(o.samples), "details": o.details} for n, o in outcomes.items()},
        indent=1))


if __name__ == "__main__":
    main()
