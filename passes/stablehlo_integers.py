"""Integer ops of `convert-stablehlo` that nn has no single op for.

* `popcnt` sums the bits in fields that double in width (1, 2, 4, ... bits:
  Hacker's Delight's population count); `count_leading_zeros` smears the
  highest set bit into every lower one (x |= x >> 1, 2, 4, ...) and counts
  the zeros left, N - popcnt.
* `chlo.mulhi`, the high half of the double-width product, multiplies
  N/2-bit halves (Hacker's Delight's mulhs, and mulhu for unsigned operands),
  so that no product needs more than N bits.
* `dot_general` of integers multiplies the operands broadcast to [batch, lhs
  free, rhs free, contracting] and sums the contracting dimensions pairwise.
* `power` of integers squares and multiplies over the exponent's bits in an
  `scf.for`, as the spec's interpreter does (a negative signed exponent gives 0
  unless the base is 1 or -1).
* On `i1` (StableHLO's booleans) add and maximum are or, multiply and
  minimum are and (`BOOLEAN_BINARY`), as the spec defines them.
* A `reduce` of integers (or a float reduce by multiplication) folds the
  reduced elements pairwise: the reduced dimensions are moved last and
  flattened, then the two halves are combined until one element is left, an
  odd one carried; log2(n) steps of elementwise ops, each exact for integer
  arithmetic (which is associative), then the init value is combined in. The
  body is one binary op of the two arguments; unsigned operands combine
  maximum and minimum by their values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerType, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_shape as nns
from dfc.dialects.diagnostics import CompileError
from dfc.dialects.nn_unsigned_builders import UnsignedArith, int_width
from dfc.dialects.stablehlo_bits import CountLeadingZerosOp, MulhiOp, PopcntOp

BINARY_NN: dict[str, type[Operation]] = nn.one_to_one("stablehlo", 2)
"""The binary ops translated by name (as `convert_stablehlo.BINARY`)."""
ASSOCIATIVE = frozenset({"stablehlo.add", "stablehlo.multiply", "stablehlo.maximum", "stablehlo.minimum",
                         "stablehlo.and", "stablehlo.or", "stablehlo.xor"})
"""Reduce bodies folded pairwise (associative and commutative, so any order is the reduction)."""
BOOLEAN_BINARY: dict[str, type[Operation]] = {
    "add": nne.OrOp, "maximum": nne.OrOp, "multiply": nne.AndOp, "minimum": nne.AndOp,
}
"""StableHLO's arithmetic on i1, as logical ops."""


def is_boolean(v: SSAValue) -> bool:
    return isinstance(v.type, TensorType) and v.type.element_type == IntegerType(1)


def _shape(v: SSAValue) -> tuple[int, ...]:
    assert isinstance(v.type, TensorType)
    return tuple(v.type.get_shape())


class IntegerConversions(UnsignedArith):
    """Bit counts, high products, boolean arithmetic and pairwise reductions, mixed into the converter
    (`unsigned_ops` as `stablehlo_unsigned.make_signless` returned it)."""

    unsigned_ops: dict
    b: Builder

    def _shift_right(self, x: SSAValue, bits: int) -> SSAValue:
        return self.ins(nne.ShiftRightLogicalOp(x, self.int_full(bits, x)))

    def population_count(self, x: SSAValue) -> SSAValue:
        n, s = int_width(x), 1
        while s < n:
            mask = self.int_full(sum(((1 << s) - 1) << k for k in range(0, n, 2 * s)), x)
            x = self.ins(nn.AddOp(self.ins(nne.AndOp(x, mask)), self.ins(nne.AndOp(self._shift_right(x, s), mask))))
            s *= 2
        return x

    def on_popcnt(self, op: PopcntOp) -> Sequence[SSAValue]:
        return [self.population_count(op.operand)]

    def on_count_leading_zeros(self, op: CountLeadingZerosOp) -> Sequence[SSAValue]:
        x, n, s = op.operand, int_width(op.operand), 1
        while s < n:
            x = self.ins(nne.OrOp(x, self._shift_right(x, s)))
            s *= 2
        return [self.ins(nn.SubOp(self.int_full(n, x), self.population_count(x)))]

    def multiply_high(self, u: SSAValue, v: SSAValue, unsigned: bool) -> SSAValue:
        """The high N bits of the 2N-bit product of N-bit `u` and `v`, by N/2-bit halves (Hacker's
        Delight's mulhs/mulhu: every step is N-bit arithmetic)."""
        h = int_width(u) // 2
        low = self.int_full((1 << h) - 1, u)

        def high(x: SSAValue) -> SSAValue:  # x >> h: arithmetic for signed, logical for unsigned
            shift = nne.ShiftRightLogicalOp if unsigned else nne.ShiftRightArithmeticOp
            return self.ins(shift(x, self.int_full(h, x)))

        def mul(a: SSAValue, b: SSAValue) -> SSAValue:
            return self.ins(nn.MulOp(a, b))

        def add(a: SSAValue, b: SSAValue) -> SSAValue:
            return self.ins(nn.AddOp(a, b))

        u0, v0 = self.ins(nne.AndOp(u, low)), self.ins(nne.AndOp(v, low))
        u1, v1 = high(u), high(v)
        t = add(mul(u1, v0), self._shift_right(mul(u0, v0), h))
        w1 = add(mul(u0, v1), self.ins(nne.AndOp(t, low)))
        return add(add(mul(u1, v1), high(t)), high(w1))

    def on_mulhi(self, op: MulhiOp) -> Sequence[SSAValue]:
        if int_width(op.lhs) % 2:
            raise CompileError.at(op, f"convert-stablehlo: chlo.mulhi of {op.lhs.type} (an odd width) is not "
                                      "supported")
        unsigned = any(self.unsigned_ops.get(op, ((), ()))[0])
        return [self.multiply_high(op.lhs, op.rhs, unsigned)]

    def integer_power(self, x: SSAValue, y: SSAValue, unsigned: bool) -> SSAValue:
        """x ** y of integers as the spec's interpreter computes it: square-and-multiply over the N bits of y
        (an `scf.for`, wrapping as N-bit products do); for signed operands a negative y gives 0 unless
        |x| = 1 (then y's magnitude is used)."""
        n = int_width(x)
        if not unsigned:
            zero = self.int_full(0, y)
            negative = self.ins(nne.CompareOp(y, zero, "LT"))
            y = self.ins(nne.SelectOp(negative, self.ins(nn.SubOp(zero, y)), y))
        one = self.int_full(1, x)
        result = self.ins(nns.BroadcastInDimOp(one, _shape(x), []))
        body = Block(arg_types=[IndexType(), result.type, x.type, y.type])
        _, r, base, e = body.args
        saved, self.b = self.b, Builder(InsertPoint.at_end(body))
        bit = self.ins(nne.CompareOp(self.ins(nne.AndOp(e, self.int_full(1, e))), self.int_full(0, e), "NE"))
        r_new = self.ins(nne.SelectOp(bit, self.ins(nn.MulOp(r, base)), r))
        body.add_op(scf.YieldOp(r_new, self.ins(nn.MulOp(base, base)), self._shift_right(e, 1)))
        self.b = saved
        bounds = [self.ins(arith.ConstantOp.from_int_and_width(v, IndexType())) for v in (0, n, 1)]
        loop = scf.ForOp(*bounds, [result, x, y], Region(body))
        self.b.insert(loop)
        power = loop.results[0]
        if unsigned:
            return power
        unit = self.ins(nne.OrOp(self.ins(nne.CompareOp(x, one, "EQ")),
                                 self.ins(nne.CompareOp(x, self.int_full(-1, x), "EQ"))))
        vanishes = self.ins(nne.AndOp(negative, self.ins(nne.NotOp(unit))))
        return self.ins(nne.SelectOp(vanishes, self.ins(nns.BroadcastInDimOp(self.int_full(0, x), _shape(x), [])),
                                     power))

    def integer_dot(self, lhs: SSAValue, rhs: SSAValue, batching: tuple[Sequence[int], Sequence[int]],
                    contracting: tuple[Sequence[int], Sequence[int]]) -> SSAValue:
        """dot_general of integers (same type): both operands laid out as [batch, lhs free, rhs free,
        contracting] by broadcasting, multiplied, the contracting dimensions summed pairwise (N-bit wrapping
        arithmetic is exact in any order). The result's dimensions: batch, lhs free, rhs free."""
        layouts = []
        for x, b, c in ((lhs, batching[0], contracting[0]), (rhs, batching[1], contracting[1])):
            free = [d for d in range(len(_shape(x))) if d not in b and d not in c]
            layouts.append((self.ins(nn.TransposeOp(x, [*b, *free, *c])), len(free)))
        (lt, lf), (rt, rf) = layouts
        nb, nc = len(batching[0]), len(contracting[0])
        ls, rs = _shape(lt), _shape(rt)
        shape = [*ls[:nb + lf], *rs[nb:nb + rf], *ls[nb + lf:]]
        rank = len(shape)
        contract = list(range(rank - nc, rank))
        wide_l = self.ins(nns.BroadcastInDimOp(lt, shape, [*range(nb + lf), *contract]))
        wide_r = self.ins(nns.BroadcastInDimOp(rt, shape, [*range(nb), *range(nb + lf, nb + lf + rf), *contract]))
        products = self.ins(nn.MulOp(wide_l, wide_r))
        return self.pairwise_reduce(products, self.int_full(0, products), contract,
                                    self.combiner("stablehlo.add", False))

    def combiner(self, name: str, unsigned: bool) -> Callable[[SSAValue, SSAValue], SSAValue]:
        """The elementwise op `name` (a stablehlo binary op) of two values: by value for unsigned
        maximum/minimum, logical on i1."""
        short = name.removeprefix("stablehlo.")
        if unsigned and short in ("maximum", "minimum"):
            return lambda a, b: self.unsigned_extreme(a, b, larger=short == "maximum")

        def combine(a: SSAValue, b: SSAValue) -> SSAValue:
            table = BOOLEAN_BINARY if is_boolean(a) and short in BOOLEAN_BINARY else BINARY_NN
            return self.ins(table[short](a, b))

        return combine

    def pairwise_reduce(self, x: SSAValue, init: SSAValue, dims: Sequence[int],
                        combine: Callable[[SSAValue, SSAValue], SSAValue]) -> SSAValue:
        """`combine` of `init` and every element of `x` along `dims`, folded pairwise."""
        shape = _shape(x)
        kept = [d for d in range(len(shape)) if d not in dims]
        out = [shape[d] for d in kept]
        count = 1
        for d in dims:
            count *= shape[d]
        if count == 0:
            return self.ins(nns.BroadcastInDimOp(init, out, []))
        moved = self.ins(nn.TransposeOp(x, [*kept, *sorted(dims)]))
        flat = self.ins(nn.ReshapeOp(moved, [*out, count]))
        r = len(out)

        def part(v: SSAValue, lo: int, hi: int) -> SSAValue:
            return self.ins(nns.SliceOp(v, [0] * r + [lo], [*out, hi], [1] * (r + 1)))

        while count > 1:
            half = count // 2
            folded = combine(part(flat, 0, half), part(flat, half, 2 * half))
            if count % 2:
                folded = self.ins(nns.ConcatenateOp([folded, part(flat, 2 * half, count)], r))
            flat, count = folded, half + count % 2
        return combine(self.ins(nn.ReshapeOp(flat, out)), self.ins(nns.BroadcastInDimOp(init, out, [])))

