"""nn.nonzero and nn.gather_points (dialects/nn_dynamic.py), whose results have
a data-dependent size, on the interpreter and the engine against NumPy
(`argwhere`, `nonzero`, `x[mask]`): float, integer and boolean inputs, NaN and
-0.0, the empty result, a 0-d input; reductions over the dynamic size and the
gradient of the gathered values against float64 finite differences."""

import numpy as np
import pytest
from support.autodiff_checks import check_gradient

from tests.dialects.test_nn_elementwise import _t, check

RNG = np.random.default_rng(35)
SLOW = pytest.mark.slow


def _nonzero(shape, dtype, transposed=False) -> str:
    r = f"tensor<{len(shape)}x?xi64>" if transposed else f"tensor<?x{len(shape)}xi64>"
    flag = " {transposed}" if transposed else ""
    return f"""func.func @f(%x: {_t(shape, dtype)}) -> {r} {{
  %r = nn.nonzero %x{flag} : ({_t(shape, dtype)}) -> {r}
  func.return %r : {r}
}}"""


def _masked(shape, k, dtype="f32", reduce=None) -> str:
    """x[m] for a mask m of x's first k dimensions, optionally reduced over the points."""
    x, m, i = _t(shape, dtype), _t(shape[:k], "i1"), f"tensor<?x{k}xi64>"
    g = f"tensor<?x{'x'.join(map(str, shape[k:]))}{'x' if shape[k:] else ''}{dtype}>"
    r, tail = g, ""
    if reduce:
        r = _t(shape[k:], dtype)
        tail = f'\n  %s = nn.reduce %g {{kind = "{reduce}", axes = array<i64: 0>}} : ({g}) -> {r}'
    return f"""func.func @f(%x: {x}, %m: {m}) -> {r} {{
  %i = nn.nonzero %m : ({m}) -> {i}
  %g = nn.gather_points %x, %i {{axis = 0 : i64}} : ({x}, {i}) -> {g}{tail}
  func.return %{"s" if reduce else "g"} : {r}
}}"""


def test_nonzero_of_floats_in_row_major_order():
    x = np.float32([[0, 1, -0.0, np.nan], [0, 0, 2, 0], [np.inf, 1, 0, -3]])
    check(_nonzero([3, 4], "f32"), [x], np.argwhere(x))
    check(_nonzero([3, 4], "f32", transposed=True), [x], np.stack(np.nonzero(x)))


@pytest.mark.parametrize("dtype,mlir", [(bool, "i1"), pytest.param(np.int32, "i32", marks=SLOW),
                                        pytest.param(np.int8, "i8", marks=SLOW)])
def test_nonzero_of_integers_and_booleans(dtype, mlir):
    x = RNG.integers(-1, 2, (2, 3, 5)).astype(dtype)
    check(_nonzero([2, 3, 5], mlir), [x], np.argwhere(x))


def test_nonzero_of_nothing_and_of_a_scalar():
    """All zero: a 0xR result; a 0-d input: one empty coordinate when nonzero."""
    check(_nonzero([4, 3], "f32"), [np.zeros((4, 3), np.float32)], np.zeros((0, 2), np.int64))
    check(_nonzero([0, 3], "f32"), [np.zeros((0, 3), np.float32)], np.zeros((0, 2), np.int64))
    check(_nonzero([], "f32"), [np.array(2.0, np.float32)], np.zeros((1, 0), np.int64))
    check(_nonzero([], "f32"), [np.array(0.0, np.float32)], np.zeros((0, 0), np.int64))


@pytest.mark.parametrize("shape,k", [((3, 4, 2), 2), pytest.param((5, 3), 1, marks=SLOW),
                                     pytest.param((6,), 1, marks=SLOW)])
def test_masked_values(shape, k):
    x, m = RNG.standard_normal(shape).astype(np.float32), RNG.random(shape[:k]) < 0.5
    check(_masked(list(shape), k), [x, m], x[m])
    check(_masked(list(shape), k), [x, np.zeros_like(m)], x[np.zeros_like(m)])


def test_a_column_of_the_coordinates():
    """`np.nonzero(x)[1]`: gather_points at one point (indices of shape [1]) drops the dimension."""
    x, i, c = _t([3, 4], "f32"), "tensor<?x2xi64>", _t([1], "i64")
    text = f"""func.func @f(%x: {x}, %c: {c}) -> tensor<?xi64> {{
  %i = nn.nonzero %x : ({x}) -> {i}
  %r = nn.gather_points %i, %c {{axis = 1 : i64}} : ({i}, {c}) -> tensor<?xi64>
  func.return %r : tensor<?xi64>
}}"""
    x = (RNG.random((3, 4)) < 0.5).astype(np.float32)
    check(text, [x, np.int64([1])], np.nonzero(x)[1])


@pytest.mark.parametrize("kind", ["mean", pytest.param("sum", marks=SLOW), pytest.param("max", marks=SLOW),
                                  pytest.param("min", marks=SLOW)])
def test_reductions_over_the_points(kind):
    x, m = RNG.standard_normal((4, 3, 2)), RNG.random((4, 3)) < 0.5
    m[0, 0] = True
    check(_masked([4, 3, 2], 2, "f64", kind), [x, m], getattr(np, kind)(x[m], axis=0))


def test_mean_of_no_points_is_nan():
    x, m = RNG.standard_normal((4, 2)), np.zeros(4, bool)
    check(_masked([4, 2], 1, "f64", "mean"), [x, m], np.full(2, np.nan))


@pytest.mark.parametrize("kind", ["sum", pytest.param("max", marks=SLOW)])
def test_gradient_through_the_points(kind):
    """d sum(reduce(x[m])) / dx: the cotangent scattered (added) back to the points, zero elsewhere."""
    text = _masked([2, 3, 2], 2, "f64", kind).replace("tensor<2xf64>", "tensor<f64>").replace(
        "axes = array<i64: 0>", "axes = array<i64: 0, 1>")
    mask = np.array([[True, False, True], [False, False, True]])
    check_gradient(text, "f", [RNG.standard_normal((2, 3, 2)), mask], [0])


def _unique(n, dtype, part, flags="") -> str:
    r = _t([n], "i64") if part == "inverse" else f"tensor<?x{dtype if part == 'values' else 'i64'}>"
    attrs = ", ".join([f'part = "{part}"', *flags.split()])
    return f"""func.func @f(%x: {_t([n], dtype)}) -> {r} {{
  %r = nn.unique %x {{{attrs}}} : ({_t([n], dtype)}) -> {r}
  func.return %r : {r}
}}"""


def _first_occurrence_order(x):
    """np.unique's four results, the distinct values in the order of their first occurrence (ONNX's sorted=0)."""
    values, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    order = np.argsort(first, kind="stable")
    return values[order], first[order], np.argsort(order)[inverse], counts[order]


@pytest.mark.parametrize("flags", ["", "first_occurrence", pytest.param("equal_nan", marks=SLOW)])
def test_unique_parts(flags):
    """Sorted (NaN last and each NaN distinct, -0.0 equal to 0.0) or in first-occurrence order."""
    x = np.float32([2, 1, np.nan, 1, 3, -0.0, 0.0, 2, np.nan, 5])
    if flags == "first_occurrence":
        x = RNG.integers(-3, 4, 12).astype(np.float32)
        expected = _first_occurrence_order(x)
    else:
        expected = np.unique(x, return_index=True, return_inverse=True, return_counts=True,
                             equal_nan=flags == "equal_nan")
    for part, want in zip(("values", "indices", "inverse", "counts"), expected):
        check(_unique(x.size, "f32", part, flags), [x], want.astype(x.dtype if part == "values" else np.int64))


def test_unique_of_integers_and_of_nothing():
    x = np.int64([5, 3, 5, -(2**63), 3, 2**63 - 1])
    check(_unique(6, "i64", "values"), [x], np.unique(x))
    check(_unique(6, "i64", "counts"), [x], np.unique(x, return_counts=True)[1])
    check(_unique(0, "f32", "values"), [np.zeros(0, np.float32)], np.zeros(0, np.float32))
    check(_unique(0, "f32", "inverse"), [np.zeros(0, np.float32)], np.zeros(0, np.int64))


def test_gradient_of_unique_values():
    """sum(max(unique(x))): the cotangent reaches the element each value was read from."""
    x = _t([6], "f64")
    text = f"""func.func @f(%x: {x}) -> tensor<f64> {{
  %v = nn.unique %x {{part = "values", first_occurrence}} : ({x}) -> tensor<?xf64>
  %s = nn.reduce %v {{kind = "max", axes = array<i64: 0>}} : (tensor<?xf64>) -> tensor<f64>
  func.return %s : tensor<f64>
}}"""
    check_gradient(text, "f", [np.array([0.5, 2.0, 0.25, 3.5, -1.0, 3.0])], [0])
