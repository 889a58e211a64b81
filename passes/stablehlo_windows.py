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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import AnyFloat, TensorType
from xdsl.ir import Operation, Region, SSAValue

from dfc.dialects import nn
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
    """`on_reduce_window`, mixed into the converter (with its `ins`, `_body_kind`, `combiner`,
    `pairwise_reduce` and `splat`, the value of a splat constant or None)."""

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
