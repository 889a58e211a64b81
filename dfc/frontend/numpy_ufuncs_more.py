"""More of NumPy's ufuncs, each as NumPy computes it at the ends of the float range (signed zeros,
subnormals, 1e308, inf, NaN): the libm functions `np.arcsinh`/`arccosh`/`arctanh`, `np.cbrt`, `np.trunc`
(and `np.fix`), `np.copysign` (math ops the LLVM backend calls libm for); `np.signbit`, `np.positive`,
`np.heaviside`, `np.sinc`, `np.nan_to_num`, `np.float_power`, `np.fmod`, `np.logaddexp`/`logaddexp2`,
`np.modf`, `np.divmod`, `np.conj` of real arrays; and, on the bits of the floats (`arith.bitcast`),
`np.nextafter`, `np.spacing`, `np.ldexp` (musl's scalbn: at most one rounding) and `np.frexp`."""

from __future__ import annotations

import ast
import math
from typing import Any

import numpy as np

from dfc.frontend.arrays import EXACT_FLOAT, Const, Expr, Op, is_float, is_unsigned, result_dtype
from dfc.frontend.numpy_args import Handler, astype, bind, expr_of, fresh, no_kwargs, static

_MANTISSA = {"f64": 53, "f32": 24, "f16": 11}
_BIAS = {"f64": 1023, "f32": 127, "f16": 15}
_BITS = {"f64": "i64", "f32": "i32", "f16": "i16"}
_SMALL_INTS = ("i1", "i8", "i16", "u8", "u16")


def _float_dtype(tr, es: list[Expr]) -> str:
    """The float type NumPy computes a float ufunc of `es` in (int8/uint8/bool: float16, int16: float32)."""
    strong = [e.dtype for e in es if not e.weak]
    if not strong:
        return tr.default_float
    if all(d in _SMALL_INTS for d in strong):
        return max((EXACT_FLOAT.get(d, "f16") for d in strong), key=lambda d: int(d[1:]))
    return result_dtype(es, floating=True)


def _floats(tr, args: list, node: ast.AST) -> tuple[list[Expr], str]:
    es = [expr_of(tr, a, node) for a in args]
    dtype = _float_dtype(tr, es)
    if dtype not in _MANTISSA:
        raise tr.fail(f"float type {dtype} is not supported here (float16/32/64)", node)
    return [astype(tr, e, dtype, node) for e in es], dtype


def _c(value: float, dtype: str) -> Const:
    return Const(value, dtype, False)


def _where(tr, c: Any, a: Expr, b: Expr, node: ast.AST, dtype: str) -> Expr:
    return tr.elementwise("where", [tr.as_expr(c, node), a, b], node, dtype)


def _bitcast(e: Expr, dtype: str) -> Expr:
    r = Op("bitcast", [e], e.shape, dtype, e.dtype)
    r.weak = False
    return r


def _unary_math(name: str, what: str, keep_ints: bool = False) -> Handler:
    """A math op of one float (integers: NumPy's float; with `keep_ints`, integers are returned as they are)."""

    def handler(tr, args, kwargs, node):
        (x,) = bind(tr, args, kwargs, node, what, ("x",))
        e = expr_of(tr, x, node)
        if keep_ints and not is_float(e.dtype):
            return fresh(e)
        (e,), dtype = _floats(tr, [e], node)
        return tr.elementwise(name, [e], node, dtype)

    return handler


def _binary_floats(what: str):
    def decorate(f):
        def handler(tr, args, kwargs, node):
            no_kwargs(tr, kwargs, node)
            if len(args) != 2:
                raise tr.fail(f"{what} takes two arguments", node)
            (a, b), dtype = _floats(tr, args, node)
            return f(tr, a, b, dtype, node)

        return handler

    return decorate


@_binary_floats("np.copysign")
def _copysign(tr, a, b, dtype, node):
    return tr.elementwise("copysign", [a, b], node, dtype)


def _signbit(tr, args, kwargs, node):
    """True where the sign bit is set (-0.0 and NaNs with it too): copysign(1, x) < 0."""
    (x,) = bind(tr, args, kwargs, node, "np.signbit", ("x",))
    e = expr_of(tr, x, node)
    if not is_float(e.dtype):
        return tr.compare("lt", e, _c(0, e.dtype), node) if not is_unsigned(e.dtype) and e.dtype != "i1" else \
            tr.compare("ne", e, e, node)
    (e,), dtype = _floats(tr, [e], node)
    return tr.compare("lt", tr.elementwise("copysign", [_c(1.0, dtype), e], node, dtype), _c(0.0, dtype), node)


def _positive(tr, args, kwargs, node):
    (x,) = bind(tr, args, kwargs, node, "np.positive", ("x",))
    e = expr_of(tr, x, node)
    if e.dtype == "i1":
        raise tr.fail("np.positive of booleans (NumPy refuses them)", node)
    return tr.elementwise("convert", [e], node, tr.em.concrete(e)) if e.weak else fresh(e)


def _conj(tr, args, kwargs, node):
    (x,) = bind(tr, args, kwargs, node, "np.conj", ("x",))
    e = expr_of(tr, x, node)
    return fresh(e)


@_binary_floats("np.heaviside")
def _heaviside(tr, x, h, dtype, node):
    """0 below 0, 1 above, h at (either signed) zero, NaN at NaN."""
    inner = _where(tr, tr.compare("eq", x, _c(0.0, dtype), node), h, _c(math.nan, dtype), node, dtype)
    inner = _where(tr, tr.compare("gt", x, _c(0.0, dtype), node), _c(1.0, dtype), inner, node, dtype)
    return _where(tr, tr.compare("lt", x, _c(0.0, dtype), node), _c(0.0, dtype), inner, node, dtype)


def _sinc(tr, args, kwargs, node):
    """NumPy's own form: y = pi x, read as the dtype's eps where 0; sin(y) / y (1 at 0, derivative 0 there)."""
    (x,) = bind(tr, args, kwargs, node, "np.sinc", ("x",))
    (e,), dtype = _floats(tr, [x], node)
    y = tr.binop("mul", _c(math.pi, dtype), e, node)
    eps = 2.0 ** (1 - _MANTISSA[dtype])
    y = _where(tr, tr.compare("eq", y, _c(0.0, dtype), node), _c(eps, dtype), y, node, dtype)
    return tr.binop("div", tr.elementwise("sin", [y], node, dtype), y, node)


def _nan_to_num(tr, args, kwargs, node):
    """NaN -> nan (0.0), inf -> posinf (the largest float), -inf -> neginf (the most negative)."""
    names = ("x", "copy", "nan", "posinf", "neginf")
    x, copy, nan, posinf, neginf = bind(tr, args, kwargs, node, "np.nan_to_num", names, (True, 0.0, None, None))
    if static(copy) is not True:
        raise tr.fail("np.nan_to_num with copy=False is not supported (assign the result)", node)
    e = expr_of(tr, x, node)
    if not is_float(e.dtype):
        return fresh(e)
    dtype = tr.em.concrete(e)
    big = float(np.finfo({"f64": np.float64, "f32": np.float32, "f16": np.float16}[dtype]).max)
    fills = [expr_of(tr, v if v is not None else d, node) for v, d in ((nan, 0.0), (posinf, big), (neginf, -big))]
    fills = [astype(tr, f, dtype, node) for f in fills]
    r = _where(tr, tr.compare("eq", e, _c(-math.inf, dtype), node), fills[2], e, node, dtype)
    r = _where(tr, tr.compare("eq", e, _c(math.inf, dtype), node), fills[1], r, node, dtype)
    return _where(tr, tr.compare("ne", e, e, node), fills[0], r, node, dtype)


def _float_power(tr, args, kwargs, node):
    """x ** y in float64 (float32 operands too, as NumPy)."""
    no_kwargs(tr, kwargs, node)
    if len(args) != 2:
        raise tr.fail("np.float_power takes two arguments", node)
    a, b = (expr_of(tr, v, node) for v in args)
    a, b = (v if isinstance(v, Const) and v.weak and is_float(v.dtype) else astype(tr, v, "f64", node) for v in (a, b))
    if isinstance(a, Const) and isinstance(b, Const):
        a = astype(tr, a, "f64", node)  # a float64 array, not a Python float
    return tr.binop("pow", a, b, node)


def _fmod(tr, args, kwargs, node):
    """C's fmod (the remainder takes the dividend's sign; integers: 0 where the divisor is 0)."""
    no_kwargs(tr, kwargs, node)
    if len(args) != 2:
        raise tr.fail("np.fmod takes two arguments", node)
    a, b = (expr_of(tr, v, node) for v in args)
    dtype = result_dtype([a, b])
    if is_float(dtype) or all(v.weak for v in (a, b)):
        (a, b), dtype = _floats(tr, [a, b], node)
        return tr.elementwise("fmod", [a, b], node, dtype)
    r = tr.binop("mod", a, b, node)  # Python's sign (the divisor's), 0 where b is 0
    if is_unsigned(dtype) or dtype == "i1":
        return r
    zero = _c(0, r.dtype)
    signs_differ = tr.compare("ne", tr.compare("lt", r, zero, node), tr.compare("lt", a, zero, node), node)
    fix = tr.elementwise("and", [tr.as_expr(tr.compare("ne", r, zero, node), node), tr.as_expr(signs_differ, node)],
                         node, "i1")
    return _where(tr, fix, tr.binop("sub", r, astype(tr, b, r.dtype, node), node), r, node, r.dtype)


def _logaddexp(base: str) -> Handler:
    """max + log1p(exp(min - max)) (base 2: max + log2(1 + 2^(min - max))), min - max read as 0 where the
    operands are equal (inf and -inf too: no NaN, and each operand's derivative is 1/2 there, as JAX's)."""
    what = "np.logaddexp" if base == "e" else "np.logaddexp2"

    @_binary_floats(what)
    def handler(tr, a, b, dtype, node):
        hi, lo = (tr.elementwise(f, [a, b], node, dtype) for f in ("maximum", "minimum"))
        d = _where(tr, tr.compare("eq", a, b, node), _c(0.0, dtype), tr.binop("sub", lo, hi, node), node, dtype)
        if base == "e":
            exp = tr.elementwise("exp", [d], node, dtype)
            return tr.binop("add", hi, tr.elementwise("log1p", [exp], node, dtype), node)
        power = tr.binop("pow", _c(2.0, dtype), d, node)
        log2_1p = tr.binop("mul", tr.elementwise("log1p", [power], node, dtype), _c(1 / math.log(2), dtype), node)
        tie = tr.compare("eq", a, b, node)  # NumPy: x + 1, exactly
        return tr.binop("add", hi, _where(tr, tie, _c(1.0, dtype), log2_1p, node, dtype), node)

    return handler


def _with_slope(tr, r: Expr, x: Expr, slope: Expr, dtype: str, node: ast.AST) -> Expr:
    """`r` (computed on the bits, which autodiff reads as constants) with the derivative `slope` in x: r - (x' - x)
    slope, x' the value of x through its bits (the difference is 0; x read as 0 where infinite or NaN)."""
    finite = tr.compare("lt", tr.elementwise("abs", [x], node, dtype), _c(math.inf, dtype), node)
    xs = _where(tr, finite, x, _c(0.0, dtype), node, dtype)
    same = _bitcast(_bitcast(xs, _BITS[dtype]), dtype)
    return tr.binop("sub", r, tr.binop("mul", tr.binop("sub", same, xs, node), slope, node), node)


def _power(tr, k: Expr, dtype: str, node: ast.AST) -> Expr:
    """2.0 ** k for an integer k, k clamped to where 2^k is finite (the slopes: they saturate at 2^max)."""
    k = tr.elementwise("minimum", [astype(tr, k, "i64", node), _c(_BIAS[dtype], "i64")], node, "i64")
    return tr.binop("pow", _c(2.0, dtype), astype(tr, k, dtype, node), node)


def _nextafter_of(tr, x: Expr, y: Expr, dtype: str, node: ast.AST) -> Expr:
    """The float after x toward y: the bits of x one step away from or toward 0; y where x == y, the smallest
    subnormal with y's sign where x is 0, NaN where either is NaN."""
    idt = _BITS[dtype]
    bits = _bitcast(x, idt)
    up, positive = tr.compare("gt", y, x, node), tr.compare("gt", x, _c(0.0, dtype), node)
    away = tr.as_expr(tr.compare("eq", up, positive, node), node)
    step = _where(tr, away, _c(1, idt), _c(-1, idt), node, idt)
    r = _bitcast(tr.elementwise("add", [bits, step], node, idt), dtype)
    tiny = _bitcast(_c(1, idt), dtype)
    signed_tiny = tr.elementwise("copysign", [tiny, y], node, dtype)
    r = _where(tr, tr.compare("eq", x, _c(0.0, dtype), node), signed_tiny, r, node, dtype)
    r = _where(tr, tr.compare("eq", x, y, node), y, r, node, dtype)
    r = _with_slope(tr, r, x, _c(1.0, dtype), dtype, node)  # d/dx 1, as x + a constant
    nan = tr.elementwise("or", [tr.as_expr(tr.compare("ne", v, v, node), node) for v in (x, y)], node, "i1")
    return _where(tr, nan, tr.binop("add", x, y, node), r, node, dtype)


@_binary_floats("np.nextafter")
def _nextafter(tr, x, y, dtype, node):
    return _nextafter_of(tr, x, y, dtype, node)


def _spacing(tr, args, kwargs, node):
    """nextafter(x, copysign(inf, x)) - x (float16: nextafter(x, inf) - x, as NumPy's); NaN at inf and NaN."""
    (x,) = bind(tr, args, kwargs, node, "np.spacing", ("x",))
    (e,), dtype = _floats(tr, [x], node)
    toward = tr.elementwise("copysign", [_c(math.inf, dtype), e], node, dtype) if dtype != "f16" else \
        _c(math.inf, dtype)  # NumPy's half spacing steps up from negative halves too
    r = tr.binop("sub", _nextafter_of(tr, e, toward, dtype, node), e, node)
    infinite = tr.compare("eq", tr.elementwise("abs", [e], node, dtype), _c(math.inf, dtype), node)
    return _where(tr, infinite, _c(math.nan, dtype), r, node, dtype)


def _special(tr, x: Expr, dtype: str, node: ast.AST) -> Expr:
    """True where x is 0, +-inf or NaN."""
    magnitude = tr.elementwise("abs", [x], node, dtype)
    conditions = (tr.compare("eq", x, _c(0.0, dtype), node), tr.compare("eq", magnitude, _c(math.inf, dtype), node),
                  tr.compare("ne", x, x, node))
    return tr.elementwise("or", [tr.elementwise("or", [tr.as_expr(c, node) for c in conditions[:2]], node, "i1"),
                                 tr.as_expr(conditions[2], node)], node, "i1")


def _ldexp(tr, args, kwargs, node):
    """x * 2^n on the bits: n added to the exponent field (x subnormal: scaled by 2^(mantissa + 1) first, exactly);
    a subnormal result is the float with field e + mantissa + 2 times 2^-(mantissa + 2), the one rounding (no chain of
    multiplications that fast math could reassociate); inf past the top, x at 0, inf and NaN."""
    no_kwargs(tr, kwargs, node)
    if len(args) != 2:
        raise tr.fail("np.ldexp takes two arguments (x, n)", node)
    n = expr_of(tr, args[1], node)
    if is_float(n.dtype):
        raise tr.fail("np.ldexp needs an integer exponent (NumPy refuses floats)", node)
    (x,), dtype = _floats(tr, [args[0]], node)
    idt, p, top = _BITS[dtype], _MANTISSA[dtype] - 1, 2 * _BIAS[dtype] + 1
    n = n0 = astype(tr, n, "i64", node)
    n = tr.elementwise("minimum", [n, _c(4 * top, "i64")], node, "i64")
    n = tr.elementwise("maximum", [n, _c(-4 * top, "i64")], node, "i64")
    magnitude = tr.elementwise("abs", [x], node, dtype)
    subnormal = tr.compare("lt", magnitude, _c(2.0 ** (1 - _BIAS[dtype]), dtype), node)
    bits = _bitcast(_where(tr, subnormal, tr.binop("mul", x, _c(2.0 ** (p + 1), dtype), node), x, node, dtype), idt)
    n = tr.binop("sub", astype(tr, n, idt, node), _where(tr, subnormal, _c(p + 1, idt), _c(0, idt), node, idt), node)
    field = tr.elementwise("and", [tr.elementwise("rshift", [bits, _c(p, idt)], node, idt), _c(top, idt)], node, idt)
    e = tr.binop("add", field, n, node)
    rest = tr.elementwise("and", [bits, _c(~(top << p), idt)], node, idt)

    def with_field(f: Expr) -> Expr:
        shifted = tr.elementwise("lshift", [f, _c(p, idt)], node, idt)
        return _bitcast(tr.elementwise("or", [rest, shifted], node, idt), dtype)

    low = tr.elementwise("maximum", [tr.binop("add", e, _c(p + 2, idt), node), _c(1, idt)], node, idt)
    small = tr.binop("mul", with_field(low), _c(2.0 ** -(p + 2), dtype), node)
    small = _where(tr, tr.compare("lt", e, _c(-p - 1, idt), node), tr.elementwise("copysign", [_c(0.0, dtype), x], node,
                                                                                      dtype), small, node, dtype)
    normal = with_field(tr.elementwise("maximum", [e, _c(1, idt)], node, idt))
    r = _where(tr, tr.compare("lt", e, _c(1, idt), node), small, normal, node, dtype)
    signed_inf = tr.elementwise("copysign", [_c(math.inf, dtype), x], node, dtype)
    r = _where(tr, tr.compare("ge", e, _c(top, idt), node), signed_inf, r, node, dtype)
    special = _special(tr, x, dtype, node)
    return _where(tr, special, x, _with_slope(tr, r, x, _power(tr, n0, dtype, node), dtype, node), node, dtype)


def _frexp(tr, args, kwargs, node):
    """(m, e) with x = m 2^e, 0.5 <= |m| < 1 (int32 e): from the exponent bits (subnormals scaled by 2^mantissa
    first); x itself and 0 at zero, inf and NaN."""
    (x,) = bind(tr, args, kwargs, node, "np.frexp", ("x",))
    (e,), dtype = _floats(tr, [x], node)
    idt, p = _BITS[dtype], _MANTISSA[dtype] - 1
    subnormal = tr.compare("lt", tr.elementwise("abs", [e], node, dtype), _c(2.0 ** (1 - _BIAS[dtype]), dtype), node)
    scaled = _where(tr, subnormal, tr.binop("mul", e, _c(2.0 ** (p + 1), dtype), node), e, node, dtype)
    bits = _bitcast(scaled, idt)
    shifted = tr.elementwise("rshift", [bits, _c(p, idt)], node, idt)
    field = tr.elementwise("and", [shifted, _c(2 * _BIAS[dtype] + 1, idt)], node, idt)
    shift = _where(tr, subnormal, _c(_BIAS[dtype] - 1 + p + 1, idt), _c(_BIAS[dtype] - 1, idt), node, idt)
    exponent = tr.binop("sub", field, shift, node)
    keep = ~((2 * _BIAS[dtype] + 1) << p)
    mantissa_bits = tr.elementwise("or", [tr.elementwise("and", [bits, _c(keep, idt)], node, idt),
                                          _c((_BIAS[dtype] - 1) << p, idt)], node, idt)
    special = _special(tr, e, dtype, node)
    exponent = _where(tr, special, _c(0, idt), exponent, node, idt)
    slope = _power(tr, tr.elementwise("sub", [_c(0, idt), exponent], node, idt), dtype, node)  # d/dx x 2^-e
    mantissa = _with_slope(tr, _bitcast(mantissa_bits, dtype), e, slope, dtype, node)
    mantissa = _where(tr, special, e, mantissa, node, dtype)
    return mantissa, astype(tr, exponent, "i32", node)


def _modf(tr, args, kwargs, node):
    """(fraction, integral part): x - trunc(x) (a zero and +-inf: a 0 with x's sign), trunc(x)."""
    (x,) = bind(tr, args, kwargs, node, "np.modf", ("x",))
    (e,), dtype = _floats(tr, [x], node)
    whole = tr.elementwise("trunc", [e], node, dtype)
    infinite = tr.compare("eq", tr.elementwise("abs", [e], node, dtype), _c(math.inf, dtype), node)
    fraction = tr.binop("sub", e, whole, node)
    whole_number = tr.compare("eq", fraction, _c(0.0, dtype), node)
    zero = tr.elementwise("or", [tr.as_expr(c, node) for c in (infinite, whole_number)], node, "i1")
    signed_zero = tr.elementwise("copysign", [_c(0.0, dtype), e], node, dtype)
    signed_zero = _with_slope(tr, signed_zero, e, _c(1.0, dtype), dtype, node)  # d/dx 1 at integers too
    return _where(tr, zero, signed_zero, fraction, node, dtype), whole


def _divmod(tr, args, kwargs, node):
    no_kwargs(tr, kwargs, node)
    if len(args) != 2:
        raise tr.fail("np.divmod takes two arguments", node)
    return tr.binop("floordiv", args[0], args[1], node), tr.binop("mod", args[0], args[1], node)


_KERNELS: dict[str, Any] = {}


def _integer_kernel(name: str) -> Handler:
    """np.gcd / np.lcm: integer_kernels.`name` of the broadcast operands, in their promoted integer type."""

    def handler(tr, args, kwargs, node):
        from dfc.frontend import JitFunction, integer_kernels

        no_kwargs(tr, kwargs, node)
        if len(args) != 2:
            raise tr.fail(f"np.{name} takes two arguments", node)
        a, b = (expr_of(tr, v, node) for v in args)
        dtype = result_dtype([a, b])
        if is_float(dtype) or dtype == "i1":
            raise tr.fail(f"np.{name} needs integer operands (NumPy refuses floats and booleans)", node)
        a, b = (astype(tr, v, dtype, node) for v in (a, b))
        zero = _c(0, dtype)
        a, b = (tr.binop("add", u, tr.binop("mul", v, zero, node), node) for u, v in ((a, b), (b, a)))  # broadcast
        if name not in _KERNELS:
            _KERNELS[name] = JitFunction(getattr(integer_kernels, name))
        return tr.callee(tr, _KERNELS[name], [a, b], {}, node)

    return handler


def _bitwise_count(tr, args, kwargs, node):
    """The 1 bits of |x| (uint8), by SWAR: pairs, nibbles, bytes, then a multiply summing the bytes."""
    (x,) = bind(tr, args, kwargs, node, "np.bitwise_count", ("x",))
    e = expr_of(tr, x, node)
    if is_float(e.dtype):
        raise tr.fail("np.bitwise_count needs integer or boolean operands (NumPy refuses floats)", node)
    dtype = tr.em.concrete(e)
    if dtype == "i1":
        return astype(tr, e, "u8", node)
    bits = int(dtype[1:])
    u = "u" + str(bits)
    v = astype(tr, e if is_unsigned(dtype) else tr.elementwise("abs", [e], node, dtype), u, node)

    def op(name: str, a: Expr, k: int) -> Expr:
        return tr.elementwise(name, [a, _c(k, u)], node, u)

    def mask(pattern: int) -> int:
        return int.from_bytes(bytes([pattern]) * (bits // 8), "little")

    v = tr.elementwise("sub", [v, op("and", op("rshift", v, 1), mask(0x55))], node, u)
    v = tr.elementwise("add", [op("and", v, mask(0x33)), op("and", op("rshift", v, 2), mask(0x33))], node, u)
    v = op("and", tr.elementwise("add", [v, op("rshift", v, 4)], node, u), mask(0x0F))
    if bits > 8:
        v = op("rshift", op("mul", v, mask(0x01)), bits - 8)
    return astype(tr, v, "u8", node)


def _vector_product(kind: str) -> Handler:
    """np.vecdot(x1, x2, axis=-1), np.matvec(A, v), np.vecmat(v, A): products summed over the shared axis
    (the vectors' last; integers summed in int64 and wrapped to their type, as NumPy's sum in it)."""
    what = f"np.{kind}"

    def handler(tr, args, kwargs, node):
        from dfc.frontend.affine import Affine
        from dfc.frontend.numpy_api import reduce

        a, b, axis = bind(tr, args, kwargs, node, what, ("x1", "x2", "axis"), (-1,))
        a, b = (expr_of(tr, v, node) for v in (a, b))
        dtype = result_dtype([a, b])
        if dtype == "i1":
            raise tr.fail(f"{what} of booleans is not supported", node)
        if kind != "vecdot" and static(axis) != -1:
            raise tr.fail(f"{what} with axis= is not supported", node)
        if kind == "vecdot":
            if static(axis) != -1:
                raise tr.fail(f"{what} with an axis other than -1 is not supported (move it last)", node)
            product, summed = tr.binop("mul", a, b, node), -1
        elif kind == "matvec":  # A[..., m, n] v[..., n]
            if a.ndim < 2 or b.ndim < 1:
                raise tr.fail(f"{what} takes a matrix and a vector", node)
            product, summed = tr.binop("mul", a, tr.index(b, (slice(None),) * (b.ndim - 1) + (None, slice(None)), node),
                                       node), -1
        else:  # v[..., n] A[..., n, m]
            if b.ndim < 2 or a.ndim < 1:
                raise tr.fail(f"{what} takes a vector and a matrix", node)
            product, summed = tr.binop("mul", tr.index(a, (slice(None),) * a.ndim + (None,), node), b, node), -2
        total = reduce(tr, "add", product, Affine(product.ndim + summed), False, node)
        return total if is_float(dtype) else astype(tr, total, dtype, node)

    return handler


def _isnat(tr, args, kwargs, node):
    raise tr.fail("np.isnat needs datetime64/timedelta64 arrays, which dfc does not support", node)


MORE_UFUNC_HANDLERS: dict[Any, Handler] = {
    **{f: _unary_math(name, f"np.{f.__name__}") for f, name in
       ((np.arcsinh, "asinh"), (np.arccosh, "acosh"), (np.arctanh, "atanh"), (np.cbrt, "cbrt"))},
    np.trunc: _unary_math("trunc", "np.trunc", keep_ints=True), np.fix: _unary_math("trunc", "np.fix", keep_ints=True),
    np.copysign: _copysign, np.signbit: _signbit, np.positive: _positive, np.conj: _conj, np.conjugate: _conj,
    np.heaviside: _heaviside, np.sinc: _sinc, np.nan_to_num: _nan_to_num, np.float_power: _float_power,
    np.fmod: _fmod, np.logaddexp: _logaddexp("e"), np.logaddexp2: _logaddexp("2"), np.nextafter: _nextafter,
    np.spacing: _spacing, np.ldexp: _ldexp, np.frexp: _frexp, np.modf: _modf, np.divmod: _divmod,
    np.vecdot: _vector_product("vecdot"), np.matvec: _vector_product("matvec"), np.vecmat: _vector_product("vecmat"),
    np.gcd: _integer_kernel("gcd"), np.lcm: _integer_kernel("lcm"), np.bitwise_count: _bitwise_count,
    np.isnat: _isnat,
}
"""These ufuncs (and np.fix, np.nan_to_num, np.sinc), by the function object."""
