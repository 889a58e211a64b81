"""`convert-stablehlo`'s sorting: `stablehlo.sort` and `chlo.top_k` as the
library's stable `nn.argsort` and gathers by its permutation.

A sort's comparator must be the order JAX writes: for one key one LT (or GT,
descending) compare of operand k's two elements, integers SIGNED or UNSIGNED
(i1, and unsigned integers), floats a TOTALORDER compare of the values
canonicalized as `lax.sort` does (-0.0 to 0.0, every NaN to one positive NaN:
NaN sorts last, and -0.0 ties 0.0), which is `nn.argsort`'s order; for
several keys (`num_keys`) `or(less_0, and(equal_0, rest))`, lexicographic.
The keys are sorted least significant first, each later pass a stable argsort
of the next key permuted so far, and every operand is gathered by the final
permutation (the sort is stable whether or not `is_stable` asks for it). Any
other comparator (a raw float compare, where NaN is unordered) is a
`CompileError` naming what it holds. `chlo.top_k` is a descending `nn.argsort` with `k` along the last
dimension."""

from __future__ import annotations

import math
from collections.abc import Callable, Container, Sequence

from xdsl.dialects.builtin import AnyFloat, DenseIntOrFPElementsAttr, IntegerType, Signedness, TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue

from dfc.dialects import nn_elementwise as nne
from dfc.dialects import stablehlo as shlo
from dfc.dialects.diagnostics import CompileError
from dfc.dialects.nn_sort import ArgsortOp, take_along
from dfc.dialects.stablehlo_sort import SortOp, TopKOp
from dfc.dialects.xdsl_fixes import splat_element

Insert = Callable[[Operation], SSAValue]


def _constant(v: SSAValue) -> float | int | None:
    op = v.owner
    if isinstance(op, shlo.ConstantOp) and isinstance(op.value, DenseIntOrFPElementsAttr):
        return splat_element(op.value)
    return None


def _compare(v: SSAValue, direction: str) -> shlo.CompareOp | None:
    op = v.owner
    return op if isinstance(op, shlo.CompareOp) and op.comparison_direction.data == direction else None


def _source(v: SSAValue) -> tuple[SSAValue, bool]:
    """The comparator argument `v` reads, and whether it canonicalizes it as JAX does for floats:
    `select(a != a, NaN, select(a == 0, 0, a))`."""
    outer = v.owner
    if isinstance(outer, shlo.SelectOp) and (nan := _compare(outer.pred, "NE")) and nan.lhs is nan.rhs:
        a, inner, nan_value = nan.lhs, outer.on_false.owner, _constant(outer.on_true)
        if (isinstance(nan_value, float) and math.isnan(nan_value) and isinstance(inner, shlo.SelectOp)
                and (zero := _compare(inner.pred, "EQ")) and zero.lhs is a and _constant(zero.rhs) == 0
                and _constant(inner.on_true) == 0 and inner.on_false is a):
            return a, True
    return v, False


def _refusal(op: SortOp, why: str) -> CompileError:
    return CompileError.at(op, f"convert-stablehlo: a sort comparator {why} is not supported (LT or GT compares of "
                               "operands' two elements, one key or several in order, as jnp.sort and lax.sort "
                               "write them, are)")


def _key(op: SortOp, compare: shlo.CompareOp, unsigned_ops: Container[Operation]) -> tuple[int, bool, bool]:
    """(the operand, descending, unsigned) that `compare` (LT, GT or EQ) of one operand's two elements reads."""
    (lhs, lhs_canonical), (rhs, rhs_canonical) = _source(compare.lhs), _source(compare.rhs)
    args = list(op.comparator.block.args)
    if not (isinstance(lhs, BlockArgument) and isinstance(rhs, BlockArgument) and lhs in args and rhs in args
            and lhs.index // 2 == rhs.index // 2 and lhs.index != rhs.index):
        raise _refusal(op, "comparing other values than one operand's two elements")
    descending = (compare.comparison_direction.data == "GT") != (lhs.index > rhs.index)
    kind = compare.compare_type.data if compare.compare_type is not None else None
    element = lhs.type.element_type if isinstance(lhs.type, TensorType) else lhs.type
    if isinstance(element, AnyFloat):
        if kind != "TOTALORDER" or not (lhs_canonical and rhs_canonical):
            raise _refusal(op, f"of a {kind or 'FLOAT'} compare of floats without JAX's canonicalization (-0.0 to "
                               "0.0, NaN to one NaN) under TOTALORDER")
    elif isinstance(element, IntegerType) and element.signedness.data == Signedness.SIGNLESS:
        if kind not in (None, "SIGNED", "UNSIGNED"):
            raise _refusal(op, f"of a {kind} compare of integers")
        if lhs_canonical or rhs_canonical:
            raise _refusal(op, "canonicalizing integers")
    else:
        raise _refusal(op, f"of {element} elements")
    return lhs.index // 2, descending, kind == "UNSIGNED" or compare in unsigned_ops


def comparator_keys(op: SortOp, unsigned_ops: Container[Operation] = ()) -> list[tuple[int, bool, bool]]:
    """(the key operand, descending, unsigned) of each key of `op`'s comparator, most significant first: one
    LT/GT compare, or `or(compare_0, and(equal_0, rest))` as lax.sort writes several keys; a `CompileError`
    for another comparator. `unsigned_ops` holds the compares of unsigned operands (`stablehlo_unsigned`)."""
    ret = op.comparator.block.last_op
    value = ret.operands[0] if ret is not None and len(ret.operands) == 1 else None
    keys = []
    while True:
        owner = value.owner if value is not None else None
        if isinstance(owner, shlo.CompareOp) and owner.comparison_direction.data in ("LT", "GT"):
            return [*keys, _key(op, owner, unsigned_ops)]
        if not (isinstance(owner, Operation) and owner.name == "stablehlo.or"):
            raise _refusal(op, f"returning '{owner.name if isinstance(owner, Operation) else 'a block argument'}'")
        first, tie = (o.owner for o in owner.operands)
        if not isinstance(first, shlo.CompareOp) or first.comparison_direction.data not in ("LT", "GT"):
            first, tie = tie, first
        if not (isinstance(first, shlo.CompareOp) and first.comparison_direction.data in ("LT", "GT")
                and isinstance(tie, Operation) and tie.name == "stablehlo.and"):
            raise _refusal(op, "combining compares otherwise than several keys in order")
        equal, rest = tie.operands
        if not _compare(equal, "EQ"):
            equal, rest = rest, equal
        key = _key(op, first, unsigned_ops)
        equal_op = _compare(equal, "EQ")
        if equal_op is None or _key(op, equal_op, unsigned_ops)[0] != key[0]:
            raise _refusal(op, "whose tie of one key is not an EQ compare of the same operand")
        keys.append(key)
        value = rest


def sort(ins: Insert, op: SortOp, unsigned_ops: Container[Operation] = ()) -> Sequence[SSAValue]:
    """Every operand of `op` gathered by the stable permutation of its keys: sorted by the least significant
    key first, then stably by each more significant one (so ties keep the order of the later keys)."""
    keys = comparator_keys(op, unsigned_ops)
    rank = op.inputs[0].type.get_num_dims()  # type: ignore[union-attr]
    dim = op.dimension.value.data if op.dimension is not None else -1
    if not -rank <= dim < rank:
        raise CompileError.at(op, f"convert-stablehlo: sort dimension {dim} is out of range for rank {rank}")
    dim %= rank
    order = None
    for key, descending, unsigned in reversed(keys):
        x = op.inputs[key] if order is None else ins(take_along(op.inputs[key], order, dim))
        step = ins(ArgsortOp(x, dim, descending, unsigned))
        order = step if order is None else ins(take_along(order, step, dim))
    return [ins(take_along(v, order, dim)) for v in op.inputs]


def top_k(ins: Insert, op: TopKOp) -> Sequence[SSAValue]:
    """The first k of the stable descending `nn.argsort` along the last dimension (its `k`), the indices in
    the result's type."""
    t = op.operand.type
    assert isinstance(t, TensorType)
    shape, k = list(t.get_shape()), op.k.value.data
    if not shape or not 0 <= k <= shape[-1]:
        raise CompileError.at(op, f"convert-stablehlo: top_k of {k} elements of {t}")
    order = ins(ArgsortOp(op.operand, len(shape) - 1, descending=True, k=k))
    index_type = op.indices.type.element_type  # type: ignore[union-attr]
    indices = order if index_type == order.type.element_type else ins(nne.ConvertOp(order, index_type))
    return [ins(take_along(op.operand, order, len(shape) - 1)), indices]
