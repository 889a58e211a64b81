"""Integer values of the frontend: affine combinations of `index` SSA values.

Python ints, loop variables and sizes are `Affine`: a constant plus integer
multiples of symbols (index SSA values: loop variables, or opaque results of
non-affine arithmetic). Equal expressions compare equal, so `x[:i]` and
`y[:i]` have the same size however often `i` is spelled; constants fold, so
static shapes stay static. `emit` builds the arith ops where they are needed.
"""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import SSAValue


class Affine:
    """`const + sum(coef * symbol)` over index SSA values."""

    __slots__ = ("const", "terms")

    def __init__(self, const: int = 0, terms: Mapping[SSAValue, int] | None = None):
        self.const = const
        self.terms: dict[SSAValue, int] = {s: c for s, c in (terms or {}).items() if c}

    @staticmethod
    def of(x: int | SSAValue | Affine) -> Affine:
        if isinstance(x, Affine):
            return x
        if isinstance(x, int):
            return Affine(x)
        return Affine(0, {x: 1})

    @property
    def static(self) -> int | None:
        return None if self.terms else self.const

    def _key(self) -> tuple:
        return (self.const, frozenset((id(s), c) for s, c in self.terms.items()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Affine) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __add__(self, other: Affine | int) -> Affine:
        o = Affine.of(other)
        terms = dict(self.terms)
        for s, c in o.terms.items():
            terms[s] = terms.get(s, 0) + c
        return Affine(self.const + o.const, terms)

    def __neg__(self) -> Affine:
        return Affine(-self.const, {s: -c for s, c in self.terms.items()})

    def __sub__(self, other: Affine | int) -> Affine:
        return self + -Affine.of(other)

    def scale(self, k: int) -> Affine:
        return Affine(self.const * k, {s: c * k for s, c in self.terms.items()})

    def __repr__(self) -> str:
        parts = [(f"{c}*" if c != 1 else "") + (s.name_hint or "v") for s, c in self.terms.items()]
        if self.const or not parts:
            parts.append(str(self.const))
        return " + ".join(parts).replace("+ -", "- ")

    def emit(self, b: Builder, extra: Mapping[SSAValue, int] | None = None) -> SSAValue:
        """The value as an index SSA value (plus `extra` terms, e.g. map variables)."""
        terms = dict(self.terms)
        for s, c in (extra or {}).items():
            terms[s] = terms.get(s, 0) + c
        value: SSAValue | None = None
        for s, c in terms.items():
            if c == 0:
                continue
            term = s if c == 1 else _op(b, arith.MuliOp(s, const(b, c)))
            value = term if value is None else _op(b, arith.AddiOp(value, term))
        if value is None:
            return const(b, self.const)
        if self.const:
            value = _op(b, arith.AddiOp(value, const(b, self.const)))
        return value


def _op(b: Builder, op) -> SSAValue:
    return b.insert(op).result


def const(b: Builder, value: int) -> SSAValue:
    return b.insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).result


def opaque(b: Builder, op_class, x: Affine, y: Affine) -> Affine:
    """A non-affine combination (product, quotient, ...) as a new symbol."""
    return Affine.of(b.insert(op_class(x.emit(b), y.emit(b))).result)
