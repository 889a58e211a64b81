"""Boolean masks: `x[m] = v`, `x[m] += v`, `np.sum(x[m])`, `x[m].mean()`.

NumPy's `x[m]` has as many elements as `m` has True values: a shape known only
at run time, which the frontend does not build. What people do with it can be
written without that shape, so a masked read stays a lazy `Masked` (the array,
and the mask broadcast to its shape) and its consumers become masked forms:

- an assignment `x[m] = v` (a scalar, or `y[m]` with the same mask) is
  `x = np.where(m, v, x)`; `x[m] op= v` is `x = np.where(m, x op v, x)`;
- a reduction over all elements: `sum` of `where(m, x, 0)`, `prod` of
  `where(m, x, 1)`, `mean` the sum over `count_nonzero(m)`, `var`/`std` the
  masked mean of squared deviations; `len(x[m])` and `x[m].size` count (a
  max or min reduces the built `x[m]`, which raises when it is empty);
- elementwise arithmetic and NumPy's elementwise functions between masked
  reads with the same mask and scalars stay masked (`np.sum((x[m] - mu) ** 2)`).

Any other use of `x[m]` (returning it, indexing it, sorting it, a reduction
along an axis, combining it with an array of another size) builds it
(`dynamic_values.masked`: an array of run-time size). Two masks are the same
when they are the same expression of the same array values (`x > 0` read
twice, before `x` changes).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from dfc.frontend import numpy_api
from dfc.frontend.affine import Affine
from dfc.frontend.arrays import Const, Expr, Index, Iota, Op, View, is_float
from dfc.frontend.numpy_args import static

SHAPE_MESSAGE = ("{what} has a data-dependent shape (as many elements as the mask has True values), which compiled "
                 "code does not build: assign to it (x[m] = v), reduce it over all elements (np.sum(x[m]), "
                 "x[m].mean()), or use np.where(m, x, ...)")


@dataclass(eq=False)
class Masked:
    """`base[mask]` not yet consumed: `mask` is broadcast to `base`'s shape; `lead` is the
    mask's own rank (it selects rows of the leading dimensions), None where not known (then
    the read cannot be built as an array, `dynamic_values.masked`)."""

    base: Expr
    mask: Expr
    lead: int | None = None


def is_mask(p: Any) -> bool:
    return isinstance(p, Expr) and p.dtype == "i1" and p.ndim > 0


def same(a: Any, b: Any) -> bool:
    """Whether two lazy arrays are the same expression of the same values."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, View):
        return (a.source is b.source and a.shape == b.shape and a.offset == b.offset and a.coef == b.coef
                and not a.gathers and not b.gathers)
    if isinstance(a, Op):
        return (a.name == b.name and a.attr == b.attr and a.dtype == b.dtype and len(a.args) == len(b.args)
                and all(same(x, y) for x, y in zip(a.args, b.args)))
    if isinstance(a, Const):
        return a.value == b.value and a.dtype == b.dtype and a.shape == b.shape and a.weak == b.weak
    if isinstance(a, Index):
        return a.value == b.value
    if isinstance(a, Iota):
        return a.start == b.start and a.step == b.step and a.size == b.size
    return False


def split(tr, base: Expr, parts: tuple, node: ast.AST) -> Masked:
    """`base[parts]` where the parts are one boolean mask, then full slices or `...`."""
    k = next(i for i, p in enumerate(parts) if is_mask(p))
    mask = parts[k]
    lead = mask.ndim
    rest = [p for i, p in enumerate(parts) if i != k]
    if k != 0 or not all(p is Ellipsis or p == slice(None) for p in rest):
        raise tr.fail("a boolean mask is supported as the only index (x[m], or x[m, ...] with m over the leading "
                      "dimensions); combine masks with & instead", node)
    if mask.ndim > base.ndim or any(a != b for a, b in zip(mask.shape, base.shape)):
        raise tr.fail(f"the boolean mask's shape ({', '.join(map(str, mask.shape))}) does not match the indexed "
                      f"array's leading dimensions ({', '.join(map(str, base.shape))})", node)
    if mask.ndim < base.ndim:  # m over the leading dimensions selects whole rows: broadcast it
        mask = tr.index(mask, (slice(None),) * mask.ndim + (None,) * (base.ndim - mask.ndim), node)
    return Masked(base, mask, lead)


def combinable(values: list) -> bool:
    """Whether values combine elementwise as masked reads: those masked have one mask and one shape, the
    others are numbers or 0-d arrays (else each masked read is built as an array of its own)."""
    found = [v for v in values if isinstance(v, Masked)]
    return all(same(v.mask, found[0].mask) and v.base.shape == found[0].base.shape for v in found) and all(
        isinstance(v, Masked) or not isinstance(v, Expr) or v.ndim == 0 for v in values)


def _scalar_or_same(tr, m: Masked, v: Any, node: ast.AST, what: str) -> Any:
    """A value combined with `m` elementwise: a number or 0-d array, or the base of a masked read with m's mask."""
    if isinstance(v, Masked):
        if not (same(v.mask, m.mask) and v.base.shape == m.base.shape):
            raise tr.fail(f"{what} masked arrays with different masks (or of different shapes): their elements "
                          "do not correspond", node)
        return v.base
    if isinstance(v, Expr) and v.ndim:
        raise tr.fail(f"{what} an array and a boolean-masked one: the masked one has a data-dependent shape; "
                      "mask both the same way (y[m]) or use np.where", node)
    return v


def binop(tr, op: str, a: Any, b: Any, node: ast.AST) -> Masked:
    m = a if isinstance(a, Masked) else b
    x, y = (_scalar_or_same(tr, m, v, node, "combining") for v in (a, b))
    return Masked(tr.as_expr(tr.binop(op, x, y, node), node), m.mask, m.lead)


def elementwise(tr, handler, args: list, kwargs: dict, node: ast.AST) -> Masked:
    """A NumPy elementwise function of masked reads (and scalars)."""
    m = next(a for a in args if isinstance(a, Masked))
    bases = [_scalar_or_same(tr, m, a, node, "combining") for a in args]
    return Masked(tr.as_expr(handler(tr, bases, kwargs, node), node), m.mask, m.lead)


def assign(tr, target: View, m: Masked, value: Any, op: str | None, node: ast.AST) -> None:
    """`target[mask] = value` (or `op=`): the whole target becomes where(mask, new, old)."""
    new = _scalar_or_same(tr, m, value, node, "assigning to a boolean-masked array")
    current = tr.as_expr(target, node)
    if op is not None:
        new = tr.binop(op, current, new, node)
    new = tr.as_expr(new, node)
    if is_float(new.dtype) and not is_float(current.dtype) and not new.weak:
        raise tr.fail(f"cannot cast the {new.dtype} values into an {current.dtype} array in place", node)
    tr.write(target, tr.elementwise("where", [m.mask, new, current], node, current.dtype), node)


def count(tr, m: Masked, node: ast.AST) -> Expr:
    """The number of selected elements (int64)."""
    ones = tr.elementwise("where", [m.mask, Const(1, "i64", False), Const(0, "i64", False)], node, "i64")
    ones = tr.elementwise("add", [ones, Const(0, "i64", False, list(m.base.shape))], node, "i64")
    return numpy_api.reduce(tr, "add", ones, None, False, node)


LAZY_REDUCTIONS = ("add", "mul", "mean")
"""The reductions over all selected elements a masked form computes (with var and std); a max or min has no
identity NumPy would return for an empty selection, so it reduces the built x[m] (an IndexError when empty)."""


def _fill(kind: str, dtype: str) -> Const:
    return Const(0 if kind == "add" else 1, dtype, False)


def reduce(tr, kind: str, m: Masked, node: ast.AST, ddof: Any = 0) -> Expr:
    """A reduction over all selected elements (`kind`: add, mul, mean, var, std; with an axis or keepdims, and
    max or min, the read is built as an array, `dynamic_values.masked`)."""
    e = m.base
    if kind in ("mean", "var", "std"):
        if not is_float(e.dtype):
            e = numpy_api.astype(tr, e, "f64", node)
        n = count(tr, m, node)
        total = numpy_api.reduce(tr, "add", tr.elementwise("where", [m.mask, e, _fill("add", e.dtype)], node,
                                                           tr.em.concrete(e)), None, False, node)
        mean = tr.elementwise("div", [total, n], node)
        if kind == "mean":
            return mean
        dof = static(ddof)
        if not isinstance(dof, int):
            raise tr.fail(f"np.{kind} needs a constant ddof", node)
        d = tr.binop("sub", e, mean, node)
        squares = tr.elementwise("where", [m.mask, tr.binop("mul", d, d, node), _fill("add", tr.em.concrete(e))],
                                 node, tr.em.concrete(e))
        var = tr.elementwise("div", [numpy_api.reduce(tr, "add", squares, None, False, node),
                                     tr.elementwise("maximum", [tr.binop("sub", n, Affine(dof), node),
                                                                Const(0, "i64", False)], node, "i64")], node)
        return tr.elementwise("sqrt", [var], node) if kind == "std" else var
    dtype = tr.em.concrete(e)
    return numpy_api.reduce(tr, kind, tr.elementwise("where", [m.mask, e, _fill(kind, dtype)], node, dtype),
                            None, False, node)
