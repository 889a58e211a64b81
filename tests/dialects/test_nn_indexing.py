"""nn.gather (dialects/nn_indexing.py) in the forms x[idx], take_along_axis and
embedding lookups produce: forward against numpy through the interpreter and
the engine (start indices clamped as StableHLO says), gradients (repeated
indices accumulate) against float64 finite differences."""

import numpy as np
import pytest
from support.autodiff_checks import check_gradient

from dfc.compiler import parse_module
from dfc.dialects.diagnostics import CompileError
from tests.dialects.test_nn_elementwise import _t, check

RNG = np.random.default_rng(19)


def _arr(values) -> str:
    return f"array<i64: {', '.join(map(str, values))}>" if values else "array<i64>"


def _gather(operand, indices, result, dims, ivd, dtype="f32", index_dtype="i64") -> str:
    names = ("offset_dims", "collapsed_slice_dims", "operand_batching_dims", "start_indices_batching_dims",
             "start_index_map", "slice_sizes")
    attrs = ", ".join(f"{n} = {_arr(dims.get(n, []))}" for n in names) + f", index_vector_dim = {ivd} : i64"
    x, i, r = _t(operand, dtype), _t(indices, index_dtype), _t(result, dtype)
    return f"""func.func @f(%x: {x}, %i: {i}) -> {r} {{
  %r = nn.gather %x, %i {{{attrs}}} : ({x}, {i}) -> {r}
  func.return %r : {r}
}}"""


def clip(i, n):
    return np.clip(i, 0, n)


# name -> (operand shape, indices, result shape, dims, index_vector_dim, numpy reference)
CASES = {
    "embedding": ((10, 8), np.array([[3], [0], [9], [3], [12]]), (5, 8),
                  {"offset_dims": [1], "collapsed_slice_dims": [0], "start_index_map": [0], "slice_sizes": [1, 8]}, 1,
                  lambda x, i: x[clip(i[:, 0], 9)]),
    "scalar_indices": ((10, 8), np.array([1, 7, -2, 7]), (4, 8),
                       {"offset_dims": [1], "collapsed_slice_dims": [0], "start_index_map": [0], "slice_sizes": [1, 8]}, 1,
                       lambda x, i: x[clip(i, 9)]),
    "columns": ((3, 10), np.array([4, 0, 9, 4]), (3, 4),
                {"offset_dims": [0], "collapsed_slice_dims": [1], "start_index_map": [1], "slice_sizes": [3, 1]}, 1,
                lambda x, i: x[:, i]),
    "take_along_axis": ((3, 5), np.array([[4, 0], [1, 1], [2, 3]]), (3, 2),
                        {"collapsed_slice_dims": [1], "operand_batching_dims": [0], "start_indices_batching_dims": [0],
                         "start_index_map": [1], "slice_sizes": [1, 1]}, 2,
                        lambda x, i: np.take_along_axis(x, i, 1)),
    "points": ((4, 5), np.array([[0, 1], [3, 4], [2, 2], [0, 1]]), (4,),
               {"collapsed_slice_dims": [0, 1], "start_index_map": [0, 1], "slice_sizes": [1, 1]}, 1,
               lambda x, i: x[i[:, 0], i[:, 1]]),
    "windows": ((5, 6), np.array([[1], [4], [-3]]), (3, 2, 3),
                {"offset_dims": [1, 2], "start_index_map": [0], "slice_sizes": [2, 3]}, 1,
                lambda x, i: np.stack([x[s : s + 2, 0:3] for s in clip(i[:, 0], 3)])),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gather(name):
    shape, indices, result, dims, ivd, reference = CASES[name]
    x = RNG.standard_normal(shape).astype(np.float32)
    check(_gather(shape, indices.shape, result, dims, ivd), [x, indices.astype(np.int64)], reference(x, indices))


def test_gather_with_i32_indices_of_integers():
    shape, indices, result, dims, ivd, reference = CASES["columns"]
    x = RNG.integers(-50, 50, shape).astype(np.int32)
    text = _gather(shape, indices.shape, result, dims, ivd, dtype="i32", index_dtype="i32")
    check(text, [x, indices.astype(np.int32)], reference(x, indices))


@pytest.mark.parametrize("name", sorted(CASES))
def test_gather_gradient(name):
    shape, indices, result, dims, ivd, _ = CASES[name]
    x = RNG.standard_normal(shape)
    check_gradient(_gather(shape, indices.shape, result, dims, ivd, dtype="f64"), "f", [x, indices.astype(np.int64)], [0])


@pytest.mark.parametrize(
    "dims,ivd,result,message",
    [
        ({"offset_dims": [1], "collapsed_slice_dims": [0], "start_index_map": [0, 1], "slice_sizes": [1, 8]}, 1, (5, 8),
         "start_index_map has 2 elements, the index vector 1"),
        ({"offset_dims": [1], "collapsed_slice_dims": [0], "start_index_map": [0], "slice_sizes": [2, 8]}, 1, (5, 8),
         "slice size 2 of collapsed or batching dimension 0 is not 0 or 1"),
        ({"offset_dims": [0], "collapsed_slice_dims": [0], "start_index_map": [0], "slice_sizes": [1, 8]}, 1, (5, 8),
         r"result type tensor<5x8xf32> does not match the inferred type tensor<8x5xf32>"),
        ({"offset_dims": [1], "collapsed_slice_dims": [0], "start_index_map": [2], "slice_sizes": [1, 8]}, 1, (5, 8),
         r"start_index_map \[2\] out of range for the operand rank 2"),
        ({"offset_dims": [1], "collapsed_slice_dims": [0], "start_index_map": [0], "slice_sizes": [1, 8]}, 3, (5, 8),
         "index_vector_dim 3 out of range for start_indices of rank 2"),
    ],
)
def test_verifier_messages(dims, ivd, result, message):
    with pytest.raises(CompileError, match=message):
        parse_module(_gather((10, 8), (5, 1), result, dims, ivd))


def _scatter(operand, indices, updates, kind, dims, ivd, dtype="f32") -> str:
    names = ("update_window_dims", "inserted_window_dims", "input_batching_dims", "scatter_indices_batching_dims",
             "scatter_dims_to_operand_dims")
    attrs = f'kind = "{kind}", ' + ", ".join(f"{n} = {_arr(dims.get(n, []))}" for n in names)
    x, i, u = _t(operand, dtype), _t(indices, "i64"), _t(updates, dtype)
    return f"""func.func @f(%x: {x}, %i: {i}, %u: {u}) -> {x} {{
  %r = nn.scatter %x, %i, %u {{{attrs}, index_vector_dim = {ivd} : i64}} : ({x}, {i}, {u}) -> {x}
  func.return %r : {x}
}}"""


def _rows_add(x, i, u):
    out = x.copy()
    for row, upd in zip(i[:, 0], u):
        if 0 <= row < x.shape[0]:
            out[row] += upd
    return out


def _rows_combined(ufunc):
    """numpy's `ufunc.at` of each update row into its operand row (out-of-range rows dropped)."""

    def reference(x, i, u):
        out, rows = x.copy(), i[:, 0]
        fits = (rows >= 0) & (rows < x.shape[0])
        ufunc.at(out, rows[fits], u[fits])
        return out

    return reference


def _columns_replace(x, i, u):
    out = x.copy()
    out[:, i] = u
    return out


def _put_along_axis_add(x, i, u):
    out = x.copy()
    for r in range(x.shape[0]):
        np.add.at(out[r], i[r], u[r])
    return out


def _windows_add(x, i, u):
    out = x.copy()
    for s, upd in zip(i[:, 0], u):
        if 0 <= s <= x.shape[0] - 2:
            out[s : s + 2, 0:3] += upd
    return out


# name -> (operand shape, indices, updates shape, kind, dims, index_vector_dim, numpy reference)
SCATTERS = {
    "rows_add": ((6, 4), np.array([[3], [0], [3], [-1], [6]]), (5, 4), "add",
                 {"update_window_dims": [1], "inserted_window_dims": [0], "scatter_dims_to_operand_dims": [0]}, 1,
                 _rows_add),
    "columns_replace": ((3, 6), np.array([4, 0, 5]), (3, 3), "replace",
                        {"update_window_dims": [0], "inserted_window_dims": [1], "scatter_dims_to_operand_dims": [1]}, 1,
                        _columns_replace),
    "put_along_axis_add": ((3, 5), np.array([[4, 4], [1, 0], [2, 3]]), (3, 2), "add",
                           {"inserted_window_dims": [1], "input_batching_dims": [0], "scatter_indices_batching_dims": [0],
                            "scatter_dims_to_operand_dims": [1]}, 2, _put_along_axis_add),
    "windows_add": ((5, 6), np.array([[1], [4], [-3], [3]]), (4, 2, 3), "add",
                    {"update_window_dims": [1, 2], "scatter_dims_to_operand_dims": [0]}, 1, _windows_add),
    **{f"rows_{kind}": ((6, 4), np.array([[3], [0], [3], [-1], [6], [3]]), (6, 4), kind,
                        {"update_window_dims": [1], "inserted_window_dims": [0], "scatter_dims_to_operand_dims": [0]}, 1,
                        _rows_combined(ufunc)) for kind, ufunc in (("mul", np.multiply), ("max", np.maximum),
                                                                   ("min", np.minimum))},
}


@pytest.mark.parametrize("name", sorted(SCATTERS))
def test_scatter(name):
    shape, indices, u_shape, kind, dims, ivd, reference = SCATTERS[name]
    x, u = RNG.standard_normal(shape).astype(np.float32), RNG.standard_normal(u_shape).astype(np.float32)
    text = _scatter(shape, indices.shape, u_shape, kind, dims, ivd)
    check(text, [x, indices.astype(np.int64), u], reference(x, indices, u))


@pytest.mark.parametrize("name", sorted(n for n, case in SCATTERS.items() if case[3] in ("add", "replace")))
def test_scatter_gradient(name):
    shape, indices, u_shape, kind, dims, ivd, _ = SCATTERS[name]
    text = _scatter(shape, indices.shape, u_shape, kind, dims, ivd, dtype="f64")
    args = [RNG.standard_normal(shape), indices.astype(np.int64), RNG.standard_normal(u_shape)]
    check_gradient(text, "f", args, [0, 2])


def test_scatter_gradient_of_mul_max_min_is_refused_at_the_op():
    from dfc.compiler import PassManager

    for kind in ("mul", "max", "min"):
        module = parse_module(_scatter((6, 4), (5, 1), (5, 4), kind, {"update_window_dims": [1], "inserted_window_dims": [0],
                                                                     "scatter_dims_to_operand_dims": [0]}, 1, dtype="f64"))
        with pytest.raises(CompileError, match=f"autodiff: nn.scatter of kind '{kind}' is not differentiable"):
            PassManager.parse("autodiff").run(module)


def test_scatter_verifier_message():
    text = _scatter((6, 4), (5, 1), (4, 4), "add",
                    {"update_window_dims": [1], "inserted_window_dims": [0], "scatter_dims_to_operand_dims": [0]}, 1)
    with pytest.raises(CompileError, match=r"updates tensor<4x4xf32> do not have the shape \[5, 4\]"):
        parse_module(text)


def test_scatter_replace_with_duplicates_keeps_the_last_update_and_its_gradient():
    dims = {"update_window_dims": [1], "inserted_window_dims": [0], "scatter_dims_to_operand_dims": [0]}
    text = _scatter((4, 3), (3, 1), (3, 3), "replace", dims, 1, dtype="f64")
    x, i, u = RNG.standard_normal((4, 3)), np.array([[2], [0], [2]]), RNG.standard_normal((3, 3))
    expected = x.copy()
    expected[2], expected[0] = u[2], u[1]
    check(text, [x, i, u], expected)
    check_gradient(text, "f", [x, i, u], [0, 2])
