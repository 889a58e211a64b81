"""aten's elementwise ops: arithmetic, comparisons, activations, `where`,
`full`, and the logical and bitwise ops, each one nn elementwise op or a few."""

from __future__ import annotations

import math

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


@handles("div.Tensor_mode")
def _div_mode(b, node, x, y, rounding_mode):
    if rounding_mode is not None:
        raise UnsupportedOp(f"div with rounding_mode={rounding_mode!r}")
    return b.binary("nn.div", x, y, b.out(node)[1])


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
    if not dtype.startswith("f"):
        raise UnsupportedOp(f"{dtype} to a tensor power (the library's power is of floats)")
    return b.binary("nn.power", x, p, dtype)


@handles("clamp.default")
def _clamp(b, node, x, lo, hi):
    """min(max(x, lo), hi), a bound of None left out (torch.clamp). Written as
    selects so that the gradient flows where lo <= x <= hi, bounds included, as torch's."""
    dtype = b.out(node)[1]
    x = b.convert(x, dtype)
    if lo is not None:
        x = b.op("nn.select", [b.compare("LT", x, lo), b.tensor(lo, dtype), x], x.shape, dtype)
    if hi is not None:
        x = b.op("nn.select", [b.compare("GT", x, hi), b.tensor(hi, dtype), x], x.shape, dtype)
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


@handles("isnan.default")
def _isnan(b, node, x):
    return b.compare("NE", x, x) if x.is_float else b.full(False, x.shape, "i1")
