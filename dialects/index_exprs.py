"""Symbolic analysis of df index expressions with SymPy.

An index of a `df.read` / `df.write` is an SSA value of `index` type computed
from map variables with `arith` integer ops. This module turns such values into
SymPy expressions over one symbol per map variable (and one per opaque value
defined outside the analysed maps), and answers the questions verification,
autodiff and fusion ask: which map variables an index depends on, whether a
write provably collides, and whether an index tuple is provably injective.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import sympy
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import OpResult, SSAValue

_BINARY = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
    arith.FloorDivSIOp: lambda a, b: sympy.floor(a / b),
    arith.RemSIOp: lambda a, b: sympy.Mod(a, b),
    arith.MaxSIOp: lambda a, b: sympy.Max(a, b),
    arith.MinSIOp: lambda a, b: sympy.Min(a, b),
}


class IndexSymbols:
    """Names SSA values as SymPy integer symbols, stably within one analysis."""

    def __init__(self) -> None:
        self._symbols: dict[SSAValue, sympy.Symbol] = {}

    def symbol(self, value: SSAValue) -> sympy.Symbol:
        if value not in self._symbols:
            name = value.name_hint or f"v{len(self._symbols)}"
            self._symbols[value] = sympy.Symbol(
                f"{name}_{len(self._symbols)}", integer=True
            )
        return self._symbols[value]

    def to_sympy(self, value: SSAValue) -> sympy.Expr:
        """The expression computing `value`; unknown producers become symbols."""
        if isinstance(value, OpResult):
            op = value.op
            if isinstance(op, arith.ConstantOp) and isinstance(
                op.value, IntegerAttr
            ):
                return sympy.Integer(op.value.value.data)
            if type(op) in _BINARY:
                fn = _BINARY[type(op)]
                return fn(self.to_sympy(op.operands[0]), self.to_sympy(op.operands[1]))
            if isinstance(op, arith.IndexCastOp):
                return self.to_sympy(op.input)
        return self.symbol(value)


def depends_on(value: SSAValue, roots: Iterable[SSAValue]) -> set[SSAValue]:
    """The subset of `roots` that `value` transitively depends on."""
    roots = set(roots)
    found: set[SSAValue] = set()
    seen: set[SSAValue] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v in roots:
            found.add(v)
        elif isinstance(v, OpResult):
            stack.extend(v.op.operands)
    return found


def used_variables(
    indices: Sequence[SSAValue], variables: Sequence[SSAValue]
) -> set[SSAValue]:
    """Map variables that some index really depends on (after simplification)."""
    symbols = IndexSymbols()
    free: set[sympy.Symbol] = set()
    for index in indices:
        free |= sympy.simplify(symbols.to_sympy(index)).free_symbols
    return {v for v in variables if symbols.symbol(v) in free}


def is_injective(
    indices: Sequence[SSAValue],
    variables: Sequence[SSAValue],
    extents: Sequence[int | None],
) -> bool:
    """True when distinct iterations provably map to distinct index tuples.

    Proven when every index is affine in the variables and the coefficient
    matrix over the variables of extent > 1 has full column rank: such an
    integer-linear map has a trivial kernel, so it is injective on Z^n.
    """
    symbols = IndexSymbols()
    exprs = [sympy.expand(symbols.to_sympy(i)) for i in indices]
    live = [symbols.symbol(v) for v, e in zip(variables, extents) if e != 1]
    if not live:
        return True
    rows = []
    for expr in exprs:
        if not expr.is_polynomial(*live) or sympy.Poly(expr, *live).total_degree() > 1:
            return False
        rows.append([expr.coeff(s) for s in live])
    if not rows:
        return False
    if any(not c.is_number for row in rows for c in row):
        return False
    return sympy.Matrix(rows).rank() == len(live)

