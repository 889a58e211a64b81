"""nn.convolution (dialects/nn_conv.py): forward and gradients against PyTorch's
conv1d/conv2d (NCHW and NHWC layouts, strides, padding, dilation, feature
groups) through the interpreter and the engine, and float64 finite differences,
each through both expansions (im2col and the direct map)."""

import numpy as np
import pytest
import torch
from support.autodiff_checks import check_gradient

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.engine import clear_jit_cache
from dfc.compiler.interpreter import interpret
from dfc.dialects import nn_expand_conv
from dfc.dialects.diagnostics import CompileError
from dfc.dialects.nn_conv import LAYOUTS
from tests.dialects.test_nn_elementwise import _t, check

RNG = np.random.default_rng(20)


@pytest.fixture(params=["im2col", "direct"])
def expansion(request, monkeypatch):
    """The expansion every nn.convolution gets (`nn_expand_conv.EXPANSION`)."""
    monkeypatch.setattr(nn_expand_conv, "EXPANSION", request.param)
    clear_jit_cache()  # the engine's cache is keyed by the text before expansion
    yield request.param
    clear_jit_cache()


def _arr(values) -> str:
    return f"array<i64: {', '.join(map(str, values))}>"


def _conv(x_shape, k_shape, out_shape, layouts, strides, low, high, dilation, groups=1, dtype="f32") -> str:
    xl, kl, ol = (LAYOUTS[name] for name in layouts)
    attrs = (
        f"{{input_dimensions = {_arr(xl)}, kernel_dimensions = {_arr(kl)}, output_dimensions = {_arr(ol)}, "
        f"window_strides = {_arr(strides)}, padding_low = {_arr(low)}, padding_high = {_arr(high)}, "
        f"rhs_dilation = {_arr(dilation)}, feature_group_count = {groups} : i64}}"
    )
    x, k, r = _t(x_shape, dtype), _t(k_shape, dtype), _t(out_shape, dtype)
    return f"""func.func @f(%x: {x}, %k: {k}) -> {r} {{
  %r = nn.convolution %x, %k {attrs} : ({x}, {k}) -> {r}
  func.return %r : {r}
}}"""


# (input NCHW, kernel OIHW, stride, padding, dilation, groups)
CASES = {
    "plain": ([2, 3, 6, 5], [4, 3, 3, 3], 1, 0, 1, 1),
    "strided_padded": ([1, 2, 7, 7], [3, 2, 3, 3], 2, 1, 1, 1),
    "dilated": ([1, 2, 8, 7], [2, 2, 2, 3], 1, (2, 1), 2, 1),
    "grouped": ([2, 4, 5, 5], [6, 2, 3, 3], 1, 1, 1, 2),
    "depthwise": ([1, 3, 5, 6], [3, 1, 3, 3], (1, 2), 1, 1, 3),
    "overpadded": ([1, 2, 5, 4], [3, 2, 2, 2], 1, 2, 1, 1),  # padding beyond the kernel's reach
    "strided_dilated_grouped": ([2, 4, 9, 8], [4, 2, 3, 2], (2, 3), (2, 1), (2, 3), 2),
    "long_rows": ([1, 2, 4, 18], [3, 2, 3, 3], 1, 1, 1, 1),  # im2col lays the patches out by tap
    "long_rows_grouped": ([2, 4, 3, 20], [6, 2, 2, 3], 1, 1, 1, 2),
    "kernel_row_16": ([1, 4, 2, 24], [4, 2, 1, 16], 1, (0, 8), 1, 2),  # Wav2Vec2's positional convolution
}


def _torch_conv(x, k, stride, padding, dilation, groups):
    return torch.nn.functional.conv2d(x, k, stride=stride, padding=padding, dilation=dilation, groups=groups)


def _pair(v):
    return (v, v) if isinstance(v, int) else v


def _conv_text(x_shape, k_shape, stride, padding, dilation, groups, layout="NCHW", dtype="f32"):
    """A 2-D convolution of NCHW/OIHW shapes (as PyTorch's) in `layout`."""
    out = _torch_conv(torch.zeros(x_shape), torch.zeros(k_shape), stride, padding, dilation, groups).shape
    to = {"NCHW": (list(x_shape), list(k_shape), list(out), ("NCHW", "OIHW", "NCHW")),
          "NHWC": ([x_shape[i] for i in (0, 2, 3, 1)], [k_shape[i] for i in (2, 3, 1, 0)], [out[i] for i in (0, 2, 3, 1)],
                   ("NHWC", "HWIO", "NHWC"))}[layout]
    return _conv(to[0], to[1], to[2], to[3], _pair(stride), _pair(padding), _pair(padding), _pair(dilation), groups, dtype)


def _module_for(name, layout="NCHW", dtype="f32"):
    x_shape, k_shape, stride, padding, dilation, groups = CASES[name]
    text = _conv_text(x_shape, k_shape, stride, padding, dilation, groups, layout, dtype)
    return text, x_shape, k_shape, (stride, padding, dilation, groups)


def _half_of_the_pairs():
    """(case, layout, expansion): every case in both layouts and through both
    expansions, but in CI only the two (layout, expansion) pairs of four that
    alternate from case to case (all four with --slow)."""
    for k, name in enumerate(sorted(CASES)):
        for i, layout in enumerate(("NCHW", "NHWC")):
            for j, how in enumerate(("im2col", "direct")):
                yield pytest.param(name, layout, how, marks=() if (k + i + j) % 2 == 0 else pytest.mark.slow)


@pytest.mark.parametrize("name,layout,expansion", list(_half_of_the_pairs()), indirect=["expansion"])
def test_convolution_matches_torch(name, layout, expansion):
    text, x_shape, k_shape, params = _module_for(name, layout)
    x, k = RNG.standard_normal(x_shape).astype(np.float32), RNG.standard_normal(k_shape).astype(np.float32)
    expected = _torch_conv(torch.tensor(x), torch.tensor(k), *params).numpy()
    if layout == "NHWC":
        x, k, expected = x.transpose(0, 2, 3, 1), k.transpose(2, 3, 1, 0), expected.transpose(0, 2, 3, 1)
    check(text, [np.ascontiguousarray(x), np.ascontiguousarray(k)], np.ascontiguousarray(expected), rtol=1e-4)


def _alternating_expansions():
    """(case, expansion): in CI each case through one expansion, alternating (both with --slow)."""
    for k, name in enumerate(sorted(CASES)):
        for j, how in enumerate(("im2col", "direct")):
            yield pytest.param(name, how, marks=() if (k + j) % 2 == 0 else pytest.mark.slow)


@pytest.mark.parametrize("name,expansion", list(_alternating_expansions()), indirect=["expansion"])
def test_convolution_gradient_matches_torch(name, expansion):
    text, x_shape, k_shape, params = _module_for(name, dtype="f64")
    x, k = RNG.standard_normal(x_shape), RNG.standard_normal(k_shape)
    tx, tk = torch.tensor(x, requires_grad=True), torch.tensor(k, requires_grad=True)
    y = _torch_conv(tx, tk, *params)
    seed = RNG.standard_normal(tuple(y.shape))
    y.backward(torch.tensor(seed))
    module = parse_module(text)
    PassManager.parse("autodiff,expand-library").run(module)
    compiled = parse_module(text)
    PassManager.parse("autodiff").run(compiled)
    for where, got in (("interpreter", interpret(module, "f_grad", x, k, seed)),
                       ("engine", ExecutionEngine(compiled).invoke("f_grad", x, k, seed))):
        np.testing.assert_allclose(got[1], tx.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=where)
        np.testing.assert_allclose(got[2], tk.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=where)


def test_conv1d_nwc_finite_differences(expansion):
    text = _conv([2, 7, 3], [3, 3, 2], [2, 2, 2], ("NWC", "WIO", "NWC"), [2], [1], [0], [2], dtype="f64")
    check_gradient(text, "f", [RNG.standard_normal((2, 7, 3)), RNG.standard_normal((3, 3, 2))], [0, 1])


def _random_geometry(rng: np.random.Generator) -> tuple:
    """A 1-, 2- or 3-D NCHW-like convolution with random batch, features,
    groups, kernel, stride, dilation and (asymmetric) padding."""
    spatial = int(rng.integers(1, 4))
    groups = int(rng.choice([1, 1, 2, 3]))
    cin, per_group = groups * int(rng.integers(1, 4)), int(rng.choice([1, 2, 5, 17]))
    taps = [int(rng.integers(1, 4)) for _ in range(spatial)]
    dilation = [int(rng.integers(1, 3)) for _ in range(spatial)]
    stride = [int(rng.integers(1, 4)) for _ in range(spatial)]
    reach = [(t - 1) * d for t, d in zip(taps, dilation)]
    low = [int(rng.integers(0, r + 2)) for r in reach]  # sometimes beyond the kernel's reach
    high = [int(rng.integers(0, r + 2)) for r in reach]
    size = [int(rng.integers(max(1, r + 1 - lo - hi), r + 34 if spatial == 1 else r + 20))
            for r, lo, hi in zip(reach, low, high)]
    return spatial, groups, cin, per_group * groups, taps, dilation, stride, low, high, size


@pytest.mark.parametrize("seed", [*range(4), *(pytest.param(s, marks=pytest.mark.slow) for s in range(4, 16))])
@pytest.mark.parametrize("how", ["auto", "direct", "im2col"])
def test_random_convolutions(seed, how, monkeypatch):
    """Random geometries (1-3 spatial dimensions, groups, strides, dilations,
    asymmetric padding, some wider than the kernel reaches): the value and both
    gradients (f64, through the engine) equal PyTorch's, with each expansion
    forced and with the automatic choice."""
    monkeypatch.setattr(nn_expand_conv, "EXPANSION", how)
    clear_jit_cache()
    rng = np.random.default_rng(1000 + seed)
    spatial, groups, cin, cout, taps, dilation, stride, low, high, size = _random_geometry(rng)
    n = int(rng.integers(1, 3))
    x, k = rng.standard_normal([n, cin, *size]), rng.standard_normal([cout, cin // groups, *taps])
    tx, tk = torch.tensor(x, requires_grad=True), torch.tensor(k, requires_grad=True)
    pad = [p for lo, hi in zip(reversed(low), reversed(high)) for p in (lo, hi)]  # F.pad: last dimension first
    conv = getattr(torch.nn.functional, f"conv{spatial}d")
    y = conv(torch.nn.functional.pad(tx, pad), tk, stride=stride, dilation=dilation, groups=groups)
    seed_grad = rng.standard_normal(tuple(y.shape))
    loss = (y * torch.tensor(seed_grad)).sum()
    loss.backward()
    dims = tuple(range(spatial + 2))
    attrs = (f"{{input_dimensions = {_arr(dims)}, kernel_dimensions = {_arr(dims)}, output_dimensions = {_arr(dims)}, "
             f"window_strides = {_arr(stride)}, padding_low = {_arr(low)}, padding_high = {_arr(high)}, "
             f"rhs_dilation = {_arr(dilation)}, feature_group_count = {groups} : i64}}")
    xt, kt, rt = _t(list(x.shape), "f64"), _t(list(k.shape), "f64"), _t(list(y.shape), "f64")
    text = f"""func.func @f(%x: {xt}, %k: {kt}, %w: {rt}) -> tensor<f64> {{
  %r = nn.convolution %x, %k {attrs} : ({xt}, {kt}) -> {rt}
  %p = nn.mul %r, %w : ({rt}, {rt}) -> {rt}
  %s = nn.reduce %p {{axes = {_arr(range(spatial + 2))}, kind = "sum"}} : ({rt}) -> tensor<f64>
  func.return %s : tensor<f64>
}}"""
    module = parse_module(text)
    PassManager.parse("autodiff{func=f}").run(module)
    value, gx, gk, _ = ExecutionEngine(module).invoke("f_grad", x, k, seed_grad, np.array(1.0))
    np.testing.assert_allclose(value, loss.item(), rtol=1e-10)
    np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gk, tk.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "args,message",
    [
        (([1, 3, 5, 5], [4, 2, 3, 3], [1, 4, 3, 3], ("NCHW", "OIHW", "NCHW"), [1, 1], [0, 0], [0, 0], [1, 1]),
         r"input features \(3\) must be kernel input features \(2\) times feature_group_count \(1\)"),
        (([1, 3, 5, 5], [4, 3, 3, 3], [1, 4, 3, 3], ("NCHW", "OIHW", "NCHW"), [1], [0, 0], [0, 0], [1, 1]),
         "window_strides has 1 elements, expected one per spatial dimension"),
        (([1, 3, 2, 5], [4, 3, 3, 3], [1, 4, 1, 3], ("NCHW", "OIHW", "NCHW"), [1, 1], [0, 0], [0, 0], [1, 1]),
         "spatial dimension 0: the kernel spans 3 elements, more than the padded input's 2"),
        (([1, 3, 5, 5], [4, 3, 3, 3], [1, 4, 4, 3], ("NCHW", "OIHW", "NCHW"), [1, 1], [0, 0], [0, 0], [1, 1]),
         r"result type tensor<1x4x4x3xf32> does not match the inferred type tensor<1x4x3x3xf32>"),
    ],
)
def test_verifier_messages(args, message):
    with pytest.raises(CompileError, match=message):
        parse_module(_conv(*args))


@pytest.mark.parametrize("x_shape,k_shape,padding,stride,layout,direct", [
    ([64, 1, 28, 28], [6, 1, 5, 5], 2, 1, "NCHW", True),  # LeNet-5's first layer
    ([32, 256, 7, 7], [256, 1, 3, 3], 1, 1, "NCHW", True),  # depthwise: 1 output per group, 9 terms
    ([32, 64, 32, 32], [64, 1, 3, 3], 1, 2, "NCHW", True),  # the same, strided
    ([64, 3, 32, 32], [8, 3, 5, 5], 2, 1, "NCHW", True),  # 75 terms per output on rows of 32
    ([64, 3, 64, 64], [8, 3, 5, 5], 2, 2, "NCHW", False),  # the same read with stride 2
    ([64, 6, 14, 14], [8, 6, 5, 5], 0, 1, "NCHW", False),  # 150 terms per output on rows of 10
    ([64, 1, 14, 14], [6, 1, 5, 5], 0, 1, "NCHW", True),  # rows of 10, but 25 terms
    ([32, 16, 32, 32], [16, 16, 3, 3], 1, 1, "NCHW", True),  # 144 terms per output on rows of 32
    ([64, 6, 28, 28], [32, 6, 5, 5], 2, 1, "NCHW", False),  # 32 output features
    ([32, 16, 8, 8], [16, 16, 1, 1], 0, 1, "NCHW", True),  # rows of 8, 16 terms
    ([32, 16, 32, 32], [16, 16, 1, 1], 0, 2, "NCHW", False),  # 16 terms, but 16 features read with stride 2
    ([32, 16, 32, 32], [8, 16, 1, 1], 0, 2, "NCHW", True),  # the same with 8 features
    ([64, 1, 28, 28], [6, 1, 5, 5], 2, 1, "NHWC", False),  # the positions' loop would read strided
])
def test_expansion_choice(x_shape, k_shape, padding, stride, layout, direct):
    """`is_direct` picks the direct map for few output features on rows it can
    vectorise (or few terms per output), im2col otherwise."""
    module = parse_module(_conv_text(x_shape, k_shape, stride, padding, 1, x_shape[1] // k_shape[1], layout))
    (op,) = [o for o in module.walk() if o.name == "nn.convolution"]
    assert nn_expand_conv.is_direct(op) == direct


@pytest.mark.parametrize("x_shape,k_shape,block", [
    ([32, 16, 32, 32], [16, 16, 3, 3], 4),  # 4 features x 3 taps
    ([64, 1, 28, 28], [6, 1, 5, 5], 3),  # LeNet-5's first layer: 3 x 5
    ([16, 3, 32, 32], [16, 3, 7, 7], 2),  # 2 x 7
    ([8, 3, 64, 64], [8, 3, 11, 11], 1),  # a row of 11 taps alone
    ([8, 3, 16, 16], [5, 3, 3, 3], 1),  # 5 features: no divisor up to 4 but 1
    ([8, 12, 16, 16], [12, 6, 3, 3], 3),  # 2 groups of 6
    ([32, 64, 32, 32], [64, 1, 3, 3], 1),  # depthwise
    ([2, 4, 1, 40], [4, 2, 1, 16], 1),  # a row of 16 taps, more than the emitter unrolls: one feature
])
def test_direct_feature_block(x_shape, k_shape, block):
    """A direct convolution computes the largest block of output features (up to
    4) dividing its features per group whose terms with the kernel row's taps stay
    within what the emitter unrolls (15). Values with blocks of 1 to 4 are checked
    against PyTorch above (CASES and the random geometries, direct forced)."""
    groups = x_shape[1] // k_shape[1]
    module = parse_module(_conv_text(x_shape, k_shape, 1, k_shape[-1] // 2, 1, groups))
    (op,) = [o for o in module.walk() if o.name == "nn.convolution"]
    assert nn_expand_conv._feature_block(op) == block
