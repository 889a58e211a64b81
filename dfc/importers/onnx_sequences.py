"""The ONNX importer's sequences and optionals, as Python structures of the importer.

A sequence whose length is known at import time is a Python list of its tensors (SSA values, or numpy
arrays when known at import time); an optional is `EMPTY` or the value it holds. So every sequence and
optional operator (SequenceConstruct, SequenceEmpty, SequenceAt, SequenceInsert, SequenceErase,
SequenceLength, SplitToSequence, ConcatFromSequence, SequenceMap, Optional, OptionalHasElement,
OptionalGetElement, and Identity of either) runs at import time, and the IR holds only the tensor
ops they move: what a model computes with its sequences is ordinary nn ops, which `autodiff`, fusion and
both backends take as they are. A position (SequenceAt, SequenceInsert, SequenceErase) and SplitToSequence's
`split` must be known at import time; a sequence whose length depends on the data (a Loop of a run-time
trip count appending to one) is a NodeError, as are sequences of unsigned integers or narrow formats.

A graph input that is a sequence or an optional takes an example (`import_onnx(model, examples={name:
value})`): a list of arrays (a sequence: its length and its elements' shapes), None (an optional without a
value) or the value an optional holds. Arguments and results are the tensors of these structures in order
(`flatten`, `layout`); `OnnxFunction` takes and gives them structured.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from dfc.dialects import nn_shape as nns
from dfc.importers.onnx_common import NodeError, element_type, normalize_axis, tensor_of


class _Empty:
    """An optional without a value."""

    def __repr__(self) -> str:
        return "EMPTY"


EMPTY = _Empty()

SEQUENCE_OPS = frozenset({
    "SequenceConstruct", "SequenceEmpty", "SequenceAt", "SequenceInsert", "SequenceErase", "SequenceLength",
    "SplitToSequence", "ConcatFromSequence", "SequenceMap", "Optional", "OptionalHasElement", "OptionalGetElement",
})
"""The operators `SequenceOps` imports (with Identity of a sequence or optional)."""


def is_structured(v: Any) -> bool:
    """Whether `v` is a sequence (a list) or an empty optional rather than a tensor."""
    return isinstance(v, list) or v is EMPTY


def describe(v: Any) -> str:
    return "an empty optional" if v is EMPTY else f"a sequence of {len(v)} tensors"


def leaves(v: Any) -> list[Any]:
    """The tensors of a structured value in order (a sequence's elements, nothing for EMPTY)."""
    if v is EMPTY or v is None:
        return []
    if isinstance(v, list | tuple):
        return [leaf for item in v for leaf in leaves(item)]
    return [v]


def layout(v: Any) -> Any:
    """The shape of a structured value: a list of layouts for a sequence, None for EMPTY, 0 for a tensor."""
    return None if v is EMPTY else [layout(item) for item in v] if isinstance(v, list) else 0


def regroup(template: Any, flat: Iterator[Any], empty: Any = None) -> Any:
    """The values of `flat` grouped as `template` (`layout`) says: lists for sequences, `empty` for EMPTY."""
    if template is None:
        return empty
    if isinstance(template, list):
        return [regroup(t, flat, empty) for t in template]
    return next(flat)


def input_structure(info: Any, example: Any, where: str) -> Any:
    """The structure of graph input `info` with its tensors as `TensorType`s, from `example`: a list of arrays
    for a sequence, None for an empty optional, an array for a tensor (its shape fills the dimensions the
    model leaves open); a NodeError if they disagree."""
    from onnx import helper

    return _structure(info.type, example, f"{where} '{info.name}'", helper, False)


def _structure(t: Any, example: Any, what: str, helper: Any, inside: bool) -> Any:
    kind = t.WhichOneof("value")
    if kind == "optional_type":
        return EMPTY if example is None else _structure(t.optional_type.elem_type, example, what, helper, True)
    if kind == "sequence_type":
        if not isinstance(example, list | tuple):
            raise NodeError(f"{what} is a sequence: its example (`examples`) must be a list of arrays, "
                            f"not {type(example).__name__}")
        return [_structure(t.sequence_type.elem_type, x, f"{what}[{k}]", helper, True)
                for k, x in enumerate(example)]
    if kind != "tensor_type":
        raise NodeError(f"{what} is of {kind or 'undefined'} type; dfc takes tensors, sequences and optionals")
    if example is None:
        raise NodeError(f"{what}: None is an example only for an optional")
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.tensor_type.elem_type))
    if dtype.kind == "u" and inside:
        raise NodeError(f"{what}: a sequence or optional of {dtype} is not supported")
    shape = np.shape(example)
    declared = [d.dim_value if d.HasField("dim_value") else None for d in t.tensor_type.shape.dim]
    if t.tensor_type.HasField("shape") and (len(declared) != len(shape) or any(
            d is not None and d != n for d, n in zip(declared, shape))):
        raise NodeError(f"{what}: the example's shape {list(shape)} is not the declared {declared}")
    return TensorType(element_type(dtype), list(shape))


def assemble(structure: Any, args: Iterator[SSAValue]) -> Any:
    """`structure` (`input_structure`) with each `TensorType` replaced by the next of `args`."""
    if structure is EMPTY:
        return EMPTY
    if isinstance(structure, list):
        return [assemble(s, args) for s in structure]
    return next(args)


class SequenceOps:
    """`op_Sequence*`, `op_Optional*`, SplitToSequence and ConcatFromSequence on importer-level lists, mixed
    into `OnnxImporter` (whose `values`, `consts`, `value`, `known`, `ins`, `_reshape`, `subgraph` and
    `op_Concat`'s helpers they use)."""

    def item(self, name: str) -> Any:
        """The value of `name`: a sequence (list), EMPTY (also for an absent input ""), a known array or an
        SSA value."""
        if not name:
            return EMPTY
        v = self.values.get(name)
        if v is not None and is_structured(v):
            return v
        return self.consts[name] if name in self.consts else self.value(name)

    def import_structured(self, node: Any, attrs: dict[str, Any]) -> None:
        """A sequence or optional operator (or Identity of one): its outputs recorded as values."""
        for n in node.input:
            if n and (self.is_unsigned(n) or self.format_of(n)):
                raise NodeError(f"{node.op_type} of unsigned integers or narrow formats is not supported")
        op = "Identity" if node.op_type == "Identity" else node.op_type
        outputs = getattr(self, f"_seq_{op}")(node, attrs)
        for name, v in zip(node.output, outputs):
            if not name:
                continue
            self.values.pop(name, None)
            self.consts.pop(name, None)
            if isinstance(v, np.ndarray):
                self.consts[name] = v
            else:
                self.values[name] = v

    def _sequence(self, name: str, what: str) -> list[Any]:
        v = self.item(name)
        if not isinstance(v, list):
            raise NodeError(f"{what} '{name}' is not a sequence")
        return v

    def _position(self, node: Any, k: int, length: int, insert: bool = False) -> int:
        """Input `k` of `node` (known at import time) as a position in a sequence of `length` (negative counts
        from the end; an insertion may be at the end); absent: the end (insert) or the last element."""
        if len(node.input) <= k or not node.input[k]:
            return length if insert else length - 1
        p = int(self.known(node.input[k]).reshape(-1)[0])
        if not -length <= p < length + insert:
            raise NodeError(f"position {p} is out of range for a sequence of {length}")
        return p + length if p < 0 else p

    def _seq_Identity(self, node: Any, attrs: dict[str, Any]) -> list[Any]:
        return [self.item(node.input[0])]

    def _seq_SequenceEmpty(self, node: Any, attrs: dict[str, Any]) -> list[Any]:
        return [[]]

    def _seq_SequenceConstruct(self, node: Any, attrs: dict[str, Any]) -> list[Any]:
        items = [self.item(n) for n in node.input]
        self._check_elements(items)
        return [items]

    def _seq_SequenceLength(self, node: Any, attrs: dict[str, Any]) -> list[Any]:
        return [np.array(len(self._sequence(node.input[0], "SequenceLength input")), np.int64)]

    def _seq_SequenceAt(self, node: Any, attrs: dict[str, Any]) -> list[Any]:
        seq = self._sequence(node.input[0], "SequenceAt input")
        return [seq[self._position(node, 1, len(seq))]]

    def _seq_SequenceInsert(self, node: Any, attrs: dict[str, Any]) -> list[Any]:
        seq = list(self._sequence(node.input[0], "SequenceInsert input"))
        x = self.item(node.input[1])
        self._check_elements([*seq, x])
        seq.insert(self._position(node, 2, len(seq), insert=True), x)
        return [seq]

    def _seq_SequenceErase(self, node: Any, attrs: dict[str, Any]) -> list[Any]:
        seq = list(self._sequence(node.input[0], "SequenceErase input"))
        if not seq:
            raise NodeError("SequenceErase of an empty sequence")
        del seq[self._position(node, 1, len(seq))]
        return [seq]

    def _check_elements(self, items: Sequence[Any]) -> None:
        """A NodeError unless `items` are tensors of one element type (a sequence's elements)."""
        if any(is_structured(x) for x in items):
            raise NodeError("a sequence holds tensors, not sequences or optionals")
        types = {str(element_type(x.dtype) if isinstance(x, np.ndarray) else tensor_of(x).element_type) for x in items}
        if len(types) > 1:
            raise NodeError(f"a sequence's tensors are of one element type, not {sorted(types)}")

    def _seq_SplitToSequence(self, node: Any, attrs: dict[str, Any]) -> list[Any]:
        """Slices along `axis`: of the sizes `split` gives (a scalar: pieces of that size, the last one
        smaller), else of size 1 (squeezed unless `keepdims`)."""
        x = self._ssa(self.item(node.input[0]))
        shape = list(tensor_of(x).get_shape())
        axis = normalize_axis(attrs["axis"], len(shape))
        d = shape[axis]
        split = self.known(node.input[1]) if len(node.input) > 1 and node.input[1] else None
        if split is None:
            sizes, squeeze = [1] * d, not attrs["keepdims"]
        elif split.ndim == 0:
            step = int(split)
            if step <= 0:
                raise NodeError(f"SplitToSequence of pieces of {step}")
            sizes, squeeze = [min(step, d - k) for k in range(0, d, step)], False
        else:
            sizes, squeeze = [int(s) for s in split.reshape(-1)], False
        if sum(sizes) != d or min(sizes, default=0) < 0:
            raise NodeError(f"SplitToSequence of a dimension of {d} into {sizes}")
        pieces, start = [], 0
        for size in sizes:
            piece = self._cut(x, axis, start, start + size)
            pieces.append(self._reshape(piece, shape[:axis] + shape[axis + 1:]) if squeeze else piece)
            start += size
        return [pieces]

    def _seq_ConcatFromSequence(self, node: Any, attrs: dict[str, Any]) -> list[Any]:
        """The elements concatenated along `axis`, or stacked along a new one (`new_axis`)."""
        seq = self._sequence(node.input[0], "ConcatFromSequence input")
        if not seq:
            raise NodeError("ConcatFromSequence of an empty sequence (its result's type is unknown)")
        if all(isinstance(x, np.ndarray) for x in seq):
            rank = seq[0].ndim + bool(attrs["new_axis"])
            axis = normalize_axis(attrs["axis"], rank)
            return [np.stack(seq, axis) if attrs["new_axis"] else np.concatenate(seq, axis)]
        values = [self._ssa(x) for x in seq]
        shape = list(tensor_of(values[0]).get_shape())
        if attrs["new_axis"]:
            axis = normalize_axis(attrs["axis"], len(shape) + 1)
            if any(list(tensor_of(v).get_shape()) != shape for v in values):
                raise NodeError("ConcatFromSequence with new_axis of tensors of different shapes")
            values = [self._reshape(v, shape[:axis] + [1] + shape[axis:]) for v in values]
        else:
            axis = normalize_axis(attrs["axis"], len(shape))
        return [values[0] if len(values) == 1 else self.ins(nns.ConcatenateOp(values, axis))]

    def _seq_SequenceMap(self, node: Any, attrs: dict[str, Any]) -> list[Any]:
        """The body on each element of the first sequence, and of each further input (a sequence of the same
        length: its element; a tensor: itself); each output a sequence of the body's outputs."""
        first = self._sequence(node.input[0], "SequenceMap input")
        others = [self.item(n) for n in node.input[1:]]
        for n, v in zip(node.input[1:], others):
            if isinstance(v, list) and len(v) != len(first):
                raise NodeError(f"SequenceMap input '{n}' has {len(v)} elements, the first sequence {len(first)}")
            if v is EMPTY:
                raise NodeError(f"SequenceMap input '{n}' is an empty optional")
        body = attrs["body"]
        results: list[list[Any]] = [[] for _ in body.output]
        for k, x in enumerate(first):
            bindings = [x, *(v[k] if isinstance(v, list) else v for v in others)]
            outputs, unsigned = self.subgraph(body, bindings, [False] * len(bindings))
            if any(unsigned):
                raise NodeError("SequenceMap body output of unsigned integers is not supported")
            self._check_elements(outputs)
            for r, v in zip(results, outputs):
                r.append(v)
        for r in results:
            self._check_elements(r)
        return results

    def _seq_Optional(self, node: Any, attrs: dict[str, Any]) -> list[Any]:
        return [self.item(node.input[0]) if node.input and node.input[0] else EMPTY]

    def _seq_OptionalHasElement(self, node: Any, attrs: dict[str, Any]) -> list[Any]:
        present = bool(node.input) and self.item(node.input[0]) is not EMPTY
        return [np.array(present)]

    def _seq_OptionalGetElement(self, node: Any, attrs: dict[str, Any]) -> list[Any]:
        v = self.item(node.input[0])
        if v is EMPTY:
            raise NodeError(f"OptionalGetElement of '{node.input[0]}', an empty optional")
        return [v]
