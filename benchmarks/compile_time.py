"""Where compile time goes: text to callable, stage by stage.

    python -m benchmarks.compile_time [--quick] [--only examples|sizes|resnet18]

For the examples' gradients (mlp, softmax_loss, jacobi2d) and for gradients of
chains of N stencil maps (N = 20, 40, 80: the shape of solvers with hundreds
of small maps), prints parse, autodiff, each pipeline pass (summed over its
runs), one verification of the lowered IR, and the LLVM stages (IR emission,
optimisation, code generation and loading), in seconds. Compile time should
grow about linearly with N. Imports are not counted (about 0.4 s per process).
`sizes`: softmax_loss and the mlp at a small size and at 8192, whose times
should match (compile work does not depend on data sizes). `resnet18`: the
first training step of torchvision's ResNet-18 (batch 8, 32x32) through
dfc.torch, in CPU seconds per stage (other processes on the machine do not
count) and its wall time; not with `--quick`.
"""

from __future__ import annotations

import argparse
import re
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from dfc.compiler import PassManager, parse_module
from dfc.compiler.codegen.llvm.emitter import DEFAULT_PARALLEL_MIN_WORK
from dfc.compiler.codegen.llvm.jit import JitModule, optimize
from dfc.compiler.codegen.llvm.module import emit_module
from dfc.compiler.codegen.object_cache import CachedObject
from dfc.compiler.codegen.target import host_target_machine
from dfc.dialects.diagnostics import verify_located
from dfc.passes import PIPELINES

EXAMPLES = Path(__file__).parent.parent / "examples"
FUNCTIONS = {"mlp": "mlp", "softmax": "softmax_loss", "jacobi2d": "jacobi2d"}


def stencil_chain(n: int, size: int = 64) -> str:
    """`@f(x, y)`: n maps, each a 3-point stencil of the previous two results
    written over a copy of the older one (so every element is defined)."""
    t = f"tensor<{size}x{size}xf64>"
    lines = [f"func.func @f(%x: {t}, %y: {t}) -> {t} {{"]
    prev, other = "%x", "%y"
    for k in range(n):
        lines += [
            f"  %v{k} = df.map (%i, %j) in ({size - 1}, {size - 1}) outs(%o = {other} : {t}) {{",
            "    %c1 = arith.constant 1 : index",
            "    %ip = arith.addi %i, %c1 : index",
            "    %jp = arith.addi %j, %c1 : index",
            f"    %a = df.read {prev}[%ip, %jp] : {t}",
            f"    %b = df.read {prev}[%i, %jp] : {t}",
            f"    %c = df.read {other}[%ip, %j] : {t}",
            "    %r = df.tasklet (%a, %b, %c) : (f64, f64, f64) -> f64 {",
            "    ^bb0(%p: f64, %q: f64, %s: f64):",
            "      %m = arith.mulf %p, %q : f64",
            "      %z = arith.addf %m, %s : f64",
            "      df.yield %z : f64",
            "    }",
            f"    df.write %r, %o[%ip, %jp] : {t}",
            f"  }} -> {t}",
        ]
        other, prev = prev, f"%v{k}"
    lines += [f"  func.return {prev} : {t}", "}"]
    return "\n".join(lines)


def softmax_loss(rows: int, cols: int) -> str:
    """The softmax_loss example at `rows` x `cols`."""
    text = (EXAMPLES / "softmax.mlir").read_text()
    return (text.replace("64x512", f"{rows}x{cols}").replace("tensor<64xf32>", f"tensor<{rows}xf32>")
            .replace("(64, 512)", f"({rows}, {cols})"))


def mlp(batch: int) -> str:
    """The mlp example on a batch of `batch`."""
    text = re.sub(r"tensor<8x", f"tensor<{batch}x", (EXAMPLES / "mlp.mlir").read_text())
    return text.replace("tensor<8xi64>", f"tensor<{batch}xi64>")


def stages(text: str, name: str) -> dict[str, float]:
    """Seconds per stage compiling `text` and the gradient of `@name` as the engine does."""
    times: dict[str, float] = defaultdict(float)
    start = time.perf_counter()
    module = parse_module(text)
    times["parse"] = time.perf_counter() - start
    start = time.perf_counter()
    PassManager.parse(f"autodiff{{func={name}}}").run(module)
    times["autodiff"] = time.perf_counter() - start
    manager = PassManager.parse(PIPELINES["default"], verify_each=False)
    manager.run(module)
    for pass_name, seconds in manager.timings:
        times[pass_name] += seconds
    start = time.perf_counter()
    verify_located(module)
    times["verify"] = time.perf_counter() - start
    start = time.perf_counter()
    ir_module = emit_module(module, fast_math=True, num_threads=2, parallel_min_work=DEFAULT_PARALLEL_MIN_WORK, vector_math=True)
    times["llvm emit"] = time.perf_counter() - start
    start = time.perf_counter()
    optimized = optimize(ir_module, 3)
    times["llvm opt"] = time.perf_counter() - start
    optimized_ir = str(optimized)  # loading reads which libraries it calls (code generation rewrites the module)
    start = time.perf_counter()
    obj = host_target_machine(3).emit_object(optimized)
    times["llvm codegen"] = time.perf_counter() - start
    start = time.perf_counter()
    entry = CachedObject(obj, optimized_ir, True)
    JitModule.from_object(entry, 3)
    times["load"] = time.perf_counter() - start
    return dict(times)


def resnet18(classes: int = 1000):
    """torchvision's ResNet-18 (a 7x7 stride-2 stem, max pooling, four stages
    of two basic blocks at 64/128/256/512 features, average pooling, a linear
    head), written in plain torch.nn."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self, c_in: int, c_out: int, stride: int):
            super().__init__()
            self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(c_out)
            self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(c_out)
            self.downsample = None if stride == 1 and c_in == c_out else nn.Sequential(
                nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.BatchNorm2d(c_out))

        def forward(self, x):
            y = F.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return F.relu(y + (x if self.downsample is None else self.downsample(x)))

    class ResNet18(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            layers, c = [], 64
            for k, width in enumerate((64, 128, 256, 512)):
                layers += [Block(c, width, 1 if k == 0 else 2), Block(width, width, 1)]
                c = width
            self.layers = nn.Sequential(*layers)
            self.fc = nn.Linear(512, classes)

        def forward(self, x):
            x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
            return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.layers(x), 1), 1))

    return ResNet18()


class StageTimes:
    """CPU seconds of this process per compile stage of everything run
    inside `with`: the torch capture, parsing, every pass, the final
    verification, LLVM IR emission, optimisation, code generation and
    loading. CPU time rather than wall time, so that other processes on the
    machine do not count (compilation runs on one thread)."""

    def __init__(self) -> None:
        self.times: dict[str, float] = defaultdict(float)

    def _timed(self, owner: object, attr: str, stage: Callable[..., str]) -> None:
        original = owner.__dict__[attr]  # type: ignore[attr-defined]
        function = original.__func__ if isinstance(original, staticmethod) else original

        def timed(*args, **kwargs):
            start = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.times[stage(*args)] += time.process_time() - start

        setattr(owner, attr, staticmethod(timed) if isinstance(original, staticmethod) else timed)
        self._restore.append((owner, attr, original))

    def __enter__(self) -> StageTimes:
        from dfc.compiler import engine, pass_manager
        from dfc.compiler.codegen.llvm import jit
        from dfc.torch import module, runtime

        self._restore: list = []
        self._timed(module, "capture", lambda *a: "capture")
        self._timed(runtime, "parse_module", lambda *a: "parse")
        self._timed(pass_manager.PassManager, "_apply", lambda p, *a: p.name)
        self._timed(engine, "verify_located", lambda *a: "verify")
        self._timed(jit, "emit_module", lambda *a: "llvm emit")
        self._timed(jit, "optimize", lambda *a: "llvm opt")
        self._timed(jit.JitModule, "_load", lambda *a: "load")
        self._timed(jit.JitModule, "__init__", lambda *a: "llvm total")
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, attr, original in reversed(self._restore):
            setattr(owner, attr, original)
        t = self.times
        t["llvm codegen"] = t.pop("llvm total", 0.0) - t["llvm emit"] - t["llvm opt"] - t["load"]


def resnet18_first_step(batch: int = 8, size: int = 32) -> tuple[float, float, dict[str, float]]:
    """ResNet-18's first training step through dfc.torch (forward, cross
    entropy, backward) on a batch of `batch` `size`x`size` images: its wall
    and CPU seconds and the seconds per stage."""
    import torch
    import torch.nn.functional as F

    import dfc.torch

    torch.manual_seed(0)
    model = resnet18()
    x, y = torch.randn(batch, 3, size, size), torch.randint(0, 1000, (batch,))
    compiled = dfc.torch.compile(model)
    with StageTimes() as stages_seen:
        wall, cpu = time.perf_counter(), time.process_time()
        F.cross_entropy(compiled(x), y).backward()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return wall, cpu, dict(stages_seen.times)


def report(label: str, total: float, times: dict[str, float], extra: str = "") -> None:
    top = sorted(times.items(), key=lambda kv: -kv[1])[:8]
    print(f"{label:<26} total {total:6.2f} s{extra}   " + "  ".join(f"{k} {v:.2f}" for k, v in top), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="only the examples and N = 20")
    parser.add_argument("--only", choices=("examples", "sizes", "resnet18"), help="one group of rows")
    args = parser.parse_args()
    if args.only in (None, "examples"):
        cases = [(f"{example} grad", (EXAMPLES / f"{example}.mlir").read_text(), fn)
                 for example, fn in FUNCTIONS.items()]
        cases += [(f"{n} stencil maps grad", stencil_chain(n), "f") for n in ((20,) if args.quick else (20, 40, 80))]
        for label, text, fn in cases:
            times = stages(text, fn)
            report(label, sum(times.values()), times)
    if args.only in (None, "sizes"):  # the same programs at two sizes: the times should match
        for label, text, fn in (("softmax_loss 64x512", softmax_loss(64, 512), "softmax_loss"),
                                ("softmax_loss 8192x8192", softmax_loss(8192, 8192), "softmax_loss"),
                                ("mlp batch 64", mlp(64), "mlp"), ("mlp batch 8192", mlp(8192), "mlp")):
            times = stages(text, fn)
            report(label + " grad", sum(times.values()), times)
    if args.only in (None, "resnet18") and not args.quick:
        wall, cpu, times = resnet18_first_step()
        report("resnet18 8x3x32x32 step", cpu, times, f" cpu, {wall:.2f} s wall")


if __name__ == "__main__":
    main()
