"""The ONNX importer's sequence-model operators of opset 27 and the preview domain:
`LinearAttention` (a recurrence over the sequence, one `scf.for`),
`CausalConvWithState` (a depthwise convolution over the state and the input) and
`FlexAttention` (`ai.onnx.preview`: attention with score and probability modifier
subgraphs). Each is ordinary nn ops, so autodiff, fusion and both backends need
nothing of their own; f16 and bf16 inputs are computed in f32 (as ONNX's
reference does) and the outputs rounded back."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import AnyFloat, bf16, f16, f32
from xdsl.ir import Block, SSAValue

from dfc.compiler.interpreter import dtype_of
from dfc.dialects import nn
from dfc.dialects import nn_contract as nnc
from dfc.dialects import nn_conv as nnconv
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_shape as nns
from dfc.importers.onnx_common import NodeError, element_type, tensor_of

PREVIEW_OPS = frozenset({"FlexAttention"})
"""Operators of the `ai.onnx.preview` domain the importer builds."""

LINEAR_RULES = ("linear", "gated", "delta", "gated_delta")


class SequenceModelOps:
    """`op_LinearAttention`, `op_CausalConvWithState` and `op_FlexAttention`, mixed into `OnnxImporter`
    (whose `value`, `ins`, `constant`, `scalar`, `subgraph`, `_reshape`, `_cut`, `_counted_for`,
    `_accumulate`, `_repeat_heads` and `_input` they use)."""

    def _widened(self, x: SSAValue | None, work: Any) -> SSAValue | None:
        if x is None or tensor_of(x).element_type == work:
            return x
        return self.ins(nne.ConvertOp(x, work))

    def _rounded(self, x: SSAValue, e: Any) -> SSAValue:
        return x if tensor_of(x).element_type == e else self.ins(nne.ConvertOp(x, e))

    def _float_and_work(self, x: SSAValue, op: str) -> tuple[Any, Any]:
        """(element type, the type computed in) of `op`'s float input `x`."""
        e = tensor_of(x).element_type
        if not isinstance(e, AnyFloat):
            raise NodeError(f"{op} of {tensor_of(x)} (not float) is not supported")
        return e, f32 if e in (f16, bf16) else e

    # ------------------------------------------------------------ LinearAttention

    def op_LinearAttention(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The recurrence of `update_rule` over the T steps of [B, T, H * D] query, key and value (one
        `scf.for` carrying the state [B, H_kv, d_k, d_v], from `past_state` or zeros): gated rules first
        scale the state by exp(decay) (per head or per key dimension), delta rules replace v by
        beta (v - S^T k), then S += k v^T and the output is scale q^T S, each key/value head's state read
        by `q_num_heads / kv_num_heads` query heads. Outputs [B, T, H_q * d_v] and the last state (in
        `past_state`'s type, else the query's)."""
        q, k, v = (self.value(n) for n in node.input[:3])
        past, decay, beta = (self._input(node, j) for j in (3, 4, 5))
        rule = attrs.get("update_rule", "gated_delta")
        if rule not in LINEAR_RULES:
            raise NodeError(f"LinearAttention update_rule '{rule}' (one of {', '.join(LINEAR_RULES)})")
        if "q_num_heads" not in attrs or "kv_num_heads" not in attrs:
            raise NodeError("LinearAttention needs q_num_heads and kv_num_heads")
        hq, hkv = attrs["q_num_heads"], attrs["kv_num_heads"]
        if hq <= 0 or hkv <= 0 or hq % hkv:
            raise NodeError(f"LinearAttention of {hq} query heads and {hkv} key/value heads")
        gated, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
        if gated != (decay is not None) or delta != (beta is not None):
            raise NodeError(f"LinearAttention update_rule '{rule}' {'needs' if gated else 'forbids'} decay and "
                            f"{'needs' if delta else 'forbids'} beta")
        if any(tensor_of(x).get_num_dims() != 3 for x in (q, k, v)):
            raise NodeError("LinearAttention needs query, key and value of rank 3 [B, T, H * D]")
        e, work = self._float_and_work(q, "LinearAttention")
        state_type = tensor_of(past).element_type if past is not None else e
        b, t, width = tensor_of(q).get_shape()
        dk, dv = width // hq, tensor_of(v).get_shape()[2] // hkv
        if width % hq or tensor_of(k).get_shape() != (b, t, hkv * dk) or tensor_of(v).get_shape()[:2] != (b, t) \
                or tensor_of(v).get_shape()[2] % hkv:
            raise NodeError(f"LinearAttention of query {tensor_of(q)}, key {tensor_of(k)} and value {tensor_of(v)} "
                            f"for {hq} and {hkv} heads")
        if past is not None and tensor_of(past).get_shape() != (b, hkv, dk, dv):
            raise NodeError(f"LinearAttention past_state {tensor_of(past)}, not [{b}, {hkv}, {dk}, {dv}]")
        q, k, v, past, decay, beta = (self._widened(x, work) for x in (q, k, v, past, decay, beta))

        def steps_first(x: SSAValue, heads: int) -> SSAValue:  # [B, T, heads * D] as [T, B, heads, D]
            d = tensor_of(x).get_shape()[2] // heads
            return self.ins(nn.TransposeOp(self._reshape(x, [b, t, heads, d]), [1, 0, 2, 3]))

        sources = [steps_first(q, hq), steps_first(k, hkv), steps_first(v, hkv)]
        if decay is not None:
            last = tensor_of(decay).get_shape()[-1]
            if tensor_of(decay).get_shape()[:2] != (b, t) or last not in (hkv, hkv * dk):
                raise NodeError(f"LinearAttention decay {tensor_of(decay)}: last dimension {hkv} or {hkv * dk}")
            sources.append(steps_first(decay, hkv))
        if beta is not None:
            last = tensor_of(beta).get_shape()[-1]
            if tensor_of(beta).get_shape()[:2] != (b, t) or last not in (hkv, 1):
                raise NodeError(f"LinearAttention beta {tensor_of(beta)}: last dimension {hkv} or 1")
            sources.append(steps_first(beta, last))
        scale = attrs.get("scale", 0.0) or 1.0 / np.sqrt(dk)
        state = past if past is not None else self.constant(np.zeros((b, hkv, dk, dv), dtype_of(work)))

        def fill(block: Block) -> tuple[list[SSAValue], list[bool]]:
            step = block.args[1]
            zero = self.constant(np.zeros((), np.int64))
            at = [self._reshape(self.ins(nns.DynamicSliceOp(x, [step, zero, zero, zero],
                                                            [1, *tensor_of(x).get_shape()[1:]])),
                                list(tensor_of(x).get_shape()[1:])) for x in sources]
            q_t, k_t, v_t = at[:3]
            s = block.args[2]
            if gated:
                g = at[3]
                s = self.ins(nn.MulOp(s, self._reshape(self.ins(nn.ExpOp(g)), [*tensor_of(g).get_shape(), 1])))
            if delta:
                read = self.ins(nnc.DotGeneralOp(s, k_t, ((0, 1), (0, 1)), ((2,), (2,))))  # [B, H_kv, d_v]
                v_t = self.ins(nn.MulOp(at[-1], self.ins(nn.SubOp(v_t, read))))
            s = self.ins(nn.AddOp(s, self.ins(nn.MulOp(self._reshape(k_t, [b, hkv, dk, 1]),
                                                       self._reshape(v_t, [b, hkv, 1, dv])))))
            shared = s if hq == hkv else self._repeat_heads(s, hq // hkv)
            o = self.ins(nnc.DotGeneralOp(q_t, shared, ((0, 1), (0, 1)), ((2,), (2,))))  # [B, H_q, d_v]
            o = self.ins(nn.MulOp(o, self.scalar(scale, o)))
            return [s, self._accumulate(block, o, 0, step, t)], [False, False]

        looped = self._counted_for(t, [state], fill)
        assert looped is not None
        (last, outputs), _ = looped
        y = self._reshape(self.ins(nn.TransposeOp(outputs, [1, 0, 2, 3])), [b, t, hq * dv])
        return [self._rounded(y, e), self._rounded(last, state_type)]

    # ------------------------------------------------------------ CausalConvWithState

    def op_CausalConvWithState(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Depthwise causal convolution of [B, C, L] by [C, 1, k]: the input after `past_state` (or k - 1
        zeros) convolved without padding, plus `bias`, then SiLU for activation 'silu' or 'swish'; the
        present state is the last k - 1 positions of that padded input."""
        x, w = self.value(node.input[0]), self.value(node.input[1])
        bias, past = self._input(node, 2), self._input(node, 3)
        activation = attrs.get("activation", "none")
        if activation not in ("none", "silu", "swish"):
            raise NodeError(f"CausalConvWithState activation '{activation}' (one of none, silu, swish)")
        if tensor_of(x).get_num_dims() != 3 or tensor_of(w).get_num_dims() != 3:
            raise NodeError("CausalConvWithState needs input [B, C, L] and weight [C, 1, k]")
        e, work = self._float_and_work(x, "CausalConvWithState")
        batch, channels, _ = tensor_of(x).get_shape()
        size = tensor_of(w).get_shape()[2]
        if tensor_of(w).get_shape()[:2] != (channels, 1) or size < 1:
            raise NodeError(f"CausalConvWithState weight {tensor_of(w)} for {channels} channels: [C, 1, k]")
        if past is not None and tensor_of(past).get_shape() != (batch, channels, size - 1):
            raise NodeError(f"CausalConvWithState past_state {tensor_of(past)}, not [{batch}, {channels}, "
                            f"{size - 1}]")
        state = past if past is not None else self.constant(np.zeros((batch, channels, size - 1), dtype_of(e)))
        padded = self.ins(nns.ConcatenateOp([state, x], 2))
        layout = (0, 1, 2)
        y = self.ins(nnconv.ConvolutionOp(self._widened(padded, work), self._widened(w, work),
                                          (layout, layout, layout), ([1], [0], [0], [1]), channels))
        if bias is not None:
            y = self.ins(nn.AddOp(y, self._reshape(self._widened(bias, work), [channels, 1])))
        y = self._rounded(y, e)
        if activation != "none":
            wide = self._widened(y, f32 if e in (f16, bf16) else e)
            y = self._rounded(self.ins(nn.MulOp(wide, self.ins(nn.SigmoidOp(wide)))), e)
        length = tensor_of(padded).get_shape()[2]
        return [y, self._cut(padded, 2, length - (size - 1), length)]

    # ------------------------------------------------------------ FlexAttention

    def op_FlexAttention(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """softmax(prob_mod(score_mod(Q K^T scale))) V over [B, H, L, E] inputs (`ai.onnx.preview`), the
        modifiers being subgraphs of one tensor [B, H_q, L, S]; Q and K are each scaled by the square root of
        `scale` (default 1 / sqrt(E)) taken in f32, as ONNX's definition does; fewer key/value heads repeat
        (grouped-query attention); the scores and softmax are in `softmax_precision` (default f32 for f16
        and bf16 inputs, else theirs)."""
        from onnx import helper

        q, k, v = (self.value(n) for n in node.input[:3])
        if any(tensor_of(x).get_num_dims() != 4 for x in (q, k, v)):
            raise NodeError("FlexAttention needs Q, K and V of rank 4")
        e, work = self._float_and_work(q, "FlexAttention")
        _, hq, _, depth = tensor_of(q).get_shape()
        _, hkv, length, kdepth = tensor_of(k).get_shape()
        if kdepth != depth or tensor_of(v).get_shape()[1:3] != (hkv, length) or hq % hkv:
            raise NodeError(f"FlexAttention of Q {tensor_of(q)}, K {tensor_of(k)} and V {tensor_of(v)}")
        if "softmax_precision" in attrs:
            precise = element_type(helper.tensor_dtype_to_np_dtype(attrs["softmax_precision"]))
            if not isinstance(precise, AnyFloat):
                raise NodeError(f"FlexAttention softmax_precision {precise} (not float)")
        else:
            precise = work
        scale = attrs.get("scale", 1.0 / np.sqrt(depth))
        root = float(np.sqrt(np.float32(scale)).astype(dtype_of(e)))
        if hq != hkv:
            k, v = (self._repeat_heads(t, hq // hkv) for t in (k, v))
        q, k = (self._widened(self.ins(nn.MulOp(t, self.scalar(root, t))), work) for t in (q, k))
        scores = self._widened(self.ins(nnc.DotGeneralOp(q, k, ((0, 1), (0, 1)), ((3,), (3,)))), precise)
        scores = self._flex_modified(attrs.get("score_mod"), scores, "score_mod")
        probs = self._flex_modified(attrs.get("prob_mod"), self.ins(nn.SoftmaxOp(scores, 3)), "prob_mod")
        y = self.ins(nnc.DotGeneralOp(probs, self._widened(v, precise), ((0, 1), (0, 1)), ((3,), (2,))))
        return [self._rounded(y, tensor_of(v).element_type)]

    def _flex_modified(self, graph: Any, x: SSAValue, what: str) -> SSAValue:
        """`x` through the modifier subgraph `graph` (one input, one output of x's type), or x."""
        if graph is None:
            return x
        if len(graph.input) != 1 or len(graph.output) != 1:
            raise NodeError(f"FlexAttention {what} takes one tensor and gives one")
        (out,), _ = self.subgraph(graph, [x], [False])
        out = self.constant(out) if isinstance(out, np.ndarray) else out
        if tensor_of(out) != tensor_of(x):
            raise NodeError(f"FlexAttention {what} gives {tensor_of(out)} for {tensor_of(x)}")
        return out
