"""NumPy's shape functions: transpose, flip, reshape, ravel, concatenate,
stack (and hstack, vstack, dstack, column_stack, atleast_1d/2d/3d), diag and diagonal (views where NumPy gives views)."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from dfc.dialects import nn
from dfc.dialects.nn_shape import ConcatenateOp
from dfc.frontend import run_time_shapes
from dfc.frontend.affine import Affine
from dfc.frontend.arrays import Cell, Const, Expr, View, is_float, result_dtype
from dfc.frontend.numpy_args import (
    Handler,
    axes_of,
    bind,
    check_order,
    expr_of,
    no_kwargs,
)


def view_of(tr, e: Expr) -> View:
    return e if isinstance(e, View) and not e.gathers else View.whole(tr.em.materialize(e))


def transpose(tr, e: Expr, axes: Any, node: ast.AST) -> Expr:
    if axes is None or axes == ():
        perm = list(range(e.ndim))[::-1]
    else:
        items = [tr.integer(a, node).static for a in (axes if isinstance(axes, tuple) else (axes,))]
        perm = [k % e.ndim if k is not None and -e.ndim <= k < e.ndim else k for k in items]  # type: ignore[operator]
    if sorted(perm) != list(range(e.ndim)):  # type: ignore[type-var]
        raise tr.fail(f"axes {perm} are not a permutation of the array's dimensions", node)
    if e.ndim < 2:
        return e
    v = view_of(tr, e)
    return v.columns([v.column(k) for k in perm], [v.shape[k] for k in perm])


def _transpose(tr, args, kwargs, node):
    a, axes = bind(tr, args, kwargs, node, "np.transpose", ("a", "axes"), (None,))
    return transpose(tr, expr_of(tr, a, node), axes, node)


def _flip(tr, args, kwargs, node):
    a, axis = bind(tr, args, kwargs, node, "np.flip", ("m", "axis"), (None,))
    e = expr_of(tr, a, node)
    v = view_of(tr, e)
    for k in axes_of(tr, axis, e.ndim, node):
        col = v.column(k)
        last = v.shape[k] - 1
        offset = [o + last.scale(c) for o, c in zip(v.offset, col)]
        cols = [[-c for c in v.column(j)] if j == k else v.column(j) for j in range(v.ndim)]
        v = v.columns(cols, v.shape, offset)
    return v


def shape_of(tr, shape: Any, node: ast.AST) -> list[int]:
    items = shape if isinstance(shape, tuple) else (shape,)
    out = []
    for d in items:
        k = tr.integer(d, node).static
        if k is None:
            raise tr.fail("array sizes must be constants (or depend only on argument shapes)", node)
        out.append(k)
    return out


def reshape(tr, e: Expr, shape: Any, node: ast.AST) -> Expr:
    dims = shape_of(tr, shape, node)
    if e.static_shape is None:
        return run_time_shapes.reshape(tr, e, dims, node)
    total = int(np.prod(e.static_shape or [1]))
    if dims.count(-1) == 1:
        known = int(np.prod([d for d in dims if d != -1]))
        if known == 0:
            raise tr.fail(f"cannot reshape an array of {total} elements into shape {tuple(dims)}: -1 is ambiguous", node)
        dims[dims.index(-1)] = total // known
    if any(d < 0 for d in dims) or int(np.prod(dims or [1])) != total:
        raise tr.fail(f"cannot reshape an array of {total} elements into shape {tuple(dims)}", node)
    src = tr.em.materialize(e)
    result = tr.b.insert(nn.ReshapeOp(src, dims)).result
    if isinstance(e, View) and e.cell is not None and not e.gathers:  # NumPy's result is a view of e's memory
        return View.whole(result, Cell(result, shares=[e.cell, *e.cell.shares]))  # and what e's memory may be
    return View.whole(result)


def _reshape(tr, args, kwargs, node):
    a, shape, order = bind(tr, args, kwargs, node, "np.reshape", ("a", "shape", "order"), (None,))
    check_order(tr, order, node, "np.reshape")
    return reshape(tr, expr_of(tr, a, node), shape, node)


def _ravel(tr, args, kwargs, node):
    a, order = bind(tr, args, kwargs, node, "np.ravel", ("a", "order"), (None,))
    check_order(tr, order, node, "np.ravel")
    return flat(tr, expr_of(tr, a, node), node)


def flat(tr, e: Expr, node: ast.AST) -> Expr:
    return e if e.ndim == 1 else reshape(tr, e, (Affine(-1),), node)


def _concatenate(tr, args, kwargs, node):
    parts, axis = bind(tr, args, kwargs, node, "np.concatenate", ("arrays", "axis"), (Affine(0),))
    if not isinstance(parts, tuple) or not parts:
        raise tr.fail("np.concatenate takes a non-empty list or tuple of arrays", node)
    exprs = [expr_of(tr, p, node) for p in parts]
    if axis is None:  # the flattened arrays
        exprs, axis = [flat(tr, e, node) for e in exprs], Affine(0)
    if isinstance(axis, tuple) or any(e.ndim != exprs[0].ndim for e in exprs) or exprs[0].ndim == 0:
        raise tr.fail("np.concatenate takes arrays of one rank (at least 1) and one integer axis", node)
    k = axes_of(tr, axis, exprs[0].ndim, node)[0]
    dtype = result_dtype(exprs)
    if all(e.weak for e in exprs) and is_float(dtype):
        dtype = tr.default_float
    if any(e.static_shape is None for e in exprs):
        return run_time_shapes.concatenate(tr, exprs, k, dtype, node)
    shapes = [[d for j, d in enumerate(e.static_shape) if j != k] for e in exprs]  # type: ignore[arg-type]
    if any(s != shapes[0] for s in shapes):
        raise tr.fail(f"np.concatenate: the arrays' sizes differ outside axis {k}", node)
    values = [tr.em.materialize(e, dtype) for e in exprs]
    return View.whole(tr.b.insert(ConcatenateOp(values, k)).result)


def _stack(tr, args, kwargs, node):
    parts, axis = bind(tr, args, kwargs, node, "np.stack", ("arrays", "axis"), (Affine(0),))
    if not isinstance(parts, tuple) or not parts:
        raise tr.fail("np.stack takes a non-empty list or tuple of arrays", node)
    exprs = [expr_of(tr, p, node) for p in parts]
    if any(e.shape != exprs[0].shape for e in exprs):
        raise tr.fail("np.stack takes arrays of one shape (sizes known only at run time: from one selection)", node)
    k = axes_of(tr, axis, exprs[0].ndim + 1, node)[0]
    return _concatenate(tr, [tuple(_new_axes(tr, e, [k], node) for e in exprs), Affine(k)], {}, node)


def _new_axes(tr, e: Expr, at: list[int], node: ast.AST) -> Expr:
    """`e` with dimensions of size 1 at positions `at` of the result (a reshape; a view of run-time sizes)."""
    rank = e.ndim + len(at)
    if e.static_shape is None:
        return tr.index(e, tuple(None if j in at else slice(None) for j in range(rank)), node)
    dims = iter(e.static_shape)
    return reshape(tr, e, tuple(Affine(1 if j in at else next(dims)) for j in range(rank)), node)


def _at_least(tr, e: Expr, rank: int, node: ast.AST) -> Expr:
    """NumPy's atleast_1d/2d/3d of one array: (n,) is (1, n) in 2-d, (1, n, 1) in 3-d; (m, n) is (m, n, 1)."""
    if e.ndim >= rank:
        return e
    if rank == 3:
        return _new_axes(tr, e, [0, 2] if e.ndim == 1 else [2] if e.ndim == 2 else [0, 1, 2], node)
    return _new_axes(tr, e, list(range(rank - e.ndim)), node)


def _atleast(rank: int):
    """np.atleast_1d/2d/3d: one array, or a tuple of them for several."""

    def handler(tr, args, kwargs, node):
        no_kwargs(tr, kwargs, node)
        if not args:
            raise tr.fail(f"np.atleast_{rank}d takes at least one array", node)
        out = tuple(_at_least(tr, expr_of(tr, a, node), rank, node) for a in args)
        return out[0] if len(out) == 1 else out

    return handler


def _stack_along(name: str, rank: int, axis_of):
    """np.hstack/vstack/dstack/column_stack: each array raised to `rank` dimensions (NumPy's
    atleast_Nd; column_stack makes a 1-d array a column) and concatenated along `axis_of(first rank)`."""

    def handler(tr, args, kwargs, node):
        (parts,) = bind(tr, args, kwargs, node, f"np.{name}", ("tup",), ())
        if not isinstance(parts, tuple) or not parts:
            raise tr.fail(f"np.{name} takes a non-empty list or tuple of arrays", node)
        exprs = [expr_of(tr, p, node) for p in parts]
        if name == "column_stack":
            exprs = [reshape(tr, e, (Affine(-1), Affine(1)), node) if e.ndim < 2 else e for e in exprs]
        exprs = [_at_least(tr, e, rank, node) for e in exprs]
        return _concatenate(tr, [tuple(exprs), Affine(axis_of(exprs[0].ndim))], {}, node)

    return handler


def diag_args(tr, args, kwargs, node, what: str) -> tuple[Expr, int]:
    """(the matrix, the offset) of np.diagonal/np.trace-style arguments; axes (1, 0) transpose it."""
    a, offset, axis1, axis2 = bind(tr, args, kwargs, node, what, ("a", "offset", "axis1", "axis2"), (0, 0, 1))
    e = expr_of(tr, a, node)
    if e.ndim != 2:
        raise tr.fail(f"{what} of an array of rank other than 2 is not supported", node)
    first, second = (axes_of(tr, x, 2, node)[0] for x in (axis1, axis2))
    if first == second:
        raise tr.fail(f"{what}: axis1 and axis2 are the same axis", node)
    k = tr.integer(offset, node).static
    if k is None:
        raise tr.fail(f"{what} needs a constant offset", node)
    return (transpose(tr, e, None, node) if first == 1 else e), k


def diagonal(tr, e: Expr, node: ast.AST, k: int = 0) -> View:
    """The view of `e[i, i + k]` (a k-th diagonal of a matrix)."""
    if e.ndim != 2:
        raise tr.fail("the diagonal of an array of rank other than 2 is not supported", node)
    v = view_of(tr, e)
    if k == 0 and v.shape[0] == v.shape[1]:
        size = v.shape[0]
    else:
        rows, cols = tr.em.static(v, "the array")
        size = Affine(max(0, min(rows + min(k, 0), cols - max(k, 0))))
    r0, c0 = max(-k, 0), max(k, 0)
    offset = [o + Affine(r0 * a + c0 * b) for o, a, b in zip(v.offset, v.column(0), v.column(1))]
    return v.columns([[a + b for a, b in zip(v.column(0), v.column(1))]], [size], offset)


def _diagonal_fn(tr, args, kwargs, node):
    e, k = diag_args(tr, args, kwargs, node, "np.diagonal")
    return diagonal(tr, e, node, k)


def _diag(tr, args, kwargs, node):
    """np.diag: the k-th diagonal of a matrix, or the square matrix with a vector on its k-th diagonal."""
    a, k = bind(tr, args, kwargs, node, "np.diag", ("v", "k"), (0,))
    e = expr_of(tr, a, node)
    k = tr.integer(k, node).static
    if k is None:
        raise tr.fail("np.diag needs a constant k", node)
    if e.ndim == 2:
        return diagonal(tr, e, node, k)
    if e.ndim != 1:
        raise tr.fail("np.diag takes an array of rank 1 or 2", node)
    n = e.shape[0] + abs(k)
    target = Const(0, tr.em.concrete(e), False, [n, n])
    out = View.whole(tr.em.materialize(target))
    from dfc.frontend.arrays import Cell

    out.cell = Cell(out.source)
    tr.write(diagonal(tr, out, node, k), e, node)
    return View.whole(out.cell.value)


def _roll(tr, args, kwargs, node):
    """np.roll with constant shifts: the two slices of each rolled axis concatenated (axis None: of the
    flattened array, reshaped back)."""
    a, shift, axis = bind(tr, args, kwargs, node, "np.roll", ("a", "shift", "axis"), (None,))
    e = expr_of(tr, a, node)
    shifts = shift if isinstance(shift, tuple) else (shift,)
    ks = [tr.integer(v, node).static for v in shifts]
    if any(k is None for k in ks):
        raise tr.fail("np.roll needs constant shifts", node)
    if axis is None:
        if len(ks) != 1:
            raise tr.fail("np.roll without axis takes one shift", node)
        shape = tuple(Affine(d) for d in tr.em.static(e, "the rolled array"))
        return reshape(tr, _roll(tr, [flat(tr, e, node), Affine(ks[0]), Affine(0)], {}, node), shape, node)
    axes = axes_of(tr, axis, e.ndim, node) if not isinstance(axis, tuple) else [axes_of(tr, x, e.ndim, node)[0]
                                                                               for x in axis]
    if len(axes) != len(ks):
        if len(ks) != 1:
            raise tr.fail("np.roll: shift and axis have different lengths", node)
        ks = ks * len(axes)
    sizes = tr.em.static(e, "the rolled array")
    out = e
    for k, ax in zip(ks, axes):
        n = sizes[ax]
        k = k % n if n else 0
        if k == 0:
            continue
        head = tr.index(out, (slice(None),) * ax + (slice(n - k, n),), node)
        tail = tr.index(out, (slice(None),) * ax + (slice(0, n - k),), node)
        out = _concatenate(tr, [(head, tail), Affine(ax)], {}, node)
    return out if out is not e else View.whole(tr.em.materialize(e))  # a copy, as NumPy's


SHAPE_HANDLERS: dict[Any, Handler] = {
    np.roll: _roll,
    np.transpose: _transpose, np.flip: _flip, np.reshape: _reshape, np.ravel: _ravel, np.diag: _diag,
    np.diagonal: _diagonal_fn, np.concatenate: _concatenate, np.stack: _stack,
    np.hstack: _stack_along("hstack", 1, lambda rank: 0 if rank == 1 else 1),
    np.vstack: _stack_along("vstack", 2, lambda rank: 0),
    np.dstack: _stack_along("dstack", 3, lambda rank: 2),
    np.column_stack: _stack_along("column_stack", 1, lambda rank: 1),
    np.atleast_1d: _atleast(1), np.atleast_2d: _atleast(2), np.atleast_3d: _atleast(3),
}
