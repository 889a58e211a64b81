"""`out=` of a ufunc: `np.add(a, b, out=c)`, `np.multiply(Z, Z, Z)`, `np.exp(x, out=x)`.

The result is computed from the inputs as they are at the call, then written
into `out` in place (a named array or a view of one, as an update `out[...] =`
would be; a temporary array is written and only returned), and the call's
value is `out`. NumPy's rules for `out` are kept:
the output casting rule 'same_kind' (a float result into an integer array is
NumPy's UFuncTypeError, refused here by name), and the result must broadcast
to `out`'s shape (NumPy's "non-broadcastable output operand").
"""

from __future__ import annotations

import ast
from typing import Any, Callable

import numpy as np

from dfc.frontend import complex_values
from dfc.frontend.arrays import NUMPY_NAMES, View
from dfc.frontend.complex_values import Complex


def has_out(f: np.ufunc, args: list, kwargs: dict) -> bool:
    """Whether a call of ufunc `f` gives an output array (positionally after its inputs, or `out=`)."""
    return len(args) > f.nin or kwargs.get("out") is not None


def call_with_out(tr, f: np.ufunc, args: list, kwargs: dict, node: ast.AST, compute: Callable) -> Any:
    """`f(*inputs, out)`: `compute(tr, f, inputs, kwargs, node)` written into `out`; returns `out`."""
    kwargs = dict(kwargs)
    out = kwargs.pop("out", None)
    if len(args) > f.nin:
        if out is not None:
            raise tr.fail(f"np.{f.__name__}: cannot specify 'out' as both a positional and keyword argument", node)
        if len(args) > f.nin + f.nout:
            raise tr.fail(f"np.{f.__name__} takes from {f.nin} to {f.nin + f.nout} positional arguments but "
                          f"{len(args)} were given", node)
        args, out = args[:f.nin], args[f.nin]
    if isinstance(out, tuple):
        if len(out) != f.nout:
            raise tr.fail(f"out= of np.{f.__name__} must hold {f.nout} array(s), got {len(out)}", node)
        out = out[0]
    if f.nout != 1:
        raise tr.fail(f"out= of np.{f.__name__}, a ufunc with {f.nout} outputs, is not supported", node)
    if isinstance(out, Complex):
        return _into_complex(tr, f, out, compute(tr, f, args, kwargs, node), node)
    if not isinstance(out, View) or out.cell is None or out.gathers:  # a temporary: written, then only returned
        value = tr.em.materialize(tr.as_expr(out, node))
        out = View.whole(value, tr.new_cell(value))
    result = compute(tr, f, args, kwargs, node)
    if isinstance(result, Complex):
        raise tr.fail(f"Cannot cast ufunc '{f.__name__}' output from a complex dtype to dtype('"
                      f"{NUMPY_NAMES[out.dtype]}') with casting rule 'same_kind'", node)
    result = tr.as_expr(result, node)
    if not result.weak and not np.can_cast(NUMPY_NAMES[result.dtype], NUMPY_NAMES[out.dtype], "same_kind"):
        raise tr.fail(f"Cannot cast ufunc '{f.__name__}' output from dtype('{NUMPY_NAMES[result.dtype]}') to "
                      f"dtype('{NUMPY_NAMES[out.dtype]}') with casting rule 'same_kind'", node)
    if result.ndim > out.ndim or any(r.static not in (1, o.static) for r, o in zip(result.shape[::-1], out.shape[::-1])
                                     if r.static is not None and o.static is not None):
        raise tr.fail(f"non-broadcastable output operand of np.{f.__name__}: the result does not broadcast to "
                      "out's shape", node)
    tr.write(out, result, node)
    return View(out.cell.value, out.shape, out.offset, out.coef, out.dtype, out.cell)


def _into_complex(tr, f: np.ufunc, out: Complex, result: Any, node: ast.AST) -> Complex:
    """`result` written into the complex array `out` (a named one or a view of it); returns `out`."""
    if out.cell is None:
        raise tr.fail(f"out= of np.{f.__name__}: a complex temporary array as the output is not supported", node)
    complex_values.write(tr, out, result, node)
    parts = (View(p.cell.value, p.shape, p.offset, p.coef, p.dtype, p.cell, p.gathers) for p in (out.re, out.im))
    return Complex(*parts)  # reading the arrays as written
