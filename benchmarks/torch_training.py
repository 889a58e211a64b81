"""Training step time of PyTorch models: eager vs torch.compile (inductor) vs dfc.torch.

    python -m benchmarks.torch_training [--quick]

One SGD step (forward, cross-entropy, backward, optimizer step) of the MLP
(batch 256, 784-512-10), LeNet-5 (batch 64, 1x28x28), a pre-norm
transformer encoder block (batch 8, sequence 128, width 256, 4 heads, GELU
MLP of 1024) and a small ResNet (batch 32 of 3x32x32: a 32-feature stem, a
basic block at 32 and a strided one at 64 features, batch norm in training
mode) in float32 on the CPU; the best over interleaved rounds of the
median milliseconds, the ratio to eager, then each compiler's compile time
(first step minus a warm step; inductor's on-disk cache may make it small).
`--quick` uses small sizes (a smoke test of the script); `--threads N` runs
torch on N threads (default: all cores); `--dfc-threads M` runs dfc's kernels
on M (default: `dfc.torch.module.torch_threads()`: torch's count, on torch's
OpenMP team; with `DFC_TORCH_OPENMP=0`, on dfc's own pool, 1, or all cores
when `OMP_WAIT_POLICY=PASSIVE`).
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn.functional as F

import dfc.torch
from benchmarks.common import median_time
from tests.support.torch_models import MLP, EncoderBlock, LeNet5, ResNetSmall


def models(quick: bool):
    g = torch.Generator().manual_seed(0)
    if quick:
        return {"mlp": (lambda: MLP((64, 32, 10)), (8, 64)), "lenet": (LeNet5, (2, 1, 28, 28)),
                "encoder": (lambda: EncoderBlock(32, 4, 64), (2, 8, 32)),
                "resnet": (lambda: ResNetSmall((8, 16)), (2, 3, 8, 8))}, g
    return {
        "mlp 256x784-512-10": (lambda: MLP((784, 512, 10)), (256, 784)),
        "lenet5 64x1x28x28": (LeNet5, (64, 1, 28, 28)),
        "encoder 8x128x256 h4": (lambda: EncoderBlock(256, 4, 1024), (8, 128, 256)),
        "resnet 32x3x32x32": (ResNetSmall, (32, 3, 32, 32)),
    }, g


def step_fn(net, params, x, y):
    opt = torch.optim.SGD(params, lr=0.01)

    def step():
        opt.zero_grad(set_to_none=False)
        F.cross_entropy(net(x), y).backward()
        opt.step()

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--threads", type=int, default=None, help="threads of torch (default: all)")
    parser.add_argument("--dfc-threads", type=int, default=None, help="threads of dfc's kernels")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    compile_dfc = lambda m: dfc.torch.compile(m, threads=args.dfc_threads)  # noqa: E731
    table, g = models(args.quick)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; dfc {args.dfc_threads or 'default'} threads")
    for label, (make, shape) in table.items():
        torch.manual_seed(0)
        x, y = torch.randn(*shape, generator=g), torch.randint(0, 10, (shape[0],), generator=g)
        steps, compile_s = {}, {}
        for name in ("eager", "inductor", "dfc"):
            torch.manual_seed(0)
            model = make()
            net = {"eager": lambda m: m, "inductor": torch.compile, "dfc": compile_dfc}[name](model)
            steps[name] = step_fn(net, list(model.parameters()), x, y)
            start = time.perf_counter()
            steps[name]()
            compile_s[name] = time.perf_counter() - start
        times = dict.fromkeys(steps, float("inf"))
        for _ in range(args.rounds):  # interleaved rounds: a burst of load on a shared machine hits all alike
            for name, step in steps.items():
                times[name] = min(times[name], median_time(step, repeats=args.repeats, warmup=1))
        compile_s = {n: compile_s[n] - times[n] for n in steps}
        cells = "  ".join(f"{n} {t * 1e3:8.2f} ms ({times['eager'] / t:4.2f}x)" for n, t in times.items())
        print(f"{label:<22} {cells}  compile: inductor {compile_s['inductor']:.1f} s, dfc {compile_s['dfc']:.1f} s",
              flush=True)


if __name__ == "__main__":
    main()
