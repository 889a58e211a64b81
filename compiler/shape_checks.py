"""Which dynamic argument sizes a function's maps rely on, checked at each call.

A function with a dynamically shaped argument (`tensor<?x16xf32>`) takes its
sizes from the arrays, so a map bounded by one argument's size that reads
another argument relies on the second being large enough. `access_bounds`
finds, at the df level (after `expand-library`), every `df.read`/`df.write` of
a function argument whose index is affine in the enclosing maps' variables,
with bounds that are constants or sizes of arguments (`tensor.dim`), and
records the range of each index as SymPy expressions in those sizes.
`check_access` evaluates them on the actual shapes before a call and raises
`ValueError` naming the argument, so no call makes the compiled code read or
write outside an argument. Accesses the analysis cannot bound (an index or a
bound computed otherwise) are not checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, ModuleOp, TensorType
from xdsl.ir import BlockArgument, SSAValue

from dfc.dialects import df
from dfc.dialects.index_exprs import IndexSymbols

if TYPE_CHECKING:
    import sympy


@dataclass(frozen=True)
class AccessBound:
    """Argument `arg` is indexed over [low, high] in dimension `dim` whenever
    every extent of the enclosing maps is positive."""

    arg: int
    dim: int
    low: sympy.Expr
    high: sympy.Expr
    extents: tuple[sympy.Expr, ...]


def size_symbol(arg: int, dim: int) -> sympy.Symbol:
    import sympy  # on first use: its import is slow, and a module without dynamic shapes never needs it

    return sympy.Symbol(f"size_{arg}_{dim}", integer=True, nonnegative=True)


def _bound(value: int | SSAValue, f: func.FuncOp) -> sympy.Expr | None:
    """A map bound as a constant or an argument size, else None."""
    import sympy

    if isinstance(value, int):
        return sympy.Integer(value)
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return sympy.Integer(op.value.value.data)
    if isinstance(op, tensor.DimOp):
        source, index = op.source, op.index.owner
        if _argument(source, f) is not None and isinstance(index, arith.ConstantOp):
            return size_symbol(_argument(source, f), index.value.value.data)  # type: ignore[arg-type, union-attr]
    return None


def _argument(value: SSAValue, f: func.FuncOp) -> int | None:
    if isinstance(value, BlockArgument) and value.owner is f.body.block:
        return value.index
    return None


def _access(op: df.ReadOp | df.WriteOp, source: SSAValue, f: func.FuncOp) -> list[AccessBound]:
    import sympy

    arg = _argument(source, f)
    if arg is None or not isinstance(source.type, TensorType):
        return []
    symbols = IndexSymbols()
    extents: dict[sympy.Symbol, sympy.Expr] = {}
    for m in df.enclosing_maps(op):
        for iv, b in zip(m.ivs, m.bounds):
            extent = _bound(b, f)
            if extent is None:
                return []
            extents[symbols.symbol(iv)] = extent
    found = []
    for dim, index in enumerate(op.indices):
        expr = sympy.expand(symbols.to_sympy(index))
        if not expr.free_symbols <= set(extents) or not expr.is_polynomial(*extents):
            return []
        if extents and sympy.Poly(expr, *extents).total_degree() > 1:
            return []
        low = high = expr.subs({v: 0 for v in extents})
        for v, extent in extents.items():
            c = expr.coeff(v)
            if not c.is_number:
                return []
            if c > 0:
                high += c * (extent - 1)
            else:
                low += c * (extent - 1)
        found.append(AccessBound(arg, dim, low, high, tuple(extents.values())))
    return found


def has_dynamic_arguments(module: ModuleOp) -> bool:
    return any(
        isinstance(t, TensorType) and DYNAMIC_INDEX in t.get_shape()
        for f in module.ops if isinstance(f, func.FuncOp) for t in f.function_type.inputs.data
    )


def access_bounds(module: ModuleOp) -> dict[str, list[AccessBound]]:
    """Per function with a dynamically shaped argument, its analysable accesses
    (`module` at the df level: run `expand-library` first)."""
    bounds: dict[str, list[AccessBound]] = {}
    for f in module.ops:
        if not isinstance(f, func.FuncOp) or f.is_declaration:
            continue
        if not any(isinstance(t, TensorType) and DYNAMIC_INDEX in t.get_shape() for t in f.function_type.inputs.data):
            continue
        found = []
        for op in f.walk():
            if isinstance(op, df.ReadOp):
                found += _access(op, op.source, f)
            elif isinstance(op, df.WriteOp) and (target := op.target_map()) is not None:
                found += _access(op, target.outs[list(target.out_args).index(op.dest)], f)
        bounds[f.sym_name.data] = found
    return bounds


def check_access(name: str, bounds: list[AccessBound], shapes: dict[int, tuple[int, ...]]) -> None:
    """Raise ValueError if a call with argument `shapes` would index outside one."""
    sizes = {size_symbol(k, d): n for k, shape in shapes.items() for d, n in enumerate(shape)}
    for b in bounds:
        if any(int(e.subs(sizes)) <= 0 for e in b.extents):
            continue
        low, high = int(b.low.subs(sizes)), int(b.high.subs(sizes))
        size = shapes[b.arg][b.dim]
        if low < 0 or high >= size:
            raise ValueError(
                f"@{name} argument #{b.arg} has size {size} in dimension {b.dim}, but the program "
                f"indexes it over [{low}, {high}] for these argument shapes (dimensions that must agree)"
            )
