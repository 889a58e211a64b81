"""The ONNX importer's text featurisation: `TfIdfVectorizer` over integer tokens,
as counts of the pool's n-grams (with skips) by comparisons of strided windows."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import IntegerType, f32
from xdsl.ir import SSAValue

from dfc.compiler.interpreter import dtype_of
from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_shape as nns
from dfc.importers.onnx_common import NodeError, tensor_of


class TextOps:
    """`op_TfIdfVectorizer`, mixed into `OnnxImporter` (whose `value`, `ins`, `constant`, `scalar`, `_cut` and
    `_reshape` it uses)."""

    def op_TfIdfVectorizer(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Counts of the pool's n-grams of `min_gram_length` to `max_gram_length` tokens in each row of X
        ([C] or [B, C]): n tokens at a distance d from each other (d = 1 to `max_skip_count` + 1; unigrams
        once) matching a pool n-gram count at its `ngram_indexes` position (a repeated n-gram at its last
        one, as ONNX's reference). For each length and distance the [B, L, n] windows (strided slices) are
        compared with the [G, n] pool, matches summed over L, and the [B, G] counts mapped to the output by a
        one-hot product; `mode` TF gives the counts, IDF `weights` (or 1) where a count is nonzero, TFIDF
        the counts times `weights`. f32 results."""
        x = self.value(node.input[0])
        if "pool_strings" in attrs:
            raise NodeError("TfIdfVectorizer of strings (pool_strings) is not supported")
        t = tensor_of(x)
        if not isinstance(t.element_type, IntegerType) or t.get_num_dims() > 2:
            raise NodeError(f"TfIdfVectorizer of {t}: integer tokens of shape [C] or [B, C]")
        shape = list(t.get_shape())
        rows = self._reshape(x, [1, *(shape or [1])] if len(shape) < 2 else shape)
        batch, length = tensor_of(rows).get_shape()
        pool = list(attrs.get("pool_int64s", []))
        starts = list(attrs["ngram_counts"])
        indexes = list(attrs["ngram_indexes"])
        lo, hi, skips = attrs["min_gram_length"], attrs["max_gram_length"], attrs["max_skip_count"]
        width = max(indexes) + 1
        grams: dict[tuple[int, ...], int] = {}  # n-gram -> output position (a repeat: the last)
        ordinal = 0
        for n, start in enumerate(starts, 1):
            stop = starts[n] if n < len(starts) else len(pool)
            for k in range(start, stop - n + 1, n):
                if lo <= n <= hi:
                    grams[tuple(pool[k:k + n])] = indexes[ordinal]
                ordinal += 1
        if ordinal > len(indexes):
            raise NodeError(f"TfIdfVectorizer: {ordinal} n-grams in the pool and {len(indexes)} ngram_indexes")
        counts = self.constant(np.zeros((batch, width), np.float32))
        for n in sorted({len(g) for g in grams}):
            group = [g for g in grams if len(g) == n]
            table = self.constant(np.array(group, dtype_of(t.element_type)).reshape(1, 1, len(group), n))
            onehot = np.zeros((len(group), width), np.float32)
            onehot[np.arange(len(group)), [grams[g] for g in group]] = 1
            for d in range(1, (skips + 1 if n > 1 else 1) + 1):
                span = length - d * (n - 1)
                if span <= 0:
                    continue
                pieces = [self._reshape(self.ins(nns.SliceOp(rows, [0, k * d], [batch, k * d + span], [1, 1])),
                                        [batch, span, 1, 1]) for k in range(n)]
                windows = pieces[0] if n == 1 else self.ins(nns.ConcatenateOp(pieces, 3))
                equal = self.ins(nne.ConvertOp(self.ins(nne.CompareOp(windows, table, "EQ")), f32))
                matched = self.ins(nn.ReduceOp(self.ins(nn.ReduceOp(equal, "min", [3])), "sum", [1]))
                counts = self.ins(nn.AddOp(counts, self.ins(nn.MatmulOp(matched, self.constant(onehot)))))
        mode, weights = attrs["mode"], attrs.get("weights")
        if mode == "IDF":
            present = self.ins(nne.CompareOp(counts, self.scalar(0.0, counts), "GT"))
            scale = self.constant(np.asarray(weights, np.float32)) if weights else self.scalar(1.0, counts)
            counts = self.ins(nne.SelectOp(present, self.ins(nn.BroadcastOp(scale, [batch, width])),
                                           self.scalar(0.0, counts)))
        elif mode == "TFIDF" and weights:
            counts = self.ins(nn.MulOp(counts, self.constant(np.asarray(weights, np.float32))))
        elif mode not in ("TF", "TFIDF"):
            raise NodeError(f"TfIdfVectorizer mode '{mode}' (one of TF, IDF, TFIDF)")
        return [counts if len(shape) == 2 else self._reshape(counts, [width])]
