"""Differential testing: random valid programs, the interpreter against the engine.

    python -m dfc.tools.difftest --seed 0 --count 200 [--long] [--out DIR]

Each program (`generate`) is one function of two float64 matrices and a flag,
built from random stages on an N x M "current" tensor: elementwise maps with
random tasklets, stencils reading neighbours at offsets kept in bounds by the
map's range, reductions along an axis with every wcr kind broadcast back,
library ops (matmul by a transposed argument, tanh, relu, softmax), scf.for
loops updating a carried tensor in place, scf.if on the flag choosing between
two stages, and a final sum to a scalar loss. The interpreter's result is the
reference; the engine must agree at every pipeline variant (`VARIANTS`: the
default pipeline, and without fuse, mem-plan, scatter-to-gather or
contraction-to-blas) on 1 and 2 threads, within a relative 1e-9 plus an
absolute 1e-9 times the size of the values summed (float64; parallel
reductions reassociate). With `--grad` (on by default) autodiff's gradient of
the loss is checked too: the interpreter's against central differences
(eps 1e-6, rtol 1e-4), and the engine's against the interpreter's.

Results are counted as `agree`, `disagree` (printed, and saved to `--out`
as `<seed>.mlir` with the arguments), or `unsupported` (the engine refused
with a reason: counted per reason, never as a pass). Exit status 1 when any
program disagrees. `--long` grows shapes and stage counts.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

VARIANTS = {
    "default": "default",
    "no-fuse": "-fuse",
    "no-mem-plan": "-mem-plan",
    "no-scatter-to-gather": "-scatter-to-gather",
    "no-blas": "-contraction-to-blas",
}

_UNARY = [
    ("tanh", "math.tanh {x} : f64"),
    ("sin", "math.sin {x} : f64"),
    ("neg", "arith.negf {x} : f64"),
    ("square", "arith.mulf {x}, {x} : f64"),
]
_BINARY = ["arith.addf", "arith.subf", "arith.mulf", "arith.maximumf", "arith.minimumf"]
_WCR = ["add", "max", "min", "mul"]


@dataclass
class Program:
    seed: int
    text: str
    shape: tuple[int, int]
    lines: list[str] = field(default_factory=list)


class _Builder:
    """Emits the stages of one function on tensors of shape (n, m)."""

    def __init__(self, rng: np.random.Generator, n: int, m: int):
        self.rng, self.n, self.m = rng, n, m
        self.t = f"tensor<{n}x{m}xf64>"
        self.lines: list[str] = []
        self.count = 0

    def fresh(self, base: str) -> str:
        self.count += 1
        return f"%{base}{self.count}"

    def tasklet_body(self, args: list[str], indent: str) -> list[str]:
        """Lines computing one f64 from `args` (block arguments), ending in df.yield."""
        out, values = [], list(args)
        for _ in range(int(self.rng.integers(1, 4))):
            v = self.fresh("v")
            if self.rng.random() < 0.4:
                _, form = _UNARY[int(self.rng.integers(len(_UNARY)))]
                out.append(f"{indent}{v} = {form.format(x=self.rng.choice(values))}")
            else:
                op = _BINARY[int(self.rng.integers(len(_BINARY)))]
                a, b = self.rng.choice(values), self.rng.choice(values)
                out.append(f"{indent}{v} = {op} {a}, {b} : f64")
            values.append(v)
        out.append(f"{indent}df.yield {values[-1]} : f64")
        return out

    def elementwise(self, x: str, y: str, out_init: str | None = None) -> str:
        t, r = self.t, self.fresh("r")
        init = out_init or self.empty()
        o, a, b, p = self.fresh("o"), self.fresh("a"), self.fresh("b"), self.fresh("p")
        u, w = self.fresh("u"), self.fresh("w")
        self.lines += [
            f"  {r} = df.map (%i, %j) in ({self.n}, {self.m}) outs({o} = {init} : {t}) {{",
            f"    {a} = df.read {x}[%i, %j] : {t}",
            f"    {b} = df.read {y}[%i, %j] : {t}",
            f"    {p} = df.tasklet ({a}, {b}) : (f64, f64) -> f64 {{",
            f"    ^bb0({u}: f64, {w}: f64):",
            *self.tasklet_body([u, w], "      "),
            "    }",
            f"    df.write {p}, {o}[%i, %j] : {t}",
            f"  }} -> {t}",
        ]
        return r

    def empty(self) -> str:
        e = self.fresh("e")
        self.lines.append(f"  {e} = tensor.empty() : {self.t}")
        return e

    def stencil(self, x: str) -> str:
        """out[i+1, j+1] = f(x[i+1+di, j+1+dj] ...) over the interior, x elsewhere."""
        t, r, o = self.t, self.fresh("r"), self.fresh("o")
        offsets = [(int(self.rng.integers(-1, 2)), int(self.rng.integers(-1, 2))) for _ in range(2)]
        lines = [f"  {r} = df.map (%i, %j) in ({self.n - 2}, {self.m - 2}) outs({o} = {x} : {t}) {{",
                 "    %c1 = arith.constant 1 : index", "    %i1 = arith.addi %i, %c1 : index", "    %j1 = arith.addi %j, %c1 : index"]
        reads = []
        for di, dj in offsets:
            a = self.fresh("a")
            ii, jj = self.fresh("ii"), self.fresh("jj")
            lines += [f"    {ii} = arith.addi %i, %c{di + 1}_i : index", f"    {jj} = arith.addi %j, %c{dj + 1}_i : index",
                      f"    {a} = df.read {x}[{ii}, {jj}] : {t}"]
            reads.append(a)
        u, w, p = self.fresh("u"), self.fresh("w"), self.fresh("p")
        lines = lines[:1] + ["    %c0_i = arith.constant 0 : index", "    %c1_i = arith.constant 1 : index",
                             "    %c2_i = arith.constant 2 : index"] + lines[1:]
        lines += [f"    {p} = df.tasklet ({reads[0]}, {reads[1]}) : (f64, f64) -> f64 {{", f"    ^bb0({u}: f64, {w}: f64):",
                  *self.tasklet_body([u, w], "      "), "    }", f"    df.write {p}, {o}[%i1, %j1] : {t}", f"  }} -> {t}"]
        self.lines += lines
        return r

    def reduction(self, x: str) -> str:
        """s[i] = wcr over j of x[i, j] (or of a function of it), broadcast back with x."""
        kind = _WCR[int(self.rng.integers(len(_WCR)))]
        identity = {"add": "0.0", "mul": "1.0", "max": "0xFFF0000000000000", "min": "0x7FF0000000000000"}[kind]
        s, z, o, a = self.fresh("s"), self.fresh("z"), self.fresh("o"), self.fresh("a")
        vec = f"tensor<{self.n}xf64>"
        value = a
        if kind == "mul":  # keep products of many terms in range
            value = self.fresh("q")
        lines = [f"  {z} = arith.constant dense<{identity}> : {vec}",
                 f"  {s} = df.map (%i, %j) in ({self.n}, {self.m}) outs({o} = {z} : {vec}) {{",
                 f"    {a} = df.read {x}[%i, %j] : {self.t}"]
        if kind == "mul":
            u = self.fresh("u")
            lines += [f"    {value} = df.tasklet ({a}) : (f64) -> f64 {{", f"    ^bb0({u}: f64):",
                      f"      {u}t = math.tanh {u} : f64", f"      df.yield {u}t : f64", "    }"]
        lines += [f"    df.write {value}, {o}[%i] wcr({kind}) : {vec}", f"  }} -> {vec}"]
        self.lines += lines
        r, o2, b, c, p = self.fresh("r"), self.fresh("o"), self.fresh("b"), self.fresh("c"), self.fresh("p")
        e = self.empty()
        u, w = self.fresh("u"), self.fresh("w")
        self.lines += [f"  {r} = df.map (%i, %j) in ({self.n}, {self.m}) outs({o2} = {e} : {self.t}) {{",
                       f"    {b} = df.read {x}[%i, %j] : {self.t}", f"    {c} = df.read {s}[%i] : {vec}",
                       f"    {p} = df.tasklet ({b}, {c}) : (f64, f64) -> f64 {{", f"    ^bb0({u}: f64, {w}: f64):",
                       f"      {u}d = arith.subf {u}, {w} : f64", f"      df.yield {u}d : f64", "    }",
                       f"    df.write {p}, {o2}[%i, %j] : {self.t}", f"  }} -> {self.t}"]
        return r

    def library(self, x: str, y: str) -> str:
        r = self.fresh("r")
        choice = int(self.rng.integers(3))
        if choice == 0:  # x @ y^T @ x : (n x m)(m x n)(n x m)
            yt, g = self.fresh("yt"), self.fresh("g")
            tn = f"tensor<{self.m}x{self.n}xf64>"
            sq = f"tensor<{self.n}x{self.n}xf64>"
            self.lines += [f"  {yt} = nn.transpose {y} {{permutation = array<i64: 1, 0>}} : ({self.t}) -> {tn}",
                           f"  {g} = nn.matmul {x}, {yt} : ({self.t}, {tn}) -> {sq}",
                           f"  {r} = nn.matmul {g}, {x} : ({sq}, {self.t}) -> {self.t}"]
        elif choice == 1:
            op = ["nn.tanh", "nn.relu", "nn.sigmoid"][int(self.rng.integers(3))]
            self.lines.append(f"  {r} = {op} {x} : ({self.t}) -> {self.t}")
        else:
            self.lines.append(f"  {r} = nn.softmax {x} {{axis = -1 : i64}} : ({self.t}) -> {self.t}")
        return r

    def loop(self, x: str, y: str, depth: int) -> str:
        trips = int(self.rng.integers(1, 4))
        r, h, lo, step, hi, iv = (self.fresh(n) for n in ("r", "h", "lo", "st", "hi", "t"))
        self.lines += [f"  {lo} = arith.constant 0 : index", f"  {step} = arith.constant 1 : index",
                       f"  {hi} = arith.constant {trips} : index",
                       f"  {r} = scf.for {iv} = {lo} to {hi} step {step} iter_args({h} = {x}) -> ({self.t}) {{"]
        inner = self.stage(h, y, depth + 1, in_place=h)
        self.lines += [f"    scf.yield {inner} : {self.t}", "  }"]
        return r

    def branch(self, x: str, y: str, depth: int) -> str:
        r = self.fresh("r")
        self.lines.append(f"  {r} = scf.if %flag -> ({self.t}) {{")
        a = self.stage(x, y, depth + 1)
        self.lines += [f"    scf.yield {a} : {self.t}", "  } else {"]
        b = self.stage(y, x, depth + 1)
        self.lines += [f"    scf.yield {b} : {self.t}", "  }"]
        return r

    def stage(self, x: str, y: str, depth: int, in_place: str | None = None) -> str:
        kinds = ["elementwise", "stencil", "reduction", "library"] + (["loop", "branch"] if depth < 2 else [])
        kind = kinds[int(self.rng.integers(len(kinds)))]
        if kind == "elementwise":
            return self.elementwise(x, y, in_place if in_place and self.rng.random() < 0.5 else None)
        if kind == "stencil":
            return self.stencil(x)
        if kind == "reduction":
            return self.reduction(x)
        if kind == "library":
            return self.library(x, y)
        if kind == "loop":
            return self.loop(x, y, depth)
        return self.branch(x, y, depth)


def generate(seed: int, long: bool = False) -> Program:
    rng = np.random.default_rng(seed)
    n, m = (int(rng.integers(3, 9)), int(rng.integers(3, 9))) if long else (int(rng.integers(3, 6)), int(rng.integers(3, 6)))
    b = _Builder(rng, n, m)
    current, other = "%x", "%y"
    for _ in range(int(rng.integers(1, 6 if long else 4))):
        current, other = b.stage(current, other, 0), current
    loss, o, a = b.fresh("loss"), b.fresh("o"), b.fresh("a")
    b.lines += ["  %zl = arith.constant dense<0.0> : tensor<f64>",
                f"  {loss} = df.map (%i, %j) in ({n}, {m}) outs({o} = %zl : tensor<f64>) {{",
                f"    {a} = df.read {current}[%i, %j] : {b.t}", f"    df.write {a}, {o}[] wcr(add) : tensor<f64>",
                "  } -> tensor<f64>", f"  func.return {loss} : tensor<f64>", "}"]
    text = "\n".join([f"func.func @f(%x: {b.t}, %y: {b.t}, %flag: i1) -> tensor<f64> {{", *b.lines])
    return Program(seed, text, (n, m))


def _pipeline(variant: str) -> str:
    from dfc.passes import PIPELINES

    spec = VARIANTS[variant]
    default = PIPELINES["default"]
    if spec == "default":
        return default
    name = spec[1:]
    return ",".join(p for p in default.split(",") if p != name)


def _close(got, want) -> bool:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    scale = 1.0 + float(np.max(np.abs(want))) if want.size else 1.0
    return bool(np.all(np.isclose(got, want, rtol=1e-9, atol=1e-9 * scale, equal_nan=True)))


def check(program: Program, grad: bool = True) -> tuple[str, str]:
    """("agree" | "disagree" | "unsupported", detail)."""
    from dfc import CompileError, ExecutionEngine, PassManager, interpret, parse_module

    rng = np.random.default_rng(program.seed + 1)
    x, y = rng.uniform(-1, 1, program.shape), rng.uniform(-1, 1, program.shape)
    flag = np.bool_(rng.random() < 0.5)
    module = parse_module(program.text, f"difftest-{program.seed}.mlir")
    want = interpret(module, "f", x, y, flag)
    for variant in VARIANTS:
        for threads in (1, 2):
            try:
                got = ExecutionEngine(parse_module(program.text), threads=threads, pipeline=_pipeline(variant)).invoke("f", x, y, flag)
            except CompileError as err:
                return "unsupported", str(err).splitlines()[0]
            if not _close(got, want):
                return "disagree", f"forward, {variant}, {threads} threads: engine {got} vs interpreter {want}"
    if not grad:
        return "agree", ""
    gmod = parse_module(program.text)
    try:
        PassManager.parse("autodiff{func=f wrt=0,1}").run(gmod)
    except CompileError as err:
        return "unsupported", str(err).splitlines()[0].split("error: ", 1)[-1]
    seed = np.array(1.0)
    _, gx, gy = interpret(gmod, "f_grad", x, y, flag, seed)
    eps = 1e-6
    for k, g in enumerate((gx, gy)):
        fd = np.zeros_like(g)
        for index in np.ndindex(g.shape):
            args = [x.copy(), y.copy()]
            args[k][index] += eps
            plus = interpret(module, "f", *args, flag)
            args[k][index] -= 2 * eps
            minus = interpret(module, "f", *args, flag)
            fd[index] = (plus - minus) / (2 * eps)
        if not np.allclose(g, fd, rtol=1e-4, atol=1e-5 * (1 + np.abs(fd).max())):
            return "disagree", f"gradient {'xy'[k]}: interpreter {g} vs finite differences {fd}"
    grad_text = str(gmod)
    for threads in (1, 2):
        _, ex, ey = ExecutionEngine(parse_module(grad_text), threads=threads).invoke("f_grad", x, y, flag, seed)
        if not (_close(ex, gx) and _close(ey, gy)):
            return "disagree", f"gradient, engine ({threads} threads) vs interpreter"
    return "agree", ""


def run(seed: int, count: int, long: bool = False, grad: bool = True, out: Path | None = None, stream=sys.stdout) -> Counter:
    """Check `count` programs from `seed` on; returns the outcome counts."""
    counts: Counter = Counter()
    for s in range(seed, seed + count):
        program = generate(s, long)
        try:
            outcome, detail = check(program, grad)
        except Exception as err:  # a crash anywhere is a finding too
            outcome, detail = "disagree", f"{type(err).__name__}: {err}"
        key = outcome if outcome != "unsupported" else f"unsupported: {detail}"
        counts[key] += 1
        if outcome == "disagree":
            print(f"seed {s}: {detail}", file=stream)
            if out is not None:
                out.mkdir(parents=True, exist_ok=True)
                (out / f"{s}.mlir").write_text(f"// {detail.splitlines()[0]}\n{program.text}\n")
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--long", action="store_true", help="larger shapes, more stages")
    parser.add_argument("--no-grad", action="store_true", help="forward only")
    parser.add_argument("--out", type=Path, default=None, help="folder for disagreeing programs")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    counts = run(args.seed, args.count, args.long, not args.no_grad, args.out)
    print(json.dumps({"programs": args.count, "seconds": round(time.perf_counter() - start, 1), **counts}, indent=1))
    return 1 if counts.get("disagree") else 0


if __name__ == "__main__":
    sys.exit(main())
