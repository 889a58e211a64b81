"""Pure expansion of `nn.argsort` of static shape, by one of three algorithms for every element type (run-time
sizes: `nn_expand_sort_dynamic`).

Rank counting (a whole sort or a large k of a row shorter than MERGE_MIN_N): element i of a row has rank
r_i = #{j : x_j precedes x_i, or x_j ties x_i and j < i} (one map over the
input and a second position j along the axis, adding 0/1 into r with
wcr(add)), and a second map writes i at position r_i of its row (ranks of k
and above at one extra position, dropped). O(n^2) comparisons per row of n,
all independent; the ranks are a permutation, so each position is written
once (the wcr(add) into zeros says so to every analysis without relying on it).

Selection (top-k with k <= SELECT_MAX_K and 4k <= n): k rounds, each taking the
first element of the row's order among those after the previous pick (after
it in value, or tying it at a later index): a map reduces their best value
(wcr max, or min ascending; floats also whether a NaN or a number is among
them, integers as i64 keys that order as the values do), and a map finds the
first index holding it (wcr min). O(k n) per row: for k = 5 of 2048 to 8192
elements 200 to 500 times faster than counting ranks (docs/performance-notes.md).

Merge sort (rows of MERGE_MIN_N and more, a whole sort or a large k): bottom-up,
ceil(log2 n) passes, each one map over the elements carrying the order so far
(indices) and the elements' i64 order keys in that order (`order_key`: equal
keys where `precedes` ties, so each comparison is one integer compare). Pass w
merges pairs of sorted runs of w (the last ones partial): element p of run A
goes to the pair's start + its place in A + the count of its partner run B's
elements before it, found by a branch-free binary search of bit_length(w)
fixed steps (as `np.searchsorted`'s in dfc/frontend/numpy_search.py, which
builds frontend expressions, not maps); for A on the left B's keys below p's,
for A on the right also those equal, so ties keep their index order. Each pass
writes a permutation (with wcr(add) into zeros, as ranks are placed).
O(n log^2 n) per row: 1.4 to 2x faster than counting ranks at n = 512, 30x at
10^4 and 380x at 10^5, for a compile about 1 to 3 s longer
(docs/performance-notes.md)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import DYNAMIC_INDEX, AnyFloat, IndexType, IntegerAttr, IntegerType, TensorType, i64
from xdsl.ir import BlockArgument, Operation, SSAValue

from dfc.dialects.df_builders import Scalar, index_const, map_op, read, splat, tasklet, write
from dfc.dialects.nn_expand_shape import gather
from dfc.dialects.nn_sort import ArgsortOp

SELECT_MAX_K = 8
"""The largest k selection rounds compute (unrolled: three maps a round), when 4k <= n."""

MERGE_MIN_N = 512
"""The shortest row merge sorted (shorter ones count ranks, faster there: docs/performance-notes.md)."""

I64_MIN, I64_MAX = -(2**63), 2**63 - 1


def _ins(s: Scalar, op: Operation) -> SSAValue:
    return s.b.insert(op).results[0]


def _true(s: Scalar) -> SSAValue:
    return _ins(s, arith.ConstantOp.from_int_and_width(1, 1))


def _not(s: Scalar, x: SSAValue) -> SSAValue:
    return _ins(s, arith.XOrIOp(x, _true(s)))


def _and(s: Scalar, x: SSAValue, y: SSAValue) -> SSAValue:
    return _ins(s, arith.AndIOp(x, y))


def _or(s: Scalar, x: SSAValue, y: SSAValue) -> SSAValue:
    return _ins(s, arith.OrIOp(x, y))


def _is_nan(s: Scalar, x: SSAValue) -> SSAValue:
    return _ins(s, arith.CmpfOp(x, x, "uno"))


def precedes(s: Scalar, a: SSAValue, b: SSAValue, descending: bool, unsigned: bool) -> tuple[SSAValue, SSAValue]:
    """(`a` sorts strictly before `b`, `a` ties `b`) in `nn.argsort`'s order."""
    if isinstance(a.type, AnyFloat):
        a_nan, b_nan = _is_nan(s, a), _is_nan(s, b)
        if descending:  # a NaN first: a > b, or a is NaN and b is not
            before = _or(s, _ins(s, arith.CmpfOp(a, b, "ogt")), _and(s, a_nan, _not(s, b_nan)))
        else:  # a NaN last: a < b, or b is NaN and a is not
            before = _or(s, _ins(s, arith.CmpfOp(a, b, "olt")), _and(s, b_nan, _not(s, a_nan)))
        return before, _or(s, _ins(s, arith.CmpfOp(a, b, "oeq")), _and(s, a_nan, b_nan))
    assert isinstance(a.type, IntegerType)
    as_unsigned = unsigned or a.type.width.data == 1
    predicate = ("u" if as_unsigned else "s") + ("gt" if descending else "lt")
    return _ins(s, arith.CmpiOp(a, b, predicate)), _ins(s, arith.CmpiOp(a, b, "eq"))


def _key(s: Scalar, x: SSAValue, unsigned: bool) -> SSAValue:
    """An integer as the i64 whose signed order is the value's (unsigned: zero-extended, or uint64 with
    its top bit flipped)."""
    assert isinstance(x.type, IntegerType)
    width, as_unsigned = x.type.width.data, unsigned or x.type.width.data == 1
    if width < 64:
        return _ins(s, (arith.ExtUIOp if as_unsigned else arith.ExtSIOp)(x, i64))
    if as_unsigned:
        return _ins(s, arith.XOrIOp(x, _ins(s, arith.ConstantOp(IntegerAttr(I64_MIN, i64)))))
    return x


def static_argsort(b: Builder, op: Operation) -> SSAValue:
    """`op`'s indices, for an input of static shape."""
    assert isinstance(op, ArgsortOp)
    x, out_type = op.input, op.result.type
    assert isinstance(x.type, TensorType) and isinstance(out_type, TensorType)
    shape, axis, k = list(x.type.get_shape()), op.normalized_axis, op.count
    if not shape:
        return splat(b, out_type, 0)
    assert DYNAMIC_INDEX not in shape, "run-time sizes sort by nn_expand_sort_dynamic's network"
    if k <= SELECT_MAX_K and 4 * k <= shape[axis]:
        return _select(b, op, shape, axis, k)
    if shape[axis] >= MERGE_MIN_N:
        return _merge_sort(b, op, shape, axis, k)
    return _count_ranks(b, op, shape, axis, k)


def _count_ranks(b: Builder, op: ArgsortOp, shape: list[int], axis: int, k: int) -> SSAValue:
    x, out_type = op.input, op.result.type
    assert isinstance(out_type, TensorType)
    descending, unsigned = op.descending is not None, op.unsigned is not None

    def count(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        i, j = list(ivs[:-1]), ivs[-1]
        x_i, x_j = read(mb, x, i), read(mb, x, [j if d == axis else iv for d, iv in enumerate(i)])
        earlier = mb.insert(arith.CmpiOp(j, i[axis], "ult")).result

        def body(s: Scalar, v: Sequence[SSAValue]) -> SSAValue:
            before, tie = precedes(s, v[0], v[1], descending, unsigned)
            return _ins(s, arith.ExtUIOp(_or(s, before, _and(s, tie, v[2])), i64))

        write(mb, tasklet(mb, [x_j, x_i, earlier], i64, body), outs[0], i, "add")

    dims = op.input.type.get_shape()  # type: ignore[attr-defined]
    ranks = map_op(b, [*shape, shape[axis]], [splat(b, TensorType(i64, dims), 0)], count).res[0]
    whole = k == dims[axis]  # else ranks of k and above go to an extra position k, dropped
    placed_type = TensorType(i64, [(d_size if whole else k + 1) if d == axis else d_size
                                   for d, d_size in enumerate(dims)])

    def place(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        rank = mb.insert(arith.IndexCastOp(read(mb, ranks, ivs), IndexType())).result
        if not whole:
            rank = mb.insert(arith.MinUIOp(rank, index_const(mb, k))).result
        position = mb.insert(arith.IndexCastOp(ivs[axis], i64)).result
        write(mb, position, outs[0], [rank if d == axis else iv for d, iv in enumerate(ivs)], "add")

    placed = map_op(b, shape, [splat(b, placed_type, 0)], place).res[0]
    return placed if whole else gather(b, placed, out_type, lambda mb, ivs: list(ivs))


def _select(b: Builder, op: ArgsortOp, shape: list[int], axis: int, k: int) -> SSAValue:
    x, out_type = op.input, op.result.type
    assert isinstance(x.type, TensorType) and isinstance(out_type, TensorType)
    element, n = x.type.element_type, shape[axis]
    descending, unsigned = op.descending is not None, op.unsigned is not None
    floats = isinstance(element, AnyFloat)
    wcr = "max" if descending else "min"
    row = [1 if d == axis else size for d, size in enumerate(shape)]
    best_type = TensorType(element if floats else i64, row)
    identity: float | int = (float("-inf") if descending else float("inf")) if floats else (
        I64_MIN if descending else I64_MAX)

    def operands(mb: Builder, ivs: Sequence[SSAValue], previous: SSAValue | None) -> list[SSAValue]:
        """x_j, then (x at the previous pick, whether j comes after it) from the second round on."""
        x_j = read(mb, x, ivs)
        if previous is None:
            return [x_j]
        at = [index_const(mb, 0) if d == axis else iv for d, iv in enumerate(ivs)]
        p = mb.insert(arith.IndexCastOp(read(mb, previous, at), IndexType())).result
        x_p = read(mb, x, [p if d == axis else iv for d, iv in enumerate(ivs)])
        return [x_j, x_p, mb.insert(arith.CmpiOp(ivs[axis], p, "ugt")).result]

    def eligible(s: Scalar, v: Sequence[SSAValue]) -> SSAValue:
        """Whether x_j comes after the previous pick (every element in the first round)."""
        if len(v) < 3:
            return _true(s)
        before, tie = precedes(s, v[1], v[0], descending, unsigned)
        return _or(s, before, _and(s, tie, v[2]))

    out, previous = splat(b, out_type, 0), None
    for r in range(k):
        stats_init = [splat(b, best_type, identity)]
        if floats:  # whether a NaN, and whether a number, comes after the previous pick
            stats_init += [splat(b, TensorType(i64, row), 0), splat(b, TensorType(i64, row), 0)]

        def stats(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument], previous=previous) -> None:
            at = [index_const(mb, 0) if d == axis else iv for d, iv in enumerate(ivs)]
            v = operands(mb, ivs, previous)

            def best(s: Scalar, a: Sequence[SSAValue]) -> SSAValue:
                ok = eligible(s, a)
                if floats:
                    ok = _and(s, ok, _not(s, _is_nan(s, a[0])))
                    return s.select(ok, a[0], s.const(float(identity), element))
                return s.select(ok, _key(s, a[0], unsigned), _ins(s, arith.ConstantOp(IntegerAttr(identity, i64))))

            write(mb, tasklet(mb, v, best_type.element_type, best), outs[0], at, wcr)
            if floats:
                for slot, nan in ((1, True), (2, False)):
                    def flag(s: Scalar, a: Sequence[SSAValue], nan=nan) -> SSAValue:
                        is_nan = _is_nan(s, a[0])
                        return _ins(s, arith.ExtUIOp(_and(s, eligible(s, a), is_nan if nan else _not(s, is_nan)), i64))

                    write(mb, tasklet(mb, v, i64, flag), outs[slot], at, "max")

        found = map_op(b, shape, stats_init, stats).res

        def pick(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument], found=found,
                 previous=previous) -> None:
            at = [index_const(mb, 0) if d == axis else iv for d, iv in enumerate(ivs)]
            v = operands(mb, ivs, previous)
            m = len(v)
            position = mb.insert(arith.IndexCastOp(ivs[axis], i64)).result

            def first(s: Scalar, a: Sequence[SSAValue]) -> SSAValue:
                """j where x_j comes after the previous pick and holds the best value, else n."""
                own, stats_at = a[:m], a[m:-1]
                if floats:
                    best, has_nan, has_number = stats_at
                    zero, nan = _ins(s, arith.ConstantOp(IntegerAttr(0, i64))), s.const(float("nan"), element)
                    if descending:  # a NaN comes first
                        chosen = s.select(_ins(s, arith.CmpiOp(has_nan, zero, "ne")), nan, best)
                    else:  # a NaN only when no number is left
                        chosen = s.select(_ins(s, arith.CmpiOp(has_number, zero, "ne")), best, nan)
                    hit = precedes(s, own[0], chosen, descending, unsigned)[1]
                else:
                    hit = _ins(s, arith.CmpiOp(_key(s, own[0], unsigned), stats_at[0], "eq"))
                return s.select(_and(s, hit, eligible(s, own)), a[-1], _ins(s, arith.ConstantOp(IntegerAttr(n, i64))))

            write(mb, tasklet(mb, [*v, *(read(mb, f, at) for f in found), position], i64, first), outs[0], at, "min")

        previous = map_op(b, shape, [splat(b, TensorType(i64, row), n)], pick).res[0]

        def store(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument], chosen=previous,
                  r=r) -> None:
            write(mb, read(mb, chosen, ivs), outs[0], [index_const(mb, r) if d == axis else iv
                                                        for d, iv in enumerate(ivs)])

        out = map_op(b, row, [out], store).res[0]
    return out


def order_key(s: Scalar, x: SSAValue, descending: bool, unsigned: bool) -> SSAValue:
    """`x` as an i64 whose signed order is `nn.argsort`'s (equal keys exactly where `precedes` ties): a
    float's bits (-0.0 read as 0.0; a negative's below the sign flipped, so that they order as the values),
    a NaN the largest; an integer's `_key`; all bits flipped descending."""
    if isinstance(x.type, AnyFloat):
        zero = s.const(0.0, x.type)
        x = s.select(s.eq(x, zero), zero, x)
        width = x.type.bitwidth
        bits = _ins(s, arith.BitcastOp(x, IntegerType(width)))
        key = bits if width == 64 else _ins(s, arith.ExtSIOp(bits, i64))
        negative = _ins(s, arith.CmpiOp(key, _ins(s, arith.ConstantOp(IntegerAttr(0, i64))), "slt"))
        key = s.select(negative, _ins(s, arith.XOrIOp(key, _ins(s, arith.ConstantOp(IntegerAttr(I64_MAX, i64))))), key)
        key = s.select(_is_nan(s, x), _ins(s, arith.ConstantOp(IntegerAttr(I64_MAX, i64))), key)
    else:
        key = _key(s, x, unsigned)
    return _ins(s, arith.XOrIOp(key, _ins(s, arith.ConstantOp(IntegerAttr(-1, i64))))) if descending else key


def _merge_sort(b: Builder, op: ArgsortOp, shape: list[int], axis: int, k: int) -> SSAValue:
    x, out_type = op.input, op.result.type
    assert isinstance(x.type, TensorType) and isinstance(out_type, TensorType)
    descending, unsigned, n = op.descending is not None, op.unsigned is not None, shape[axis]
    # the order so far (runs of `width` sorted) and the order keys in that order; None: the identity, x's
    perm: SSAValue | None = None
    keys: SSAValue | None = None
    width = 1
    while width < n:
        def merge(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument], perm=perm, keys=keys,
                  width=width) -> None:
            def const(value: int) -> SSAValue:
                return index_const(mb, value)

            def idx(o: Operation) -> SSAValue:
                return mb.insert(o).results[0]

            def at(q: SSAValue) -> list[SSAValue]:
                return [q if d == axis else iv for d, iv in enumerate(ivs)]

            def key(q: SSAValue) -> SSAValue:
                if keys is not None:
                    return read(mb, keys, at(q))
                return tasklet(mb, [read(mb, x, at(q))], i64, lambda s, a: order_key(s, a[0], descending, unsigned))

            p, w, end = ivs[axis], const(width), const(n)
            start = idx(arith.MuliOp(idx(arith.DivUIOp(p, const(2 * width))), const(2 * width)))
            own = idx(arith.RemUIOp(p, w))  # p's position in its run A
            middle = idx(arith.MinUIOp(idx(arith.AddiOp(start, w)), end))
            left = idx(arith.CmpiOp(p, middle, "ult"))  # A is the pair's left run, B (the partner) its right
            b_start = idx(arith.SelectOp(left, middle, start))
            b_end = idx(arith.SelectOp(left, idx(arith.MinUIOp(idx(arith.AddiOp(middle, w)), end)), middle))
            v, count = key(p), const(0)
            for step in reversed(range(width.bit_length())):  # the steps add up to >= width >= len(B)
                moved = idx(arith.AddiOp(count, const(1 << step)))
                probe = idx(arith.AddiOp(b_start, moved))
                inside = idx(arith.CmpiOp(probe, b_end, "ule"))
                last = idx(arith.MinUIOp(idx(arith.SubiOp(probe, const(1))), const(n - 1)))

                def counted(s: Scalar, a: Sequence[SSAValue], step=step) -> SSAValue:
                    """1 << step if B's key at the probe is below v's (or equal, v in the right run)."""
                    y, v, inside, left = a
                    below = s.select(left, _ins(s, arith.CmpiOp(y, v, "slt")), _ins(s, arith.CmpiOp(y, v, "sle")))
                    return s.select(_and(s, inside, below), _ins(s, arith.ConstantOp(IntegerAttr(1 << step, i64))),
                                    _ins(s, arith.ConstantOp(IntegerAttr(0, i64))))

                taken = tasklet(mb, [key(last), v, inside, left], i64, counted)
                count = idx(arith.AddiOp(count, idx(arith.IndexCastOp(taken, IndexType()))))
            to = at(idx(arith.AddiOp(idx(arith.AddiOp(start, own)), count)))
            index = read(mb, perm, at(p)) if perm is not None else idx(arith.IndexCastOp(p, i64))
            write(mb, index, outs[0], to, "add")  # each position written once: into zeros, as _count_ranks
            write(mb, v, outs[1], to, "add")

        perm, keys = map_op(b, shape, [splat(b, TensorType(i64, shape), 0) for _ in range(2)], merge).res
        width *= 2
    assert perm is not None
    return perm if k == n else gather(b, perm, out_type, lambda mb, ivs: list(ivs))

