"""How each aten op becomes nn library ops.

`HANDLERS` maps an aten overload's name (`"aten.relu.default"`) to a function
`(b: Builder, node, *args, **kwargs)` whose tensor arguments are already
`Value`s; it returns a `Value`, or a tuple of them for ops with several
results (None for a result it does not compute). It receives every argument
of the op's schema (`capture.bind`): each positional one, and each keyword-only
one it names, an omitted argument carrying the schema's default, so a
handler's own default values never decide a result. The keys are overloads
that the export can produce: none is decomposed by it (tests/api/test_aten_coverage.py
checks this, and compares each against eager PyTorch). The node's fake tensor
(`node.meta["val"]`) gives the shape and dtype torch expects; the translator
checks every handler's result against it.

Ops the export keeps (see `capture.KEPT`) map to one library op where the
library has it (`linear`, `softmax`, `nll_loss`); the rest are the core aten
set, mostly one op each. Layer norm and eval-mode batch norm are written out as
reductions and elementwise ops, so autodiff differentiates them like any
other program. Anything else raises `UnsupportedOp`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from dfc.torch.ir_text import DTYPES, IRWriter, Raw, Value


class UnsupportedOp(Exception):
    """An aten op (or a form of one) that has no translation; the translator adds where it came from."""


Handler = Callable[..., "Value | tuple[Value | None, ...]"]
HANDLERS: dict[str, Handler] = {}


def handles(*names: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for n in names:
            HANDLERS[f"aten.{n}"] = fn
        return fn

    return register


def meta_type(val) -> tuple[tuple[int, ...], str]:
    """Shape and MLIR element type of a fake tensor."""
    dtype = str(val.dtype).removeprefix("torch.")
    if dtype not in DTYPES:
        raise UnsupportedOp(f"dtype {val.dtype}")
    return tuple(int(d) for d in val.shape), DTYPES[dtype]


class Builder(IRWriter):
    """`IRWriter` with the helpers the handlers share."""

    def out(self, node) -> tuple[tuple[int, ...], str]:
        val = node.meta["val"]
        return meta_type(val[0] if isinstance(val, tuple | list) else val)

    def convert(self, a: Value, dtype: str) -> Value:
        return a if a.dtype == dtype else self.op("nn.convert", [a], a.shape, dtype)

    def tensor(self, x: Value | float | int | bool, dtype: str) -> Value:
        """`x` as a tensor of `dtype` (a Python number becomes a 0-d `nn.full`)."""
        if isinstance(x, Value):
            return self.convert(x, dtype)
        return self.full(x, (), dtype)

    def binary(self, name: str, a, b, dtype: str | None = None) -> Value:
        """Elementwise `name` with numpy broadcasting, both operands in `dtype`
        (default: the float one's, else the first tensor's)."""
        if dtype is None:
            tensors = [x for x in (a, b) if isinstance(x, Value)]
            floats = [t.dtype for t in tensors if t.is_float]
            dtype = floats[0] if floats else tensors[0].dtype
            if not floats and any(isinstance(x, float) for x in (a, b)):
                dtype = "f32"
        a, b = self.tensor(a, dtype), self.tensor(b, dtype)
        shape = np.broadcast_shapes(a.shape, b.shape)
        result = "i1" if name == "nn.compare" else dtype
        return self.op(name, [a, b], shape, result)

    def compare(self, direction: str, a, b) -> Value:
        tensors = [x for x in (a, b) if isinstance(x, Value)]
        floats = [t.dtype for t in tensors if t.is_float]
        dtype = floats[0] if floats else ("f32" if any(isinstance(x, float) for x in (a, b)) else tensors[0].dtype)
        a, b = self.tensor(a, dtype), self.tensor(b, dtype)
        return self.op("nn.compare", [a, b], np.broadcast_shapes(a.shape, b.shape), "i1", direction=direction)

    def unary(self, name: str, a: Value) -> Value:
        return self.op(name, [a], a.shape, a.dtype)

    def reshape(self, a: Value, shape: Sequence[int]) -> Value:
        return a if tuple(shape) == a.shape else self.op("nn.reshape", [a], shape, a.dtype)

    def transpose(self, a: Value, perm: Sequence[int]) -> Value:
        perm = [p % len(a.shape) for p in perm] if a.shape else []
        if perm == sorted(perm):
            return a
        return self.op("nn.transpose", [a], [a.shape[p] for p in perm], a.dtype, permutation=perm)

    def broadcast(self, a: Value, shape: Sequence[int]) -> Value:
        return a if tuple(shape) == a.shape else self.op("nn.broadcast", [a], shape, a.dtype)

    def reduce(self, kind: str, a: Value, axes: Sequence[int] | None, keepdims: bool = False) -> Value:
        rank = len(a.shape)
        if rank == 0:
            return a
        axes = sorted({d % rank for d in axes}) if axes else list(range(rank))
        if not axes:
            return a
        shape = [1 if d in axes else n for d, n in enumerate(a.shape)] if keepdims else [
            n for d, n in enumerate(a.shape) if d not in axes
        ]
        props: dict[str, object] = {"kind": kind, "axes": axes}
        if keepdims:
            props["keepdims"] = Raw("unit")
        return self.op("nn.reduce", [a], shape, a.dtype, **props)

    def along(self, v: Value, rank: int, axis: int) -> Value:
        """A 1-d `v` reshaped to broadcast along `axis` of a rank-`rank` tensor."""
        return self.reshape(v, [v.shape[0] if d == axis else 1 for d in range(rank)])

    def constant(self, array: np.ndarray, dtype: str) -> Value:
        """`array` (numbers) as an `nn.constant` of `dtype` (a float or integer type)."""
        array = np.asarray(array)
        literal = np.array2string(array.astype(np.float64 if dtype.startswith("f") else np.int64), separator=", ",
                                  threshold=array.size + 1, floatmode="unique", max_line_width=2**31)
        t = f"tensor<{''.join(f'{d}x' for d in array.shape)}{dtype}>"
        return self.op("nn.constant", [], array.shape, dtype, value=Raw(f"dense<{literal}> : {t}"))

    def pad(self, x: Value, low: Sequence[int], high: Sequence[int], value: float | int | bool = 0,
            interior: Sequence[int] | None = None) -> Value:
        """`nn.pad` of x with `value` (negative amounts remove elements)."""
        interior = list(interior or [0] * len(x.shape))
        shape = [lo + hi + d + max(d - 1, 0) * i for lo, hi, d, i in zip(low, high, x.shape, interior)]
        return self.op("nn.pad", [x, self.full(value, (), x.dtype)], shape, x.dtype, edge_padding_low=list(low),
                       edge_padding_high=list(high), interior_padding=interior)

    def take(self, x: Value, axis: int, indices: Value) -> Value:
        """numpy's `take(x, indices, axis)` (indices in range), an `nn.gather` of size-1 slices."""
        rank, k = len(x.shape), len(indices.shape)
        shape = [*x.shape[:axis], *indices.shape, *x.shape[axis + 1:]]
        return self.op(
            "nn.gather", [x, indices], shape, x.dtype, offset_dims=[*range(axis), *range(axis + k, rank - 1 + k)],
            collapsed_slice_dims=[axis], operand_batching_dims=[], start_indices_batching_dims=[],
            start_index_map=[axis], index_vector_dim=k, slice_sizes=[1 if d == axis else n for d, n in
                                                                     enumerate(x.shape)],
        )


def _int_list(x, n: int) -> list[int]:
    if isinstance(x, int):
        return [x] * n
    x = list(x)
    return x * n if len(x) == 1 else x


# --- elementwise ---------------------------------------------------------------

for _aten, _nn in {
    "relu": "nn.relu", "tanh": "nn.tanh", "sigmoid": "nn.sigmoid", "exp": "nn.exp", "log": "nn.log",
    "sqrt": "nn.sqrt", "rsqrt": "nn.rsqrt", "neg": "nn.neg", "abs": "nn.abs", "erf": "nn.erf",
    "sin": "nn.sine", "cos": "nn.cosine", "expm1": "nn.expm1", "log1p": "nn.log1p",
}.items():
    handles(f"{_aten}.default")(lambda b, node, x, _nn=_nn: _unary(b, node, _nn, x))


def _unary(b, node, name: str, x):
    """`name` of x in the result's type (an integer input of a float function is converted first)."""
    x = b.convert(x, b.out(node)[1])
    if not x.is_float and name == "nn.relu":
        return b.binary("nn.maximum", x, 0)
    if not x.is_float and name == "nn.neg":
        return b.binary("nn.sub", 0, x, x.dtype)
    return b.unary(name, x)


@handles("logical_not.default")
def _logical_not(b, node, x):
    return b.unary("nn.not", b.convert(x, "i1") if x.dtype != "i1" else x)


def _arith(name: str, scaled: bool):
    def handler(b, node, x, y, alpha=1):
        dtype = b.out(node)[1]
        if scaled and alpha != 1:
            y = b.binary("nn.mul", y, alpha, dtype) if isinstance(y, Value) else y * alpha
        return b.binary(name, x, y, dtype)

    return handler


for _aten, _nn in {"add": "nn.add", "sub": "nn.sub", "mul": "nn.mul", "div": "nn.div"}.items():
    handles(f"{_aten}.Tensor", f"{_aten}.Scalar")(_arith(_nn, _aten in ("add", "sub")))


@handles("div.Tensor_mode")
def _div_mode(b, node, x, y, rounding_mode):
    if rounding_mode is not None:
        raise UnsupportedOp(f"div with rounding_mode={rounding_mode!r}")
    return b.binary("nn.div", x, y, b.out(node)[1])


@handles("maximum.default")
def _maximum(b, node, x, y):
    return b.binary("nn.maximum", x, y, b.out(node)[1])


@handles("minimum.default")
def _minimum(b, node, x, y):
    return b.binary("nn.minimum", x, y, b.out(node)[1])


@handles("pow.Tensor_Scalar")
def _pow_scalar(b, node, x, p):
    x = b.convert(x, b.out(node)[1])
    if p == 2:
        return b.binary("nn.mul", x, x)
    if p == 1:
        return x
    if not x.is_float:  # integers to a natural power, by squaring (wrapping as torch's)
        if not isinstance(p, int) or p < 0:
            raise UnsupportedOp(f"{x.dtype} to the power {p}")
        result, square = b.full(1, x.shape, x.dtype), x
        while p:
            result = b.binary("nn.mul", result, square) if p & 1 else result
            square, p = (b.binary("nn.mul", square, square) if p > 1 else square), p >> 1
        return result
    if p == 0.5:
        return b.unary("nn.sqrt", x)
    return b.binary("nn.power", x, p, b.out(node)[1])


@handles("pow.Tensor_Tensor")
def _pow(b, node, x, p):
    dtype = b.out(node)[1]
    if not dtype.startswith("f"):
        raise UnsupportedOp(f"{dtype} to a tensor power (the library's power is of floats)")
    return b.binary("nn.power", x, p, dtype)


@handles("clamp.default")
def _clamp(b, node, x, lo, hi):
    """min(max(x, lo), hi), a bound of None left out (torch.clamp). Written as
    selects so that the gradient flows where lo <= x <= hi, bounds included, as torch's."""
    dtype = b.out(node)[1]
    x = b.convert(x, dtype)
    if lo is not None:
        x = b.op("nn.select", [b.compare("LT", x, lo), b.tensor(lo, dtype), x], x.shape, dtype)
    if hi is not None:
        x = b.op("nn.select", [b.compare("GT", x, hi), b.tensor(hi, dtype), x], x.shape, dtype)
    return x


@handles("hardtanh.default")
def _hardtanh(b, node, x, lo, hi):
    """clamp(x, lo, hi) whose gradient flows strictly inside the bounds (torch's hardtanh_backward)."""
    return b.op("nn.clamp", [b.tensor(lo, x.dtype), x, b.tensor(hi, x.dtype)], x.shape, x.dtype)


@handles("hardsigmoid.default")
def _hardsigmoid(b, node, x):
    """x / 6 + 1/2 clamped to [0, 1]; the gradient flows strictly inside (-3, 3), as torch's."""
    return b.binary("nn.add", b.binary("nn.div", _hardtanh(b, node, x, -3.0, 3.0), 6.0), 0.5)


@handles("hardswish.default")
def _hardswish(b, node, x):
    """x * hardsigmoid(x); its gradient is 0 for x <= -3, 1 for x >= 3 and x / 3 + 1/2 between (torch's)."""
    inner = b.binary("nn.add", b.binary("nn.div", x, 6.0), 0.5)
    low = b.op("nn.select", [b.compare("LE", x, -3.0), b.tensor(0.0, x.dtype), inner], x.shape, x.dtype)
    gate = b.op("nn.select", [b.compare("GE", x, 3.0), b.tensor(1.0, x.dtype), low], x.shape, x.dtype)
    return b.binary("nn.mul", x, gate)


@handles("gelu.default")
def _gelu(b, node, x, approximate):
    half_x = b.binary("nn.mul", x, 0.5)
    if approximate == "tanh":  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        cube = b.binary("nn.mul", b.binary("nn.mul", x, x), x)
        inner = b.binary("nn.mul", b.binary("nn.add", x, b.binary("nn.mul", cube, 0.044715)), math.sqrt(2 / math.pi))
        return b.binary("nn.mul", half_x, b.binary("nn.add", b.unary("nn.tanh", inner), 1.0))
    if approximate != "none":
        raise UnsupportedOp(f"gelu with approximate={approximate!r}")
    erf = b.unary("nn.erf", b.binary("nn.mul", x, 1 / math.sqrt(2)))
    return b.binary("nn.mul", half_x, b.binary("nn.add", erf, 1.0))


for _aten, _dir in {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}.items():
    handles(f"{_aten}.Tensor", f"{_aten}.Scalar")(lambda b, node, x, y, _dir=_dir: b.compare(_dir, x, y))


@handles("where.self")
def _where(b, node, cond, x, y):
    shape, dtype = b.out(node)
    x, y = b.tensor(x, dtype), b.tensor(y, dtype)
    return b.op("nn.select", [cond, x, y], shape, dtype)


@handles("full.default", "full_like.default")
def _full(b, node, shape_or_like, value, **kwargs):
    shape, dtype = b.out(node)
    return b.full(value, shape, dtype)


@handles("scalar_tensor.default")
def _scalar_tensor(b, node, value, **kwargs):
    return b.full(value, (), b.out(node)[1])


# --- data movement -----------------------------------------------------------------

@handles("view.default", "view_copy.default", "squeeze.dims", "unsqueeze.default")
def _reshape(b, node, x, *args):
    return b.reshape(x, b.out(node)[0])


@handles("clone.default", "alias.default", "_to_copy.default")
def _copy(b, node, x, **kwargs):
    return b.convert(x, b.out(node)[1])


@handles("detach.default")
def _detach(b, node, x):
    raise UnsupportedOp("dfc differentiates the whole program and has no stop-gradient, so gradients would "
                        "flow through the detached value")


@handles("_assert_tensor_metadata.default")
def _assert_tensor_metadata(b, node, *args, **kwargs):
    """Nothing: export checked the metadata on its fake tensors (no result)."""


@handles("permute.default")
def _permute(b, node, x, dims):
    return b.transpose(x, dims)


@handles("expand.default")
def _expand(b, node, x, sizes, implicit):
    return b.broadcast(x, b.out(node)[0])


def _slice(b, x, dim, start, end, step):
    rank = len(x.shape)
    dim %= rank
    starts, limits, strides = [0] * rank, list(x.shape), [1] * rank
    starts[dim], limits[dim], strides[dim] = start, end, step
    shape = [(lim - s + st - 1) // st for s, lim, st in zip(starts, limits, strides)]
    return b.op("nn.slice", [x], shape, x.dtype, start_indices=starts, limit_indices=limits, strides=strides)


@handles("slice.Tensor")
def _slice_tensor(b, node, x, dim, start, end, step):
    size = x.shape[dim]
    start, stop, step = slice(start, end, step).indices(size)
    if step < 1:
        raise UnsupportedOp("slice with a negative step")
    return _slice(b, x, dim, start, max(start, stop), step)


@handles("select.int")
def _select(b, node, x, dim, index):
    index %= x.shape[dim]
    return b.reshape(_slice(b, x, dim, index, index + 1, 1), b.out(node)[0])


@handles("cat.default")
def _cat(b, node, tensors, dim):
    shape, dtype = b.out(node)
    tensors = [b.convert(t, dtype) for t in tensors if t.shape != (0,)]
    if len(tensors) == 1:
        return tensors[0]
    return b.op("nn.concatenate", tensors, shape, dtype, dimension=dim % len(shape))


@handles("embedding.default")
def _embedding(b, node, weight, indices, padding_idx, scale_grad_by_freq, sparse):
    if padding_idx not in (-1, None) or scale_grad_by_freq or sparse:
        raise UnsupportedOp("embedding with padding_idx, scale_grad_by_freq or sparse")
    shape, dtype = b.out(node)
    rank = len(indices.shape)
    return b.op(
        "nn.gather", [weight, indices], shape, dtype,
        offset_dims=[rank], collapsed_slice_dims=[0], operand_batching_dims=[], start_indices_batching_dims=[],
        start_index_map=[0], index_vector_dim=rank, slice_sizes=[1, weight.shape[1]],
    )


# --- contractions and convolution ------------------------------------------------

@handles("mm.default")
def _mm(b, node, x, y):
    return b.op("nn.matmul", [x, y], b.out(node)[0], x.dtype)


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
    return b.op(
        "nn.dot_general", [x, y], b.out(node)[0], x.dtype, lhs_batching_dimensions=[0], rhs_batching_dimensions=[0],
        lhs_contracting_dimensions=[2], rhs_contracting_dimensions=[1],
    )


@handles("linear.default")
def _linear(b, node, x, w, bias):
    shape = b.out(node)[0]
    flat = b.reshape(x, [int(np.prod(x.shape[:-1])), x.shape[-1]])
    if bias is None:
        wt = b.transpose(w, [1, 0])
        y = b.op("nn.matmul", [flat, wt], [flat.shape[0], w.shape[0]], x.dtype)
    else:
        y = b.op("nn.linear", [flat, w, bias], [flat.shape[0], w.shape[0]], x.dtype)
    return b.reshape(y, shape)


@handles("convolution.default")
def _convolution(b, node, x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    if transposed:
        raise UnsupportedOp("transposed convolution")
    n = len(w.shape) - 2
    if isinstance(padding, str):
        raise UnsupportedOp(f"convolution with padding={padding!r}")
    pad = _int_list(padding, n)
    dims = list(range(n + 2))
    shape, dtype = b.out(node)
    y = b.op(
        "nn.convolution", [x, w], shape, dtype, input_dimensions=dims, kernel_dimensions=dims,
        output_dimensions=dims, window_strides=_int_list(stride, n), padding_low=pad, padding_high=pad,
        rhs_dilation=_int_list(dilation, n), feature_group_count=groups,
    )
    return y if bias is None else b.binary("nn.add", y, b.along(bias, len(shape), 1))


# --- pooling ---------------------------------------------------------------------

def _window(b, node, kind, x, kernel, stride, padding, dilation=1):
    """A 2-d pooling window over the last two dimensions."""
    n = 2
    lead = len(x.shape) - n
    kernel = _int_list(kernel, n)
    stride = _int_list(stride, n) if stride else kernel
    pad = _int_list(padding, n)
    dilation = _int_list(dilation, n)
    shape, dtype = b.out(node)
    windows = [(d + 2 * p - (k - 1) * r - 1) // s + 1 for d, k, s, p, r in zip(x.shape[lead:], kernel, stride, pad,
                                                                                 dilation)]
    high = list(pad)
    if windows != list(shape[lead:]):
        if kind != "max":  # the divisor of a window reaching past the padding is torch's own
            raise UnsupportedOp(f"{kind} pooling to {list(shape[lead:])} where the windows give {windows} "
                                "(ceil_mode)")
        # ceil_mode: the last windows reach past the high padding, into more -inf
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


@handles("avg_pool2d.default")
def _avg_pool(b, node, x, kernel, stride, padding, ceil_mode, count_include_pad, divisor):
    if divisor is not None or (not count_include_pad and any(_int_list(padding, 2))):
        raise UnsupportedOp("avg_pool2d with divisor_override or count_include_pad=False and padding")
    return _window(b, node, "mean", x, kernel, stride, padding)


@handles("_adaptive_avg_pool2d.default")
def _adaptive_avg_pool(b, node, x, size):
    h, w = x.shape[-2:]
    oh, ow = _int_list(size, 2)
    if (oh, ow) == (1, 1):
        return b.reduce("mean", x, [-2, -1], keepdims=True)
    if h % oh or w % ow:
        raise UnsupportedOp(f"adaptive_avg_pool2d from {h}x{w} to {oh}x{ow} (sizes must divide)")
    return _window(b, node, "mean", x, [h // oh, w // ow], [h // oh, w // ow], 0)


# --- reductions and normalisation --------------------------------------------------

@handles("sum.dim_IntList", "mean.dim", "mean.default", "amax.default", "amin.default")
def _reduce(b, node, x, dims=None, keepdim=False, dtype=None):
    kind = {"sum": "sum", "mean": "mean", "amax": "max", "amin": "min"}[node.target.__name__.split(".")[0]]
    x = b.convert(x, b.out(node)[1])
    if not x.is_float and x.shape:
        raise UnsupportedOp(f"{kind} of {x.dtype} (the library reduces floats)")
    return b.reduce(kind, x, dims, keepdim)


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
    return y, mean, rstd


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

    return y, mean, rstd, updated(running_mean, mean), updated(running_var, unbiased)


@handles("_native_batch_norm_legit.no_stats")
def _batch_norm_no_stats(b, node, x, weight, bias, training, momentum, eps):
    """Training mode without running statistics (`track_running_stats=False`)."""
    y, mean, rstd, _ = _batch_statistics(b, x, weight, bias, eps)
    return y, mean, rstd


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


# --- creation, splitting, tiling, scans --------------------------------------------

@handles("arange.start_step")
def _arange(b, node, start, end, step, **kwargs):
    """start + i * step, computed in f64 (i64 for integer results) and converted, as torch's accumulation."""
    (n,), dtype = b.out(node)
    wide = "f64" if dtype.startswith("f") else "i64"
    y = b.op("nn.iota", [], (n,), wide, iota_dimension=0)
    if step != 1:
        y = b.binary("nn.mul", y, step, wide)
    if start != 0:
        y = b.binary("nn.add", y, start, wide)
    return b.convert(y, dtype)


@handles("split_with_sizes.default")
def _split_with_sizes(b, node, x, sizes, dim):
    dim %= len(x.shape)
    starts = np.cumsum([0, *sizes])
    return tuple(_slice(b, x, dim, int(s), int(s + n), 1) for s, n in zip(starts, sizes))


@handles("repeat.default")
def _repeat(b, node, x, repeats):
    """x tiled `repeats` times: (1, d0, 1, d1, ...) broadcast to (r0, d0, r1, d1, ...), then merged."""
    shape = (1,) * (len(repeats) - len(x.shape)) + x.shape
    x = b.reshape(x, [n for d in shape for n in (1, d)])
    x = b.broadcast(x, [n for r, d in zip(repeats, shape) for n in (r, d)])
    return b.reshape(x, b.out(node)[0])


@handles("cumsum.default")
def _cumsum(b, node, x, dim, dtype):
    """Inclusive prefix sums along `dim` in log2(n) steps (x + x shifted by 1, 2, 4, ...; Hillis and Steele)."""
    x = b.convert(x, b.out(node)[1])
    return _prefix_sum(b, x, dim % len(x.shape) if x.shape else 0)


def _prefix_sum(b, x: Value, axis: int) -> Value:
    if not x.shape:
        return x
    shift = 1
    while shift < x.shape[axis]:
        low = [shift if d == axis else 0 for d in range(len(x.shape))]
        x = b.binary("nn.add", x, b.pad(x, low, [-n for n in low]))
        shift *= 2
    return x


@handles("constant_pad_nd.default")
def _constant_pad_nd(b, node, x, pad, value):
    """`pad` as (low, high) pairs from the last dimension backwards; negative amounts crop."""
    rank = len(x.shape)
    low, high = [0] * rank, [0] * rank
    for k in range(len(pad) // 2):
        low[rank - 1 - k], high[rank - 1 - k] = pad[2 * k], pad[2 * k + 1]
    return b.pad(x, low, high, value)


@handles("copy.default")
def _copy_into(b, node, x, src, non_blocking):
    """src converted to x's dtype and broadcast to its shape (x's values are not read)."""
    return b.broadcast(b.convert(src, x.dtype), x.shape)


@handles("slice_scatter.default")
def _slice_scatter(b, node, x, src, dim, start, end, step):
    """x with src written at x[start:end:step] along `dim`: src padded into place (interior padding for
    the step), selected by a mask padded likewise."""
    dim %= len(x.shape)
    start, stop, step = slice(start, end, step).indices(x.shape[dim])
    if src.shape[dim] == 0:
        return x
    low = [start if d == dim else 0 for d in range(len(x.shape))]
    high = [x.shape[d] - start - (src.shape[d] - 1) * step - 1 if d == dim else 0 for d in range(len(x.shape))]
    interior = [step - 1 if d == dim else 0 for d in range(len(x.shape))]
    placed = b.pad(b.convert(src, x.dtype), low, high, 0, interior)
    mask = b.pad(b.full(True, src.shape, "i1"), low, high, False, interior)
    return b.op("nn.select", [mask, placed, x], x.shape, x.dtype)


# --- indexing ----------------------------------------------------------------------

def _wrapped(b, index: Value, size: int) -> Value:
    """An integer index tensor with negative entries counted from the end (`index + size` where negative), i64."""
    index = b.convert(index, "i64")
    negative = b.compare("LT", index, 0)
    return b.op("nn.select", [negative, b.binary("nn.add", index, size), index], index.shape, "i64")


@handles("gather.default")
def _gather(b, node, x, dim, index, sparse_grad):
    """out[i][j][k] = x[i][index[i][j][k]][k] (dim 1): an `nn.gather` of single elements whose other
    dimensions are batching dimensions (x cropped to index's extent in them first)."""
    rank = len(x.shape)
    if rank == 0:  # every index is 0
        return b.broadcast(b.reshape(x, [1] * len(index.shape)), index.shape)
    dim %= rank
    others = [d for d in range(rank) if d != dim]
    x = b.op("nn.slice", [x], [index.shape[d] if d != dim else n for d, n in enumerate(x.shape)], x.dtype,
             start_indices=[0] * rank, limit_indices=[index.shape[d] if d != dim else n for d, n in enumerate(x.shape)],
             strides=[1] * rank) if any(index.shape[d] != x.shape[d] for d in others) else x
    return b.op(
        "nn.gather", [x, _wrapped(b, index, x.shape[dim])], index.shape, x.dtype, offset_dims=[],
        collapsed_slice_dims=[dim], operand_batching_dims=others, start_indices_batching_dims=others,
        start_index_map=[dim], index_vector_dim=rank, slice_sizes=[1] * rank,
    )


@handles("index.Tensor")
def _index(b, node, x, indices):
    """x[i0, :, i2] with integer index tensors (broadcast together, negative ones counted from
    the end): an `nn.gather` of the indexed dimensions. The broadcast index dimensions replace the
    indexed ones where those are adjacent, else they come first (numpy's rule)."""
    dims = [d for d, i in enumerate(indices) if i is not None]
    shape, dtype = b.out(node)
    batch = np.broadcast_shapes(*(indices[d].shape for d in dims))
    k = len(batch)
    columns = [b.reshape(b.broadcast(_wrapped(b, indices[d], x.shape[d]), batch), [*batch, 1]) for d in dims]
    stacked = columns[0] if len(columns) == 1 else b.op("nn.concatenate", columns, [*batch, len(dims)], "i64",
                                                        dimension=k)
    rest = [d for d in range(len(x.shape)) if d not in dims]
    first = dims[0] if dims == list(range(dims[0], dims[-1] + 1)) else 0
    offset = [p if p < first else p + k for p in range(len(rest))]
    return b.op(
        "nn.gather", [x, stacked], shape, dtype, offset_dims=offset, collapsed_slice_dims=dims,
        operand_batching_dims=[], start_indices_batching_dims=[], start_index_map=dims, index_vector_dim=k,
        slice_sizes=[1 if d in dims else n for d, n in enumerate(x.shape)],
    )


# --- logical -----------------------------------------------------------------------

def _bitwise(b, node, name: str, *operands):
    """`name` (nn.and, nn.or, nn.xor, nn.not) of integers or booleans in the result's type."""
    dtype = b.out(node)[1]
    if dtype.startswith("f"):
        raise UnsupportedOp(f"{node.target} of floats (torch defines it for integers and booleans)")
    operands = [b.tensor(x, dtype) for x in operands]
    if len(operands) == 1:
        return b.unary(name, operands[0])
    return b.binary(name, *operands, dtype)


for _aten, _nn in {"bitwise_and": "nn.and", "bitwise_or": "nn.or", "bitwise_xor": "nn.xor"}.items():
    handles(f"{_aten}.Tensor")(lambda b, node, x, y, _nn=_nn: _bitwise(b, node, _nn, x, y))


@handles("bitwise_not.default")
def _bitwise_not(b, node, x):
    return _bitwise(b, node, "nn.not", x)


@handles("isnan.default")
def _isnan(b, node, x):
    return b.compare("NE", x, x) if x.is_float else b.full(False, x.shape, "i1")


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


@handles("topk.default")
def _topk(b, node, x, k, dim, largest, sorted):
    """The k largest (smallest) elements along `dim` in order and their indices: k rounds of argmax
    (argmin) over the elements not yet taken (those set to -inf, or +inf; where only such remain, the
    first index not taken). Among equal values the lower index comes first."""
    if not x.is_float:
        raise UnsupportedOp(f"topk of {x.dtype} (the library's argmax is of floats)")
    rank = len(x.shape)
    if rank == 0:
        return x, b.full(0, (), "i64")
    dim %= rank
    arg, extreme = ("nn.argmax", "max") if largest else ("nn.argmin", "min")
    fill = -math.inf if largest else math.inf
    reduced = [n for d, n in enumerate(x.shape) if d != dim]
    picked = [1 if d == dim else n for d, n in enumerate(x.shape)]
    positions = b.op("nn.iota", [], x.shape, "i64", iota_dimension=dim)
    others = [d for d in range(rank) if d != dim]
    values, indices, taken, rest = [], [], None, x
    for _ in range(k):
        index = b.op(arg, [rest], reduced, "i64", axis=dim)
        if taken is not None:
            free = b.convert(b.unary("nn.not", taken), "f32")
            stuck = b.compare("EQ", b.reduce(extreme, rest, [dim]), fill)
            index = b.op("nn.select", [stuck, b.op("nn.argmax", [free], reduced, "i64", axis=dim), index], reduced,
                         "i64")
        index = b.reshape(index, picked)
        hit = b.compare("EQ", positions, index)
        taken = hit if taken is None else b.binary("nn.or", taken, hit)
        rest = b.op("nn.select", [taken, b.tensor(fill, x.dtype), x], x.shape, x.dtype)
        values.append(b.op(
            "nn.gather", [x, index], picked, x.dtype, offset_dims=[], collapsed_slice_dims=[dim],
            operand_batching_dims=others, start_indices_batching_dims=others, start_index_map=[dim],
            index_vector_dim=rank, slice_sizes=[1] * rank))
        indices.append(index)
    shape = b.out(node)[0]
    if len(values) == 1:
        return values[0], indices[0]
    return (b.op("nn.concatenate", values, shape, x.dtype, dimension=dim),
            b.op("nn.concatenate", indices, shape, "i64", dimension=dim))
