"""StableHLO modules in the style of the spec's interpreter tests (`stablehlo/tests/interpret`).

Such a test is a function without arguments: constant inputs, the op, then
`check.expect_eq_const`/`check.expect_almost_eq_const`/`check.expect_eq`/
`check.expect_almost_eq` ops. `check` is not StableHLO: `translate_checks`
removes each check and returns the checked value together with its expected
value instead (a constant turns into `stablehlo.constant`), and `verdict`
compares them as the spec's check dialect does: `expect_eq` exactly (NaN equals
NaN), `expect_almost_eq` within an absolute tolerance (1e-4 unless the check
gives one; infinities and NaN exactly); both live in `support.stablehlo_checks`.

The default run checks hand-written modules whose expected values NumPy
computes. `test_spec_interpreter_tests` (`--slow`) runs every case of the
spec's own files from a checkout named by `DFC_STABLEHLO_TESTS` (the folder
`stablehlo/tests/interpret`): each must pass or be refused by a `CompileError`;
a wrong value or another exception fails it.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from dfc import CompileError, interpret
from dfc.importers.stablehlo_import import import_stablehlo
from support.stablehlo_checks import NotTranslated, dense, verdict

SPEC_TESTS = os.environ.get("DFC_STABLEHLO_TESTS")
rng = np.random.default_rng(0)
EDGE = np.array([-np.inf, -2.5, -0.0, 0.0, 1e-300, 3.7, np.inf, np.nan])
I8_A, I8_B = np.array([127, -128, 5, -7], np.int8), np.array([1, -1, 100, 3], np.int8)
X23, Y23 = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
A234, B245 = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5))
I36, X36 = rng.integers(-50, 50, (3, 6)), rng.standard_normal((3, 6))

HAND_WRITTEN = {
    # name -> (case text, with {want} filled by the NumPy result)
    "add_i8_wraps": (f"""
func.func @add_i8() {{
  %0 = stablehlo.constant {dense(I8_A)}
  %1 = stablehlo.constant {dense(I8_B)}
  %2 = stablehlo.add %0, %1 : tensor<4xi8>
  check.expect_eq_const %2, {{want}}
  func.return
}}""", lambda: ((I8_A.astype(np.int64) + I8_B + 128) % 256 - 128).astype(np.int8)),
    "multiply_edge_values": (f"""
func.func @multiply_edges() {{
  %0 = stablehlo.constant {dense(EDGE)}
  %1 = stablehlo.constant {dense(EDGE[::-1].copy())}
  %2 = stablehlo.multiply %0, %1 : tensor<8xf64>
  check.expect_almost_eq_const %2, {{want}}
  func.return
}}""", lambda: EDGE * EDGE[::-1]),
    "reduce_sum": (f"""
func.func @reduce_sum() {{
  %0 = stablehlo.constant {dense(X36)}
  %1 = stablehlo.constant dense<0.0> : tensor<f64>
  %2 = "stablehlo.reduce"(%0, %1) ({{
    ^bb0(%a: tensor<f64>, %b: tensor<f64>):
      %s = stablehlo.add %a, %b : tensor<f64>
      stablehlo.return %s : tensor<f64>
  }}) {{dimensions = array<i64: 1>}} : (tensor<3x6xf64>, tensor<f64>) -> tensor<3xf64>
  check.expect_almost_eq_const %2, {{want}}, tolerance = 1e-12
  func.return
}}""", lambda: X36.sum(axis=1)),
    "dot_general_batched": (f"""
func.func @dot_general() {{
  %0 = stablehlo.constant {dense(A234)}
  %1 = stablehlo.constant {dense(B245)}
  %2 = "stablehlo.dot_general"(%0, %1) {{
    dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0],
                                           lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>
  }} : (tensor<2x3x4xf64>, tensor<2x4x5xf64>) -> tensor<2x3x5xf64>
  check.expect_almost_eq_const %2, {{want}}, tolerance = 1e-12
  func.return
}}""", lambda: np.einsum("bij,bjk->bik", A234, B245)),
    "select_compare_and_a_call": (f"""
func.func private @larger(%x: tensor<2x3xf64>, %y: tensor<2x3xf64>) -> tensor<2x3xf64> {{
  %p = stablehlo.compare GT, %x, %y, FLOAT : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xi1>
  %r = stablehlo.select %p, %x, %y : tensor<2x3xi1>, tensor<2x3xf64>
  func.return %r : tensor<2x3xf64>
}}
func.func @select_compare() {{
  %0 = stablehlo.constant {dense(X23)}
  %1 = stablehlo.constant {dense(Y23)}
  %2 = func.call @larger(%0, %1) : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  %3 = stablehlo.maximum %0, %1 : tensor<2x3xf64>
  check.expect_eq %2, %3 : tensor<2x3xf64>
  check.expect_eq_const %2, {{want}}
  func.return
}}""", lambda: np.maximum(X23, Y23)),
    "get_dimension_size": (f"""
func.func @dimension_size() {{
  %0 = stablehlo.constant {dense(I36)}
  %1 = stablehlo.get_dimension_size %0, dim = 1 : (tensor<3x6xi64>) -> tensor<i32>
  check.expect_eq_const %1, {{want}}
  func.return
}}""", lambda: np.int32(I36.shape[1])),
}


@pytest.mark.parametrize("name", HAND_WRITTEN)
def test_hand_written_case_passes(name):
    template, reference = HAND_WRITTEN[name]
    want = np.asarray(reference())
    assert verdict(template.replace("{want}", dense(want))) == "pass"


def test_a_wrong_expected_value_is_a_wrong_verdict():
    template, reference = HAND_WRITTEN["multiply_edge_values"]
    want = np.asarray(reference())
    want[2] += 1e-3
    assert verdict(template.replace("{want}", dense(want))).startswith("wrong: check 0 of @multiply_edges")


@pytest.mark.parametrize("element, message", [
    ("complex<f16>", "'stablehlo.constant' on element type complex<f16> is not supported"),
    ("tf32", "'stablehlo.constant' on element type tf32 is not supported"),
])
def test_an_element_type_dfc_cannot_compute_with_is_refused_where_it_appears(element, message):
    value = "[(1.0, 2.0), (3.0, 4.0)]" if element.startswith("complex") else "[1, 2]"
    case = f"""
func.func @typed() {{
  %0 = stablehlo.constant dense<{value}> : tensor<2x{element}>
  %1 = stablehlo.add %0, %0 : tensor<2x{element}>
  check.expect_eq %1, %1 : tensor<2x{element}>
  func.return
}}"""
    with pytest.raises(CompileError, match=message) as err:
        verdict(case)
    assert str(err.value).startswith("<stablehlo>:")


U8_A, U8_B = np.array([200, 3, 255, 0, 128, 7], np.uint8), np.array([7, 250, 1, 9, 127, 7], np.uint8)
U64_A = np.array([2 ** 64 - 1, 2 ** 63 + 5, 12, 0, 2 ** 63 - 1, 9], np.uint64)
U64_B = np.array([3, 2 ** 63 + 7, 5, 1, 2 ** 64 - 2, 10], np.uint64)


@pytest.mark.parametrize("a, b, kind", [pytest.param(U8_A, U8_B, "ui8", marks=pytest.mark.slow), (U64_A, U64_B, "ui64")])
def test_unsigned_integers_compute_with_their_values(a, b, kind):
    """Each sign-sensitive op of unsigned operands against NumPy's uint arithmetic; dfc returns the bits
    as the signed integers of the same width."""
    t = f"tensor<6x{kind}>"
    text = f"""
func.func @unsigned() -> ({t}, {t}, {t}, {t}, tensor<6xi1>, tensor<6xi1>, tensor<6xf64>, tensor<6xi64>, {t}, {t}) {{
  %a = stablehlo.constant {dense(a)}
  %b = stablehlo.constant {dense(b)}
  %max = stablehlo.maximum %a, %b : {t}
  %min = stablehlo.minimum %a, %b : {t}
  %div = stablehlo.divide %a, %b : {t}
  %rem = stablehlo.remainder %a, %b : {t}
  %gt = stablehlo.compare GT, %a, %b, UNSIGNED : ({t}, {t}) -> tensor<6xi1>
  %le = stablehlo.compare LE, %a, %b : ({t}, {t}) -> tensor<6xi1>
  %f = stablehlo.convert %a : ({t}) -> tensor<6xf64>
  %i = stablehlo.convert %a : ({t}) -> tensor<6xi64>
  %c = stablehlo.clamp %b, %a, %max : {t}
  %s = stablehlo.shift_right_logical %a, %b : {t}
  func.return %max, %min, %div, %rem, %gt, %le, %f, %i, %c, %s : {t}, {t}, {t}, {t}, tensor<6xi1>, tensor<6xi1>,
    tensor<6xf64>, tensor<6xi64>, {t}, {t}
}}"""
    got = interpret(import_stablehlo(text), "unsigned")
    bits = a.dtype.itemsize * 8
    shifted = np.where(b < bits, a >> np.minimum(b, bits - 1), 0).astype(a.dtype)
    want = (np.maximum(a, b), np.minimum(a, b), a // b, a % b, a > b, a <= b, a.astype(np.float64),
            a.astype(np.int64), np.minimum(np.maximum(a, b), np.maximum(a, b)), shifted)
    for k, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g)
        if w.dtype.kind == "u":
            assert g.dtype == np.dtype(f"int{bits}"), k
            g = g.view(w.dtype)
        np.testing.assert_array_equal(g, w, err_msg=f"result {k}")


def test_a_loop_bounded_by_an_unsigned_comparison_counts_past_the_signed_range():
    """0, 1e9, 2e9, 3e9 as ui32: a signed reading of the bound 3e9 (negative) would stop at once."""
    text = """
func.func @loop() -> tensor<ui32> {
  %init = stablehlo.constant dense<0> : tensor<ui32>
  %n = stablehlo.constant dense<3000000000> : tensor<ui32>
  %r = stablehlo.while(%i = %init) : tensor<ui32>
    cond {
      %c = stablehlo.compare LT, %i, %n : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %step = stablehlo.constant dense<1000000000> : tensor<ui32>
      %j = stablehlo.add %i, %step : tensor<ui32>
      stablehlo.return %j : tensor<ui32>
    }
  func.return %r : tensor<ui32>
}"""
    assert np.asarray(interpret(import_stablehlo(text), "loop")).view(np.uint32) == 3_000_000_000


@pytest.mark.slow  # test_stablehlo_coverage's "unsigned" case crosses JAX's dtypes on the interpreter in CI
def test_unsigned_integers_of_a_jax_function_cross_as_its_dtypes():
    jnp = pytest.importorskip("jax.numpy")
    import jax

    from dfc.importers.stablehlo_import import from_jax

    def f(a, b):
        return jnp.maximum(a, b) // jnp.uint8(7), a.astype(jnp.uint32) * jnp.uint32(3_000_000_000)

    f_dfc = from_jax(f, U8_A, U8_B)
    for got, want in zip(f_dfc(U8_A, U8_B), jax.jit(f)(U8_A, U8_B)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, np.asarray(want))


@pytest.mark.parametrize("case, message", [
    ("%r = stablehlo.sign %a : tensor<2xui8>", "'stablehlo.sign' of unsigned integers is not supported"),
    ("%i = stablehlo.constant dense<0> : tensor<ui8>\n  %r = stablehlo.dynamic_slice %a, %i, sizes = [1] : "
     "(tensor<2xui8>, tensor<ui8>) -> tensor<1xui8>", "'stablehlo.dynamic_slice' with unsigned indices"),
])
def test_an_unsigned_op_without_an_unsigned_form_is_refused(case, message):
    text = f"""
func.func @f() {{
  %a = stablehlo.constant dense<[1, 200]> : tensor<2xui8>
  {case}
  func.return
}}"""
    with pytest.raises(CompileError, match=message):
        import_stablehlo(text.replace("\\n", "\n"))


TRI_A = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
TRI_LOWER, TRI_UPPER = TRI_A.copy(), TRI_A.copy()  # NaN and inf in the triangle not used must not matter
TRI_LOWER[:, [0, 0, 1], [1, 2, 2]], TRI_UPPER[:, [1, 2, 2], [0, 0, 1]] = np.nan, np.inf
TRI_B = rng.standard_normal((2, 3, 4))


def _triangular_reference(left: bool, lower: bool, unit: bool, transpose: bool) -> np.ndarray:
    t = np.where(np.tril(np.ones((3, 3), bool)) if lower else np.triu(np.ones((3, 3), bool)), TRI_A, 0.0)
    if unit:
        t[:, range(3), range(3)] = 1.0
    op = t.swapaxes(1, 2) if transpose else t
    b = TRI_B if left else TRI_B.swapaxes(1, 2)
    return np.linalg.solve(op, b) if left else np.linalg.solve(op.swapaxes(1, 2), b.swapaxes(1, 2)).swapaxes(1, 2)


ALL_TRIANGULAR = [(left, lower, unit, tr) for left in (True, False) for lower in (True, False)
                  for unit in (True, False) for tr in (True, False)]
"""(left_side, lower, unit_diagonal, transpose) of triangular_solve; CI runs four, each flag both ways."""


@pytest.mark.parametrize("variants", [
    pytest.param([(True, True, False, False), (False, False, True, True), (True, False, True, False),
                  (False, True, False, True)], id="four"),
    pytest.param(ALL_TRIANGULAR, id="all", marks=pytest.mark.slow),
])
def test_triangular_solve_of_each_side_triangle_diagonal_and_transpose_equals_numpy(variants):
    """Variants on a batch of two 3x3 systems (NaN and inf in the other triangle) against NumPy's solve
    of the triangle, in one module."""
    a, b, bt = "tensor<2x3x3xf64>", "tensor<2x3x4xf64>", "tensor<2x4x3xf64>"
    lines, results, types = [], [], []
    for k, (left, lower, unit, tr) in enumerate(variants):
        ty = b if left else bt
        rhs = "%b" if left else "%bt"
        attrs = (f"left_side = {str(left).lower()}, lower = {str(lower).lower()}, unit_diagonal = "
                 f"{str(unit).lower()}, transpose_a = #stablehlo<transpose {'TRANSPOSE' if tr else 'NO_TRANSPOSE'}>")
        matrix = "%al" if lower else "%au"
        lines.append(f'  %x{k} = "stablehlo.triangular_solve"({matrix}, {rhs}) {{{attrs}}} : ({a}, {ty}) -> {ty}')
        results.append(f"%x{k}")
        types.append(ty)
    text = f"""
func.func @solve() -> ({", ".join(types)}) {{
  %al = stablehlo.constant {dense(TRI_LOWER)}
  %au = stablehlo.constant {dense(TRI_UPPER)}
  %b = stablehlo.constant {dense(TRI_B)}
  %bt = stablehlo.transpose %b, dims = [0, 2, 1] : ({b}) -> {bt}
{chr(10).join(lines)}
  func.return {", ".join(results)} : {", ".join(types)}
}}"""
    got = interpret(import_stablehlo(text), "solve")
    for variant, x in zip(variants, got):
        want = _triangular_reference(*variant)
        np.testing.assert_allclose(x, want, rtol=1e-12, atol=1e-12, err_msg=str(variant))


def test_triangular_solve_gradient_equals_finite_differences():
    """d sum(x^2) for x = solve(tril(a)^T, b), by autodiff through the substitution loop, against float64
    central differences of NumPy's solve."""
    from dfc.compiler.pass_manager import PassManager

    text = """
func.func @f(%a: tensor<3x3xf64>, %b: tensor<3x2xf64>) -> tensor<f64> {
  %x = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false,
    transpose_a = #stablehlo<transpose TRANSPOSE>} : (tensor<3x3xf64>, tensor<3x2xf64>) -> tensor<3x2xf64>
  %sq = stablehlo.multiply %x, %x : tensor<3x2xf64>
  %z = stablehlo.constant dense<0.0> : tensor<f64>
  %s = stablehlo.reduce(%sq init: %z) applies stablehlo.add across dimensions = [0, 1]
    : (tensor<3x2xf64>, tensor<f64>) -> tensor<f64>
  func.return %s : tensor<f64>
}"""
    module = import_stablehlo(text)
    PassManager.parse("autodiff{func=f}").run(module)
    a, b = TRI_A[0], TRI_B[0, :, :2]
    _, grad_a, grad_b = interpret(module, "f_grad", a, b, np.array(1.0))

    def f(a, b):
        return np.sum(np.linalg.solve(np.tril(a).T, b) ** 2)

    for k, (x, g) in enumerate(((a, grad_a), (b, grad_b))):
        fd = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            d = np.zeros_like(x)
            d[i] = 1e-6
            fd[i] = ((f(a + d, b) - f(a - d, b)) if k == 0 else (f(a, b + d) - f(a, b - d))) / 2e-6
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8, err_msg=f"gradient of argument {k}")


def test_map_applies_its_computation_elementwise():
    text = f"""
func.func @map() -> tensor<3x6xf64> {{
  %x = stablehlo.constant {dense(X36)}
  %i = stablehlo.constant {dense(I36)}
  %r = "stablehlo.map"(%x, %i) ({{
    ^bb0(%a: tensor<f64>, %n: tensor<i64>):
      %c = stablehlo.constant dense<0.5> : tensor<f64>
      %f = stablehlo.convert %n : (tensor<i64>) -> tensor<f64>
      %p = stablehlo.multiply %a, %f : tensor<f64>
      %q = stablehlo.maximum %p, %c : tensor<f64>
      stablehlo.return %q : tensor<f64>
  }}) {{dimensions = array<i64: 0, 1>}} : (tensor<3x6xf64>, tensor<3x6xi64>) -> tensor<3x6xf64>
  func.return %r : tensor<3x6xf64>
}}"""
    np.testing.assert_array_equal(interpret(import_stablehlo(text), "map"), np.maximum(X36 * I36, 0.5))


BITS_I64 = np.array([0, 1, -1, 2 ** 62, -2 ** 63, 12345, 2 ** 40 - 1], np.int64)
BITS_I8 = np.array([0, 1, -1, 64, -128, 37, 15], np.int8)


@pytest.mark.parametrize("x", [BITS_I64, pytest.param(BITS_I8, marks=pytest.mark.slow)], ids=["i64", "i8"])
def test_popcnt_and_count_leading_zeros_count_the_bits(x):
    bits = x.dtype.itemsize * 8
    t = f"tensor<7x{dense(x).split('x')[-1][:-1]}>"
    text = f"""
func.func @bits() -> ({t}, {t}) {{
  %x = stablehlo.constant {dense(x)}
  %p = stablehlo.popcnt %x : {t}
  %z = stablehlo.count_leading_zeros %x : {t}
  func.return %p, %z : {t}, {t}
}}"""
    got_p, got_z = interpret(import_stablehlo(text), "bits")
    pattern = [int(v) & ((1 << bits) - 1) for v in x]
    np.testing.assert_array_equal(got_p, [bin(v).count("1") for v in pattern])
    np.testing.assert_array_equal(got_z, [bits - v.bit_length() for v in pattern])


@pytest.mark.parametrize("dtype", [np.int8, pytest.param(np.uint8, marks=pytest.mark.slow), pytest.param(np.int64, marks=pytest.mark.slow),
                                   np.uint64])
def test_mulhi_is_the_high_half_of_the_double_width_product(dtype):
    info = np.iinfo(dtype)
    bits = info.bits
    edges = [info.min, info.max, 0, 1, info.max // 3, info.min // 2 or info.max // 2 + 1]
    a = np.array(edges + [int(v) for v in rng.integers(info.min, info.max, 6, dtype=dtype, endpoint=True)], dtype)
    b = np.array(edges[::-1] + [int(v) for v in rng.integers(info.min, info.max, 6, dtype=dtype, endpoint=True)],
                 dtype)
    t = f"tensor<12x{'u' if info.min == 0 else ''}i{bits}>"
    text = f"""
func.func @hi() -> {t} {{
  %a = stablehlo.constant {dense(a)}
  %b = stablehlo.constant {dense(b)}
  %r = "chlo.mulhi"(%a, %b) : ({t}, {t}) -> {t}
  func.return %r : {t}
}}"""
    got = np.asarray(interpret(import_stablehlo(text), "hi")).view(dtype)
    np.testing.assert_array_equal(got, np.array([(int(x) * int(y)) >> bits for x, y in zip(a, b)], dtype))


BITCAST_F64 = np.array([1.5, -0.0, np.inf, np.nan, -3.25e-300, 0x0123456789ABCDEF])


def test_bitcast_convert_reinterprets_splits_and_joins_bits():
    """f64 -> i64 (same width), f64 -> 8xi8 and 64xi1 (lowest bits first), 8xi8 -> f64, against numpy views."""
    text = f"""
func.func @bits() -> (tensor<6xi64>, tensor<6x8xi8>, tensor<6x64xi1>, tensor<6xf64>) {{
  %x = stablehlo.constant {dense(BITCAST_F64)}
  %i = stablehlo.bitcast_convert %x : (tensor<6xf64>) -> tensor<6xi64>
  %b = stablehlo.bitcast_convert %x : (tensor<6xf64>) -> tensor<6x8xi8>
  %p = stablehlo.bitcast_convert %x : (tensor<6xf64>) -> tensor<6x64xi1>
  %y = stablehlo.bitcast_convert %b : (tensor<6x8xi8>) -> tensor<6xf64>
  func.return %i, %b, %p, %y : tensor<6xi64>, tensor<6x8xi8>, tensor<6x64xi1>, tensor<6xf64>
}}"""
    i, b, p, y = interpret(import_stablehlo(text), "bits")
    little = BITCAST_F64.astype("<f8")
    np.testing.assert_array_equal(i, little.view("<i8"))
    np.testing.assert_array_equal(b, little.view(np.int8).reshape(6, 8))
    np.testing.assert_array_equal(p, np.unpackbits(little.view(np.uint8), bitorder="little").reshape(6, 64))
    np.testing.assert_array_equal(np.asarray(y).view(np.int64), little.view(np.int64))


def _reduced_to_half(x: np.ndarray) -> np.ndarray:
    """x rounded to float16's e5m10 (to nearest, ties to even; overflow to inf), with float16's subnormal
    results flushed to signed zero, as reduce_precision does."""
    with np.errstate(over="ignore"):
        h = x.astype(np.float16).astype(np.float64)
    return np.where(np.abs(h) < 2.0 ** -14, np.copysign(0.0, x), h)


REDUCE_X = np.concatenate([
    [0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, 65519.0, 65520.0, -70000.0, 2.0 ** -14, 3e-5, -1e-6,
     1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, -(1 + 2.0 ** -11)],
    rng.standard_normal(8) * 10.0 ** rng.integers(-3, 4, 8)])


def test_reduce_precision_rounds_to_the_format_and_passes_the_gradient():
    """e5m10 of f64 against float16's rounding (subnormals flushed); its gradient is the identity where the
    result is finite and non-zero (x + (x - stop_gradient(x)) there), 0 elsewhere."""
    from dfc.compiler.pass_manager import PassManager

    n = len(REDUCE_X)
    text = f"""
func.func @r(%x: tensor<{n}xf64>) -> tensor<f64> {{
  %y = stablehlo.reduce_precision %x, format = e5m10 : tensor<{n}xf64>
  %w = stablehlo.constant {dense(np.arange(1.0, n + 1))}
  %p = stablehlo.multiply %y, %w : tensor<{n}xf64>
  %z = stablehlo.constant dense<0.0> : tensor<f64>
  %s = stablehlo.reduce(%p init: %z) applies stablehlo.add across dimensions = [0] : (tensor<{n}xf64>, tensor<f64>)
    -> tensor<f64>
  func.return %s : tensor<f64>
}}
func.func @values(%x: tensor<{n}xf64>) -> tensor<{n}xf64> {{
  %y = stablehlo.reduce_precision %x, format = e5m10 : tensor<{n}xf64>
  func.return %y : tensor<{n}xf64>
}}"""
    module = import_stablehlo(text)
    want = _reduced_to_half(REDUCE_X)
    got = interpret(module, "values", REDUCE_X)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    PassManager.parse("autodiff{func=r}").run(module)
    _, grad = interpret(module, "r_grad", REDUCE_X, np.array(1.0))
    np.testing.assert_array_equal(grad, np.where(np.isfinite(want) & (want != 0), np.arange(1.0, n + 1), 0.0))


def _integer_power(x: int, y: int, bits: int, signed: bool) -> int:
    """The spec interpreter's integer power: 0 for a negative exponent unless |x| = 1, else x ** |y| wrapped."""
    if signed and y < 0:
        if abs(x) != 1:
            return 0
        y = -y
    value = pow(x, y, 1 << bits)
    return value - (1 << bits) if signed and value >= 1 << (bits - 1) else value


@pytest.mark.parametrize("dtype", [np.int8, pytest.param(np.uint8, marks=pytest.mark.slow), pytest.param(np.int64, marks=pytest.mark.slow)])
def test_integer_power_squares_and_multiplies_wrapping(dtype):
    info = np.iinfo(dtype)
    signed = info.min < 0
    x = np.array([3, -1, 1, -3, 0, 7, 2, -2, 5, 0], dtype if signed else np.int64).astype(dtype)
    y = np.array([4, -7, -3, -2, 0, 9, 62, 63, 127, 1], np.int64).astype(dtype)
    t = f"tensor<10x{'' if signed else 'u'}i{info.bits}>"
    text = f"""
func.func @p() -> {t} {{
  %x = stablehlo.constant {dense(x)}
  %y = stablehlo.constant {dense(y)}
  %r = stablehlo.power %x, %y : {t}
  func.return %r : {t}
}}"""
    got = np.asarray(interpret(import_stablehlo(text), "p")).view(dtype)
    want = [_integer_power(int(a), int(b), info.bits, signed) for a, b in zip(x, y)]
    np.testing.assert_array_equal(got, np.array(want, dtype))


DOT_A = rng.integers(-128, 128, (2, 2, 2, 3)).astype(np.int8)
DOT_B = rng.integers(-128, 128, (2, 3, 2, 2)).astype(np.int8)


def test_integer_dot_general_wraps_and_widens_by_value():
    """i8 x i8 -> i8 (batch 0, contracting two dimensions, wrapping), ui8 x ui8 -> i32 (widened by value),
    f32 x f32 -> f64, against numpy's einsum in int64 / float64."""
    u_a, u_b = DOT_A.view(np.uint8), DOT_B.view(np.uint8)
    dims = """#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0],
      lhs_contracting_dimensions = [2, 3], rhs_contracting_dimensions = [2, 1]>"""
    text = f"""
func.func @dots() -> (tensor<2x2x2xi8>, tensor<2x2x2xi32>, tensor<2x2x2xf64>) {{
  %a = stablehlo.constant {dense(DOT_A)}
  %b = stablehlo.constant {dense(DOT_B)}
  %ua = stablehlo.constant {dense(u_a)}
  %ub = stablehlo.constant {dense(u_b)}
  %fa = stablehlo.convert %a : (tensor<2x2x2x3xi8>) -> tensor<2x2x2x3xf32>
  %fb = stablehlo.convert %b : (tensor<2x3x2x2xi8>) -> tensor<2x3x2x2xf32>
  %i = "stablehlo.dot_general"(%a, %b) {{dot_dimension_numbers = {dims}}}
    : (tensor<2x2x2x3xi8>, tensor<2x3x2x2xi8>) -> tensor<2x2x2xi8>
  %u = "stablehlo.dot_general"(%ua, %ub) {{dot_dimension_numbers = {dims}}}
    : (tensor<2x2x2x3xui8>, tensor<2x3x2x2xui8>) -> tensor<2x2x2xi32>
  %f = "stablehlo.dot_general"(%fa, %fb) {{dot_dimension_numbers = {dims}}}
    : (tensor<2x2x2x3xf32>, tensor<2x3x2x2xf32>) -> tensor<2x2x2xf64>
  func.return %i, %u, %f : tensor<2x2x2xi8>, tensor<2x2x2xi32>, tensor<2x2x2xf64>
}}"""
    i, u, f = interpret(import_stablehlo(text), "dots")
    exact = np.einsum("bicd,bdce->bie", DOT_A.astype(np.int64), DOT_B.astype(np.int64))
    np.testing.assert_array_equal(i, exact.astype(np.int8))
    np.testing.assert_array_equal(u, np.einsum("bicd,bdce->bie", u_a.astype(np.int64), u_b.astype(np.int64)))
    np.testing.assert_array_equal(f, exact.astype(np.float64))


CONV_X, CONV_W = rng.standard_normal((1, 2, 5, 4)), rng.standard_normal((3, 2, 3, 2))


def test_convolution_window_reversal_flips_the_kernel():
    """window_reversal [true, false] equals the convolution with the kernel reversed along its first spatial
    dimension; with lhs_dilation too (a transposed convolution), against a NumPy convolution of the input
    with zeros inserted."""
    conv = "dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]"
    t = "(tensor<1x2x5x4xf64>, tensor<3x2x3x2xf64>)"
    text = f"""
func.func @c() -> (tensor<1x3x3x3xf64>, tensor<1x3x3x3xf64>, tensor<1x3x7x6xf64>) {{
  %x = stablehlo.constant {dense(CONV_X)}
  %w = stablehlo.constant {dense(CONV_W)}
  %r = stablehlo.convolution(%x, %w) {conv}, window = {{reverse = [true, false]}}
    {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : {t} -> tensor<1x3x3x3xf64>
  %wr = stablehlo.reverse %w, dims = [2] : tensor<3x2x3x2xf64>
  %e = stablehlo.convolution(%x, %wr) {conv}, window = {{}}
    {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : {t} -> tensor<1x3x3x3xf64>
  %d = stablehlo.convolution(%x, %w) {conv}, window = {{lhs_dilate = [2, 2], reverse = [true, false]}}
    {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : {t} -> tensor<1x3x7x6xf64>
  func.return %r, %e, %d : tensor<1x3x3x3xf64>, tensor<1x3x3x3xf64>, tensor<1x3x7x6xf64>
}}"""
    r, e, d = interpret(import_stablehlo(text), "c")
    np.testing.assert_array_equal(r, e)
    dilated = np.zeros((1, 2, 9, 7))
    dilated[:, :, ::2, ::2] = CONV_X
    w = CONV_W[:, :, ::-1, :]
    want = np.zeros((1, 3, 7, 6))
    for i in range(7):
        for j in range(6):
            want[0, :, i, j] = np.einsum("cij,ocij->o", dilated[0, :, i:i + 3, j:j + 2], w)
    np.testing.assert_allclose(d, want, rtol=1e-12, atol=1e-12)


def test_boolean_arithmetic_is_logical():
    p, q = np.array([True, True, False, False]), np.array([True, False, True, False])
    t = "tensor<4xi1>"
    text = f"""
func.func @logic() -> ({t}, {t}, {t}, {t}) {{
  %p = stablehlo.constant {dense(p)}
  %q = stablehlo.constant {dense(q)}
  %a = stablehlo.add %p, %q : {t}
  %m = stablehlo.multiply %p, %q : {t}
  %x = stablehlo.maximum %p, %q : {t}
  %n = stablehlo.minimum %p, %q : {t}
  func.return %a, %m, %x, %n : {t}, {t}, {t}, {t}
}}"""
    got = interpret(import_stablehlo(text), "logic")
    for g, w in zip(got, (p | q, p & q, p | q, p & q)):
        np.testing.assert_array_equal(g, w)


INT_R = rng.integers(-100, 100, (3, 5, 7)).astype(np.int8)


@pytest.mark.parametrize("body, dims, init, reference", [
    ("add", [0, 2], 5, lambda x: (x.astype(np.int64).sum(axis=(0, 2)) + 5 + 128) % 256 - 128),
    pytest.param("multiply", [1], 1, lambda x: ((x.astype(np.int64) % 3 - 1).prod(axis=1)), marks=pytest.mark.slow),
    ("maximum", [2], -128, lambda x: x.max(axis=2)),
    pytest.param("xor", [0, 1, 2], 0, lambda x: np.bitwise_xor.reduce(x.ravel()), marks=pytest.mark.slow),
])
def test_an_integer_reduce_equals_numpy(body, dims, init, reference):
    """Pairwise folding of 3x5x7 i8 (sums wrap); the multiply case reduces -1, 0, 1 (x % 3 - 1)."""
    x = INT_R if body != "multiply" else (INT_R.astype(np.int64) % 3 - 1).astype(np.int8)
    want = np.asarray(reference(INT_R)).astype(np.int8)
    out = "x".join(str(d) for k, d in enumerate(INT_R.shape) if k not in dims)
    out_t = f"tensor<{out + 'x' if out else ''}i8>"
    text = f"""
func.func @r() -> {out_t} {{
  %x = stablehlo.constant {dense(x)}
  %i = stablehlo.constant dense<{init}> : tensor<i8>
  %r = stablehlo.reduce(%x init: %i) applies stablehlo.{body} across dimensions = {dims}
    : (tensor<3x5x7xi8>, tensor<i8>) -> {out_t}
  func.return %r : {out_t}
}}"""
    np.testing.assert_array_equal(interpret(import_stablehlo(text), "r"), want)


def test_an_unsigned_reduce_by_maximum_compares_values():
    x = np.array([[3, 200, 17], [255, 0, 128]], np.uint8)
    text = f"""
func.func @r() -> tensor<2xui8> {{
  %x = stablehlo.constant {dense(x)}
  %i = stablehlo.constant dense<0> : tensor<ui8>
  %r = stablehlo.reduce(%x init: %i) applies stablehlo.maximum across dimensions = [1]
    : (tensor<2x3xui8>, tensor<ui8>) -> tensor<2xui8>
  func.return %r : tensor<2xui8>
}}"""
    np.testing.assert_array_equal(np.asarray(interpret(import_stablehlo(text), "r")).view(np.uint8), x.max(axis=1))


# ------------------------------------------------------------ the spec's own files

def _spec_files() -> list[Path]:
    return sorted(Path(SPEC_TESTS).rglob("*.mlir")) if SPEC_TESTS else []


@pytest.mark.slow
@pytest.mark.skipif(not SPEC_TESTS, reason="DFC_STABLEHLO_TESTS names no stablehlo/tests/interpret folder")
@pytest.mark.parametrize("path", _spec_files(), ids=lambda p: str(p.relative_to(SPEC_TESTS))[:-5])
def test_spec_interpreter_tests(path):
    """Every case of one spec file passes, is refused by a CompileError, or is one this
    translation does not handle (printed with the counts)."""
    counts: dict[str, int] = {}
    failures = []
    for k, case in enumerate(path.read_text().split("// -----")):
        if "func.func" not in case:
            continue
        try:
            outcome = verdict(case)
        except NotTranslated:
            outcome = "not translated"
        except CompileError:
            outcome = "refused"
        if outcome.startswith("wrong"):
            failures.append(f"case {k}: {outcome}")
        counts[outcome if not outcome.startswith("wrong") else "wrong"] = counts.get(outcome, 0) + 1
    print(path.name, counts)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("shape, message", [
    ("%arg", "'stablehlo.dynamic_reshape' with output shape computed at run time is not supported"),
    ("%c", r"the output shape \[3, 2\] of 'stablehlo.dynamic_reshape' differs from its result type's shape \[2, 3\]"),
])
def test_a_dynamic_shape_must_be_a_constant_equal_to_the_result_shape(shape, message):
    text = f"""
func.func @f(%x: tensor<6xf64>, %arg: tensor<2xi64>) -> tensor<2x3xf64> {{
  %c = stablehlo.constant dense<[3, 2]> : tensor<2xi64>
  %0 = stablehlo.dynamic_reshape %x, {shape} : (tensor<6xf64>, tensor<2xi64>) -> tensor<2x3xf64>
  func.return %0 : tensor<2x3xf64>
}}"""
    with pytest.raises(CompileError, match=message) as err:
        import_stablehlo(text)
    assert str(err.value).startswith("<stablehlo>:4:8:")


DYNAMIC_GATHER = """
func.func @dynamic_gather() {
  %operand = stablehlo.constant dense<[[[1, 2], [3, 4], [5, 6], [7, 8]], [[9, 10], [11, 12], [13, 14], [15, 16]],
                                       [[17, 18], [19, 20], [21, 22], [23, 24]]]> : tensor<3x4x2xi64>
  %start_indices = stablehlo.constant dense<[[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]]> : tensor<2x3x2xi64>
  %slice_sizes = stablehlo.constant dense<[1, 2, 2]> : tensor<3xi64>
  %result = "stablehlo.dynamic_gather"(%operand, %start_indices, %slice_sizes) {
    dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 0],
                                          index_vector_dim = 2>,
    indices_are_sorted = false
  } : (tensor<3x4x2xi64>, tensor<2x3x2xi64>, tensor<3xi64>) -> tensor<2x3x2x2xi64>
  check.expect_eq_const %result, dense<[[[[1, 2], [3, 4]], [[3, 4], [5, 6]], [[13, 14], [15, 16]]],
                                        [[[9, 10], [11, 12]], [[11, 12], [13, 14]], [[17, 18], [19, 20]]]]>
                                 : tensor<2x3x2x2xi64>
  func.return
}"""
DYNAMIC_CONV = """
func.func @dynamic_conv() {
  %lhs = stablehlo.constant dense<[[[[1], [2], [5], [6]], [[3], [4], [7], [8]], [[10], [11], [14], [15]],
                                    [[12], [13], [16], [17]]]]> : tensor<1x4x4x1xi64>
  %rhs = stablehlo.constant dense<1> : tensor<3x3x1x1xi64>
  %padding = stablehlo.constant dense<1> : tensor<2x2xi64>
  %result = "stablehlo.dynamic_conv"(%lhs, %rhs, %padding) {
    window_strides = array<i64: 4, 4>, lhs_dilation = array<i64: 2, 2>, rhs_dilation = array<i64: 1, 1>,
    window_reversal = array<i1: false, false>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    batch_group_count = 1 : i64, feature_group_count = 1 : i64
  } : (tensor<1x4x4x1xi64>, tensor<3x3x1x1xi64>, tensor<2x2xi64>) -> tensor<1x2x2x1xi64>
  check.expect_eq_const %result, dense<[[[[1], [5]], [[10], [14]]]]> : tensor<1x2x2x1xi64>
  func.return
}"""


@pytest.mark.parametrize("case", [DYNAMIC_GATHER, DYNAMIC_CONV], ids=["dynamic_gather", "dynamic_conv"])
def test_dynamic_gather_and_conv_with_constant_operands_equal_the_spec(case):
    """The spec's interpreter tests of the two ops (slice sizes, padding: constants)."""
    assert verdict(case) == "pass"


def test_dynamic_gather_slice_sizes_computed_at_run_time_are_refused():
    case = DYNAMIC_GATHER.replace("%slice_sizes = stablehlo.constant dense<[1, 2, 2]> : tensor<3xi64>",
                                  "%slice_sizes = stablehlo.iota dim = 0 : tensor<3xi64>")
    with pytest.raises(CompileError, match="'stablehlo.dynamic_gather' with slice sizes computed at run time"):
        verdict(case)
