"""The ONNX importer's crops and folds of images: CenterCropPad (one `nn.pad`, whose negative edges crop),
Col2Im (`nn.col2im`, the sum of columns of patches back into an image, shared with PyTorch's `col2im`) and
MaxUnpool (an `nn.scatter` of the pooled values to their flat indices)."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from dfc.compiler.interpreter import dtype_of
from dfc.dialects import nn_indexing as nni
from dfc.dialects import nn_shape as nns
from dfc.dialects.nn_conv import Col2ImOp
from dfc.importers.onnx_common import NodeError, normalize_axes, tensor_of


class ImageOps:
    """`op_CenterCropPad`, `op_Col2Im` and `op_MaxUnpool`, mixed into `OnnxImporter` (whose `value`, `ins`,
    `known`, `constant`, `_indices` and `_reshape` they use)."""

    def op_MaxUnpool(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Zeros of the shape MaxPool would have pooled from ((n - 1) stride - pads + kernel per spatial
        axis), with each value of X written at its index I into that tensor flattened (MaxPool's Indices);
        then padded with zeros at the end of each axis to `output_shape` when given."""
        x = self.value(node.input[0])
        shape = list(tensor_of(x).get_shape())
        kernel = list(attrs["kernel_shape"])
        spatial = len(kernel)
        if len(shape) != spatial + 2:
            raise NodeError(f"MaxUnpool of {tensor_of(x)} with a kernel of {kernel}")
        strides = list(attrs.get("strides", [1] * spatial))
        pads = list(attrs.get("pads", [0] * 2 * spatial))
        pooled = shape[:2] + [(n - 1) * s - (pads[k] + pads[spatial + k]) + kernel[k]
                              for k, (n, s) in enumerate(zip(shape[2:], strides))]
        total, count = int(np.prod(pooled)), int(np.prod(shape))
        indices = self._reshape(self._indices(node.input[1], [total]), [count, 1])
        zeros = self.constant(np.zeros(total, dtype_of(tensor_of(x).element_type)))
        dims = {"inserted_window_dims": [0], "scatter_dims_to_operand_dims": [0]}
        y = self._reshape(self.ins(nni.ScatterOp(zeros, indices, self._reshape(x, [count]), "replace", dims, 1)),
                          pooled)
        if len(node.input) > 2 and node.input[2]:
            target = [int(v) for v in self.known(node.input[2]).reshape(-1)]
            if len(target) != len(pooled) or any(t < p for t, p in zip(target, pooled)):
                raise NodeError(f"MaxUnpool output_shape {target} smaller than the unpooled {pooled}")
            zero = self.constant(np.zeros((), dtype_of(tensor_of(x).element_type)))
            y = self.ins(nns.PadOp(y, zero, [0] * len(pooled), [t - p for t, p in zip(target, pooled)],
                                   [0] * len(pooled)))
        return [y]

    def op_CenterCropPad(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Each axis of `axes` (default all) to the size in `shape`: a larger input cropped to its centred window
        (starting at `(size - target) // 2`), a smaller one padded with zeros (`(target - size) // 2` before,
        the rest after)."""
        x = self.value(node.input[0])
        t = tensor_of(x)
        rank = t.get_num_dims()
        target = [int(v) for v in self.known(node.input[1]).reshape(-1)]
        axes = normalize_axes(attrs["axes"], rank) if attrs.get("axes") else list(range(rank))
        if len(target) != len(axes) or len(set(axes)) != len(axes):
            raise NodeError(f"CenterCropPad needs one size per axis and distinct axes, got shape {target} for axes "
                            f"{axes}")
        if any(v < 0 for v in target):
            raise NodeError(f"CenterCropPad to a negative size: {target}")
        low, high = [0] * rank, [0] * rank
        for axis, size in zip(axes, target):
            grow = size - t.get_shape()[axis]
            low[axis] = grow // 2 if grow >= 0 else -(-grow // 2)
            high[axis] = grow - low[axis]
        zero = self.constant(np.zeros((), dtype_of(t.element_type)))
        return [self.ins(nns.PadOp(x, zero, low, high, [0] * rank))]

    def op_Col2Im(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """`nn.col2im` of the input (N, C * prod(block_shape), L) into (N, C, *image_shape): `image_shape` and
        `block_shape` known at import time; `pads` (begins then ends), `dilations` and `strides` per spatial
        dimension (default 0, 1, 1)."""
        x = self.value(node.input[0])
        image = [int(v) for v in self.known(node.input[1]).reshape(-1)]
        block = [int(v) for v in self.known(node.input[2]).reshape(-1)]
        rank = len(image)
        pads = list(attrs.get("pads") or [0] * 2 * rank)
        dilations = list(attrs.get("dilations") or [1] * rank)
        strides = list(attrs.get("strides") or [1] * rank)
        if len(block) != rank or len(pads) != 2 * rank or len(dilations) != rank or len(strides) != rank:
            raise NodeError(f"Col2Im of image_shape {image}: block_shape {block}, dilations {dilations} and strides "
                            f"{strides} need one entry per spatial dimension, pads {pads} two")
        return [self.ins(Col2ImOp(x, image, block, strides, pads[:rank], pads[rank:], dilations))]
