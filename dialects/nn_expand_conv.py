"""Pure expansion of `nn.convolution`: a matrix product (im2col), or a direct map.

With G feature groups, Cg input features per group, Og output features per
group, M = batch * output positions and K = Cg * kernel taps:

1. the input, copied into zeros where padded, is unfolded into patches
   P[g, m, k] (one row per output position, one column per (feature, tap)),
   or P[g, k, m] when the output rows are long (`_im2col`);
2. the kernel is laid out as W[g, o, k];
3. one contraction map accumulates P * W into R[g, m, o] (R[g, o, m]) with
   wcr(add): the shape `contraction-to-blas` turns into one (batched) GEMM,
   and that autodiff turns into two more;
4. R is laid out as the result (a view-like copy; none of the arithmetic).

Without feature groups (G = 1) the group dimension is left out, so steps 1-3
are plain matrices.

With few output features per group (`is_direct`: a first layer on one or
three channels, a depthwise convolution) the product would be a GEMM of a
few columns whose patches cost as much memory traffic as its arithmetic:
such a convolution expands instead to one direct map over (batch, feature
block, input feature, taps, output positions, features in the block, last
tap) that accumulates into the result with wcr(add). The innermost two loops
unroll, so the loop along the output positions vectorises and loads each
input element once for the block's features; `passes/autodiff/rules_conv.py`
is its backward rule.

`nn.col2im` expands to one map adding the columns into the padded image with
wcr(add) and an `nn.slice` of the image (`_col2im`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue

from dfc.dialects.df_builders import empty, index_const, map_op, read, splat, tasklet, write
from dfc.dialects.nn_conv import Col2ImOp, ConvolutionOp
from dfc.dialects.nn_expand_shape import affine
from dfc.dialects.nn_expand_window import padded
from dfc.dialects.nn_shape import SliceOp


def _t(v: SSAValue) -> TensorType:
    assert isinstance(v.type, TensorType)
    return v.type


def _mixed(b: Builder, ivs: Sequence[SSAValue], shape: Sequence[int]) -> SSAValue:
    """The row-major position of `ivs` in `shape`, as index arithmetic."""
    position: SSAValue | None = None
    for iv, size in zip(ivs, shape):
        position = iv if position is None else affine(b, position, size, iv)
    return position if position is not None else index_const(b, 0)


DIRECT_MAX_OUTPUTS = 16
"""Most output features per group that a convolution computes directly."""
DIRECT_MIN_ROW = 16
"""Fewest output positions along the innermost dimension (the loop that
vectorises) for a direct convolution of more than DIRECT_SHALLOW terms per output."""
DIRECT_SHALLOW = 32
DIRECT_MAX_STRIDED_OUTPUTS = 8
"""Most output features per group of a direct convolution strided along its innermost dimension."""

EXPANSION = "auto"
"""'auto' (`is_direct` decides), or 'direct' / 'im2col' for every convolution (tests, experiments)."""


def is_direct(op: ConvolutionOp) -> bool:
    """Whether `op` expands to the direct map rather than im2col: few output
    features per group, the input's and the output's innermost dimension
    spatial (NCHW-like: the positions' loop reads and writes contiguously),
    and then, with stride 1 along it, rows of at least DIRECT_MIN_ROW positions
    or at most DIRECT_SHALLOW terms per output (input features x taps); with a
    larger stride, few terms and at most DIRECT_MAX_STRIDED_OUTPUTS features.
    The cases left out are those where the direct map's vectorised loop is
    short or strided (many terms on short rows, a larger stride with many
    terms or features, NHWC layouts) and im2col's GEMM is faster
    (docs/performance-notes.md)."""
    if EXPANSION != "auto":
        return EXPANSION == "direct"
    (_, _, *xs), (ko, ki, *ks), (_, _, *os_) = op.layout()
    k_shape, out_shape = _t(op.kernel).get_shape(), _t(op.result).get_shape()
    rank, stride = len(out_shape), op.geometry()[0][-1]
    per_group = k_shape[ko] // op.feature_group_count.value.data
    if per_group > DIRECT_MAX_OUTPUTS or xs[-1] != rank - 1 or os_[-1] != rank - 1:
        return False
    shallow = k_shape[ki] * math.prod(k_shape[d] for d in ks) <= DIRECT_SHALLOW
    if stride == 1:
        return shallow or out_shape[os_[-1]] >= DIRECT_MIN_ROW
    return shallow and per_group <= DIRECT_MAX_STRIDED_OUTPUTS


def _convolution(b: Builder, op: Operation) -> SSAValue:
    assert isinstance(op, ConvolutionOp)
    return (_direct if is_direct(op) else _im2col)(b, op)


def padded_input(b: Builder, op: ConvolutionOp) -> SSAValue:
    """The input inside zeros as `op` pads it (itself without padding)."""
    (_, _, *xs), _, _ = op.layout()
    _, low, high, _ = op.geometry()
    rank = len(_t(op.input).get_shape())
    pad_low, pad_high = [0] * rank, [0] * rank
    for j, d in enumerate(xs):
        pad_low[d], pad_high[d] = low[j], high[j]
    return padded(b, op.input, pad_low, pad_high, 0.0)


def direct_indices(
    b: Builder, op: ConvolutionOp, n: SSAValue, f: SSAValue, c: SSAValue, ts: Sequence[SSAValue], ys: Sequence[SSAValue]
) -> tuple[list[SSAValue], list[SSAValue], list[SSAValue]]:
    """Where one term of the convolution reads the padded input and the kernel
    and which output element it adds to: batch `n`, output feature `f`, input
    feature `c` of f's group, taps `ts`, output positions `ys`."""
    (_, xf, *xs), (ko, ki, *ks), (_, of, *os_) = op.layout()
    strides, _, _, dilations = op.geometry()
    groups, rank, k_shape = op.feature_group_count.value.data, len(xs) + 2, _t(op.kernel).get_shape()
    features, per_group = k_shape[ki], k_shape[ko] // groups
    x_idx: list[SSAValue] = [n] * rank
    x_idx[xf] = c
    if groups > 1:
        g = f if per_group == 1 else b.insert(arith.FloorDivSIOp(f, index_const(b, per_group))).result
        x_idx[xf] = affine(b, g, features, c)
    k_idx: list[SSAValue] = [f] * rank
    k_idx[ki] = c
    o_idx: list[SSAValue] = [n] * rank
    o_idx[of] = f
    for j in range(len(xs)):
        x_idx[xs[j]] = affine(b, ts[j], dilations[j], affine(b, ys[j], strides[j], 0))
        k_idx[ks[j]], o_idx[os_[j]] = ts[j], ys[j]
    return x_idx, k_idx, o_idx


def add_product(b: Builder, u: SSAValue, v: SSAValue, out: SSAValue, at: Sequence[SSAValue]) -> None:
    """`out[at] += u * v` inside a map (a tasklet, a wcr(add) write)."""
    write(b, tasklet(b, [u, v], u.type, lambda s, a: s.mul(a[0], a[1])), out, at, "add")


def _direct(b: Builder, op: ConvolutionOp) -> SSAValue:
    """The convolution as one map accumulating input * kernel into the result:
    the last tap innermost, so that each output element sums a row of taps in
    a register, inside a block of output features (`_feature_block`), so that
    the loop around both, along the output positions, vectorises and reads
    each input element once for the block."""
    source, out_type = padded_input(b, op), _t(op.result)
    _, (_, ki, *ks), (ob, of, *os_) = op.layout()
    k_shape, out_shape = _t(op.kernel).get_shape(), out_type.get_shape()
    taps, positions, spatial = [k_shape[d] for d in ks], [out_shape[d] for d in os_], len(ks)

    block = _feature_block(op)

    def accumulate(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        ts, ys = [*ivs[3 : 2 + spatial], ivs[-1]], ivs[2 + spatial : -2]
        f = affine(mb, ivs[1], block, ivs[-2])
        x_idx, k_idx, o_idx = direct_indices(mb, op, ivs[0], f, ivs[2], ts, ys)
        add_product(mb, read(mb, source, x_idx), read(mb, op.kernel, k_idx), outs[0], o_idx)

    bounds = [out_shape[ob], out_shape[of] // block, k_shape[ki], *taps[:-1], *positions, block, taps[-1]]
    return map_op(b, bounds, [splat(b, out_type, 0.0)], accumulate).res[0]


FEATURE_BLOCK = 4
"""Most output features a direct convolution's innermost loops compute together."""
FEATURE_BLOCK_TAPS = 15
"""Most terms (features x the kernel row's taps) in those loops: the LLVM emitter
unrolls them, which is what lets the loop around them vectorise, only up to
its op limit (`llvm_emitter`'s small-loop unrolling). Within the bound the
block is unrolled and beats one feature at a time; a larger block (4 x 5) is
not unrolled and runs much slower (docs/performance-notes.md)."""


def _feature_block(op: ConvolutionOp) -> int:
    """Output features per step of a direct convolution: the largest divisor of
    the features per group up to FEATURE_BLOCK whose terms stay within
    FEATURE_BLOCK_TAPS (their taps read the same input elements, which LLVM then
    loads once for all of them); 1 for a kernel row longer than that."""
    _, (ko, _, *ks), _ = op.layout()
    k_shape = _t(op.kernel).get_shape()
    per_group = k_shape[ko] // op.feature_group_count.value.data
    row = k_shape[ks[-1]]
    return max((d for d in range(1, FEATURE_BLOCK + 1) if per_group % d == 0 and d * row <= FEATURE_BLOCK_TAPS),
               default=1)


def _im2col(b: Builder, op: ConvolutionOp) -> SSAValue:
    """The convolution as a product of patches and the kernel laid out as a
    matrix. With output rows of at least DIRECT_MIN_ROW positions the patches
    have one row per (feature, tap) and the product is kernel x patches:
    unfolding, its gradient's folding and the result's layout then copy along
    the output rows, in long contiguous runs; on shorter rows, where those
    runs are too short to pay, one row per output position
    (docs/performance-notes.md)."""
    (xb, xf, *xs), (ko, ki, *ks), (ob, of, *os_) = op.layout()
    strides, _, _, dilations = op.geometry()
    groups = op.feature_group_count.value.data
    x_shape, k_shape, out_type = _t(op.input).get_shape(), _t(op.kernel).get_shape(), _t(op.result)
    element = out_type.element_type
    rank, spatial = len(x_shape), len(xs)
    source = padded_input(b, op)
    out_shape = out_type.get_shape()
    batch, positions = out_shape[ob], [out_shape[d] for d in os_]
    taps, features = [k_shape[d] for d in ks], k_shape[ki]
    per_group = k_shape[ko] // groups
    rows, depth = batch * math.prod(positions), features * math.prod(taps)
    lead = [groups] if groups > 1 else []
    by_tap = positions[-1] >= DIRECT_MIN_ROW

    def grouped(g: SSAValue | None, *rest: SSAValue) -> list[SSAValue]:
        return [g, *rest] if g is not None else list(rest)

    def rows_last(g: SSAValue | None, m: SSAValue, other: SSAValue) -> list[SSAValue]:
        """Where a patch (m, k) or a product element (m, o) lies."""
        return grouped(g, other, m) if by_tap else grouped(g, m, other)

    def unfold(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        g, ivs = (ivs[0], ivs[1:]) if lead else (None, ivs)
        if by_tap:
            c, ts, n, ys = ivs[0], ivs[1 : 1 + spatial], ivs[1 + spatial], ivs[2 + spatial :]
        else:
            n, ys, c, ts = ivs[0], ivs[1 : 1 + spatial], ivs[1 + spatial], ivs[2 + spatial :]
        x_idx: list[SSAValue] = [n] * rank
        x_idx[xf] = c if g is None else affine(mb, g, features, c)
        for j in range(spatial):
            x_idx[xs[j]] = affine(mb, ts[j], dilations[j], affine(mb, ys[j], strides[j], 0))
        m, k = _mixed(mb, [n, *ys], [batch, *positions]), _mixed(mb, [c, *ts], [features, *taps])
        write(mb, read(mb, source, x_idx), outs[0], rows_last(g, m, k))

    space = [features, *taps, batch, *positions] if by_tap else [batch, *positions, features, *taps]
    patches = map_op(b, [*lead, *space],
                     [empty(b, TensorType(element, [*lead, *((depth, rows) if by_tap else (rows, depth))]))], unfold).res[0]

    def lay_out_kernel(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        g, ivs = (ivs[0], ivs[1:]) if lead else (None, ivs)
        o, c, ts = ivs[0], ivs[1], ivs[2:]
        k_idx: list[SSAValue] = [o] * rank
        k_idx[ko] = o if g is None else affine(mb, g, per_group, o)
        k_idx[ki] = c
        for j in range(spatial):
            k_idx[ks[j]] = ts[j]
        write(mb, read(mb, op.kernel, k_idx), outs[0], grouped(g, o, _mixed(mb, [c, *ts], [features, *taps])))

    weights = map_op(b, [*lead, per_group, features, *taps],
                     [empty(b, TensorType(element, [*lead, per_group, depth]))], lay_out_kernel).res[0]

    def contract(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        g, (m, o, k) = (ivs[0], ivs[1:]) if lead else (None, ivs)
        add_product(mb, read(mb, patches, rows_last(g, m, k)), read(mb, weights, grouped(g, o, k)), outs[0],
                    rows_last(g, m, o))

    product_shape = (per_group, rows) if by_tap else (rows, per_group)
    product = map_op(b, [*lead, rows, per_group, depth],
                     [splat(b, TensorType(element, [*lead, *product_shape]), 0.0)], contract).res[0]

    def fold(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        n, f, ys = ivs[ob], ivs[of], [ivs[d] for d in os_]
        m, g, o = _mixed(mb, [n, *ys], [batch, *positions]), None, f
        if lead:
            size = index_const(mb, per_group)
            g = mb.insert(arith.FloorDivSIOp(f, size)).result
            o = mb.insert(arith.RemSIOp(f, size)).result
        write(mb, read(mb, product, rows_last(g, m, o)), outs[0], ivs)

    return map_op(b, list(out_shape), [empty(b, out_type)], fold).res[0]


def _col2im(b: Builder, op: Col2ImOp) -> SSAValue:
    """One map over (N, C, *block, *positions) that adds each column value with wcr(add) into the padded image,
    at `position * stride + tap * dilation` (the taps of an element in row-major order), and the image cut out
    of the padding by an `nn.slice`. Autodiff differentiates the map (a read of the padded image's gradient per
    column value) and the slice."""
    image, block, strides, low, high, dilations = op.geometry()
    positions, rank = op.positions(), len(image)
    n, c = _t(op.result).get_shape()[:2]
    taps = math.prod(block)
    whole = TensorType(_t(op.result).element_type, [n, c, *(d + lo + hi for d, lo, hi in zip(image, low, high))])

    def scatter(mb: Builder, ivs: Sequence[BlockArgument], outs: Sequence[BlockArgument]) -> None:
        batch, feature, ts, ys = ivs[0], ivs[1], ivs[2 : 2 + rank], ivs[2 + rank :]
        column = [batch, affine(mb, feature, taps, _mixed(mb, ts, block)), _mixed(mb, ys, positions)]
        at = [affine(mb, t, r, affine(mb, y, s, 0)) for t, y, r, s in zip(ts, ys, dilations, strides)]
        write(mb, read(mb, op.input, column), outs[0], [batch, feature, *at], "add")

    summed = map_op(b, [n, c, *block, *positions], [splat(b, whole, 0)], scatter).res[0]
    return b.insert(SliceOp(summed, [0, 0, *low], [n, c, *(lo + d for lo, d in zip(low, image))],
                            [1] * (2 + rank))).result


CONV_EXPANSIONS: dict[type[Operation], Callable[[Builder, Operation], SSAValue]] = {ConvolutionOp: _convolution,
                                                                                    Col2ImOp: _col2im}
