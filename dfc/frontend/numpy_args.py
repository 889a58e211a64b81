"""The argument conventions the NumPy handlers share: binding positional and
keyword arguments (never ignoring one), compile-time values, axes, keepdims,
dtypes and fill values, each refused with a located error when unsupported."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from dfc.frontend.affine import Affine
from dfc.frontend.arrays import NUMPY_NAMES, Const, Expr, View, is_float
from dfc.frontend.dtypes import dtype_from_numpy
from dfc.frontend.weak_ints import out_of_bounds

Handler = Callable[..., Any]
"""A handler: the translator, the evaluated arguments, the keyword arguments and the call's node."""


def expr_of(tr, v: Any, node: ast.AST) -> Expr:
    return tr.as_expr(v, node)


def no_kwargs(tr, kwargs: dict, node: ast.AST, allowed: tuple = ()) -> None:
    extra = [k for k in kwargs if k not in allowed]
    if extra:
        raise tr.fail(f"unsupported keyword argument '{extra[0]}'", node)


MISSING = object()


def bind(tr, args: list, kwargs: dict, node: ast.AST, what: str, names: tuple, defaults: tuple = ()) -> list:
    """The arguments of `what(names...)` by position or keyword (the last `len(defaults)` optional);
    anything else is refused, so that an argument is never silently ignored."""
    if len(args) > len(names):
        raise tr.fail(f"{what} takes at most {len(names)} arguments ({', '.join(names)}), got {len(args)}", node)
    bound = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            raise tr.fail(f"unsupported keyword argument '{k}' of {what}", node)
        if k in bound:
            raise tr.fail(f"{what} got argument '{k}' twice", node)
        bound[k] = v
    required = len(names) - len(defaults)
    out = []
    for k, n in enumerate(names):
        if n in bound:
            out.append(bound[n])
        elif k >= required:
            out.append(defaults[k - required])
        else:
            raise tr.fail(f"{what} needs argument '{n}'", node)
    return out


def static(v: Any) -> Any:
    """A compile-time Python value: a constant integer or number, a string, None, True/False."""
    if isinstance(v, Affine):
        return v.static if v.static is not None else MISSING
    if isinstance(v, Const) and not v.shape:
        return v.value
    return v if v is None or isinstance(v, str | bool | int | float) else MISSING


def check_order(tr, order: Any, node: ast.AST, what: str) -> None:
    if static(order) not in (None, "C"):
        raise tr.fail(f"{what} with order={static(order)!r} is not supported (only 'C', row-major)", node)


def fresh(e: Expr) -> Expr:
    """`e` as a new array (NumPy's result is not a view): updating it does not update the argument."""
    return dataclasses.replace(e, cell=None) if isinstance(e, View) and e.cell is not None else e


def condition_of(tr, v: Any, node: ast.AST) -> Expr:
    """A boolean array from a comparison (folded to a Python bool when both sides are numbers)."""
    return Const(v, "i1", False) if isinstance(v, bool) else expr_of(tr, v, node)


def axes_of(tr, axis: Any, ndim: int, node: ast.AST) -> list[int]:
    if axis is None:
        return list(range(ndim))
    items = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in items:
        k = tr.integer(a, node).static
        if k is None or not -ndim <= k < ndim:
            raise tr.fail(f"axis {a} is out of range for an array of rank {ndim}", node)
        out.append(k % ndim)
    if len(set(out)) != len(out):
        raise tr.fail(f"axis {tuple(out)} repeats an axis", node)
    return sorted(out)


def keepdims_of(tr, keepdims: Any, node: ast.AST) -> bool:
    k = static(keepdims)
    if not isinstance(k, bool | int):
        raise tr.fail("keepdims must be a constant True or False", node)
    return bool(k)


def count_of(tr, e: Expr, axes: list[int], node: ast.AST, what: str) -> Affine:
    """The number of elements of `e` along `axes` (a run-time one where a size is)."""
    count = Affine(1)
    for k in axes:
        count = tr.int_binop("mul", count, e.shape[k], node)
    return count


def dtype_of(tr, dtype: Any, node: ast.AST, default: str | None) -> str | None:
    if dtype is None:
        return default
    d = dtype_from_numpy(dtype)
    if d is None:
        raise tr.fail(f"unsupported dtype {dtype!r}", node)
    return d


def fill_value(tr, number: Any, dtype: str, node: ast.AST) -> float | int | bool:
    """A constant fill value cast to `dtype` as NumPy casts it (floats to integers toward zero, NumPy integers
    wrapping around; a Python int outside an integer dtype is NumPy's OverflowError, a float outside it is
    refused: C leaves that cast undefined)."""
    try:
        value = bool(number) if dtype == "i1" else float(number) if is_float(dtype) else int(number)
    except (ValueError, OverflowError):
        raise tr.fail(f"cannot fill an array of {dtype} with {number!r}", node) from None
    if isinstance(number, np.integer):
        return np.asarray(number).astype(NUMPY_NAMES[dtype]).item()
    if isinstance(value, int) and not isinstance(value, bool) and (message := out_of_bounds(value, dtype)):
        if not isinstance(number, int):
            message = f"{number!r} is out of the range of {NUMPY_NAMES[dtype]} (the cast is undefined in C)"
        raise tr.fail(message, node)
    return value


def astype(tr, e: Expr, dtype: str, node: ast.AST) -> Expr:
    if e.dtype == dtype and not e.weak:
        return e
    if dtype == "i1" and e.dtype != "i1":  # nonzero (NaN too) is True
        return condition_of(tr, tr.compare("ne", e, Const(0, "i64"), node), node)
    return tr.elementwise("convert", [e], node, dtype)
