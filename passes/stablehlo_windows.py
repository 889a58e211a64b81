"""`reduce_window` in `convert-stablehlo`.

A float window reduction by add, maximum or minimum whose init value is the
identity and without base dilation is `nn.reduce_window`. Any other
(integers, an init value that is not the identity, `base_dilations`, a
multiply/and/or/xor body) is built from the spec's definition: the input is
padded with the init value (edges and, for a base dilation of d, d - 1
elements between neighbours), each window tap (one offset in the window,
`window_dilations` apart) is a strided slice of it of the output's shape,
the taps are stacked on a new last dimension and folded pairwise with the
body, and the init value is combined in once (the body is associative and
commutative, so this is the reduction of the window and the init value).
A window of more than `MAX_TAPS` elements that way is refused.

`select_and_scatter` (JAX's gradient of a max pool) takes the same taps of
the operand padded as asked: each window's selection starts at its first
element inside the operand and moves to a later element inside wherever
`select(selected, element)` (one GE/GT/LE/LT compare) is false, as the spec
iterates; padding is never selected. The source element of each window is
then placed at its selected tap (a pad with stride - 1 zeros between
elements puts a tap's elements back in the operand's grid), the taps
summed, the padding cut off and the init value added (an add scatter body).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, TensorType, i1, i64
from xdsl.ir import Operation, Region, SSAValue

from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_shape as nns
from dfc.dialects import nn_window as nnw
from dfc.dialects import stablehlo as shlo
from dfc.dialects.diagnostics import CompileError
from dfc.dialects.xdsl_fixes import dense_values
from dfc.passes.stablehlo_integers import ASSOCIATIVE

MAX_TAPS = 1024
"""Most window elements a reduce_window folds slice by slice."""
REDUCE_KIND = {"stablehlo.add": "sum", "stablehlo.maximum": "max", "stablehlo.minimum": "min"}
"""Reduce bodies nn.reduce/nn.reduce_window compute directly."""
IDENTITY = {"sum": 0.0, "max": -math.inf, "min": math.inf}
"""Their identities (the init value JAX writes)."""


def _shape(v: SSAValue) -> tuple[int, ...]:
    assert isinstance(v.type, TensorType)
    return tuple(v.type.get_shape())


class WindowConversions:
    """`on_reduce_window` and `on_select_and_scatter`, mixed into the converter (with its `ins`,
    `_body_kind`, `combiner`, `pairwise_reduce` and `splat`, the value of a splat constant or None)."""

    ins: Callable[[Operation], SSAValue]
    unsigned_ops: dict
    _body_kind: Callable[[Operation, Region], str]
    combiner: Callable[[str, bool], Callable[[SSAValue, SSAValue], SSAValue]]
    pairwise_reduce: Callable[..., SSAValue]
    splat: Callable[[SSAValue], float | int | None]

    def on_reduce_window(self, op: shlo.ReduceWindowOp) -> Sequence[SSAValue]:
        if len(op.inputs_and_inits) != 2:
            raise CompileError.at(op, "convert-stablehlo: reduce_window of several inputs is not supported")
        x, init = op.inputs_and_inits
        body = self._body_kind(op, op.body)
        rank = len(_shape(x))

        def per_dim(attr, default: int) -> tuple[int, ...]:
            return tuple(attr.get_values()) if attr is not None else (default,) * rank

        window, strides = tuple(op.window_dimensions.get_values()), per_dim(op.window_strides, 1)
        dilations, base = per_dim(op.window_dilations, 1), per_dim(op.base_dilations, 1)
        pad = padding(op, rank)
        low, high = pad[0::2], pad[1::2]
        kind = REDUCE_KIND.get(body)
        if (kind is not None and isinstance(_element(x), AnyFloat) and self.splat(init) == IDENTITY[kind]
                and all(b == 1 for b in base)):
            return [self.ins(nnw.ReduceWindowOp(x, kind, window, strides, dilations, low, high))]
        if body not in ASSOCIATIVE:
            raise CompileError.at(op, f"convert-stablehlo: reduce_window with a '{body}' body is not supported")
        taps = math.prod(window)
        if taps > MAX_TAPS:
            raise CompileError.at(op, f"convert-stablehlo: reduce_window of {taps} window elements with this body, "
                                      f"element type or init value is not supported (at most {MAX_TAPS})")
        padded = self.ins(nns.PadOp(x, init, low, high, [b - 1 for b in base]))
        out = list(_shape(op.results[0]))
        slices = []
        for offset in _offsets(window):
            start = [o * d for o, d in zip(offset, dilations)]
            limit = [s + (n - 1) * t + 1 for s, n, t in zip(start, out, strides)]
            tap = self.ins(nns.SliceOp(padded, start, limit, strides))
            slices.append(self.ins(nn.ReshapeOp(tap, [*out, 1])))
        stacked = slices[0] if len(slices) == 1 else self.ins(nns.ConcatenateOp(slices, rank))
        unsigned = any(self.unsigned_ops.get(op, ((), ()))[0])
        return [self.pairwise_reduce(stacked, init, [rank], self.combiner(body, unsigned))]


    def on_select_and_scatter(self, op: shlo.SelectAndScatterOp) -> Sequence[SSAValue]:
        x, source, init = op.operand, op.source, op.init_value
        rank = len(_shape(x))
        window = tuple(op.window_dimensions.get_values()) if op.window_dimensions is not None else (1,) * rank
        strides = tuple(op.window_strides.get_values()) if op.window_strides is not None else (1,) * rank
        pad = padding(op, rank)
        low, high = pad[0::2], pad[1::2]
        direction = _select_direction(op)
        if self._body_kind(op, op.scatter) != "stablehlo.add":
            raise CompileError.at(op, "convert-stablehlo: select_and_scatter is supported with an add scatter body")
        if any(p < 0 or p >= w for p, w in zip((*low, *high), window * 2)):
            raise CompileError.at(op, "convert-stablehlo: select_and_scatter with negative padding or a window of "
                                      "padding only is not supported")
        taps = list(_offsets(window))
        if len(taps) > MAX_TAPS:
            raise CompileError.at(op, f"convert-stablehlo: select_and_scatter of {len(taps)} window elements is not "
                                      f"supported (at most {MAX_TAPS})")
        e = _element(x)
        zero = self.ins(nn.FullOp(FloatAttr(0.0, e) if isinstance(e, AnyFloat) else IntegerAttr(0, e), []))
        padded = self.ins(nns.PadOp(x, zero, low, high, [0] * rank))
        inside = self.ins(nns.PadOp(self.ins(nn.FullOp(IntegerAttr(1, i1), _shape(x))),
                                    self.ins(nn.FullOp(IntegerAttr(0, i1), [])), low, high, [0] * rank))
        out = list(_shape(source))
        chosen = value = found = None
        for k, offset in enumerate(taps):  # the spec's order: keep the selection while select(selected, x)
            limit = [o + (n - 1) * t + 1 for o, n, t in zip(offset, out, strides)]
            here = self.ins(nns.SliceOp(padded, list(offset), limit, strides))
            valid = self.ins(nns.SliceOp(inside, list(offset), limit, strides))
            index = self.ins(nn.FullOp(IntegerAttr(k, i64), out))
            if chosen is None:
                chosen, value, found = index, here, valid
                continue
            kept = self.ins(nne.CompareOp(value, here, direction))
            take = self.ins(nne.AndOp(valid, self.ins(nne.OrOp(self.ins(nne.NotOp(found)), self.ins(nne.NotOp(kept))))))
            chosen = self.ins(nne.SelectOp(take, index, chosen))
            value = self.ins(nne.SelectOp(take, here, value))
            found = self.ins(nne.OrOp(found, valid))
        total = None
        padded_shape = _shape(padded)
        for k, offset in enumerate(taps):
            mine = self.ins(nne.CompareOp(chosen, self.ins(nn.FullOp(IntegerAttr(k, i64), out)), "EQ"))
            part = self.ins(nne.SelectOp(mine, source, self.ins(nns.BroadcastInDimOp(zero, out, []))))
            ends = [p - (o + (n - 1) * t + 1) for p, o, n, t in zip(padded_shape, offset, out, strides)]
            placed = self.ins(nns.PadOp(part, zero, list(offset), ends, [t - 1 for t in strides]))
            total = placed if total is None else self.ins(nn.AddOp(total, placed))
        assert total is not None
        inner = self.ins(nns.SliceOp(total, list(low), [p - h for p, h in zip(padded_shape, high)], [1] * rank))
        return [self.ins(nn.AddOp(inner, self.ins(nns.BroadcastInDimOp(init, _shape(x), []))))]


def _select_direction(op: Operation) -> str:
    """The direction of the select body's one compare of its two arguments (GE: the first of equal
    elements stays selected)."""
    block = op.select.block
    ops = list(block.ops)
    if (len(ops) == 2 and isinstance(ops[0], shlo.CompareOp) and list(ops[0].operands) == list(block.args)
            and list(ops[1].operands) == [ops[0].results[0]] and ops[0].comparison_direction.data != "NE"
            and ops[0].comparison_direction.data != "EQ"):
        return ops[0].comparison_direction.data
    raise CompileError.at(op, "convert-stablehlo: select_and_scatter is supported with a select body of one "
                              "GE, GT, LE or LT compare of its arguments")


def padding(op: Operation, dims: int) -> tuple[int, ...]:
    """The (low, high) pairs, flattened, of `op`'s `padding` (all 0 without one), which must be a
    `tensor<{dims}x2xi64>`, as the spec says."""
    if op.padding is None:
        return (0,) * (2 * dims)
    if tuple(op.padding.get_shape()) != (dims, 2):
        raise CompileError.at(op, f"convert-stablehlo: the padding of '{op.name}' must be tensor<{dims}x2xi64>, "
                                  f"not {op.padding.type}")
    return dense_values(op.padding)


def _element(v: SSAValue) -> object:
    assert isinstance(v.type, TensorType)
    return v.type.element_type


def _offsets(window: Sequence[int]) -> list[tuple[int, ...]]:
    """Every multi-index of a window of sizes `window`, row-major."""
    offsets: list[tuple[int, ...]] = [()]
    for n in window:
        offsets = [(*o, k) for o in offsets for k in range(n)]
    return offsets
