"""Reductions and scans of complex values that are not linear in the parts (complex_values.py): np.prod,
np.cumprod, np.max/np.min (and np.amax/np.amin, np.maximum/np.minimum), np.var/np.std, np.linalg.norm.

- prod and max/min reduce along an axis of constant length by a tree of pairwise combinations of
  neighbours (`z[0::2]` with `z[1::2]`, an odd last element carried), so they stay elementwise maps;
  cumprod is the scan of Hillis and Steele: `log2 n` steps of `z[s:] *= z[:-s]`. Products round
  differently from NumPy's left-to-right loop (a few ulp per level).
- max/min order complex values as NumPy does, lexicographically (real part, then imaginary part), and
  return the first NaN (a NaN in either part) as NumPy's `maximum` propagates it.
- var is `var(re) + var(im)` (NumPy's `mean(|z - mean(z)|^2)`; ddof, axis and keepdims as the real
  function takes them), std its square root.
- norm: `sqrt(sum(re^2 + im^2))` for the Frobenius and vector 2-norms (no `|z|` whose gradient is NaN at
  0); the other orders on `|z|`, which they depend on alone; the spectral and nuclear matrix norms are refused.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from dfc.frontend.affine import Affine
from dfc.frontend.arrays import Const
from dfc.frontend.complex_values import (
    Complex,
    absolute,
    common,
    lift,
    multiply,
    part_dtype,
    shared,
    shared_z,
    unmasked,
)
from dfc.frontend.numpy_args import bind, static
from dfc.frontend.numpy_calls import call


def _np(tr, f: Any, *args: Any, node: ast.AST, **kwargs: Any) -> Any:
    return call(tr, f, list(args), kwargs, node)


def _axis(tr, z: Complex, axis: Any, name: str, node: ast.AST) -> tuple[Complex, int]:
    """`z` and the axis to reduce: the flattened value and 0 for axis None."""
    if axis is None:
        return Complex(_np(tr, np.ravel, z.re, node=node), _np(tr, np.ravel, z.im, node=node), z.weak), 0
    k = static(axis)
    k = k.static if isinstance(k, Affine) else k
    if not isinstance(k, int | np.integer) or isinstance(k, bool):
        raise tr.fail(f"{name} of complex values takes one constant axis (or None)", node)
    if not -z.ndim <= k < z.ndim:
        raise tr.fail(f"{name}: axis {k} is out of bounds for an array of rank {z.ndim}", node)
    return z, int(k) % z.ndim


def _take(tr, z: Complex, axis: int, start: int, stop: int, step: int, node: ast.AST) -> Complex:
    parts = (slice(None),) * axis + (slice(Affine(start), Affine(stop), Affine(step)),)
    return Complex(tr.index(tr.as_expr(z.re, node), parts, node), tr.index(tr.as_expr(z.im, node), parts, node),
                   z.weak)


def _concat(tr, zs: list[Complex], axis: int, node: ast.AST) -> Complex:
    return Complex(_np(tr, np.concatenate, tuple(z.re for z in zs), node=node, axis=axis),
                   _np(tr, np.concatenate, tuple(z.im for z in zs), node=node, axis=axis))


def _length(tr, z: Complex, axis: int, name: str, node: ast.AST) -> int:
    n = z.shape[axis].static
    if n is None:
        raise tr.fail(f"{name} of complex values needs an axis of constant length", node)
    return n


def _tree(tr, z: Complex, axis: int, combine, name: str, node: ast.AST) -> Complex:
    """`z` reduced along `axis` (kept, of length 1) by `combine` of neighbours, in order."""
    n = _length(tr, z, axis, name, node)
    while n > 1:
        pairs = n // 2
        out = shared_z(tr, combine(_take(tr, z, axis, 0, 2 * pairs, 2, node), _take(tr, z, axis, 1, 2 * pairs, 2, node)))
        z = _concat(tr, [out, _take(tr, z, axis, n - 1, n, 1, node)], axis, node) if n % 2 else out
        n = pairs + n % 2
    return z


def _drop(tr, z: Complex, axis: int, keepdims: bool, node: ast.AST) -> Complex:
    if keepdims:
        return z
    parts = (slice(None),) * axis + (Affine(0),)
    return Complex(tr.index(tr.as_expr(z.re, node), parts, node), tr.index(tr.as_expr(z.im, node), parts, node),
                   z.weak)


def _keepdims(tr, value: Any, name: str, node: ast.AST) -> bool:
    k = static(value)
    if not isinstance(k, bool | np.bool_):
        raise tr.fail(f"{name}: keepdims must be a constant bool", node)
    return bool(k)


def _reduced(tr, z: Complex, k: int, axis: Any, keepdims: Any, ndim: int, name: str, node: ast.AST) -> Complex:
    """The result of a reduction whose axis `k` is kept with length 1: dropped, or kept as NumPy's keepdims
    (every axis, length 1, for axis None)."""
    keep = _keepdims(tr, keepdims, name, node)
    out = _drop(tr, z, k, keep and axis is not None, node)
    if keep and axis is None:
        shape = (1,) * ndim
        return Complex(_np(tr, np.reshape, out.re, shape, node=node), _np(tr, np.reshape, out.im, shape, node=node))
    return out


def prod(tr, args: list, kwargs: dict, node: ast.AST) -> Complex:
    a, axis, keepdims = bind(tr, args, kwargs, node, "np.prod", ("a", "axis", "keepdims"), (None, False))
    z0 = lift(tr, a, node)
    z, k = _axis(tr, z0, axis, "np.prod", node)
    if _length(tr, z, k, "np.prod", node) == 0:  # the empty product
        d = part_dtype(tr, z)
        shape = [Affine(1) if j == k else s for j, s in enumerate(z.shape)]
        z = Complex(Const(1.0, d, False, shape), Const(0.0, d, False, shape))
    else:
        z = _tree(tr, z, k, lambda x, y: multiply(tr, x, y, node), "np.prod", node)
    return _reduced(tr, z, k, axis, keepdims, z0.ndim, "np.prod", node)


def cumprod(tr, args: list, kwargs: dict, node: ast.AST) -> Complex:
    a, axis = bind(tr, args, kwargs, node, "np.cumprod", ("a", "axis"), (None,))
    z, k = _axis(tr, lift(tr, a, node), axis, "np.cumprod", node)
    n = _length(tr, z, k, "np.cumprod", node)
    s = 1
    while s < n:
        z = shared_z(tr, z)
        step = multiply(tr, _take(tr, z, k, s, n, 1, node), _take(tr, z, k, 0, n - s, 1, node), node)
        z = _concat(tr, [_take(tr, z, k, 0, s, 1, node), step], k, node)
        s *= 2
    return z


def _ordered(tr, x: Complex, y: Complex, largest: bool, node: ast.AST) -> Any:
    """NumPy's CGE (CLE for the smallest) of x and y, or x holding a NaN: where x is the one kept."""
    order = "gt" if largest else "lt"
    nan = [_np(tr, np.isnan, p, node=node) for p in (x.re, x.im, y.im)]
    x_nan = _np(tr, np.logical_or, nan[0], nan[1], node=node)
    imag_ok = _np(tr, np.logical_not, _np(tr, np.logical_or, nan[1], nan[2], node=node), node=node)
    strictly = _np(tr, np.logical_and, tr.compare(order, x.re, y.re, node), imag_ok, node=node)
    tie = _np(tr, np.logical_and, tr.compare("eq", x.re, y.re, node),
              tr.compare("ge" if largest else "le", x.im, y.im, node), node=node)
    return shared(tr, _np(tr, np.logical_or, x_nan, _np(tr, np.logical_or, strictly, tie, node=node), node=node))


def _pick(tr, x: Complex, y: Complex, largest: bool, node: ast.AST) -> Complex:
    keep = _ordered(tr, x, y, largest, node)
    return Complex(_np(tr, np.where, keep, x.re, y.re, node=node), _np(tr, np.where, keep, x.im, y.im, node=node),
                   x.weak and y.weak)


def _extreme(largest: bool, name: str):
    def handler(tr, args: list, kwargs: dict, node: ast.AST) -> Complex:
        a, axis, keepdims = bind(tr, args, kwargs, node, name, ("a", "axis", "keepdims"), (None, False))
        z, k = _axis(tr, lift(tr, a, node), axis, name, node)
        if _length(tr, z, k, name, node) == 0:
            raise tr.fail(f"{name} of an empty complex array (NumPy's ValueError: the reduction has no identity)",
                          node)
        out = _tree(tr, shared_z(tr, z), k, lambda x, y: _pick(tr, shared_z(tr, x), shared_z(tr, y), largest, node),
                    name, node)
        return _reduced(tr, out, k, axis, keepdims, lift(tr, a, node).ndim, name, node)

    return handler


def _elementwise(largest: bool, name: str):
    def handler(tr, args: list, kwargs: dict, node: ast.AST) -> Complex:
        x, y = bind(tr, args, kwargs, node, name, ("x1", "x2"))
        return unmasked(tr, lambda p, q: _pick(tr, *(shared_z(tr, v) for v in common(tr, [p, q], node)[0]),
                                                 largest, node), [x, y], node)

    return handler


def _spread(what: str):
    """np.var (`what` 'var') or np.std of complex values: the real function's keywords on both parts."""
    def handler(tr, args: list, kwargs: dict, node: ast.AST) -> Any:
        if not args:
            raise tr.fail(f"np.{what} takes the array first", node)
        z = lift(tr, args[0], node)
        variance = tr.binop("add", *(_np(tr, np.var, p, *args[1:], node=node, **kwargs) for p in (z.re, z.im)), node)
        return variance if what == "var" else _np(tr, np.sqrt, variance, node=node)

    return handler


def norm(tr, args: list, kwargs: dict, node: ast.AST) -> Any:
    x, ord_, axis, keepdims = bind(tr, args, kwargs, node, "np.linalg.norm", ("x", "ord", "axis", "keepdims"),
                                   (None, None, False))
    z = lift(tr, x, node)
    order = static(ord_)
    axes = static(axis)
    n_axes = z.ndim if axes is None else len(axes) if isinstance(axes, tuple) else 1
    if order in (2, -2, "nuc") and n_axes == 2:
        raise tr.fail(f"np.linalg.norm of complex matrices with ord={order!r} (singular values) is not supported",
                      node)
    if order is None or order == "fro" or order == 2 and n_axes == 1:
        squares = tr.binop("add", tr.binop("mul", z.re, z.re, node), tr.binop("mul", z.im, z.im, node), node)
        total = _np(tr, np.sum, squares, node=node, axis=axis, keepdims=keepdims)
        return _np(tr, np.sqrt, total, node=node)
    return call(tr, np.linalg.norm, [absolute(tr, z, node)], {"ord": ord_, "axis": axis, "keepdims": keepdims}, node)


HANDLERS = {np.prod: prod, np.cumprod: cumprod, np.max: _extreme(True, "np.max"), np.amax: _extreme(True, "np.max"),
            np.min: _extreme(False, "np.min"), np.amin: _extreme(False, "np.min"),
            np.maximum: _elementwise(True, "np.maximum"), np.minimum: _elementwise(False, "np.minimum"),
            np.var: _spread("var"), np.std: _spread("std"), np.linalg.norm: norm}
"""The complex forms of these NumPy functions (complex_calls.py dispatches to them; the methods too)."""

METHODS = {"prod": np.prod, "cumprod": np.cumprod, "max": np.max, "min": np.min, "var": np.var, "std": np.std}
