"""Constant folding by ONNX's reference implementation.

A node of the default domain whose inputs are all known at import time is computed with `onnx.reference` (the
specification's own evaluator) at the model's opset, so the shape and index arithmetic exporters emit (`Mod`,
`Floor`, `Sqrt`, `Less`, `And`, `Tile`, ... on values derived from `Shape`) folds to constants even where the
importer's numpy table (`OnnxImporter.fold`) does not name the operator; an operator that must read a shape,
axis or index then finds it known. Random operators, subgraphs, absent optional outputs, inputs other than
numbers and booleans (the narrow formats, bfloat16), inputs over `MAX_INPUT_ELEMENTS` and results over
`MAX_ELEMENTS` are left to the operator's handler, as is a node the evaluator cannot compute (the handler then
builds it or refuses it by name)."""

from __future__ import annotations

from typing import Any

import numpy as np

NOT_FOLDED = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
                        "Bernoulli", "Dropout"})
NUMERIC = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                     "float32", "float64"})
MAX_ELEMENTS = 1 << 16
"""Folded results larger than this stay in the IR (a constant of this size is already 256 KiB of f32)."""
MAX_INPUT_ELEMENTS = 1 << 20
"""Nodes reading more known elements than this (weights made constants) are built, not computed in Python."""


def reference_fold(node: Any, inputs: list[np.ndarray | None], opset: int) -> list[np.ndarray] | None:
    """The outputs of `node` given its known `inputs` (None for an absent optional input), computed by ONNX's
    reference evaluator at `opset`; None when the node is not one to fold this way."""
    from onnx import AttributeProto, helper

    if node.domain not in ("", "ai.onnx") or node.op_type in NOT_FOLDED or "" in node.output:
        return None
    if any(a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS) for a in node.attribute):
        return None
    given = {name: x for name, x in zip(node.input, inputs) if name}
    if any(x is None or x.dtype.name not in NUMERIC for x in given.values()) or sum(
            x.size for x in given.values()) > MAX_INPUT_ELEMENTS:
        return None
    graph = helper.make_graph(
        [node], "fold",
        [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)
         for name, x in given.items()],
        [helper.make_empty_tensor_value_info(name) for name in node.output])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    try:
        from onnx.reference import ReferenceEvaluator

        results = ReferenceEvaluator(model).run(None, given)
    except Exception:  # noqa: BLE001 - not computable here: the operator's handler builds or refuses it
        return None
    arrays = [np.asarray(r) for r in results]
    if any(a.dtype.name not in NUMERIC or a.size > MAX_ELEMENTS for a in arrays):
        return None
    return arrays
