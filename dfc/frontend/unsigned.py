"""NumPy's unsigned integers (uint8/16/32/64) in the frontend.

While a function is translated, its unsigned values have MLIR's unsigned
integer types (`tensor<4xui8>`), so that every SSA value carries its NumPy
dtype: in views, loop and branch slots, call results. The frontend picks the
sign-dependent ops from the dtype (`emit.py`: `arith.divui`, `remui`,
`shrui`, `cmpi ult`, `maxui`, `uitofp`, `extui`, `fptoui`; max/min
reductions of the values with their top bit flipped). Once translated, a
function gets the signless types of the rest of dfc (`signless_types`: the
bits are the same), and its unsigned arguments and results cross as the
signed integers of their bits (`onnx_unsigned.signless`, as the ONNX
importer passes them; `result_views`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FunctionType,
    IntegerAttr,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute
from xdsl.rewriter import Rewriter


def _converted(a: Attribute) -> Attribute | None:
    """`a` with its unsigned integer types signless (None when it has none)."""
    if isinstance(a, IntegerType):
        return IntegerType(a.width.data) if a.signedness.data == Signedness.UNSIGNED else None
    if isinstance(a, TensorType):
        e = _converted(a.element_type)
        return None if e is None else TensorType(e, a.get_shape(), a.encoding)
    if isinstance(a, IntegerAttr):
        t = _converted(a.type)
        return None if t is None else IntegerAttr(a.value.data, t)  # the signless type normalizes the value
    if isinstance(a, DenseIntOrFPElementsAttr):
        t = _converted(a.type)
        return None if t is None else DenseIntOrFPElementsAttr(t, a.data)  # the same bytes
    if isinstance(a, FunctionType):
        ins, outs = ([_converted(t) or t for t in ts] for ts in (a.inputs.data, a.outputs.data))
        changed = (ins, outs) != (list(a.inputs.data), list(a.outputs.data))
        return FunctionType.from_lists(ins, outs) if changed else None
    if isinstance(a, ArrayAttr):
        items = [_converted(x) for x in a.data]
        return None if all(x is None for x in items) else ArrayAttr([x or y for x, y in zip(items, a.data)])
    if isinstance(a, DictionaryAttr):
        items = {k: _converted(v) for k, v in a.data.items()}
        return None if all(v is None for v in items.values()) else DictionaryAttr(
            {k: items[k] or v for k, v in a.data.items()})
    return None


def signless_types(f: func.FuncOp) -> None:
    """Replace, in place, every unsigned integer type in `f` (values, attributes, its signature) by the
    signless type of its width."""
    for op in f.walk():
        for r in list(op.results):
            t = _converted(r.type)
            if t is not None:
                Rewriter.replace_value_with_new_type(r, t)
        for region in op.regions:
            for block in region.blocks:
                for arg in list(block.args):
                    t = _converted(arg.type)
                    if t is not None:
                        Rewriter.replace_value_with_new_type(arg, t)
        for table in (op.attributes, op.properties):
            for name, value in list(table.items()):
                converted = _converted(value)
                if converted is not None:
                    table[name] = converted


def result_views(types: Sequence[Attribute]) -> tuple[np.dtype | None, ...]:
    """Per result type of a translated function (before `signless_types`), the unsigned NumPy dtype its
    signless result is viewed as, or None."""
    out = []
    for t in types:
        e = t.element_type if isinstance(t, TensorType) else t
        unsigned = isinstance(e, IntegerType) and e.signedness.data == Signedness.UNSIGNED
        out.append(np.dtype(f"uint{e.width.data}") if unsigned else None)
    return tuple(out)
