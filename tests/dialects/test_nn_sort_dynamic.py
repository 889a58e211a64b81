"""nn.argsort of inputs with a run-time (`?`) dimension (dialects/nn_expand_sort_dynamic.py, the bitonic
network) on the interpreter and the engine against NumPy's and PyTorch's stable sorts: rows of every length
around powers of two (0, 1, 2, 3, 5, 8, 13), floats with NaN, -0.0, infinities and ties, signed and unsigned
integers, descending, along a static axis of a run-time-sized array and along the run-time axis, top-k
(one case in the default run, the rest with --slow)."""

import numpy as np
import pytest

from tests.dialects.test_nn_elementwise import check
from tests.dialects.test_nn_sort import _floats
from tests.dialects.test_nn_sort import _reference as _torch_reference

RNG = np.random.default_rng(36)
SLOW = pytest.mark.slow


def _reference(x, axis, descending):
    """NumPy's stable order ascending (no torch import in the default run); PyTorch's descending."""
    if descending:
        return _torch_reference(x, axis, True)
    return np.argsort(x, axis=axis, kind="stable").astype(np.int64)


def _argsort(shape, dtype, axis, flags="", k=None) -> str:
    """A function sorting an argument whose `None` dimensions are run-time sizes."""
    dims = ["?" if d is None else str(d) for d in shape]
    out = [str(k) if d == axis % len(shape) and k is not None else n for d, n in enumerate(dims)]
    x, r = f"tensor<{'x'.join(dims)}x{dtype}>", f"tensor<{'x'.join(out)}xi64>"
    attrs = ", ".join([f"axis = {axis} : i64", *flags.split(), *([f"k = {k} : i64"] if k is not None else [])])
    return f"""func.func @f(%x: {x}) -> {r} {{
  %r = nn.argsort %x {{{attrs}}} : ({x}) -> {r}
  func.return %r : {r}
}}"""


@pytest.mark.parametrize("n", [13, *(pytest.param(n, marks=SLOW) for n in (0, 1, 2, 3, 5, 8, 16, 17))])
@pytest.mark.parametrize("descending", [False, pytest.param(True, marks=SLOW)])
def test_run_time_axis(n, descending):
    x = _floats((n,), np.float32) if n >= 6 else np.round(RNG.standard_normal(n)).astype(np.float32)
    check(_argsort([None], "f32", 0, "descending" if descending else ""), [x], _reference(x, 0, descending))


@pytest.mark.parametrize("shape,dims,axis,descending", [
    pytest.param((7, 3), [None, 3], 0, True, marks=SLOW), pytest.param((7, 3), [None, 3], 1, False, marks=SLOW),
    pytest.param((2, 9, 3), [2, None, 3], 1, False, marks=SLOW), pytest.param((4, 5), [4, None], 0, True, marks=SLOW),
])
def test_rank_two_and_three(shape, dims, axis, descending):
    x = _floats(shape, np.float64)
    check(_argsort(dims, "f64", axis, "descending" if descending else ""), [x], _reference(x, axis, descending))


@pytest.mark.parametrize("dtype,mlir,flags", [
    pytest.param(np.uint8, "i8", "unsigned", marks=SLOW), pytest.param(np.int64, "i64", "descending", marks=SLOW),
    pytest.param(np.uint64, "i64", "unsigned descending", marks=SLOW),
])
def test_integers(dtype, mlir, flags):
    info = np.iinfo(dtype)
    x = RNG.integers(max(info.min, -3), min(info.max, 3), 11, endpoint=True).astype(dtype)
    x[:4] = [info.min, info.max, info.min, info.max]
    expected = _reference(x.astype(np.float64) if info.kind == "u" else x, 0, "descending" in flags)
    signed = x.view({1: np.int8, 8: np.int64}[x.itemsize]) if info.kind == "u" else x
    check(_argsort([None], mlir, 0, flags), [signed], expected)


@pytest.mark.slow
def test_top_k_along_a_static_axis():
    x = _floats((5, 9), np.float32)
    check(_argsort([None, 9], "f32", 1, "", k=3), [x], _reference(x, 1, False)[:, :3])
