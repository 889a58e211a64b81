"""aten's elementwise ops: arithmetic (division with rounding modes, `fmod`,
`remainder`), comparisons, activations, the trigonometric and hyperbolic
functions and their inverses, rounding, `where`, `clamp`, `full`, and the
logical and bitwise ops, each one nn elementwise op or a few."""

from __future__ import annotations

import math

import numpy as np

from dfc.torch.aten_common import UnsupportedOp, handler_table
from dfc.torch.ir_text import Value

ELEMENTWISE_HANDLERS, handles = handler_table()


# --- elementwise ---------------------------------------------------------------

for _aten, _nn in {
    "relu": "nn.relu", "tanh": "nn.tanh", "sigmoid": "nn.sigmoid", "exp": "nn.exp", "log": "nn.log",
    "sqrt": "nn.sqrt", "rsqrt": "nn.rsqrt", "neg": "nn.neg", "abs": "nn.abs", "erf": "nn.erf",
    "sin": "nn.sine", "cos": "nn.cosine", "expm1": "nn.expm1", "log1p": "nn.log1p",
}.items():
    handles(f"{_aten}.default")(lambda b, node, x, _nn=_nn: _unary(b, node, _nn, x))


def _unary(b, node, name: str, x):
    """`name` of x in the result's type (an integer input of a float function is converted first)."""
    x = b.convert(x, b.out(node)[1])
    if not x.is_float and name == "nn.relu":
        return b.binary("nn.maximum", x, 0)
    if not x.is_float and name == "nn.neg":
        return b.binary("nn.sub", 0, x, x.dtype)
    return b.unary(name, x)


@handles("round.default")
def _round(b, node, x):
    """torch.round: to nearest, halfway cases to even (`nn.round_even`; gradient 0); an integer is itself."""
    return b.unary("nn.round_even", x) if x.is_float else x


@handles("logical_not.default")
def _logical_not(b, node, x):
    return b.unary("nn.not", b.convert(x, "i1") if x.dtype != "i1" else x)


def _arith(name: str, scaled: bool):
    def handler(b, node, x, y, alpha=1):
        dtype = b.out(node)[1]
        if scaled and alpha != 1:
            y = b.binary("nn.mul", y, alpha, dtype) if isinstance(y, Value) else y * alpha
        return b.binary(name, x, y, dtype)

    return handler


for _aten, _nn in {"add": "nn.add", "sub": "nn.sub", "mul": "nn.mul", "div": "nn.div"}.items():
    handles(f"{_aten}.Tensor", f"{_aten}.Scalar")(_arith(_nn, _aten in ("add", "sub")))


@handles("maximum.default")
def _maximum(b, node, x, y):
    return b.binary("nn.maximum", x, y, b.out(node)[1])


@handles("minimum.default")
def _minimum(b, node, x, y):
    return b.binary("nn.minimum", x, y, b.out(node)[1])


@handles("pow.Tensor_Scalar")
def _pow_scalar(b, node, x, p):
    x = b.convert(x, b.out(node)[1])
    if p == 2:
        return b.binary("nn.mul", x, x)
    if p == 1:
        return x
    if not x.is_float:  # integers to a natural power, by squaring (wrapping as torch's)
        if not isinstance(p, int) or p < 0:
            raise UnsupportedOp(f"{x.dtype} to the power {p}")
        result, square = b.full(1, x.shape, x.dtype), x
        while p:
            result = b.binary("nn.mul", result, square) if p & 1 else result
            square, p = (b.binary("nn.mul", square, square) if p > 1 else square), p >> 1
        return result
    if p == 0.5:
        return b.unary("nn.sqrt", x)
    return b.binary("nn.power", x, p, b.out(node)[1])


@handles("pow.Tensor_Tensor")
def _pow(b, node, x, p):
    dtype = b.out(node)[1]
    if dtype == "i1":
        raise UnsupportedOp("bool to a tensor power")
    if not dtype.startswith("f"):
        return _integer_pow(b, b.convert(x, dtype), b.convert(p, dtype))
    return b.binary("nn.power", x, p, dtype)


def _integer_pow(b, x, p):
    """torch's integer x ** p: by squaring over every bit of p (products wrapping, as torch's); for p < 0,
    1 for x = 1, +-1 by p's parity for x = -1, else 0."""
    shape = np.broadcast_shapes(x.shape, p.shape)
    x, p = b.broadcast(x, shape), b.broadcast(p, shape)
    dtype = x.dtype
    result, square = b.full(1, shape, dtype), x
    for bit in range(int(dtype[1:]) - 1):
        on = b.compare("NE", b.binary("nn.and", b.binary("nn.shift_right_arithmetic", p, bit, dtype), 1, dtype), 0)
        result = b.op("nn.select", [on, b.binary("nn.mul", result, square), result], shape, dtype)
        square = b.binary("nn.mul", square, square)
    odd = b.compare("NE", b.binary("nn.and", p, 1, dtype), 0)
    minus_one = b.op("nn.select", [odd, b.full(-1, shape, dtype), b.full(1, shape, dtype)], shape, dtype)
    negative = b.op("nn.select", [b.compare("EQ", x, 1), b.full(1, shape, dtype),
                                  b.op("nn.select", [b.compare("EQ", x, -1), minus_one, b.full(0, shape, dtype)],
                                       shape, dtype)], shape, dtype)
    return b.op("nn.select", [b.compare("LT", p, 0), negative, result], shape, dtype)


@handles("clamp.default")
def _clamp(b, node, x, lo, hi):
    """min(max(x, lo), hi), a bound of None left out (torch.clamp). Written as
    selects so that the gradient flows where lo <= x <= hi, bounds included, as torch's."""
    shape, dtype = b.out(node)
    x = b.broadcast(b.convert(x, dtype), shape)
    for bound, direction in ((lo, "LT"), (hi, "GT")):
        if bound is not None:
            bound = b.tensor(bound, dtype)
            if bound.shape:
                bound = b.broadcast(bound, shape)
            beyond = b.compare(direction, x, bound)
            if x.is_float:  # a NaN bound gives NaN, as torch's
                beyond = b.binary("nn.or", beyond, b.compare("NE", bound, bound), "i1")
            x = b.op("nn.select", [beyond, bound, x], shape, dtype)
    return x


@handles("hardtanh.default")
def _hardtanh(b, node, x, lo, hi):
    """clamp(x, lo, hi) whose gradient flows strictly inside the bounds (torch's hardtanh_backward)."""
    return b.op("nn.clamp", [b.tensor(lo, x.dtype), x, b.tensor(hi, x.dtype)], x.shape, x.dtype)


@handles("hardsigmoid.default")
def _hardsigmoid(b, node, x):
    """x / 6 + 1/2 clamped to [0, 1]; the gradient flows strictly inside (-3, 3), as torch's."""
    return b.binary("nn.add", b.binary("nn.div", _hardtanh(b, node, x, -3.0, 3.0), 6.0), 0.5)


@handles("hardswish.default")
def _hardswish(b, node, x):
    """x * hardsigmoid(x); its gradient is 0 for x <= -3, 1 for x >= 3 and x / 3 + 1/2 between (torch's)."""
    inner = b.binary("nn.add", b.binary("nn.div", x, 6.0), 0.5)
    low = b.op("nn.select", [b.compare("LE", x, -3.0), b.tensor(0.0, x.dtype), inner], x.shape, x.dtype)
    gate = b.op("nn.select", [b.compare("GE", x, 3.0), b.tensor(1.0, x.dtype), low], x.shape, x.dtype)
    return b.binary("nn.mul", x, gate)


@handles("gelu.default")
def _gelu(b, node, x, approximate):
    half_x = b.binary("nn.mul", x, 0.5)
    if approximate == "tanh":  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        cube = b.binary("nn.mul", b.binary("nn.mul", x, x), x)
        inner = b.binary("nn.mul", b.binary("nn.add", x, b.binary("nn.mul", cube, 0.044715)), math.sqrt(2 / math.pi))
        return b.binary("nn.mul", half_x, b.binary("nn.add", b.unary("nn.tanh", inner), 1.0))
    if approximate != "none":
        raise UnsupportedOp(f"gelu with approximate={approximate!r}")
    erf = b.unary("nn.erf", b.binary("nn.mul", x, 1 / math.sqrt(2)))
    return b.binary("nn.mul", half_x, b.binary("nn.add", erf, 1.0))


for _aten, _dir in {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}.items():
    handles(f"{_aten}.Tensor", f"{_aten}.Scalar")(lambda b, node, x, y, _dir=_dir: b.compare(_dir, x, y))


@handles("where.self")
def _where(b, node, cond, x, y):
    shape, dtype = b.out(node)
    x, y = b.tensor(x, dtype), b.tensor(y, dtype)
    return b.op("nn.select", [cond, x, y], shape, dtype)


@handles("full.default", "full_like.default")
def _full(b, node, shape_or_like, value, **kwargs):
    shape, dtype = b.out(node)
    return b.full(value, shape, dtype)


@handles("scalar_tensor.default")
def _scalar_tensor(b, node, value, **kwargs):
    return b.full(value, (), b.out(node)[1])


# --- logical -----------------------------------------------------------------------

def _bitwise(b, node, name: str, *operands):
    """`name` (nn.and, nn.or, nn.xor, nn.not) of integers or booleans in the result's type."""
    dtype = b.out(node)[1]
    if dtype.startswith("f"):
        raise UnsupportedOp(f"{node.target} of floats (torch defines it for integers and booleans)")
    operands = [b.tensor(x, dtype) for x in operands]
    if len(operands) == 1:
        return b.unary(name, operands[0])
    return b.binary(name, *operands, dtype)


for _aten, _nn in {"bitwise_and": "nn.and", "bitwise_or": "nn.or", "bitwise_xor": "nn.xor"}.items():
    handles(f"{_aten}.Tensor")(lambda b, node, x, y, _nn=_nn: _bitwise(b, node, _nn, x, y))


@handles("bitwise_not.default")
def _bitwise_not(b, node, x):
    return _bitwise(b, node, "nn.not", x)


@handles("bitwise_left_shift.Tensor", "bitwise_right_shift.Tensor", "__lshift__.Scalar", "__rshift__.Scalar",
         "__lshift__.Tensor", "__rshift__.Tensor")
def _shift(b, node, x, y):
    """x << y (0 where y, read as unsigned, is at least the width) and x >> y (sign-filling; the sign where
    y is negative or at least the width), as torch's kernels."""
    left = node.target.__name__.startswith(("bitwise_left", "__lshift__"))
    return _bitwise(b, node, "nn.shift_left" if left else "nn.shift_right_arithmetic", x, y)


def signbit(b, x: Value) -> Value:
    """Whether x's sign bit is set (-0.0 and NaNs with the bit included); an integer's sign."""
    if not x.is_float:
        return b.compare("LT", x, 0)
    width = {"f16": "i16", "f32": "i32", "f64": "i64"}[x.dtype]
    bits = b.op("nn.bitcast_convert", [b.unary("nn.stop_gradient", x)], x.shape, width)  # a sign has no gradient
    return b.compare("LT", bits, 0)


@handles("exp2.default")
def _exp2(b, node, x):
    """2.0 ** x (libm's pow; exp(x ln 2) is off by |x| ulp)."""
    x = b.convert(x, b.out(node)[1])
    return b.binary("nn.power", 2.0, x, x.dtype)


@handles("fmax.default", "fmin.default")
def _fmax(b, node, x, y):
    """The larger (smaller) of x and y, the other where one is NaN: x where x >= y (x <= y) or y is NaN, as
    torch's gradient also splits it (a tie goes to x)."""
    shape, dtype = b.out(node)
    x, y = (b.broadcast(b.convert(v, dtype), shape) for v in (x, y))
    keep = b.compare("GE" if node.target.__name__.startswith("fmax") else "LE", x, y)
    if x.is_float:
        keep = b.binary("nn.or", keep, b.compare("NE", y, y), "i1")
    return b.op("nn.select", [keep, x, y], shape, dtype)


@handles("signbit.default")
def _signbit(b, node, x):
    return b.broadcast(signbit(b, x), b.out(node)[0]) if x.dtype != "i1" else b.full(False, x.shape, "i1")


@handles("copysign.Tensor", "copysign.Scalar")
def _copysign(b, node, x, y):
    """|x| with y's sign bit (y a tensor or a number); its gradient is x's sign times y's, 0 at x = 0."""
    shape, dtype = b.out(node)
    magnitude = b.unary("nn.abs", b.broadcast(b.convert(x, dtype), shape))
    negative = b.broadcast(signbit(b, b.tensor(y, dtype)), shape)
    return b.op("nn.select", [negative, b.unary("nn.neg", magnitude), magnitude], shape, dtype)


@handles("isnan.default")
def _isnan(b, node, x):
    return b.compare("NE", x, x) if x.is_float else b.full(False, x.shape, "i1")


# --- more of the core set: trigonometric, hyperbolic, rounding, division modes -----------

def _float_in(b, node, x) -> Value:
    """x in the result's float type (an integer or boolean input of a float function converted first)."""
    return b.convert(x, b.out(node)[1])


def _where(b, cond, x, y) -> Value:
    """select(cond, x, y), the three broadcast to one shape."""
    shape = np.broadcast_shapes(cond.shape, x.shape, y.shape)
    return b.op("nn.select", [b.broadcast(v, shape) for v in (cond, x, y)], shape, x.dtype)


def _one_minus_square(b, x):
    return b.binary("nn.mul", b.binary("nn.sub", 1.0, x), b.binary("nn.add", x, 1.0))


def _asinh_positive(b, x):
    """asinh of x >= 0: log1p(x + x^2 / (1 + sqrt(1 + x^2))) (no cancellation near 0), log(x) + log(2) above
    2^28 (where x^2 + 1 is x^2, and would overflow from 1e154 on). Each form reads a safe constant where the
    other is taken, so that its derivative there (times the select's zero) is not NaN."""
    large = b.compare("GT", x, 2.0 ** 28)
    small = _where(b, large, b.tensor(1.0, x.dtype), x)
    square = b.binary("nn.mul", small, small)
    root = b.unary("nn.sqrt", b.binary("nn.add", square, 1.0))
    near = b.unary("nn.log1p", b.binary("nn.add", small, b.binary("nn.div", square, b.binary("nn.add", root, 1.0))))
    far = b.binary("nn.add", b.unary("nn.log", _where(b, large, x, b.tensor(2.0 ** 28, x.dtype))), math.log(2.0))
    return _where(b, large, far, near)


def _odd(b, x, positive):
    """f(x) = -f(-x) from f on x >= 0: f(|x|), negated below 0, |x| as a select (so the derivative at 0 is
    f's there, and f is evaluated at one argument only: a form evaluated at -x too would give NaN derivatives)."""
    negative = b.compare("LT", x, 0.0)
    magnitude = positive(b, _where(b, negative, b.unary("nn.neg", x), x))
    return _where(b, negative, b.unary("nn.neg", magnitude), magnitude)


_FLOAT_FORMS = {
    "tan": lambda b, x: b.unary("nn.tan", x),
    # (expm1(x) - expm1(-x)) / 2: no cancellation near 0
    "sinh": lambda b, x: b.binary("nn.mul", b.binary("nn.sub", b.unary("nn.expm1", x),
                                                      b.unary("nn.expm1", b.unary("nn.neg", x))), 0.5),
    "cosh": lambda b, x: b.binary("nn.mul", b.binary("nn.add", b.unary("nn.exp", x),
                                                      b.unary("nn.exp", b.unary("nn.neg", x))), 0.5),
    "atan": lambda b, x: b.binary("nn.atan2", x, 1.0),
    # atan2(x, sqrt((1 - x)(1 + x))) and atan2(sqrt(...), x): NaN outside [-1, 1] (the root's)
    "asin": lambda b, x: b.binary("nn.atan2", x, b.unary("nn.sqrt", _one_minus_square(b, x))),
    "acos": lambda b, x: b.binary("nn.atan2", b.unary("nn.sqrt", _one_minus_square(b, x)), x),
    # odd: the positive form of |x|, negated below 0 (selected, so the derivative at 0 is 1)
    "asinh": lambda b, x: _odd(b, x, _asinh_positive),
    # 2 asinh(sqrt((x - 1) / 2)) (cosh 2a = 1 + 2 sinh^2 a): NaN below 1, accurate near 1, and the
    # derivative at 1 is infinite as torch's (a form with a product (x - 1)(x + 1) would give NaN there)
    "acosh": lambda b, x: b.binary("nn.mul", _asinh_positive(b, b.unary("nn.sqrt", b.binary(
        "nn.mul", b.binary("nn.sub", x, 1.0), 0.5))), 2.0),
    "atanh": lambda b, x: b.binary("nn.mul", b.binary("nn.sub", b.unary("nn.log1p", x),
                                                      b.unary("nn.log1p", b.unary("nn.neg", x))), 0.5),
    "log2": lambda b, x: b.binary("nn.mul", b.unary("nn.log", x), 1 / math.log(2)),
    "log10": lambda b, x: b.binary("nn.mul", b.unary("nn.log", x), 1 / math.log(10)),
    "reciprocal": lambda b, x: b.binary("nn.div", 1.0, x),
}

for _aten, _form in _FLOAT_FORMS.items():
    handles(f"{_aten}.default")(lambda b, node, x, _form=_form: _form(b, _float_in(b, node, x)))


for _aten, _nn in {"floor": "nn.floor", "ceil": "nn.ceil"}.items():
    handles(f"{_aten}.default")(lambda b, node, x, _nn=_nn: b.unary(_nn, x) if x.is_float else x)


@handles("trunc.default")
def _trunc(b, node, x):
    """Toward zero: ceil below 0, floor elsewhere (-0.5 gives -0.0, as torch); an integer is itself."""
    return _where(b, b.compare("LT", x, 0.0), b.unary("nn.ceil", x), b.unary("nn.floor", x)) if x.is_float else x


@handles("sign.default")
def _sign(b, node, x):
    """-1, 0 or 1; 0 for NaN, as torch's (NumPy's is NaN)."""
    if x.dtype == "i1":
        return x
    if not x.is_float:
        return b.unary("nn.sign", x)
    return _where(b, b.compare("NE", x, x), b.tensor(0.0, x.dtype), b.unary("nn.sign", x))


@handles("isinf.default")
def _isinf(b, node, x):
    return b.compare("EQ", b.unary("nn.abs", x), math.inf) if x.is_float else b.full(False, x.shape, "i1")


@handles("elu.default")
def _elu(b, node, x, alpha, scale, input_scale):
    """scale * x above 0, scale * alpha * expm1(input_scale * x) at and below (torch's gradient at 0 too)."""
    negative = b.binary("nn.mul", b.unary("nn.expm1", b.binary("nn.mul", x, input_scale)), scale * alpha)
    return _where(b, b.compare("GT", x, 0.0), b.binary("nn.mul", x, scale), negative)


@handles("leaky_relu.default")
def _leaky_relu(b, node, x, negative_slope):
    return _where(b, b.compare("GT", x, 0.0), x, b.binary("nn.mul", x, negative_slope))


def _truthy(b, x) -> Value:
    return x if x.dtype == "i1" else b.compare("NE", x, 0)


for _aten, _nn in {"logical_and": "nn.and", "logical_or": "nn.or", "logical_xor": "nn.xor"}.items():
    handles(f"{_aten}.default")(
        lambda b, node, x, y, _nn=_nn: b.convert(b.binary(_nn, _truthy(b, x), _truthy(b, y), "i1"), b.out(node)[1]))

for _aten, _nn in {"bitwise_and": "nn.and", "bitwise_or": "nn.or", "bitwise_xor": "nn.xor"}.items():
    handles(f"{_aten}.Scalar")(lambda b, node, x, y, _nn=_nn: _bitwise(b, node, _nn, x, y))


@handles("pow.Scalar")
def _pow_base(b, node, base, p):
    """A number to tensor powers (floats)."""
    shape, dtype = b.out(node)
    if not dtype.startswith("f"):
        raise UnsupportedOp(f"{dtype} to a tensor power (the library's power is of floats)")
    return b.op("nn.power", [b.full(base, shape, dtype), b.broadcast(b.convert(p, dtype), shape)], shape, dtype)


@handles("fmod.Tensor", "fmod.Scalar")
def _fmod(b, node, x, y):
    """C's fmod: the remainder with the dividend's sign (`nn.remainder`)."""
    return b.binary("nn.remainder", x, y, b.out(node)[1])


@handles("remainder.Tensor", "remainder.Scalar")
def _remainder(b, node, x, y):
    """Python's %: fmod's remainder plus the divisor where it is nonzero and its sign differs from the divisor's
    (torch's formula, a zero remainder keeping the dividend's sign)."""
    dtype = b.out(node)[1]
    r = b.binary("nn.remainder", x, y, dtype)
    y = b.tensor(y, dtype)
    differ = b.binary("nn.xor", b.compare("LT", r, 0), b.compare("LT", y, 0), "i1")
    fix = b.binary("nn.and", b.compare("NE", r, 0), differ, "i1")
    return _where(b, fix, b.binary("nn.add", r, y), r)


def _floor_divide(b, x, y, dtype: str) -> Value:
    """torch's floor division: of floats c10::div_floor_floating ((x - fmod(x, y)) / y, one less where the
    remainder's sign differs from y's, rounded to the nearer integer), of integers the quotient toward zero
    one less where a nonzero remainder's sign differs from y's."""
    y = b.tensor(y, dtype)
    x = b.tensor(x, dtype)
    mod = b.binary("nn.remainder", x, y, dtype)
    differ = b.binary("nn.and", b.compare("NE", mod, 0),
                      b.binary("nn.xor", b.compare("LT", mod, 0), b.compare("LT", y, 0), "i1"), "i1")
    if not dtype.startswith("f"):
        q = b.binary("nn.div", x, y, dtype)
        return _where(b, differ, b.binary("nn.sub", q, 1, dtype), q)
    quotient = b.binary("nn.div", x, y)
    div = b.binary("nn.div", b.binary("nn.sub", x, mod), y)
    div = _where(b, differ, b.binary("nn.sub", div, 1.0), div)
    floor = b.unary("nn.floor", div)
    floor = _where(b, b.compare("GT", b.binary("nn.sub", div, floor), 0.5), b.binary("nn.add", floor, 1.0), floor)
    # a zero quotient takes the sign of x / y
    floor = _where(b, b.compare("EQ", div, 0.0), b.binary("nn.mul", b.unary("nn.sign", quotient), 0.0), floor)
    return _where(b, b.compare("EQ", y, 0.0), quotient, floor)  # x / 0: IEEE's infinity or NaN


def _divide(b, node, x, y, rounding_mode):
    dtype = b.out(node)[1]
    if rounding_mode is None:
        return b.binary("nn.div", x, y, dtype)
    if rounding_mode == "floor":
        return _floor_divide(b, x, y, dtype)
    if rounding_mode == "trunc":
        q = b.binary("nn.div", x, y, dtype)  # integers: toward zero
        return _trunc(b, node, q)
    raise UnsupportedOp(f"div with rounding_mode={rounding_mode!r}")


handles("div.Tensor_mode", "div.Scalar_mode")(_divide)


@handles("clamp.Tensor")
def _clamp_tensor(b, node, x, lo, hi):
    """clamp with tensor bounds (either may be None): selects as `clamp.default`'s; the gradient goes to x
    where lo <= x <= hi, to lo where x < lo, to hi where x > hi (torch's, but where lo == hi exactly)."""
    return _clamp(b, node, x, lo, hi)


@handles("atan2.default")
def _atan2(b, node, y, x):
    return b.binary("nn.atan2", y, x, b.out(node)[1])
