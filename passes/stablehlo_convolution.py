"""`convolution` (and `dynamic_conv`, whose padding is a constant operand) in `convert-stablehlo`.

The input dilated (`lhs_dilation`: zeros between its elements) and the
kernel reversed (`window_reversal`) first, a float convolution of one batch
group is `nn.convolution`. Integer convolutions and those of several batch
groups are built from the spec's definition: the padded input in
[batch, feature, spatial...] order is sliced once per kernel tap (the
strided positions that tap reads, `rhs_dilation` apart), the slices stacked
into patches [batch, feature, taps, output spatial...], and one dot_general
contracts features and taps with the kernel [output feature, input feature,
taps], the groups as its batch dimension (`feature_group_count` G splits the
input features and the output features into G contiguous groups,
`batch_group_count` B the input batch and the output features); integer
operands are first converted to the result's element type (by value where
unsigned), as dot_general's are. A kernel of more than `MAX_TAPS` taps that
way is refused.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, IntegerType, TensorType
from xdsl.ir import Operation, SSAValue

from dfc.dialects import nn
from dfc.dialects import nn_contract as nnc
from dfc.dialects import nn_conv as nnconv
from dfc.dialects import nn_shape as nns
from dfc.dialects import stablehlo as shlo
from dfc.dialects.diagnostics import CompileError
from dfc.passes.stablehlo_windows import padding

MAX_TAPS = 1024
"""Most kernel taps of a convolution built from slices."""

Layout = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def _shape(v: SSAValue) -> tuple[int, ...]:
    assert isinstance(v.type, TensorType)
    return tuple(v.type.get_shape())


def _element(v: SSAValue):  # noqa: ANN202
    assert isinstance(v.type, TensorType)
    return v.type.element_type


def _inverse(perm: Sequence[int]) -> list[int]:
    inverse = [0] * len(perm)
    for k, p in enumerate(perm):
        inverse[p] = k
    return inverse


class ConvolutionConversions:
    """`on_convolution`, mixed into the converter (with its `ins`, `cast`, `integer_dot` and
    `unsigned_ops`)."""

    ins: Callable[[Operation], SSAValue]
    cast: Callable[..., SSAValue]
    integer_dot: Callable[..., SSAValue]
    unsigned_ops: dict

    def on_convolution(self, op: shlo.ConvolutionOp) -> Sequence[SSAValue]:
        return [self.convolution(op, padding(op, len(op.dimension_numbers.ints("input_spatial_dimensions"))))]

    def convolution(self, op: Operation, pad: Sequence[int]) -> SSAValue:
        """`op` (a convolution, or a dynamic_conv, whose padding is `pad`: the (low, high) pairs of the
        spatial dimensions, flattened)."""
        d = op.dimension_numbers
        xs, ks = d.ints("input_spatial_dimensions"), d.ints("kernel_spatial_dimensions")
        lhs, rhs = op.operands[0], op.operands[1]

        def per_dim(attr, default: int) -> tuple[int, ...]:
            return tuple(attr.get_values()) if attr is not None else (default,) * len(xs)

        if any(v != 1 for v in per_dim(op.lhs_dilation, 1)):  # a transposed convolution: zeros between inputs
            rank = len(_shape(lhs))
            interior = [0] * rank
            for dim, v in zip(xs, per_dim(op.lhs_dilation, 1)):
                interior[dim] = v - 1
            lhs = self.ins(nns.PadOp(lhs, self._zero(lhs), [0] * rank, [0] * rank, interior))
        if any(per_dim(op.window_reversal, 0)):
            rhs = self.ins(nns.ReverseOp(rhs, [dim for dim, r in zip(ks, per_dim(op.window_reversal, 0)) if r]))
        low, high = tuple(pad[0::2]), tuple(pad[1::2])
        if any(p < 0 for p in (*low, *high)):
            raise CompileError.at(op, "convert-stablehlo: convolution with negative padding is not supported")
        layout: Layout = (
            (d.int("input_batch_dimension"), d.int("input_feature_dimension"), *xs),
            (d.int("kernel_output_feature_dimension"), d.int("kernel_input_feature_dimension"), *ks),
            (d.int("output_batch_dimension"), d.int("output_feature_dimension"), *d.ints("output_spatial_dimensions")),
        )
        strides, dilations = per_dim(op.window_strides, 1), per_dim(op.rhs_dilation, 1)
        groups, batch_groups = op.feature_group_count.value.data, op.batch_group_count.value.data
        if isinstance(_element(lhs), AnyFloat) and batch_groups == 1:
            geometry = (strides, low, high, dilations)
            return self.ins(nnconv.ConvolutionOp(lhs, rhs, layout, geometry, groups))
        if batch_groups > 1 and groups > 1:
            raise CompileError.at(op, "convert-stablehlo: convolution with both feature_group_count and "
                                      "batch_group_count above 1 is not valid")
        target = _element(op.results[0])
        unsigned = self.unsigned_ops.get(op, ((False,) * len(op.operands), (False,)))
        lhs, rhs = (self.cast(v, unsigned[0][k], target, unsigned[1][0]) for k, v in enumerate((lhs, rhs)))
        x = self.ins(nn.TransposeOp(lhs, list(layout[0])))  # [N, C, spatial...]
        k = self.ins(nn.TransposeOp(rhs, list(layout[1])))  # [O, I, taps...]
        x = self.ins(nns.PadOp(x, self._zero(x), [0, 0, *low], [0, 0, *high], [0] * (len(xs) + 2)))
        (n, c, *_), (o, i, *window) = _shape(x), _shape(k)
        out = [_shape(op.results[0])[dim] for dim in layout[2][2:]]
        taps = math.prod(window)
        if taps > MAX_TAPS:
            raise CompileError.at(op, f"convert-stablehlo: convolution of a {taps}-tap kernel with this element type "
                                      f"or batch_group_count is not supported (at most {MAX_TAPS})")
        slices = []
        for offset in itertools.product(*map(range, window)):
            start = [0, 0, *(t * r for t, r in zip(offset, dilations))]
            limit = [n, c, *(s + (m - 1) * t + 1 for s, m, t in zip(start[2:], out, strides))]
            tap = self.ins(nns.SliceOp(x, start, limit, [1, 1, *strides]))
            slices.append(self.ins(nn.ReshapeOp(tap, [n, c, 1, *out])))
        patches = slices[0] if len(slices) == 1 else self.ins(nns.ConcatenateOp(slices, 2))
        g = max(groups, batch_groups)
        if batch_groups > 1:  # [B, N/B, C, taps, out...] x [B, O/B, C, taps]
            patches = self.ins(nn.ReshapeOp(patches, [g, n // g, c, taps, *out]))
        else:  # [N, G, C/G, taps, out...] x [G, O/G, C/G, taps]
            patches = self.ins(nn.ReshapeOp(patches, [n, g, c // g, taps, *out]))
        kernel = self.ins(nn.ReshapeOp(k, [g, o // g, i, taps]))
        batching, contracting = ((0 if batch_groups > 1 else 1,), (0,)), ((2, 3), (2, 3))
        if isinstance(target, IntegerType):
            product = self.integer_dot(patches, kernel, batching, contracting)
        else:
            product = self.ins(nnc.DotGeneralOp(patches, kernel, batching, contracting))
        # product: [G, N or N/B, out..., O/G] -> [N', G, O/G, out...] -> [N', O, out...]
        rank = len(out) + 2
        grouped = self.ins(nn.TransposeOp(product, [1, 0, rank, *range(2, rank)]))
        canonical = self.ins(nn.ReshapeOp(grouped, [_shape(grouped)[0], o, *out]))
        return self.ins(nn.TransposeOp(canonical, _inverse(layout[2])))

    def _zero(self, like: SSAValue) -> SSAValue:
        e = _element(like)
        return self.ins(nn.FullOp(FloatAttr(0.0, e) if isinstance(e, AnyFloat) else IntegerAttr(0, e), []))
