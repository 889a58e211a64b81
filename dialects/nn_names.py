"""The StableHLO and ONNX names of every nn op, from each op's `EXTERNAL`
declaration (`dialects/nn_base.External`), for the op table of docs/ops.md."""

from __future__ import annotations

from dfc.dialects.nn import NN

EXTERNAL_NAMES: dict[str, tuple[str, str]] = {op.name: (op.EXTERNAL.stablehlo, op.EXTERNAL.onnx) for op in NN.operations}
