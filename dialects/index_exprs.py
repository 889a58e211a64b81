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
from fractions import Fraction
from typing import TYPE_CHECKING

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import OpResult, SSAValue

if TYPE_CHECKING:
    import sympy

_BINARY = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
    arith.FloorDivSIOp: lambda a, b: _sympy().floor(a / b),
    arith.RemSIOp: lambda a, b: _sympy().Mod(a, b),
    arith.MaxSIOp: lambda a, b: _sympy().Max(a, b),
    arith.MinSIOp: lambda a, b: _sympy().Min(a, b),
}


def _sympy():
    """SymPy, imported on first use: its import is slow, which a command
    that never analyses an index (`opt-tool --help`) should not pay."""
    import sympy

    return sympy


class IndexSymbols:
    """Names SSA values as SymPy integer symbols, stably within one analysis."""

    def __init__(self) -> None:
        self._symbols: dict[SSAValue, sympy.Symbol] = {}

    def symbol(self, value: SSAValue) -> sympy.Symbol:
        if value not in self._symbols:
            name = value.name_hint or f"v{len(self._symbols)}"
            self._symbols[value] = _sympy().Symbol(
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
                return _sympy().Integer(op.value.value.data)
            if type(op) in _BINARY:
                fn = _BINARY[type(op)]
                return fn(self.to_sympy(op.operands[0]), self.to_sympy(op.operands[1]))
            if isinstance(op, arith.IndexCastOp):
                return self.to_sympy(op.input)
        return self.symbol(value)


_INTEGER = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
    arith.FloorDivSIOp: lambda a, b: a // b,
    arith.RemSIOp: lambda a, b: a % b,
    arith.MaxSIOp: max,
    arith.MinSIOp: min,
}
"""`_BINARY` on Python integers: floor division, and `%` taking the divisor's sign as SymPy's `Mod` does."""


def _at_sample_point(value: SSAValue, symbols: dict[SSAValue, int]) -> int | None:
    """`value` as `to_sympy` models it, evaluated with each symbol at a fixed
    integer of its own (`symbols` assigns them in order of first use); None
    where a division by zero leaves it undefined."""
    if isinstance(value, OpResult):
        op = value.op
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            return op.value.value.data
        if type(op) in _INTEGER:
            a = _at_sample_point(op.operands[0], symbols)
            b = _at_sample_point(op.operands[1], symbols)
            if a is None or b is None or (b == 0 and type(op) in (arith.FloorDivSIOp, arith.RemSIOp)):
                return None
            return _INTEGER[type(op)](a, b)
        if isinstance(op, arith.IndexCastOp):
            return _at_sample_point(op.input, symbols)
    if value not in symbols:
        symbols[value] = 1009 + 7919 * len(symbols)
    return symbols[value]


def differ_somewhere(pairs: Iterable[tuple[SSAValue, SSAValue]]) -> bool:
    """Whether some pair of index values provably differs: their `to_sympy`
    expressions take different values at one integer point (distinct primes
    for the symbols). False proves nothing; it spares SymPy the pairs that
    one evaluation refutes (a clamped gather index against a map variable)."""
    symbols: dict[SSAValue, int] = {}
    for a, b in pairs:
        x, y = _at_sample_point(a, symbols), _at_sample_point(b, symbols)
        if x is not None and y is not None and x != y:
            return True
    return False


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


_AFFINE = (arith.AddiOp, arith.SubiOp, arith.MuliOp)


def affine_form(value: SSAValue) -> tuple[dict[SSAValue, int], int] | None:
    """`value` as `to_sympy` models it when that is affine with integer
    coefficients: (coefficient of each opaque value, zero ones dropped;
    constant), the canonical form `sympy.expand` would give. None where a
    floor division, remainder, max, min or product of two non-constants enters
    (SymPy's questions). It answers the common affine indices without SymPy,
    whose import a command analysing only those need not pay."""
    if isinstance(value, OpResult):
        op = value.op
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            return {}, op.value.value.data
        if isinstance(op, arith.IndexCastOp):
            return affine_form(op.input)
        if type(op) in _BINARY:
            if type(op) not in _AFFINE:
                return None
            a, b = affine_form(op.operands[0]), affine_form(op.operands[1])
            if a is None or b is None:
                return None
            if type(op) is arith.MuliOp:
                if a[0] and b[0]:
                    return None
                (terms, _), scale = (a, b[1]) if a[0] else (b, a[1])
                return {v: c * scale for v, c in terms.items() if c * scale}, a[1] * b[1]
            sign = 1 if type(op) is arith.AddiOp else -1
            terms = dict(a[0])
            for v, c in b[0].items():
                terms[v] = terms.get(v, 0) + sign * c
            return {v: c for v, c in terms.items() if c}, a[1] + sign * b[1]
    return {value: 1}, 0


def provably_equal(a: SSAValue, b: SSAValue) -> bool:
    """Whether index values `a` and `b` are equal for all values of the symbols
    (`simplified` difference zero; affine ones compared without SymPy)."""
    fa, fb = affine_form(a), affine_form(b)
    if fa is not None and fb is not None:
        return fa == fb
    symbols = IndexSymbols()
    return simplified(symbols.to_sympy(a) - symbols.to_sympy(b)) == 0


def constant_difference(a: SSAValue, b: SSAValue) -> int | None:
    """`a - b` when its expansion is an integer constant, else None (affine
    values compared without SymPy)."""
    fa, fb = affine_form(a), affine_form(b)
    if fa is not None and fb is not None:
        return fa[1] - fb[1] if fa[0] == fb[0] else None
    symbols = IndexSymbols()
    d = _sympy().expand(symbols.to_sympy(a) - symbols.to_sympy(b))
    return int(d) if d.is_Integer else None


def simplified(expr: sympy.Expr) -> sympy.Expr:
    """`expr` expanded, and simplified further only where that can pay: not a
    polynomial (already canonical after expansion), and free of Max/Min (the
    clamps of guarded gathers, where `simplify` costs milliseconds and, knowing
    no bounds, proves nothing). The result may keep a symbol a full
    simplification would cancel; callers treat symbols as possible dependences."""
    sympy = _sympy()
    expanded = sympy.expand(expr)
    if expanded.is_polynomial() or expanded.has(sympy.Max, sympy.Min):
        return expanded
    return sympy.simplify(expanded)


def used_variables(
    indices: Sequence[SSAValue], variables: Sequence[SSAValue]
) -> set[SSAValue]:
    """Map variables that some index depends on after simplification (`simplified`:
    a superset of the exact answer in rare non-affine cases)."""
    used: set[SSAValue] = set()
    symbols = IndexSymbols()
    free: set[sympy.Symbol] = set()
    for index in indices:
        form = affine_form(index)
        if form is not None:
            used |= form[0].keys()
        else:
            free |= simplified(symbols.to_sympy(index)).free_symbols
    return {v for v in variables if v in used or (free and symbols.symbol(v) in free)}


def translation(indices: Sequence[SSAValue], variables: Sequence[SSAValue]) -> list[int] | None:
    """The constants c with `indices == variables + c` (same length, in order), or None."""
    if len(indices) != len(variables):
        return None
    symbols = IndexSymbols()
    offsets = []
    for index, v in zip(indices, variables):
        form = affine_form(index)
        if form is not None:
            if form[0] != {v: 1}:
                return None
            offsets.append(form[1])
            continue
        c = _sympy().expand(symbols.to_sympy(index) - symbols.symbol(v))
        if not c.is_Integer:
            return None
        offsets.append(int(c))
    return offsets


def _affine_injective(terms: list[dict[SSAValue, int]], extent_of: dict[SSAValue, int | None]) -> bool:
    """`is_injective`'s test on affine indices (`affine_form`'s terms), in
    integers: the same mixed-radix and rank conditions SymPy's path checks."""
    determined: set[SSAValue] = set()
    for t in terms:
        used = {v: e for v, e in extent_of.items() if t.get(v, 0)}
        if all(e is not None for e in used.values()) and _radix(sorted((abs(t[v]), e) for v, e in used.items())):
            determined |= set(used)
    rest = [v for v in extent_of if v not in determined]
    if not rest:
        return True
    return bool(terms) and _rank([[Fraction(t.get(v, 0)) for v in rest] for t in terms]) == len(rest)


def _radix(terms: list[tuple[int, int]]) -> bool:
    """Whether `sum c_k v_k` over 0 <= v_k < e_k is injective, for (|c_k|, e_k) sorted by |c_k|."""
    span = 0
    for coefficient, extent in terms:
        if coefficient <= span:
            return False
        span += coefficient * (extent - 1)
    return True


def _rank(rows: list[list[Fraction]]) -> int:
    """The rank of a rational matrix (Gaussian elimination)."""
    rank, columns = 0, len(rows[0]) if rows else 0
    for c in range(columns):
        pivot = next((r for r in range(rank, len(rows)) if rows[r][c]), None)
        if pivot is None:
            continue
        rows[rank], rows[pivot] = rows[pivot], rows[rank]
        for r in range(len(rows)):
            if r != rank and rows[r][c]:
                f = rows[r][c] / rows[rank][c]
                rows[r] = [x - f * y for x, y in zip(rows[r], rows[rank])]
        rank += 1
    return rank


def _mixed_radix(expr: sympy.Expr, extents: dict[sympy.Symbol, int]) -> bool:
    """Whether `sum c_k v_k + const` over 0 <= v_k < e_k is injective: sorted by
    |c|, each coefficient exceeds the largest span of all smaller terms."""
    return _radix(sorted((abs(expr.coeff(v)), e) for v, e in extents.items()))


def int_constant(value: SSAValue) -> int | None:
    """The value of an integer (or index) `arith.constant`, or None."""
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


def _shifted_variable(index: SSAValue) -> SSAValue:
    """The value `index` adds a constant to (`v + c`, `c + v`, `v - c`), or `index` itself."""
    op = index.owner
    if isinstance(op, arith.AddiOp | arith.SubiOp):
        lhs, rhs = op.operands
        if int_constant(rhs) is not None:
            return lhs
        if isinstance(op, arith.AddiOp) and int_constant(lhs) is not None:
            return rhs
    return index


def is_injective(
    indices: Sequence[SSAValue],
    variables: Sequence[SSAValue],
    extents: Sequence[int | None],
) -> bool:
    """True when distinct iterations provably map to distinct index tuples.

    Every index must be affine in the variables (those of extent 1 are
    ignored). An index whose coefficients form a mixed radix over static extents
    (`8*i + j` with j < 8) determines its variables; the coefficient matrix of
    the remaining variables must have full column rank, so that the integer-linear
    map has a trivial kernel on them. The common cases are answered without
    SymPy: every variable (but those of extent 1) itself or plus a constant
    as an index (injective), one on which no index depends (not: a
    reduction's write), and any tuple of affine indices (`affine_form`; the
    same tests in integers). SymPy takes floor divisions, remainders and the like.
    """
    live_variables = [v for v, e in zip(variables, extents) if e != 1]
    direct = {_shifted_variable(i) for i in indices}
    if all(v in direct for v in live_variables):
        return True
    if len(set().union(*(depends_on(i, live_variables) for i in indices))) < len(live_variables):
        return False
    forms = [affine_form(i) for i in indices]
    if all(f is not None for f in forms):
        return _affine_injective([terms for terms, _ in forms], {v: e for v, e in zip(variables, extents) if e != 1})
    symbols = IndexSymbols()
    exprs = [_sympy().expand(symbols.to_sympy(i)) for i in indices]
    extent_of = {symbols.symbol(v): e for v, e in zip(variables, extents) if e != 1}
    live = list(extent_of)
    if not live:
        return True
    for expr in exprs:
        if not expr.is_polynomial(*live) or _sympy().Poly(expr, *live).total_degree() > 1:
            return False
        if any(not expr.coeff(v).is_number for v in live):
            return False
    determined: set[sympy.Symbol] = set()
    for expr in exprs:
        used = {v: extent_of[v] for v in live if expr.coeff(v) != 0}
        if all(e is not None for e in used.values()) and _mixed_radix(expr, used):
            determined |= set(used)
    rest = [v for v in live if v not in determined]
    if not rest:
        return True
    rows = [[expr.coeff(v) for v in rest] for expr in exprs]
    return bool(rows) and _sympy().Matrix(rows).rank() == len(rest)
