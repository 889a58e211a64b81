"""The expansions of the random ops (`dialects.nn_random`): composites of elementwise nn ops,
which `expand-library` expands in turn and fuses into one map.

`nn.random_bits` is one map whose tasklet runs Philox-4x32-10 on i64 values that hold 32-bit words: the 32 x 32 -> 64 bit products
wrap in i64 with the same bits as unsigned ones, so a logical shift right by 32 gives their
high word and a mask their low word. Each element computes the block of its counter and
selects its word (4 times the work of sharing blocks, for a map without cross-element state).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, TensorType, f16, f32, i32, i64
from xdsl.ir import Operation, SSAValue

from dfc.dialects import nn
from dfc.dialects import nn_elementwise as ew
from dfc.dialects.df_builders import Scalar, elementwise
from dfc.dialects.nn_random import RandomBitsOp, RandomNormalOp, RandomUniformOp
from dfc.dialects.nn_shape import IotaOp, SliceOp

MULTIPLIERS = (0xD2511F53, 0xCD9E8D57)
"""Philox-4x32's round multipliers."""
WEYL = (0x9E3779B9, 0xBB67AE85)
"""Philox-4x32's key schedule increments (the golden ratio, sqrt(3) - 1)."""
ROUNDS = 10
MASK = 0xFFFFFFFF


class _Words:
    """Inserts scalar i64 arith ops at a builder (in a tasklet), numbers becoming constants."""

    def __init__(self, b: Builder):
        self.b = b

    def value(self, x: SSAValue | int) -> SSAValue:
        return x if isinstance(x, SSAValue) else self.b.insert(arith.ConstantOp(IntegerAttr(x, i64))).result

    def _bin(self, op, x, y) -> SSAValue:
        return self.b.insert(op(self.value(x), self.value(y))).result

    def mul(self, x, y) -> SSAValue:
        return self._bin(arith.MuliOp, x, y)

    def add(self, x, y) -> SSAValue:
        return self._bin(arith.AddiOp, x, y)

    def xor(self, x, y) -> SSAValue:
        return self._bin(arith.XOrIOp, x, y)

    def low(self, x) -> SSAValue:
        return self._bin(arith.AndIOp, x, MASK)

    def shift_right(self, x, n: int) -> SSAValue:
        return self._bin(arith.ShRUIOp, x, n)


def philox(w: _Words, counter: list[SSAValue | int], key: list[SSAValue | int]) -> list[SSAValue]:
    """The four output words of Philox-4x32-10 (i64 values of 32-bit words)."""
    c, k = list(counter), list(key)
    for r in range(ROUNDS):
        if r:
            k = [w.low(w.add(k[0], WEYL[0])), w.low(w.add(k[1], WEYL[1]))]
        p0, p1 = w.mul(c[0], MULTIPLIERS[0]), w.mul(c[2], MULTIPLIERS[1])
        c = [w.xor(w.xor(w.shift_right(p1, 32), c[1]), k[0]), w.low(p1),
             w.xor(w.xor(w.shift_right(p0, 32), c[3]), k[1]), w.low(p0)]
    return c  # type: ignore[return-value]


def _random_bits(b: Builder, op: Operation) -> SSAValue:
    """One map: an element's tasklet computes its block's Philox and picks its word."""
    assert isinstance(op, RandomBitsOp)
    shape = op.result.type.get_shape()  # type: ignore[attr-defined]
    n, stream = math.prod(shape), op.stream.value.data
    index = b.insert(IotaOp(TensorType(i64, [n]), 0)).results[0]
    key = [b.insert(nn.ReshapeOp(b.insert(SliceOp(op.key, [j], [j + 1], [1])).results[0], [])).results[0]
           for j in range(2)]

    def body(scalar: Scalar, a: Sequence[SSAValue]) -> SSAValue:
        s = scalar.b
        w = _Words(s)
        i, k = a[0], [s.insert(arith.ExtUIOp(x, i64)).result for x in a[1:]]
        block = w.shift_right(i, 2)
        out = philox(w, [w.low(block), w.shift_right(block, 32), stream, 0], k)
        lane = s.insert(arith.AndIOp(i, w.value(3))).result
        picked = out[3]
        for j in (2, 1, 0):
            hit = s.insert(arith.CmpiOp(lane, w.value(j), "eq")).result
            picked = s.insert(arith.SelectOp(hit, out[j], picked)).result
        return s.insert(arith.TruncIOp(picked, i32)).result

    bits = elementwise(b, TensorType(i32, [n]), [index, *key], body)
    return b.insert(nn.ReshapeOp(bits, shape)).results[0]


MANTISSA = {f16: 11, f32: 24}
"""Bits of a uniform number per float type (a word's top bits; f64 takes all 32)."""


def uniform(b: Builder, key: SSAValue, stream: int, shape: tuple[int, ...], real: AnyFloat) -> SSAValue:
    """Uniform numbers in [0, 1) of `real` from the words of `nn.random_bits`."""

    def ins(o: Operation) -> SSAValue:
        return b.insert(o).results[0]

    bits = ins(ew.ConvertOp(ins(RandomBitsOp(key, stream, TensorType(i32, shape))), i64))
    m = MANTISSA.get(real, 32)
    word = ins(ew.AndOp(bits, ins(nn.FullOp(IntegerAttr(MASK, i64), []))))
    top = ins(ew.ShiftRightLogicalOp(word, ins(nn.FullOp(IntegerAttr(32 - m, i64), []))))
    return ins(nn.MulOp(ins(ew.ConvertOp(top, real)), ins(nn.FullOp(FloatAttr(2.0 ** -m, real), []))))


def _random_uniform(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, RandomUniformOp)
    t = op.result.type
    return uniform(b, op.key, op.stream.value.data, t.get_shape(), t.element_type)  # type: ignore[attr-defined]


def _random_normal(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, RandomNormalOp)
    t = op.result.type
    shape, real = t.get_shape(), t.element_type  # type: ignore[attr-defined]
    n = math.prod(shape)
    pair = uniform(b, op.key, op.stream.value.data, (2, n), real)

    def ins(o: Operation) -> SSAValue:
        return b.insert(o).results[0]

    def num(x: float) -> SSAValue:
        return ins(nn.FullOp(FloatAttr(x, real), []))

    u, v = (ins(nn.ReshapeOp(ins(SliceOp(pair, [j, 0], [j + 1, n], [1, 1])), [n])) for j in range(2))
    radius = ins(nn.SqrtOp(ins(nn.MulOp(num(-2.0), ins(nn.LogOp(ins(nn.SubOp(num(1.0), u))))))))
    angle = ins(ew.CosineOp(ins(nn.MulOp(num(2 * math.pi), v))))
    return ins(nn.ReshapeOp(ins(nn.MulOp(radius, angle)), shape))


RANDOM_EXPANSIONS: dict[type[Operation], Callable[[Builder, Operation], SSAValue]] = {
    RandomBitsOp: _random_bits, RandomUniformOp: _random_uniform, RandomNormalOp: _random_normal,
}
