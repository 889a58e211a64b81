"""The ONNX importer's operators of the `ai.onnx.ml` domain: Binarizer, ArrayFeatureExtractor and
TreeEnsemble (opset 5). Their outputs are piecewise constant in the inputs (or, ArrayFeatureExtractor,
a gather), so none is differentiated beyond what its nn ops give (TreeEnsemble: no gradient to X).

TreeEnsemble's trees are attributes, constants: every tree is walked at once, one level per step, for
as many steps as the deepest tree has levels. A walk's state is an index into the nodes followed by the
leaves (a leaf's successors are itself), and each step gathers the state's feature, threshold, mode and
successors from constant tables (`nn.gather`), compares the sample's feature and moves on."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, i64
from xdsl.ir import SSAValue

from dfc.compiler.interpreter import dtype_of
from dfc.dialects import nn
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_indexing as nni
from dfc.dialects.nn_sort import take_along
from dfc.importers.onnx_common import NodeError, tensor_of

ML_OPS = frozenset({"Binarizer", "ArrayFeatureExtractor", "TreeEnsemble"})
"""Operators of the `ai.onnx.ml` domain the importer builds."""

_COMPARISONS = ("LE", "LT", "GE", "GT", "EQ", "NE")
"""The comparison of each TreeEnsemble node mode below 6 (BRANCH_LEQ ... BRANCH_NEQ); 6 is BRANCH_MEMBER."""

_AGGREGATES = {0: "sum", 1: "sum", 2: "min", 3: "max"}
"""The reduction over the trees of each aggregate_function (AVERAGE divides the sum by the number of trees)."""


class _Forest:
    """A TreeEnsemble's trees as tables over the states (the nodes, then the leaves): feature, threshold,
    mode, NaN-goes-true, members (NaN-padded) and both successors; `roots` the start states, `depth` the
    most steps a walk takes to a leaf."""

    def __init__(self, attrs: dict[str, Any], tensor: Any, features: int):
        def ints(name: str) -> np.ndarray:
            return np.array(list(attrs.get(name) or ()), np.int64)

        modes = tensor(attrs["nodes_modes"]).astype(np.int64).reshape(-1)
        nodes, leaves = len(modes), len(ints("leaf_targetids"))
        self.feature = ints("nodes_featureids")
        true_ids, false_ids = ints("nodes_truenodeids"), ints("nodes_falsenodeids")
        true_leaf, false_leaf = ints("nodes_trueleafs").astype(bool), ints("nodes_falseleafs").astype(bool)
        self.threshold = tensor(attrs["nodes_splits"]).astype(np.float64).reshape(-1)
        tracks = attrs.get("nodes_missing_value_tracks_true")
        self.nan_true = ints("nodes_missing_value_tracks_true").astype(bool) if tracks else np.zeros(nodes, bool)
        columns = [self.feature, true_ids, false_ids, true_leaf, false_leaf, self.threshold, self.nan_true]
        if any(len(c) != nodes for c in columns) or not nodes or not leaves:
            raise NodeError(f"TreeEnsemble's nodes_* attributes must all have {nodes} entries (and there must be "
                            "nodes and leaves)")
        if modes.min() < 0 or modes.max() > 6:
            raise NodeError(f"TreeEnsemble node mode {int(modes.max() if modes.max() > 6 else modes.min())} "
                            "(0 to 6 are defined)")
        if self.feature.min() < 0 or self.feature.max() >= features:
            raise NodeError(f"TreeEnsemble feature id out of range for {features} features")
        self.modes, self.members = modes, self._members(modes, attrs, tensor)
        true_next = np.where(true_leaf, nodes + true_ids, true_ids)
        false_next = np.where(false_leaf, nodes + false_ids, false_ids)
        if ((true_next < 0) | (true_next >= nodes + leaves) | (false_next < 0) | (false_next >= nodes + leaves)).any():
            raise NodeError("TreeEnsemble branch to a node or leaf out of range")
        self.true_next = np.concatenate([true_next, nodes + np.arange(leaves)])
        self.false_next = np.concatenate([false_next, nodes + np.arange(leaves)])
        roots = ints("tree_roots")
        if not len(roots) or roots.min() < 0 or roots.max() >= nodes:
            raise NodeError(f"TreeEnsemble tree_roots {roots.tolist()} out of range for {nodes} nodes")
        # a tree that is one leaf: its root's branches both name the same leaf
        single = true_leaf[roots] & false_leaf[roots] & (true_ids[roots] == false_ids[roots])
        self.roots = np.where(single, nodes + true_ids[roots], roots)
        self.depth = max(self._depth(int(r), nodes, set()) for r in self.roots)
        self.nodes, self.leaves = nodes, leaves

    def _depth(self, state: int, nodes: int, path: set[int]) -> int:
        if state >= nodes:
            return 0
        if state in path:
            raise NodeError(f"TreeEnsemble's trees have a cycle through node {state}")
        path = path | {state}
        return 1 + max(self._depth(int(self.true_next[state]), nodes, path),
                       self._depth(int(self.false_next[state]), nodes, path))

    @staticmethod
    def _members(modes: np.ndarray, attrs: dict[str, Any], tensor: Any) -> np.ndarray:
        """The sets of the BRANCH_MEMBER nodes, one row per node (NaN-padded; other nodes' rows all NaN):
        `membership_values` lists them in node order, each set ended by a NaN."""
        given = attrs.get("membership_values")
        values = tensor(given).astype(np.float64).reshape(-1) if given is not None else np.zeros(0)
        ends = np.flatnonzero(np.isnan(values))
        member_nodes = np.flatnonzero(modes == 6)
        if len(ends) != len(member_nodes):
            raise NodeError(f"TreeEnsemble has {len(member_nodes)} BRANCH_MEMBER nodes and {len(ends)} sets in "
                            "membership_values (each ended by a NaN)")
        sets = np.split(values, ends + 1)[:len(ends)]
        width = max([len(s) - 1 for s in sets] + [1])
        members = np.full((len(modes), width), np.nan)
        for node, s in zip(member_nodes, sets):
            members[node, :len(s) - 1] = s[:-1]
        return members


class MLOps:
    """`op_Binarizer`, `op_ArrayFeatureExtractor` and `op_TreeEnsemble`, mixed into `OnnxImporter` (whose
    `value`, `ins`, `constant`, `gather_along`, `_tensor_attr` and `_reshape` they use)."""

    def op_Binarizer(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """1 where x > threshold, else 0, in x's type (an integer x compared with the float threshold)."""
        x = self.value(node.input[0])
        e = tensor_of(x).element_type
        threshold = float(attrs["threshold"])
        if isinstance(e, AnyFloat):
            above = self.ins(nne.CompareOp(x, self.scalar(threshold, x), "GT"))
            one, zero = self.scalar(1.0, x), self.scalar(0.0, x)
        else:  # x > t for an integer x is x > floor(t)
            bound = self.constant(np.array(math.floor(threshold), dtype_of(e)))
            above = self.ins(nne.CompareOp(x, bound, "GT"))
            one, zero = (self.ins(nn.FullOp(IntegerAttr(v, e), [])) for v in (1, 0))  # type: ignore[arg-type]
        return [self.ins(nne.SelectOp(above, one, zero))]

    def op_ArrayFeatureExtractor(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The entries of x's last axis at the indices Y (flattened): shape (..., len(Y)), a 1-D x giving
        (1, len(Y)) as ONNX Runtime does; negative indices count from the end."""
        x = self.value(node.input[0])
        shape = list(tensor_of(x).get_shape())
        if not shape:
            raise NodeError("ArrayFeatureExtractor of a 0-d input")
        count = math.prod(tensor_of(self.value(node.input[1])).get_shape())
        y = self.gather_along(x, node.input[1], len(shape) - 1)
        return [self._reshape(y, [*shape[:-1], count] if len(shape) > 1 else [1, count])]

    def op_TreeEnsemble(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The trees' leaf weights of each sample of X (N, F), aggregated per target into (N, n_targets):
        AVERAGE, SUM, MIN or MAX over the leaves reached (a target no tree reaches is 0 for AVERAGE and
        SUM, and the type's largest value for MIN, its lowest for MAX, as ONNX's reference evaluator has
        it); post_transform NONE, SOFTMAX or LOGISTIC (SOFTMAX_ZERO and PROBIT are refused)."""
        x = self.value(node.input[0])
        t = tensor_of(x)
        if t.get_num_dims() != 2 or not isinstance(t.element_type, AnyFloat):
            raise NodeError(f"TreeEnsemble of {t}: X must be a float (N, F) matrix")
        aggregate, transform = attrs["aggregate_function"], attrs["post_transform"]
        if aggregate not in _AGGREGATES or transform not in (0, 1, 2):
            raise NodeError(f"TreeEnsemble with aggregate_function {aggregate} and post_transform {transform} "
                            "(aggregates 0 to 3 and transforms NONE, SOFTMAX and LOGISTIC are supported)")
        (n, features), real = t.get_shape(), dtype_of(t.element_type)
        forest = _Forest(attrs, self._tensor_attr, features)
        targets = int(attrs["n_targets"])
        leaf_targets = np.array(list(attrs["leaf_targetids"]), np.int64)
        if leaf_targets.min() < 0 or leaf_targets.max() >= targets:
            raise NodeError(f"TreeEnsemble leaf_targetids outside [0, {targets})")
        trees = len(forest.roots)
        state = self.ins(nn.BroadcastOp(self.constant(forest.roots), [n, trees]))
        for _ in range(forest.depth):
            state = self._tree_step(x, state, forest, real)
        leaf = self.ins(nn.SubOp(state, self.ins(nn.FullOp(IntegerAttr(forest.nodes, i64), []))))  # type: ignore[arg-type]
        weights = self._lookup(self._tensor_attr(attrs["leaf_weights"]).reshape(-1).astype(real), leaf)
        hits = self.ins(nne.CompareOp(self._reshape(self._lookup(leaf_targets, leaf), [n, trees, 1]),
                                      self.constant(np.arange(targets)), "EQ"))  # (N, trees, targets)
        kind = _AGGREGATES[aggregate]
        empty = {"sum": 0.0, "min": float(np.finfo(real).max), "max": float(np.finfo(real).min)}[kind]
        chosen = self.ins(nne.SelectOp(hits, self._reshape(weights, [n, trees, 1]), self.scalar(empty, x)))
        y = self.ins(nn.ReduceOp(chosen, kind, [1]))
        if aggregate == 0:
            y = self.ins(nn.DivOp(y, self.scalar(float(trees), x)))
        if transform == 1:
            y = self.ins(nn.SoftmaxOp(y, -1))
        elif transform == 2:
            y = self.ins(nn.SigmoidOp(y))
        return [y]

    def _tree_step(self, x: SSAValue, state: SSAValue, forest: _Forest, real: np.dtype) -> SSAValue:
        """The states (N, trees) one level down: each node's comparison of its feature of the sample (NaN
        following `nodes_missing_value_tracks_true`), a leaf staying where it is."""
        pad = np.zeros(forest.leaves)
        feature = self._lookup(np.concatenate([forest.feature, pad.astype(np.int64)]), state)
        value = self.ins(take_along(x, feature, 1))  # (N, trees)
        threshold = self._lookup(np.concatenate([forest.threshold, pad]).astype(real), state)
        mode = self._lookup(np.concatenate([forest.modes, pad.astype(np.int64)]), state)
        go_true = self.ins(nne.CompareOp(value, value, "NE"))  # NaN
        go_true = self.ins(nne.AndOp(go_true, self._lookup(np.concatenate([forest.nan_true, pad.astype(bool)]),
                                                           state)))
        taken = None
        for m, direction in enumerate((*_COMPARISONS, None)):
            if not (forest.modes == m).any():
                continue
            if direction is None:
                test = self._is_member(value, state, forest, real)
            else:
                test = self.ins(nne.CompareOp(value, threshold, direction))
            chosen = self.ins(nne.CompareOp(mode, self.ins(nn.FullOp(IntegerAttr(m, i64), [])), "EQ"))  # type: ignore[arg-type]
            test = self.ins(nne.AndOp(chosen, test))
            taken = test if taken is None else self.ins(nne.OrOp(taken, test))
        assert taken is not None
        go_true = self.ins(nne.OrOp(go_true, taken))
        return self.ins(nne.SelectOp(go_true, self._lookup(forest.true_next, state),
                                     self._lookup(forest.false_next, state)))

    def _is_member(self, value: SSAValue, state: SSAValue, forest: _Forest, real: np.dtype) -> SSAValue:
        """Whether each sample's feature is in its node's set (`_Forest.members`)."""
        members = np.concatenate([forest.members, np.full((forest.leaves, forest.members.shape[1]), np.nan)])
        shape = tensor_of(state).get_shape()
        width = members.shape[1]
        sets = self._lookup(members.reshape(-1).astype(real), self.ins(nn.AddOp(
            self.ins(nn.MulOp(self._reshape(state, [*shape, 1]), self.ins(nn.FullOp(IntegerAttr(width, i64), [])))),  # type: ignore[arg-type]
            self.constant(np.arange(width)))))  # (N, trees, width)
        equal = self.ins(nne.CompareOp(self._reshape(value, [*shape, 1]), sets, "EQ"))
        zero, one = (self.ins(nn.FullOp(FloatAttr(v, tensor_of(value).element_type), [])) for v in (0.0, 1.0))  # type: ignore[arg-type]
        found = self.ins(nn.ReduceOp(self.ins(nne.SelectOp(equal, one, zero)), "max", [2]))
        return self.ins(nne.CompareOp(found, zero, "GT"))

    def _lookup(self, table: np.ndarray, indices: SSAValue) -> SSAValue:
        """`table[indices]` of a constant 1-D table at run-time i64 indices (their shape)."""
        rank = tensor_of(indices).get_num_dims()
        dims = {"offset_dims": [], "collapsed_slice_dims": [0], "start_index_map": [0], "slice_sizes": [1]}
        return self.ins(nni.GatherOp(self.constant(table), indices, dims, rank))
