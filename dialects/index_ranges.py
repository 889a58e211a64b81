"""Ranges of index values, for bounds proofs (interval arithmetic, no SymPy).

The range of an index is an interval [low, high] whose ends are linear
expressions (`Lin`) over *size terms* (the extents of buffers and tensors,
never negative) and *opaque terms* (values of unknown sign). Map variables
range over [0, bound - 1], `scf.for` variables over [lb, ub - 1]; `arith`
integer ops combine ranges. An access is *in bounds* when, for every
dimension, `0 <= low` and `high <= size - 1` hold for every value of the
terms; it is *out of bounds* when the range is exact (each variable appears
once, every step is 1), its ends and the size are constants, the loops and
maps around it provably run, nothing conditional stands between, and the
range leaves the dimension. Everything else is unknown, and `check-bounds`
guards it at run time.

The analysis knows upstream ops (arith, scf.for, memref, tensor) by their
classes and a dialect's own ops through two interfaces (op traits) they
implement: `IterationSpace` (an op whose body runs once per point of a box,
`df.map`) and `IndexedAccess` (an op that reads or writes one element,
`df.read`, `df.write`). So the dialects' verifiers can use it while it
imports none of them.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects import arith, func, memref, scf, tensor
from xdsl.dialects.builtin import MemRefType, TensorType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.traits import OpTrait

from dfc.dialects.index_exprs import int_constant


class IterationSpace(OpTrait, abc.ABC):
    """The interface of an op whose body runs once for every point of a box: its
    body's first block arguments are the variables, each ranging over [0, bound)."""

    @abc.abstractmethod
    def variable_bounds(self, op: Operation) -> Sequence[int | SSAValue]:
        """Each variable's bound: an int when static, else the SSA value giving it."""

    @abc.abstractmethod
    def tied_operand(self, op: Operation, result: SSAValue) -> SSAValue | None:
        """The operand whose shape the result `result` of `op` has, if any."""


class IndexedAccess(OpTrait, abc.ABC):
    """The interface of an op that reads or writes one element of a buffer."""

    @abc.abstractmethod
    def access(self, op: Operation) -> tuple[SSAValue, list[SSAValue]] | None:
        """The buffer (tensor or memref) and the indices, or None when unknown."""


def _variables(op: Operation) -> tuple[IterationSpace, Sequence[int | SSAValue]] | None:
    space = op.get_trait(IterationSpace)
    return None if space is None else (space, space.variable_bounds(op))


@dataclass(frozen=True)
class Lin:
    """`const + sum(coeff * term)`; a term is `("size", value, dim)` (>= 0) or `("opaque", value)`."""

    const: int = 0
    terms: tuple[tuple[tuple, int], ...] = ()

    @staticmethod
    def term(key: tuple) -> Lin:
        return Lin(0, ((key, 1),))

    def __add__(self, other: Lin) -> Lin:
        coeffs = dict(self.terms)
        for k, c in other.terms:
            coeffs[k] = coeffs.get(k, 0) + c
        return Lin(self.const + other.const, tuple((k, c) for k, c in coeffs.items() if c))

    def scale(self, c: int) -> Lin:
        return Lin(self.const * c, tuple((k, v * c) for k, v in self.terms) if c else ())

    def __sub__(self, other: Lin) -> Lin:
        return self + other.scale(-1)

    @property
    def constant(self) -> int | None:
        return None if self.terms else self.const

    def nonpositive(self) -> bool:
        """Provably <= 0 for every value of the terms."""
        return self.const <= 0 and all(k[0] == "size" and c < 0 for k, c in self.terms)


@dataclass(frozen=True)
class Range:
    low: Lin
    high: Lin
    exact: bool = True
    """Every value in [low, high] is taken (for constant ends) and no variable repeats."""
    variables: frozenset = field(default_factory=frozenset)


def size(buffer: SSAValue, dim: int) -> Lin:
    """The extent of dimension `dim` of a tensor or memref value."""
    t = buffer.type
    assert isinstance(t, TensorType | MemRefType)
    shape = t.get_shape()
    if shape[dim] >= 0:
        return Lin(shape[dim])
    op = buffer.owner
    if isinstance(op, tensor.EmptyOp | memref.AllocOp | memref.AllocaOp):
        dynamic = sum(1 for d in shape[:dim] if d < 0)
        operands = op.dynamic_sizes
        return linear(operands[dynamic])
    if isinstance(op, Operation) and (space := op.get_trait(IterationSpace)) is not None:
        if (tied := space.tied_operand(op, buffer)) is not None:
            return size(tied, dim)
    return Lin.term(("size", buffer, dim))


def linear(value: SSAValue) -> Lin:
    """`value` as a linear expression over sizes and opaque values (bounds)."""
    if (c := int_constant(value)) is not None:
        return Lin(c)
    op = value.owner
    if isinstance(op, tensor.DimOp | memref.DimOp) and (d := int_constant(op.index)) is not None:
        source = op.source.type
        if isinstance(source, TensorType | MemRefType) and 0 <= d < source.get_num_dims():
            return size(op.source, d)
    if isinstance(op, arith.AddiOp):
        return linear(op.lhs) + linear(op.rhs)
    if isinstance(op, arith.SubiOp):
        return linear(op.lhs) - linear(op.rhs)
    if isinstance(op, arith.MuliOp):
        for a, b in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            if (c := int_constant(b)) is not None:
                return linear(a).scale(c)
    if isinstance(op, arith.IndexCastOp):
        return linear(op.input)
    return Lin.term(("opaque", value))


def _variable(value: BlockArgument) -> Range | None:
    owner = value.owner.parent_op() if isinstance(value.owner, Block) else None
    if owner is not None and (space := _variables(owner)) is not None and value.index < len(space[1]):
        bound = space[1][value.index]
        high = (Lin(bound) if isinstance(bound, int) else linear(bound)) - Lin(1)
        return Range(Lin(0), high, True, frozenset([value]))
    if isinstance(owner, scf.ForOp) and value.index == 0:
        step = int_constant(owner.step)
        if step is None or step <= 0:
            return None
        return Range(linear(owner.lb), linear(owner.ub) - Lin(1), step == 1, frozenset([value]))
    return None


def _combine_constant(a: Range, b: Range, fn) -> Range | None:
    ends = [a.low.constant, a.high.constant, b.low.constant, b.high.constant]
    if None in ends:
        return None
    values = [fn(x, y) for x in ends[:2] for y in ends[2:]]
    return Range(Lin(min(values)), Lin(max(values)), False, a.variables | b.variables)


def index_range(value: SSAValue) -> Range | None:
    """The range of index `value`, or None when unknown."""
    if (c := int_constant(value)) is not None:
        return Range(Lin(c), Lin(c))
    if isinstance(value, BlockArgument):
        return _variable(value)
    op = value.owner
    if isinstance(op, arith.IndexCastOp):
        return index_range(op.input)
    if isinstance(op, arith.AddiOp | arith.SubiOp | arith.MuliOp | arith.MinSIOp | arith.MaxSIOp | arith.FloorDivSIOp | arith.RemSIOp):
        a, b = index_range(op.lhs), index_range(op.rhs)
        if a is None or b is None:
            return None
        exact = a.exact and b.exact and not (a.variables & b.variables)
        variables = a.variables | b.variables
        if isinstance(op, arith.AddiOp):
            return Range(a.low + b.low, a.high + b.high, exact, variables)
        if isinstance(op, arith.SubiOp):
            return Range(a.low - b.high, a.high - b.low, exact, variables)
        if isinstance(op, arith.MuliOp):
            for x, y in ((a, b), (b, a)):
                c = y.low.constant
                if c is not None and y.high.constant == c:
                    low, high = (x.low.scale(c), x.high.scale(c)) if c >= 0 else (x.high.scale(c), x.low.scale(c))
                    return Range(low, high, exact and abs(c) <= 1, variables)
            return _combine_constant(a, b, lambda p, q: p * q)
        if isinstance(op, arith.MinSIOp | arith.MaxSIOp):
            lows, highs = (a.low - b.low).constant, (a.high - b.high).constant
            if lows is None or highs is None:
                return None
            if isinstance(op, arith.MinSIOp):
                low, high = (a.low if lows <= 0 else b.low), (a.high if highs <= 0 else b.high)
            else:
                low, high = (a.low if lows >= 0 else b.low), (a.high if highs >= 0 else b.high)
            return Range(low, high, False, variables)
        d = b.low.constant
        if d is None or b.high.constant != d or d <= 0:
            return None
        if isinstance(op, arith.FloorDivSIOp):
            return _combine_constant(a, b, lambda p, q: p // q)
        if a.low.constant is not None and a.low.constant >= 0:  # remsi of a non-negative value
            return Range(Lin(0), Lin(d - 1), False, variables)
    return None


def _access(op: Operation) -> tuple[SSAValue, list[SSAValue]] | None:
    """The buffer and indices of an access op."""
    if (interface := op.get_trait(IndexedAccess)) is not None:
        return interface.access(op)
    if isinstance(op, memref.LoadOp):
        return op.memref, list(op.indices)
    if isinstance(op, memref.StoreOp):
        return op.memref, list(op.indices)
    if isinstance(op, tensor.ExtractOp):
        return op.tensor, list(op.indices)
    if isinstance(op, tensor.InsertOp):
        return op.dest, list(op.indices)
    return None


def proven_in_bounds(op: Operation) -> bool:
    """Whether every index of the access `op` provably lies inside its buffer."""
    access = _access(op)
    if access is None:
        return False
    buffer, indices = access
    for dim, index in enumerate(indices):
        r = index_range(index)
        if r is None:
            return False
        if not (Lin(0) - r.low).nonpositive() or not (r.high - size(buffer, dim) + Lin(1)).nonpositive():
            return False
    return True


def _unconditional(op: Operation) -> bool:
    """Whether only iteration spaces (maps), for loops and the function stand between `op` and its function."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        if not isinstance(parent, scf.ForOp) and parent.get_trait(IterationSpace) is None:
            return False
        parent = parent.parent_op()
    return True


def out_of_bounds(op: Operation) -> tuple[int, int, int, int] | None:
    """(dim, low, high, size) for an index of `op` that provably leaves its
    buffer in some executed iteration, else None."""
    access = _access(op)
    if access is None or not _unconditional(op) or not _runs(op):
        return None
    buffer, indices = access
    for dim, index in enumerate(indices):
        r = index_range(index)
        extent = size(buffer, dim).constant
        if r is None or not r.exact or extent is None:
            continue
        low, high = r.low.constant, r.high.constant
        if low is None or high is None or low > high:
            continue
        if low < 0 or high >= extent:
            return dim, low, high, extent
    return None


def _runs(op: Operation) -> bool:
    """Whether every map and loop around `op` has a constant, positive trip count."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        space = _variables(parent)
        ivs = parent.regions[0].block.args[: len(space[1])] if space is not None else [parent.body.block.args[0]]
        for v in ivs:
            r = _variable(v)
            if r is None or r.low.constant is None or r.high.constant is None or r.low.constant > r.high.constant:
                return False
        parent = parent.parent_op()
    return True
