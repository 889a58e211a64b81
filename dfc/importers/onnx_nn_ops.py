"""The ONNX importer's network operators: MatMul, Gemm, Einsum, TopK, Conv,
pooling, reductions, (Log)Softmax and the normalizations."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
    f16,
    f32,
    f64,
    i1,
    i64,
)
from xdsl.ir import SSAValue

from dfc.compiler.interpreter import dtype_of
from dfc.dialects import nn
from dfc.dialects import nn_contract as nnc
from dfc.dialects import nn_conv as nnconv
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_shape as nns
from dfc.dialects import nn_window as nnw
from dfc.dialects.nn_sort import ArgsortOp, take_along
from dfc.importers.onnx_common import (
    NodeError,
    flattened_shape,
    normalize_axes,
    normalize_axis,
    tensor_of,
)


class NNOps:
    """Network `op_<Type>` methods, mixed into `OnnxImporter` (whose `value`,
    `ins`, `constant` and `known` they use)."""

    def op_MatMul(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """numpy's `matmul`: a 1-D operand is a row (lhs) or column (rhs) whose dimension is then
        dropped; batch dimensions broadcast."""
        a, b = (self.value(n) for n in node.input)
        return [self.matmul(a, b)]

    def matmul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """numpy's `matmul` of `a` and `b` (MatMul's)."""
        sa, sb = list(tensor_of(a).get_shape()), list(tensor_of(b).get_shape())
        if not sa or not sb:
            raise NodeError("MatMul of a 0-d tensor is not defined")
        row, column = len(sa) == 1, len(sb) == 1
        if row:
            a, sa = self._reshape(a, [1, *sa]), [1, *sa]
        if column:
            b, sb = self._reshape(b, [*sb, 1]), [*sb, 1]
        try:
            batch = list(np.broadcast_shapes(tuple(sa[:-2]), tuple(sb[:-2])))
        except ValueError:
            batch = None
        if batch is None or sa[-1] != sb[-2]:
            raise NodeError(f"MatMul of shapes {tensor_of(a).get_shape()} and {tensor_of(b).get_shape()}: they do not match")
        if len(sa) == 2 and len(sb) == 2:
            y = self.ins(nn.MatmulOp(a, b))
        elif len(sb) == 2:
            y = self.ins(nnc.DotGeneralOp(a, b, ((), ()), ((len(sa) - 1,), (0,))))
        else:
            if sa[:-2] != batch:
                a = self.ins(nn.BroadcastOp(a, [*batch, *sa[-2:]]))
            if sb[:-2] != batch:
                b = self.ins(nn.BroadcastOp(b, [*batch, *sb[-2:]]))
            dims = tuple(range(len(batch)))
            y = self.ins(nnc.DotGeneralOp(a, b, (dims, dims), ((len(batch) + 1,), (len(batch),))))
        out = [*batch, *([] if row else [sa[-2]]), *([] if column else [sb[-1]])]
        return self._reshape(y, out)

    def op_Gemm(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        a, b = self.value(node.input[0]), self.value(node.input[1])
        alpha, beta = attrs["alpha"], attrs["beta"]
        ta, tb = attrs["transA"], attrs["transB"]
        c = self.value(node.input[2]) if len(node.input) > 2 and node.input[2] else None
        if not ta and tb and alpha == 1.0 and beta == 1.0 and c is not None and tensor_of(c).get_num_dims() == 1:
            return [self.ins(nn.LinearOp(a, b, c))]
        y = self.ins(nnc.DotGeneralOp(a, b, ((), ()), ((0 if ta else 1,), (1 if tb else 0,))))
        if alpha != 1.0:
            y = self.ins(nn.MulOp(y, self.scalar(alpha, y)))
        if c is not None:
            if beta != 1.0:
                c = self.ins(nn.MulOp(c, self.scalar(beta, c)))
            y = self.ins(nn.AddOp(y, c))
        return [y]

    def op_Einsum(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """numpy's einsum of float operands: each operand's letters found only there and not in the output
        summed out, then the operands contracted left to right (`dot_general`: letters of both kept later are
        batch dimensions, the others contracted), then transposed to the output's order. An ellipsis
        stands for the same leading dimensions in every operand; a letter repeated in one operand takes its
        diagonal (`_diagonal`) first."""
        values = [self.value(n) for n in node.input]
        equation = attrs["equation"].replace(" ", "")
        lhs, arrow, out = equation.partition("->")
        terms = lhs.split(",")
        if len(terms) != len(values):
            raise NodeError(f"Einsum equation '{equation}' for {len(values)} operands")
        ellipsis = max((tensor_of(v).get_num_dims() - len(t.replace("...", "")) for t, v in zip(terms, values)
                        if "..." in t), default=0)
        fill = "".join(chr(0x100 + k) for k in range(ellipsis))
        terms = [t.replace("...", fill[len(fill) - (tensor_of(v).get_num_dims() - len(t) + 3):] if "..." in t else "")
                 for t, v in zip(terms, values)]
        if arrow:
            out = out.replace("...", fill)
        else:
            counts = Counter("".join(terms))
            out = fill + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in fill))
        sizes: dict[str, int] = {}
        for k, (t, v) in enumerate(zip(terms, values)):
            shape = tensor_of(v).get_shape()
            if len(t) != len(shape):
                raise NodeError(f"Einsum term '{t}' of a rank-{len(shape)} operand")
            for c, d in zip(t, shape):
                if sizes.setdefault(c, d) != d:
                    raise NodeError(f"Einsum letter '{c}' of sizes {sizes[c]} and {d}")
            values[k], terms[k] = self._diagonal(v, t)
        for k, (t, v) in enumerate(zip(terms, values)):
            elsewhere = set(out).union(*(terms[j] for j in range(len(terms)) if j != k))
            summed = [a for a, c in enumerate(t) if c not in elsewhere]
            if summed:
                values[k] = self.ins(nn.ReduceOp(v, "sum", summed))
                terms[k] = "".join(c for c in t if c in elsewhere)
        acc, letters = values[0], terms[0]
        for k in range(1, len(values)):
            later = set(out).union(*terms[k + 1:])
            both = [c for c in letters if c in terms[k]]
            batch = [c for c in both if c in later]
            contract = [c for c in both if c not in later]
            acc = self.ins(nnc.DotGeneralOp(
                acc, values[k], ([letters.index(c) for c in batch], [terms[k].index(c) for c in batch]),
                ([letters.index(c) for c in contract], [terms[k].index(c) for c in contract])))
            letters = "".join(batch) + "".join(c for c in letters if c not in both) + "".join(
                c for c in terms[k] if c not in both)
        if set(letters) != set(out):
            raise NodeError(f"Einsum equation '{equation}': output letters {out!r} not found once in the operands")
        perm = [letters.index(c) for c in out]
        return [acc if perm == sorted(perm) else self.ins(nn.TransposeOp(acc, perm))]

    def _diagonal(self, v: SSAValue, term: str) -> tuple[SSAValue, str]:
        """(`v`'s diagonal, its letters) for each letter repeated in `term`: its dimensions moved last,
        merged into one of n^k elements and sliced with a step of 1 + n + ... + n^(k-1) (the elements whose k
        indices are equal); the letter then comes last once."""
        for c in dict.fromkeys(term):
            places = [a for a, letter in enumerate(term) if letter == c]
            if len(places) == 1:
                continue
            rest = [a for a in range(len(term)) if a not in places]
            shape = tensor_of(v).get_shape()
            n, k = shape[places[0]], len(places)
            v = self._reshape(self.ins(nn.TransposeOp(v, rest + places)), [shape[a] for a in rest] + [n ** k])
            step = sum(n ** j for j in range(k))
            lead = [shape[a] for a in rest]
            v = self.ins(nns.SliceOp(v, [0] * (len(rest) + 1), [*lead, n ** k], [1] * len(rest) + [step]))
            term = "".join(term[a] for a in rest) + c
        return v, term

    def op_TopK(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The k largest (`largest`, else smallest) elements along `axis` and their indices, in order (also
        for `sorted` = 0, which leaves the order open), the lower index first among equal values: `nn.argsort`
        with `k` (unsigned integers by their unsigned values), the values gathered by its indices.
        Every element type; NaN counts as larger than every number."""
        x = self.value(node.input[0])
        t = tensor_of(x)
        shape = t.get_shape()
        self.unsigned_outputs = {0} if self.unsigned_inputs else set()
        axis = normalize_axis(attrs["axis"], len(shape))
        k = int(self.known(node.input[1]).reshape(-1)[0]) if len(node.input) > 1 else attrs["k"]
        if not 0 <= k <= shape[axis]:
            raise NodeError(f"TopK of {k} elements of a dimension of {shape[axis]}")
        if k == 0:
            empty = [0 if d == axis else n for d, n in enumerate(shape)]
            return [self.constant(np.zeros(empty, dtype_of(t.element_type))), self.constant(np.zeros(empty, np.int64))]
        indices = self.ins(ArgsortOp(x, axis, descending=bool(attrs.get("largest", 1)),
                                     unsigned=bool(self.unsigned_inputs), k=k))
        return [self.ins(take_along(x, indices, axis)), indices]

    def _spatial(self, attrs: dict[str, Any], sizes: list[int], kernel: list[int]) -> tuple[list[int], ...]:
        """(strides, low pads, high pads, dilations) of a convolution or pooling node over spatial `sizes`
        with a `kernel`: the explicit pads, or `auto_pad`'s: none (VALID), or ceil(size / stride) outputs
        with the padding needed split evenly, the odd one at the end (SAME_UPPER) or start (SAME_LOWER)."""
        spatial = len(sizes)
        strides = list(attrs.get("strides", [1] * spatial))
        dilations = list(attrs.get("dilations", [1] * spatial))
        auto = attrs["auto_pad"]
        if auto in ("NOTSET", "VALID"):
            pads = list(attrs.get("pads", [0] * (2 * spatial))) if auto == "NOTSET" else [0] * (2 * spatial)
            return strides, pads[:spatial], pads[spatial:], dilations
        if auto not in ("SAME_UPPER", "SAME_LOWER"):
            raise NodeError(f"auto_pad = {auto} is not supported")
        low, high = [], []
        for n, k, s, d in zip(sizes, kernel, strides, dilations):
            total = max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
            first = total // 2 if auto == "SAME_UPPER" else total - total // 2
            low.append(first)
            high.append(total - first)
        return strides, low, high, dilations

    def op_Conv(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x, w = self.value(node.input[0]), self.value(node.input[1])
        spatial = tensor_of(x).get_num_dims() - 2
        y = self.convolution(x, w, attrs)
        if len(node.input) > 2 and node.input[2]:
            bias = self.value(node.input[2])
            y = self.ins(nn.AddOp(y, self._reshape(bias, [tensor_of(bias).get_shape()[0]] + [1] * spatial)))
        return [y]

    def convolution(self, x: SSAValue, w: SSAValue, attrs: dict[str, Any]) -> SSAValue:
        """Conv of `x` by `w` without bias (`auto_pad`, `pads`, `strides`, `dilations`, `group`)."""
        spatial = tensor_of(x).get_num_dims() - 2
        strides, low, high, dilations = self._spatial(attrs, list(tensor_of(x).get_shape()[2:]),
                                                      list(tensor_of(w).get_shape()[2:]))
        layout = tuple(range(spatial + 2))
        return self.ins(nnconv.ConvolutionOp(x, w, (layout, layout, layout), (strides, low, high, dilations),
                                             attrs["group"]))

    def op_ConvTranspose(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The gradient of a convolution as a convolution: x with stride - 1 zeros between its elements,
        padded by (k - 1) d less `pads` (negative: cropped) plus `output_padding` at the end, convolved with
        the kernel flipped and its channel dimensions swapped within each group; `output_shape` (or
        auto_pad SAME_*) sets the pads, as the specification says."""
        x, w = self.value(node.input[0]), self.value(node.input[1])
        shape, kshape = tensor_of(x).get_shape(), tensor_of(w).get_shape()
        spatial = len(shape) - 2
        group = attrs["group"]
        kernel = list(attrs.get("kernel_shape", kshape[2:]))
        strides = list(attrs.get("strides", [1] * spatial))
        dilations = list(attrs.get("dilations", [1] * spatial))
        extra = list(attrs.get("output_padding", [0] * spatial))
        pads = list(attrs.get("pads", [0] * (2 * spatial)))
        spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
        auto = attrs["auto_pad"]
        if "output_shape" in attrs or auto in ("SAME_UPPER", "SAME_LOWER"):
            out = (list(attrs["output_shape"])[-spatial:] if "output_shape" in attrs
                   else [n * st for n, st in zip(shape[2:], strides)])
            pads = [0] * (2 * spatial)
            for k, (n, st, sp, e, o) in enumerate(zip(shape[2:], strides, spans, extra, out)):
                total = st * (n - 1) + e + sp - o
                first = total // 2 if auto == "SAME_UPPER" else total - total // 2
                pads[k], pads[k + spatial] = first, total - first
        elif auto not in ("NOTSET", "VALID"):
            raise NodeError(f"auto_pad = {auto} is not supported")
        c_in, c_out = kshape[0], kshape[1] * group
        if c_in != shape[1] or c_in % group:
            raise NodeError(f"ConvTranspose of {tensor_of(x)} by a kernel of {tensor_of(w)} in {group} groups")
        flipped = self._reshape(w, [group, c_in // group, kshape[1], *kshape[2:]])
        flipped = self.ins(nn.TransposeOp(flipped, [0, 2, 1, *range(3, 3 + spatial)]))
        flipped = self._reshape(flipped, [c_out, c_in // group, *kshape[2:]])
        flipped = self.ins(nns.ReverseOp(flipped, list(range(2, 2 + spatial))))
        low = [sp - 1 - p for sp, p in zip(spans, pads[:spatial])]
        high = [sp - 1 - p + e for sp, p, e in zip(spans, pads[spatial:], extra)]
        zero = self.scalar(0.0, x)
        spread = self.ins(nns.PadOp(x, zero, [0, 0, *low], [0, 0, *high], [0, 0, *[st - 1 for st in strides]]))
        layout = tuple(range(spatial + 2))
        y = self.ins(nnconv.ConvolutionOp(spread, flipped, (layout, layout, layout),
                                          ([1] * spatial, [0] * spatial, [0] * spatial, dilations), group))
        if len(node.input) > 2 and node.input[2]:
            y = self.ins(nn.AddOp(y, self._reshape(self.value(node.input[2]), [c_out] + [1] * spatial)))
        return [y]

    def _pool(self, node: Any, attrs: dict[str, Any], kind: str, x: SSAValue | None = None) -> list[SSAValue]:
        """A pooling window; with `ceil_mode` the output rounds up, but a last window must start inside the
        input or its low padding, and reaches into more high padding. A mean divides the window sum by the
        number of its elements inside the input (with `count_include_pad`: inside the input and its declared
        padding; never the padding `ceil_mode` adds), known at import time. `x`: the input, if not the node's."""
        x = self.value(node.input[0]) if x is None else x
        shape = tensor_of(x).get_shape()
        kernel = list(attrs["kernel_shape"])
        strides, low, high, dilations = self._spatial(attrs, list(shape[2:]), kernel)
        declared = list(high)
        if attrs.get("ceil_mode"):
            for k, (d, w, s, lo, hi, r) in enumerate(zip(shape[2:], kernel, strides, low, high, dilations)):
                span = (w - 1) * r + 1
                out = -(-(d + lo + hi - span) // s) + 1
                out -= (out - 1) * s >= d + lo
                high[k] = max(hi, (out - 1) * s + span - d - lo)
        window = ([1, 1, *kernel], [1, 1, *strides], [1, 1, *dilations], [0, 0, *low], [0, 0, *high])
        if len(node.output) > 1 and node.output[1]:
            return self._max_pool_indices(x, kernel, strides, dilations, low, high, attrs.get("storage_order", 0))
        if kind != "mean":
            return [self.ins(nnw.ReduceWindowOp(x, kind, *window))]
        count = np.ones([], np.float64)
        padded = attrs.get("count_include_pad")
        for n, k, st, d, lo, hi, extended in zip(shape[2:], kernel, strides, dilations, low, declared, high):
            starts = np.arange((n + lo + extended - (k - 1) * d - 1) // st + 1)[:, None] * st - lo
            positions = starts + np.arange(k)[None, :] * d
            inside = (positions >= (-lo if padded else 0)) & (positions < n + (hi if padded else 0))
            count = np.multiply.outer(count, inside.sum(1))
        if (count == math.prod(kernel)).all():  # every window whole: the window mean
            return [self.ins(nnw.ReduceWindowOp(x, "mean", *window))]
        total = self.ins(nnw.ReduceWindowOp(x, "sum", *window))
        return [self.ins(nn.DivOp(total, self.constant(count.astype(dtype_of(tensor_of(x).element_type)))))]

    def _max_pool_indices(self, x: SSAValue, kernel: list[int], strides: list[int], dilations: list[int],
                          low: list[int], high: list[int], storage_order: int) -> list[SSAValue]:
        """MaxPool's values and Indices as ONNX's reference scans each window: the first largest element
        inside the input (`>`, in row-major window order), its index into the flattened input (the
        spatial dimensions row-major, or column-major with `storage_order` 1). One strided slice of x per
        window offset, the running maximum and its index (a constant per offset) selected."""
        shape = tensor_of(x).get_shape()
        spatial = shape[2:]
        out = [(n + lo + hi - (k - 1) * d - 1) // s + 1
               for n, k, s, d, lo, hi in zip(spatial, kernel, strides, dilations, low, high)]
        order = range(len(spatial)) if storage_order == 0 else reversed(range(len(spatial)))
        place, step = [0] * len(spatial), 1
        for k in reversed(list(order)):
            place[k], step = step, step * spatial[k]
        e = tensor_of(x).element_type
        lowest = (FloatAttr(-math.inf, e) if isinstance(e, AnyFloat)  # type: ignore[arg-type]
                  else IntegerAttr(-(1 << (e.width.data - 1)), e))  # type: ignore[union-attr,arg-type]
        padded = self.ins(nns.PadOp(x, self.ins(nn.FullOp(lowest, [])), [0, 0, *low], [0, 0, *high],
                                    [0] * len(shape)))
        best = index = None
        for offset in np.ndindex(*kernel):
            starts = [o * d for o, d in zip(offset, dilations)]
            v = self.ins(nns.SliceOp(padded, [0, 0, *starts],
                                     [shape[0], shape[1], *[st + (n - 1) * s + 1 for st, n, s in zip(starts, out, strides)]],
                                     [1, 1, *strides]))
            positions = [np.arange(n) * s - lo + o * d for n, s, lo, o, d in zip(out, strides, low, offset, dilations)]
            inside = np.ones(out, bool)
            flat = np.zeros(out, np.int64)
            for k, p in enumerate(positions):
                along = [1] * len(out)
                along[k] = out[k]
                inside &= ((p >= 0) & (p < spatial[k])).reshape(along)
                flat += (p * place[k]).reshape(along)
            here = self.constant(np.where(inside, flat, -1).reshape([1, 1, *out]))
            if best is None:
                best, index = v, self.ins(nn.BroadcastOp(here, [shape[0], shape[1], *out]))
                continue
            unset = self.ins(nne.CompareOp(index, self.constant(np.array(0, np.int64)), "LT"))
            larger = self.ins(nne.OrOp(self.ins(nne.CompareOp(v, best, "GT")), unset))
            take = self.ins(nne.AndOp(larger, self.constant(inside.reshape([1, 1, *out]))))
            best = self.ins(nne.SelectOp(take, v, best))
            index = self.ins(nne.SelectOp(take, here, index))
        base = (np.arange(shape[0] * shape[1], dtype=np.int64) * math.prod(spatial)).reshape(
            [shape[0], shape[1]] + [1] * len(spatial))
        return [best, self.ins(nn.AddOp(index, self.constant(base)))]

    def op_MaxPool(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Max pooling (and its Indices); integers of up to 32 bits (int8, uint8, ...) pooled as the f64 of
        their values (exact; unsigned ones zero-extended), converted back to their bits."""
        x = self.value(node.input[0])
        e = tensor_of(x).element_type
        if isinstance(e, AnyFloat):
            return self._pool(node, attrs, "max")
        if e.width.data > 32:  # type: ignore[attr-defined]
            raise NodeError(f"MaxPool of {e} (integers of more than 32 bits) is not supported")
        value = self.zero_extended(x) if self.unsigned_inputs else x
        values, *indices = self._pool(node, attrs, "max", self.ins(nne.ConvertOp(value, f64)))
        self.unsigned_outputs = {0} if self.unsigned_inputs else set()
        return [self.ins(nne.ConvertOp(self.ins(nne.ConvertOp(values, i64)), e)), *indices]

    def op_AveragePool(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._pool(node, attrs, "mean")

    def _lp(self, x: SSAValue, p: int, total: Any) -> SSAValue:
        """(total(|x|^p))^(1/p)."""
        powered = self.ins(nne.PowerOp(self.ins(nne.AbsOp(x)), self.scalar(float(p), x)))
        return self.ins(nne.PowerOp(total(powered), self.scalar(1.0 / p, x)))

    def op_LpPool(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """(sum of |x|^p over each window)^(1/p); padding adds nothing."""
        if attrs.get("ceil_mode"):
            raise NodeError("LpPool with ceil_mode = 1 is not supported")
        x = self.value(node.input[0])
        shape = tensor_of(x).get_shape()
        kernel = list(attrs["kernel_shape"])
        strides, low, high, dilations = self._spatial(attrs, list(shape[2:]), kernel)
        return [self._lp(x, attrs["p"], lambda v: self.ins(nnw.ReduceWindowOp(
            v, "sum", [1, 1, *kernel], [1, 1, *strides], [1, 1, *dilations], [0, 0, *low], [0, 0, *high])))]

    def op_GlobalAveragePool(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x = self.value(node.input[0])
        return [self.ins(nn.ReduceOp(x, "mean", list(range(2, tensor_of(x).get_num_dims())), keepdims=True))]

    def _reduce(self, node: Any, attrs: dict[str, Any], kind: str) -> list[SSAValue]:
        """`kind` over the axes (attribute or input); none or an empty list means every axis,
        or none with `noop_with_empty_axes`. Max/min of booleans go through f32 0/1."""
        x = self.value(node.input[0])
        rank = tensor_of(x).get_num_dims()
        axes = self._axes(node, attrs)
        if not axes:
            if attrs.get("noop_with_empty_axes"):
                return [x]
            axes = list(range(rank))
        axes = normalize_axes(axes, rank)
        keepdims = bool(attrs["keepdims"])
        e = tensor_of(x).element_type
        if e == i1 and kind in ("max", "min"):
            r = self.ins(nn.ReduceOp(self.ins(nne.ConvertOp(x, f32)), kind, axes, keepdims=keepdims))
            return [self.ins(nne.CompareOp(r, self.scalar(0.5, r), "GT"))]
        if e not in (f16, f32, f64):
            raise NodeError(f"{node.op_type} of {tensor_of(x)} (not float) is not supported")
        return [self.ins(nn.ReduceOp(x, kind, axes, keepdims=keepdims))]

    def _reduced_axes(self, node: Any, attrs: dict[str, Any], x: SSAValue) -> list[int] | None:
        """The normalised axes a Reduce node reduces (None: none, with `noop_with_empty_axes`)."""
        rank = tensor_of(x).get_num_dims()
        axes = self._axes(node, attrs)
        if not axes:
            if attrs.get("noop_with_empty_axes"):
                return None
            axes = list(range(rank))
        return normalize_axes(axes, rank)

    def _reduce_float(self, node: Any, attrs: dict[str, Any], before: Any, kind: str, after: Any) -> list[SSAValue]:
        """`after(reduce(kind, before(x)))` over the node's axes, x float; with no axes (`noop_with_empty_axes`),
        `after(before(x))`, as ONNX's reference computes it."""
        x = self.value(node.input[0])
        if tensor_of(x).element_type not in (f16, f32, f64):
            raise NodeError(f"{node.op_type} of {tensor_of(x)} (not float) is not supported")
        axes = self._reduced_axes(node, attrs, x)
        y = before(x)
        if axes is not None:
            y = self.ins(nn.ReduceOp(y, kind, axes, keepdims=bool(attrs["keepdims"])))
        return [after(y)]

    def op_ReduceL1(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._reduce_float(node, attrs, lambda x: self.ins(nne.AbsOp(x)), "sum", lambda y: y)

    def op_ReduceL2(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._reduce_float(node, attrs, lambda x: self.ins(nn.MulOp(x, x)), "sum",
                                  lambda y: self.ins(nn.SqrtOp(y)))

    def op_ReduceSumSquare(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._reduce_float(node, attrs, lambda x: self.ins(nn.MulOp(x, x)), "sum", lambda y: y)

    def op_ReduceLogSum(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._reduce_float(node, attrs, lambda x: x, "sum", lambda y: self.ins(nn.LogOp(y)))

    def op_ReduceLogSumExp(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """m + log(sum(exp(x - m))) with m the maximum over the axes (0 where it is infinite: an empty or
        all -inf slice gives log(0) = -inf)."""
        x = self.value(node.input[0])
        if tensor_of(x).element_type not in (f16, f32, f64):
            raise NodeError(f"ReduceLogSumExp of {tensor_of(x)} (not float) is not supported")
        axes = self._reduced_axes(node, attrs, x)
        if axes is None:
            return [x]
        m = self.ins(nn.ReduceOp(x, "max", axes, keepdims=True))
        finite = self.ins(nne.CompareOp(self.ins(nn.SubOp(m, m)), self.scalar(0.0, m), "EQ"))
        m = self.ins(nne.SelectOp(finite, m, self.scalar(0.0, m)))
        total = self.ins(nn.ReduceOp(self.ins(nn.ExpOp(self.ins(nn.SubOp(x, m)))), "sum", axes, keepdims=True))
        y = self.ins(nn.AddOp(self.ins(nn.LogOp(total)), m))
        if not attrs["keepdims"]:
            y = self._reshape(y, [d for k, d in enumerate(tensor_of(x).get_shape()) if k not in axes])
        return [y]

    def op_ReduceProd(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The product over the axes, of any numeric type: the reduced axes moved last and merged, then
        halves multiplied until one element is left (an odd length padded with a 1)."""
        x = self.value(node.input[0])
        shape = list(tensor_of(x).get_shape())
        axes = self._reduced_axes(node, attrs, x)
        if axes is None:
            return [x]
        kept = [k for k in range(len(shape)) if k not in axes]
        if sorted(axes) != axes or kept != list(range(len(kept))):
            x = self.ins(nn.TransposeOp(x, kept + axes))
        outer = [shape[k] for k in kept]
        n = math.prod(shape[k] for k in axes)
        y = self._reshape(x, [*outer, n])
        one = self.num(1, y)
        if n == 0:
            y = self.ins(nn.BroadcastOp(self._reshape(one, [1] * (len(outer) + 1)), [*outer, 1]))
        while n > 1:
            if n % 2:
                y = self.ins(nns.PadOp(y, one, [0] * len(outer) + [0], [0] * len(outer) + [1], [0] * (len(outer) + 1)))
                n += 1
            half = n // 2
            lo = self.ins(nns.SliceOp(y, [0] * (len(outer) + 1), [*outer, half], [1] * (len(outer) + 1)))
            hi = self.ins(nns.SliceOp(y, [0] * len(outer) + [half], [*outer, n], [1] * (len(outer) + 1)))
            y, n = self.ins(nn.MulOp(lo, hi)), half
        out = [1 if k in axes else d for k, d in enumerate(shape)] if attrs["keepdims"] else outer
        return [self._reshape(y, out)]

    def _arg(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The index (i64) of the first largest (ArgMax) or smallest element along `axis`, or the last
        with `select_last_index` (argmax of the reversed axis, counted back); integers of up to 32 bits
        through f64 (exact)."""
        x = self.value(node.input[0])
        t = tensor_of(x)
        shape = list(t.get_shape())
        axis = normalize_axis(attrs["axis"], len(shape))
        self.unsigned_outputs = set()
        if t.element_type not in (f16, f32, f64):
            if not isinstance(t.element_type, IntegerType) or t.element_type.width.data > 32:
                raise NodeError(f"{node.op_type} of {t} is not supported (floats, and integers of up to 32 bits)")
            x = self.cast(x, bool(self.unsigned_inputs), f64, False)
        last = attrs.get("select_last_index", 0)  # opset 12 on
        if last:
            x = self.ins(nns.ReverseOp(x, [axis]))
        y = self.ins((nnc.ArgMaxOp if node.op_type == "ArgMax" else nnc.ArgMinOp)(x, axis))
        if last:
            y = self.ins(nn.SubOp(self.ins(nn.FullOp(IntegerAttr(shape[axis] - 1, i64), [])), y))
        return [self._reshape(y, [1 if k == axis else d for k, d in enumerate(shape)]) if attrs["keepdims"] else y]

    op_ArgMax = op_ArgMin = _arg

    def op_Hardmax(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """1 at the first largest element along `axis`, 0 elsewhere; before opset 13, along the last
        axis of the 2-D view [dimensions before `axis`, the rest]."""
        x = self.value(node.input[0])
        shape = list(tensor_of(x).get_shape())
        axis = normalize_axis(attrs["axis"], len(shape))
        view = x
        if self.opset < 13:
            view, axis = self._reshape(x, flattened_shape(shape, axis)), 1
        vshape = list(tensor_of(view).get_shape())
        index = self._reshape(self.ins(nnc.ArgMaxOp(view, axis)), [1 if k == axis else d for k, d in enumerate(vshape)])
        hit = self.ins(nne.CompareOp(self.ins(nns.IotaOp(TensorType(i64, vshape), axis)), index, "EQ"))
        return [self._reshape(self.ins(nne.ConvertOp(hit, tensor_of(x).element_type)), shape)]

    def op_LpNormalization(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """x divided by its L1 (p = 1) or L2 (p = 2) norm along `axis` (0 where the norm is 0, as ONNX's reference)."""
        x = self.value(node.input[0])
        axis = normalize_axis(attrs["axis"], tensor_of(x).get_num_dims())
        p = attrs["p"]
        if p not in (1, 2):
            raise NodeError(f"LpNormalization with p = {p} is not supported (1 and 2 are)")
        if p == 1:
            norm = self.ins(nn.ReduceOp(self.ins(nne.AbsOp(x)), "sum", [axis], keepdims=True))
        else:
            norm = self.ins(nn.SqrtOp(self.ins(nn.ReduceOp(self.ins(nn.MulOp(x, x)), "sum", [axis], keepdims=True))))
        zero = self.scalar(0.0, norm)
        return [self.ins(nne.SelectOp(self.ins(nne.CompareOp(norm, zero, "EQ")), zero, self.ins(nn.DivOp(x, norm))))]

    def op_GlobalMaxPool(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        x = self.value(node.input[0])
        return [self.ins(nn.ReduceOp(x, "max", list(range(2, tensor_of(x).get_num_dims())), keepdims=True))]

    def op_ReduceMean(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._reduce(node, attrs, "mean")

    def op_ReduceSum(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._reduce(node, attrs, "sum")

    def op_ReduceMax(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._reduce(node, attrs, "max")

    def op_ReduceMin(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._reduce(node, attrs, "min")

    def _softmax(self, node: Any, attrs: dict[str, Any], op: type) -> list[SSAValue]:
        """Along `axis`; before opset 13, over the 2-D view [dimensions before `axis`, the rest]."""
        x = self.value(node.input[0])
        shape = list(tensor_of(x).get_shape())
        axis = normalize_axis(attrs["axis"], len(shape))
        if self.opset >= 13 or axis == len(shape) - 1:
            return [self.ins(op(x, axis))]
        y = self.ins(op(self._reshape(x, flattened_shape(shape, axis)), 1))
        return [self._reshape(y, shape)]

    def op_Softmax(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._softmax(node, attrs, nn.SoftmaxOp)

    def op_LogSoftmax(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return self._softmax(node, attrs, nn.LogSoftmaxOp)

    def _normalize(self, x: SSAValue, mean: SSAValue, var: SSAValue, eps: float) -> SSAValue:
        centred = self.ins(nn.SubOp(x, mean))
        std = self.ins(nn.SqrtOp(self.ins(nn.AddOp(var, self.scalar(eps, var)))))
        return self.ins(nn.DivOp(centred, std))

    def op_LayerNormalization(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Normalised over the dimensions from `axis` on (in the input's type, whatever
        `stash_type`), scaled and shifted; the Mean and InvStdDev outputs keep those dimensions as 1."""
        x = self.value(node.input[0])
        rank = tensor_of(x).get_num_dims()
        axes = list(range(normalize_axis(attrs["axis"], rank), rank))
        mean = self.ins(nn.ReduceOp(x, "mean", axes, keepdims=True))
        centred = self.ins(nn.SubOp(x, mean))
        var = self.ins(nn.ReduceOp(self.ins(nn.MulOp(centred, centred)), "mean", axes, keepdims=True))
        std = self.ins(nn.SqrtOp(self.ins(nn.AddOp(var, self.scalar(attrs["epsilon"], var)))))
        y = self.ins(nn.MulOp(self.ins(nn.DivOp(centred, std)), self.value(node.input[1])))
        if len(node.input) > 2 and node.input[2]:
            y = self.ins(nn.AddOp(y, self.value(node.input[2])))
        if len(node.output) < 3 or not node.output[2]:
            return [y, mean]
        return [y, mean, self.ins(nn.DivOp(self.scalar(1.0, std), std))]

    def _nll(self, node: Any, attrs: dict[str, Any], logp: SSAValue) -> SSAValue:
        """NegativeLogLikelihoodLoss of `logp` [N, C, d...] (the node's targets [N, d...] and optional class
        weights): -logp[n, target, d...] * weight[target], 0 where the target is `ignore_index`; `reduction`
        none, sum, or mean (the sum over the sum of the weights taken; sums accumulate in the next wider
        float). The target's class is picked with a one-hot mask (a target outside [0, C) picks nothing)."""
        shape = list(tensor_of(logp).get_shape())
        if len(shape) < 2:
            raise NodeError(f"{node.op_type} of a rank-{len(shape)} input (needs [N, C, ...])")
        target = self.value(node.input[1])
        if list(tensor_of(target).get_shape()) != [shape[0], *shape[2:]]:
            raise NodeError(f"{node.op_type} targets of {tensor_of(target)} for scores of {tensor_of(logp)}")
        if tensor_of(target).element_type != i64:
            target = self.ins(nne.ConvertOp(target, i64))
        column = self._reshape(target, [shape[0], 1, *shape[2:]])
        hit = self.ins(nne.CompareOp(self.ins(nns.IotaOp(TensorType(i64, shape), 1)), column, "EQ"))
        zero = self.scalar(0.0, logp)
        picked = self.ins(nn.ReduceOp(self.ins(nne.SelectOp(hit, logp, zero)), "sum", [1]))
        weighted = len(node.input) > 2 and node.input[2]
        weight = None
        if weighted:
            w = self._reshape(self.value(node.input[2]), [1, shape[1]] + [1] * (len(shape) - 2))
            weight = self.ins(nn.ReduceOp(self.ins(nne.SelectOp(hit, w, zero)), "sum", [1]))
        ignore = attrs.get("ignore_index")
        if ignore is not None:
            kept = self.ins(nne.CompareOp(target, self.ins(nn.FullOp(IntegerAttr(ignore, i64), [])), "NE"))
            weight = self.ins(nne.SelectOp(kept, self.scalar(1.0, logp) if weight is None else weight, zero))
        loss = self.ins(nn.NegOp(picked))
        if weight is not None:
            loss = self.ins(nn.MulOp(loss, weight))
        reduction = attrs["reduction"]
        every = list(range(len(shape) - 1))
        if reduction == "none":
            return loss
        if reduction not in ("sum", "mean"):
            raise NodeError(f"{node.op_type} reduction '{reduction}' is not supported")
        e = tensor_of(loss).element_type
        wide = {f16: f32, f32: f64}.get(e, e)  # the sums accumulate in the next wider float

        def total(v: SSAValue, kind: str = "sum") -> SSAValue:
            return self.ins(nn.ReduceOp(v if wide == e else self.ins(nne.ConvertOp(v, wide)), kind, every))

        if reduction == "sum" or weight is None:
            y = total(loss, reduction)
        else:
            y = self.ins(nn.DivOp(total(loss), total(weight)))
        return y if wide == e else self.ins(nne.ConvertOp(y, e))

    def op_NegativeLogLikelihoodLoss(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        return [self._nll(node, attrs, self.value(node.input[0]))]

    def op_SoftmaxCrossEntropyLoss(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """NegativeLogLikelihoodLoss of log_softmax(scores) along the class dimension 1; the log
        probabilities are the optional second output."""
        scores = self.value(node.input[0])
        if tensor_of(scores).get_num_dims() < 2:
            raise NodeError(f"SoftmaxCrossEntropyLoss of {tensor_of(scores)} (needs [N, C, ...])")
        logp = self.ins(nn.LogSoftmaxOp(scores, 1))
        return [self._nll(node, attrs, logp), logp]

    def op_RMSNormalization(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """x / sqrt(mean(x^2 over the dimensions from `axis` on) + epsilon) * scale (in the input's type,
        whatever `stash_type`)."""
        x = self.value(node.input[0])
        rank = tensor_of(x).get_num_dims()
        axes = list(range(normalize_axis(attrs["axis"], rank), rank))
        square = self.ins(nn.ReduceOp(self.ins(nn.MulOp(x, x)), "mean", axes, keepdims=True))
        rms = self.ins(nn.SqrtOp(self.ins(nn.AddOp(square, self.scalar(attrs["epsilon"], square)))))
        return [self.ins(nn.MulOp(self.ins(nn.DivOp(x, rms)), self.value(node.input[1])))]

    def op_LRN(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """x / (bias + alpha / size * (sum of x^2 over the `size` channels around each))^beta, the window
        from c - floor((size - 1) / 2) to c + ceil((size - 1) / 2), cut at the ends."""
        x = self.value(node.input[0])
        rank = tensor_of(x).get_num_dims()
        size = attrs["size"]
        if rank < 3:
            raise NodeError(f"LRN of a rank-{rank} tensor (needs [N, C, ...])")
        window, ones = [1, size] + [1] * (rank - 2), [1] * rank
        low, high = [0, (size - 1) // 2] + [0] * (rank - 2), [0, size // 2] + [0] * (rank - 2)
        total = self.ins(nnw.ReduceWindowOp(self.ins(nn.MulOp(x, x)), "sum", window, ones, ones, low, high))
        base = self.ins(nn.AddOp(self.ins(nn.MulOp(total, self.scalar(attrs["alpha"] / size, x))),
                                 self.scalar(attrs["bias"], x)))
        return [self.ins(nn.DivOp(x, self.ins(nne.PowerOp(base, self.scalar(attrs["beta"], x)))))]

    def op_MeanVarianceNormalization(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """(x - mean) / (sqrt(mean(x^2) - mean^2) + 1e-9) over `axes` (default 0, 2, 3), as ONNX's function."""
        x = self.value(node.input[0])
        axes = normalize_axes(attrs["axes"], tensor_of(x).get_num_dims())
        mean = self.ins(nn.ReduceOp(x, "mean", axes, keepdims=True))
        square = self.ins(nn.ReduceOp(self.ins(nn.MulOp(x, x)), "mean", axes, keepdims=True))
        std = self.ins(nn.SqrtOp(self.ins(nn.SubOp(square, self.ins(nn.MulOp(mean, mean))))))
        return [self.ins(nn.DivOp(self.ins(nn.SubOp(x, mean)), self.ins(nn.AddOp(std, self.scalar(1e-9, std)))))]

    def op_InstanceNormalization(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Normalised over the spatial dimensions of each sample and channel, then scaled and shifted per channel."""
        x, scale, bias = (self.value(n) for n in node.input)
        shape = tensor_of(x).get_shape()
        axes = list(range(2, len(shape)))
        mean = self.ins(nn.ReduceOp(x, "mean", axes, keepdims=True))
        centred = self.ins(nn.SubOp(x, mean))
        var = self.ins(nn.ReduceOp(self.ins(nn.MulOp(centred, centred)), "mean", axes, keepdims=True))
        y = self._normalize(x, mean, var, attrs["epsilon"])
        scale, bias = (self._reshape(v, [shape[1]] + [1] * len(axes)) for v in (scale, bias))
        return [self.ins(nn.AddOp(self.ins(nn.MulOp(y, scale)), bias))]

    def op_GroupNormalization(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Normalised over each of `num_groups` groups of channels with their spatial dimensions, then
        scaled and shifted per channel (opset 21) or per group (opset 18, `scale` of num_groups elements)."""
        x, scale, bias = (self.value(n) for n in node.input)
        shape = tensor_of(x).get_shape()
        groups = attrs["num_groups"]
        if len(shape) < 2 or shape[1] % groups:
            raise NodeError(f"GroupNormalization of {list(shape)} into {groups} groups")
        grouped = self._reshape(x, [shape[0], groups, math.prod(shape[1:]) // groups])
        mean = self.ins(nn.ReduceOp(grouped, "mean", [2], keepdims=True))
        centred = self.ins(nn.SubOp(grouped, mean))
        var = self.ins(nn.ReduceOp(self.ins(nn.MulOp(centred, centred)), "mean", [2], keepdims=True))
        y = self._normalize(grouped, mean, var, attrs["epsilon"])
        per = tensor_of(scale).get_shape()[0]
        if per == groups and groups != shape[1]:
            scale, bias = (self._reshape(v, [groups, 1]) for v in (scale, bias))
            return [self._reshape(self.ins(nn.AddOp(self.ins(nn.MulOp(y, scale)), bias)), shape)]
        y = self._reshape(y, shape)
        scale, bias = (self._reshape(v, [per] + [1] * (len(shape) - 2)) for v in (scale, bias))
        return [self.ins(nn.AddOp(self.ins(nn.MulOp(y, scale)), bias))]

    def op_BatchNormalization(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Normalised per channel (dimension 1) by the running mean and variance, scaled and shifted; in
        `training_mode` (opset 14 on) by the batch's mean and biased variance over the other dimensions, the
        running statistics updated (`momentum`) as the second and third outputs."""
        training = bool(attrs.get("training_mode"))
        if any(node.output[1:]) and not training or attrs.get("is_test") == 0:
            raise NodeError("BatchNormalization in training mode before opset 14 (its saved statistics) is not "
                            "supported")
        x, scale, bias, mean, var = (self.value(n) for n in node.input)
        rank, channels = tensor_of(x).get_num_dims(), tensor_of(scale).get_shape()[0]
        per_channel = [channels] + [1] * (rank - 2)
        scale, bias = (self._reshape(v, per_channel) for v in (scale, bias))
        if not training:
            y = self._normalize(x, self._reshape(mean, per_channel), self._reshape(var, per_channel), attrs["epsilon"])
            return [self.ins(nn.AddOp(self.ins(nn.MulOp(y, scale)), bias))]
        axes = [0, *range(2, rank)]
        batch_mean = self.ins(nn.ReduceOp(x, "mean", axes, keepdims=True))
        centred = self.ins(nn.SubOp(x, batch_mean))
        batch_var = self.ins(nn.ReduceOp(self.ins(nn.MulOp(centred, centred)), "mean", axes, keepdims=True))
        y = self._normalize(x, batch_mean, batch_var, attrs["epsilon"])
        momentum = attrs["momentum"]
        running = [self.ins(nn.AddOp(self.ins(nn.MulOp(old, self.scalar(momentum, old))),
                                     self.ins(nn.MulOp(self._reshape(new, [channels]), self.scalar(1 - momentum, old)))))
                   for old, new in ((mean, batch_mean), (var, batch_var))]
        return [self.ins(nn.AddOp(self.ins(nn.MulOp(y, scale)), bias)), *running]
