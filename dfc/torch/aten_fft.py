"""PyTorch's FFTs as `nn.dft` (`dialects/nn_fft.py`): `_fft_r2c`, `_fft_c2c`, `_fft_c2r`, the ops
`torch.fft`'s functions decompose into, and the complex tensors between them.

The IR has no complex element type: a complex tensor of shape S is a `ComplexValue`, the float
tensor (*S, 2) of its parts (torch's own `view_as_real` layout; `parts` and `pack` go between the
two). This module holds the transforms, `view_as_real` (the packed tensor itself, after which
`select` reads `.real`/`.imag`), `abs`, `_to_copy` of a real tensor to a complex dtype, and the zero
padding and slicing with which torch fits a transform's input to its length (`COMPLEX_FORMS`); the
other complex forms and the choice among them are aten_complex.py's. torch's `normalization` 0, 1, 2
divides by 1, sqrt(n), n (n the product of the transformed sizes, so each axis by its own).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dfc.torch.aten_common import Builder, Handler, UnsupportedOp, handler_table
from dfc.torch.ir_text import Raw, Value

FFT_HANDLERS, handles = handler_table()

PART_DTYPES = {"complex64": "f32", "complex128": "f64"}
"""The element type of a packed complex tensor's parts, by torch's complex dtype name."""

_SCALES = {0: "none", 1: "sqrt", 2: "n"}


@dataclass(frozen=True)
class ComplexValue(Value):
    """A complex tensor, packed: `shape` ends with the (re, im) dimension of 2."""


def is_complex(val) -> bool:
    """Whether a fake tensor (a node's `meta["val"]`) is complex."""
    return str(getattr(val, "dtype", "")).removeprefix("torch.") in PART_DTYPES


def packed_type(val) -> tuple[tuple[int, ...], str]:
    """The packed shape and part type of a complex fake tensor."""
    dtype = str(val.dtype).removeprefix("torch.")
    if dtype not in PART_DTYPES:
        raise UnsupportedOp(f"dtype {val.dtype}")
    return (*(int(d) for d in val.shape), 2), PART_DTYPES[dtype]


def _scale(normalization: int) -> str:
    if normalization not in _SCALES:
        raise UnsupportedOp(f"FFT normalization {normalization}")
    return _SCALES[normalization]


def _dims(x: Value, dim: Sequence[int], is_packed: bool) -> list[int]:
    rank = len(x.shape) - is_packed
    return [d % rank for d in dim]


def _dft(b: Builder, x: Value, axis: int, kind: str, scale: str, *, inverse: bool = False, onesided: bool = False,
         length: int | None = None) -> Value:
    """One `nn.dft`, its result typed as the op infers it."""
    shape = list(x.shape)
    props: dict[str, object] = {"axis": axis, "kind": kind, "scale": scale}
    if inverse:
        props["inverse"] = Raw("unit")
    if onesided:
        props["onesided"] = Raw("unit")
    if kind == "r2c":
        shape = shape[:axis] + [shape[axis] // 2 + 1 if onesided else shape[axis]] + shape[axis + 1:] + [2]
    elif kind == "c2r":
        assert length is not None
        props["length"] = length
        shape = shape[:axis] + [length] + shape[axis + 1:-1]
    y = b.op("nn.dft", [x], shape, x.dtype, **props)
    return y if kind == "c2r" else packed(y)


@handles("_fft_r2c.default")
def _fft_r2c(b, node, x, dim, normalization, onesided):
    """Real to complex over `dim`: the last one real to complex (one-sided if asked), the others complex."""
    *rest, last = _dims(x, dim, False)
    scale = _scale(normalization)
    y = _dft(b, x, last, "r2c", scale, onesided=onesided)
    for axis in rest:
        y = _dft(b, y, axis, "c2c", scale)
    return y


@handles("_fft_c2c.default")
def _fft_c2c(b, node, x, dim, normalization, forward):
    scale = _scale(normalization)
    for axis in _dims(x, dim, True):
        x = _dft(b, x, axis, "c2c", scale, inverse=not forward)
    return x


@handles("_fft_c2r.default")
def _fft_c2r(b, node, x, dim, normalization, last_dim_size):
    """Complex to real over `dim` (the inverse sign): the others complex, then the last one to `last_dim_size`
    real samples from its first last_dim_size // 2 + 1 frequencies (torch cuts or pads them to that)."""
    *rest, last = _dims(x, dim, True)
    scale = _scale(normalization)
    for axis in rest:
        x = _dft(b, x, axis, "c2c", scale, inverse=True)
    bins = last_dim_size // 2 + 1
    if x.shape[last] != bins:
        high = [0] * len(x.shape)
        high[last] = bins - x.shape[last]
        x = b.pad(x, [0] * len(x.shape), high)
    return _dft(b, x, last, "c2r", scale, inverse=True, length=last_dim_size)


@handles("view_as_real.default")
def _view_as_real(b, node, x):
    if not isinstance(x, ComplexValue):
        raise UnsupportedOp("view_as_real of a real tensor")
    return Value(x.name, x.shape, x.dtype)


def _complex_abs(b: Builder, node, x: ComplexValue) -> Value:
    """|z| = m sqrt((re / m)^2 + (im / m)^2), m = max(|re|, |im|) (0 where m is 0, with gradient 0 as
    torch's): no overflow or underflow of the squares, as torch's hypot."""
    re, im = parts(b, x)
    shape, d = list(x.shape[:-1]), x.dtype
    m = b.binary("nn.maximum", b.unary("nn.abs", re), b.unary("nn.abs", im))
    zero = b.compare("EQ", m, b.tensor(0.0, d))
    safe = b.op("nn.select", [zero, b.broadcast(b.tensor(1.0, d), shape), m], shape, d)
    ratio = [b.binary("nn.div", p, safe) for p in (re, im)]
    total = b.binary("nn.add", *(b.binary("nn.mul", r, r) for r in ratio))
    total = b.op("nn.select", [zero, b.broadcast(b.tensor(1.0, d), shape), total], shape, d)  # sqrt' finite at 0
    return b.binary("nn.mul", m, b.unary("nn.sqrt", total))


def _to_complex(b: Builder, node, x, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
                memory_format=None) -> ComplexValue:
    """A real tensor converted to a complex dtype: its parts (x, 0)."""
    if isinstance(x, ComplexValue):
        raise UnsupportedOp("a copy of a complex tensor")
    shape, d = packed_type(node.meta["val"])
    re = b.reshape(b.convert(x, d), [*x.shape, 1])
    return packed(b.op("nn.concatenate", [re, b.full(0.0, [*x.shape, 1], d)], shape, d, dimension=len(x.shape)))


def packed(v: Value) -> ComplexValue:
    """A float tensor (*S, 2) as the complex tensor of shape S it holds."""
    return ComplexValue(v.name, v.shape, v.dtype)


def parts(b: Builder, z: ComplexValue) -> tuple[Value, Value]:
    """The real and imaginary parts of `z` (tensors of its logical shape)."""
    shape, n = list(z.shape[:-1]), len(z.shape) - 1
    return tuple(b.reshape(b.op("nn.slice", [z], shape + [1], z.dtype, start_indices=[0] * n + [k],  # type: ignore
                                 limit_indices=shape + [k + 1], strides=[1] * (n + 1)), shape) for k in (0, 1))


def pack(b: Builder, re: Value, im: Value) -> ComplexValue:
    """The complex tensor of parts `re` and `im` (of one shape and type)."""
    shape = list(re.shape)
    halves = [b.reshape(p, [*shape, 1]) for p in (re, im)]
    return packed(b.op("nn.concatenate", halves, [*shape, 2], re.dtype, dimension=len(shape)))


def _complex_pad(b: Builder, node, x: ComplexValue, pad, value=0.0) -> ComplexValue:
    """`constant_pad_nd` of a complex tensor with zeros (how torch cuts or pads a transform's input to n):
    the packed tensor padded, its (re, im) dimension not."""
    if value != 0:
        raise UnsupportedOp(f"padding a complex tensor with {value}")
    rank = len(x.shape)
    low, high = [0] * rank, [0] * rank
    for k in range(len(pad) // 2):
        low[rank - 2 - k], high[rank - 2 - k] = pad[2 * k], pad[2 * k + 1]
    return packed(b.pad(x, low, high))


def _complex_slice(b: Builder, node, x: ComplexValue, dim=0, start=None, end=None, step=1) -> ComplexValue:
    """`slice.Tensor` of a complex tensor: the packed tensor sliced along the same dimension."""
    rank = len(x.shape) - 1
    first, stop, step = slice(start, end, step).indices(x.shape[dim % rank])
    if step < 1:
        raise UnsupportedOp("slice with a negative step")
    stop = max(first, stop)
    starts, limits = [0] * (rank + 1), list(x.shape)
    starts[dim % rank], limits[dim % rank] = first, stop
    shape = list(x.shape)
    shape[dim % rank] = len(range(first, stop, step))
    strides = [1] * (rank + 1)
    strides[dim % rank] = step
    return packed(b.op("nn.slice", [x], shape, x.dtype, start_indices=starts, limit_indices=limits, strides=strides))


COMPLEX_FORMS: dict[str, Handler] = {"aten.abs.default": _complex_abs, "aten._to_copy.default": _to_complex,
                                     "aten.constant_pad_nd.default": _complex_pad,
                                     "aten.slice.Tensor": _complex_slice}
"""The complex forms of overloads whose real forms other families handle."""
