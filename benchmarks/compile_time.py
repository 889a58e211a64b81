"""Where compile time goes: text to callable, stage by stage.

    python -m benchmarks.compile_time [--quick]

For the examples' gradients (mlp, softmax_loss, jacobi2d) and for gradients of
chains of N stencil maps (N = 20, 40, 80: the shape of solvers with hundreds
of small maps), prints parse, autodiff, each pipeline pass (summed over its
runs), one verification of the lowered IR, and the LLVM stages (IR emission,
optimisation, code generation and loading), in seconds. Compile time should
grow about linearly with N. Imports are not counted (about 0.4 s per process).
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
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
    start = time.perf_counter()
    obj = host_target_machine(3).emit_object(optimized)
    times["llvm codegen"] = time.perf_counter() - start
    start = time.perf_counter()
    entry = CachedObject(obj, "", True)
    JitModule.from_object(entry, 3)
    times["load"] = time.perf_counter() - start
    return dict(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="only the examples and N = 20")
    args = parser.parse_args()
    cases = [(f"{example} grad", (EXAMPLES / f"{example}.mlir").read_text(), fn) for example, fn in FUNCTIONS.items()]
    cases += [(f"{n} stencil maps grad", stencil_chain(n), "f") for n in ((20,) if args.quick else (20, 40, 80))]
    for label, text, fn in cases:
        times = stages(text, fn)
        total = sum(times.values())
        top = sorted(times.items(), key=lambda kv: -kv[1])[:6]
        print(f"{label:<22} total {total:6.2f} s   " + "  ".join(f"{k} {v:.2f}" for k, v in top))


if __name__ == "__main__":
    main()
