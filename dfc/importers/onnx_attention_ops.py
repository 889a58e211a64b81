"""The ONNX importer's Attention (opsets 23 to 25): scaled dot-product attention
of nn ops, as ONNX's specification and reference compute it; and RotaryEmbedding
(opset 23): slices, products and sums of the rotated halves, concatenated back."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from xdsl.dialects.builtin import AnyFloat, IntegerAttr, bf16, f16, f32, i64
from xdsl.ir import SSAValue

from dfc.compiler.interpreter import dtype_of
from dfc.dialects import nn
from dfc.dialects import nn_contract as nnc
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_shape as nns
from dfc.importers.onnx_common import NodeError, element_type, tensor_of


class AttentionOps:
    """`op_Attention` and `op_RotaryEmbedding`, mixed into `OnnxImporter` (whose `value`, `ins`, `constant`,
    `scalar` and `gather_along` they use)."""

    def _heads(self, x: SSAValue, heads: int) -> SSAValue:
        """[B, S, H * D] as [B, H, S, D]."""
        b, s, hidden = tensor_of(x).get_shape()
        if heads <= 0 or hidden % heads:
            raise NodeError(f"Attention: a hidden size of {hidden} for {heads} heads")
        return self.ins(nn.TransposeOp(self._reshape(x, [b, s, heads, hidden // heads]), [0, 2, 1, 3]))

    def _input(self, node: Any, k: int) -> SSAValue | None:
        return self.value(node.input[k]) if len(node.input) > k and node.input[k] else None

    def op_Attention(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """softmax(Q K^T * scale + bias) V per head, with the bias made of `attn_mask` (boolean: 0 where
        True, -inf elsewhere; padded with -inf to the keys' length), `is_causal` (key j attends query i
        when j <= i + offset, offset the cached length, or `nonpad_kv_seqlen` - q per batch), the sliding
        window (opset 25) and the `nonpad_kv_seqlen` padding; `softcap` before the bias; a query whose
        bias is -inf for every key gets 0. 3-D inputs [B, S, H * D] are split into `q_num_heads` and
        `kv_num_heads` heads; fewer key/value heads repeat (grouped-query attention). Q and K are each
        scaled by sqrt(scale) (default 1 / sqrt(D)), the softmax runs in `softmax_precision` when given;
        f16 and bf16 inputs are computed in f32 and the outputs rounded back.
        Outputs: Y, present_key, present_value (past concatenated with K, V) and `qk_matmul_output_mode`'s
        intermediate (0, 1: the scores after softcap; 2: with the bias; 3: the softmax)."""
        from onnx import helper

        q, k, v = (self.value(n) for n in node.input[:3])
        mask, past_key, past_value, nonpad = (self._input(node, j) for j in range(3, 7))
        e = tensor_of(q).element_type
        if not isinstance(e, AnyFloat):
            raise NodeError(f"Attention of {tensor_of(q)} (not float) is not supported")
        if e in (f16, bf16):  # computed in f32 (products and sums of f16 lose ~1e-3), the outputs rounded back
            q, k, v, mask, past_key, past_value = (
                t if t is None or tensor_of(t).element_type != e else self.ins(nne.ConvertOp(t, f32))
                for t in (q, k, v, mask, past_key, past_value))
        three_d = tensor_of(q).get_num_dims() == 3
        if three_d:
            if "q_num_heads" not in attrs or "kv_num_heads" not in attrs:
                raise NodeError("Attention of 3-D inputs needs q_num_heads and kv_num_heads")
            q = self._heads(q, attrs["q_num_heads"])
            k, v = self._heads(k, attrs["kv_num_heads"]), self._heads(v, attrs["kv_num_heads"])
        if any(tensor_of(t).get_num_dims() != 4 for t in (q, k, v)):
            raise NodeError("Attention needs Q, K and V of rank 3 or 4 (the same)")
        if (past_key is None) != (past_value is None) or (past_key is not None and nonpad is not None):
            raise NodeError("Attention needs past_key and past_value together, and not with nonpad_kv_seqlen")
        batch, heads, q_len, depth = tensor_of(q).get_shape()
        scale = attrs.get("scale")
        root = self.scalar(math.sqrt(1 / math.sqrt(depth) if scale is None else scale), q)
        if past_key is not None:
            k = self.ins(nns.ConcatenateOp([past_key, k], 2))
            v = self.ins(nns.ConcatenateOp([past_value, v], 2))
        present_key, present_value = k, v
        kv_len = tensor_of(k).get_shape()[2]
        kv_heads = tensor_of(k).get_shape()[1]
        if kv_heads != heads:
            if heads % kv_heads or tensor_of(v).get_shape()[1] != kv_heads:
                raise NodeError(f"Attention of {heads} query heads and {kv_heads} key/value heads")
            k, v = (self._repeat_heads(t, heads // kv_heads) for t in (k, v))

        bias = self._attention_bias(attrs, mask, nonpad, q, q_len, kv_len,
                                    tensor_of(past_key).get_shape()[2] if past_key is not None else 0)
        scores = self.ins(nnc.DotGeneralOp(self.ins(nn.MulOp(q, root)), self.ins(nn.MulOp(k, root)),
                                           ((0, 1), (0, 1)), ((3,), (3,))))
        if attrs["softcap"] > 0:
            cap = self.scalar(attrs["softcap"], scores)
            scores = self.ins(nn.MulOp(self.ins(nn.TanhOp(self.ins(nn.DivOp(scores, cap)))), cap))
        biased = scores if bias is None else self.ins(nn.AddOp(scores, bias))
        mode = attrs["qk_matmul_output_mode"]
        logits = biased
        if attrs.get("softmax_precision"):
            wide = element_type(helper.tensor_dtype_to_np_dtype(attrs["softmax_precision"]))
            if not isinstance(wide, AnyFloat):
                raise NodeError(f"Attention softmax_precision {wide} (not float)")
            if wide != e:
                logits = self.ins(nne.ConvertOp(logits, wide))
        weights = self.ins(nn.SoftmaxOp(logits, 3))
        if bias is not None:
            lost = self.ins(nne.CompareOp(self.ins(nn.ReduceOp(bias, "max", [tensor_of(bias).get_num_dims() - 1],
                                                               keepdims=True)),
                                          self.scalar(-math.inf, bias), "EQ"))
            weights = self.ins(nne.SelectOp(lost, self.scalar(0.0, weights), weights))
        if tensor_of(weights).element_type != tensor_of(q).element_type:
            weights = self.ins(nne.ConvertOp(weights, tensor_of(q).element_type))
        y = self.ins(nnc.DotGeneralOp(weights, v, ((0, 1), (0, 1)), ((3,), (2,))))
        if three_d:
            b, h, s, d = tensor_of(y).get_shape()
            y = self._reshape(self.ins(nn.TransposeOp(y, [0, 2, 1, 3])), [b, s, h * d])
        exposed = {0: scores, 1: scores, 2: biased, 3: weights}.get(mode)
        if exposed is None:
            raise NodeError(f"Attention qk_matmul_output_mode {mode} is not supported")
        if list(tensor_of(exposed).get_shape()) != list(tensor_of(scores).get_shape()):
            exposed = self.ins(nn.BroadcastOp(exposed, tensor_of(scores).get_shape()))
        outputs = [y, present_key, present_value, exposed]
        return [t if tensor_of(t).element_type == e else self.ins(nne.ConvertOp(t, e)) for t in outputs]

    def _repeat_heads(self, x: SSAValue, times: int) -> SSAValue:
        """[B, H, S, D] as [B, H * times, S, D], each head repeated in place (h0, h0, h1, h1, ...)."""
        b, h, s, d = tensor_of(x).get_shape()
        y = self.ins(nn.BroadcastOp(self._reshape(x, [b, h, 1, s, d]), [b, h, times, s, d]))
        return self._reshape(y, [b, h * times, s, d])

    def _attention_bias(self, attrs: dict[str, Any], mask: SSAValue | None, nonpad: SSAValue | None,
                        q: SSAValue, q_len: int, kv_len: int, cached: int) -> SSAValue | None:
        """The additive bias (0 or -inf where masked, or the float mask's values), broadcastable to
        [B, H, q, kv]; None when nothing masks."""
        inf = self.scalar(-math.inf, q)
        zero = self.scalar(0.0, q)
        bias = None
        if mask is not None:
            t = tensor_of(mask)
            if isinstance(t.element_type, AnyFloat):
                if t.element_type != tensor_of(q).element_type:
                    raise NodeError(f"Attention mask of {t} for Q of {tensor_of(q)}")
                bias = mask
            else:
                bias = self.ins(nne.SelectOp(mask, zero, inf))
            shape = list(tensor_of(bias).get_shape())
            if shape[-1] < kv_len:
                rank = len(shape)
                bias = self.ins(nns.PadOp(bias, inf, [0] * rank, [0] * (rank - 1) + [kv_len - shape[-1]], [0] * rank))
        causal, left = attrs["is_causal"], attrs.get("left_window_size", -1)
        right = attrs.get("right_window_size", -1)
        offset: SSAValue | None = None
        if nonpad is not None:
            lengths = self._reshape(nonpad, [tensor_of(nonpad).get_shape()[0], 1, 1, 1])
            if tensor_of(lengths).element_type != i64:
                lengths = self.ins(nne.ConvertOp(lengths, i64))
            offset = self.ins(nn.SubOp(lengths, self.ins(nn.FullOp(IntegerAttr(q_len, i64), []))))  # type: ignore[arg-type]
            keys = self.constant(np.arange(kv_len, dtype=np.int64).reshape(1, 1, 1, kv_len))
            padding = self.ins(nne.SelectOp(self.ins(nne.CompareOp(keys, lengths, "LT")), zero, inf))
        if causal or left >= 0 or right >= 0:
            diff = np.arange(q_len)[:, None] - np.arange(kv_len)[None, :] + (cached if offset is None else 0)
            if offset is None:  # every bound known now: the bias is a constant
                allowed = np.ones(diff.shape, bool)
                if causal:
                    allowed &= diff >= 0
                if left >= 0:
                    allowed &= diff <= left
                if right >= 0:
                    allowed &= diff >= -right
                piece = self.constant(np.where(allowed, 0.0, -np.inf).astype(dtype_of(tensor_of(q).element_type)))
            else:
                shifted = self.ins(nn.AddOp(self.constant(diff.astype(np.int64)), offset))
                allowed = None
                for on, bound, direction in ((causal, 0, "GE"), (left >= 0, left, "LE"), (right >= 0, -right, "GE")):
                    if on:
                        c = self.ins(nne.CompareOp(shifted, self.ins(nn.FullOp(IntegerAttr(bound, i64), [])),  # type: ignore[arg-type]
                                                   direction))
                        allowed = c if allowed is None else self.ins(nne.AndOp(allowed, c))
                piece = self.ins(nne.SelectOp(allowed, zero, inf))
            bias = piece if bias is None else self.ins(nn.AddOp(bias, piece))
        if nonpad is not None:
            bias = padding if bias is None else self.ins(nn.AddOp(bias, padding))
        return bias

    def op_RotaryEmbedding(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """X [B, H, S, D] (or [B, S, H * D] with `num_heads`) with its first `rotary_embedding_dim` (default D)
        features of each head rotated: pairs (x1, x2), the two halves or (`interleaved`) the even and odd
        features, become (cos x1 - sin x2, sin x1 + cos x2), cos and sin the caches' rows [B, S, R / 2] (of
        `position_ids` [B, S] when given), in X's element type; the other features pass unchanged."""
        x, cos, sin = (self.value(n) for n in node.input[:3])
        if not isinstance(tensor_of(x).element_type, AnyFloat):
            raise NodeError(f"RotaryEmbedding of {tensor_of(x)} (not float) is not supported")
        shape = list(tensor_of(x).get_shape())
        if len(shape) == 3:
            heads = attrs.get("num_heads", 0)
            if heads <= 0 or shape[2] % heads:
                raise NodeError(f"RotaryEmbedding of a 3-D input needs num_heads dividing its {shape[2]} features, "
                                f"got {heads}")
            x = self._reshape(x, [shape[0], shape[1], heads, shape[2] // heads])  # [B, S, H, D]
        elif len(shape) != 4:
            raise NodeError(f"RotaryEmbedding needs an input of rank 3 or 4, got {tensor_of(x)}")
        batch, seq = (shape[0], shape[1]) if len(shape) == 3 else (shape[0], shape[2])
        depth = tensor_of(x).get_shape()[3]
        rotated = attrs.get("rotary_embedding_dim", 0) or depth
        if rotated % 2 or rotated > depth:
            raise NodeError(f"RotaryEmbedding rotary_embedding_dim {rotated} must be even and at most the head "
                            f"size {depth}")
        half = rotated // 2
        if len(node.input) > 3 and node.input[3]:
            cos, sin = (self.gather_along(t, node.input[3], 0) for t in (cos, sin))
        for name, t in (("cos_cache", cos), ("sin_cache", sin)):
            if list(tensor_of(t).get_shape()) != [batch, seq, half]:
                raise NodeError(f"RotaryEmbedding {name} gives {list(tensor_of(t).get_shape())}, expected "
                                f"[{batch}, {seq}, {half}] (batch, sequence, rotary_embedding_dim / 2)")
        # cos and sin broadcast over the heads: [B, S, 1, R/2] against [B, S, H, .], [B, 1, S, R/2] against [B, H, S, .]
        cos, sin = (self._reshape(t, [batch, seq, 1, half] if len(shape) == 3 else [batch, 1, seq, half])
                    for t in (cos, sin))
        lead = list(tensor_of(x).get_shape()[:3])

        def features(start: int, stop: int, step: int = 1) -> SSAValue:
            return self.ins(nns.SliceOp(x, [0, 0, 0, start], [*lead, stop], [1, 1, 1, step]))

        x1, x2 = (features(0, rotated, 2), features(1, rotated, 2)) if attrs["interleaved"] else (
            features(0, half), features(half, rotated))
        real = self.ins(nn.SubOp(self.ins(nn.MulOp(cos, x1)), self.ins(nn.MulOp(sin, x2))))
        imag = self.ins(nn.AddOp(self.ins(nn.MulOp(sin, x1)), self.ins(nn.MulOp(cos, x2))))
        if attrs["interleaved"]:
            pairs = [self._reshape(t, [*lead, half, 1]) for t in (real, imag)]
            y = self._reshape(self.ins(nns.ConcatenateOp(pairs, 4)), [*lead, rotated])
        else:
            y = self.ins(nns.ConcatenateOp([real, imag], 3))
        if rotated < depth:
            y = self.ins(nns.ConcatenateOp([y, features(rotated, depth)], 3))
        return [self._reshape(y, shape) if len(shape) == 3 else y]
