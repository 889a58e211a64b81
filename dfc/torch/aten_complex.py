"""aten ops of complex tensors (packed `ComplexValue`s, aten_fft.py): the arithmetic a user writes
(`+ - * /`, `conj`, `abs`, `angle`, `exp`, `polar`, `complex`, `view_as_complex`, complex products
`mm`/`bmm`) on the (re, im) parts, and the data movement (views, permutes, slices, concatenation,
copies, sums) applied to each part by the real op's own handler. `complex_handler` chooses these
forms for any node that takes or gives a complex tensor and refuses every other op by name, so a
complex value never passes as a real one.

A real tensor or number meeting a complex one is (x, 0). Division is Smith's (no overflow of
|b|^2). Each form is a program of real nn ops, so autodiff differentiates it: the packed gradient of
a complex input is torch's (d/d re + i d/d im of a real loss, `view_as_real` of `.grad`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from dfc.torch.aten_common import Builder, Handler, UnsupportedOp
from dfc.torch.aten_fft import COMPLEX_FORMS, FFT_HANDLERS, ComplexValue, is_complex, pack, packed, parts
from dfc.torch.aten_ops import HANDLERS
from dfc.torch.ir_text import Value

Part = Value | None
"""A part of an operand: None for the zero imaginary part of a real one."""


def _operand(b: Builder, x, dtype: str) -> tuple[Value, Part]:
    """`x` (complex, real tensor or number) as its parts in `dtype`."""
    if isinstance(x, ComplexValue):
        return tuple(b.convert(p, dtype) for p in parts(b, x))  # type: ignore[return-value]
    if isinstance(x, Value):
        return b.convert(x, dtype), None
    z = complex(x)
    return b.full(z.real, (), dtype), (b.full(z.imag, (), dtype) if z.imag else None)


def _sum(b: Builder, terms: Sequence[tuple[int, Part]]) -> Part:
    """The sum of the present terms, each with its sign (+1, -1)."""
    total: Part = None
    for sign, t in terms:
        if t is None:
            continue
        if total is None:
            total = t if sign > 0 else b.unary("nn.neg", t)
        else:
            total = b.binary("nn.add" if sign > 0 else "nn.sub", total, t)
    return total


def _product(b: Builder, x: Part, y: Part) -> Part:
    return None if x is None or y is None else b.binary("nn.mul", x, y)


def _result(b: Builder, node, re: Part, im: Part) -> ComplexValue:
    """The node's complex result from its parts (a missing part 0), broadcast to its shape."""
    shape, dtype = b.out(node)
    shape = list(shape[:-1])
    zero = b.full(0.0, shape, dtype)
    return pack(b, b.broadcast(re, shape) if re is not None else zero, b.broadcast(im, shape) if im is not None
                else zero)


def _add_sub(sign: int):
    def handler(b, node, x, y, alpha=1):
        if isinstance(alpha, complex):
            raise UnsupportedOp("add/sub with a complex alpha")
        dtype = b.out(node)[1]
        (xr, xi), (yr, yi) = _operand(b, x, dtype), _operand(b, y, dtype)
        if alpha != 1:
            yr, yi = (None if p is None else b.binary("nn.mul", p, float(alpha), dtype) for p in (yr, yi))
        return _result(b, node, _sum(b, [(1, xr), (sign, yr)]), _sum(b, [(1, xi), (sign, yi)]))

    return handler


def _mul(b, node, x, y):
    """(xr yr - xi yi, xr yi + xi yr), the products with a zero part left out."""
    dtype = b.out(node)[1]
    (xr, xi), (yr, yi) = _operand(b, x, dtype), _operand(b, y, dtype)
    re = _sum(b, [(1, _product(b, xr, yr)), (-1, _product(b, xi, yi))])
    im = _sum(b, [(1, _product(b, xr, yi)), (1, _product(b, xi, yr))])
    return _result(b, node, re, im)


def _div(b, node, x, y):
    """x / y by Smith's algorithm: with r = yi / yr and d = yr + yi r where |yr| >= |yi| (else r = yr / yi,
    d = yr r + yi), ((xr + xi r) / d, (xi - xr r) / d) (resp. ((xr r + xi) / d, (xi r - xr) / d)), so |y|^2
    never overflows (and a zero part of y makes no NaN gradient); a real y divides each part."""
    dtype = b.out(node)[1]
    (xr, xi), (yr, yi) = _operand(b, x, dtype), _operand(b, y, dtype)
    if yi is None:
        return _result(b, node, b.binary("nn.div", xr, yr), None if xi is None else b.binary("nn.div", xi, yr))
    xi = xi if xi is not None else b.full(0.0, (), dtype)
    wide = b.compare("GE", b.unary("nn.abs", yr), b.unary("nn.abs", yi))

    def pick(a: Value, c: Value) -> Value:
        shape_ac = list(np.broadcast_shapes(wide.shape, a.shape, c.shape))
        return b.op("nn.select", [b.broadcast(wide, shape_ac), b.broadcast(a, shape_ac), b.broadcast(c, shape_ac)],
                    shape_ac, dtype)

    # each ratio's divisor is 1 where its branch is not taken, so that branch's gradient (0) stays finite
    one = b.full(1.0, (), dtype)
    r = pick(b.binary("nn.div", yi, pick(yr, one)), b.binary("nn.div", yr, pick(one, yi)))
    d = pick(b.binary("nn.add", yr, b.binary("nn.mul", yi, r)), b.binary("nn.add", b.binary("nn.mul", yr, r), yi))
    re = pick(b.binary("nn.add", xr, b.binary("nn.mul", xi, r)), b.binary("nn.add", b.binary("nn.mul", xr, r), xi))
    im = pick(b.binary("nn.sub", xi, b.binary("nn.mul", xr, r)), b.binary("nn.sub", b.binary("nn.mul", xi, r), xr))
    return _result(b, node, b.binary("nn.div", re, d), b.binary("nn.div", im, d))


def _conj(b, node, z):
    re, im = parts(b, z)
    return pack(b, re, b.unary("nn.neg", im))


def _identity(b, node, z, *args, **kwargs):
    return z


def _angle(b, node, z):
    """atan2(im, re), torch's angle; at 0 its value is atan2's (signed zeros included) and its gradient 0, as
    torch's (the derivative is taken at the point moved to (1, 0), the value's branch passes none)."""
    re, im = parts(b, z)
    shape, d = list(re.shape), re.dtype
    zero = b.op("nn.and", [b.compare("EQ", re, 0.0), b.compare("EQ", im, 0.0)], shape, "i1")
    exact = b.unary("nn.stop_gradient", b.binary("nn.atan2", im, re))
    moved = b.binary("nn.atan2", im, b.op("nn.select", [zero, b.full(1.0, shape, d), re], shape, d))
    return b.op("nn.select", [zero, exact, moved], shape, d)


def _exp(b, node, z):
    """e^re (cos im, sin im)."""
    re, im = parts(b, z)
    scale = b.unary("nn.exp", re)
    return pack(b, b.binary("nn.mul", scale, b.unary("nn.cosine", im)),
                b.binary("nn.mul", scale, b.unary("nn.sine", im)))


def _polar(b, node, r, theta):
    """(r cos theta, r sin theta) of real tensors."""
    return _result(b, node, b.binary("nn.mul", r, b.unary("nn.cosine", theta)),
                   b.binary("nn.mul", r, b.unary("nn.sine", theta)))


def _complex(b, node, re, im):
    return _result(b, node, re, im)


def _full(b, node, size_or_like, value, **kwargs):
    """`full`/`full_like` of a complex dtype: (value.real, value.imag)."""
    shape, dtype = b.out(node)
    z = complex(value)
    return pack(b, b.full(z.real, shape[:-1], dtype), b.full(z.imag, shape[:-1], dtype))


def _view_as_complex(b, node, x):
    if isinstance(x, ComplexValue) or not x.shape or x.shape[-1] != 2:
        raise UnsupportedOp("view_as_complex of a tensor whose last dimension is not 2")
    return packed(x)


def _contraction(name: str):
    """A complex product (`mm`, `bmm`) by four real ones: (ar br - ai bi, ar bi + ai br)."""
    def handler(b, node, x, y):
        dtype, real, shim = b.out(node)[1], HANDLERS[f"aten.{name}"], _RealNode(node)
        (xr, xi), (yr, yi) = _operand(b, x, dtype), _operand(b, y, dtype)

        def product(u: Part, v: Part) -> Part:
            return None if u is None or v is None else real(b, shim, u, v)

        re = _sum(b, [(1, product(xr, yr)), (-1, product(xi, yi))])
        im = _sum(b, [(1, product(xr, yi)), (1, product(xi, yr))])
        return _result(b, node, re, im)

    return handler


def _to_copy(b, node, x, *args, dtype=None, **kwargs):
    """A complex tensor to a complex dtype (its parts converted); a real tensor to a complex one (aten_fft)."""
    if not isinstance(x, ComplexValue):
        return COMPLEX_FORMS["aten._to_copy.default"](b, node, x, *args, dtype=dtype, **kwargs)
    if not is_complex(node.meta["val"]):
        raise UnsupportedOp("a complex tensor converted to a real dtype (torch discards the imaginary part: "
                            "take .real)")
    part = b.out(node)[1]
    return packed(b.convert(x, part))


ARITHMETIC: dict[str, Handler] = {
    "aten.add.Tensor": _add_sub(1), "aten.add.Scalar": _add_sub(1), "aten.sub.Tensor": _add_sub(-1),
    "aten.sub.Scalar": _add_sub(-1), "aten.mul.Tensor": _mul, "aten.mul.Scalar": _mul, "aten.div.Tensor": _div,
    "aten.div.Scalar": _div, "aten._conj.default": _conj, "aten.conj_physical.default": _conj,
    "aten.resolve_conj.default": _identity, "aten.angle.default": _angle, "aten.exp.default": _exp,
    "aten.polar.default": _polar, "aten.complex.default": _complex, "aten.view_as_complex.default": _view_as_complex,
    "aten.mm.default": _contraction("mm.default"), "aten.bmm.default": _contraction("bmm.default"),
    "aten._to_copy.default": _to_copy, "aten.full.default": _full, "aten.full_like.default": _full,
}
"""Complex forms written on the parts."""

PARTWISE = frozenset(f"aten.{n}" for n in (
    "view.default", "view_copy.default", "unsqueeze.default", "squeeze.dims", "permute.default", "expand.default",
    "clone.default", "alias.default", "select.int", "cat.default", "slice_scatter.default", "copy.default",
    "index_select.default", "flip.default", "gather.default", "index.Tensor", "repeat.default", "diagonal.default",
    "split_with_sizes.default", "where.self", "neg.default", "sum.dim_IntList", "mean.dim", "mean.default",
    "cumsum.default",
))
"""Ops that move, select or sum elements (no number among their arguments is a value of the result):
each part of a complex result is the op of that part of the operands (a real float operand's imaginary
part is 0, integer and boolean tensors are indices or conditions, the same for both)."""
assert PARTWISE <= HANDLERS.keys(), "a part-wise op without a real handler"


class _RealNode:
    """`node` as a real op's handler sees it: its complex results as real tensors of the part type."""

    def __init__(self, node):
        self._node = node
        val = node.meta.get("val")
        real = [_real_meta(v) for v in val] if isinstance(val, list | tuple) else _real_meta(val)
        self.meta = {**node.meta, "val": real}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._node, name)


def _real_meta(val):
    if not is_complex(val):
        return val
    return torch.empty(tuple(val.shape), dtype=torch.float32 if val.dtype == torch.complex64 else torch.float64,
                       device="meta")


@functools.cache
def _partwise(real: Handler) -> Handler:
    """`real` applied to each part (`PARTWISE`), the parts packed again (each result of a tuple)."""
    @functools.wraps(real)
    def handler(b, node, *args, **kwargs):
        shim, dtype = _RealNode(node), b.out(node)[1]
        zero: dict[int, Value] = {}

        def part(x, k: int):
            if isinstance(x, ComplexValue):
                return parts(b, x)[k]
            if isinstance(x, Value) and x.is_float:
                if k == 0:
                    return b.convert(x, dtype)
                if id(x) not in zero:
                    zero[id(x)] = b.full(0.0, x.shape, dtype)
                return zero[id(x)]
            if isinstance(x, list | tuple):
                return type(x)(part(y, k) for y in x)
            return x

        halves = [real(b, shim, *(part(a, k) for a in args), **{n: part(v, k) for n, v in kwargs.items()})
                  for k in (0, 1)]
        if isinstance(halves[0], tuple):
            return tuple(pack(b, re, im) for re, im in zip(*halves))
        return pack(b, *halves)

    return handler


def complex_handler(name: str, node, args: Sequence) -> Handler | None:
    """The handler of `node` when it takes or gives a complex tensor (None when it does neither);
    an op without a complex form is refused."""
    def complex_arg(a) -> bool:
        return isinstance(a, ComplexValue) or isinstance(a, list | tuple) and any(map(complex_arg, a))

    val = node.meta.get("val")
    gives = any(map(is_complex, val)) if isinstance(val, list | tuple) else is_complex(val)
    if not gives and not any(map(complex_arg, args)):
        return None
    handler = ARITHMETIC.get(name) or COMPLEX_FORMS.get(name) or FFT_HANDLERS.get(name)
    if handler is None and name in PARTWISE:
        handler = _partwise(HANDLERS[name])
    if handler is None:
        raise UnsupportedOp("of complex tensors (dfc.torch's complex forms: the FFTs, + - * /, conj, abs, angle, "
                            "exp, polar, complex, view_as_complex/view_as_real, mm/bmm and data movement; "
                            "docs/torch.md)")
    return handler
