"""The elementwise nn ops (dialects/nn_elementwise.py): forward against numpy
through the interpreter and the engine, gradients against float64 finite
differences, and the verifier's messages."""

import math

import numpy as np
import pytest
from support.autodiff_checks import check_gradient

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.interpreter import interpret
from dfc.dialects.diagnostics import CompileError

RNG = np.random.default_rng(14)


def _t(shape, dtype="f32"):
    return f"tensor<{'x'.join(map(str, shape))}{'x' if shape else ''}{dtype}>"


def _module(op: str, arg_types, result_type, attrs: str = "") -> str:
    params = ", ".join(f"%a{k}: {t}" for k, t in enumerate(arg_types))
    operands = ", ".join(f"%a{k}" for k in range(len(arg_types)))
    return f"""func.func @f({params}) -> {result_type} {{
  %r = {op} {operands} {attrs} : ({", ".join(arg_types)}) -> {result_type}
  func.return %r : {result_type}
}}"""


def run_both(text: str, args):
    """The result by the interpreter (after expand-library) and by the engine."""
    module = parse_module(text)
    PassManager.parse("expand-library,canonicalize,cse").run(module)
    assert not any(o.name.startswith("nn.") for o in module.walk())
    return interpret(module, "f", *args), ExecutionEngine(parse_module(text)).invoke("f", *args)


def check(text: str, args, expected, rtol=1e-6):
    for name, got in zip(("interpreter", "engine"), run_both(text, args)):
        assert got.dtype == expected.dtype, name
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-6, err_msg=name)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


UNARY = {
    "nn.abs": (np.abs, rand),
    "nn.sign": (np.sign, lambda *s: np.round(rand(*s))),
    "nn.floor": (np.floor, lambda *s: rand(*s) * 4),
    "nn.ceil": (np.ceil, lambda *s: rand(*s) * 4),
    "nn.round": (None, lambda *s: np.float32([[-2.5, -1.5, -0.5, 0.5], [1.5, 2.5, -0.4, 0.6], [3.49, -3.51, 7.0, -0.0]])),
    "nn.round_even": (np.rint, lambda *s: np.float32([[-2.5, -1.5, -0.5, 0.5], [1.5, 2.5, -0.4, 0.6], [3.49, -3.51, 7.0, -0.0]])),
    "nn.expm1": (np.expm1, lambda *s: rand(*s) * 1e-3),
    "nn.log1p": (np.log1p, lambda *s: np.abs(rand(*s)) * 1e-3),
    "nn.rsqrt": (lambda x: 1 / np.sqrt(x), lambda *s: np.abs(rand(*s)) + 0.1),
    "nn.cbrt": (np.cbrt, lambda *s: rand(*s) * 8),
    "nn.erf": (np.vectorize(math.erf), lambda *s: rand(*s) * 2),
    "nn.sine": (np.sin, rand),
    "nn.cosine": (np.cos, rand),
    "nn.tan": (np.tan, rand),
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(op):
    fn, make = UNARY[op]
    x = make(3, 4)
    expected = np.sign(x) * np.floor(np.abs(x) + 0.5) if op == "nn.round" else fn(x)
    check(_module(op, [_t([3, 4])], _t([3, 4])), [x], expected.astype(np.float32))


def test_f32_erf_is_within_5e_7_of_erf_everywhere():
    x = np.concatenate([np.linspace(-7, 7, 4001, dtype=np.float32), np.float32([0.0, -0.0, np.inf, -np.inf, np.nan])])
    expected = np.array([math.erf(v) for v in x.astype(np.float64)])
    for got in run_both(_module("nn.erf", [_t([x.size])], _t([x.size])), [x]):
        np.testing.assert_allclose(got, expected, rtol=0, atol=5e-7)


def test_round_is_half_away_from_zero():
    x = np.float32([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5])
    for got in run_both(_module("nn.round", [_t([6])], _t([6])), [x]):
        np.testing.assert_array_equal(got, [-3, -2, -1, 1, 2, 3])


def test_round_even_is_half_to_even():
    x = np.float32([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 1e30, np.nan])
    for got in run_both(_module("nn.round_even", [_t([8])], _t([8])), [x]):
        np.testing.assert_array_equal(got, np.rint(x))
        assert np.signbit(got[2]) and not np.signbit(got[3])


def test_sign_keeps_nan_and_signed_zero():
    x = np.float32([np.nan, -0.0, 0.0, -3, 2])
    for got in run_both(_module("nn.sign", [_t([5])], _t([5])), [x]):
        assert np.isnan(got[0]) and np.signbit(got[1]) and not np.signbit(got[2])
        np.testing.assert_array_equal(got[3:], [-1, 1])


BINARY = {
    "nn.atan2": np.arctan2,
    "nn.power": np.power,
    "nn.remainder": np.fmod,
    "nn.maximum": np.maximum,
    "nn.minimum": np.minimum,
}


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("shapes", [([3, 4], [3, 4], [3, 4]), ([3, 1], [4], [3, 4])])
def test_binary_broadcasting(op, shapes):
    a_shape, b_shape, out = shapes
    a, b = rand(*a_shape) * 3, rand(*b_shape)
    if op == "nn.power":
        a = np.abs(a) + 0.1
    check(_module(op, [_t(a_shape), _t(b_shape)], _t(out)), [a, b], BINARY[op](a, b), rtol=1e-5)


def test_remainder_has_the_sign_of_the_dividend():
    a, b = np.float32([5.5, -5.5, 5.5, -5.5, 1e7 + 1]), np.float32([2, 2, -2, -2, 3])
    for got in run_both(_module("nn.remainder", [_t([5]), _t([5])], _t([5])), [a, b]):
        np.testing.assert_array_equal(got, np.fmod(a, b))


def test_maximum_minimum_propagate_nan():
    a, b = np.float32([np.nan, 1, 2]), np.float32([0, np.nan, 3])
    for op, fn in (("nn.maximum", np.maximum), ("nn.minimum", np.minimum)):
        for got in run_both(_module(op, [_t([3]), _t([3])], _t([3])), [a, b]):
            np.testing.assert_array_equal(got, fn(a, b))


def test_clamp_broadcasts_scalar_bounds():
    lo, x, hi = np.float32(-0.5), rand(3, 4), np.float32([0.1, 0.2, 0.3, 0.4])
    text = _module("nn.clamp", [_t([]), _t([3, 4]), _t([4])], _t([3, 4]))
    check(text, [np.asarray(lo), x, hi], np.minimum(np.maximum(x, lo), hi))


@pytest.mark.parametrize("direction", ["EQ", "NE", "LT", "LE", "GT", "GE"])
@pytest.mark.parametrize("dtype", ["f32", "i32"])
def test_compare(direction, dtype):
    np_dtype = {"f32": np.float32, "i32": np.int32}[dtype]
    a = np_dtype([[0, 1, 2, 3], [3, 2, 1, -1], [5, -5, 2, 2]])
    b = np_dtype([1, 1, 2, -1])
    if dtype == "f32":
        a[0, 0], b[3] = np.nan, np.nan
    fn = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater, "GE": np.greater_equal}
    text = _module("nn.compare", [_t([3, 4], dtype), _t([4], dtype)], _t([3, 4], "i1"), f'{{direction = "{direction}"}}')
    for got in run_both(text, [a, b]):
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, fn[direction](a, b))


def test_select_broadcasts():
    p, a, b = rand(3, 1) > 0, rand(3, 4), rand(4)
    text = _module("nn.select", [_t([3, 1], "i1"), _t([3, 4]), _t([4])], _t([3, 4]))
    check(text, [p, a, b], np.where(p, a, b))


CONVERSIONS = [("f32", "f64"), ("f64", "f32"), ("f32", "i32"), ("f64", "i64"), ("i32", "f32"), ("i64", "f64"),
               ("i32", "i64"), ("i64", "i32"), ("i1", "i32"), ("i1", "f32"), ("i32", "i1"), ("f32", "i1"),
               ("f16", "f32"), ("f32", "f16"), ("f16", "i32"), ("i64", "f16"), ("f16", "f64"), ("i8", "i32"),
               ("i32", "i8"), ("i16", "f32"), ("f64", "i16"), ("i8", "i16"), ("i16", "i1")]
DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i1": np.bool_, "i8": np.int8, "i16": np.int16,
          "i32": np.int32, "i64": np.int64}


@pytest.mark.parametrize("source,target", CONVERSIONS)
def test_convert(source, target):
    values = np.array([[-2.75, -1.0, 0.0, 0.5], [1.5, 2.25, 7.0, -0.0]])
    x = (values != 0) if source == "i1" else values.astype(DTYPES[source])
    if source in ("i32", "i64"):
        x = np.array([[-3, -1, 0, 1], [2, 5, 1 << 20, 0]], dtype=DTYPES[source])
    if source in ("i8", "i16"):
        x = np.array([[-128, -1, 0, 1], [2, 5, 127, 0]], dtype=DTYPES[source])
    with np.errstate(over="ignore"):  # 1 << 20 is inf in f16, as in the conversion
        expected = x.astype(DTYPES[target])  # numpy: toward zero to integers, != 0 to bool
    text = _module("nn.convert", [_t([2, 4], source)], _t([2, 4], target))
    check(text, [x], expected)


def test_convert_wraps_like_trunci():
    x = np.array([2**31 + 5, -(2**31) - 7], dtype=np.int64)
    for got in run_both(_module("nn.convert", [_t([2], "i64")], _t([2], "i32")), [x]):
        np.testing.assert_array_equal(got, x.astype(np.int32))


@pytest.mark.parametrize("source,target", [("f64", "i64"), ("i64", "f64"), ("f32", "i32"), ("i16", "f16"),
                                           ("f16", "i16"), ("i8", "i8")])
def test_bitcast_convert_reads_the_same_bits(source, target):
    """Both engines against numpy's view of the same bytes (NaN payloads, -0.0, infinities and the extreme
    integers included)."""
    dtype = DTYPES[source]
    if np.dtype(dtype).kind == "f":
        x = np.array([[-0.0, np.inf, -np.inf, np.nan], [1.5, -2.25, np.finfo(dtype).tiny, np.finfo(dtype).max]], dtype)
    else:
        info = np.iinfo(dtype)
        x = np.array([[info.min, info.max, -1, 0], [1, 12345 % info.max, info.min + 1, 0x3C00 % info.max]], dtype)
    expected = x.view(DTYPES[target])
    for got in run_both(_module("nn.bitcast_convert", [_t([2, 4], source)], _t([2, 4], target)), [x]):
        np.testing.assert_array_equal(np.asarray(got).view(np.uint8), expected.view(np.uint8))


def _grad_case(op, arg_types, result_type, attrs=""):
    text = _module(op, arg_types, result_type, attrs)
    return text


GRAD_UNARY = {
    "nn.abs": lambda x: x,
    "nn.expm1": lambda x: x,
    "nn.log1p": lambda x: np.abs(x),
    "nn.rsqrt": lambda x: np.abs(x) + 0.5,
    "nn.cbrt": lambda x: x + np.where(x > 0, 0.5, -0.5),
    "nn.erf": lambda x: x,
    "nn.sine": lambda x: x,
    "nn.cosine": lambda x: x,
    "nn.tan": lambda x: x * 0.5,
    "nn.sign": lambda x: x,
    "nn.floor": lambda x: x * 3 + 0.1,
    "nn.ceil": lambda x: x * 3 + 0.1,
    "nn.round": lambda x: x * 3 + 0.1,
    "nn.round_even": lambda x: x * 3 + 0.1,
}


@pytest.mark.parametrize("op", sorted(GRAD_UNARY))
def test_unary_gradient(op):
    x = GRAD_UNARY[op](rand(2, 3, dtype=np.float64))
    check_gradient(_module(op, [_t([2, 3], "f64")], _t([2, 3], "f64")), "f", [x], [0], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_gradient_with_broadcasting(op):
    a, b = rand(2, 3, dtype=np.float64), rand(3, dtype=np.float64)
    if op == "nn.power":
        a = np.abs(a) + 0.2
    if op == "nn.remainder":
        a, b = a * 3, np.abs(b) + 0.3
    text = _module(op, [_t([2, 3], "f64"), _t([3], "f64")], _t([2, 3], "f64"))
    check_gradient(text, "f", [a, b], [0, 1], rtol=1e-6, atol=1e-8)


def _vjp(text: str, args, seed):
    """The gradients of sum(seed * f(args)) by the interpreter and by the engine."""
    module = parse_module(text)
    PassManager.parse("autodiff,expand-library").run(module)
    compiled = parse_module(text)
    PassManager.parse("autodiff").run(compiled)
    return interpret(module, "f_grad", *args, seed)[1:], ExecutionEngine(compiled).invoke("f_grad", *args, seed)[1:]


_STOP = """func.func @f(%x: tensor<3xf64>) -> tensor<3xf64> {
  %s = nn.stop_gradient %x : (tensor<3xf64>) -> tensor<3xf64>
  %r = nn.mul %x, %s : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  func.return %r : tensor<3xf64>
}"""


def test_stop_gradient_is_the_identity_without_a_derivative():
    """f(x) = x * stop_gradient(x): the value x^2; the gradient and the tangent x, not 2x."""
    x, seed, tangent = np.array([1.5, -2.0, 0.25]), np.array([1.0, -3.0, 2.0]), np.array([0.5, 1.0, -4.0])
    for got in run_both(_STOP, [x]):
        np.testing.assert_array_equal(got, x * x)
    for (grad,) in _vjp(_STOP, [x], seed):
        np.testing.assert_array_equal(grad, seed * x)
    module = parse_module(_STOP)
    PassManager.parse("jvp{func=f wrt=0}").run(module)
    value, jvp = interpret(module, "f_jvp", x, tangent)
    np.testing.assert_array_equal(value, x * x)
    np.testing.assert_array_equal(jvp, tangent * x)


@pytest.mark.parametrize("op", ["nn.maximum", "nn.minimum"])
def test_extremum_ties_split_the_gradient(op):
    a, b = np.array([1.0, 2.0, 3.0]), np.array([1.0, 5.0, 0.0])
    text = _module(op, [_t([3], "f64"), _t([3], "f64")], _t([3], "f64"))
    high = op == "nn.maximum"
    for ga, gb in _vjp(text, [a, b], np.ones(3)):
        np.testing.assert_array_equal(ga, [0.5, 0.0 if high else 1.0, 1.0 if high else 0.0])
        np.testing.assert_array_equal(gb, [0.5, 1.0 if high else 0.0, 0.0 if high else 1.0])


def test_power_rhs_gradient_is_zero_at_a_zero_base():
    text = _module("nn.power", [_t([2], "f64"), _t([2], "f64")], _t([2], "f64"))
    for ga, gb in _vjp(text, [np.array([0.0, 2.0]), np.array([2.0, 3.0])], np.ones(2)):
        np.testing.assert_allclose(ga, [0.0, 12.0])
        np.testing.assert_allclose(gb, [0.0, 8 * np.log(2.0)])


def test_clamp_gradient():
    lo, x, hi = rand(3, 1, dtype=np.float64) - 0.5, rand(3, 4, dtype=np.float64), rand(4, dtype=np.float64) + 0.5
    text = _module("nn.clamp", [_t([3, 1], "f64"), _t([3, 4], "f64"), _t([4], "f64")], _t([3, 4], "f64"))
    check_gradient(text, "f", [lo, x, hi], [0, 1, 2], rtol=1e-6, atol=1e-8)


def test_select_gradient():
    p, a, b = rand(3, 4) > 0, rand(3, 4, dtype=np.float64), rand(4, dtype=np.float64)
    text = _module("nn.select", [_t([3, 4], "i1"), _t([3, 4], "f64"), _t([4], "f64")], _t([3, 4], "f64"))
    check_gradient(text, "f", [p, a, b], [1, 2], rtol=1e-6, atol=1e-8)


def test_gradient_through_compare_select_and_convert():
    """where(x < y, x, y) in f64 from f32 inputs: the gradient flows back through convert."""
    text = """func.func @f(%x: tensor<5xf32>, %y: tensor<5xf32>) -> tensor<5xf64> {
  %p = nn.compare %x, %y {direction = "LT"} : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xi1>
  %s = nn.select %p, %x, %y : (tensor<5xi1>, tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  %w = nn.convert %s : (tensor<5xf32>) -> tensor<5xf64>
  %r = nn.mul %w, %w : (tensor<5xf64>, tensor<5xf64>) -> tensor<5xf64>
  func.return %r : tensor<5xf64>
}"""
    x, y, seed = rand(5), rand(5), rand(5, dtype=np.float64)
    s = np.where(x < y, x, y).astype(np.float64)
    for gx, gy in _vjp(text, [x, y], seed):
        assert gx.dtype == np.float32
        np.testing.assert_allclose(gx, np.where(x < y, 2 * s * seed, 0), rtol=1e-6)
        np.testing.assert_allclose(gy, np.where(x < y, 0, 2 * s * seed), rtol=1e-6)


@pytest.mark.parametrize(
    "op,types,result,attrs,message",
    [
        ("nn.compare", ["f32", "f32"], "i1", '{direction = "LTE"}', "direction must be one of EQ, NE, LT, LE, GT, GE"),
        ("nn.compare", ["f32", "f64"], "i1", '{direction = "LT"}', "operand element types differ: f32 and f64"),
        ("nn.select", ["f32", "f32", "f32"], "f32", "", "pred must be an i1 tensor"),
        ("nn.convert", ["f32"], "ui8", "", "result element type must be f16, bf16, f32, f64, i1, i8, i16, i32 or i64, got ui8"),
        ("nn.power", ["f32", "i32"], "f32", "", "rhs must have a float element type"),
        ("nn.bitcast_convert", ["f64"], "i32", "", "bitcast_convert needs element types of the same width"),
    ],
)
def test_verifier_messages(op, types, result, attrs, message):
    text = _module(op, [_t([4], t) for t in types], _t([4], result), attrs)
    with pytest.raises(CompileError, match=message):
        parse_module(text)


def test_a_chain_fuses_into_one_map():
    """compare -> select -> remainder -> convert expand to maps that fuse into one, with the same result."""
    text = """func.func @f(%x: tensor<4x1xf32>, %y: tensor<8xf32>) -> tensor<4x8xf64> {
  %p = nn.compare %x, %y {direction = "GT"} : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %s = nn.select %p, %x, %y : (tensor<4x8xi1>, tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %r = nn.remainder %s, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %c = nn.convert %r : (tensor<4x8xf32>) -> tensor<4x8xf64>
  func.return %c : tensor<4x8xf64>
}"""
    x, y = rand(4, 1) * 3, rand(8) + 2
    module = parse_module(text)
    PassManager.parse("expand-library,canonicalize,cse,fuse,canonicalize,cse").run(module)
    assert sum(o.name == "df.map" for o in module.walk()) == 1
    expected = np.fmod(np.where(x > y, x, y), y).astype(np.float64)
    np.testing.assert_allclose(interpret(module, "f", x, y), expected, rtol=1e-6)
    np.testing.assert_allclose(ExecutionEngine(parse_module(text)).invoke("f", x, y), expected, rtol=1e-6)


@pytest.mark.parametrize("op,fn", [("nn.and", np.bitwise_and), ("nn.or", np.bitwise_or), ("nn.xor", np.bitwise_xor)])
@pytest.mark.parametrize("dtype", ["i1", "i32", "i64"])
def test_bitwise(op, fn, dtype):
    np_dtype = {"i1": np.bool_, "i32": np.int32, "i64": np.int64}[dtype]
    a = RNG.integers(-100, 100, (3, 4)).astype(np_dtype)
    b = RNG.integers(-100, 100, (4,)).astype(np_dtype)
    check(_module(op, [_t([3, 4], dtype), _t([4], dtype)], _t([3, 4], dtype)), [a, b], fn(a, b))


@pytest.mark.parametrize("dtype", ["i1", "i32", "i64"])
def test_not(dtype):
    np_dtype = {"i1": np.bool_, "i32": np.int32, "i64": np.int64}[dtype]
    x = RNG.integers(-100, 100, (5,)).astype(np_dtype)
    check(_module("nn.not", [_t([5], dtype)], _t([5], dtype)), [x], np.invert(x))


def test_a_mask_from_two_comparisons_selects_with_gradient():
    """where(0 < x & ~(x > 1), x * x, 0): the gradient is 2x inside the band, 0 outside."""
    text = """func.func @f(%x: tensor<6xf64>) -> tensor<6xf64> {
  %zero = nn.full {value = 0.0 : f64} : tensor<f64>
  %one = nn.full {value = 1.0 : f64} : tensor<f64>
  %p = nn.compare %zero, %x {direction = "LT"} : (tensor<f64>, tensor<6xf64>) -> tensor<6xi1>
  %q = nn.compare %x, %one {direction = "GT"} : (tensor<6xf64>, tensor<f64>) -> tensor<6xi1>
  %nq = nn.not %q : (tensor<6xi1>) -> tensor<6xi1>
  %m = nn.and %p, %nq : (tensor<6xi1>, tensor<6xi1>) -> tensor<6xi1>
  %sq = nn.mul %x, %x : (tensor<6xf64>, tensor<6xf64>) -> tensor<6xf64>
  %r = nn.select %m, %sq, %zero : (tensor<6xi1>, tensor<6xf64>, tensor<f64>) -> tensor<6xf64>
  func.return %r : tensor<6xf64>
}"""
    x = np.array([-0.5, 0.25, 0.5, 0.75, 1.5, 3.0])
    inside = (x > 0) & (x <= 1)
    for (gx,) in _vjp(text, [x], np.ones(6)):
        np.testing.assert_allclose(gx, np.where(inside, 2 * x, 0))


def _int_reference(op, a, b):
    """The result by Python integers, truncating division with XLA's results for
    division by 0 and by -1 (no traps), wrapped to the dtype."""

    def quotient(x, y):
        q = abs(x) // abs(y)
        return q if (x < 0) == (y < 0) else -q

    fns = {
        "nn.add": lambda x, y: x + y, "nn.sub": lambda x, y: x - y, "nn.mul": lambda x, y: x * y,
        "nn.div": lambda x, y: -1 if y == 0 else -x if y == -1 else quotient(x, y),
        "nn.remainder": lambda x, y: x if y == 0 else 0 if y == -1 else x - y * quotient(x, y),
        "nn.maximum": max, "nn.minimum": min,
    }  # fmt: skip
    bits = np.iinfo(a.dtype).bits
    a, b = np.broadcast_arrays(a, b)
    wrapped = [(fns[op](int(x), int(y)) + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1)) for x, y in zip(a.flat, b.flat)]
    return np.array(wrapped, dtype=a.dtype).reshape(a.shape)


@pytest.mark.parametrize("op", ["nn.add", "nn.sub", "nn.mul", "nn.div", "nn.remainder", "nn.maximum", "nn.minimum"])
@pytest.mark.parametrize("dtype", ["i32", "i64"])
def test_integer_arithmetic(op, dtype):
    np_dtype = {"i32": np.int32, "i64": np.int64}[dtype]
    info = np.iinfo(np_dtype)
    a = np.array([[7, -7, 7, -7, 0, info.min], [info.max, info.min, 5, -9, 3, 1]], dtype=np_dtype)
    b = np.array([2, 2, -2, -2, 0, -1], dtype=np_dtype)
    check(_module(op, [_t([2, 6], dtype), _t([6], dtype)], _t([2, 6], dtype)), [a, b], _int_reference(op, a, b))


def test_integer_clamp_and_index_arithmetic_as_jax_emits_it():
    """where(i < 0, i + n, i) then clamp to [0, n - 1]: JAX's index normalisation, on i32."""
    text = """func.func @f(%i: tensor<5xi32>) -> tensor<5xi32> {
  %zero = nn.full {value = 0 : i32} : tensor<i32>
  %n = nn.full {value = 4 : i32} : tensor<i32>
  %top = nn.full {value = 3 : i32} : tensor<i32>
  %neg = nn.compare %i, %zero {direction = "LT"} : (tensor<5xi32>, tensor<i32>) -> tensor<5xi1>
  %wrapped = nn.add %i, %n : (tensor<5xi32>, tensor<i32>) -> tensor<5xi32>
  %s = nn.select %neg, %wrapped, %i : (tensor<5xi1>, tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
  %r = nn.clamp %zero, %s, %top : (tensor<i32>, tensor<5xi32>, tensor<i32>) -> tensor<5xi32>
  func.return %r : tensor<5xi32>
}"""
    i = np.array([-1, 0, 3, -9, 7], dtype=np.int32)
    check(text, [i], np.clip(np.where(i < 0, i + 4, i), 0, 3).astype(np.int32))


def test_integer_operands_of_float_only_ops_are_rejected():
    with pytest.raises(CompileError, match="'nn.atan2' op lhs must have a float element type, got tensor<4xi32>"):
        parse_module(_module("nn.atan2", [_t([4], "i32"), _t([4], "i32")], _t([4], "i32")))


@pytest.mark.parametrize("op,fn", [("nn.abs", np.abs), ("nn.sign", np.sign)])
def test_integer_abs_and_sign(op, fn):
    x = np.array([-5, 0, 3, np.iinfo(np.int32).min, np.iinfo(np.int32).max], dtype=np.int32)
    with np.errstate(over="ignore"):
        check(_module(op, [_t([5], "i32")], _t([5], "i32")), [x], fn(x))


def _shift_reference(op, x, y):
    """StableHLO's shifts, by Python integers: an amount outside [0, bits) gives 0 (or the sign fill)."""
    bits = np.iinfo(x.dtype).bits
    out = []
    for a, s in zip(*(v.flat for v in np.broadcast_arrays(x, y))):
        a, s = int(a), int(s)
        inside = 0 <= s < bits
        if op == "nn.shift_left":
            r = (a << s) if inside else 0
        elif op == "nn.shift_right_arithmetic":
            r = (a >> s) if inside else (-1 if a < 0 else 0)
        else:
            r = ((a % (1 << bits)) >> s) if inside else 0
        out.append((r + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1)))
    return np.array(out, dtype=x.dtype).reshape(np.broadcast_shapes(x.shape, y.shape))


@pytest.mark.parametrize("op", ["nn.shift_left", "nn.shift_right_arithmetic", "nn.shift_right_logical"])
@pytest.mark.parametrize("dtype", ["i32", "i64"])
def test_shifts(op, dtype):
    np_dtype = {"i32": np.int32, "i64": np.int64}[dtype]
    bits = np.iinfo(np_dtype).bits
    x = np.array([[5, -5, 1, -1, np.iinfo(np_dtype).min, 12345]] * 2, dtype=np_dtype)
    y = np.array([[0, 1, bits - 1, bits, -1, 3], [2, bits + 5, 7, 0, 1, bits - 2]], dtype=np_dtype)
    check(_module(op, [_t([2, 6], dtype), _t([2, 6], dtype)], _t([2, 6], dtype)), [x, y], _shift_reference(op, x, y))


@pytest.mark.parametrize("a,b", [((2, 0, 4), (2, 1, 4)), ((1, 3), (0, 1)), ((0,), ())])
def test_a_size_1_dimension_broadcasts_to_size_0(a, b):
    """numpy's rule: 1 against 0 gives 0 (the result is empty), on both engines."""
    out = np.broadcast_shapes(a, b)
    text = _module("nn.sub", [_t(a), _t(b)], _t(out))
    check(text, [rand(*a), rand(*b)], np.zeros(out, np.float32))
