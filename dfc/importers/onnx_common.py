"""What the ONNX importer's modules share: element types, axis normalisation,
the shapes of Squeeze/Unsqueeze/Flatten, Range and Resize's source indices,
and `NodeError`."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import (
    TensorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, SSAValue

from dfc.importers.narrow_formats import E8M0, FLOAT_FORMATS, INT_FORMATS

_ELEMENT_TYPES: dict[str, Attribute] = {
    "float32": f32, "float64": f64, "float16": f16, "int64": i64, "int32": i32, "int16": i16, "int8": i8, "bool": i1,
    "uint64": i64, "uint32": i32, "uint16": i16, "uint8": i8, "bfloat16": bf16,
    **{name: i8 for name in (*FLOAT_FORMATS, *INT_FORMATS, E8M0)},
}
"""nn's element type of each ONNX (numpy) dtype: an unsigned integer is the signless integer of its bits
(the importer tracks which values are unsigned: `onnx_unsigned`), a narrow format the i8 of its codes
(`onnx_narrow_types`)."""


def element_type(dtype: np.dtype) -> Attribute:
    name = np.dtype(dtype).name
    if name not in _ELEMENT_TYPES:
        raise NodeError(f"ONNX element type {name} is not supported")
    return _ELEMENT_TYPES[name]


def tensor_of(v: SSAValue) -> TensorType:
    assert isinstance(v.type, TensorType)
    return v.type


class NodeError(Exception):
    """An unsupported node feature; becomes a `CompileError` naming the node."""


def normalize_axis(axis: int, rank: int, what: str = "axis", between: bool = False) -> int:
    """`axis` as a dimension index in [0, rank): a negative one counts from the
    end (`axis + rank`). `between` accepts [-rank, rank] (a position between
    dimensions, as Flatten's axis); otherwise [-rank, rank). Outside: NodeError."""
    if not -rank <= axis < rank + between:
        bound = rank if between else rank - 1
        raise NodeError(f"{what} {axis} is out of range [{-rank}, {bound}] for rank {rank}")
    return axis + rank if axis < 0 else axis


def normalize_axes(axes: Sequence[int], rank: int, what: str = "axes") -> list[int]:
    """Every axis of `axes` normalised (`normalize_axis`); a repeated dimension is a NodeError."""
    out = [normalize_axis(int(a), rank, what) for a in axes]
    if len(set(out)) != len(out):
        raise NodeError(f"{what} {list(axes)} name a dimension twice")
    return out


def unsqueezed_shape(shape: Sequence[int], axes: Sequence[int] | None) -> list[int]:
    """Unsqueeze: `axes` index the result (rank + len(axes)) and get a size-1 dimension."""
    if axes is None:
        raise NodeError("Unsqueeze needs axes")
    out = list(shape)
    for a in sorted(normalize_axes(axes, len(shape) + len(axes))):
        out.insert(a, 1)
    return out


def squeezed_shape(shape: Sequence[int], axes: Sequence[int] | None) -> list[int]:
    """Squeeze: `shape` without `axes` (each of size 1), or without every size-1 dimension."""
    if axes is None:
        return [d for d in shape if d != 1]
    drop = set(normalize_axes(axes, len(shape)))
    if any(shape[a] != 1 for a in drop):
        raise NodeError(f"Squeeze of axes {list(axes)} of shape {list(shape)}: a squeezed dimension is not 1")
    return [d for k, d in enumerate(shape) if k not in drop]


def flattened_shape(shape: Sequence[int], axis: int) -> list[int]:
    """Flatten: [product of the dimensions before `axis`, product of the rest]; `axis` in [-rank, rank]."""
    axis = normalize_axis(axis, len(shape), between=True)
    return [math.prod(shape[:axis]), math.prod(shape[axis:])]


def range_values(start: np.ndarray, limit: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """Range: start + k * delta for k < ceil((limit - start) / delta), in start's type."""
    return np.arange(start, limit, delta).astype(start.dtype)


def resize_source(mode: str, size: int, out: int, scale: float, roi: tuple[float, float] = (0.0, 1.0)) -> np.ndarray:
    """Resize's source coordinate of each of `out` output positions (float64, as ONNX's reference);
    `tf_crop_and_resize` spans the crop `roi` (start, end) of the input (fractions of its `size - 1`), in
    roi's own type where the reference computes in it."""
    y, width = np.arange(out, dtype=np.float64), scale * size
    if mode == "tf_crop_and_resize":
        start, end = roi
        span = np.full(out, (end - start) * (size - 1) / 2) if width == 1 else y * (end - start) * (size - 1) / (
            width - 1)
        return span + start * (size - 1)
    if mode == "align_corners":
        return np.zeros(out) if width == 1 else y * (size - 1) / (width - 1)
    if mode == "asymmetric":
        return y / scale
    if mode == "pytorch_half_pixel":
        return np.full(out, -0.5) if width == 1 else (y + 0.5) / scale - 0.5
    if mode == "half_pixel":
        return (y + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        return size / 2 * (1 - out / width) + (y + 0.5) / scale - 0.5
    raise NodeError(f"coordinate_transformation_mode '{mode}' is not supported")


def _cubic(ratio: float, scale: float, a: float, antialias: bool) -> np.ndarray:
    """The cubic convolution weights of the taps around a source coordinate (ONNX's reference): 4 taps,
    or with `antialias` when downsampling as many as the stretched kernel covers, normalised."""
    if not antialias:
        return np.array([((a * (ratio + 1) - 5 * a) * (ratio + 1) + 8 * a) * (ratio + 1) - 4 * a,
                         ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1,
                         ((a + 2) * (1 - ratio) - (a + 3)) * (1 - ratio) * (1 - ratio) + 1,
                         ((a * (2 - ratio) - 5 * a) * (2 - ratio) + 8 * a) * (2 - ratio) - 4 * a])
    scale = min(scale, 1.0)
    start = int(np.floor(-2 / scale) + 1)
    t = np.abs(scale * (np.arange(start, 2 - start) - ratio))
    w = np.where(t <= 1, (a + 2) * t ** 3 - (a + 3) * t ** 2 + 1,
                 np.where(t < 2, a * t ** 3 - 5 * a * t ** 2 + 8 * a * t - 4 * a, 0.0))
    return w / w.sum()


def _linear_antialias(ratio: float, scale: float) -> np.ndarray:
    scale = min(scale, 1.0)
    start = int(np.floor(-1 / scale) + 1)
    w = np.clip(1 - np.abs((np.arange(start, 2 - start) - ratio) * scale), 0, 1)
    return w / w.sum()


def resize_weights(mode: str, source: np.ndarray, size: int, scale: float, cubic_a: float = -0.75,
                   exclude_outside: bool = False, antialias: bool = False) -> np.ndarray:
    """The [len(source), size] matrix of a cubic (or antialiased linear) Resize along one axis, as ONNX's
    reference computes each output: the taps nearest the source coordinate (the left one first), indices
    past an end reading the end element, and their weights (`exclude_outside`: those outside the input
    dropped and the rest renormalised)."""
    matrix = np.zeros((len(source), size))
    for row, x in enumerate(source):
        base = math.floor(x)
        ratio = 1.0 if x == base else x - base
        weights = _cubic(ratio, scale, cubic_a, antialias) if mode == "cubic" else _linear_antialias(ratio, scale)
        n, pad = len(weights), -(-len(weights) // 2)
        near = range(max(base + pad - n, 0), min(base + pad + n + 2, size + 2 * pad))
        taps = np.array(sorted(sorted(near, key=lambda i: (abs(x + pad - i), i))[:n])) - pad
        if exclude_outside:
            weights = np.where((taps < 0) | (taps >= size), 0.0, weights)
            weights = weights / weights.sum()
        np.add.at(matrix[row], np.clip(taps, 0, size - 1), weights)
    return matrix

