"""Each nn op's df expansion, evaluated by the reference interpreter, against numpy."""

import numpy as np
import pytest

from dfc.compiler import PassManager, parse_module
from dfc.compiler.interpreter import interpret
from dfc.dialects.diagnostics import CompileError

RNG = np.random.default_rng(0)


def _t(shape, dtype="f32"):
    return f"tensor<{'x'.join(map(str, shape))}{'x' if shape else ''}{dtype}>"


def run_op(op: str, args, arg_types, result_type, attrs: str = ""):
    """Expand `%r = op(args)` with expand-library and interpret it."""
    params = ", ".join(f"%a{k}: {t}" for k, t in enumerate(arg_types))
    operands = ", ".join(f"%a{k}" for k in range(len(arg_types)))
    text = f"""func.func @f({params}) -> {result_type} {{
  %r = {op} {operands} {attrs} : ({", ".join(arg_types)}) -> {result_type}
  func.return %r : {result_type}
}}"""
    module = parse_module(text)
    PassManager.parse("expand-library,canonicalize,cse").run(module)
    assert not any(o.name.startswith("nn.") for o in module.walk())
    return interpret(module, "f", *args)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


UNARY = {
    "nn.neg": np.negative,
    "nn.exp": np.exp,
    "nn.log": lambda x: np.log(np.abs(x)),
    "nn.tanh": np.tanh,
    "nn.sqrt": lambda x: np.sqrt(np.abs(x)),
    "nn.relu": lambda x: np.maximum(x, 0),
    "nn.sigmoid": lambda x: 1 / (1 + np.exp(-x)),
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(op):
    x = rand(3, 5)
    if op in ("nn.log", "nn.sqrt"):
        x = np.abs(x)
    got = run_op(op, [x], [_t([3, 5])], _t([3, 5]))
    np.testing.assert_allclose(got, UNARY[op](x), rtol=1e-6)


BINARY = {"nn.add": np.add, "nn.sub": np.subtract, "nn.mul": np.multiply, "nn.div": np.divide}


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("shapes", [([3, 4], [3, 4], [3, 4]), ([3, 1], [4], [3, 4]), ([2, 1, 4], [3, 1], [2, 3, 4])])
def test_binary_broadcasting(op, shapes):
    a_shape, b_shape, out = shapes
    a, b = rand(*a_shape), rand(*b_shape) + 3
    got = run_op(op, [a, b], [_t(a_shape), _t(b_shape)], _t(out))
    np.testing.assert_allclose(got, BINARY[op](a, b), rtol=1e-6)


def test_matmul():
    a, b = rand(5, 4), rand(4, 3)
    got = run_op("nn.matmul", [a, b], [_t([5, 4]), _t([4, 3])], _t([5, 3]))
    np.testing.assert_allclose(got, a @ b, rtol=1e-5)


def test_linear_uses_pytorch_weight_layout():
    x, w, b = rand(3, 6), rand(4, 6), rand(4)
    got = run_op("nn.linear", [x, w, b], [_t([3, 6]), _t([4, 6]), _t([4])], _t([3, 4]))
    np.testing.assert_allclose(got, x @ w.T + b, rtol=1e-5)


@pytest.mark.parametrize("kind", ["sum", "max", "min", "mean"])
@pytest.mark.parametrize("axes,keep", [([1], False), ([0, 2], True), ([-1], True), ([0, 1, 2], False)])
def test_reduce(kind, axes, keep):
    x = rand(2, 3, 4)
    expected = getattr(np, kind)(x, axis=tuple(axes), keepdims=keep)
    attrs = f'{{kind = "{kind}", axes = array<i64: {", ".join(map(str, axes))}>{", keepdims" if keep else ""}}}'
    got = run_op("nn.reduce", [x], [_t([2, 3, 4])], _t(list(expected.shape)), attrs)
    np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_broadcast():
    x = rand(3, 1)
    got = run_op("nn.broadcast", [x], [_t([3, 1])], _t([2, 3, 4]))
    np.testing.assert_array_equal(got, np.broadcast_to(x, (2, 3, 4)))


def test_transpose():
    x = rand(2, 3, 4)
    got = run_op("nn.transpose", [x], [_t([2, 3, 4])], _t([4, 2, 3]), "{permutation = array<i64: 2, 0, 1>}")
    np.testing.assert_array_equal(got, np.transpose(x, (2, 0, 1)))


@pytest.mark.parametrize("shape,out", [
    ([2, 3, 4], [4, 6]), ([2, 3, 4], [24]), ([2, 3, 4], [2, 1, 12]), ([2, 3, 4], [6, 4]), ([6, 4], [2, 3, 4]),
    ([6, 4], [4, 6]), ([1, 8, 1], [8]), ([8], [2, 1, 4, 1]), ([4, 6, 1], [2, 12]), ([2, 6, 4], [4, 3, 4]),
    ([3, 0], [0, 5]), ([1, 1], []), ([], [1, 1]),
])
def test_reshape(shape, out):
    """Every grouping of dimensions (collapsed, expanded, mixed, none, size 1 and 0)."""
    x = rand(*shape)
    got = run_op("nn.reshape", [x], [_t(shape)], _t(out))
    np.testing.assert_array_equal(got, x.reshape(out))


def test_reshape_groups_keep_the_inner_index_direct():
    """[8, 128, 1024] read as [1024, 1024]: the inner index is the inner
    variable itself (no division), the outer one splits by 128."""
    from dfc.dialects.nn_expand import reshape_groups

    assert reshape_groups([8, 128, 1024], [1024, 1024]) == [([0, 1], [0]), ([2], [1])]
    assert reshape_groups([6, 4], [4, 6]) == [([0, 1], [0, 1])]
    assert reshape_groups([2, 1, 12], [2, 12, 1]) == [([0], [0]), ([1, 2], [1, 2])]
    module = parse_module(f"""func.func @f(%a: {_t([8, 128, 1024])}) -> {_t([1024, 1024])} {{
  %r = nn.reshape %a : ({_t([8, 128, 1024])}) -> {_t([1024, 1024])}
  func.return %r : {_t([1024, 1024])}
}}""")
    PassManager.parse("expand-library,canonicalize,cse").run(module)
    text = str(module)
    assert text.count("arith.divui") == 1 and text.count("arith.remui") == 1


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax_and_log_softmax(axis):
    x = rand(3, 5) * 10
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    soft = e / e.sum(axis=axis, keepdims=True)
    attrs = f"{{axis = {axis} : i64}}"
    got = run_op("nn.softmax", [x], [_t([3, 5])], _t([3, 5]), attrs)
    np.testing.assert_allclose(got, soft, rtol=1e-5)
    got = run_op("nn.log_softmax", [x], [_t([3, 5])], _t([3, 5]), attrs)
    np.testing.assert_allclose(got, np.log(soft), rtol=1e-5, atol=1e-6)


def test_nll_loss_mean_and_bad_label():
    logp, labels = rand(4, 5), np.array([0, 4, 2, 2], dtype=np.int64)
    got = run_op("nn.nll_loss", [logp, labels], [_t([4, 5]), _t([4], "i64")], _t([]))
    np.testing.assert_allclose(got, -logp[np.arange(4), labels].mean(), rtol=1e-6)
    labels[1] = 5
    with pytest.raises(IndexError):  # as PyTorch's "Target 5 is out of bounds"
        run_op("nn.nll_loss", [logp, labels], [_t([4, 5]), _t([4], "i64")], _t([]))


def test_constant_and_full():
    text = """func.func @f() -> (tensor<2x2xf32>, tensor<3xf64>) {
  %c = nn.constant {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : tensor<2x2xf32>
  %f = nn.full {value = 2.5 : f64} : tensor<3xf64>
  func.return %c, %f : tensor<2x2xf32>, tensor<3xf64>
}"""
    module = parse_module(text)
    PassManager.parse("expand-library").run(module)
    c, f = interpret(module, "f")
    np.testing.assert_array_equal(c, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(f, [2.5, 2.5, 2.5])
    assert f.dtype == np.float64


@pytest.mark.parametrize(
    "op,types,result,message",
    [
        ("nn.add", ["tensor<3x4xf32>", "tensor<5xf32>"], "tensor<3x4xf32>", "do not broadcast"),
        ("nn.matmul", ["tensor<3x4xf32>", "tensor<5x2xf32>"], "tensor<3x2xf32>", "contraction dimensions differ"),
        ("nn.add", ["tensor<3xf32>", "tensor<3xf32>"], "tensor<4xf32>", "does not match the inferred type"),
        ("nn.exp", ["tensor<?xf32>"], "tensor<?xf32>", "static shape"),
    ],
)
def test_shape_errors(op, types, result, message):
    params = ", ".join(f"%a{k}: {t}" for k, t in enumerate(types))
    operands = ", ".join(f"%a{k}" for k in range(len(types)))
    text = f"func.func @f({params}) {{\n  %r = {op} {operands} : ({', '.join(types)}) -> {result}\n  func.return\n}}"
    with pytest.raises(CompileError, match=message) as info:
        parse_module(text, "shapes.mlir")
    assert info.value.location == "shapes.mlir:2:8"
