"""TfIdfVectorizer in the modes and attributes ONNX's node tests leave out (IDF and
TFIDF, with and without weights; trigrams with skips; a repeated pool n-gram;
int32 tokens) against ONNX Runtime and, where it runs (it fails without
weights in IDF and TFIDF), ONNX's reference evaluator; on the interpreter and
compiled."""

import numpy as np
import pytest

from dfc import interpret
from dfc.importers.onnx_import import from_onnx

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

POOL = [2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 5, 6, 7, 2, 3, 5]  # 4 unigrams, 3 bigrams, 2 trigrams (one a repeat)


def _model(shape, dtype, **attrs):
    node = helper.make_node("TfIdfVectorizer", ["X"], ["Y"], ngram_counts=[0, 4, 10], pool_int64s=POOL,
                            ngram_indexes=[0, 1, 2, 3, 4, 5, 6, 7, 8], **attrs)
    graph = helper.make_graph([node], "tfidf", [helper.make_tensor_value_info("X", dtype, shape)],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])


@pytest.mark.parametrize("mode,weights,grams,skips", [
    ("TF", None, (1, 3), 2), ("IDF", None, (2, 3), 1), ("IDF", [0.5 + k for k in range(9)], (1, 3), 0),
    ("TFIDF", None, (1, 2), 3), ("TFIDF", [1.5 * k - 2 for k in range(9)], (2, 3), 2)])
def test_tfidf_modes_against_the_reference(mode, weights, grams, skips):
    rng = np.random.default_rng(len(mode) + skips)
    x = rng.integers(2, 9, (3, 14)).astype(np.int32)
    attrs = dict(mode=mode, min_gram_length=grams[0], max_gram_length=grams[1], max_skip_count=skips)
    if weights:
        attrs["weights"] = weights
    model = _model([3, 14], TensorProto.INT32, **attrs)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
    if weights:
        np.testing.assert_array_equal(ReferenceEvaluator(model).run(None, {"X": x})[0], want)
    f = from_onnx(model)
    np.testing.assert_array_equal(interpret(f.module, "main", x), want)
    if mode == "TFIDF" and weights:  # compiled once (the interpreter is the semantics the engine follows)
        np.testing.assert_array_equal(f(x), want)
