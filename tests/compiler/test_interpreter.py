"""The reference interpreter against numpy: maps, wcr, loops, scalars, errors."""

import math
from pathlib import Path

import numpy as np
import pytest

from dfc.compiler import parse_module
from dfc.compiler.interpreter import interpret

EXAMPLES = Path(__file__).parents[2] / "examples"
RNG = np.random.default_rng(0)


def run(text: str, name: str, *args):
    return interpret(parse_module(text), name, *args)


def test_elementwise_f32_stays_f32():
    text = """
    func.func @f(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>) -> tensor<4x8xf32> {
      %empty = tensor.empty() : tensor<4x8xf32>
      %y = df.map (%i, %j) in (4, 8) outs(%o = %empty : tensor<4x8xf32>) {
        %a = df.read %x[%i, %j] : tensor<4x8xf32>
        %b = df.read %w[%i, %j] : tensor<4x8xf32>
        %r = df.tasklet (%a, %b) : (f32, f32) -> f32 {
        ^bb0(%u: f32, %v: f32):
          %m = arith.mulf %u, %v : f32
          %s = arith.addf %m, %u : f32
          df.yield %s : f32
        }
        df.write %r, %o[%i, %j] : tensor<4x8xf32>
      } -> tensor<4x8xf32>
      func.return %y : tensor<4x8xf32>
    }"""
    x = RNG.standard_normal((4, 8)).astype(np.float32)
    w = RNG.standard_normal((4, 8)).astype(np.float32)
    y = run(text, "f", x, w)
    assert y.dtype == np.float32 and y.shape == (4, 8)
    np.testing.assert_array_equal(y, x * w + x)


def _sum_program(dtype: str) -> str:
    return f"""
    func.func @total(%x: tensor<3x50x{dtype}>) -> tensor<{dtype}> {{
      %zero = arith.constant dense<0.0> : tensor<{dtype}>
      %s = df.map (%i, %j) in (3, 50) outs(%acc = %zero : tensor<{dtype}>) {{
        %v = df.read %x[%i, %j] : tensor<3x50x{dtype}>
        df.write %v, %acc[] wcr(add) : tensor<{dtype}>
      }} -> tensor<{dtype}>
      func.return %s : tensor<{dtype}>
    }}"""


@pytest.mark.parametrize("dtype, np_dtype", [("f32", np.float32), ("f64", np.float64)])
def test_wcr_add_into_0d_tensor_accumulates_in_order_and_dtype(dtype, np_dtype):
    x = RNG.standard_normal((3, 50)).astype(np_dtype) * 1000
    s = run(_sum_program(dtype), "total", x)
    assert s.shape == () and s.dtype == np_dtype
    # cumsum accumulates sequentially in the array's dtype: the map's row-major order
    np.testing.assert_array_equal(s, np.cumsum(x.ravel())[-1])


def test_wcr_max_row_max_and_wcr_min_mul():
    text = """
    func.func @rows(%x: tensor<5x7xf64>, %lo: tensor<5xf64>, %hi: tensor<5xf64>,
                    %one: tensor<5xf64>) -> (tensor<5xf64>, tensor<5xf64>, tensor<5xf64>) {
      %mx, %mn, %pr = df.map (%i, %j) in (5, 7)
          outs(%m = %lo : tensor<5xf64>, %n = %hi : tensor<5xf64>, %p = %one : tensor<5xf64>) {
        %v = df.read %x[%i, %j] : tensor<5x7xf64>
        df.write %v, %m[%i] wcr(max) : tensor<5xf64>
        df.write %v, %n[%i] wcr(min) : tensor<5xf64>
        df.write %v, %p[%i] wcr(mul) : tensor<5xf64>
      } -> tensor<5xf64>, tensor<5xf64>, tensor<5xf64>
      func.return %mx, %mn, %pr : tensor<5xf64>, tensor<5xf64>, tensor<5xf64>
    }"""
    x = RNG.standard_normal((5, 7))
    lo, hi, one = np.full(5, -np.inf), np.full(5, np.inf), np.ones(5)
    mx, mn, pr = run(text, "rows", x, lo, hi, one)
    np.testing.assert_array_equal(mx, x.max(axis=1))
    np.testing.assert_array_equal(mn, x.min(axis=1))
    np.testing.assert_array_equal(pr, np.cumprod(x, axis=1)[:, -1])
    # the outs' initial values are not changed
    assert np.all(lo == -np.inf) and np.all(one == 1)


def test_nested_map_writes_outer_outputs():
    text = """
    func.func @f(%x: tensor<4x6xf64>) -> (tensor<4x6xf64>, tensor<4xf64>) {
      %empty = tensor.empty() : tensor<4x6xf64>
      %zeros = arith.constant dense<0.0> : tensor<4xf64>
      %y, %s = df.map (%i) in (4) outs(%o = %empty : tensor<4x6xf64>, %s0 = %zeros : tensor<4xf64>) {
        df.map (%j) in (6) {
          %v = df.read %x[%i, %j] : tensor<4x6xf64>
          %d = df.tasklet (%v) : (f64) -> f64 {
          ^bb0(%u: f64):
            %two = arith.constant 2.0 : f64
            %m = arith.mulf %u, %two : f64
            df.yield %m : f64
          }
          df.write %d, %o[%i, %j] : tensor<4x6xf64>
          df.write %v, %s0[%i] wcr(add) : tensor<4xf64>
        }
      } -> tensor<4x6xf64>, tensor<4xf64>
      func.return %y, %s : tensor<4x6xf64>, tensor<4xf64>
    }"""
    x = RNG.standard_normal((4, 6))
    y, s = run(text, "f", x)
    np.testing.assert_array_equal(y, 2 * x)
    np.testing.assert_array_equal(s, np.cumsum(x, axis=1)[:, -1])


def test_inner_map_outputs_start_from_a_fresh_copy_each_outer_iteration():
    text = """
    func.func @f(%x: tensor<3x4xf64>) -> tensor<3xf64> {
      %zeros = arith.constant dense<0.0> : tensor<3xf64>
      %acc0 = arith.constant dense<0.0> : tensor<f64>
      %r = df.map (%i) in (3) outs(%o = %zeros : tensor<3xf64>) {
        %row = df.map (%j) in (4) outs(%a = %acc0 : tensor<f64>) {
          %v = df.read %x[%i, %j] : tensor<3x4xf64>
          df.write %v, %a[] wcr(add) : tensor<f64>
        } -> tensor<f64>
        %t = df.read %row[] : tensor<f64>
        df.write %t, %o[%i] : tensor<3xf64>
      } -> tensor<3xf64>
      func.return %r : tensor<3xf64>
    }"""
    x = RNG.standard_normal((3, 4))
    np.testing.assert_array_equal(run(text, "f", x), np.cumsum(x, axis=1)[:, -1])


def test_scf_for_time_loop_with_dynamic_steps():
    text = """
    func.func @decay(%x: tensor<8xf64>, %steps: index) -> tensor<8xf64> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %r = scf.for %t = %c0 to %steps step %c1 iter_args(%a = %x) -> (tensor<8xf64>) {
        %n = df.map (%i) in (8) outs(%o = %a : tensor<8xf64>) {
          %v = df.read %a[%i] : tensor<8xf64>
          %w = df.tasklet (%v) : (f64) -> f64 {
          ^bb0(%u: f64):
            %h = arith.constant 0.5 : f64
            %one = arith.constant 1.0 : f64
            %m = arith.mulf %u, %h : f64
            %s = arith.addf %m, %one : f64
            df.yield %s : f64
          }
          df.write %w, %o[%i] : tensor<8xf64>
        } -> tensor<8xf64>
        scf.yield %n : tensor<8xf64>
      }
      func.return %r : tensor<8xf64>
    }"""
    x = RNG.standard_normal(8)
    expected = x.copy()
    for _ in range(5):
        expected = expected * 0.5 + 1.0
    np.testing.assert_array_equal(run(text, "decay", x, 5), expected)
    np.testing.assert_array_equal(run(text, "decay", x, 0), x)


def test_dynamic_bound_from_tensor_dim():
    text = """
    func.func @scale(%x: tensor<?xf64>) -> tensor<?xf64> {
      %c0 = arith.constant 0 : index
      %n = tensor.dim %x, %c0 : tensor<?xf64>
      %empty = tensor.empty(%n) : tensor<?xf64>
      %y = df.map (%i) in (%n) outs(%o = %empty : tensor<?xf64>) {
        %v = df.read %x[%i] : tensor<?xf64>
        %r = df.tasklet (%v) : (f64) -> f64 {
        ^bb0(%u: f64):
          %e = math.exp %u : f64
          df.yield %e : f64
        }
        df.write %r, %o[%i] : tensor<?xf64>
      } -> tensor<?xf64>
      func.return %y : tensor<?xf64>
    }"""
    for n in (0, 3, 11):
        x = RNG.standard_normal(n)
        np.testing.assert_array_equal(run(text, "scale", x), np.exp(x))


def test_shifted_indices_and_index_arithmetic():
    text = """
    func.func @diff(%x: tensor<10xf64>) -> tensor<9xf64> {
      %c1 = arith.constant 1 : index
      %empty = tensor.empty() : tensor<9xf64>
      %y = df.map (%i) in (9) outs(%o = %empty : tensor<9xf64>) {
        %i1 = arith.addi %i, %c1 : index
        %a = df.read %x[%i1] : tensor<10xf64>
        %b = df.read %x[%i] : tensor<10xf64>
        %d = df.tasklet (%a, %b) : (f64, f64) -> f64 {
        ^bb0(%u: f64, %v: f64):
          %s = arith.subf %u, %v : f64
          df.yield %s : f64
        }
        df.write %d, %o[%i] : tensor<9xf64>
      } -> tensor<9xf64>
      func.return %y : tensor<9xf64>
    }"""
    x = RNG.standard_normal(10)
    np.testing.assert_array_equal(run(text, "diff", x), np.diff(x))


INT_OPS = """
func.func @ints(%a: i32, %b: i32) -> (i32, i32, i32, i32, i32, i32, i32, i1, i1) {
  %div = arith.divsi %a, %b : i32
  %rem = arith.remsi %a, %b : i32
  %fdiv = arith.floordivsi %a, %b : i32
  %cdiv = arith.ceildivsi %a, %b : i32
  %max = arith.maxsi %a, %b : i32
  %min = arith.minsi %a, %b : i32
  %sum = arith.addi %a, %b : i32
  %slt = arith.cmpi slt, %a, %b : i32
  %ult = arith.cmpi ult, %a, %b : i32
  func.return %div, %rem, %fdiv, %cdiv, %max, %min, %sum, %slt, %ult : i32, i32, i32, i32, i32, i32, i32, i1, i1
}"""


@pytest.mark.parametrize("a, b", [(7, 2), (-7, 2), (7, -2), (-7, -2), (2**31 - 1, 1)])
def test_signed_integer_semantics(a, b):
    div, rem, fdiv, cdiv, mx, mn, total, slt, ult = run(INT_OPS, "ints", a, b)
    assert all(v.dtype == np.int32 for v in (div, rem, fdiv, cdiv, mx, mn, total))
    assert div == np.trunc(a / b) and rem == np.fmod(a, b)
    assert fdiv == a // b and cdiv == math.ceil(a / b)
    assert (mx, mn) == (max(a, b), min(a, b))
    assert total == np.array([a + b]).astype(np.int64).astype(np.int32)[0]  # wraps
    assert slt == (a < b) and ult == (a % 2**32 < b % 2**32)


UNSIGNED_OPS = """
func.func @uints(%a: i32, %b: i32) -> (i32, i32, i32, i64, f64, i32) {
  %div = arith.divui %a, %b : i32
  %rem = arith.remui %a, %b : i32
  %shr = arith.shrui %a, %b : i32
  %ext = arith.extui %a : i32 to i64
  %flt = arith.uitofp %a : i32 to f64
  %sar = arith.shrsi %a, %b : i32
  func.return %div, %rem, %shr, %ext, %flt, %sar : i32, i32, i32, i64, f64, i32
}"""


@pytest.mark.parametrize("a, b", [(-7, 2), (7, 3), (-(2**31), 5)])
def test_unsigned_integer_semantics(a, b):
    div, rem, shr, ext, flt, sar = run(UNSIGNED_OPS, "uints", a, b)
    u = a % 2**32
    as_i32 = lambda x: np.array([x]).astype(np.uint32).astype(np.int32)[0]  # noqa: E731
    assert (div, rem, shr) == (as_i32(u // b), as_i32(u % b), as_i32(u >> b))
    assert ext == u and ext.dtype == np.int64 and flt == float(u)
    assert sar == a >> b


def test_integer_wcr_histogram():
    text = """
    func.func @hist(%x: tensor<40xi32>) -> tensor<5xi32> {
      %zeros = arith.constant dense<0> : tensor<5xi32>
      %h = df.map (%i) in (40) outs(%c = %zeros : tensor<5xi32>) {
        %v = df.read %x[%i] : tensor<40xi32>
        %k = arith.index_cast %v : i32 to index
        %one = arith.constant 1 : i32
        df.write %one, %c[%k] wcr(add) : tensor<5xi32>
      } -> tensor<5xi32>
      func.return %h : tensor<5xi32>
    }"""
    x = RNG.integers(0, 5, 40).astype(np.int32)
    h = run(text, "hist", x)
    assert h.dtype == np.int32
    np.testing.assert_array_equal(h, np.bincount(x, minlength=5))


def test_casts():
    text = """
    func.func @casts(%x: f64, %i: i64, %n: index) -> (i32, f32, f64, index, i64, f32) {
      %t = arith.fptosi %x : f64 to i32
      %f = arith.truncf %x : f64 to f32
      %e = arith.extf %f : f32 to f64
      %c = arith.index_cast %i : i64 to index
      %d = arith.index_cast %n : index to i64
      %s = arith.sitofp %i : i64 to f32
      func.return %t, %f, %e, %c, %d, %s : i32, f32, f64, index, i64, f32
    }"""
    x = -2.7182818284590451
    t, f, e, c, d, s = run(text, "casts", x, -5, 9)
    assert t == -2 and t.dtype == np.int32
    assert f == np.float32(x) and f.dtype == np.float32
    assert e == np.float64(np.float32(x)) and e.dtype == np.float64
    assert (c, d) == (-5, 9) and d.dtype == np.int64
    assert s == -5.0 and s.dtype == np.float32


def test_float_comparisons_select_and_nan():
    text = """
    func.func @cmp(%a: f64, %b: f64) -> (i1, i1, i1, i1, f64, f64, f64) {
      %olt = arith.cmpf olt, %a, %b : f64
      %ult = arith.cmpf ult, %a, %b : f64
      %one = arith.cmpf one, %a, %b : f64
      %uno = arith.cmpf uno, %a, %b : f64
      %sel = arith.select %olt, %a, %b : f64
      %mx = arith.maximumf %a, %b : f64
      %mxn = arith.maxnumf %a, %b : f64
      func.return %olt, %ult, %one, %uno, %sel, %mx, %mxn : i1, i1, i1, i1, f64, f64, f64
    }"""
    olt, ult, one, uno, sel, mx, mxn = run(text, "cmp", 1.0, 2.0)
    assert (olt, ult, one, uno) == (True, True, True, False)
    assert (sel, mx, mxn) == (1.0, 2.0, 2.0)
    olt, ult, one, uno, sel, mx, mxn = run(text, "cmp", np.nan, 2.0)
    assert (olt, ult, one, uno) == (False, True, False, True)
    assert sel == 2.0 and np.isnan(mx) and mxn == 2.0


MATH_OPS = [
    ("math.exp", np.exp),
    ("math.log", np.log),
    ("math.log1p", np.log1p),
    ("math.sqrt", np.sqrt),
    ("math.rsqrt", lambda x: 1 / np.sqrt(x)),
    ("math.tanh", np.tanh),
    ("math.sin", np.sin),
    ("math.cos", np.cos),
    ("math.absf", np.abs),
    ("math.erf", math.erf),
]


@pytest.mark.parametrize("op, reference", MATH_OPS)
@pytest.mark.parametrize("dtype, np_dtype", [("f32", np.float32), ("f64", np.float64)])
def test_unary_math(op, reference, dtype, np_dtype):
    text = f"""
    func.func @f(%x: {dtype}) -> {dtype} {{
      %y = {op} %x : {dtype}
      func.return %y : {dtype}
    }}"""
    x = np_dtype(0.625)
    y = run(text, "f", x)
    assert y.dtype == np_dtype
    assert y == np_dtype(reference(x))


def test_powf_fma_and_call():
    text = """
    func.func @helper(%a: f64, %b: f64) -> f64 {
      %p = math.powf %a, %b : f64
      func.return %p : f64
    }
    func.func @f(%a: f64, %b: f64, %c: f64) -> (f64, f64) {
      %p = func.call @helper(%a, %b) : (f64, f64) -> f64
      %m = math.fma %a, %b, %c : f64
      func.return %p, %m : f64, f64
    }"""
    p, m = run(text, "f", 1.5, 2.5, 0.25)
    assert p == 1.5**2.5 and m == 1.5 * 2.5 + 0.25


def test_scf_if_and_tensor_insert_extract():
    text = """
    func.func @f(%x: tensor<3xf64>, %k: index, %flag: i1) -> (tensor<3xf64>, f64) {
      %r = scf.if %flag -> (tensor<3xf64>) {
        %v = tensor.extract %x[%k] : tensor<3xf64>
        %n = arith.negf %v : f64
        %y = tensor.insert %n into %x[%k] : tensor<3xf64>
        scf.yield %y : tensor<3xf64>
      } else {
        scf.yield %x : tensor<3xf64>
      }
      %e = tensor.extract %r[%k] : tensor<3xf64>
      func.return %r, %e : tensor<3xf64>, f64
    }"""
    x = np.array([1.0, 2.0, 3.0])
    y, e = run(text, "f", x, 1, True)
    np.testing.assert_array_equal(y, [1.0, -2.0, 3.0])
    assert e == -2.0
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])
    y, e = run(text, "f", x, 1, False)
    np.testing.assert_array_equal(y, x)
    assert e == 2.0


def test_dense_tensor_constant():
    text = """
    func.func @f() -> tensor<2x3xi32> {
      %c = arith.constant dense<[[1, -2, 3], [4, 5, -6]]> : tensor<2x3xi32>
      func.return %c : tensor<2x3xi32>
    }"""
    c = run(text, "f")
    assert c.dtype == np.int32
    np.testing.assert_array_equal(c, [[1, -2, 3], [4, 5, -6]])


IDENTITY = """
func.func @id(%x: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}"""


@pytest.mark.parametrize(
    "args, error, message",
    [
        ((np.zeros(4, np.float32),), TypeError, "takes 2 arguments, got 1"),
        ((np.zeros(4), 1.0), TypeError, "argument %x: expected dtype float32"),
        ((np.zeros(5, np.float32), 1.0), ValueError, "argument %x: expected shape"),
        ((np.zeros((4, 1), np.float32), 1.0), ValueError, "argument %x: expected shape"),
        (([0.0] * 4, 1.0), TypeError, "argument %x: expected a numpy array"),
        ((np.zeros(4, np.float32), "1"), TypeError, "argument %s: expected a f32"),
    ],
)
def test_argument_errors(args, error, message):
    with pytest.raises(error, match=message):
        run(IDENTITY, "id", *args)


def test_results_do_not_alias_arguments():
    x = np.zeros(4, np.float32)
    y = run(IDENTITY, "id", x, 1.0)
    np.testing.assert_array_equal(y, x)
    assert not np.shares_memory(x, y)


def test_undefined_fptosi_and_loop_step_are_errors():
    text = """
    func.func @f(%x: f64, %step: index) -> i32 {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %r = scf.for %t = %c0 to %c4 step %step iter_args(%a = %x) -> (f64) {
        scf.yield %a : f64
      }
      %i = arith.fptosi %r : f64 to i32
      func.return %i : i32
    }"""
    assert run(text, "f", -3.9, 1) == -3
    with pytest.raises(ValueError, match="'arith.fptosi' of nan is undefined"):
        run(text, "f", np.nan, 1)
    with pytest.raises(ValueError, match="'scf.for' step must be positive, got 0"):
        run(text, "f", 1.0, 0)


def test_unknown_function():
    with pytest.raises(ValueError, match="no function @nope"):
        run(IDENTITY, "nope")


NN_CASES = [
    ("nn.matmul %a, %b : (tensor<3x4xf64>, tensor<4x2xf64>) -> tensor<3x2xf64>",
     [(3, 4), (4, 2)], lambda a, b: a @ b),
    ("nn.linear %a, %b, %c : (tensor<3x4xf64>, tensor<2x4xf64>, tensor<2xf64>) -> tensor<3x2xf64>",
     [(3, 4), (2, 4), (2,)], lambda a, b, c: a @ b.T + c),
    ("nn.add %a, %b : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>",
     [(3, 4), (3, 4)], np.add),
    ("nn.relu %a : (tensor<3x4xf64>) -> tensor<3x4xf64>", [(3, 4)], lambda a: np.maximum(a, 0)),
    ("nn.softmax %a {axis = 0 : i64} : (tensor<3x4xf64>) -> tensor<3x4xf64>",
     [(3, 4)], lambda a: np.exp(a) / np.exp(a).sum(axis=0)),
    ("nn.log_softmax %a {axis = -1 : i64} : (tensor<3x4xf64>) -> tensor<3x4xf64>",
     [(3, 4)], lambda a: a - np.log(np.exp(a).sum(axis=1, keepdims=True))),
    ('nn.reduce %a {kind = "mean", axes = array<i64: 0, -1>, keepdims} : (tensor<3x4xf64>) -> tensor<1x1xf64>',
     [(3, 4)], lambda a: a.mean(keepdims=True)),
    ('nn.reduce %a {kind = "max", axes = array<i64: 1>} : (tensor<3x4xf64>) -> tensor<3xf64>',
     [(3, 4)], lambda a: a.max(axis=1)),
    ("nn.transpose %a {permutation = array<i64: 1, 0>} : (tensor<3x4xf64>) -> tensor<4x3xf64>",
     [(3, 4)], np.transpose),
    ("nn.broadcast %a : (tensor<4xf64>) -> tensor<2x3x4xf64>",
     [(4,)], lambda a: np.broadcast_to(a, (2, 3, 4))),
]


@pytest.mark.parametrize("op, shapes, reference", NN_CASES, ids=lambda c: str(c)[:14])
def test_nn_ops_mean_their_numpy_semantics(op, shapes, reference):
    """Library-level IR runs as is: an nn op means its pure expansion."""
    names = "abc"[: len(shapes)]
    params = ", ".join(f"%{n}: tensor<{'x'.join(map(str, s))}xf64>" for n, s in zip(names, shapes))
    result_type = op.rsplit("-> ", 1)[1]
    text = f"""
    func.func @f({params}) -> {result_type} {{
      %r = {op}
      func.return %r : {result_type}
    }}"""
    args = [RNG.standard_normal(s) for s in shapes]
    np.testing.assert_allclose(run(text, "f", *args), reference(*args), rtol=1e-13, atol=1e-15)


def test_nn_relu_passes_nan_and_nll_loss_picks_labels():
    text = """
    func.func @f(%x: tensor<2x3xf32>, %l: tensor<2xi64>) -> (tensor<2x3xf32>, tensor<f32>) {
      %r = nn.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
      %n = nn.nll_loss %x, %l : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<f32>
      func.return %r, %n : tensor<2x3xf32>, tensor<f32>
    }"""
    x = np.array([[np.nan, -1, 2], [3, -4, 0.5]], np.float32)
    relu, loss = run(text, "f", x, np.array([2, 0], np.int64))
    np.testing.assert_array_equal(relu, [[np.nan, 0, 2], [3, 0, 0.5]])
    assert relu.dtype == loss.dtype == np.float32
    np.testing.assert_allclose(loss, -(2 + 3) / 2, rtol=1e-7)


def test_readme_snippet_interprets_library_level_ir_and_its_gradient():
    """The README's Python embedding, with `interpret` as the reference."""
    from dfc.compiler import PassManager

    module = parse_module((EXAMPLES / "gemm_sum.mlir").read_text(), "gemm_sum.mlir")
    x, y = RNG.standard_normal((5, 4)), RNG.standard_normal((4, 3))
    x, y = x.astype(np.float32), y.astype(np.float32)
    np.testing.assert_allclose(interpret(module, "gemm_sum", x, y), (x @ y).sum(), rtol=1e-5)
    PassManager.parse("autodiff,canonicalize,cse").run(module)
    loss, dx, dy = interpret(module, "gemm_sum_grad", x, y, np.array(1.0, np.float32))
    np.testing.assert_allclose(loss, (x @ y).sum(), rtol=1e-5)
    np.testing.assert_allclose(dx, np.broadcast_to(y.sum(axis=1), (5, 4)), rtol=1e-5)
    np.testing.assert_allclose(dy, np.broadcast_to(x.sum(axis=0)[:, None], (4, 3)), rtol=1e-5)


def test_unsupported_op_is_named():
    text = """
    func.func @f(%x: f64) -> f64 {
      %y = math.atan %x : f64
      func.return %y : f64
    }"""
    with pytest.raises(NotImplementedError, match="no semantics for 'math.atan'"):
        run(text, "f", 1.0)


@pytest.mark.parametrize("index_op", ["arith.addi", "arith.subi"])
def test_out_of_bounds_read_is_an_error(index_op):
    """An offset the verifier cannot see (an argument) reads outside at run time."""
    text = f"""
    func.func @f(%x: tensor<4xf64>, %c1: index) -> tensor<f64> {{
      %zero = arith.constant dense<0.0> : tensor<f64>
      %s = df.map (%i) in (4) outs(%acc = %zero : tensor<f64>) {{
        %k = {index_op} %i, %c1 : index
        %v = df.read %x[%k] : tensor<4xf64>
        df.write %v, %acc[] wcr(add) : tensor<f64>
      }} -> tensor<f64>
      func.return %s : tensor<f64>
    }}"""
    with pytest.raises(IndexError, match="'df.read' index \\(-?\\d+,\\) out of bounds"):
        run(text, "f", np.zeros(4), 1)


@pytest.mark.parametrize("n", [16, pytest.param(64, marks=pytest.mark.slow)])
def test_jacobi2d_example(n):
    """The example as written (64x64: ~150k tasklets, with --slow) and resized to n x n."""
    text = (EXAMPLES / "jacobi2d.mlir").read_text()
    module = parse_module(text.replace("64x64x", f"{n}x{n}x").replace("(64, 64)", f"({n}, {n})").replace("(62, 62)", f"({n - 2}, {n - 2})"))
    a = RNG.standard_normal((n, n))
    result = interpret(module, "jacobi2d", a)
    b = a.copy()
    a = a.copy()
    for _ in range(20):
        for src, dst in ((a, b), (b, a)):
            center, west, east = src[1:-1, 1:-1], src[1:-1, :-2], src[1:-1, 2:]
            south, north = src[2:, 1:-1], src[:-2, 1:-1]
            dst[1:-1, 1:-1] = 0.2 * ((((center + west) + east) + south) + north)
    assert result.shape == () and result.dtype == np.float64
    # the stencil's addition order, then a row-major sequential sum
    np.testing.assert_array_equal(result, np.cumsum(a.ravel())[-1])


def test_softmax_example():
    module = parse_module((EXAMPLES / "softmax.mlir").read_text())
    x = RNG.standard_normal((64, 512)).astype(np.float32)
    w = RNG.standard_normal((64, 512)).astype(np.float32)
    loss = interpret(module, "softmax_loss", x, w)
    # the maps' order: sequential float32 sums along each row, then over all elements
    e = np.exp(x - x.max(axis=1, keepdims=True))
    p = e / np.cumsum(e, axis=1)[:, -1:]
    expected = np.cumsum((p * w).ravel())[-1]
    assert loss.shape == () and loss.dtype == np.float32
    np.testing.assert_allclose(loss, expected, rtol=1e-6)
