"""Indexing of the NumPy frontend: the part of `translate.Translator` that turns
subscripts (integers, loop variables, slices, `None`, `...`, integer arrays)
into views of an array (`arrays.View`: an offset and a column per dimension,
plus gathers for NumPy's advanced indexing), and NumPy's broadcasting of
shapes."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import IndexType, i64
from xdsl.ir import SSAValue

from dfc.frontend import dynamic_values, masks, numpy_api
from dfc.frontend.affine import Affine, opaque
from dfc.frontend.arrays import Const, Expr, Gather, Index, Iota, ListValue, View, is_float, is_unsigned


def broadcast(shapes: list[list[Affine]], fail: Callable[[str], Exception]) -> list[Affine]:
    """NumPy's broadcast of `shapes` (`fail(message)` builds the error when they do not)."""
    n = max((len(s) for s in shapes), default=0)
    out: list[Affine] = []
    for k in range(n):
        dims = [s[len(s) - n + k] for s in shapes if len(s) - n + k >= 0]
        chosen = Affine(1)
        for d in dims:
            if d.static == 1:
                continue
            if chosen.static == 1:
                chosen = d
            elif d != chosen:
                shown = " and ".join(f"({', '.join(map(str, s))})" for s in shapes)
                if d.static is None or chosen.static is None:
                    raise fail(f"shapes {shown} do not broadcast: a size known only at run time (a loop variable, "
                               "x[m], np.nonzero, np.unique) matches only sizes that are equal by construction "
                               "(reads of one mask, slices of one extent); use np.where(m, ...) on the whole arrays")
                raise fail(f"shapes {shown} do not broadcast")
        out.append(chosen)
    return out


def _data_index(p: Any) -> bool:
    """An index that is an integer array or a run-time integer read from data."""
    return isinstance(p, Expr) and not (isinstance(p, Const) and not p.shape)


def _never_negative(symbol: SSAValue) -> bool:
    """A size (`tensor.dim`) or a count clamped at zero (`max(d, 0)`, `Indexing._count`)."""
    op = symbol.owner
    if isinstance(op, tensor.DimOp):
        return True
    return (isinstance(op, arith.MaxSIOp) and isinstance(op.rhs.owner, arith.ConstantOp)
            and op.rhs.owner.value.value.data == 0)


class Indexing:
    """Subscripts to views, mixed into `Translator`, whose builder (`b`),
    emitter (`em`) and expression methods (`expr`, `integer`, `fail`) they use."""

    def runtime_integer(self, e: Expr) -> Affine:
        """A 0-d integer array read from data used as an integer (`A[p[i]:p[i + 1]]`, a
        size, a loop bound): an index symbol, assumed in range like a loop variable.
        A read of the same element in the same block is the same symbol, so that
        `x[p[i]:p[i + 1]]` and `y[p[i]:p[i + 1]]` are known to have one size."""
        block = self.b.insertion_point.block
        key = (block, e.source, tuple(e.offset), e.dtype) if isinstance(e, View) and not e.gathers else None
        if key in self.runtime_ints:
            return self.runtime_ints[key]
        t = self.em.materialize(e, "i64")
        scalar = self.b.insert(tensor.ExtractOp(t, [], i64)).result
        value = Affine.of(self.b.insert(arith.IndexCastOp(scalar, IndexType())).result)
        if key is not None:
            self.runtime_ints[key] = value
        self.data_symbols.add(value.emit(self.b))
        return value

    def from_data(self, x: Affine) -> bool:
        return any(sym in self.data_symbols for sym in x.terms)

    def lowest(self, x: Affine) -> Affine:
        """`x` with each loop variable replaced by the end of its range that makes `x` smallest."""
        low = Affine(x.const)
        for sym, c in x.terms.items():
            ends = self.loop_ranges.get(sym)
            low = low + (Affine(0, {sym: c}) if ends is None else self.lowest(ends[0 if c > 0 else 1].scale(c)))
        return low

    def _nonnegative(self, x: Affine) -> bool:
        """Whether `x` is provably >= 0 wherever it is evaluated (loop variables in their
        ranges; array sizes and clamped counts are never negative)."""
        low = self.lowest(x)
        return low.const >= 0 and all(c > 0 and _never_negative(s) for s, c in low.terms.items())

    def _count(self, start: Affine, stop: Affine) -> Affine:
        """NumPy's length of a slice between `start` and `stop` (both normalised), `max(stop -
        start, 0)`: a reversed slice is empty on both engines. The clamp is a symbol (one per
        difference in a block, so slices of one length keep one size) unless the difference
        is provably non-negative."""
        diff = stop - start
        if diff.static is not None or (not self.from_data(diff) and self._nonnegative(diff)):
            return Affine(max(diff.static, 0)) if diff.static is not None else diff
        key = (self.b.insertion_point.block, "count", diff)
        if key not in self.runtime_ints:
            zero = Affine(0).emit(self.b)
            self.runtime_ints[key] = Affine.of(self.b.insert(arith.MaxSIOp(diff.emit(self.b), zero)).result)
        return self.runtime_ints[key]

    def _within(self, stop: Affine, size: Affine) -> Affine:
        """NumPy's clamp of a slice's stop to the size, `min(stop, size)`, for a view whose size
        depends on loop variables (`x[j:i][:2]`), unless provably not needed (a read past a
        static or argument size is an IndexError at run time instead, as for a bound from data)."""
        if all(isinstance(s.owner, tensor.DimOp) for s in size.terms) or self._nonnegative(size - stop):
            return stop
        key = (self.b.insertion_point.block, "within", stop, size)
        if key not in self.runtime_ints:
            self.runtime_ints[key] = Affine.of(self.b.insert(arith.MinSIOp(stop.emit(self.b), size.emit(self.b))).result)
        return self.runtime_ints[key]

    def _clamp(self, kind: str, bound: Affine, limit: Affine) -> Affine:
        """`min(bound, limit)` or `max(bound, limit)` (a reversed slice's clipping): folded when
        provable, else one symbol per bound and limit in a block."""
        over = (limit - bound) if kind == "min" else (bound - limit)
        if over.static is not None or (not self.from_data(over) and self._nonnegative(over)):
            return bound if over.static is None or over.static >= 0 else limit
        key = (self.b.insertion_point.block, kind, bound, limit)
        if key not in self.runtime_ints:
            op = arith.MinSIOp if kind == "min" else arith.MaxSIOp
            self.runtime_ints[key] = Affine.of(self.b.insert(op(bound.emit(self.b), limit.emit(self.b))).result)
        return self.runtime_ints[key]

    def _wrap(self, bound: Affine, size: Affine) -> Affine:
        """A slice bound with NumPy's wrap of a negative value (`bound + size`): at run time
        (one symbol per bound and size in a block, so slices between the same values keep
        one size) for a bound read from data or one that may be negative (a loop variable
        minus a constant); folded for a constant; kept for a provably non-negative one."""
        if bound.static is not None:
            return bound + size if bound.static < 0 else bound
        if not self.from_data(bound) and self._nonnegative(bound):
            return bound
        key = (self.b.insertion_point.block, "wrap", bound, size)
        if key not in self.runtime_ints:
            v = bound.emit(self.b)
            negative = self.b.insert(arith.CmpiOp(v, Affine(0).emit(self.b), "slt")).result
            wrapped = self.b.insert(arith.AddiOp(v, size.emit(self.b))).result
            chosen = self.b.insert(arith.SelectOp(negative, wrapped, v)).result
            self.data_symbols.add(chosen)
            self.runtime_ints[key] = Affine.of(chosen)
        return self.runtime_ints[key]

    def subscript(self, node: ast.expr) -> tuple:
        parts = node.elts if isinstance(node, ast.Tuple) else [node]
        out: list[Any] = []
        for p in parts:
            if isinstance(p, ast.Slice):
                out.append(slice(*(None if x is None else self.expr(x) for x in (p.lower, p.upper, p.step))))
            else:
                value = self.expr(p)
                if isinstance(value, ListValue):  # x[[0, 2]]: a list is an index array (or a mask), as np.array makes it
                    value = numpy_api.HANDLERS[np.array](self, [value], {}, p)
                out.append(dynamic_values.masked(self, value, p) if isinstance(value, masks.Masked) else value)
        if not isinstance(node, ast.Tuple) and isinstance(out[0], tuple):  # x[t] of a tuple t is x[t[0], t[1], ...]
            return out[0]
        return tuple(out)

    def index(self, base: Expr, parts: tuple, node: ast.AST, keep_cell: bool = False, scatter: bool = False,
              wrap: bool = True) -> Expr:
        """Basic indexing (ints, also loop variables; slices, None, Ellipsis) and
        reads at integer arrays (NumPy's advanced indexing, as gathers; negative
        indices wrap, others out of range are an IndexError at run time). With
        `keep_cell` the view keeps the array's cell (an assignment's target); with
        `scatter` too, also when it has gathers (a scatter, `scatter.py`). Without
        `wrap` a negative index is out of range (a read that must raise)."""
        if not isinstance(base, View) or base.gathers:
            base = View.whole(self.em.materialize(base))
        consumed = sum(1 for p in parts if p is not None and p is not Ellipsis)
        if any(p is Ellipsis for p in parts):
            k = next(i for i, p in enumerate(parts) if p is Ellipsis)
            parts = parts[:k] + (slice(None),) * (base.ndim - consumed) + parts[k + 1:]
        elif consumed < base.ndim:
            parts = parts + (slice(None),) * (base.ndim - consumed)
        if sum(1 for p in parts if p is not None) > base.ndim:
            raise self.fail(f"too many indices for an array of rank {base.ndim}", node)
        for p in parts:
            if isinstance(p, Expr) and p.dtype == "i1" and p.ndim:
                raise self.fail("a boolean mask is supported as the only index (x[m] = v, np.sum(x[m]))", node)
            if isinstance(p, Expr) and is_float(p.dtype):
                raise self.fail("an index must be an integer, not a float array", node)
        advanced = [k for k, p in enumerate(parts) if _data_index(p)]
        offset = list(base.offset)
        cols: list[list[int]] = []
        shape: list[Affine] = []
        gathers: list[Gather] = []
        batch: list[Affine] = []
        if advanced:
            batch = broadcast([parts[k].shape for k in advanced], lambda m: self.fail(m, node))
            group = [k for k, p in enumerate(parts) if k in advanced or isinstance(p, Affine | int)]
            adjacent = group == list(range(group[0], group[-1] + 1))
            at = group[0] if adjacent else 0
        k = 0
        for position, p in enumerate(parts):
            if advanced and position == at and not (adjacent and position != group[0]):
                first = len(cols)
                cols += [[0] * len(offset) for _ in batch]
                shape += batch
            if p is None:
                cols.append([0] * len(offset))
                shape.append(Affine(1))
                continue
            col, size = base.column(k), base.shape[k]
            k += 1
            if isinstance(p, slice):
                start, count, step = self._slice(p, size, node)
                offset = [o + start.scale(c) for o, c in zip(offset, col)]
                cols.append([c * step for c in col])
                shape.append(count)
                continue
            if _data_index(p):
                dims = [first + len(batch) - p.ndim + a for a in range(p.ndim)]
                if isinstance(p, Iota):  # affine: a slice in disguise
                    cols[dims[0]] = [x + c * p.step for x, c in zip(cols[dims[0]], col)]
                    offset = [o + p.start.scale(c) for o, c in zip(offset, col)]
                    continue
                if keep_cell and not scatter:
                    raise self.fail("assignment at an array of indices (a scatter) is not supported here", node)
                p = self._wrap_indices(p, size, node) if wrap else p
                dims = [d if not (s.static == 1 and batch[d - first].static != 1) else None for d, s in zip(dims, p.shape)]
                gathers.append(Gather(col, p, dims))
                continue
            i = self.integer(p, node)
            if i.static is not None and i.static < 0:
                i = i + size
            if i.static is not None and size.static is not None and not 0 <= i.static < size.static:
                raise self.fail(f"index {p} is out of bounds for a dimension of size {size.static}", node)
            offset = [o + i.scale(c) for o, c in zip(offset, col)]
        view = View(base.source, shape, offset, [[col[r] for col in cols] for r in range(len(offset))], base.dtype,
                    base.cell if (keep_cell or shape) and (scatter or not gathers) else None, gathers)
        view.weak = base.weak and not shape
        return view

    def _wrap_indices(self, p: Expr, size: Affine, node: ast.AST) -> Expr:
        """An integer index array with NumPy's wrap of negative values (`i + size` where `i < 0`), as int64;
        an unsigned or boolean one, or constants that are all non-negative, as they are."""
        if is_unsigned(p.dtype) or p.dtype == "i1":
            return p
        if isinstance(p, Const) and p.value >= 0:
            return p
        if p.dtype != "i64":
            p = self.elementwise("convert", [p], node, "i64")
        negative = self.elementwise("compare", [p, Const(0, "i64", False)], node, "i1", ("lt", "i64"))
        return self.elementwise("where", [negative, self.elementwise("add", [p, Index(size)], node, "i64"), p],
                                node, "i64")

    def _slice(self, p: slice, size: Affine, node: ast.AST) -> tuple[Affine, Affine, int]:
        step = 1 if p.step is None else self.integer(p.step, node).static
        if step is None or step == 0:
            raise self.fail("a slice step must be a nonzero constant", node)
        start = None if p.start is None else self.integer(p.start, node)
        stop = None if p.stop is None else self.integer(p.stop, node)
        known = [x.static for x in (start, stop) if x is not None]
        if size.static is not None and all(x is not None for x in known):
            s = slice(None if start is None else start.static, None if stop is None else stop.static, step)
            a, z, st = s.indices(size.static)
            return Affine(a), Affine(len(range(a, z, st))), st
        if step < 0:
            # NumPy's clipping: start to at most size - 1, stop to at least -1 (before the first
            # element, also where it is omitted)
            start = self._clamp("min", self._wrap(start, size), size - 1) if start is not None else size - 1
            stop = self._clamp("max", self._wrap(stop, size), Affine(-1)) if stop is not None else Affine(-1)
            count = self._count(stop, start)
            if step != -1:  # one symbol per count and step in a block, so equal slices keep one size
                key = (self.b.insertion_point.block, "ceildiv", count, -step)
                if key not in self.runtime_ints:
                    self.runtime_ints[key] = opaque(self.b, arith.CeilDivSIOp, count, Affine(-step))
                count = self.runtime_ints[key]
            return start, count, step
        start = self._wrap(start, size) if start is not None else Affine(0)
        stop = self._within(self._wrap(stop, size), size) if stop is not None else size
        count = self._count(start, stop)
        if step != 1:
            count = opaque(self.b, arith.CeilDivSIOp, count, Affine(step))
        return start, count, step
