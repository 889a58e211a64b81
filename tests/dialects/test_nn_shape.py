"""The shape nn ops (dialects/nn_shape.py): forward against numpy through the
interpreter and the engine, gradients against float64 finite differences."""

import numpy as np
import pytest

from dfc.compiler import PassManager, parse_module
from dfc.dialects.diagnostics import CompileError
from support.autodiff_checks import check_gradient
from tests.dialects.test_nn_elementwise import _t, check

RNG = np.random.default_rng(15)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _module(op: str, operands: str, arg_types, result_type, attrs: str = "") -> str:
    params = ", ".join(f"%a{k}: {t}" for k, t in enumerate(arg_types))
    return f"""func.func @f({params}) -> {result_type} {{
  %r = {op} {operands} {attrs} : ({", ".join(arg_types)}) -> {result_type}
  func.return %r : {result_type}
}}"""


def _arr(values) -> str:
    return f"array<i64: {', '.join(map(str, values))}>" if values else "array<i64>"


def numpy_pad(x, value, low, high, interior):
    """StableHLO pad: interior first, then edges (negative edges crop)."""
    for k, (lo, hi, i) in enumerate(zip(low, high, interior)):
        n = x.shape[k]
        shape = list(x.shape)
        shape[k] = n + max(n - 1, 0) * i
        spread = np.full(shape, value, dtype=x.dtype)
        index = [slice(None)] * x.ndim
        index[k] = slice(0, None, i + 1)
        spread[tuple(index)] = x
        before = [(0, 0)] * x.ndim
        before[k] = (max(lo, 0), max(hi, 0))
        spread = np.pad(spread, before, constant_values=value)
        crop = [slice(None)] * x.ndim
        crop[k] = slice(max(-lo, 0), spread.shape[k] - max(-hi, 0))
        x = spread[tuple(crop)]
    return x


SLICES = [([0, 0], [5, 6], [1, 1]), ([1, 0], [5, 5], [2, 3]), ([4, 2], [5, 6], [1, 4])]


@pytest.mark.parametrize("start,limit,strides", SLICES)
def test_slice(start, limit, strides):
    x = rand(5, 6)
    expected = x[tuple(slice(a, b, s) for a, b, s in zip(start, limit, strides))]
    attrs = f"{{start_indices = {_arr(start)}, limit_indices = {_arr(limit)}, strides = {_arr(strides)}}}"
    check(_module("nn.slice", "%a0", [_t([5, 6])], _t(expected.shape), attrs), [x], expected)


PADS = [([1, 2], [0, 1], [0, 0]), ([0, -1], [2, 3], [1, 2]), ([-2, 1], [-1, -2], [2, 1]), ([3, 0], [0, 0], [0, 0])]


@pytest.mark.parametrize("low,high,interior", PADS)
def test_pad(low, high, interior):
    x, value = rand(4, 3), np.float32(7.5)
    expected = numpy_pad(x, value, low, high, interior)
    attrs = f"{{edge_padding_low = {_arr(low)}, edge_padding_high = {_arr(high)}, interior_padding = {_arr(interior)}}}"
    text = _module("nn.pad", "%a0, %a1", [_t([4, 3]), _t([])], _t(expected.shape), attrs)
    check(text, [x, np.asarray(value)], expected)


@pytest.mark.parametrize("dim", [0, 1])
def test_concatenate(dim):
    shapes = [[2, 3], [1, 3]] if dim == 0 else [[2, 3], [2, 1], [2, 2]]
    xs = [rand(*s) for s in shapes]
    expected = np.concatenate(xs, axis=dim)
    operands = ", ".join(f"%a{k}" for k in range(len(xs)))
    text = _module("nn.concatenate", operands, [_t(s) for s in shapes], _t(expected.shape), f"{{dimension = {dim} : i64}}")
    check(text, xs, expected)


@pytest.mark.parametrize("dims", [[0], [1], [0, 2]])
def test_reverse(dims):
    x = rand(2, 3, 4)
    text = _module("nn.reverse", "%a0", [_t([2, 3, 4])], _t([2, 3, 4]), f"{{dimensions = {_arr(dims)}}}")
    check(text, [x], np.flip(x, axis=dims))


@pytest.mark.parametrize("dtype,dim", [("f32", 0), ("i32", 1), ("f64", 2)])
def test_iota(dtype, dim):
    np_dtype = {"f32": np.float32, "f64": np.float64, "i32": np.int32}[dtype]
    shape = [2, 3, 4]
    text = f"""func.func @f() -> {_t(shape, dtype)} {{
  %r = nn.iota {{iota_dimension = {dim} : i64}} : {_t(shape, dtype)}
  func.return %r : {_t(shape, dtype)}
}}"""
    expected = np.broadcast_to(np.arange(shape[dim]).reshape([-1 if k == dim else 1 for k in range(3)]), shape)
    check(text, [], expected.astype(np_dtype))


@pytest.mark.parametrize(
    "shape,dims,out",
    [([3], [1], [2, 3]), ([3, 1], [0, 2], [3, 2, 4]), ([4, 3], [1, 0], [3, 4]), ([1], [0], [5]), ([], [], [2, 2])],
)
def test_broadcast_in_dim(shape, dims, out):
    x = rand(*shape)
    # numpy: put operand dim k at result dim dims[k], size-1 dims broadcast
    order = np.argsort(dims)
    view = np.transpose(x, order) if len(shape) > 1 else x
    expanded = view.reshape([shape[order[list(np.sort(dims)).index(d)]] if d in dims else 1 for d in range(len(out))])
    expected = np.broadcast_to(expanded, out)
    text = _module("nn.broadcast_in_dim", "%a0", [_t(shape)], _t(out), f"{{broadcast_dimensions = {_arr(dims)}}}")
    check(text, [x], expected)


DYNAMIC_STARTS = [(1, 2), (-3, 1), (4, 9)]  # in range, clamped up, clamped down


@pytest.mark.parametrize("starts", DYNAMIC_STARTS)
def test_dynamic_slice_clamps(starts):
    x = rand(5, 6)
    i, j = np.asarray(starts[0], np.int64), np.asarray(starts[1], np.int32)
    text = _module(
        "nn.dynamic_slice", "%a0, %a1, %a2", [_t([5, 6]), _t([], "i64"), _t([], "i32")], _t([3, 4]),
        f"{{slice_sizes = {_arr([3, 4])}}}",
    )
    a, c = min(max(starts[0], 0), 2), min(max(starts[1], 0), 2)
    check(text, [x, i, j], x[a : a + 3, c : c + 4])


@pytest.mark.parametrize("starts", DYNAMIC_STARTS)
def test_dynamic_update_slice_clamps(starts):
    x, u = rand(5, 6), rand(2, 3)
    i, j = np.asarray(starts[0], np.int64), np.asarray(starts[1], np.int32)
    text = _module(
        "nn.dynamic_update_slice", "%a0, %a1, %a2, %a3", [_t([5, 6]), _t([2, 3]), _t([], "i64"), _t([], "i32")], _t([5, 6])
    )
    a, c = min(max(starts[0], 0), 3), min(max(starts[1], 0), 3)
    expected = x.copy()
    expected[a : a + 2, c : c + 3] = u
    check(text, [x, u, i, j], expected)


def test_shape_ops_take_integer_tensors():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    text = _module(
        "nn.slice", "%a0", [_t([3, 4], "i32")], _t([2, 2], "i32"),
        f"{{start_indices = {_arr([1, 0])}, limit_indices = {_arr([3, 4])}, strides = {_arr([1, 2])}}}",
    )
    check(text, [x], x[1:3, 0:4:2])


def f64(shape):
    return _t(shape, "f64")


GRADIENTS = {
    "slice": (
        "nn.slice", "%a0", [f64([5, 6])], f64([2, 2]),
        f"{{start_indices = {_arr([1, 0])}, limit_indices = {_arr([5, 5])}, strides = {_arr([2, 3])}}}",
        [[5, 6]], [0],
    ),
    "pad": (
        "nn.pad", "%a0, %a1", [f64([4, 3]), f64([])], f64([7, 6]),
        f"{{edge_padding_low = {_arr([-2, 1])}, edge_padding_high = {_arr([-1, -2])}, interior_padding = {_arr([2, 2])}}}",
        [[4, 3], []], [0, 1],
    ),
    "concatenate": (
        "nn.concatenate", "%a0, %a1", [f64([2, 3]), f64([2, 2])], f64([2, 5]), "{dimension = 1 : i64}",
        [[2, 3], [2, 2]], [0, 1],
    ),
    "reverse": (
        "nn.reverse", "%a0", [f64([3, 4])], f64([3, 4]), f"{{dimensions = {_arr([1])}}}", [[3, 4]], [0],
    ),
    "broadcast_in_dim": (
        "nn.broadcast_in_dim", "%a0", [f64([4, 1])], f64([2, 3, 4]), f"{{broadcast_dimensions = {_arr([2, 0])}}}",
        [[4, 1]], [0],
    ),
}


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradient(name):
    op, operands, types, result, attrs, shapes, wrt = GRADIENTS[name]
    args = [np.asarray(rand(*s, dtype=np.float64)) for s in shapes]
    check_gradient(_module(op, operands, types, result, attrs), "f", args, wrt)


@pytest.mark.parametrize("starts", DYNAMIC_STARTS)
def test_dynamic_slice_gradients(starts):
    i, j = np.asarray(starts[0], np.int64), np.asarray(starts[1], np.int32)
    sliced = _module(
        "nn.dynamic_slice", "%a0, %a1, %a2", [f64([5, 6]), _t([], "i64"), _t([], "i32")], f64([3, 4]),
        f"{{slice_sizes = {_arr([3, 4])}}}",
    )
    check_gradient(sliced, "f", [rand(5, 6, dtype=np.float64), i, j], [0])
    updated = _module(
        "nn.dynamic_update_slice", "%a0, %a1, %a2, %a3", [f64([5, 6]), f64([2, 3]), _t([], "i64"), _t([], "i32")], f64([5, 6])
    )
    check_gradient(updated, "f", [rand(5, 6, dtype=np.float64), rand(2, 3, dtype=np.float64), i, j], [0, 1])


@pytest.mark.parametrize(
    "text,message",
    [
        (_module("nn.slice", "%a0", [_t([5])], _t([2]),
                 f"{{start_indices = {_arr([4])}, limit_indices = {_arr([3])}, strides = {_arr([1])}}}"),
         r"dimension 0: need 0 <= start \(4\) <= limit \(3\) <= size \(5\)"),
        (_module("nn.pad", "%a0, %a1", [_t([5]), _t([1])], _t([5]),
                 f"{{edge_padding_low = {_arr([0])}, edge_padding_high = {_arr([0])}, interior_padding = {_arr([0])}}}"),
         "padding_value must be a 0-d tensor of f32, got tensor<1xf32>"),
        (_module("nn.concatenate", "%a0, %a1", [_t([2, 3]), _t([3, 3])], _t([5, 3]), "{dimension = 1 : i64}"),
         r"input 1 \(tensor<3x3xf32>\) does not match input 0 \(tensor<2x3xf32>\) outside dimension 1"),
        (_module("nn.broadcast_in_dim", "%a0", [_t([3])], _t([2, 4]), f"{{broadcast_dimensions = {_arr([1])}}}"),
         "operand dimension 0 \\(size 3\\) does not broadcast to result dimension 1"),
        (_module("nn.dynamic_slice", "%a0, %a1", [_t([5]), _t([], "f32")], _t([2]), f"{{slice_sizes = {_arr([2])}}}"),
         "start index 0 must be a 0-d integer tensor, got tensor<f32>"),
    ],
)
def test_verifier_messages(text, message):
    with pytest.raises(CompileError, match=message):
        parse_module(text)


def test_a_gather_fuses_into_its_elementwise_consumer():
    """slice then exp: the expansions fuse into one map that reads the operand at the strided index."""
    text = """func.func @f(%x: tensor<6x3xf32>) -> tensor<3x3xf32> {
  %s = nn.slice %x {start_indices = array<i64: 1, 0>, limit_indices = array<i64: 6, 3>, strides = array<i64: 2, 1>} : (tensor<6x3xf32>) -> tensor<3x3xf32>
  %e = nn.exp %s : (tensor<3x3xf32>) -> tensor<3x3xf32>
  func.return %e : tensor<3x3xf32>
}"""
    module = parse_module(text)
    PassManager.parse("expand-library,canonicalize,cse,fuse,canonicalize,cse").run(module)
    assert sum(o.name == "df.map" for o in module.walk()) == 1
    x = rand(6, 3)
    check(text, [x], np.exp(x[1:6:2]))


def test_edge_cases_empty_and_fully_cropped():
    """An empty slice, a concatenation with an empty input, padding that crops every operand element."""
    x = rand(4, 3)
    empty_slice = _module(
        "nn.slice", "%a0", [_t([4, 3])], _t([0, 3]),
        f"{{start_indices = {_arr([2, 0])}, limit_indices = {_arr([2, 3])}, strides = {_arr([1, 1])}}}",
    )
    check(empty_slice, [x], x[2:2])
    concat = _module("nn.concatenate", "%a0, %a1", [_t([4, 3]), _t([0, 3])], _t([4, 3]), "{dimension = 0 : i64}")
    check(concat, [x, np.zeros((0, 3), np.float32)], x)
    cropped = _module(
        "nn.pad", "%a0, %a1", [_t([3]), _t([])], _t([1]),
        f"{{edge_padding_low = {_arr([-5])}, edge_padding_high = {_arr([3])}, interior_padding = {_arr([0])}}}",
    )
    check(cropped, [rand(3), np.asarray(7, np.float32)], np.float32([7]))
