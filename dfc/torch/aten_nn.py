"""aten's network ops: contractions and convolution, pooling, reductions
(index reductions, products, variance), softmax, the normalisations (layer,
batch, group), losses, resampling and folding (`col2im`) (dropout is in `aten_random.py`, sorting and `topk` are in `aten_sort.py`)."""

from __future__ import annotations

import functools
import math

import numpy as np
import torch

from dfc.torch.aten_common import UnsupportedOp, handler_table, int_list
from dfc.torch.aten_sort import take_along
from dfc.torch.ir_text import Raw, Value

NN_HANDLERS, handles = handler_table()


# --- contractions and convolution ------------------------------------------------

@handles("mm.default")
def _mm(b, node, x, y):
    if not x.is_float:
        return _integer_product(b, x, y)
    return b.op("nn.matmul", [x, y], b.out(node)[0], x.dtype)


def _integer_product(b, x, y):
    """The (batched) matrix product of integers, which the library's contractions (of floats) do not take:
    the products of x[..., m, k, 1] and y[..., 1, k, n] summed over k (wrapping as torch's)."""
    *batch, m, k = x.shape
    n = y.shape[-1]
    terms = b.binary("nn.mul", b.reshape(x, [*batch, m, k, 1]), b.reshape(y, [*batch, 1, k, n]), x.dtype)
    return b.reduce("sum", terms, [len(batch) + 1])


@handles("addmm.default")
def _addmm(b, node, bias, x, y, beta, alpha):
    product = _mm(b, node, x, y)
    if alpha != 1:
        product = b.binary("nn.mul", product, alpha)
    if beta == 0:  # torch ignores the bias then (NaN in it included)
        return b.broadcast(product, b.out(node)[0])
    if beta != 1:
        bias = b.binary("nn.mul", bias, beta)
    return b.binary("nn.add", product, bias)


@handles("bmm.default")
def _bmm(b, node, x, y):
    if not x.is_float:
        return _integer_product(b, x, y)
    return b.op(
        "nn.dot_general", [x, y], b.out(node)[0], x.dtype, lhs_batching_dimensions=[0], rhs_batching_dimensions=[0],
        lhs_contracting_dimensions=[2], rhs_contracting_dimensions=[1],
    )


@handles("addmv.default")
def _addmv(b, node, bias, m, v, beta, alpha):
    """beta bias + alpha (m @ v), the bias ignored (NaN too) where beta is 0, as torch's."""
    column = b.reshape(v, [v.shape[0], 1])
    product = b.op("nn.matmul", [m, column], [m.shape[0], 1], m.dtype) if m.is_float else \
        _integer_product(b, m, column)
    product = b.reshape(product, [m.shape[0]])
    return _scaled_sum(b, node, bias, product, beta, alpha)


@handles("addbmm.default")
def _addbmm(b, node, bias, x, y, beta, alpha):
    """beta bias + alpha (the sum over the batch of x[i] @ y[i])."""
    if x.is_float:
        product = b.op("nn.dot_general", [x, y], [x.shape[1], y.shape[2]], x.dtype, lhs_batching_dimensions=[],
                       rhs_batching_dimensions=[], lhs_contracting_dimensions=[0, 2],
                       rhs_contracting_dimensions=[0, 1])
    else:
        product = b.reduce("sum", _integer_product(b, x, y), [0])
    return _scaled_sum(b, node, bias, product, beta, alpha)


def _scaled_sum(b, node, bias, product, beta, alpha):
    shape, dtype = b.out(node)
    if alpha != 1:
        product = b.binary("nn.mul", product, alpha, dtype)
    if beta == 0:
        return b.broadcast(product, shape)
    if beta != 1:
        bias = b.binary("nn.mul", bias, beta, dtype)
    return b.binary("nn.add", product, bias, dtype)


@handles("linear.default")
def _linear(b, node, x, w, bias):
    shape = b.out(node)[0]
    flat = b.reshape(x, [int(np.prod(x.shape[:-1])), x.shape[-1]])
    if not x.is_float:
        y = _integer_product(b, flat, b.transpose(w, [1, 0]))
        return b.reshape(y if bias is None else b.binary("nn.add", y, bias, x.dtype), shape)
    if bias is None:
        wt = b.transpose(w, [1, 0])
        y = b.op("nn.matmul", [flat, wt], [flat.shape[0], w.shape[0]], x.dtype)
    else:
        y = b.op("nn.linear", [flat, w, bias], [flat.shape[0], w.shape[0]], x.dtype)
    return b.reshape(y, shape)


@handles("convolution.default")
def _convolution(b, node, x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    n = len(w.shape) - 2
    if not x.is_float:
        raise UnsupportedOp(f"convolution of {x.dtype} (the library convolves floats)")
    if isinstance(padding, str):
        raise UnsupportedOp(f"convolution with padding={padding!r}")
    pad, strides, dilations = int_list(padding, n), int_list(stride, n), int_list(dilation, n)
    low, high = pad, pad
    if transposed:
        x, w, low, high = _transposed(b, x, w, strides, pad, dilations, int_list(output_padding, n), groups)
        strides = [1] * n
    dims = list(range(n + 2))
    shape, dtype = b.out(node)
    y = b.op(
        "nn.convolution", [x, w], shape, dtype, input_dimensions=dims, kernel_dimensions=dims,
        output_dimensions=dims, window_strides=strides, padding_low=low, padding_high=high,
        rhs_dilation=dilations, feature_group_count=groups,
    )
    return y if bias is None else b.binary("nn.add", y, b.along(bias, len(shape), 1))


def _transposed(b, x: Value, w: Value, strides, pad, dilations, output_padding, groups):
    """A transposed convolution as a convolution with stride 1 (the gradient of the strided one): x with
    stride - 1 zeros between its elements, padded by dilation (k - 1) - padding on each side (output_padding
    more at the end, a negative amount crops), and the kernel flipped spatially with its two channel axes
    swapped within each group ((C_in, C_out / g, k...) to (C_out, C_in / g, k...)). Returns x, the kernel and
    the padding."""
    n, (c_in, c_out_g, *ks) = len(strides), w.shape
    x = b.pad(x, [0] * (n + 2), [0] * (n + 2), 0, [0, 0, *(s - 1 for s in strides)])
    low = [d * (k - 1) - p for d, k, p in zip(dilations, ks, pad)]
    high = [lo + extra for lo, extra in zip(low, output_padding)]
    grouped = b.reshape(w, [groups, c_in // groups, c_out_g, *ks])
    swapped = b.transpose(grouped, [0, 2, 1, *range(3, n + 3)])
    kernel = b.reshape(swapped, [groups * c_out_g, c_in // groups, *ks])
    kernel = b.op("nn.reverse", [kernel], kernel.shape, kernel.dtype, dimensions=list(range(2, n + 2)))
    return x, kernel, low, high


# --- pooling ---------------------------------------------------------------------

def _window(b, node, kind, x, kernel, stride, padding, dilation=1, n=2):
    """An n-d pooling window over the last n dimensions."""
    lead = len(x.shape) - n
    kernel = int_list(kernel, n)
    stride = int_list(stride, n) if stride else kernel
    pad = int_list(padding, n)
    dilation = int_list(dilation, n)
    shape, dtype = b.out(node)
    windows = [(d + 2 * p - (k - 1) * r - 1) // s + 1 for d, k, s, p, r in zip(x.shape[lead:], kernel, stride, pad,
                                                                                 dilation)]
    high = list(pad)
    if windows != list(shape[lead:]):
        if kind == "mean":  # the divisor of a window reaching past the padding is torch's own (`_avg_pool`)
            raise UnsupportedOp(f"{kind} pooling to {list(shape[lead:])} where the windows give {windows} "
                                "(ceil_mode)")
        # ceil_mode: the last windows reach past the high padding (into more -inf for max, zeros for sum)
        high = [(o - 1) * s + (k - 1) * r + 1 - d - p for o, d, k, s, p, r in zip(shape[lead:], x.shape[lead:],
                                                                                   kernel, stride, pad, dilation)]
    return b.op(
        "nn.reduce_window", [x], shape, dtype, kind=kind, window_dimensions=[1] * lead + kernel,
        window_strides=[1] * lead + stride, window_dilations=[1] * lead + dilation,
        padding_low=[0] * lead + pad, padding_high=[0] * lead + high,
    )


@handles("max_pool2d_with_indices.default")
def _max_pool(b, node, x, kernel, stride, padding, dilation, ceil_mode):
    return _window(b, node, "max", x, kernel, stride, padding, dilation), None


@handles("max_pool3d_with_indices.default")
def _max_pool3d(b, node, x, kernel, stride, padding, dilation, ceil_mode):
    return _window(b, node, "max", x, kernel, stride, padding, dilation, n=3), None


@handles("avg_pool2d.default")
def _avg_pool(b, node, x, kernel, stride, padding, ceil_mode, count_include_pad, divisor, n=2):
    """Window sums divided by torch's divisor of each window: `divisor_override`, else the window's extent
    clipped to the padded input (count_include_pad) or to the input (not), per axis and multiplied; with
    ceil_mode the last windows may reach past the padding."""
    kernel = int_list(kernel, n)
    stride = int_list(stride, n) if stride else kernel
    pad = int_list(padding, n)
    shape = b.out(node)[0]
    sums = _window(b, node, "sum", x, kernel, stride, pad, n=n)
    if divisor is not None:
        return b.binary("nn.div", sums, float(divisor))
    counts = []
    for out, size, k, s, p in zip(shape[-n:], x.shape[-n:], kernel, stride, pad):
        start = np.arange(out) * s - p
        end = np.minimum(start + k, size + p)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, size)
        counts.append(end - start)
    divisors = functools.reduce(np.multiply.outer, counts).astype(np.float64)
    if (divisors == math.prod(kernel)).all():
        return b.binary("nn.div", sums, float(math.prod(kernel)))
    return b.binary("nn.div", sums, b.constant(divisors, x.dtype))


@handles("avg_pool3d.default")
def _avg_pool3d(b, node, x, kernel, stride, padding, ceil_mode, count_include_pad, divisor):
    return _avg_pool(b, node, x, kernel, stride, padding, ceil_mode, count_include_pad, divisor, n=3)


@handles("_adaptive_avg_pool2d.default")
def _adaptive_avg_pool(b, node, x, size, n=2):
    """torch's adaptive windows (output i averages input floor(i H / oh) to ceil((i + 1) H / oh)): one
    window size when the sizes divide, else each axis a product with a matrix of the windows' weights."""
    sizes, outs = list(x.shape[-n:]), int_list(size, n)
    if all(o == 1 for o in outs):
        return b.reduce("mean", x, list(range(-n, 0)), keepdims=True)
    if all(d % o == 0 for d, o in zip(sizes, outs)):
        kernel = [d // o for d, o in zip(sizes, outs)]
        return _window(b, node, "mean", x, kernel, kernel, 0, n=n)
    rank = len(x.shape)
    for axis in range(rank - n, rank):
        x = _axis_product(b, x, axis, _adaptive_weights(x.shape[axis], outs[axis - rank + n]).T)
    return x


def _axis_product(b, x: Value, axis: int, weights: np.ndarray) -> Value:
    """x's `axis` (of size n) replaced by its product with `weights` (n x m): y[..., j, ...] = sum_i x[..., i, ...] w[i, j]."""
    rank, out = len(x.shape), weights.shape[1]
    perm = [d for d in range(rank) if d != axis] + [axis]
    moved = b.transpose(x, perm)
    rows = math.prod(moved.shape[:-1])
    y = b.op("nn.matmul", [b.reshape(moved, [rows, x.shape[axis]]), b.constant(weights, x.dtype)], [rows, out],
             x.dtype)
    return b.transpose(b.reshape(y, [*moved.shape[:-1], out]), list(np.argsort(perm)))


@handles("_adaptive_avg_pool3d.default")
def _adaptive_avg_pool3d(b, node, x, size):
    return _adaptive_avg_pool(b, node, x, size, n=3)


def _adaptive_weights(size: int, out: int) -> np.ndarray:
    """(out, size): row i is 1 / its window's length over torch's adaptive window i, 0 elsewhere."""
    weights = np.zeros((out, size))
    for i in range(out):
        start, end = (i * size) // out, -((-(i + 1) * size) // out)
        weights[i, start:end] = 1.0 / (end - start)
    return weights


# --- reductions and normalisation --------------------------------------------------

@handles("sum.dim_IntList", "mean.dim", "mean.default", "amax.default", "amin.default")
def _reduce(b, node, x, dims=None, keepdim=False, dtype=None):
    kind = {"sum": "sum", "mean": "mean", "amax": "max", "amin": "min"}[node.target.__name__.split(".")[0]]
    return b.reduce(kind, b.convert(x, b.out(node)[1]), dims, keepdim)


def _along_axis(b, node, name: str, x, dim: int) -> Value:
    """`name` (nn.softmax, nn.log_softmax) of x along `dim`, in the result's type; a 0-d x as a 1-element vector."""
    x = b.convert(x, b.out(node)[1])
    flat = b.reshape(x, x.shape or (1,))
    return b.reshape(b.op(name, [flat], flat.shape, x.dtype, axis=dim % len(flat.shape)), x.shape)


@handles("_softmax.default")
def _softmax(b, node, x, dim, half_to_float):
    return _along_axis(b, node, "nn.softmax", x, dim)


@handles("_safe_softmax.default")
def _safe_softmax(b, node, x, dim, dtype):
    """softmax, but 0 along a slice that is all -inf (a fully masked row), gradient included."""
    x = b.convert(x, b.out(node)[1])
    flat = b.reshape(x, x.shape or (1,))
    axis = dim % len(flat.shape)
    masked = b.compare("EQ", b.reduce("max", flat, [axis], keepdims=True), -math.inf)
    zero = b.tensor(0.0, x.dtype)
    finite = b.op("nn.select", [masked, zero, flat], flat.shape, x.dtype)
    y = b.op("nn.softmax", [finite], flat.shape, x.dtype, axis=axis)
    return b.reshape(b.op("nn.select", [masked, zero, y], flat.shape, x.dtype), x.shape)


@handles("_log_softmax.default")
def _log_softmax(b, node, x, dim, half_to_float):
    return _along_axis(b, node, "nn.log_softmax", x, dim)


def _normalize(b, x, axes, eps):
    """(x - mean) * rsqrt(var + eps) over `axes` (biased variance), with the mean,
    rstd and variance kept."""
    mean = b.reduce("mean", x, axes, keepdims=True)
    centered = b.binary("nn.sub", x, mean)
    var = b.reduce("mean", b.binary("nn.mul", centered, centered), axes, keepdims=True)
    rstd = b.unary("nn.rsqrt", b.binary("nn.add", var, eps))
    return b.binary("nn.mul", centered, rstd), mean, rstd, var


@handles("native_layer_norm.default")
def _layer_norm(b, node, x, normalized_shape, weight, bias, eps):
    k = len(normalized_shape)
    axes = list(range(len(x.shape) - k, len(x.shape)))
    y, mean, rstd, _ = _normalize(b, x, axes, eps)
    if weight is not None:
        y = b.binary("nn.mul", y, weight)
    if bias is not None:
        y = b.binary("nn.add", y, bias)
    return y, *_saved(b, mean, rstd)


def _saved(b, *statistics: Value) -> tuple[Value, ...]:
    """The mean and rstd a normalisation returns, which torch's autograd treats as not differentiable
    (a loss that uses them gets no gradient through them): without one here too."""
    return tuple(b.unary("nn.stop_gradient", s) for s in statistics)


@handles("_native_batch_norm_legit_no_training.default")
def _batch_norm_eval(b, node, x, weight, bias, running_mean, running_var, momentum, eps):
    rank = len(x.shape)
    scale = b.unary("nn.rsqrt", b.binary("nn.add", running_var, eps))
    if weight is not None:
        scale = b.binary("nn.mul", scale, weight)
    y = b.binary("nn.mul", b.binary("nn.sub", x, b.along(running_mean, rank, 1)), b.along(scale, rank, 1))
    if bias is not None:
        y = b.binary("nn.add", y, b.along(bias, rank, 1))
    return y, None, None


def _batch_statistics(b, x, weight, bias, eps):
    """Batch norm with the batch's own statistics over every axis but 1: the
    output, the mean and rstd (C,), and the biased variance (C,)."""
    rank = len(x.shape)
    axes = [d for d in range(rank) if d != 1]
    y, mean, rstd, var = _normalize(b, x, axes, eps)
    if weight is not None:
        y = b.binary("nn.mul", y, b.along(weight, rank, 1))
    if bias is not None:
        y = b.binary("nn.add", y, b.along(bias, rank, 1))
    channels = [x.shape[1]]
    return y, b.reshape(mean, channels), b.reshape(rstd, channels), b.reshape(var, channels)


@handles("_native_batch_norm_legit_functional.default")
def _batch_norm_train(b, node, x, weight, bias, running_mean, running_var, training, momentum, eps):
    """Training mode: normalise by the batch's statistics, and return the
    running statistics updated as torch does (momentum average; the variance
    unbiased, n / (n - 1)); `dfc.torch` writes them into the module's buffers."""
    if not training:
        y, _, _ = _batch_norm_eval(b, node, x, weight, bias, running_mean, running_var, momentum, eps)
        return y, None, None, running_mean, running_var
    y, mean, rstd, var = _batch_statistics(b, x, weight, bias, eps)
    n = math.prod(x.shape) // x.shape[1]
    unbiased = b.binary("nn.mul", var, n / max(n - 1, 1))

    def updated(old, batch):
        return b.binary("nn.add", b.binary("nn.mul", old, 1.0 - momentum), b.binary("nn.mul", batch, momentum))

    return y, *_saved(b, mean, rstd), updated(running_mean, mean), updated(running_var, unbiased)


@handles("_native_batch_norm_legit.no_stats")
def _batch_norm_no_stats(b, node, x, weight, bias, training, momentum, eps):
    """Training mode without running statistics (`track_running_stats=False`)."""
    y, mean, rstd, _ = _batch_statistics(b, x, weight, bias, eps)
    return y, *_saved(b, mean, rstd)


# --- losses ----------------------------------------------------------------------

@handles("nll_loss_forward.default")
def _nll_loss(b, node, x, target, weight, reduction, ignore_index):
    if weight is not None or len(x.shape) != 2 or reduction not in (1, 2):
        raise UnsupportedOp("nll_loss other than mean or sum over N x C inputs without class weights")
    if 0 <= ignore_index < x.shape[1]:
        raise UnsupportedOp(f"nll_loss with ignore_index={ignore_index}, a class a target may hold")
    loss = b.op("nn.nll_loss", [x, b.convert(target, "i64")], (), x.dtype)
    n = x.shape[0]
    if reduction == 2:
        loss = b.binary("nn.mul", loss, float(n))
    return loss, b.full(n, (), x.dtype)


# --- normalisation and resampling ------------------------------------------------------

@handles("native_group_norm.default")
def _group_norm(b, node, x, weight, bias, n, c, hw, group, eps):
    """Normalised over each group of C / group channels and the spatial dimensions, then scaled and
    shifted per channel; the mean and rstd are (N, group)."""
    grouped = b.reshape(x, [n, group, (c // group) * hw])
    y, mean, rstd, _ = _normalize(b, grouped, [2], eps)
    y = b.reshape(y, x.shape)
    if weight is not None:
        y = b.binary("nn.mul", y, b.along(weight, len(x.shape), 1))
    if bias is not None:
        y = b.binary("nn.add", y, b.along(bias, len(x.shape), 1))
    return y, b.reshape(mean, [n, group]), b.reshape(rstd, [n, group])


def _resample(b, node, x, mode: str, output_size, scale_factors, align_corners: bool = False):
    """Each spatial axis (the last ones) resampled by its own source indices and weights, the last axis first."""
    shape = b.out(node)[0]
    scales = list(scale_factors) if scale_factors is not None else [None] * (len(shape) - 2)
    real = np.float64 if x.dtype == "f64" else np.float32
    for axis in range(len(shape) - 1, 1, -1):
        size, out, scale = x.shape[axis], shape[axis], scales[axis - 2]
        if mode == "nearest":
            x = b.take(x, axis, b.constant(_nearest_source(size, out, scale), "i64"))
            continue
        lo, hi, weight = _linear_source(size, out, scale, align_corners, real)
        rank = len(x.shape)
        low, high = b.take(x, axis, b.constant(lo, "i64")), b.take(x, axis, b.constant(hi, "i64"))
        w1 = b.along(b.constant(weight, x.dtype), rank, axis)
        w0 = b.along(b.constant(real(1) - weight, x.dtype), rank, axis)
        x = b.binary("nn.add", b.binary("nn.mul", w0, low), b.binary("nn.mul", w1, high))
    return x


def _nearest_source(size: int, out: int, scale: float | None) -> np.ndarray:
    """torch's nearest_idx: min(floor(dst * s), size - 1), s = 1 / scale or size / out in float32."""
    dst = np.arange(out)
    if out == size:
        return dst
    if out == 2 * size:
        return dst >> 1
    s = np.float32(1.0 / scale) if scale and scale > 0 else np.float32(size) / np.float32(out)
    return np.minimum(np.floor(dst.astype(np.float32) * s).astype(np.int64), size - 1)


def _linear_source(size: int, out: int, scale: float | None, align_corners: bool, real: type):
    """torch's area_pixel_compute_source_index (in the input's float type): the lower and upper
    source index of each output position and the upper one's weight."""
    if align_corners:
        s = real(size - 1) / real(out - 1) if out > 1 else real(0)
        src = s * np.arange(out, dtype=real)
    else:
        s = real(1.0 / scale) if scale and scale > 0 else real(size) / real(out)
        src = np.maximum(s * (np.arange(out, dtype=real) + real(0.5)) - real(0.5), real(0))
    lo = src.astype(np.int64)
    hi = lo + (lo < size - 1)
    return lo, hi, (src - lo.astype(real)).astype(real)


@handles("upsample_nearest2d.vec")
def _upsample_nearest(b, node, x, output_size, scale_factors):
    return _resample(b, node, x, "nearest", output_size, scale_factors)


@handles("upsample_bilinear2d.vec")
def _upsample_bilinear(b, node, x, output_size, align_corners, scale_factors):
    return _resample(b, node, x, "linear", output_size, scale_factors, align_corners)


@handles("_upsample_bilinear2d_aa.default", "_upsample_bicubic2d_aa.default")
def _upsample_antialiased(b, node, x, output_size, align_corners, scales_h, scales_w):
    """Antialiased bilinear or bicubic resampling (timm's position-embedding resize): each spatial axis a
    product with the matrix of torch's own weights, which its kernel gives in float64 for one-hot inputs
    constant along the other axis (the kernel is separable and its weights sum to 1; the other axis has
    size 2, as torch's kernel mishandles size 1 there)."""
    op = node.target
    for axis, out, scale in ((3, output_size[1], scales_w), (2, output_size[0], scales_h)):
        size = x.shape[axis]
        basis = torch.eye(size, dtype=torch.float64).reshape(size, 1, size, 1).expand(size, 1, size, 2)
        response = op(basis.contiguous(), [out, 2], align_corners, scale, None)[:, 0, :, 0]
        x = _axis_product(b, x, axis, response.numpy())
    return x


@handles("grid_sampler_2d.default", "grid_sampler_3d.default")
def _grid_sampler(b, node, x, grid, interpolation_mode, padding_mode, align_corners):
    """F.grid_sample of a 4-d or 5-d input: `nn.grid_sample`, torch's modes numbered as its enums (eager refuses
    bicubic 5-d)."""
    props = {"mode": ("bilinear", "nearest", "bicubic")[interpolation_mode],
             "padding_mode": ("zeros", "border", "reflection")[padding_mode]}
    if align_corners:
        props["align_corners"] = Raw("unit")
    shape, dtype = b.out(node)
    return b.op("nn.grid_sample", [b.convert(x, dtype), b.convert(grid, dtype)], shape, dtype, **props)


@handles("col2im.default")
def _col2im(b, node, x, output_size, kernel_size, dilation, padding, stride):
    """F.fold (`nn.Fold`): `nn.col2im` of (N, C * K, L) columns, or of unbatched (C * K, L) ones as a batch of 1;
    torch pads both ends by `padding`."""
    shape, dtype = b.out(node)
    columns = b.reshape(x, [1, *x.shape]) if len(x.shape) == 2 else x
    padding = int_list(padding, 2)
    y = b.op("nn.col2im", [columns], [columns.shape[0], *shape[-3:]], dtype, image_shape=int_list(output_size, 2),
             block_shape=int_list(kernel_size, 2), strides=int_list(stride, 2), padding_low=padding,
             padding_high=padding, dilations=int_list(dilation, 2))
    return b.reshape(y, shape) if len(x.shape) == 2 else y


@handles("linalg_vector_norm.default")
def _vector_norm(b, node, x, order, dims, keepdim, dtype):
    """The p-norm over `dims` (all when none): sum |x|^p to the power 1/p (p = 2: sqrt of the sum of
    squares, p = 1: sum of |x|), max |x| for inf and min |x| for -inf (ties share the gradient evenly, as
    torch's), the count of nonzeros for 0. A zero norm gets gradient 0, as torch's (the root's argument is
    1 there and its result replaced by 0). Negative p is refused."""
    x = b.convert(x, b.out(node)[1])
    if math.isinf(order):
        return b.reduce("max" if order > 0 else "min", b.unary("nn.abs", x), dims, keepdim)
    if order == 0:
        return b.reduce("sum", b.convert(b.compare("NE", x, 0.0), x.dtype), dims, keepdim)
    if order < 0:
        raise UnsupportedOp(f"vector_norm of order {order} (negative orders)")
    if order == 1:
        return b.reduce("sum", b.unary("nn.abs", x), dims, keepdim)
    powered = b.binary("nn.mul", x, x) if order == 2 else b.binary("nn.power", b.unary("nn.abs", x), float(order))
    total = b.reduce("sum", powered, dims, keepdim)
    zero = b.compare("EQ", total, 0.0)
    safe = b.op("nn.select", [zero, b.full(1.0, total.shape, x.dtype), total], total.shape, x.dtype)
    root = b.unary("nn.sqrt", safe) if order == 2 else b.binary("nn.power", safe, 1.0 / order)
    return b.op("nn.select", [zero, b.full(0.0, total.shape, x.dtype), root], total.shape, x.dtype)


# --- index reductions, products, variance, any ---------------------------------------

def _arg_operand(b, x: Value, name: str, dim: int | None) -> Value:
    """x as floats for the library's argmax/argmin along `dim` (None: all): integers and booleans narrower than
    64 bits converted exactly to f64; an int64 as the low 32 bits (exact in f64) where its high 32 bits are
    the extreme ones along `dim`, and -1 (2^32 for argmin) elsewhere: the first extreme of that is x's."""
    if x.is_float:
        return x
    if x.dtype != "i64":
        return b.convert(x, "f64")
    high = b.convert(b.binary("nn.shift_right_arithmetic", x, 32, "i64"), "f64")
    low = b.convert(b.binary("nn.and", x, 0xFFFFFFFF, "i64"), "f64")
    largest = name == "nn.argmax"
    extreme = b.reduce("max" if largest else "min", high, None if dim is None else [dim], keepdims=True)
    on = b.compare("EQ", high, extreme)
    return b.op("nn.select", [on, low, b.full(-1.0 if largest else 2.0 ** 32, x.shape, "f64")], x.shape, "f64")


def _arg(b, x: Value, name: str, dim: int | None, keepdim: bool) -> Value:
    """`name` (nn.argmax, nn.argmin) of x along `dim` (None: over the flattened x), the first on ties and a NaN
    first of all, as torch's, as i64."""
    x = _arg_operand(b, x, name, dim)
    if dim is None:
        flat = b.reshape(x, [math.prod(x.shape)])
        index = b.op(name, [flat], [], "i64", axis=0)
        return b.reshape(index, [1] * len(x.shape)) if keepdim else index
    if not x.shape:
        return b.full(0, (), "i64")
    dim %= len(x.shape)
    index = b.op(name, [x], [n for d, n in enumerate(x.shape) if d != dim], "i64", axis=dim)
    return b.reshape(index, [1 if d == dim else n for d, n in enumerate(x.shape)]) if keepdim else index


@handles("argmax.default")
def _argmax(b, node, x, dim, keepdim):
    return _arg(b, x, "nn.argmax", dim, keepdim)


@handles("argmin.default")
def _argmin(b, node, x, dim, keepdim):
    return _arg(b, x, "nn.argmin", dim, keepdim)


def _extreme_dim(b, node, x, dim, keepdim, name: str):
    """(values, indices) along `dim`: the index of argmax/argmin (the first of equal ones, a NaN's first), the
    value gathered there, so the gradient goes to that one element as torch's."""
    if not x.shape:
        return x, b.full(0, (), "i64")
    dim %= len(x.shape)
    index = _arg(b, x, name, dim, True)
    values = take_along(b, x, index, dim)
    if not keepdim:
        shape = [n for d, n in enumerate(x.shape) if d != dim]
        values, index = b.reshape(values, shape), b.reshape(index, shape)
    return values, index


@handles("max.dim")
def _max_dim(b, node, x, dim, keepdim):
    return _extreme_dim(b, node, x, dim, keepdim, "nn.argmax")


@handles("min.dim")
def _min_dim(b, node, x, dim, keepdim):
    return _extreme_dim(b, node, x, dim, keepdim, "nn.argmin")


@handles("any.default", "any.dim", "any.dims")
def _any(b, node, x, dim=None, keepdim=False):
    """Whether any element is nonzero: the largest of (x != 0) as f32, compared with 0."""
    dims = [dim] if isinstance(dim, int) else dim
    nonzero = b.convert(x if x.dtype == "i1" else b.compare("NE", x, 0), "f32")
    found = b.compare("GT", b.reduce("max", nonzero, dims, keepdim), 0.0)
    return b.convert(found, b.out(node)[1])


def _product(b, x: Value, axes: list[int], keepdim: bool) -> Value:
    """The product over `axes`: those moved last and flattened, padded with ones to a power of two,
    then halved by elementwise products (log2(n) steps), so the gradient of each factor is the product
    of the others, zeros included, as torch's."""
    rank = len(x.shape)
    axes = sorted({a % rank for a in axes}) if rank else []
    if not axes:
        return x
    rest = [d for d in range(rank) if d not in axes]
    n = math.prod(x.shape[a] for a in axes)
    flat = b.reshape(b.transpose(x, rest + axes), [*(x.shape[d] for d in rest), n])
    if n == 0:
        flat = b.full(1, [*(x.shape[d] for d in rest), 1], x.dtype)
    size = 1 << max(n - 1, 0).bit_length()
    if size != flat.shape[-1]:
        flat = b.pad(flat, [0] * len(rest) + [0], [0] * len(rest) + [size - flat.shape[-1]], 1)
    while flat.shape[-1] > 1:
        half = flat.shape[-1] // 2
        lead = list(flat.shape[:-1])
        low = b.op("nn.slice", [flat], [*lead, half], flat.dtype, start_indices=[0] * len(flat.shape),
                   limit_indices=[*lead, half], strides=[1] * len(flat.shape))
        high = b.op("nn.slice", [flat], [*lead, half], flat.dtype, start_indices=[0] * len(lead) + [half],
                    limit_indices=[*lead, 2 * half], strides=[1] * len(flat.shape))
        flat = b.binary("nn.mul", low, high)
    shape = [1 if d in axes else n for d, n in enumerate(x.shape)] if keepdim else [x.shape[d] for d in rest]
    return b.reshape(flat, shape)


@handles("prod.default")
def _prod(b, node, x, dtype):
    return _product(b, b.convert(x, b.out(node)[1]), list(range(len(x.shape))), False)


@handles("prod.dim_int")
def _prod_dim(b, node, x, dim, keepdim, dtype):
    return _product(b, b.convert(x, b.out(node)[1]), [dim], keepdim)


@handles("var.correction")
def _var(b, node, x, dims, correction, keepdim):
    """sum((x - mean)^2) / (N - correction) over `dims` (all when None; correction None is 1); N <= correction,
    a division by 0, is refused."""
    return _var_mean(b, node, x, dims, correction, keepdim)[0]


@handles("var_mean.correction")
def _var_mean(b, node, x, dims, correction, keepdim):
    """var.correction's variance and the mean."""
    rank = len(x.shape)
    axes = list(range(rank)) if dims is None or (not dims and rank) else [d % rank for d in dims]
    n = math.prod(x.shape[a] for a in axes) if rank else 1
    mean = b.reduce("mean", x, axes, keepdims=True)
    centered = b.binary("nn.sub", x, mean)
    total = b.reduce("sum", b.binary("nn.mul", centered, centered), axes, keepdim)
    correction = 1 if correction is None else correction
    if n - correction <= 0:
        raise UnsupportedOp(f"var over {n} elements with correction={correction} (torch divides by 0: infinite "
                            "or NaN values, infinite gradients)")
    var = b.binary("nn.div", total, float(n - correction))
    return var, (mean if keepdim else b.reshape(mean, var.shape))
