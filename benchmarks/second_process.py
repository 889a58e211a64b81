"""A second process's start with the on-disk cache warm, per front door.

    python -m benchmarks.second_process [--only numpy|torch|jax|onnx]

Runs the same small program (an MLP's value and gradient, 64x256-256-10) from
each front door (NumPy `dfc.jit` + `dfc.value_and_grad`, `dfc.torch.compile`
training step, `dfc.from_jax` gradient, `dfc.from_onnx` gradient) in two fresh
processes sharing a temporary `DFC_CACHE_DIR`, and prints each process's CPU
seconds from interpreter start to the end of the first call: imports, the front
door's translation, the compile (autodiff, passes, LLVM or a cache load) and
the call. The second process's compile column is what the cache leaves.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys, time
t0 = time.process_time()
import numpy as np
import dfc
door = sys.argv[1]
rng = np.random.default_rng(0)
x = rng.standard_normal((64, 256)).astype(np.float32)
w1 = (rng.standard_normal((256, 256)) * 0.05).astype(np.float32)
w2 = (rng.standard_normal((256, 10)) * 0.05).astype(np.float32)
times = {}
if door == "numpy":
    @dfc.jit
    def loss(w1: dfc.f32[256, 256], w2: dfc.f32[256, 10], x: dfc.f32[64, 256]) -> dfc.f32:
        return np.sum(np.maximum(x @ w1, 0.0) @ w2)
    t1 = time.process_time()
    f = dfc.value_and_grad(loss, (0, 1))
    call = lambda: f(w1, w2, x)
elif door == "torch":
    import torch
    import dfc.torch
    model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    xt = torch.from_numpy(x)
    t1 = time.process_time()
    cm = dfc.torch.compile(model, (xt,))
    def call():
        cm(xt).sum().backward()
elif door == "jax":
    import jax, jax.numpy as jnp
    def loss(w1, w2, x):
        return jnp.sum(jnp.maximum(x @ w1, 0.0) @ w2)
    t1 = time.process_time()
    f = dfc.grad(dfc.from_jax(loss, w1, w2, x), (0, 1))
    call = lambda: f(w1, w2, x)
else:
    import onnx
    from onnx import TensorProto, helper
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
         helper.make_node("MatMul", ["r", "w2"], ["y"]), helper.make_node("ReduceSum", ["y"], ["s"], keepdims=0)],
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 256])],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [])],
        [onnx.numpy_helper.from_array(w1, "w1"), onnx.numpy_helper.from_array(w2, "w2")])
    proto = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    t1 = time.process_time()
    f = dfc.grad(dfc.from_onnx(proto), (1, 2))
    call = lambda: f(x, w1, w2)
t2 = time.process_time()
call()
t3 = time.process_time()
print(json.dumps({"imports+setup": t1 - t0, "front door": t2 - t1, "first call": t3 - t2, "total": t3 - t0}))
"""


def run(door: str, cache: str) -> dict[str, float]:
    """One fresh process's CPU seconds per phase (the program in a file: `dfc.jit` reads its source)."""
    script = os.path.join(cache, "program.py")
    with open(script, "w") as f:
        f.write(CHILD)
    env = dict(os.environ, DFC_CACHE_DIR=os.path.join(cache, "cache"), DFC_PROGRESS="off")
    out = subprocess.run([sys.executable, script, door], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["numpy", "torch", "jax", "onnx"])
    args = parser.parse_args()
    doors = [args.only] if args.only else ["numpy", "torch", "jax", "onnx"]
    print(f"{'front door':10} {'process':8} {'imports+setup':>14} {'front door':>11} {'first call':>11} {'total':>7}")
    for door in doors:
        with tempfile.TemporaryDirectory() as cache:
            for which in ("first", "second"):
                t = run(door, cache)
                print(f"{door:10} {which:8} {t['imports+setup']:14.2f} {t['front door']:11.2f} "
                      f"{t['first call']:11.2f} {t['total']:7.2f}")


if __name__ == "__main__":
    main()
