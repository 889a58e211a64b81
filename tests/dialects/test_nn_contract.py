"""dot_general, argmax and argmin (dialects/nn_contract.py): forward against
numpy through the interpreter and the engine, gradients against float64
finite differences."""

import numpy as np
import pytest

from dfc.compiler import parse_module
from dfc.dialects.diagnostics import CompileError
from support.autodiff_checks import check_gradient
from tests.dialects.test_nn_elementwise import _t, check, run_both

RNG = np.random.default_rng(16)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _arr(values) -> str:
    return f"array<i64: {', '.join(map(str, values))}>" if values else "array<i64>"


def _dot(lhs, rhs, out, batch, contract, dtype="f32") -> str:
    attrs = (
        f"{{lhs_batching_dimensions = {_arr(batch[0])}, rhs_batching_dimensions = {_arr(batch[1])}, "
        f"lhs_contracting_dimensions = {_arr(contract[0])}, rhs_contracting_dimensions = {_arr(contract[1])}}}"
    )
    a, b, r = _t(lhs, dtype), _t(rhs, dtype), _t(out, dtype)
    return f"""func.func @f(%a: {a}, %b: {b}) -> {r} {{
  %r = nn.dot_general %a, %b {attrs} : ({a}, {b}) -> {r}
  func.return %r : {r}
}}"""


# (lhs shape, rhs shape, (lhs batch, rhs batch), (lhs contracting, rhs contracting), einsum)
DOTS = {
    "matmul": ([3, 4], [4, 5], ([], []), ([1], [0]), "ik,kj->ij"),
    "lhs_transposed": ([4, 3], [4, 5], ([], []), ([0], [0]), "ki,kj->ij"),
    "rhs_transposed": ([3, 4], [5, 4], ([], []), ([1], [1]), "ik,jk->ij"),
    "batched": ([2, 3, 4], [2, 4, 5], ([0], [0]), ([2], [1]), "bik,bkj->bij"),
    "batch_last": ([3, 4, 2], [4, 2, 5], ([2], [1]), ([1], [0]), "ikb,kbj->bij"),
    "two_contracting": ([3, 2, 4], [4, 5, 2], ([], []), ([1, 2], [2, 0]), "ipk,kjp->ij"),
    "outer": ([3], [4], ([], []), ([], []), "i,j->ij"),
    "dot": ([4], [4], ([], []), ([0], [0]), "k,k->"),
    "attention": ([2, 3, 5, 4], [2, 3, 6, 4], ([0, 1], [0, 1]), ([3], [3]), "bhqd,bhkd->bhqk"),
}


@pytest.mark.parametrize("name", sorted(DOTS))
def test_dot_general(name):
    lhs, rhs, batch, contract, spec = DOTS[name]
    a, b = rand(*lhs), rand(*rhs)
    expected = np.einsum(spec, a, b)
    check(_dot(lhs, rhs, list(expected.shape), batch, contract), [a, b], expected, rtol=1e-5)


@pytest.mark.parametrize("name", sorted(DOTS))
def test_dot_general_gradient(name):
    lhs, rhs, batch, contract, spec = DOTS[name]
    a, b = rand(*lhs, dtype=np.float64), rand(*rhs, dtype=np.float64)
    out = list(np.einsum(spec, a, b).shape)
    check_gradient(_dot(lhs, rhs, out, batch, contract, "f64"), "f", [a, b], [0, 1])


def _arg(op, shape, axis, dtype="i64"):
    out = [d for k, d in enumerate(shape) if k != axis % len(shape)]
    return f"""func.func @f(%x: {_t(shape)}) -> {_t(out, dtype)} {{
  %r = {op} %x {{axis = {axis} : i64}} : ({_t(shape)}) -> {_t(out, dtype)}
  func.return %r : {_t(out, dtype)}
}}"""


@pytest.mark.parametrize("op,fn", [("nn.argmax", np.argmax), ("nn.argmin", np.argmin)])
@pytest.mark.parametrize("axis,dtype", [(0, "i64"), (1, "i32"), (-1, "i64")])
def test_arg_extremum_takes_the_first_tie_and_nan(op, fn, axis, dtype):
    x = np.round(rand(4, 5, 3)).astype(np.float32)  # many ties
    x[2, 3, 1] = np.nan
    x[2, 1, 1] = np.nan
    expected = fn(x, axis=axis).astype({"i64": np.int64, "i32": np.int32}[dtype])
    check(_arg(op, [4, 5, 3], axis, dtype), [x], expected)


def test_argmax_in_a_differentiated_function():
    """A loss that uses argmax (as a label) differentiates; argmax passes no gradient."""
    text = """func.func @f(%x: tensor<3x4xf64>) -> tensor<f64> {
  %i = nn.argmax %x {axis = 1 : i64} : (tensor<3x4xf64>) -> tensor<3xi64>
  %l = nn.log_softmax %x {axis = 1 : i64} : (tensor<3x4xf64>) -> tensor<3x4xf64>
  %r = nn.nll_loss %l, %i : (tensor<3x4xf64>, tensor<3xi64>) -> tensor<f64>
  func.return %r : tensor<f64>
}"""
    check_gradient(text, "f", [rand(3, 4, dtype=np.float64)], [0])


@pytest.mark.parametrize(
    "text,message",
    [
        (_dot([3, 4], [5, 6], [3, 6], ([], []), ([1], [0])),
         r"contracting dimension sizes differ: lhs dimension 1 \(4\), rhs dimension 0 \(5\)"),
        (_dot([3, 4], [4, 6], [3, 6], ([], []), ([1], [])), "1 lhs and 0 rhs contracting dimensions"),
        (_dot([3, 4], [4, 6], [3, 6], ([1], [0]), ([1], [0])), r"lhs batching/contracting dimensions \[1, 1\] repeat a dimension"),
        (_arg("nn.argmax", [3, 4], 1, "f32"), "result must be an i32 or i64 tensor, got tensor<3xf32>"),
    ],
)
def test_verifier_messages(text, message):
    with pytest.raises(CompileError, match=message):
        parse_module(text)


def test_argmax_of_one_element_axis_is_zero():
    x = rand(3, 1)
    for got in run_both(_arg("nn.argmax", [3, 1], 1), [x]):
        np.testing.assert_array_equal(got, [0, 0, 0])
