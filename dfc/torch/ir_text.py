"""A small typed writer of nn-dialect MLIR text, used by the aten translation.

`IRWriter` numbers SSA values, formats types and properties, and keeps each
value's static shape and element type (`Value`), so that the aten handlers
build ops by name with typed operands and the result type they expect. The
text is parsed (and every op verified against its own type inference) by
`dfc.parse_module`; a mismatch is a bug of a handler, not of the user's model.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass

DTYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "int64": "i64", "int32": "i32", "bool": "i1"}
"""torch dtype name -> MLIR element type (the ones the nn dialect computes with)."""


@dataclass(frozen=True)
class Value:
    """An SSA value of the function being written: its name, shape and element type."""

    name: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def type(self) -> str:
        return tensor_type(self.shape, self.dtype)

    @property
    def is_float(self) -> bool:
        return self.dtype.startswith("f")


def tensor_type(shape: Sequence[int], dtype: str) -> str:
    return f"tensor<{''.join('?x' if d < 0 else f'{d}x' for d in shape)}{dtype}>"


def float_literal(value: float, dtype: str) -> str:
    """An MLIR float literal of `dtype` (hexadecimal bits for inf and NaN)."""
    if math.isfinite(value):
        return f"{value:.17e} : {dtype}"
    fmt, bits = {"f32": ("<f", "<I"), "f64": ("<d", "<Q"), "f16": ("<e", "<H")}[dtype]
    (raw,) = struct.unpack(bits, struct.pack(fmt, value))
    return f"0x{raw:X} : {dtype}"


def attribute(value: object) -> str:
    """A property value: ints and bools, strings, i64 arrays (lists/tuples), raw text (`Raw`)."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value} : i64"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list | tuple):
        return f"array<i64{': ' if value else ''}{', '.join(str(int(v)) for v in value)}>"
    raise TypeError(f"no MLIR property for {value!r}")


@dataclass(frozen=True)
class Raw:
    """Property text written as given (e.g. a typed float)."""

    text: str


class IRWriter:
    """Writes one `func.func` of nn ops."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._count = 0

    def fresh(self) -> str:
        self._count += 1
        return f"%v{self._count}"

    def op(self, name: str, operands: Sequence[Value], shape: Sequence[int], dtype: str, **props: object) -> Value:
        """`%r = name operands {props} : (operand types) -> result type`."""
        result = Value(self.fresh(), tuple(int(d) for d in shape), dtype)
        text = f"{result.name} = {name}"
        if operands:
            text += " " + ", ".join(o.name for o in operands)
        if props:
            text += " {" + ", ".join(f"{k} = {attribute(v)}" for k, v in props.items()) + "}"
        if operands:
            text += f" : ({', '.join(o.type for o in operands)}) -> {result.type}"
        else:
            text += f" : {result.type}"
        self.lines.append(text)
        return result

    def full(self, value: float | int | bool, shape: Sequence[int], dtype: str) -> Value:
        if dtype.startswith("f"):
            literal = float_literal(float(value), dtype)
        else:
            literal = f"{int(value)} : {dtype}"
        return self.op("nn.full", [], shape, dtype, value=Raw(literal))

    def function(self, name: str, args: Sequence[Value], results: Sequence[Value]) -> str:
        """The function text: `args` as parameters, the written ops, `results` returned."""
        params = ", ".join(f"{a.name}: {a.type}" for a in args)
        result_types = ", ".join(r.type for r in results)
        body = "\n".join(f"  {line}" for line in self.lines)
        ret = f"  func.return {', '.join(r.name for r in results)} : {result_types}"
        return f"func.func @{name}({params}) -> ({result_types}) {{\n{body}\n{ret}\n}}"
