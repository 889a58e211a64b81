"""The ONNX importer's shape and indexing operators: Reshape, Flatten,
(Un)Squeeze, Range, Split, Tile, Pad, Transpose, Expand, Concat, Slice, the
Gathers, CumSum and Resize."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    FloatAttr,
    IntegerAttr,
    TensorType,
    f16,
    f32,
    f64,
    i64,
)
from xdsl.ir import SSAValue

from dfc.compiler.interpreter import dtype_of
from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_indexing as nni
from dfc.dialects import nn_shape as nns
from dfc.importers.onnx_common import (
    NodeError,
    flattened_shape,
    normalize_axes,
    normalize_axis,
    range_values,
    resize_source,
    resize_weights,
    squeezed_shape,
    tensor_of,
    unsqueezed_shape,
)
from dfc.importers.onnx_dynamic_ops import DynamicOps


class ShapeOps(DynamicOps):
    """Shape and indexing `op_<Type>` methods, mixed into `OnnxImporter`
    (whose `value`, `ins`, `constant` and `known` they use)."""

    def _reshape(self, x: SSAValue, shape: Sequence[int]) -> SSAValue:
        return x if list(tensor_of(x).get_shape()) == list(shape) else self.ins(nn.ReshapeOp(x, shape))

    def op_Reshape(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x, target = self.value(node.input[0]), self.known(node.input[1])
        return [self._reshape(x, self._reshape_target(tensor_of(x).get_shape(), target, attrs.get("allowzero")))]

    def op_Flatten(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x = self.value(node.input[0])
        return [self._reshape(x, flattened_shape(tensor_of(x).get_shape(), attrs["axis"]))]

    def op_Unsqueeze(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x = self.value(node.input[0])
        return [self._reshape(x, unsqueezed_shape(tensor_of(x).get_shape(), self._axes(node, attrs)))]

    def op_Squeeze(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x = self.value(node.input[0])
        return [self._reshape(x, squeezed_shape(tensor_of(x).get_shape(), self._axes(node, attrs)))]

    def op_ConstantOfShape(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The shape input sets the shape, so it must be known; `fold` computes the node then."""
        self.known(node.input[0])
        return [self.constant(self.fold(node, attrs)[0])]

    def op_Range(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Range's length is its inputs' values, so they must be known at import time."""
        return [self.constant(range_values(*(self.known(n) for n in node.input)))]

    def op_Split(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Slices along `axis` of the sizes given (the `split` input or attribute), else `num_outputs`
        (or one per output) parts of ceil(d / n) elements, the last one smaller."""
        x = self.value(node.input[0])
        shape = tensor_of(x).get_shape()
        axis = normalize_axis(attrs["axis"], len(shape))
        d = shape[axis]
        if len(node.input) > 1 and node.input[1]:
            sizes = [int(n) for n in self.known(node.input[1]).reshape(-1)]
        elif "split" in attrs:
            sizes = list(attrs["split"])
        else:
            n = attrs.get("num_outputs") or len(node.output)
            part = -(-d // n)
            sizes = [max(0, min(part, d - k * part)) for k in range(n)]
        if sum(sizes) != d or len(sizes) != len(node.output) or min(sizes) < 0:
            raise NodeError(f"Split of a dimension of {d} into {sizes} for {len(node.output)} outputs")
        outputs, start = [], 0
        for size in sizes:
            lo = [start if k == axis else 0 for k in range(len(shape))]
            hi = [start + size if k == axis else n for k, n in enumerate(shape)]
            outputs.append(self.ins(nns.SliceOp(x, lo, hi, [1] * len(shape))))
            start += size
        return outputs

    def op_Tile(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """x repeated `repeats[k]` times along each dimension k: (1, d0, 1, d1, ...) broadcast to
        (r0, d0, r1, d1, ...), then merged."""
        x = self.value(node.input[0])
        shape = tensor_of(x).get_shape()
        repeats = [int(r) for r in self.known(node.input[1]).reshape(-1)]
        if len(repeats) != len(shape) or min(repeats, default=0) < 0:
            raise NodeError(f"Tile of a rank-{len(shape)} tensor by repeats {repeats}")
        y = self._reshape(x, [n for d in shape for n in (1, d)])
        y = self.ins(nn.BroadcastOp(y, [n for r, d in zip(repeats, shape) for n in (r, d)]))
        return [self._reshape(y, [r * d for r, d in zip(repeats, shape)])]

    def op_Pad(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """`pads` (begin values, then end values, of `axes` or every dimension) in `mode` constant (the
        `constant_value`, default 0), edge, reflect or wrap; negative pads crop."""
        x = self.value(node.input[0])
        shape = tensor_of(x).get_shape()
        rank = len(shape)
        pads = [int(p) for p in (self.known(node.input[1]).reshape(-1) if len(node.input) > 1 else attrs["pads"])]
        axes = list(range(rank))
        if len(node.input) > 3 and node.input[3]:
            axes = normalize_axes(self.known(node.input[3]).reshape(-1).tolist(), rank)
        if len(pads) != 2 * len(axes):
            raise NodeError(f"Pad with {len(pads)} pads for {len(axes)} axes")
        low, high = [0] * rank, [0] * rank
        for k, a in enumerate(axes):
            low[a], high[a] = pads[k], pads[k + len(axes)]
        e = tensor_of(x).element_type
        mode = attrs["mode"]
        if mode == "constant":
            if len(node.input) > 2 and node.input[2]:
                value = self._reshape(self.value(node.input[2]), [])
            elif "value" in attrs:
                value = self.constant(np.array(attrs["value"], dtype_of(e)))
            else:
                value = self.ins(nn.FullOp(FloatAttr(0.0, e) if e in (f16, f32, f64) else IntegerAttr(0, e), []))
            return [self.ins(nns.PadOp(x, value, low, high, [0] * rank))]
        if mode not in ("edge", "reflect", "wrap"):
            raise NodeError(f"Pad mode '{mode}' is not supported")
        for a in range(rank):
            x = self._pad_axis(x, a, low[a], high[a], mode)
        return [x]

    def _cut(self, x: SSAValue, axis: int, start: int, stop: int) -> SSAValue:
        shape = tensor_of(x).get_shape()
        lo = [start if k == axis else 0 for k in range(len(shape))]
        hi = [stop if k == axis else n for k, n in enumerate(shape)]
        return self.ins(nns.SliceOp(x, lo, hi, [1] * len(shape)))

    def _pad_axis(self, x: SSAValue, axis: int, low: int, high: int, mode: str) -> SSAValue:
        """Pad (edge, reflect or wrap) along one axis, as a concatenation of slices of x."""
        d = tensor_of(x).get_shape()[axis]
        x = self._cut(x, axis, max(-low, 0), d - max(-high, 0))
        d = tensor_of(x).get_shape()[axis]
        low, high = max(low, 0), max(high, 0)
        if not low and not high:
            return x
        if mode == "reflect" and (low >= d or high >= d):
            raise NodeError(f"Pad mode 'reflect' of {max(low, high)} elements of a dimension of {d}")
        if mode == "wrap" and (low > d or high > d):
            raise NodeError(f"Pad mode 'wrap' of {max(low, high)} elements of a dimension of {d}")

        def edge(start: int, count: int) -> SSAValue:
            one = self._cut(x, axis, start, start + 1)
            shape = list(tensor_of(one).get_shape())
            shape[axis] = count
            return self.ins(nn.BroadcastOp(one, shape))

        parts = {
            "edge": (lambda: edge(0, low), lambda: edge(d - 1, high)),
            "reflect": (lambda: self.ins(nns.ReverseOp(self._cut(x, axis, 1, low + 1), [axis])),
                        lambda: self.ins(nns.ReverseOp(self._cut(x, axis, d - 1 - high, d - 1), [axis]))),
            "wrap": (lambda: self._cut(x, axis, d - low, d), lambda: self._cut(x, axis, 0, high)),
        }[mode]
        pieces = ([parts[0]()] if low else []) + [x] + ([parts[1]()] if high else [])
        return self.ins(nns.ConcatenateOp(pieces, axis))

    def op_Transpose(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x = self.value(node.input[0])
        rank = tensor_of(x).get_num_dims()
        perm = list(attrs["perm"]) if "perm" in attrs else list(range(rank - 1, -1, -1))
        if sorted(perm) != list(range(rank)):
            raise NodeError(f"Transpose perm {perm} is not a permutation of the {rank} dimensions")
        return [self.ins(nn.TransposeOp(x, perm))]

    def op_Expand(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x = self.value(node.input[0])
        shape = np.broadcast_shapes(tuple(tensor_of(x).get_shape()), tuple(self.known(node.input[1]).tolist()))
        return [x if tuple(tensor_of(x).get_shape()) == shape else self.ins(nn.BroadcastOp(x, shape))]

    @staticmethod
    def _check_concat_axis(attrs: dict[str, Any]) -> None:
        if "axis" not in attrs:  # optional before opset 4, its default only in prose
            raise NodeError("Concat without an axis attribute is not supported")

    def op_Concat(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        values = [self.value(n) for n in node.input if n]
        self._check_concat_axis(attrs)
        return [self.ins(nns.ConcatenateOp(values, normalize_axis(attrs["axis"], tensor_of(values[0]).get_num_dims())))]

    def op_Slice(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x = self.value(node.input[0])
        shape = tensor_of(x).get_shape()
        starts, limits, strides, reverse = [], [], [], []
        for k, (s, d) in enumerate(zip(self._slices(shape, node, attrs), shape)):
            start, stop, step = s.indices(d)
            if step < 0:  # a reversed slice: reverse, then slice forward
                reverse.append(k)
                start, stop, step = d - 1 - start, d - 1 - stop, -step
            starts.append(start)
            limits.append(max(start, stop))
            strides.append(step)
        if reverse:
            x = self.ins(nns.ReverseOp(x, reverse))
        return [self.ins(nns.SliceOp(x, starts, limits, strides))]

    def op_Gather(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """numpy's `take(data, indices, axis)`: a gather of size-1 slices along `axis`.

        Negative indices count from the end: known ones are wrapped now (outside
        [-size, size) a NodeError), others at run time (`indices + size` where
        `indices < 0`); a run-time index still outside [0, size) is clamped by
        `nn.gather` to the nearest end."""
        data = self.value(node.input[0])
        return [self.gather_along(data, node.input[1], normalize_axis(attrs["axis"], tensor_of(data).get_num_dims()))]

    def gather_along(self, data: SSAValue, name: str, axis: int) -> SSAValue:
        """`op_Gather`'s `take(data, indices, axis)` of the indices named `name`."""
        shape = tensor_of(data).get_shape()
        if name in self.consts:
            indices = self.constant(self._wrapped_indices(self.consts[name], shape[axis]))
        else:
            indices = self._wrap_negative(self.value(name), shape[axis])
        rank = tensor_of(indices).get_num_dims()
        dims = {
            "offset_dims": [*range(axis), *range(axis + rank, len(shape) - 1 + rank)],
            "collapsed_slice_dims": [axis],
            "start_index_map": [axis],
            "slice_sizes": [1 if k == axis else d for k, d in enumerate(shape)],
        }
        return self.ins(nni.GatherOp(data, indices, dims, rank))

    def _indices(self, name: str, sizes: Sequence[int]) -> SSAValue:
        """The integer tensor `name` with negative entries counted from the end, as i64: its last
        dimension's entries of `sizes[k]` elements (or all of `sizes[0]`, one size given)."""
        if name in self.consts:
            known = self.consts[name].astype(np.int64)
            size = np.array(sizes, np.int64) if len(sizes) > 1 else sizes[0]
            if known.size and ((known < -size) | (known >= size)).any():
                raise NodeError(f"an index of {known.reshape(-1).tolist()} is out of range for {list(sizes)}")
            return self.constant(np.where(known < 0, known + size, known))
        indices = self.value(name)
        if tensor_of(indices).element_type != i64:
            indices = self.ins(nne.ConvertOp(indices, i64))
        if len(sizes) == 1:
            return self._wrap_negative(indices, sizes[0])
        zero = self.ins(nn.FullOp(IntegerAttr(0, i64), []))  # type: ignore[arg-type]
        shifted = self.ins(nn.AddOp(indices, self.constant(np.array(sizes, np.int64))))
        return self.ins(nne.SelectOp(self.ins(nne.CompareOp(indices, zero, "LT")), shifted, indices))

    def _gather_elements(self, data: SSAValue, indices: SSAValue, axis: int) -> SSAValue:
        """out[..., i, ...] = data[..., indices[..., i, ...], ...] along `axis`: an `nn.gather` of single
        elements whose other dimensions are batching dimensions (indices of data's rank, i64)."""
        rank = tensor_of(data).get_num_dims()
        others = [k for k in range(rank) if k != axis]
        dims = {"collapsed_slice_dims": [axis], "operand_batching_dims": others, "start_indices_batching_dims": others,
                "start_index_map": [axis], "slice_sizes": [1] * rank}
        return self.ins(nni.GatherOp(data, indices, dims, rank))

    def op_GatherElements(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """out[i][j] = data[i][indices[i][j]] (axis 1): an `nn.gather` of single elements whose other
        dimensions are batching dimensions (data cropped to the indices' extent in them first)."""
        data = self.value(node.input[0])
        shape = tensor_of(data).get_shape()
        rank = len(shape)
        axis = normalize_axis(attrs["axis"], rank)
        index_shape = (self.consts[node.input[1]].shape if node.input[1] in self.consts
                       else tensor_of(self.value(node.input[1])).get_shape())
        if len(index_shape) != rank or any(i > d for k, (i, d) in enumerate(zip(index_shape, shape)) if k != axis):
            raise NodeError(f"GatherElements of {list(shape)} by indices of {list(index_shape)}")
        indices = self._indices(node.input[1], [shape[axis]])
        crop = [d if k == axis else i for k, (i, d) in enumerate(zip(index_shape, shape))]
        if crop != list(shape):
            data = self.ins(nns.SliceOp(data, [0] * rank, crop, [1] * rank))
        return [self._gather_elements(data, indices, axis)]

    def op_ReverseSequence(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Each batch element's first `sequence_lens[b]` steps along `time_axis` reversed, the rest kept:
        an `nn.gather` of single elements (as GatherElements) at step `where(t < L, L - 1 - t, t)`."""
        x = self.value(node.input[0])
        shape = list(tensor_of(x).get_shape())
        rank = len(shape)
        time, batch = attrs["time_axis"], attrs["batch_axis"]
        if rank < 2 or {time, batch} not in ({0, 1},):
            raise NodeError(f"ReverseSequence of {tensor_of(x)} with time_axis {time} and batch_axis {batch}")
        lengths = self._indices(node.input[1], [shape[time] + 1])
        if tensor_of(lengths).get_shape() != (shape[batch],):
            raise NodeError(f"ReverseSequence sequence_lens {tensor_of(lengths)} for a batch of {shape[batch]}")
        lengths = self._reshape(lengths, [shape[batch] if k == batch else 1 for k in range(rank)])
        steps = self.ins(nns.IotaOp(TensorType(i64, shape), time))
        one = self.ins(nn.FullOp(IntegerAttr(1, i64), []))  # type: ignore[arg-type]
        back = self.ins(nn.SubOp(self.ins(nn.SubOp(lengths, one)), steps))
        index = self.ins(nne.SelectOp(self.ins(nne.CompareOp(steps, self.ins(nn.BroadcastOp(lengths, shape)), "LT")),
                                      back, steps))
        return [self._gather_elements(x, index, time)]

    def op_TensorScatter(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The cache with each batch element's update written along `axis` from `write_indices[b]` (0 when
        absent; 'circular': modulo the cache's length, wrapping). Built as its inverse, a gather: cache
        position p reads the update at offset p - w (mod the length), where that offset is below the
        update's length, and keeps the cache elsewhere."""
        cache, update = self.value(node.input[0]), self.value(node.input[1])
        shape, rank = list(tensor_of(cache).get_shape()), tensor_of(cache).get_num_dims()
        axis = normalize_axis(attrs["axis"], rank)
        mode = attrs["mode"]
        if axis == 0 or mode not in ("linear", "circular") or tensor_of(update).element_type != tensor_of(
                cache).element_type or [d for k, d in enumerate(tensor_of(update).get_shape()) if k != axis] != [
                d for k, d in enumerate(shape) if k != axis] or tensor_of(update).get_shape()[axis] > shape[axis]:
            raise NodeError(f"TensorScatter of {tensor_of(update)} into {tensor_of(cache)} along axis {axis} "
                            f"in mode '{mode}'")
        length, written = shape[axis], tensor_of(update).get_shape()[axis]
        if len(node.input) > 2 and node.input[2]:
            start = self._reshape(self._indices(node.input[2], [2 ** 62]), [shape[0]] + [1] * (rank - 1))
        else:
            start = self.constant(np.zeros([1] * rank, np.int64))
        positions = self.ins(nns.IotaOp(TensorType(i64, shape), axis))
        zero, size = (self.ins(nn.FullOp(IntegerAttr(v, i64), [])) for v in (0, length))  # type: ignore[arg-type]
        if mode == "circular":
            start = self.ins(nne.RemainderOp(start, size))
            offset = self.ins(nne.RemainderOp(self.ins(nn.AddOp(self.ins(nn.SubOp(positions, start)), size)), size))
        else:
            offset = self.ins(nn.SubOp(positions, start))
        last = self.ins(nn.FullOp(IntegerAttr(written - 1, i64), []))  # type: ignore[arg-type]
        inside = self.ins(nne.AndOp(self.ins(nne.CompareOp(offset, zero, "GE")),
                                    self.ins(nne.CompareOp(offset, last, "LE"))))
        index = self.ins(nne.ClampOp(zero, offset, last))
        return [self.ins(nne.SelectOp(inside, self._gather_elements(update, index, axis), cache))]

    def op_GatherND(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """data indexed by the vectors along the indices' last dimension (after `batch_dims` shared leading
        dimensions): an `nn.gather` of the slices of data's remaining dimensions."""
        data = self.value(node.input[0])
        shape = tensor_of(data).get_shape()
        index_shape = (self.consts[node.input[1]].shape if node.input[1] in self.consts
                       else tensor_of(self.value(node.input[1])).get_shape())
        b, k, q = attrs.get("batch_dims", 0), index_shape[-1], len(index_shape)  # opset 12 on
        if b + k > len(shape) or list(index_shape[:b]) != list(shape[:b]):
            raise NodeError(f"GatherND of {list(shape)} by indices of {list(index_shape)} (batch_dims {b})")
        indices = self._indices(node.input[1], shape[b:b + k])
        batch = list(range(b))
        dims = {"offset_dims": list(range(q - 1, q - 1 + len(shape) - b - k)),
                "collapsed_slice_dims": list(range(b, b + k)), "operand_batching_dims": batch,
                "start_indices_batching_dims": batch, "start_index_map": list(range(b, b + k)),
                "slice_sizes": [1] * (b + k) + list(shape[b + k:])}
        return [self.ins(nni.GatherOp(data, indices, dims, q - 1))]

    def _scatter_kind(self, node: Any, attrs: dict[str, Any]) -> str:
        """`nn.scatter`'s kind of the node's `reduction` (none, add, mul, max, min; max and min not of
        unsigned integers)."""
        reduction = attrs["reduction"] if "reduction" in attrs else "none"  # an attribute from opset 16 on
        if reduction not in ("none", "add", "mul", "max", "min"):
            raise NodeError(f"{node.op_type} with reduction '{reduction}' is not supported")
        if reduction in ("max", "min") and self.unsigned_inputs - {1}:
            raise NodeError(f"{node.op_type} with reduction '{reduction}' of unsigned integers is not supported")
        return "replace" if reduction == "none" else reduction

    def op_ScatterND(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """data with the slices `updates[i...]` written (or added) at the positions `indices[i...]` (vectors
        of k leading coordinates, negative ones counted from the end): an `nn.scatter` of windows of data's
        remaining dimensions."""
        data, updates = self.value(node.input[0]), self.value(node.input[2])
        shape = tensor_of(data).get_shape()
        index_shape = (self.consts[node.input[1]].shape if node.input[1] in self.consts
                       else tensor_of(self.value(node.input[1])).get_shape())
        k, q = index_shape[-1], len(index_shape)
        if k > len(shape) or list(tensor_of(updates).get_shape()) != [*index_shape[:-1], *shape[k:]]:
            raise NodeError(f"ScatterND of {list(shape)} by indices of {list(index_shape)} and updates of "
                            f"{list(tensor_of(updates).get_shape())}")
        indices = self._indices(node.input[1], shape[:k])
        dims = {"update_window_dims": list(range(q - 1, q - 1 + len(shape) - k)),
                "inserted_window_dims": list(range(k)), "scatter_dims_to_operand_dims": list(range(k))}
        return [self.ins(nni.ScatterOp(data, indices, updates, self._scatter_kind(node, attrs), dims, q - 1))]

    def op_ScatterElements(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """data with `updates[i][j]` written (or added) at data[i][indices[i][j]] (axis 1): an `nn.scatter` of
        single elements at full coordinates, the index along `axis` and each other dimension's position."""
        data, updates = self.value(node.input[0]), self.value(node.input[2])
        shape = tensor_of(data).get_shape()
        rank = len(shape)
        axis = normalize_axis(attrs["axis"], rank)
        index_shape = list(tensor_of(updates).get_shape())
        if len(index_shape) != rank or any(i > d for k, (i, d) in enumerate(zip(index_shape, shape)) if k != axis):
            raise NodeError(f"ScatterElements of {list(shape)} by updates of {index_shape}")
        along = self._reshape(self._indices(node.input[1], [shape[axis]]), [*index_shape, 1])
        coordinates = [along if k == axis else self.ins(nns.IotaOp(TensorType(i64, [*index_shape, 1]), k))
                       for k in range(rank)]
        indices = self.ins(nns.ConcatenateOp(coordinates, rank)) if rank > 1 else along
        dims = {"inserted_window_dims": list(range(rank)), "scatter_dims_to_operand_dims": list(range(rank))}
        return [self.ins(nni.ScatterOp(data, indices, updates, self._scatter_kind(node, attrs), dims, rank))]

    op_Scatter = op_ScatterElements  # its name before opset 11

    def _wrap_negative(self, indices: SSAValue, size: int) -> SSAValue:
        """`indices < 0 ? indices + size : indices`, elementwise on the integer tensor."""
        e = tensor_of(indices).element_type
        zero = self.ins(nn.FullOp(IntegerAttr(0, e), []))  # type: ignore[arg-type]
        negative = self.ins(nne.CompareOp(indices, zero, "LT"))
        shifted = self.ins(nn.AddOp(indices, self.ins(nn.FullOp(IntegerAttr(size, e), []))))  # type: ignore[arg-type]
        return self.ins(nne.SelectOp(negative, shifted, indices))

    def _scan(self, node: Any, attrs: dict[str, Any], combine: type, identity: int) -> list[SSAValue]:
        """Prefix sums (products) along `axis` in log2(n) steps (x combined with x shifted by 1, 2, 4, ...,
        the identity shifted in); `reverse` scans from the end, `exclusive` leaves each element out of its own."""
        x = self.value(node.input[0])
        shape = tensor_of(x).get_shape()
        rank = len(shape)
        axis = normalize_axis(int(self.known(node.input[1]).reshape(-1)[0]), rank)
        e = tensor_of(x).element_type
        fill = self.ins(nn.FullOp(FloatAttr(float(identity), e) if e in (f16, f32, f64) else IntegerAttr(identity, e), []))

        def shifted(v: SSAValue, by: int) -> SSAValue:
            low = [by if k == axis else 0 for k in range(rank)]
            return self.ins(nns.PadOp(v, fill, low, [-n for n in low], [0] * rank))

        if attrs["reverse"]:
            x = self.ins(nns.ReverseOp(x, [axis]))
        if attrs["exclusive"]:
            x = shifted(x, 1)
        by = 1
        while by < shape[axis]:
            x = self.ins(combine(x, shifted(x, by)))
            by *= 2
        return [self.ins(nns.ReverseOp(x, [axis])) if attrs["reverse"] else x]

    def op_CumSum(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._scan(node, attrs, nn.AddOp, 0)

    def op_CumProd(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._scan(node, attrs, nn.MulOp, 1)

    def op_Trilu(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The elements of the last two dimensions with column - row >= k (`upper`) or <= k (lower), the
        others 0; `k` (default 0) may be a run-time value."""
        x = self.value(node.input[0])
        shape = list(tensor_of(x).get_shape())
        if len(shape) < 2:
            raise NodeError(f"Trilu of a rank-{len(shape)} tensor (needs 2 or more dimensions)")
        rows, cols = shape[-2:]
        diagonal = self.constant(np.arange(cols, dtype=np.int64)[None, :] - np.arange(rows, dtype=np.int64)[:, None])
        if len(node.input) > 1 and node.input[1]:
            k = self.value(node.input[1])
            if tensor_of(k).element_type != i64:
                raise NodeError(f"Trilu's k of {tensor_of(k)} (not int64)")
            k = self._reshape(k, [])
        else:
            k = self.ins(nn.FullOp(IntegerAttr(0, i64), []))  # type: ignore[arg-type]
        keep = self.ins(nne.CompareOp(diagonal, k, "GE" if attrs["upper"] else "LE"))
        return [self.ins(nne.SelectOp(keep, x, self.num(0, x)))]

    def op_DepthToSpace(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """[N, C, H, W] to [N, C / b^2, H b, W b]: channels split into (b, b, C / b^2) (`DCR`) or
        (C / b^2, b, b) (`CRD`), moved next to H and W and merged."""
        x = self.value(node.input[0])
        shape = list(tensor_of(x).get_shape())
        b = attrs["blocksize"]
        if len(shape) != 4 or shape[1] % (b * b):
            raise NodeError(f"DepthToSpace of {shape} with blocksize {b}")
        n, c, h, w = shape
        if attrs["mode"] == "DCR":
            y, perm = self._reshape(x, [n, b, b, c // (b * b), h, w]), [0, 3, 4, 1, 5, 2]
        elif attrs["mode"] == "CRD":
            y, perm = self._reshape(x, [n, c // (b * b), b, b, h, w]), [0, 1, 4, 2, 5, 3]
        else:
            raise NodeError(f"DepthToSpace mode '{attrs['mode']}' is not supported")
        return [self._reshape(self.ins(nn.TransposeOp(y, perm)), [n, c // (b * b), h * b, w * b])]

    def op_SpaceToDepth(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """[N, C, H, W] to [N, C b^2, H / b, W / b]: the b x b blocks moved ahead of the channels (`DCR`,
        the default) or after them (`CRD`), DepthToSpace's inverse."""
        x = self.value(node.input[0])
        shape = list(tensor_of(x).get_shape())
        b = attrs["blocksize"]
        if len(shape) != 4 or shape[2] % b or shape[3] % b:
            raise NodeError(f"SpaceToDepth of {shape} with blocksize {b}")
        mode = attrs["mode"] if "mode" in attrs else "DCR"  # an attribute from opset 28 on
        if mode not in ("DCR", "CRD"):
            raise NodeError(f"SpaceToDepth mode '{mode}' is not supported")
        n, c, h, w = shape
        perm = [0, 3, 5, 1, 2, 4] if mode == "DCR" else [0, 1, 3, 5, 2, 4]
        y = self.ins(nn.TransposeOp(self._reshape(x, [n, c, h // b, b, w // b, b]), perm))
        return [self._reshape(y, [n, c * b * b, h // b, w // b])]

    def op_OneHot(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """values[1] where the new dimension's position (at `axis`) equals the index (negative ones
        counted from the end; floats truncated), values[0] elsewhere; `depth` sets the shape, so it
        must be known."""
        indices = self.value(node.input[0])
        depth = int(self.known(node.input[1]).reshape(-1)[0])
        values = self.value(node.input[2])
        shape = list(tensor_of(indices).get_shape())
        axis = normalize_axis(attrs["axis"], len(shape) + 1)
        out = [*shape[:axis], depth, *shape[axis:]]
        if tensor_of(indices).element_type != i64:
            indices = self.ins(nne.ConvertOp(indices, i64))
        indices = self._reshape(self._wrap_negative(indices, depth), [*shape[:axis], 1, *shape[axis:]])
        hit = self.ins(nne.CompareOp(self.ins(nns.IotaOp(TensorType(i64, out), axis)), indices, "EQ"))
        off, on = (self._reshape(self.ins(nns.SliceOp(values, [k], [k + 1], [1])), []) for k in (0, 1))
        return [self.ins(nne.SelectOp(hit, on, off))]

    def op_EyeLike(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Ones on the k-th diagonal of the input's 2-D shape, of `dtype` or the input's type: a constant."""
        from onnx import helper

        x = self.value(node.input[0])
        shape = list(tensor_of(x).get_shape())
        if len(shape) != 2:
            raise NodeError(f"EyeLike of a rank-{len(shape)} tensor (needs 2 dimensions)")
        dtype = helper.tensor_dtype_to_np_dtype(attrs["dtype"]) if attrs.get("dtype") else dtype_of(
            tensor_of(x).element_type)
        self.unsigned_outputs = {0} if np.dtype(dtype).kind == "u" else set()
        return [self.constant(np.eye(*shape, k=attrs["k"], dtype=dtype))]

    def op_Upsample(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Upsample (deprecated since opset 10) in mode 'nearest' by whole-number scales: each element
        repeated `scale` times along each axis (a broadcast of a new axis, merged). Other modes and
        fractional scales are refused (Resize covers them)."""
        x = self.value(node.input[0])
        scales = [float(v) for v in (self.known(node.input[1]).reshape(-1) if len(node.input) > 1
                                     else attrs.get("scales", []))]
        shape = list(tensor_of(x).get_shape())
        if attrs["mode"] != "nearest" or len(scales) != len(shape) or any(
                v != int(v) or v < 1 for v in scales):
            raise NodeError(f"Upsample in mode '{attrs['mode']}' by scales {scales} (whole-number "
                            "scales in mode 'nearest' are supported)")
        for axis, scale in enumerate(int(v) for v in scales):
            if scale > 1:
                n = shape[axis]
                spread = self._reshape(x, shape[:axis + 1] + [1] + shape[axis + 1:])
                x = self.ins(nn.BroadcastOp(spread, shape[:axis + 1] + [scale] + shape[axis + 1:]))
                shape[axis] = n * scale
                x = self._reshape(x, shape)
        return [x]

    def op_Resize(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """`nearest`, `linear` or `cubic` resampling of each resized axis in turn (as ONNX's reference): the
        source coordinate of each output position by `coordinate_transformation_mode`, then its nearest
        element (`nearest_mode`) or its two neighbours weighted, indices clamped to the input (edge values);
        cubic (`cubic_coeff_a`, `exclude_outside`) and antialiased downsampling as a matrix of the
        reference's weights (`resize_weights`) applied along the axis. `tf_crop_and_resize` samples the
        crop `roi` (known at import time) and gives `extrapolation_value` where its coordinate along an axis
        falls outside the input.
        The output size is floor(size * scale) (`scales`) or `sizes` (with `keep_aspect_ratio_policy`)."""
        x = self.value(node.input[0])
        shape = list(tensor_of(x).get_shape())
        rank = len(shape)
        mode, coordinates = attrs["mode"], attrs.get("coordinate_transformation_mode")
        if self.opset < 11:
            raise NodeError("Resize before opset 11 is not supported")
        if mode not in ("nearest", "linear", "cubic"):
            raise NodeError(f"Resize with mode '{mode}' and coordinate_transformation_mode '{coordinates}' "
                            "is not supported (nearest, linear and cubic are)")
        axes = normalize_axes(attrs["axes"], rank) if "axes" in attrs else list(range(rank))
        scales_given = len(node.input) > 2 and node.input[2] and self.known(node.input[2]).size
        if scales_given:
            scales = [float(v) for v in self.known(node.input[2]).reshape(-1)]
            sizes = [int(scale * shape[a]) for scale, a in zip(scales, axes)]
        elif len(node.input) > 3 and node.input[3]:
            sizes = [int(v) for v in self.known(node.input[3]).reshape(-1)]
            scales = [n / shape[a] for n, a in zip(sizes, axes)]
            policy = attrs.get("keep_aspect_ratio_policy")  # opset 18 on
            if policy not in (None, "stretch"):
                scale = (min if policy == "not_larger" else max)(scales)
                scales = [scale] * len(axes)
                sizes = [int(math.floor(scale * shape[a] + 0.5)) for a in axes]
        else:
            raise NodeError("Resize needs scales or sizes")
        if len(sizes) != len(axes):
            raise NodeError(f"Resize with {len(sizes)} scales or sizes for {len(axes)} axes")
        crop = coordinates == "tf_crop_and_resize"
        roi = self.known(node.input[1]).reshape(-1) if crop and len(node.input) > 1 and node.input[
            1] else np.array([0.0] * len(axes) + [1.0] * len(axes))
        if crop and roi.size != 2 * len(axes):
            raise NodeError(f"Resize with a roi of {roi.size} values for {len(axes)} axes")
        for j, (axis, scale, out) in enumerate(zip(axes, scales, sizes)):
            if out == shape[axis] and scale == 1.0 and not crop:
                continue
            source = resize_source(coordinates, shape[axis], out, scale, (roi[j], roi[j + len(axes)]))
            floor = np.floor(source)
            below = floor.astype(np.int64)
            if mode == "cubic" or mode == "linear" and attrs.get("antialias") and scale < 1:
                weights = resize_weights(mode, source, shape[axis], scale, attrs["cubic_coeff_a"],
                                         bool(attrs.get("exclude_outside")), bool(attrs.get("antialias")))
                x = self._contract(x, axis, weights)
            elif mode == "nearest":
                ratio = source - floor
                up = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5, "floor": ratio < 0,
                      "ceil": ratio > 0}[attrs["nearest_mode"]]
                x = self._take(x, axis, np.clip(below + up, 0, shape[axis] - 1))
            else:
                e = tensor_of(x).element_type
                weight = (source - floor).astype(dtype_of(e))
                along = [out if k == axis else 1 for k in range(rank)]
                low = self._take(x, axis, np.clip(below, 0, shape[axis] - 1))
                high = self._take(x, axis, np.clip(below + 1, 0, shape[axis] - 1))
                low = self.ins(nn.MulOp(low, self.constant((1 - weight).reshape(along))))
                x = self.ins(nn.AddOp(low, self.ins(nn.MulOp(high, self.constant(weight.reshape(along))))))
            outside = (source < 0) | (source > shape[axis] - 1)
            shape[axis] = out
            if crop and outside.any():
                along = [out if d == axis else 1 for d in range(rank)]
                x = self.ins(nne.SelectOp(self.constant(outside.reshape(along)),
                                          self.scalar(attrs["extrapolation_value"], x), x))
        return [x]

    def _contract(self, x: SSAValue, axis: int, weights: np.ndarray) -> SSAValue:
        """x with dimension `axis` (of size n) replaced by the `weights` [m, n] times its vectors: the axis
        moved last, a matmul by the weights' transpose (in x's type), moved back."""
        shape = list(tensor_of(x).get_shape())
        perm = [k for k in range(len(shape)) if k != axis] + [axis]
        moved = self.ins(nn.TransposeOp(x, perm))
        rows = self._reshape(moved, [math.prod(shape) // shape[axis], shape[axis]])
        e = tensor_of(x).element_type
        product = self.ins(nn.MatmulOp(rows, self.constant(weights.T.astype(dtype_of(e)))))
        product = self._reshape(product, [shape[k] for k in perm[:-1]] + [weights.shape[0]])
        return self.ins(nn.TransposeOp(product, [perm.index(k) for k in range(len(shape))]))

    def _take(self, x: SSAValue, axis: int, indices: np.ndarray) -> SSAValue:
        """numpy's `take(x, indices, axis)` of known, in-range 1-D indices."""
        shape = tensor_of(x).get_shape()
        dims = {"offset_dims": [k for k in range(len(shape)) if k != axis], "collapsed_slice_dims": [axis],
                "start_index_map": [axis], "slice_sizes": [1 if k == axis else d for k, d in enumerate(shape)]}
        return self.ins(nni.GatherOp(x, self.constant(indices.astype(np.int64)), dims, 1))
