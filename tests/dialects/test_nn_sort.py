"""nn.argsort (dialects/nn_sort.py) on the interpreter and the engine against
NumPy's and PyTorch's stable sorts: ties in index order, NaN last ascending
and first descending, -0.0 tying 0.0, every element type (unsigned integers
as their bits); sorted values (a gather by the permutation) differentiated
against float64 finite differences."""

import numpy as np
import pytest
from support.autodiff_checks import check_gradient

from dfc.compiler import parse_module
from dfc.dialects.diagnostics import CompileError
from tests.dialects.test_nn_elementwise import _t, check

RNG = np.random.default_rng(34)


def _argsort(shape, dtype, axis, flags="", k=None) -> str:
    out = [k if d == axis % len(shape) and k is not None else n for d, n in enumerate(shape)]
    x, r = _t(shape, dtype), _t(out, "i64")
    attrs = ", ".join([f"axis = {axis} : i64", *flags.split(), *([f"k = {k} : i64"] if k is not None else [])])
    return f"""func.func @f(%x: {x}) -> {r} {{
  %r = nn.argsort %x {{{attrs}}} : ({x}) -> {r}
  func.return %r : {r}
}}"""


def _floats(shape, dtype):
    x = np.round(RNG.standard_normal(shape) * 2).astype(dtype)  # many ties
    flat = x.reshape(-1)
    flat[RNG.choice(flat.size, 6, replace=False)] = [np.nan, np.nan, np.inf, -np.inf, -0.0, 0.0]
    return x


def _reference(x, axis, descending):
    """The stable permutation by PyTorch (descending: NaN first), NumPy's ascending."""
    torch = pytest.importorskip("torch")
    if not descending:
        return np.argsort(x, axis=axis, kind="stable").astype(np.int64)
    return torch.sort(torch.from_numpy(x), dim=axis, descending=True, stable=True).indices.numpy()


SLOW = pytest.mark.slow


@pytest.mark.parametrize("shape,axis,descending", [
    ((4, 7), 1, False), pytest.param((6, 3, 2), 0, True, marks=SLOW),
    pytest.param((4, 7), 1, True, marks=SLOW), pytest.param((6, 3, 2), 0, False, marks=SLOW),
    pytest.param((9,), -1, False, marks=SLOW), pytest.param((9,), -1, True, marks=SLOW),
])
def test_argsort_of_floats(shape, axis, descending):
    x = _floats(shape, np.float32)
    check(_argsort(shape, "f32", axis, "descending" if descending else ""), [x], _reference(x, axis, descending))


@pytest.mark.parametrize("dtype,mlir,descending", [
    (np.int64, "i64", True),
    pytest.param(np.int64, "i64", False, marks=SLOW), pytest.param(np.int32, "i32", False, marks=SLOW),
    pytest.param(np.int8, "i8", True, marks=SLOW),
])
def test_argsort_of_signed_integers(dtype, mlir, descending):
    info = np.iinfo(dtype)
    x = RNG.integers(-3, 3, (3, 8)).astype(dtype)
    x[0, :3] = [info.min, info.max, info.min]
    check(_argsort([3, 8], mlir, 1, "descending" if descending else ""), [x], _reference(x, 1, descending))


@pytest.mark.parametrize("descending", [False, pytest.param(True, marks=SLOW)])
def test_argsort_of_unsigned_bits(descending):
    u = np.array([[0, 255, 128, 1, 127, 255, 0, 129]], np.uint8)
    expected = _reference(u.astype(np.int64), 1, descending)
    check(_argsort([1, 8], "i8", 1, "unsigned" + (" descending" if descending else "")), [u.view(np.int8)], expected)


@pytest.mark.parametrize("descending", [True, pytest.param(False, marks=SLOW)])
def test_argsort_of_booleans(descending):
    x = RNG.integers(0, 2, (2, 9)).astype(bool)
    check(_argsort([2, 9], "i1", 1, "descending" if descending else ""), [x], _reference(x, 1, descending))


def _top_k_inputs():
    f = np.round(RNG.standard_normal((3, 40)) * 2).astype(np.float32)
    f[0, [3, 9, 20]] = np.nan
    f[1, :5] = [np.inf, -np.inf, -0.0, 0.0, np.nan]
    f[2, :] = np.nan  # rounds past every number reach the NaNs (ascending), or start with them
    f[2, 7] = 1.0
    i = RNG.integers(-3, 3, (3, 40))
    i[0, :3] = [2**63 - 1, -(2**63), 2**63 - 1]
    u = RNG.integers(0, 256, (2, 40)).astype(np.uint8)
    u[0, :4] = [255, 128, 0, 255]
    return {"f32": f, "i64": i, "i8": u, "i1": RNG.integers(0, 2, (2, 40)).astype(bool)}


@pytest.mark.parametrize("dtype,flags,k", [
    ("f32", "descending", 8), ("i8", "unsigned descending", 4), pytest.param("f32", "descending", 12, marks=SLOW),
    pytest.param("f32", "", 5, marks=SLOW), pytest.param("i64", "descending", 3, marks=SLOW),
    pytest.param("i1", "", 2, marks=SLOW), pytest.param("f32", "", 1, marks=SLOW), pytest.param("i64", "", 6, marks=SLOW),
    pytest.param("i8", "unsigned", 12, marks=SLOW), pytest.param("i1", "descending", 5, marks=SLOW),
])
def test_first_k_positions(dtype, flags, k):
    """`k` (top-k): by selection rounds for k <= 8 of 40, by ranks past that; the first k of the sort."""
    x = _top_k_inputs()[dtype]
    keys = x.astype(np.int64) if x.dtype == np.uint8 else x
    expected = _reference(keys, 1, "descending" in flags)[:, :k]
    check(_argsort(list(x.shape), dtype, 1, flags, k), [x.view(np.int8) if x.dtype == np.uint8 else x], expected)


def test_argsort_of_a_scalar_and_of_one_element():
    check(_argsort([], "f32", 0), [np.array(3.0, np.float32)], np.array(0, np.int64))
    check(_argsort([3, 1], "f32", 1), [np.ones((3, 1), np.float32)], np.zeros((3, 1), np.int64))


def test_sorted_values_gradient():
    """sum(w * sort(x)) differentiates to w scattered back by the permutation."""
    x, i, r = _t([3, 5], "f64"), _t([3, 5], "i64"), _t([], "f64")
    gather = ("offset_dims = array<i64>, collapsed_slice_dims = array<i64: 1>, operand_batching_dims = array<i64: 0>, "
              "start_indices_batching_dims = array<i64: 0>, start_index_map = array<i64: 1>, index_vector_dim = 2 : i64, "
              "slice_sizes = array<i64: 1, 1>")
    text = f"""func.func @f(%x: {x}, %w: {x}) -> {r} {{
  %i = nn.argsort %x {{axis = 1 : i64, descending}} : ({x}) -> {i}
  %s = nn.gather %x, %i {{{gather}}} : ({x}, {i}) -> {x}
  %p = nn.mul %s, %w : ({x}, {x}) -> {x}
  %r = nn.reduce %p {{kind = "sum", axes = array<i64: 0, 1>}} : ({x}) -> {r}
  func.return %r : {r}
}}"""
    check_gradient(text, "f", [RNG.standard_normal((3, 5)), RNG.standard_normal((3, 5))], [0, 1])


@pytest.mark.parametrize(
    "text,message",
    [
        (_argsort([3, 4], "f32", 2), "axis 2 is out of range for rank 2"),
        (_argsort([3, 4], "f32", 1, "unsigned"), "unsigned is for integer inputs"),
        (_argsort([3, 4], "f32", 1, "", 5), r"k = 5 is not in \[0, 4\]"),
    ],
)
def test_verifier_messages(text, message):
    with pytest.raises(CompileError, match=message):
        parse_module(text)
