"""contraction-to-blas: which maps become `blas.gemm`, and that the engine
computes what the interpreter does with and without the rewrite."""

from __future__ import annotations

import os

import numpy as np
import pytest

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.interpreter import interpret
from dfc.dialects.nn_expand_conv import DIRECT_MAX_OUTPUTS
from dfc.passes import PIPELINES
from support.openmp_team import openmp_team

pytestmark = pytest.mark.skipif(
    not __import__("dfc.compiler.codegen.blas_runtime", fromlist=["available"]).available(),
    reason="scipy-openblas64 is not installed",
)

WITHOUT = PIPELINES["default"].replace("contraction-to-blas,", "")
TO_BLAS = PIPELINES["default"].split(",fuse-gemm-epilogue")[0]
"""The default pipeline up to `contraction-to-blas` (`fuse-gemm-epilogue` then folds fills into the epilogue)."""


@pytest.fixture(autouse=True)
def _both_gemms(host_gemm_mode):
    """Every test runs with the GEMM the host would choose, and with --slow
    with both dfc's kernel and OpenBLAS (tests/compiler/test_gemm_kernel.py and the
    fuse-gemm tests run both always)."""


def contraction(out: str, x: str, y: str, sizes: dict[str, int], dtype: str = "f64", *, init: str = "zero",
                dynamic: bool = False) -> str:
    """`@f(x, y)`: out[out] (+)= sum x[x] * y[y] as a fill map and a `wcr(add)` map,
    e.g. `contraction("ij", "ik", "kj", ...)` is a matrix product. `init` is
    "zero" (a 0.0 fill), "ones" (a 1.0 fill) or "arg" (a third argument)."""
    names = sorted(set(out + x + y))

    def ty(idx: str) -> str:
        dims = "x".join("?" if dynamic else str(sizes[c]) for c in idx)
        return f"tensor<{dims}x{dtype}>" if idx else f"tensor<{dtype}>"

    lines = [f"func.func @f(%x: {ty(x)}, %y: {ty(y)}" + (f", %z: {ty(out)}" if init == "arg" else "") + f") -> {ty(out)} {{"]
    bound = {}
    for c in names:
        if not dynamic:
            bound[c] = str(sizes[c])
            continue
        src, pos = ("x", x.index(c)) if c in x else ("y", y.index(c))
        lines.append(f"  %c{c} = arith.constant {pos} : index")
        lines.append(f"  %n{c} = tensor.dim %{src}, %c{c} : {ty(x if src == 'x' else y)}")
        bound[c] = f"%n{c}"
    if init == "arg":
        start = "%z"
    else:
        value = "0.0" if init == "zero" else "1.0"
        dims = ", ".join(bound[c] for c in out if dynamic)
        lines.append(f"  %e = tensor.empty({dims}) : {ty(out)}")
        lines.append(f"  %v = arith.constant {value} : {dtype}")
        ivs = ", ".join(f"%f{c}" for c in out)
        lines.append(f"  %s = df.map ({ivs}) in ({', '.join(bound[c] for c in out)}) outs(%o = %e : {ty(out)}) {{")
        lines.append(f"    df.write %v, %o[{ivs}] : {ty(out)}")
        lines.append(f"  }} -> {ty(out)}")
        start = "%s"
    order = list(dict.fromkeys(out + x + y))
    lines.append(f"  %r = df.map ({', '.join('%' + c for c in order)}) in ({', '.join(bound[c] for c in order)})"
                 f" outs(%acc = {start} : {ty(out)}) {{")
    lines.append(f"    %ra = df.read %x[{', '.join('%' + c for c in x)}] : {ty(x)}")
    lines.append(f"    %rb = df.read %y[{', '.join('%' + c for c in y)}] : {ty(y)}")
    lines.append(f"    %p = df.tasklet (%ra, %rb) : ({dtype}, {dtype}) -> {dtype} {{")
    lines.append(f"    ^bb0(%u: {dtype}, %w: {dtype}):")
    lines.append(f"      %q = arith.mulf %u, %w : {dtype}")
    lines.append(f"      df.yield %q : {dtype}")
    lines.append("    }")
    lines.append(f"    df.write %p, %acc[{', '.join('%' + c for c in out)}] wcr(add) : {ty(out)}")
    lines.append(f"  }} -> {ty(out)}")
    lines.append(f"  func.return %r : {ty(out)}")
    lines.append("}")
    return "\n".join(lines)


def lowered(text: str, pipeline: str = PIPELINES["default"]) -> str:
    module = parse_module(text)
    PassManager.parse(pipeline).run(module)
    return str(module)


def check(text: str, args: list[np.ndarray], *, gemm: bool) -> None:
    """The engine with and without the rewrite agrees with the interpreter;
    `gemm` says whether the rewrite applies."""
    assert ("blas.gemm" in lowered(text)) == gemm
    expected = interpret(parse_module(text), "f", *args)
    for pipeline in (PIPELINES["default"], WITHOUT):
        for threads in (1, 2):
            module = parse_module(text)
            got = ExecutionEngine(module, threads=threads, pipeline=pipeline).invoke("f", *args)
            np.testing.assert_allclose(got, expected, rtol=1e-5 if args[0].dtype == np.float32 else 1e-12, atol=1e-5)


RNG = np.random.default_rng(11)
SIZES = {"b": 3, "i": 5, "j": 7, "k": 6}

MATCHED = [
    ("ij", "ik", "kj"),  # A @ B
    ("ij", "ki", "kj"),  # A^T @ B
    ("ij", "ik", "jk"),  # A @ B^T (linear's weight layout)
    ("ij", "ki", "jk"),  # A^T @ B^T
    ("ij", "kj", "ik"),  # the operands' order does not matter
    ("ji", "ik", "kj"),  # (A @ B)^T written directly
    ("i", "ik", "k"),  # matrix-vector
    ("i", "ki", "k"),  # transposed matrix-vector
    ("j", "k", "kj"),  # vector-matrix
    ("bij", "bik", "bkj"),  # batched
    ("bij", "bik", "kj"),  # batched, shared right factor
    ("bij", "ki", "bjk"),  # batched, shared transposed left factor
]


def _args(x: str, y: str, sizes: dict[str, int], dtype) -> list[np.ndarray]:
    return [RNG.standard_normal([sizes[c] for c in s]).astype(dtype) for s in (x, y)]


@pytest.mark.parametrize("out,x,y", MATCHED)
@pytest.mark.parametrize("dtype", ["f64", "f32"])
def test_contractions_become_gemm_and_agree(out, x, y, dtype):
    np_dtype = np.float64 if dtype == "f64" else np.float32
    check(contraction(out, x, y, SIZES, dtype), _args(x, y, SIZES, np_dtype), gemm=True)


BLOCKED = {  # sizes at which two threads split the calls by rows, by columns, by batch entries and by depth
    "rows": {"b": 1, "i": 256, "j": 64, "k": 64},
    "columns": {"b": 1, "i": 8, "j": 1024, "k": 64},
    "batch": {"b": 4, "i": 64, "j": 64, "k": 32},
    "depth": {"b": 1, "i": 6, "j": 25, "k": 4099},
}


@pytest.mark.parametrize("split", BLOCKED)
@pytest.mark.parametrize("out,x,y", [("bij", "bik", "bkj"), ("bij", "bki", "bkj"), ("bij", "bik", "bjk"),
                                     ("bij", "bki", "bjk")])
def test_gemm_blocks_on_an_openmp_team(split, out, x, y):
    """On a shared OpenMP team with two threads, the calls run on blocks of C
    (or of the batch), one single-threaded call each; every layout gives
    numpy's product."""
    sizes = BLOCKED[split]
    args = _args(x, y, sizes, np.float64)
    engine = ExecutionEngine(parse_module(contraction(out, x, y, sizes)), threads=2)
    with openmp_team():
        got = engine.invoke("f", *args)
    np.testing.assert_allclose(got, np.einsum(f"{x},{y}->{out}", *args), rtol=1e-12, atol=1e-12)


def test_deep_product_accumulates_on_an_openmp_team():
    """Split along k on a team, chunk 0 keeps beta = 1 (C's contents count
    once) and the other chunks' blocks are added into C."""
    sizes = BLOCKED["depth"]
    text = contraction("ij", "ki", "kj", sizes, init="arg")
    args = _args("ki", "kj", sizes, np.float64) + [RNG.standard_normal((sizes["i"], sizes["j"]))]
    engine = ExecutionEngine(parse_module(text), threads=2)
    with openmp_team():
        got = engine.invoke("f", *args)
    np.testing.assert_allclose(got, args[0].T @ args[1] + args[2], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("out,x,y", [("ij", "ik", "kj"), ("bij", "bik", "kj"), ("i", "ki", "k")])
def test_dynamic_shapes(out, x, y):
    """Sizes from two arguments that must agree (x's k and y's k) are not
    proven, so `check-bounds` marks the map and it stays a checked loop nest."""
    text = contraction(out, x, y, SIZES, dynamic=True)
    check(text, _args(x, y, SIZES, np.float64), gemm=False)
    for sizes in ({"b": 2, "i": 1, "j": 9, "k": 4}, {"b": 1, "i": 0, "j": 3, "k": 2}, {"b": 2, "i": 3, "j": 2, "k": 0}):
        check(text, _args(x, y, sizes, np.float64), gemm=False)


@pytest.mark.parametrize("init", ["ones", "arg"])
def test_accumulating_into_existing_contents(init):
    text = contraction("ij", "ik", "kj", SIZES, init=init)
    assert "beta = 1.0" in lowered(text, TO_BLAS)
    args = _args("ik", "kj", SIZES, np.float64) + ([RNG.standard_normal((5, 7))] if init == "arg" else [])
    check(text, args, gemm=True)


def test_zero_fill_is_folded():
    text = lowered(contraction("ij", "ik", "kj", SIZES))
    assert "beta = 0.0" in text and "df.map" not in text


@pytest.mark.parametrize("out,x,y", [
    ("ij", "ik", "k"),  # j only in the output: a broadcast, not a product
    ("", "k", "k"),  # a dot product (no rows)
    ("ij", "i", "j"),  # an outer product (nothing reduced)
    ("ik", "ik", "kj"),  # k in the output
    ("ij", "ikj", "kj"),  # a variable in the output and both factors that is not a leading batch
])
def test_other_maps_are_left_alone(out, x, y):
    sizes = dict(SIZES)
    check(contraction(out, x, y, sizes), _args(x, y, sizes, np.float64), gemm=False)


def test_square_of_one_read_is_left_alone():
    text = contraction("ij", "ik", "kj", SIZES).replace("%q = arith.mulf %u, %w", "%q = arith.mulf %u, %u")
    check(text, _args("ik", "kj", SIZES, np.float64), gemm=False)


def test_mlp_gradient_uses_gemm_and_agrees():
    """Against the engine without the rewrite (which test_examples checks against references)."""
    from pathlib import Path

    text = (Path(__file__).parents[2] / "examples" / "mlp.mlir").read_text()
    module = parse_module(text)
    PassManager.parse("autodiff").run(module)
    grad_text = str(module)
    assert lowered(grad_text).count("blas.gemm") >= 8
    r = np.random.default_rng(2)
    args = [r.standard_normal((8, 784)).astype(np.float32), r.integers(0, 10, 8)] + [
        (r.standard_normal(s) * 0.05).astype(np.float32) for s in [(120, 784), (120,), (32, 120), (32,), (10, 32), (10,)]
    ] + [np.array(1.0, np.float32)]
    expected = ExecutionEngine(parse_module(grad_text), pipeline=WITHOUT).invoke("mlp_grad", *args)
    got = ExecutionEngine(parse_module(grad_text)).invoke("mlp_grad", *args)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=2e-4, atol=1e-6)


CONV = """func.func @f(%x: tensor<{xs}xf64>, %k: tensor<{ks}xf64>, %w: tensor<{ys}xf64>) -> tensor<f64> {{
  %y = nn.convolution %x, %k {{input_dimensions = array<i64: {xl}>, kernel_dimensions = array<i64: 0, 1, 2, 3>,
      output_dimensions = array<i64: {xl}>, window_strides = array<i64: 2, 1>, padding_low = array<i64: 1, 0>,
      padding_high = array<i64: 0, 2>, rhs_dilation = array<i64: 1, 2>, feature_group_count = {g} : i64}}
      : (tensor<{xs}xf64>, tensor<{ks}xf64>) -> tensor<{ys}xf64>
  %m = nn.mul %y, %w : (tensor<{ys}xf64>, tensor<{ys}xf64>) -> tensor<{ys}xf64>
  %l = nn.reduce %m {{kind = "sum", axes = array<i64: 0, 1, 2, 3>}} : (tensor<{ys}xf64>) -> tensor<f64>
  func.return %l : tensor<f64>
}}"""


CONV_CI = {(1, "NCHW", 6), (2, "NHWC", 20)}
"""The convolution cases CI runs (each value of each parameter once); `--slow` runs all eight."""


@pytest.mark.parametrize("groups,layout,wd", [
    pytest.param(g, layout, wd, marks=() if (g, layout, wd) in CONV_CI else pytest.mark.slow)
    for g in (1, 2) for layout in ("NCHW", "NHWC") for wd in (6, 20)
])  # fmt: skip
def test_convolution_and_its_gradient_are_gemms(groups, layout, wd):
    """The im2col expansion turns a convolution (strides, padding, dilation,
    feature groups) and both products of its gradient into GEMMs, with its
    patches by output position (rows of 6) or by tap (rows of 20); value and
    gradients equal PyTorch's conv2d."""
    torch = pytest.importorskip("torch")
    n, c, h, o = 2, 4, 7, 2 * (DIRECT_MAX_OUTPUTS + 1)  # more outputs per group than the direct map takes
    x = RNG.standard_normal((n, c, h, wd))
    k = RNG.standard_normal((o, c // groups, 3, 2))
    tx, tk = torch.from_numpy(x).requires_grad_(), torch.from_numpy(k).requires_grad_()
    padded = torch.nn.functional.pad(tx, (0, 2, 1, 0))  # (left, right, top, bottom)
    y = torch.nn.functional.conv2d(padded, tk, stride=(2, 1), dilation=(1, 2), groups=groups)
    w = RNG.standard_normal(tuple(y.shape))
    loss = (y * torch.from_numpy(w)).sum()
    dx, dk = torch.autograd.grad(loss, (tx, tk))
    to_layout = (0, 2, 3, 1) if layout == "NHWC" else (0, 1, 2, 3)
    xs, ys = x.transpose(to_layout), w.transpose(to_layout)
    text = CONV.format(xs="x".join(map(str, xs.shape)), ks="x".join(map(str, k.shape)), ys="x".join(map(str, ys.shape)),
                       xl="0, 3, 1, 2" if layout == "NHWC" else "0, 1, 2, 3", g=groups)
    module = parse_module(text)
    PassManager.parse("autodiff{func=f}").run(module)
    assert lowered(str(module)).count("blas.gemm") == 4  # @f: 1, @f_grad: 3
    value, gx, gk, _ = ExecutionEngine(module).invoke("f_grad", np.ascontiguousarray(xs), k,
                                                      np.ascontiguousarray(ys), np.array(1.0))
    np.testing.assert_allclose(value, loss.item(), rtol=1e-12)
    np.testing.assert_allclose(gx, dx.numpy().transpose(to_layout), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gk, dk.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.skipif(not os.path.exists("/proc/cpuinfo"), reason="reads Linux's CPU flags")
def test_kernel_set_is_reported():
    """The kernel set OpenBLAS picked, and whether it leaves AVX-512 unused:
    with `OPENBLAS_CORETYPE=Haswell` it does exactly when the CPU has AVX-512."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("from dfc.compiler.codegen import blas_runtime as b; "
            "print(b.kernels(), b.avx512_left_unused())")
    env = dict(os.environ, OPENBLAS_CORETYPE="Haswell")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.split()
    flags = next((line.split() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")), [])
    assert out == ["Haswell", str({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"} <= set(flags))]


def _transposed_factor(b_dims: str) -> str:
    """out[(z,) i, j] = sum_k x[(z,) i, k] * t[(z,) k, j], where t copies y with
    its dimensions in the order `b_dims` names them (letters z, j, k)."""
    sizes = {"z": 3, "i": 5, "j": 7, "k": 6}
    batched = "z" in b_dims
    lead = ["z"] if batched else []
    ty = lambda dims: f"tensor<{'x'.join(str(sizes[d]) for d in dims)}xf64>"  # noqa: E731
    t_dims, x_dims, out_dims = [*lead, "k", "j"], [*lead, "i", "k"], [*lead, "i", "j"]
    var = lambda dims: ", ".join(f"%{d}" for d in dims)  # noqa: E731
    return f"""func.func @f(%x: {ty(x_dims)}, %y: {ty(b_dims)}) -> {ty(out_dims)} {{
  %e = tensor.empty() : {ty(t_dims)}
  %t = df.map ({var(t_dims)}) in ({", ".join(str(sizes[d]) for d in t_dims)}) outs(%o = %e : {ty(t_dims)}) {{
    %v = df.read %y[{var(b_dims)}] : {ty(b_dims)}
    df.write %v, %o[{var(t_dims)}] : {ty(t_dims)}
  }} -> {ty(t_dims)}
  %zero = arith.constant dense<0.0> : {ty(out_dims)}
  %r = df.map ({var([*lead, "i", "j", "k"])}) in ({", ".join(str(sizes[d]) for d in [*lead, "i", "j", "k"])}) outs(%o = %zero : {ty(out_dims)}) {{
    %p = df.read %x[{var(x_dims)}] : {ty(x_dims)}
    %q = df.read %t[{var(t_dims)}] : {ty(t_dims)}
    %m = arith.mulf %p, %q : f64
    df.write %m, %o[{var(out_dims)}] wcr(add) : {ty(out_dims)}
  }} -> {ty(out_dims)}
  func.return %r : {ty(out_dims)}
}}"""


@pytest.mark.parametrize("b_dims", [
    "jk",  # x @ y^T: the GEMM reads y transposed
    "zjk",  # batched: the batch index stays first
    "jzk",  # the batch index moves: `fuse-gemm-gather` reads y in place with its batch stride
])
def test_transposed_factor_is_read_in_place(b_dims):
    """A product by a transposed copy is one GEMM on the copy's source (no
    copy is left), with the values of the interpreter."""
    text = _transposed_factor(b_dims)
    text_lowered = lowered(text)
    assert "blas.gemm" in text_lowered
    assert "scf.parallel" not in text_lowered and "scf.for" not in text_lowered
    sizes = {"z": 3, "i": 5, "j": 7, "k": 6}
    x = RNG.standard_normal([sizes[d] for d in ("zik" if "z" in b_dims else "ik")])
    y = RNG.standard_normal([sizes[d] for d in b_dims])
    check(text, [x, y], gemm=True)


GRAM = """func.func @f(%x: tensor<{n}x{m}xf64>, %w: tensor<{m}x{m}xf64>) -> tensor<f64> {{
  %z = arith.constant dense<0.0> : tensor<{m}x{m}xf64>
  %g = df.map (%k, %i, %j) in ({n}, {m}, {m}) outs(%o = %z : tensor<{m}x{m}xf64>) {{
    %u = df.read %x[%k, %i] : tensor<{n}x{m}xf64>
    %v = df.read %x[%k, %j] : tensor<{n}x{m}xf64>
    %p = arith.mulf %u, %v : f64
    df.write %p, %o[%i, %j] wcr(add) : tensor<{m}x{m}xf64>
  }} -> tensor<{m}x{m}xf64>
  %s = nn.mul %g, %w : (tensor<{m}x{m}xf64>, tensor<{m}x{m}xf64>) -> tensor<{m}x{m}xf64>
  %l = nn.reduce %s {{kind = "sum", axes = array<i64: 0, 1>}} : (tensor<{m}x{m}xf64>) -> tensor<f64>
  func.return %l : tensor<f64>
}}"""


@pytest.mark.parametrize("n,m", [(2, 1), (13, 20)])
def test_two_products_into_one_gradient_both_count(n, m):
    """The gradient of x^T x adds x @ (W + W^T) into dx from one map with two
    writes into dx: each becomes its own gemm (the split once kept only the
    last write of an output, and the gradient came out halved)."""
    module = parse_module(GRAM.format(n=n, m=m))
    PassManager.parse("autodiff").run(module)
    text = str(module)
    assert lowered(text).split("@f_grad")[1].count("blas.gemm") == 3
    x, w = RNG.standard_normal((n, m)), RNG.standard_normal((m, m))
    for threads in (1, 2):
        got = ExecutionEngine(parse_module(text), threads=threads).invoke("f_grad", x, w, np.array(1.0))
        np.testing.assert_allclose(got[0], np.sum((x.T @ x) * w), rtol=1e-12)
        np.testing.assert_allclose(got[1], x @ (w + w.T), rtol=1e-12)
        np.testing.assert_allclose(got[2], x.T @ x, rtol=1e-12)
