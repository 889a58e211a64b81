"""Differential testing: random programs, the interpreter against every other way to run them.

    python -m dfc.tools.difftest --seed S --count N [--long] [--jobs J] --out DIR
        [--features offset,nested,...|all] [--no-gpu] [--no-grad] [--batch B] [--shrink K]

Each program (`tools.difftest_gen`) runs in the interpreter, which is the
reference; then
- the interpreter after every prefix of the `default` pipeline up to
  `bufferize` that changes the IR (each tensor-level pass must keep the meaning);
- the engine: `default` with 1 thread and with 2 splitting every map, without
  `fuse`, without `mem-plan`;
- the GPU lowering on the simulated device (`tests/support/gpu_sim.py`);
- autodiff's `@f_grad`, in the interpreter and the engine: its gradient along
  two random directions must match float64 central differences of the
  interpreter's forward (f64 programs), and the engine's gradient must match
  the interpreter's.

An engine that disagrees is compiled again without fast-math flags
(`fast_math=False`); if that agrees, the outcome is 'fast-math', reported
but not a failure: the flags' rounding broke an exact tie (min/max of one value
reached along two paths) or a compare, which fast-math permits.

Programs are batched (`--batch`, one module of several functions) so that one
JIT compile serves many; a batch that fails is rerun program by program to
name the culprit. An engine refusal listed in `ENGINE_LIMITS` makes the program
"unsupported" with that reason, never a pass. Every other failure is a
disagreement or a crash: it is shrunk (statements deleted, shapes shrunk,
features removed while the same stage still fails) and saved to DIR as
`<seed>.mlir` with the stage and message in a header. The summary (counts by
outcome, reasons, time) goes to DIR/summary.json and stdout.
"""

from __future__ import annotations

import argparse
import functools
import json
import multiprocessing
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.interpreter import interpret
from dfc.dialects.diagnostics import CompileError, verify_located
from dfc.passes import PIPELINES
from dfc.tools.difftest_gen import ARG_KINDS, FEATURES, Program, Stmt, generate, render

ENGINE_LIMITS = (
    "bufferize: a df.map with outputs inside another df.map is not supported",
    "outside a df.map cannot be lowered",
    "NVPTX emitter: unsupported op",
    "autodiff: a nested map with its own outputs is not supported",
    "autodiff: wcr(max|min) in a nested map whose bounds depend on the enclosing map",
)
"""Documented refusals (engine, GPU emitter, autodiff): the program is 'unsupported', with the
reason (each message is still raised somewhere; a fixed limit leaves this list, so a regression
to it is a finding). Any other clean `CompileError` on a
valid program is 'refused' (a finding), any other exception a 'crash'."""

PREFIX_END = "bufferize"
"""The interpreter runs tensor-level IR: prefixes up to (not including) this pass."""

ENGINE_VARIANTS = {
    "default/1 thread": (None, 1, False),
    "default/2 threads, every map split": (None, 2, True),
    "no fuse": ("fuse", 2, False),
    "no mem-plan": ("mem-plan", 1, False),
}
"""Engine configurations: (a pass removed from `default`, threads, whether
every map is split). The generated programs are far below the sizes at which
maps run in parallel, so the second splits every map it can
(`parallel_threshold=1`, and `parallel_min_work=0` at run time): chunking,
private copies and their combination run on every program."""


@dataclass
class Outcome:
    """What happened to one program: `status` is pass, unsupported (a documented
    limit), fast-math (the engine disagrees only with its fast-math flags on:
    compiled again without them, it agrees), disagree (wrong numbers), refused
    (a clean error on a valid program), crash (an exception) or invalid (a
    generator bug); `stage` says where."""

    status: str
    stage: str = ""
    detail: str = ""


class Failure(Exception):
    def __init__(self, status: str, stage: str, detail: str):
        super().__init__(f"{status} at {stage}: {detail}")
        self.outcome = Outcome(status, stage, detail)


def _tuple(x: Any) -> tuple:
    return x if isinstance(x, tuple) else (x,)


def tolerance(p: Program) -> float:
    """The relative tolerance (to max(1, |reference|) per result) for two
    correct evaluations of `p`: each op rounds once (a few ulp, tanh/sin in
    the JIT's vector math too), and fast-math reassociates sums over at most
    max(N, M) terms; errors add over the statements and loop trips. 32 ulp per
    op and term leaves room for tanh/sin's slopes, and still catches any
    semantic error (they are of order 1)."""
    eps = float(np.finfo(np.float32 if p.dtype == "f32" else np.float64).eps)
    ops = sum(1 + s.params.get("trips", 0) for s in p.stmts)
    return 32 * eps * ops * max(p.sizes.values())


def _compare(got: Any, want: Any, rtol: float, stage: str) -> None:
    got, want = _tuple(got), _tuple(want)
    if len(got) != len(want):
        raise Failure("disagree", stage, f"{len(got)} results, expected {len(want)}")
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or g.dtype != w.dtype:
            raise Failure("disagree", stage, f"result {k}: {g.dtype}{g.shape}, expected {w.dtype}{w.shape}")
        scale = max(1.0, float(np.nanmax(np.abs(w), initial=0.0)))
        bad = ~np.isclose(g, w, rtol=rtol, atol=rtol * scale, equal_nan=True)
        if bad.any():
            at = tuple(int(i) for i in np.argwhere(bad)[0])
            raise Failure("disagree", stage, f"result {k}{list(at)}: {g[at]!r}, expected {w[at]!r} (rtol {rtol:.1e})")


def _inputs(p: Program, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    dtype = np.float32 if p.dtype == "f32" else np.float64
    return [rng.standard_normal(p.shape(k)).astype(dtype) for k in ARG_KINDS]


def _guard(stage: str, fn, *args, **kwargs):
    """`fn(...)`, with a known engine refusal as 'unsupported' and anything else as a crash."""
    try:
        return fn(*args, **kwargs)
    except Failure:
        raise
    except Exception as err:  # noqa: BLE001 - every exception is a limit or a finding
        reason = next((known for known in ENGINE_LIMITS if known in str(err)), None)
        if reason is not None:
            raise Failure("unsupported", stage, reason) from None
        if isinstance(err, CompileError):
            raise Failure("refused", stage, str(err).replace("\n", " ")) from None
        where = traceback.extract_tb(err.__traceback__)[-1]
        raise Failure("crash", stage, f"{type(err).__name__}: {err} ({Path(where.filename).name}:{where.lineno})") from None


def _without_fast_math(failure: Failure, exact, name: str, args, want, tol: float, skip: int = 0) -> Outcome:
    """A disagreement of an engine that the same engine without fast-math flags
    (`exact()`) does not have is 'fast-math': reassociation and contraction
    round differently, which at an exact tie (min/max of two equal values
    computed along two paths, a compare) can take the other branch. Any other
    failure stays what it is."""
    if failure.outcome.status != "disagree" or exact is None:
        return failure.outcome
    stage = failure.outcome.stage
    try:
        _compare(_tuple(_guard(stage, exact().invoke, name, *args))[skip:], want, tol, stage)
    except Failure:
        return failure.outcome
    return Outcome("fast-math", stage, f"{failure.outcome.detail}; agrees without fast-math flags")


def _engine_options(label: str) -> dict[str, Any]:
    """ExecutionEngine options of an `ENGINE_VARIANTS` entry."""
    without, threads, split = ENGINE_VARIANTS[label]
    lowering = f"lower-dataflow{{threads={threads}{' parallel_threshold=1' if split else ''}}}"
    passes = [lowering if p == "lower-dataflow" else p for p in PIPELINES["default"].split(",") if p != without]
    return {"threads": threads, "pipeline": ",".join(passes), **({"parallel_min_work": 0} if split else {})}


def _autodiff(name: str) -> PassManager:
    """`autodiff` of @name, unverified: the batch's module is verified once after all of them
    (a failure there fails the batch, and the program-by-program rerun names the culprit)."""
    return PassManager.parse(f"autodiff{{func={name}}}", verify_each=False)


def _gpu_engine(module):
    """The CUDA engine on the simulated device of tests/support/gpu_sim.py."""
    tests = Path(__file__).resolve().parent.parent / "tests"
    if str(tests) not in sys.path:
        sys.path.append(str(tests))
    from support.gpu_sim import simulated_engine

    return simulated_engine(module)


@dataclass(frozen=True)
class Options:
    gpu: bool = True
    grad: bool = True


def check_batch(programs: list[tuple[int, Program]], options: Options) -> dict[int, Outcome]:
    """The outcome of each (seed, program), compiled together as `@f<seed>`s."""
    names = {seed: f"f{seed}" for seed, _ in programs}
    text = "".join(render(p, names[seed]) for seed, p in programs)
    outcomes: dict[int, Outcome] = {}
    try:
        module = parse_module(text)
    except CompileError as err:
        return {seed: Outcome("invalid", "parse", str(err)) for seed, _ in programs}
    run = _Run(module, text, programs, names, outcomes)
    for seed in run.seeds():
        try:
            run.reference[seed] = interpret(module, names[seed], *run.inputs[seed])
        except Exception as err:  # noqa: BLE001
            outcomes[seed] = Outcome("invalid", "interpreter", f"{type(err).__name__}: {err}")
    live = [(seed, p) for seed, p in programs if seed not in outcomes]
    if len(programs) > 1 and live and len(live) < len(programs):
        return outcomes | check_batch(live, options)
    try:
        run.check(options)
    except Failure as failure:
        if len(programs) == 1:
            return {programs[0][0]: failure.outcome}
        for seed, p in programs:
            outcomes |= check_batch([(seed, p)], options)
        return outcomes
    return {seed: outcomes.get(seed) or run.soft.get(seed) or Outcome("pass") for seed, _ in programs}


class _Run:
    """One batch being checked. A failure of one program's values is its
    outcome (`outcomes`, it leaves the later stages); a failure to compile the
    batch raises `Failure` (the caller then checks program by program); a
    known limit of a later stage (GPU, autodiff) is kept in `soft` while the
    other stages go on."""

    def __init__(self, module, text, programs, names, outcomes):
        self.module, self.text, self.programs, self.names = module, text, programs, names
        self.outcomes = outcomes
        self.soft: dict[int, Outcome] = {}
        self.inputs = {seed: _inputs(p, seed) for seed, p in programs}
        self.tol = {seed: tolerance(p) for seed, p in programs}
        self.reference: dict[int, Any] = {}

    def seeds(self) -> list[int]:
        return [seed for seed, _ in self.programs if seed not in self.outcomes]

    def compare(self, stage: str, run_one, exact=None) -> None:
        """`run_one(name, inputs)` against the reference, for every live program;
        `exact()`, if given, is the same engine without fast-math flags."""
        for seed in self.seeds():
            try:
                got = _guard(stage, run_one, self.names[seed], *self.inputs[seed])
                _compare(got, self.reference[seed], self.tol[seed], stage)
            except Failure as failure:
                outcome = _without_fast_math(failure, exact, self.names[seed], self.inputs[seed],
                                             self.reference[seed], self.tol[seed])
                if outcome.status == "fast-math":
                    self.soft.setdefault(seed, outcome)
                else:
                    self.outcomes[seed] = outcome

    def check(self, options: Options) -> None:
        # the interpreter after each tensor-level prefix of `default` that changes the IR
        passes = PIPELINES["default"].split(",")
        current, printed = self.module.clone(), str(self.module)
        for k, name in enumerate(passes[: passes.index(PREFIX_END)]):
            stage = f"prefix {','.join(passes[: k + 1])}"
            _guard(stage, PassManager.parse(name).run, current)
            if str(current) != printed:
                printed = str(current)
                self.compare(stage, lambda name, *args: interpret(current, name, *args))
        for label in ENGINE_VARIANTS:
            how = _engine_options(label)
            engine = _guard(f"engine {label}", ExecutionEngine, self.module.clone(), **how)
            exact = functools.cache(lambda how=how: ExecutionEngine(self.module.clone(), fast_math=False, **how))
            self.compare(f"engine {label}", engine.invoke, exact)
        if options.gpu:
            try:
                engine = _guard("gpu-sim", _gpu_engine, self.module.clone())
            except Failure as failure:
                if failure.outcome.status != "unsupported":
                    raise
                self.gpu_one_by_one()
            else:
                self.compare("gpu-sim", engine.invoke)
        if options.grad:
            self.gradients()

    def gpu_one_by_one(self) -> None:
        """The GPU check per program, when the batch has a program the GPU target refuses."""
        programs = dict(self.programs)
        for seed in self.seeds():
            try:
                engine = _guard("gpu-sim", _gpu_engine, parse_module(render(programs[seed], self.names[seed])))
                got = _guard("gpu-sim", engine.invoke, self.names[seed], *self.inputs[seed])
                _compare(got, self.reference[seed], self.tol[seed], "gpu-sim")
            except Failure as failure:
                (self.soft if failure.outcome.status == "unsupported" else self.outcomes)[seed] = failure.outcome

    def gradients(self) -> None:
        """@f_grad (interpreter and engine) against directional central differences (f64 programs)."""
        programs = dict(self.programs)
        graded = [seed for seed in self.seeds() if programs[seed].dtype == "f64"]
        if not graded:
            return
        module, refused = self.module.clone(), set()
        for seed in graded:
            try:
                _guard("autodiff", _autodiff(self.names[seed]).run, module)
            except Failure as failure:
                (self.soft if failure.outcome.status == "unsupported" else self.outcomes)[seed] = failure.outcome
                refused.add(seed)
                module = self.module.clone()  # a failed pass may leave its work half done
                for s in graded[: graded.index(seed)]:
                    if s not in refused:
                        _autodiff(self.names[s]).run(module)
        graded = [s for s in graded if s not in refused]
        if not graded:
            return
        _guard("autodiff", verify_located, module)  # once: verifying after each function is quadratic
        engine = _guard("engine gradient", ExecutionEngine, module.clone())
        exact = functools.cache(lambda: ExecutionEngine(module.clone(), fast_math=False))
        for seed in graded:
            try:
                self.gradient(seed, module, engine, exact)
            except Failure as failure:
                self.outcomes[seed] = failure.outcome

    def gradient(self, seed: int, differentiated, engine, exact) -> None:
        name, args = self.names[seed], self.inputs[seed]
        rng = np.random.default_rng(seed + 1)
        seeds = [np.asarray(rng.standard_normal(np.shape(r))) for r in _tuple(self.reference[seed])]
        n = len(seeds)
        grads = _tuple(_guard("autodiff interpreter", interpret, differentiated, f"{name}_grad", *args, *seeds))[n:]
        if len(grads) != len(args):
            raise Failure("disagree", "autodiff", f"{len(grads)} gradients for {len(args)} arguments")
        try:
            compiled = _tuple(_guard("engine gradient", engine.invoke, f"{name}_grad", *args, *seeds))[n:]
            _compare(tuple(compiled), tuple(grads), self.tol[seed] * 16, "engine gradient")
        except Failure as failure:
            outcome = _without_fast_math(failure, exact, f"{name}_grad", [*args, *seeds], tuple(grads),
                                         self.tol[seed] * 16, skip=n)
            if outcome.status != "fast-math":
                raise
            self.soft.setdefault(seed, outcome)

        def objective(values: list[np.ndarray]) -> float:
            out = _tuple(interpret(self.module, name, *values))
            return float(sum(np.sum(s * o) for s, o in zip(seeds, out)))

        for _ in range(2):
            direction = [rng.standard_normal(a.shape) for a in args]
            h = 1e-6
            plus = objective([a + h * d for a, d in zip(args, direction)])
            minus = objective([a - h * d for a, d in zip(args, direction)])
            fd = (plus - minus) / (2 * h)
            terms = [float(np.sum(g * d)) for g, d in zip(grads, direction)]
            ad = sum(terms)
            # central differences: O(h^2) truncation plus O(eps |F| / h) rounding, both far below 1e-5
            scale = max(abs(fd), sum(abs(t) for t in terms), abs(plus) * 1e-4, 1e-6)
            if not abs(fd - ad) <= 1e-5 * scale:
                raise Failure("disagree", "autodiff", f"directional derivative {ad!r}, finite differences {fd!r}")


# --- shrinking -------------------------------------------------------------------------


def _delete(p: Program, k: int) -> Program | None:
    """`p` without statement k, its uses replaced by an earlier value of the same kind."""
    v = len(ARG_KINDS) + k
    kind = p.kind_of(v)
    earlier = [u for u in range(v) if p.kind_of(u) == kind]
    if not earlier:
        return None
    sub = earlier[-1]

    def renumber(u: int) -> int:
        u = sub if u == v else u
        return u - 1 if u > v else u

    stmts = tuple(replace(s, args=tuple(map(renumber, s.args))) for i, s in enumerate(p.stmts) if i != k)
    results = tuple(dict.fromkeys(renumber(u) for u in p.results if renumber(u) >= len(ARG_KINDS)))
    if not results:
        if not stmts:
            return None
        results = (len(ARG_KINDS) + len(stmts) - 1,)
    return replace(p, stmts=stmts, results=results)


def _simpler(p: Program):
    """Candidate programs smaller than `p`, most promising first."""
    for k in reversed(range(len(p.stmts))):
        q = _delete(p, k)
        if q is not None:
            yield q
    if len(p.results) > 1:
        for r in p.results:
            yield replace(p, results=(r,))
    for dim in ("N", "M"):
        for n in range(1, p.sizes[dim]):
            yield replace(p, sizes={**p.sizes, dim: n})
    if p.dynamic:
        yield replace(p, dynamic=False)
    for k, s in enumerate(p.stmts):
        for key in ("nested", "offset"):
            if s.params.get(key) and not (key == "offset" and s.params.get("base")):
                params = {kk: vv for kk, vv in s.params.items() if kk != key}
                yield replace(p, stmts=p.stmts[:k] + (replace(s, params=params),) + p.stmts[k + 1 :])


def shrink(seed: int, p: Program, outcome: Outcome, options: Options, budget: int = 60) -> tuple[Program, Outcome]:
    """A smaller program failing at the same stage (greedy, at most `budget` checks)."""
    attempts = 0
    improved = True
    while improved and attempts < budget:
        improved = False
        for q in _simpler(p):
            attempts += 1
            got = check_batch([(seed, q)], options)[seed]
            if got.status == outcome.status and got.stage == outcome.stage:
                p, outcome, improved = q, got, True
                break
            if attempts >= budget:
                break
    return p, outcome


# --- driver ----------------------------------------------------------------------------


def _work(job: tuple[list[int], frozenset[str], int, Options, int]) -> list[tuple[int, Outcome, str | None]]:
    seeds, features, size, options, budget = job
    programs = [(s, generate(s, features, size)) for s in seeds]
    outcomes = check_batch(programs, options)
    rows = []
    for seed, p in programs:
        outcome = outcomes[seed]
        reproducer = None
        if outcome.status in ("disagree", "refused", "crash", "invalid"):
            small, outcome = shrink(seed, p, outcome, options, budget)
            header = f"// difftest seed {seed}: {outcome.status} at {outcome.stage}\n// {outcome.detail}\n"
            header += f"// inputs: numpy default_rng({seed}).standard_normal per argument, sizes {small.sizes}\n"
            reproducer = header + render(small, f"f{seed}")
        rows.append((seed, outcome, reproducer))
    return rows


def run(seed: int, count: int, features: frozenset[str], size: int, options: Options, jobs: int = 1,
        batch: int = 8, out: Path | None = None, log=None, shrink_budget: int = 60) -> dict:
    """Check `count` programs from seed `seed` on; returns the summary."""
    start = time.time()
    seeds = list(range(seed, seed + count))
    chunks = [(seeds[k : k + batch], features, size, options, shrink_budget) for k in range(0, count, batch)]
    counts: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    findings: list[dict] = []
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    pool = multiprocessing.get_context("fork").Pool(jobs) if jobs > 1 else None
    results = pool.imap_unordered(_work, chunks) if pool else map(_work, chunks)
    for rows in results:
        for s, outcome, reproducer in rows:
            counts[outcome.status] += 1
            if outcome.status == "unsupported":
                reasons[outcome.detail] += 1
            elif outcome.status != "pass":
                findings.append({"seed": s, **outcome.__dict__})
                if out is not None and reproducer is not None:
                    (out / f"{s}.mlir").write_text(reproducer)
                if log:
                    print(f"seed {s}: {outcome.status} at {outcome.stage}: {outcome.detail}", file=log, flush=True)
    if pool:
        pool.close()
        pool.join()
    summary = {
        "seed": seed, "count": count, "features": sorted(features), "seconds": round(time.time() - start, 1),
        "outcomes": dict(counts), "unsupported": dict(reasons), "findings": findings,
    }
    if out is not None:
        (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


DEFAULT_OFF = frozenset({"if"})
"""Features off by default: the engine refuses them today (`ENGINE_LIMITS`); `--features all` turns them on."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="difftest", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--long", action="store_true", help="bigger programs (up to 8 statements)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=8, help="programs per compiled module")
    parser.add_argument("--features", default="default", help=f"comma list of {','.join(FEATURES)}, 'all' or 'default'")
    parser.add_argument("--no-gpu", action="store_true")
    parser.add_argument("--no-grad", action="store_true")
    parser.add_argument("--shrink", type=int, default=60, help="checks spent shrinking each failure (0: none)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.features == "all":
        features = frozenset(FEATURES)
    elif args.features == "default":
        features = frozenset(FEATURES) - DEFAULT_OFF
    else:
        features = frozenset(f for f in args.features.split(",") if f)
        unknown = features - set(FEATURES)
        if unknown:
            parser.error(f"unknown features: {', '.join(sorted(unknown))}")
    options = Options(gpu=not args.no_gpu, grad=not args.no_grad)
    summary = run(args.seed, args.count, features, 8 if args.long else 4, options, args.jobs, args.batch,
                  args.out, log=sys.stdout, shrink_budget=args.shrink)
    print(json.dumps({k: v for k, v in summary.items() if k != "findings"}))
    return 0 if all(f["status"] == "fast-math" for f in summary["findings"]) else 1


if __name__ == "__main__":
    sys.exit(main())
