"""`aten.scaled_dot_product_attention`, kept whole by the export (`capture.KEPT`).

Torch's decomposition of it (`_scaled_dot_product_flash_attention_for_cpu`'s) gives its output other
strides than the CPU kernel does, so a model that views the output (GPT-2's `c_proj` after the head merge)
failed inside `torch.export`; whole, the fake tensor's strides are the kernel's and the export succeeds.
The translation is torch's math form: `softmax(q k^T * scale + mask) v` with the batch dimensions
broadcast and flattened into one `nn.dot_general` batch dimension, a row whose every key is masked
giving 0 (torch's `_safe_softmax`, gradient included), dropout on dfc's generator (docs/random.md),
and `enable_gqa` repeating each key and value head for its group of query heads.
"""

from __future__ import annotations

import math

import numpy as np

from dfc.torch.aten_common import Builder, UnsupportedOp, handler_table
from dfc.torch.ir_text import Value

ATTENTION_HANDLERS, handles = handler_table()


@handles("scaled_dot_product_attention.default")
def _attention(b, node, q, k, v, attn_mask, dropout_p, is_causal, scale=None, enable_gqa=False):
    if not q.is_float:
        raise UnsupportedOp(f"attention of {q.dtype} (float tensors only)")
    *_, length, width = q.shape
    keys = k.shape[-2]
    if enable_gqa and q.shape[-3] != k.shape[-3]:
        k, v = (_repeat_heads(b, t, q.shape[-3]) for t in (k, v))
    batch = tuple(np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2]))
    count = math.prod(batch)
    q, k, v = (b.reshape(b.broadcast(t, [*batch, *t.shape[-2:]]), [count, *t.shape[-2:]]) for t in (q, k, v))
    scores = b.op("nn.dot_general", [q, k], [count, length, keys], q.dtype, lhs_batching_dimensions=[0],
                  rhs_batching_dimensions=[0], lhs_contracting_dimensions=[2], rhs_contracting_dimensions=[2])
    scores = b.binary("nn.mul", scores, 1.0 / math.sqrt(width) if scale is None else float(scale))
    if is_causal:
        if attn_mask is not None:
            raise UnsupportedOp("both attn_mask and is_causal (torch refuses them together)")
        attn_mask = b.compare("LE", b.op("nn.iota", [], [length, keys], "i64", iota_dimension=1),
                              b.op("nn.iota", [], [length, keys], "i64", iota_dimension=0))  # key j <= query i
    if attn_mask is not None:
        mask = b.reshape(b.broadcast(attn_mask, [*batch, length, keys]), [count, length, keys])
        scores = b.op("nn.select", [mask, scores, b.full(-math.inf, scores.shape, q.dtype)], scores.shape,
                      q.dtype) if mask.dtype == "i1" else b.binary("nn.add", scores, b.convert(mask, q.dtype))
    weights = _dropout(b, _safe_softmax(b, scores), dropout_p)
    out = b.op("nn.dot_general", [weights, v], [count, length, v.shape[-1]], q.dtype, lhs_batching_dimensions=[0],
               rhs_batching_dimensions=[0], lhs_contracting_dimensions=[2], rhs_contracting_dimensions=[1])
    return b.reshape(out, b.out(node)[0])


def _repeat_heads(b: Builder, t: Value, heads: int) -> Value:
    """(..., h, S, E) -> (..., heads, S, E), each of the h heads repeated for `heads / h` consecutive ones."""
    *lead, h, s, e = t.shape
    if heads % h:
        raise UnsupportedOp(f"enable_gqa with {heads} query heads and {h} key/value heads (not a multiple)")
    wide = b.broadcast(b.reshape(t, [*lead, h, 1, s, e]), [*lead, h, heads // h, s, e])
    return b.reshape(wide, [*lead, heads, s, e])


def _safe_softmax(b: Builder, x: Value) -> Value:
    """Softmax over the last axis, 0 (and gradient 0) along a row that is all -inf."""
    axis = len(x.shape) - 1
    masked = b.compare("EQ", b.reduce("max", x, [axis], keepdims=True), -math.inf)
    zero = b.tensor(0.0, x.dtype)
    finite = b.op("nn.select", [masked, zero, x], x.shape, x.dtype)
    y = b.op("nn.softmax", [finite], x.shape, x.dtype, axis=axis)
    return b.op("nn.select", [masked, zero, y], x.shape, x.dtype)


def _dropout(b: Builder, x: Value, p: float) -> Value:
    """Dropout of the attention weights, which torch applies whenever p > 0 (training or not): each
    weight kept with probability 1 - p and scaled by 1 / (1 - p)."""
    if not 0 <= p <= 1:
        raise UnsupportedOp(f"dropout_p={p} outside [0, 1]")
    if p == 0:
        return x
    if p == 1:
        return b.binary("nn.mul", x, 0.0)
    keep = b.compare("GE", b.random("nn.random_uniform", x.shape, x.dtype), float(p))
    return b.binary("nn.mul", b.binary("nn.mul", x, b.convert(keep, x.dtype)), 1.0 / (1.0 - p))
