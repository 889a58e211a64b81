"""Where compile time goes: text to callable, stage by stage.

    python -m benchmarks.compile_time [--quick] [--only examples|sizes|models|resnet18|vit|lstm]

For the examples' gradients (mlp, softmax_loss, jacobi2d) and for gradients of
chains of N stencil maps (N = 20, 40, 80: the shape of solvers with hundreds
of small maps), prints parse, autodiff, each pipeline pass (summed over its
runs), one verification of the lowered IR, and the LLVM stages (IR emission,
splitting into parts, optimisation and code generation of the parts in this
process, loading), in seconds. Compile time should
grow about linearly with N. Imports are not counted (about 0.4 s per process).
`sizes`: softmax_loss and the mlp at a small size and at 8192, whose times
should match (compile work does not depend on data sizes). `models`: the
first training step through dfc.torch, in CPU seconds per stage (other
processes on the machine do not count; LLVM's optimisation and code
generation summed over the processes that ran them, `DFC_COMPILE_JOBS`), its
total CPU time (this process and the LLVM workers) and its wall time, of torchvision's
ResNet-18 (batch 8, 32x32; `--only resnet18`), a small ViT (4 blocks of
width 64 on 4x4 patches; `--only vit`) and an LSTM (16 steps, 128 units;
`--only lstm`); not with `--quick`.
"""

from __future__ import annotations

import argparse
import re
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from dfc.compiler import PassManager, parse_module
from dfc.compiler.codegen.llvm import workers
from dfc.compiler.codegen.llvm.emitter import DEFAULT_PARALLEL_MIN_WORK
from dfc.compiler.codegen.llvm.jit import JitModule, module_parts
from dfc.compiler.codegen.llvm.module import emit_module
from dfc.compiler.codegen.object_cache import CachedObject
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
    texts = module_parts(ir_module, 3)
    times["llvm split"] = time.perf_counter() - start
    parts = [workers.compile_part(text, 3) for text in texts]  # here: these are the serial times
    times["llvm opt"] = sum(p.opt_seconds for p in parts)
    times["llvm codegen"] = sum(p.codegen_seconds for p in parts)
    start = time.perf_counter()
    JitModule.from_object(CachedObject(tuple(p.obj for p in parts), tuple(p.llvm_ir for p in parts), True), 3)
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
    """CPU seconds per compile stage of everything run inside `with`: the
    torch capture, parsing, every pass, the final verification, LLVM IR
    emission, its splitting into parts (`llvm split`: parsing, merging
    identical functions), their optimisation and code generation (summed over
    the processes that ran them: `workers`) and loading. CPU time rather than
    wall time, so that other processes on the machine do not count."""

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
        self._timed(jit, "module_parts", lambda *a: "llvm split")
        self._timed(jit.JitModule, "_load", lambda *a: "load")
        compile_parts = jit.compile_parts

        def compiled(*args, **kwargs):
            parts = compile_parts(*args, **kwargs)
            self.times["llvm opt"] += sum(p.opt_seconds for p in parts)
            self.times["llvm codegen"] += sum(p.codegen_seconds for p in parts)
            return parts

        jit.compile_parts = compiled
        self._restore.append((jit, "compile_parts", compile_parts))
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, attr, original in reversed(self._restore):
            setattr(owner, attr, original)


def vit(classes: int = 10, width: int = 64, depth: int = 4, heads: int = 4, patch: int = 4, size: int = 32):
    """A small vision transformer (ViT-tiny's layout at a smaller scale): a
    `patch` x `patch` stride-`patch` convolution embedding the patches, a
    learned position embedding, `depth` pre-norm encoder blocks (multi-head
    self-attention, GELU MLP of 2 x width), layer norm, a linear head on the
    mean over the patches."""
    import torch
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))

        def forward(self, x):
            b, s, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).reshape(b, s, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
            y = torch.softmax(q @ k.transpose(-2, -1) / (d // heads) ** 0.5, dim=-1) @ v
            x = x + self.proj(y.transpose(1, 2).reshape(b, s, d))
            return x + self.mlp(self.ln2(x))

    class ViT(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Conv2d(3, width, patch, patch)
            self.position = nn.Parameter(torch.randn(1, (size // patch) ** 2, width) * 0.02)
            self.blocks = nn.Sequential(*(Block() for _ in range(depth)))
            self.ln = nn.LayerNorm(width)
            self.head = nn.Linear(width, classes)

        def forward(self, x):
            x = self.embed(x).flatten(2).transpose(1, 2) + self.position
            return self.head(self.ln(self.blocks(x)).mean(dim=1))

    return ViT()


def lstm(features: int = 32, hidden: int = 128, classes: int = 10):
    """A one-layer LSTM over a sequence (the cell written out: the four gates
    from one linear map of the input and one of the state, unrolled over the
    time steps when captured), a linear head on the last state."""
    import torch
    import torch.nn as nn

    class LSTM(nn.Module):
        def __init__(self):
            super().__init__()
            self.input, self.state = nn.Linear(features, 4 * hidden), nn.Linear(hidden, 4 * hidden, bias=False)
            self.head = nn.Linear(hidden, classes)

        def forward(self, x):
            h = c = torch.zeros(x.shape[0], hidden)
            for t in range(x.shape[1]):
                i, f, g, o = (self.input(x[:, t]) + self.state(h)).chunk(4, dim=1)
                c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
                h = torch.sigmoid(o) * torch.tanh(c)
            return self.head(h)

    return LSTM()


MODELS: dict[str, tuple[str, Callable[[], object], tuple[int, ...], int]] = {
    "resnet18": ("resnet18 8x3x32x32 step", resnet18, (8, 3, 32, 32), 1000),
    "vit": ("vit 4 blocks 8x3x32x32 step", vit, (8, 3, 32, 32), 10),
    "lstm": ("lstm 16 steps 8x16x32 step", lstm, (8, 16, 32), 10),
}
"""The model rows: label, model, input shape, classes."""


def first_step(model, shape: tuple[int, ...], classes: int) -> tuple[float, float, float, dict[str, float]]:
    """The first training step of `model` through dfc.torch (forward, cross
    entropy, backward) on random inputs of `shape`: its wall seconds, the CPU
    seconds of this process and of the LLVM worker processes (stopped at the
    end, so that their time is counted, start-up included), and the CPU
    seconds per stage."""
    import resource

    import torch
    import torch.nn.functional as F

    import dfc.torch

    torch.manual_seed(0)
    x, y = torch.randn(*shape), torch.randint(0, classes, (shape[0],))
    compiled = dfc.torch.compile(model)
    workers.shutdown()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    with StageTimes() as stages_seen:
        wall, cpu = time.perf_counter(), time.process_time()
        F.cross_entropy(compiled(x), y).backward()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    workers.shutdown()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    worker_cpu = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    return wall, cpu, worker_cpu, dict(stages_seen.times)


def report(label: str, total: float, times: dict[str, float], extra: str = "") -> None:
    top = sorted(times.items(), key=lambda kv: -kv[1])[:8]
    print(f"{label:<26} total {total:6.2f} s{extra}   " + "  ".join(f"{k} {v:.2f}" for k, v in top), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="only the examples and N = 20")
    parser.add_argument("--only", choices=("examples", "sizes", "models", *MODELS), help="one group of rows, or one model")
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
    for name, (label, make, shape, classes) in MODELS.items():
        if args.only in (None, "models", name) and not args.quick:
            import torch

            torch.manual_seed(0)
            wall, cpu, worker_cpu, times = first_step(make(), shape, classes)
            report(label, cpu + worker_cpu, times, f" cpu ({worker_cpu:.2f} in {workers.jobs() - 1} LLVM workers), "
                                                   f"{wall:.2f} s wall")


if __name__ == "__main__":
    main()
