"""ONNX's `ai.onnx.ml` operators (`dfc.importers.onnx_ml_ops`) beyond the node suite's cases: random
TreeEnsembles (every node mode, NaN features with `nodes_missing_value_tracks_true`, each aggregate function)
against ONNX's reference evaluator, a tree that is one leaf by the spec, its post transforms against NumPy's
of the reference's scores, Binarizer of integers and ArrayFeatureExtractor of a vector against the reference
evaluator."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from dfc import CompileError, interpret  # noqa: E402
from dfc.compiler.engine import ExecutionEngine  # noqa: E402
from dfc.importers.onnx_import import import_onnx  # noqa: E402


def _model(op: str, inputs: dict[str, tuple[int, np.ndarray]], **attrs):
    node = helper.make_node(op, list(inputs), ["y"], domain="ai.onnx.ml", **attrs)
    graph = helper.make_graph([node], "m", [helper.make_tensor_value_info(k, t, a.shape)
                                            for k, (t, a) in inputs.items()],
                              [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 5)])


def _run(model, *args, engine: bool = False):
    module, _, _ = import_onnx(model, parameters=[])
    return ExecutionEngine(module).invoke("main", *args) if engine else interpret(module, "main", *args)


def _forest(rng: np.random.Generator, x: np.ndarray, trees: int, targets: int) -> dict:
    """TreeEnsemble attributes of `trees` random trees (depth up to 4) over the features of x, thresholds drawn
    from x's values (so EQ and NEQ both branch), sets of 1 to 3 of them."""
    nodes, leaves = [], []

    def grow(depth: int) -> tuple[int, bool]:
        if depth == 4 or (depth > 0 and rng.random() < 0.3):
            leaves.append((rng.integers(targets), rng.normal()))
            return len(leaves) - 1, True
        feature = int(rng.integers(x.shape[1]))
        values = x[:, feature][~np.isnan(x[:, feature])]
        index = len(nodes)
        nodes.append(None)
        mode = int(rng.integers(7))
        members = rng.choice(values, int(rng.integers(1, 4))) if mode == 6 else None
        true, false = grow(depth + 1), grow(depth + 1)
        nodes[index] = (mode, feature, 0.0 if mode == 6 else rng.choice(values), bool(rng.integers(2)), true, false,
                        members)
        return index, False

    roots = [grow(0)[0] for _ in range(trees)]
    sets = [np.append(n[6], np.nan) for n in nodes if n[0] == 6]
    real = TensorProto.FLOAT
    return dict(
        n_targets=targets, tree_roots=roots, nodes_featureids=[n[1] for n in nodes],
        nodes_modes=numpy_helper.from_array(np.array([n[0] for n in nodes], np.uint8), "nodes_modes"),
        nodes_splits=numpy_helper.from_array(np.array([n[2] for n in nodes], np.float32), "nodes_splits"),
        nodes_missing_value_tracks_true=[int(n[3]) for n in nodes],
        nodes_truenodeids=[n[4][0] for n in nodes], nodes_trueleafs=[int(n[4][1]) for n in nodes],
        nodes_falsenodeids=[n[5][0] for n in nodes], nodes_falseleafs=[int(n[5][1]) for n in nodes],
        leaf_targetids=[int(t) for t, _ in leaves],
        leaf_weights=helper.make_tensor("leaf_weights", real, (len(leaves),), [w for _, w in leaves]),
        **({"membership_values": helper.make_tensor("membership_values", real, (sum(map(len, sets)),),
                                                    np.concatenate(sets))} if sets else {}))


def _features(rng: np.random.Generator) -> np.ndarray:
    """Samples of 3 features drawn from few values (members of sets are never 0: the reference evaluator
    ends a set at a 0), some NaN."""
    x = rng.choice(np.array([-1.5, 0.5, 1.0, 2.25, 3.0], np.float32), (40, 3))
    x[rng.random(x.shape) < 0.1] = np.nan
    return x


@pytest.mark.parametrize("aggregate,engine", [(1, False), *(pytest.param(a, e, marks=pytest.mark.slow) for a, e in
                                                                ((0, False), (2, False), (3, False), (1, True)))])
def test_tree_ensemble_matches_the_reference(aggregate, engine):
    """CI: SUM on the interpreter; with --slow the other aggregates, and SUM on the engine."""
    rng = np.random.default_rng(aggregate)
    x = _features(rng)
    model = _model("TreeEnsemble", {"X": (TensorProto.FLOAT, x)}, aggregate_function=aggregate,
                   **_forest(rng, x, trees=5, targets=3))
    want = ReferenceEvaluator(model).run(None, {"X": x})[0]
    got = _run(model, x, engine=engine)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("transform", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_tree_ensemble_post_transforms(transform):
    """SOFTMAX and LOGISTIC of the scores (the reference evaluator leaves post_transform out: NumPy's of its
    scores is the reference)."""
    rng = np.random.default_rng(10 + transform)
    x = _features(rng)
    forest = _forest(rng, x, trees=4, targets=3)
    scores = ReferenceEvaluator(_model("TreeEnsemble", {"X": (TensorProto.FLOAT, x)}, **forest)).run(
        None, {"X": x})[0].astype(np.float64)
    want = (np.exp(scores) / np.exp(scores).sum(1, keepdims=True) if transform == 1 else 1 / (1 + np.exp(-scores)))
    got = _run(_model("TreeEnsemble", {"X": (TensorProto.FLOAT, x)}, post_transform=transform, **forest), x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_tree_ensemble_of_a_one_leaf_tree():
    """A tree that is one leaf (its root's branches both name that leaf) adds the leaf's weight to its target
    for every sample (the spec; ONNX's reference evaluator reads the leaf at the root's node index instead)."""
    x = np.array([[0.5], [2.0], [np.nan]], np.float32)
    model = _model("TreeEnsemble", {"X": (TensorProto.FLOAT, x)}, n_targets=2, tree_roots=[0, 1],
                   nodes_featureids=[0, 0], nodes_modes=numpy_helper.from_array(np.array([0, 0], np.uint8), "m"),
                   nodes_splits=numpy_helper.from_array(np.array([1.0, 0.0], np.float32), "s"),
                   nodes_truenodeids=[0, 2], nodes_trueleafs=[1, 1], nodes_falsenodeids=[1, 2], nodes_falseleafs=[1, 1],
                   leaf_targetids=[0, 0, 1],
                   leaf_weights=helper.make_tensor("w", TensorProto.FLOAT, (3,), [1, 10, 100]))
    np.testing.assert_array_equal(_run(model, x), np.array([[1, 100], [10, 100], [10, 100]], np.float32))


def test_tree_ensemble_refusals():
    rng = np.random.default_rng(0)
    x = _features(rng)
    forest = _forest(rng, x, trees=2, targets=2)
    with pytest.raises(CompileError, match="post_transform 4"):
        _run(_model("TreeEnsemble", {"X": (TensorProto.FLOAT, x)}, post_transform=4, **forest), x)
    cyclic = {**forest, "nodes_truenodeids": [0] * len(forest["nodes_truenodeids"]),
              "nodes_trueleafs": [0] * len(forest["nodes_trueleafs"])}
    with pytest.raises(CompileError, match="cycle"):
        _run(_model("TreeEnsemble", {"X": (TensorProto.FLOAT, x)}, **cyclic), x)


def test_binarizer_of_integers_and_feature_extractor_of_a_vector():
    x = np.array([[-3, 0, 1, 2], [5, 1, -1, 7]], np.int64)
    model = _model("Binarizer", {"X": (TensorProto.INT64, x)}, threshold=1.5)
    np.testing.assert_array_equal(_run(model, x), ReferenceEvaluator(model).run(None, {"X": x})[0])
    v, k = np.arange(6, dtype=np.float32) * 1.5, np.array([[4, 0, -1]], np.int64)
    model = _model("ArrayFeatureExtractor", {"X": (TensorProto.FLOAT, v), "Y": (TensorProto.INT64, k)})
    np.testing.assert_array_equal(_run(model, v, k), v[k.reshape(-1)][None])
