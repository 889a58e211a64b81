"""Lazy array values of the frontend.

A NumPy expression is kept as a tree until a statement needs its value:
leaves are affine `View`s of tensors (a plain array, a slice, a transpose, a
diagonal, an element: base index = offset + coef @ view index), Python
constants, integers (`Index`) and `np.arange` (`Iota`); inner nodes are
elementwise `Op`s with NumPy broadcasting. `emit.py` turns a tree into one
`df.map` whose tasklet computes the whole expression, so slicing and
broadcasting cost no copies. A `Cell` holds the current SSA value of a named
array: in-place updates replace it, and views bound to names read through it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, SSAValue

from dfc.frontend.affine import Affine
from dfc.frontend.run_time_sizes import run_time_size

FLOATS = ("f16", "f32", "f64")
UNSIGNED = ("u8", "u16", "u32", "u64")
"""NumPy's unsigned integers: while a function is translated their values have MLIR's unsigned types (`ui8`),
so that loop and branch slots, views and call results carry the signedness; `unsigned.signless` then gives
the function the signless types of the rest of dfc (the bits are the same)."""
IR_TYPES: dict[str, Attribute] = {"f16": f16, "f32": f32, "f64": f64, "i8": i8, "i16": i16, "i32": i32, "i64": i64,
                                  "i1": i1, **{u: IntegerType(int(u[1:]), Signedness.UNSIGNED) for u in UNSIGNED}}
NUMPY_NAMES = {"f16": "float16", "f32": "float32", "f64": "float64", "i8": "int8", "i16": "int16", "i32": "int32",
               "i64": "int64", "i1": "bool", "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64"}
EXACT_FLOAT = {"i8": "f16", "i16": "f32", "i32": "f64", "i64": "f64", "u8": "f16", "u16": "f32", "u32": "f64",
               "u64": "f64"}
"""The narrowest float that holds every value of an integer type (NumPy's promotion of int and float)."""


def dtype_name(t: Attribute) -> str:
    if isinstance(t, Float16Type | Float32Type | Float64Type):
        return {Float16Type: "f16", Float32Type: "f32", Float64Type: "f64"}[type(t)]
    if isinstance(t, IntegerType):
        return f"{'u' if t.signedness.data == Signedness.UNSIGNED else 'i'}{t.width.data}"
    raise TypeError(f"no frontend dtype for {t}")


class Cell:
    """The current value of a named array (replaced by each in-place update).

    `shares` holds the cells of arrays that are views of this one in NumPy but
    separate values here (a reshape of a named array): an update through one
    would change the other, which the frontend refuses while both are live."""

    def __init__(self, value: SSAValue, shares: list[Cell] | None = None):
        self.value = value
        self.shares: list[Cell] = list(shares or [])
        for other in self.shares:
            other.shares.append(self)

    @property
    def type(self) -> TensorType:
        t = self.value.type
        assert isinstance(t, TensorType)
        return t


class Expr:
    """A lazy array: `shape` (sizes as `Affine`), `dtype` ('f64', 'i64', 'i1', ...),
    `weak` for Python numbers (they take the other operand's dtype)."""

    shape: list[Affine]
    dtype: str
    weak: bool = False

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def static_shape(self) -> list[int] | None:
        s = [d.static for d in self.shape]
        return None if any(x is None for x in s) else s  # type: ignore[return-value]


@dataclass(frozen=True)
class Gather:
    """An index read from data: `col * index[i at dims]` added to the base index
    (`col`: base dims; `dims`: the view dimension of each index axis, None where
    the index has size 1)."""

    col: list[int]
    index: Expr
    dims: list[int | None]


@dataclass(eq=False)
class View(Expr):
    """`source[offset + coef @ i + gathers]` for view index i (coef: base dims x
    view dims; gathers: indices read from integer arrays, NumPy's advanced indexing)."""

    source: SSAValue
    shape: list[Affine]
    offset: list[Affine]
    coef: list[list[int]]
    dtype: str
    cell: Cell | None = None  # set when the view names a live array (writes go there)
    gathers: list[Gather] = field(default_factory=list)

    @staticmethod
    def whole(value: SSAValue, cell: Cell | None = None) -> View:
        t = value.type
        assert isinstance(t, TensorType)
        n = t.get_num_dims()
        sizes = [Affine(d) if d >= 0 else Affine.of(run_time_size(value, k)) for k, d in enumerate(t.get_shape())]
        return View(
            value, sizes, [Affine(0)] * n,
            [[int(r == c) for c in range(n)] for r in range(n)], dtype_name(t.element_type), cell,
        )

    @property
    def is_whole(self) -> bool:
        t = self.source.type
        assert isinstance(t, TensorType)
        n = t.get_num_dims()
        return (
            not self.gathers and self.ndim == n and all(o.static == 0 for o in self.offset)
            and all(self.coef[r][c] == int(r == c) for r in range(n) for c in range(n))
            and all(d.static == s if s >= 0 else d == Affine.of(run_time_size(self.source, k))
                    for k, (d, s) in enumerate(zip(self.shape, t.get_shape())))
        )

    def columns(self, cols: list[list[int]], shape: list[Affine], offset: list[Affine] | None = None) -> View:
        """A view with new view dimensions (`cols[k]`: base coefficients of dimension k)."""
        assert not self.gathers, "materialize a gathered view before reshaping its dimensions"
        coef = [[col[r] for col in cols] for r in range(len(self.offset))]
        return View(self.source, shape, offset or self.offset, coef, self.dtype, self.cell)

    def column(self, k: int) -> list[int]:
        return [row[k] for row in self.coef]


@dataclass(eq=False)
class Const(Expr):
    """A Python (or NumPy) number; weak unless it had a NumPy dtype."""

    value: float | int | bool
    dtype: str
    weak: bool = True
    shape: list[Affine] = field(default_factory=list)


@dataclass(eq=False)
class Index(Expr):
    """An integer scalar (a loop variable, a size) used as a number: int64."""

    value: Affine
    dtype: str = "i64"
    weak: bool = True
    shape: list[Affine] = field(default_factory=list)


@dataclass(eq=False)
class Iota(Expr):
    """`np.arange(start, start + step * size, step)` (int64)."""

    start: Affine
    step: int
    size: Affine
    dtype: str = "i64"

    @property
    def shape(self) -> list[Affine]:  # type: ignore[override]
        return [self.size]


@dataclass(eq=False)
class Op(Expr):
    """Elementwise `name(args)` with broadcasting; `dtype` is the result's."""

    name: str
    args: list[Expr]
    shape: list[Affine]
    dtype: str
    attr: object = None  # e.g. the comparison direction


def size_bound(e: Expr, k: int) -> int | None:
    """A constant upper bound of `e.shape[k]` (None when there is none): the
    size itself when constant; for a view, the extent of the base dimensions it
    steps through (slice bounds are assumed to lie within the array); for an
    elementwise op, the bound of an operand that has the dimension."""
    size = e.shape[k].static
    if size is not None:
        return size
    if isinstance(e, View):
        extents = e.source.type.get_shape()  # type: ignore[attr-defined]
        bounds = [-(-extents[r] // abs(e.coef[r][k])) for r in range(len(e.offset)) if e.coef[r][k] and extents[r] >= 0]
        return min(bounds) if bounds else None
    if isinstance(e, Op):
        bounds = [size_bound(a, k - e.ndim + a.ndim) for a in e.args if k - e.ndim + a.ndim >= 0
                  and a.shape[k - e.ndim + a.ndim].static != 1]
        return min((b for b in bounds if b is not None), default=None)
    return None


def result_dtype(args: list[Expr], floating: bool = False) -> str:
    """NumPy's promotion (NEP 50: Python numbers are weak; the arrays' dtypes promote by `np.result_type`:
    int8 with uint8 is int16, uint64 with int64 float64)."""
    strong = [a.dtype for a in args if not a.weak]
    weak = [a.dtype for a in args if a.weak]
    floats = [d for d in strong if d in FLOATS]
    ints = [d for d in strong if d not in FLOATS and d != "i1"]
    if ints and any(d in UNSIGNED for d in ints):
        promoted = _DTYPES[np.result_type(*(NUMPY_NAMES[d] for d in {*floats, *ints}))]
        return "f64" if not is_float(promoted) and (floating or any(d in FLOATS for d in weak)) else promoted
    if floats:
        return max([*floats, *(EXACT_FLOAT[d] for d in ints)], key=FLOATS.index)
    if ints:
        return "f64" if floating or any(d in FLOATS for d in weak) else max(ints, key=lambda d: int(d[1:]))
    if any(d in FLOATS for d in weak) or floating:
        return "f64" if not strong else "f64"
    if strong and all(d == "i1" for d in strong) and all(d == "i1" for d in weak):
        return "i1"
    return "i64"


def is_float(dtype: str) -> bool:
    return dtype in FLOATS


def is_unsigned(dtype: str) -> bool:
    return dtype in UNSIGNED


_DTYPES = {np.dtype(v): k for k, v in NUMPY_NAMES.items()}


def tensor_type(dtype: str, shape: list[int]) -> TensorType:
    return TensorType(IR_TYPES[dtype], shape)


class ListValue(tuple):
    """A Python list's value: a tuple everywhere, except as a subscript, where NumPy reads a list as an index
    array (`x[[0, 2]]`, `x[idx]` with `idx = [0, 2]`) and a tuple as one index per dimension."""


@dataclass
class Method:
    """`x.name` of an array, waiting for its call."""

    value: Expr
    name: str
