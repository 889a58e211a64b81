"""Contractions against numpy, PyTorch and JAX, in one run.

    python -m benchmarks.contractions [--quick]

Matrix products at 1024^3 (f32, f64) and at the MLP's skinny shapes (a batch
of 256 by 784 by 512, with the gradient's transposed products), then the MLP
256x784 -> 512 -> 10 value and gradient, then 2-D convolutions (NCHW; with
many output features an im2col product whose patches the GEMM kernel packs
straight from the input, `fuse-gemm-gather`; with up to 16 a direct map, as a
first layer or a depthwise one) forward and value-and-gradient against
PyTorch (the MLP also against torch.compile: inductor compiles its forward
and, through AOTAutograd, its backward). The products run twice in dfc: with the default pipeline
(contractions call dfc's GEMM kernel or OpenBLAS, `DFC_GEMM`, through
`contraction-to-blas`) and without that pass (the generated loop nests), so
the gap the pass closes shows. Ratios are against numpy (matrix products) or
PyTorch (the MLP, convolutions); GFLOP/s is dfc's (a convolution's value and
gradient counts three convolutions' arithmetic: the forward, the input's and
the kernel's gradient).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks.common import median_time, optional, row
from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.passes import PIPELINES

LOOPS = PIPELINES["default"].replace("contraction-to-blas,", "")

MLP = """func.func @mlp(%x: tensor<{n}x784xf32>, %labels: tensor<{n}xi64>, %w1: tensor<512x784xf32>,
    %b1: tensor<512xf32>, %w2: tensor<10x512xf32>, %b2: tensor<10xf32>) -> tensor<f32> {{
  %h = nn.linear %x, %w1, %b1 : (tensor<{n}x784xf32>, tensor<512x784xf32>, tensor<512xf32>) -> tensor<{n}x512xf32>
  %a = nn.relu %h : (tensor<{n}x512xf32>) -> tensor<{n}x512xf32>
  %z = nn.linear %a, %w2, %b2 : (tensor<{n}x512xf32>, tensor<10x512xf32>, tensor<10xf32>) -> tensor<{n}x10xf32>
  %p = nn.log_softmax %z {{axis = -1 : i64}} : (tensor<{n}x10xf32>) -> tensor<{n}x10xf32>
  %l = nn.nll_loss %p, %labels : (tensor<{n}x10xf32>, tensor<{n}xi64>) -> tensor<f32>
  func.return %l : tensor<f32>
}}"""


def compiled(text: str, pipeline: str | None = None) -> tuple[ExecutionEngine, float]:
    start = time.perf_counter()
    engine = ExecutionEngine(parse_module(text), pipeline=pipeline)
    return engine, time.perf_counter() - start


def matmul_row(m: int, k: int, n: int, dtype, torch, jax, quick: bool, transposed: str = "") -> None:
    """`transposed`: "a" or "b" stores that factor transposed (the gradient's products)."""
    t = "f32" if dtype == np.float32 else "f64"
    rng = np.random.default_rng(0)
    a_shape = (k, m) if transposed == "a" else (m, k)
    b_shape = (n, k) if transposed == "b" else (k, n)
    a, b = rng.standard_normal(a_shape).astype(dtype), rng.standard_normal(b_shape).astype(dtype)
    # the product as a df contraction, so either factor can be stored transposed
    ai = "%k, %i" if transposed == "a" else "%i, %k"
    bi = "%j, %k" if transposed == "b" else "%k, %j"
    ta, tb, tc = (f"tensor<{'x'.join(map(str, s))}x{t}>" for s in (a_shape, b_shape, (m, n)))
    text = f"""func.func @mm(%a: {ta}, %b: {tb}) -> {tc} {{
  %e = tensor.empty() : {tc}
  %z = arith.constant 0.0 : {t}
  %f = df.map (%i, %j) in ({m}, {n}) outs(%o = %e : {tc}) {{
    df.write %z, %o[%i, %j] : {tc}
  }} -> {tc}
  %c = df.map (%i, %j, %k) in ({m}, {n}, {k}) outs(%o = %f : {tc}) {{
    %x = df.read %a[{ai}] : {ta}
    %y = df.read %b[{bi}] : {tb}
    %p = arith.mulf %x, %y : {t}
    df.write %p, %o[%i, %j] wcr(add) : {tc}
  }} -> {tc}
  func.return %c : {tc}
}}"""
    fast, compile_s = compiled(text)
    loops, _ = compiled(text, LOOPS)
    na = a.T if transposed == "a" else a
    nb = b.T if transposed == "b" else b
    repeats = 3 if quick else 7
    times = {
        "numpy": median_time(lambda: na @ nb, repeats=repeats),
        "dfc": median_time(lambda: fast.invoke("mm", a, b), repeats=repeats),
        "dfc loops": median_time(lambda: loops.invoke("mm", a, b), repeats=repeats),
        "torch": None,
        "jax": None,
    }
    if torch is not None:
        xa, xb = torch.from_numpy(na), torch.from_numpy(nb)
        times["torch"] = median_time(lambda: xa @ xb, repeats=repeats)
    if jax is not None:
        ja, jb = jax.numpy.asarray(na), jax.numpy.asarray(nb)
        f = jax.jit(lambda p, q: p @ q)
        times["jax"] = median_time(lambda: f(ja, jb).block_until_ready(), repeats=repeats)
    gflops = 2 * m * n * k / times["dfc"] / 1e9
    label = f"{m}x{k}x{n} {t}" + (f" ({transposed}^T)" if transposed else "")
    print(row(label, times, extra=f"dfc {gflops:.1f} GFLOP/s; compile {compile_s:.2f} s"))


def mlp_row(n: int, torch, jax, quick: bool) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((n, 784)).astype(np.float32)
    labels = rng.integers(0, 10, n)
    params = [(rng.standard_normal(s) * 0.05).astype(np.float32) for s in [(512, 784), (512,), (10, 512), (10,)]]
    seed = np.array(1.0, np.float32)
    repeats = 3 if quick else 7
    times: dict[str, float | None] = {}
    for label, pipeline in (("dfc", None), ("dfc loops", LOOPS)):
        module = parse_module(MLP.format(n=n))
        start = time.perf_counter()
        PassManager.parse("autodiff{func=mlp wrt=2,3,4,5}").run(module)  # the parameters, as torch and jax
        engine = ExecutionEngine(module, pipeline=pipeline)
        if label == "dfc":
            compile_s = time.perf_counter() - start
        times[label] = median_time(lambda: engine.invoke("mlp_grad", x, labels, *params, seed), repeats=repeats)
    times["torch"] = times["torch.compile"] = times["jax"] = None
    if torch is not None:
        tx, tl = torch.from_numpy(x), torch.from_numpy(labels)
        tp = [torch.from_numpy(p).requires_grad_() for p in params]

        def loss(xx, ll, w1, b1, w2, b2):
            h = torch.relu(torch.nn.functional.linear(xx, w1, b1))
            return torch.nn.functional.nll_loss(torch.log_softmax(torch.nn.functional.linear(h, w2, b2), -1), ll)

        for name, fn in (("torch", loss), ("torch.compile", torch.compile(loss))):  # inductor: forward and backward
            times[name] = median_time(lambda fn=fn: torch.autograd.grad(fn(tx, tl, *tp), tp), repeats=repeats)
    if jax is not None:
        jnp = jax.numpy

        def loss(p, xx, ll):
            h = jax.nn.relu(xx @ p[0].T + p[1])
            z = jax.nn.log_softmax(h @ p[2].T + p[3], -1)
            return -jnp.take_along_axis(z, ll[:, None], 1).mean()

        g = jax.jit(jax.value_and_grad(loss))
        jp, jx, jl = [jnp.asarray(p) for p in params], jnp.asarray(x), jnp.asarray(labels)
        times["jax"] = median_time(lambda: jax.block_until_ready(g(jp, jx, jl)), repeats=repeats)
    baseline = "torch" if times["torch"] is not None else "dfc"
    print(row(f"mlp {n}x784-512-10 grad", times, baseline=baseline, extra=f"compile {compile_s:.2f} s"))


CONV = """func.func @conv(%x: tensor<{xs}xf32>, %k: tensor<{ks}xf32>, %w: tensor<{ys}xf32>) -> tensor<f32> {{
  %y = nn.convolution %x, %k {{input_dimensions = array<i64: 0, 1, 2, 3>, kernel_dimensions = array<i64: 0, 1, 2, 3>,
      output_dimensions = array<i64: 0, 1, 2, 3>, window_strides = array<i64: 1, 1>, padding_low = array<i64: {p}, {p}>,
      padding_high = array<i64: {p}, {p}>, rhs_dilation = array<i64: 1, 1>, feature_group_count = {g} : i64}}
      : (tensor<{xs}xf32>, tensor<{ks}xf32>) -> tensor<{ys}xf32>
  %m = nn.mul %y, %w : (tensor<{ys}xf32>, tensor<{ys}xf32>) -> tensor<{ys}xf32>
  %l = nn.reduce %m {{kind = "sum", axes = array<i64: 0, 1, 2, 3>}} : (tensor<{ys}xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}}"""


def conv_row(x_shape: tuple, k_shape: tuple, pad: int, torch, quick: bool, groups: int = 1) -> None:
    """sum(conv2d(x, k) * w): forward, then value and gradient w.r.t. x and k."""
    n, c, h, wd = x_shape
    y_shape = (n, k_shape[0], h + 2 * pad - k_shape[2] + 1, wd + 2 * pad - k_shape[3] + 1)
    rng = np.random.default_rng(2)
    x, k, w = (rng.standard_normal(s).astype(np.float32) for s in (x_shape, k_shape, y_shape))
    text = CONV.format(xs="x".join(map(str, x_shape)), ks="x".join(map(str, k_shape)),
                       ys="x".join(map(str, y_shape)), p=pad, g=groups)
    repeats = 3 if quick else 7
    label = f"conv {'x'.join(map(str, x_shape))} k{k_shape[0]}x{k_shape[2]}x{k_shape[3]}" + (f" g{groups}" if groups > 1 else "")
    # multiply-adds of the forward; value and gradient take three times as many (the forward, dx and dk)
    flops = 2 * y_shape[0] * y_shape[1] * y_shape[2] * y_shape[3] * (k_shape[1] * k_shape[2] * k_shape[3])
    for what in ("fwd", "grad"):
        module = parse_module(text)
        start = time.perf_counter()
        if what == "grad":
            PassManager.parse("autodiff{func=conv}").run(module)
        engine = ExecutionEngine(module)
        compile_s = time.perf_counter() - start
        times: dict[str, float | None] = {"torch": None}
        if what == "fwd":
            times["dfc"] = median_time(lambda: engine.invoke("conv", x, k, w), repeats=repeats)
        else:
            seed = np.array(1.0, np.float32)
            times["dfc"] = median_time(lambda: engine.invoke("conv_grad", x, k, w, seed), repeats=repeats)
        if torch is not None:
            tx, tk, tw = (torch.from_numpy(a).requires_grad_(what == "grad") for a in (x, k, w))

            def run():
                loss = (torch.nn.functional.conv2d(tx, tk, padding=pad, groups=groups) * tw).sum()
                return torch.autograd.grad(loss, (tx, tk)) if what == "grad" else loss

            with torch.set_grad_enabled(what == "grad"):
                times["torch"] = median_time(run, repeats=repeats)
        baseline = "torch" if times["torch"] is not None else "dfc"
        rate = flops * (3 if what == "grad" else 1) / times["dfc"] / 1e9
        print(row(f"{label} {what}", times, baseline=baseline, extra=f"dfc {rate:.0f} GFLOP/s; compile {compile_s:.2f} s"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test)")
    args = parser.parse_args()
    torch, jax = optional("torch"), optional("jax")
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
    big = 256 if args.quick else 1024
    for dtype in (np.float32, np.float64):
        matmul_row(big, big, big, dtype, torch, jax, args.quick)
    for batch in (8, 256):
        matmul_row(batch, 784, 512, np.float32, torch, jax, args.quick, transposed="b")  # forward: x @ W^T
    matmul_row(256, 512, 784, np.float32, torch, jax, args.quick)  # dx = dy @ W
    matmul_row(512, 256, 784, np.float32, torch, jax, args.quick, transposed="a")  # dW = dy^T @ x
    mlp_row(256, torch, jax, args.quick)
    conv_row((8 if args.quick else 64, 3, 32, 32), (32, 3, 5, 5), 0, torch, args.quick)
    conv_row((8 if args.quick else 64, 32, 16, 16), (64, 32, 3, 3), 1, torch, args.quick)
    conv_row((8 if args.quick else 64, 1, 28, 28), (6, 1, 5, 5), 2, torch, args.quick)  # LeNet-5's first layer
    conv_row((8 if args.quick else 32, 16, 32, 32), (16, 16, 3, 3), 1, torch, args.quick)
    conv_row((8 if args.quick else 32, 64, 32, 32), (64, 1, 3, 3), 1, torch, args.quick, groups=64)  # depthwise


if __name__ == "__main__":
    main()
