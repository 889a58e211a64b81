"""nn.col2im (dialects/nn_conv.py; a wcr(add) map and a slice): forward against PyTorch's F.fold (2-D) and a
direct scatter-add of the columns in numpy (1-D, 3-D, integers) on the interpreter and the engine; its gradient
against float64 finite differences; its verifier."""

import itertools
import re

import numpy as np
import pytest
import torch
from support.autodiff_checks import check_gradient

from dfc.compiler import parse_module
from tests.dialects.test_nn_elementwise import _t, run_both

RNG = np.random.default_rng(35)


def _arr(values) -> str:
    return f"array<i64: {', '.join(map(str, values))}>"


def _positions(image, block, strides, low, high, dilations):
    return [(d + lo + hi - (k - 1) * r - 1) // s + 1 for d, k, s, lo, hi, r in
            zip(image, block, strides, low, high, dilations)]


def _col2im(x_shape, out_shape, geometry, dtype="f64") -> str:
    names = ("image_shape", "block_shape", "strides", "padding_low", "padding_high", "dilations")
    attrs = ", ".join(f"{n} = {_arr(v)}" for n, v in zip(names, geometry))
    x, r = _t(x_shape, dtype), _t(out_shape, dtype)
    return f"""func.func @f(%x: {x}) -> {r} {{
  %r = nn.col2im %x {{{attrs}}} : ({x}) -> {r}
  func.return %r : {r}
}}"""


def _scatter_add(x, image, block, strides, low, high, dilations):
    """The definition: every column value added at its tap's position (those in the padding dropped)."""
    n, ck, _ = x.shape
    taps = list(itertools.product(*(range(k) for k in block)))
    c = ck // len(taps)
    out = np.zeros((n, c, *image), x.dtype)
    grid = list(itertools.product(*(range(m) for m in _positions(image, block, strides, low, high, dilations))))
    cols = x.reshape(n, c, len(taps), len(grid))
    for t, tap in enumerate(taps):
        for g, pos in enumerate(grid):
            at = [p * s + k * r - lo for p, s, k, r, lo in zip(pos, strides, tap, dilations, low)]
            if all(0 <= a < d for a, d in zip(at, image)):
                out[(slice(None), slice(None), *at)] += cols[:, :, t, g]
    return out


# (N, C, image, block, strides, padding low, padding high, dilations)
FOLD_2D = {
    "plain": (2, 3, (4, 5), (2, 2), (1, 1), (0, 0), (0, 0), (1, 1)),
    "strided_dilated_padded": (1, 2, (6, 7), (3, 2), (2, 3), (1, 2), (1, 2), (2, 1)),
    "taps_in_padding_only": (1, 1, (4, 4), (1, 1), (3, 3), (2, 2), (2, 2), (1, 1)),  # some columns land nowhere
}


@pytest.mark.parametrize("name", [n if n != "plain" else pytest.param(n, marks=pytest.mark.slow) for n in sorted(FOLD_2D)])
def test_col2im_matches_torch_fold(name):
    n, c, image, block, strides, low, high, dilations = FOLD_2D[name]
    blocks = int(np.prod(_positions(image, block, strides, low, high, dilations)))
    x = RNG.standard_normal((n, c * int(np.prod(block)), blocks))
    want = torch.nn.functional.fold(torch.tensor(x), image, block, dilation=dilations, padding=low,
                                    stride=strides).numpy()
    text = _col2im(x.shape, [n, c, *image], (image, block, strides, low, high, dilations))
    for engine, got in zip(("interpreter", "engine"), run_both(text, [x])):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14, err_msg=engine)


@pytest.mark.parametrize("dtype,geometry", [
    ("f32", ((7,), (3,), (2,), (2,), (1,), (2,))),  # 1-D, uneven padding
    pytest.param("i32", ((3, 4, 5), (1, 2, 3), (1, 2, 1), (0, 1, 1), (0, 0, 1), (1, 1, 2)),  # 3-D, integers: exact
                 marks=pytest.mark.slow),
])
def test_col2im_any_rank_as_the_scatter_add(dtype, geometry):
    image, block = geometry[0], geometry[1]
    blocks = int(np.prod(_positions(*geometry)))
    x = RNG.integers(-50, 50, (2, 2 * int(np.prod(block)), blocks)).astype(np.dtype({"f32": "float32",
                                                                                     "i32": "int32"}[dtype]))
    want = _scatter_add(x, *geometry)
    for engine, got in zip(("interpreter", "engine"), run_both(_col2im(x.shape, [2, 2, *image], geometry, dtype),
                                                               [x])):
        assert got.dtype == want.dtype, engine
        np.testing.assert_array_equal(got, want, err_msg=engine)


@pytest.mark.parametrize("engine", [False, True], ids=["interpreter", "engine"])
def test_col2im_gradient(engine):
    """The gradient (the map reads the padded image's gradient per column value) by finite differences."""
    geometry = ((4, 3), (2, 2), (2, 1), (1, 0), (0, 1), (1, 2))
    blocks = int(np.prod(_positions(*geometry)))
    text = _col2im([1, 4, blocks], [1, 1, 4, 3], geometry)
    check_gradient(text, "f", [RNG.standard_normal((1, 4, blocks))], [0], engine=engine)


@pytest.mark.parametrize("x_shape,geometry,message", [
    ([1, 8, 8], ((4, 4), (2, 2), (1, 1), (0, 0), (0, 0), (1, 1)), "at [3, 3] positions"),
    ([1, 6, 9], ((4, 4), (2, 2), (1, 1), (0, 0), (0, 0), (1, 1)), "(K = 4)"),
    ([1, 4, 1], ((2, 2), (3, 2), (1, 1), (0, 0), (0, 0), (1, 1)), "the block spans 3 elements"),
    ([1, 4, 4], ((3, 3), (2, 2), (0, 1), (0, 0), (0, 0), (1, 1)), "must be at least 1"),
])
def test_col2im_verifier(x_shape, geometry, message):
    text = _col2im(x_shape, [1, 1, *geometry[0]], geometry)
    with pytest.raises(Exception, match=re.escape(message)):
        module = parse_module(text)
        module.verify()
