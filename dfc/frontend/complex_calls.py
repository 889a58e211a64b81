"""NumPy functions, methods, attributes and subscripts of complex values (complex_values.py).

- elementwise: `abs` (np.abs, np.absolute), np.exp, np.log, np.sqrt, np.conj/conjugate, np.real,
  np.imag, np.angle, np.square, np.negative, np.add/subtract/multiply/divide/power, np.equal/not_equal,
  np.less/less_equal/greater/greater_equal (lexicographic), np.isnan/isinf/isfinite: complex_values'
  formulas; the trigonometric and hyperbolic functions and their inverses: complex_functions.py;
- np.prod, np.cumprod, np.max/min (lexicographic), np.maximum/minimum, np.var, np.std, np.linalg.norm
  (and the methods): complex_reductions.py; np.sort, np.argsort (and the methods): complex_sort.py;
- creation with a complex dtype or fill value: np.zeros/ones/empty/full and their `_like` forms,
  np.array/np.asarray/.astype to a complex dtype, np.complex64/np.complex128 as casts;
- linear and structural functions (reshape, transpose, concatenate, repeat, sum, mean, cumsum, where,
  ...): the real function on each part;
- bilinear products (matmul, dot, inner, outer, two-operand einsum): four real products;
- np.linalg.inv and np.linalg.solve: the real solver on the real form [[A.re, -A.im], [A.im, A.re]]
  (twice the size), whose solution stacks the parts;
- anything else of a complex value is a `FrontendError` naming the function.
"""

from __future__ import annotations

import ast
import builtins
import types
from dataclasses import dataclass
from typing import Any

import numpy as np

from dfc.frontend import complex_functions, complex_reductions, complex_sort, masks
from dfc.frontend.affine import Affine
from dfc.frontend.arrays import Method
from dfc.frontend.complex_values import (
    COMPLEX_OF,
    Complex,
    absolute,
    angle,
    binop,
    common,
    compare,
    complex_dtype,
    conj,
    exp,
    lift,
    log,
    neg_part,
    negate,
    part_dtype,
    sqrt,
    unmasked,
    write,
)
from dfc.frontend.numpy_args import bind
from dfc.frontend.numpy_fft import FFT_HANDLERS

_UNARY = {np.abs: absolute, np.absolute: absolute, builtins.abs: absolute, np.exp: exp, np.log: log, np.sqrt: sqrt,
          np.conj: conj, np.conjugate: conj, np.negative: negate, np.angle: angle,
          np.real: lambda tr, z, node: z.re, np.imag: lambda tr, z, node: z.im,
          np.square: lambda tr, z, node: binop(tr, "mul", z, z, node), **complex_functions.FUNCTIONS}
_BINARY = {np.add: "add", np.subtract: "sub", np.multiply: "mul", np.divide: "div", np.true_divide: "div",
           np.power: "pow"}
_COMPARE = {np.equal: "eq", np.not_equal: "ne", np.less: "lt", np.less_equal: "le", np.greater: "gt",
            np.greater_equal: "ge"}
_PREDICATES = {np.isnan: np.logical_or, np.isinf: np.logical_or, np.isfinite: np.logical_and}

_FIRST = {np.reshape, np.transpose, np.ravel, np.squeeze, np.expand_dims, np.flip, np.fliplr, np.flipud, np.roll,
          np.repeat, np.tile, np.diag, np.diagonal, np.trace, np.sum, np.mean, np.cumsum, np.copy, np.broadcast_to,
          np.atleast_1d, np.atleast_2d, np.atleast_3d, np.swapaxes, np.moveaxis, np.triu, np.tril, np.average}
"""Functions linear in their first argument (and structural): applied to each part."""
_SEQUENCE = {np.concatenate, np.stack, np.hstack, np.vstack, np.dstack, np.column_stack}
_BILINEAR = {np.dot, np.matmul, np.inner, np.outer, np.einsum}
_CREATION = {np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like, np.empty_like, np.full_like}
_METHODS_FIRST = {"reshape", "transpose", "copy", "ravel", "flatten", "sum", "mean", "diagonal", "trace", "squeeze",
                  "repeat", "cumsum", "swapaxes"}


@dataclass
class ComplexTarget:
    """The target of `z[...] = v` for a named complex array: the view of both parts, or the array and the
    masked parts for a boolean mask."""

    view: Complex
    masked: tuple | None = None


def involved(args: list, kwargs: dict) -> bool:
    """Whether a call takes a complex value or asks for a complex dtype."""
    def complex_value(v: Any) -> bool:
        if isinstance(v, tuple | list):
            return any(complex_value(x) for x in v)
        return isinstance(v, Complex | complex | np.complexfloating) or (
            isinstance(v, type | np.dtype) and complex_dtype(v) is not None)
    return any(complex_value(a) for a in args) or any(complex_value(v) for v in kwargs.values()) or (
        isinstance(kwargs.get("dtype"), str) and complex_dtype(kwargs["dtype"]) is not None)


def takes_complex(f: Any, args: list, kwargs: dict) -> bool:
    """Whether a call in jitted code is one of complex values: a method of one, an `np.fft` function, or a NumPy
    function or builtin given a complex value or dtype (a jitted or plain Python function is compiled as it
    is, and refuses them)."""
    if isinstance(f, Method):
        return isinstance(f.value, Complex) or involved(args, kwargs)
    if f is complex or f is np.complex64 or f is np.complex128:
        return True
    if callable(f) and getattr(f, "__module__", None) == "numpy.fft" and f in FFT_HANDLERS:  # complex results
        return True
    if isinstance(f, types.FunctionType) and not (f.__module__ or "").startswith("numpy") or hasattr(f, "specialize"):
        return False
    return involved(args, kwargs)


def call(tr, f: Any, args: list, kwargs: dict, node: ast.AST) -> Any:
    """`f(*args, **kwargs)` where a complex value or dtype is involved."""
    from dfc.frontend.numpy_calls import call as real_call

    if isinstance(f, Method):
        return method(tr, f.value, f.name, args, kwargs, node)
    name = _name(f)
    if f is np.complex64 or f is np.complex128:  # np.complex128(x): a cast
        (x,) = bind(tr, args, kwargs, node, name, ("x",), (0,))
        return _fresh(lift(tr, x, node, "f32" if f is np.complex64 else "f64"))
    if f is complex:  # Python's complex(re, im) of numbers and 0-d values: a weak complex number
        re, im = bind(tr, args, kwargs, node, "complex()", ("real", "imag"), (0.0,))
        parts = [lift(tr, v, node) for v in (re, im)]
        if any(p.ndim for p in parts):
            raise tr.fail("complex() takes numbers or 0-d values (NumPy arrays: x + 1j * y)", node)
        z = binop(tr, "add", parts[0], binop(tr, "mul", parts[1], 1j, node), node)
        return Complex(z.re, z.im, True)
    if f in _CREATION:
        return _creation(tr, f, args, kwargs, node)
    if f in (np.array, np.asarray):
        return _array(tr, f, args, kwargs, node)
    if f in complex_reductions.HANDLERS:
        return complex_reductions.HANDLERS[f](tr, args, kwargs, node)
    if f in complex_sort.HANDLERS:
        return complex_sort.HANDLERS[f](tr, args, kwargs, node)
    if f in FFT_HANDLERS:
        return FFT_HANDLERS[f](tr, args, kwargs, node)
    if kwargs and f not in (np.einsum,) and not (f in _FIRST or f in _SEQUENCE):
        raise tr.fail(f"{name} of complex values with keyword arguments ({', '.join(kwargs)}) is not supported", node)
    if f in _UNARY:
        if len(args) != 1:
            raise tr.fail(f"{name} of complex values takes one argument", node)
        return unmasked(tr, lambda z: _UNARY[f](tr, z, node), [lift(tr, args[0], node)], node)
    if f in _BINARY or f in _COMPARE:
        if len(args) != 2:
            raise tr.fail(f"{name} of complex values takes two arguments (out= is not supported)", node)
        if f in _COMPARE:
            return compare(tr, _COMPARE[f], args[0], args[1], node)
        return binop(tr, _BINARY[f], args[0], args[1], node)
    if f in _PREDICATES and len(args) == 1:
        def predicate(z: Complex) -> Any:
            return real_call(tr, _PREDICATES[f], [real_call(tr, f, [z.re], {}, node), real_call(tr, f, [z.im], {}, node)],
                             {}, node)

        return unmasked(tr, predicate, [lift(tr, args[0], node)], node)
    if f is builtins.len:
        return real_call(tr, f, [args[0].re if isinstance(args[0], Complex) else args[0]], {}, node)
    if f in _FIRST and args and isinstance(args[0], Complex):
        if any(isinstance(a, Complex) for a in args[1:]) or any(isinstance(v, Complex) for v in kwargs.values()):
            raise tr.fail(f"{name} with complex weights or parameters is not supported", node)
        z = args[0]
        return Complex(real_call(tr, f, [z.re, *args[1:]], kwargs, node),
                       real_call(tr, f, [z.im, *args[1:]], kwargs, node))
    if f in _SEQUENCE and args and isinstance(args[0], tuple | list):
        zs, _ = common(tr, list(args[0]), node)
        return Complex(real_call(tr, f, [tuple(z.re for z in zs), *args[1:]], kwargs, node),
                       real_call(tr, f, [tuple(z.im for z in zs), *args[1:]], kwargs, node))
    if f is np.where and len(args) == 3 and not isinstance(args[0], Complex):
        zs, _ = common(tr, list(args[1:]), node)
        return Complex(real_call(tr, f, [args[0], zs[0].re, zs[1].re], kwargs, node),
                       real_call(tr, f, [args[0], zs[0].im, zs[1].im], kwargs, node))
    if f in _BILINEAR:
        return _bilinear(tr, f, args, kwargs, node)
    if f is np.linalg.inv or f is np.linalg.solve:
        return _linalg(tr, f, args, kwargs, node)
    if f is np.vdot and len(args) == 2 and not kwargs:  # conj(a) . b, both flattened
        return _bilinear(tr, np.vdot, [conj(tr, lift(tr, args[0], node), node), args[1]], {}, node)
    raise tr.fail(f"{name} of complex values is not supported (docs/frontend.md lists the complex operations)", node)


def _name(f: Any) -> str:
    module = getattr(f, "__module__", None)
    name = getattr(f, "__name__", type(f).__name__)
    return f"np.{name}" if module and module.startswith("numpy") or isinstance(f, np.ufunc) else name


def _fresh(z: Complex) -> Complex:
    """`z` as a new array (a NumPy copy): no longer a view of a named array."""
    from dfc.frontend.numpy_args import fresh

    return Complex(fresh(z.re), fresh(z.im), z.weak) if z.cell is not None else z


def _creation(tr, f: Any, args: list, kwargs: dict, node: ast.AST) -> Any:
    """np.zeros/ones/empty/full(_like) with a complex dtype, a complex fill value or a complex prototype."""
    from dfc.frontend.numpy_calls import call as real_call

    like, full = f.__name__.endswith("_like"), f.__name__.startswith("full")
    names = ("a" if like else "shape",) + (("fill_value",) if full else ()) + ("dtype",)
    values = bind(tr, args, kwargs, node, f"np.{f.__name__}", names, (None,))
    first, dtype = values[0], values[-1]
    fill = values[1] if full else None
    part = complex_dtype(dtype) if dtype is not None else None
    if dtype is not None and part is None:  # a real array asked for
        if isinstance(fill, Complex | complex | np.complexfloating):
            raise tr.fail(f"np.{f.__name__}: a complex fill value for a real dtype (NumPy would drop the imaginary "
                          "part) is not supported", node)
        return real_call(tr, f, [first.re if isinstance(first, Complex) else first, *values[1:]], {}, node)
    if part is None:
        part = part_dtype(tr, first) if isinstance(first, Complex) else part_dtype(tr, lift(tr, fill, node))
    shape_arg = first.re if isinstance(first, Complex) else first
    d = np.float32 if part == "f32" else np.float64
    zeros = np.zeros_like if like else np.zeros
    if full:
        z = lift(tr, fill, node)
        return Complex(real_call(tr, f, [shape_arg, z.re, d], {}, node), real_call(tr, f, [shape_arg, z.im, d], {}, node))
    return Complex(real_call(tr, f, [shape_arg, d], {}, node), real_call(tr, zeros, [shape_arg, d], {}, node))


def _array(tr, f: Any, args: list, kwargs: dict, node: ast.AST) -> Any:
    from dfc.frontend.numpy_calls import call as real_call

    if not args or len(args) > 2 or set(kwargs) - {"dtype"}:
        raise tr.fail(f"np.{f.__name__} of complex values takes the array and a dtype", node)
    dtype = args[1] if len(args) == 2 else kwargs.get("dtype")
    part = complex_dtype(dtype) if dtype is not None else None
    if dtype is not None and part is None:
        raise tr.fail(f"np.{f.__name__} of complex values to the real dtype {dtype!r} (NumPy would drop the imaginary "
                      "part) is not supported: take .real", node)
    z = lift(tr, args[0], node, part)
    if f is np.asarray:
        return z
    return Complex(real_call(tr, np.copy, [z.re], {}, node), real_call(tr, np.copy, [z.im], {}, node))


def _bilinear(tr, f: Any, args: list, kwargs: dict, node: ast.AST) -> Complex:
    """A product of two operands, at least one complex: (a + bi)(c + di) as four real products."""
    from dfc.frontend.numpy_calls import call as real_call

    prefix = [args[0]] if f is np.einsum else []
    operands = args[1:] if f is np.einsum else args
    if len(operands) != 2 or (f is np.einsum and kwargs):
        raise tr.fail(f"np.{f.__name__} of complex values takes two operands", node)
    (x, y), _ = common(tr, operands, node)

    def product(a: Any, b: Any) -> Any:
        return real_call(tr, f, [*prefix, a, b], dict(kwargs), node)

    if not isinstance(operands[1], Complex):  # a real operand: two products (its imaginary part is zero)
        return Complex(product(x.re, y.re), product(x.im, y.re))
    if not isinstance(operands[0], Complex):
        return Complex(product(x.re, y.re), product(x.re, y.im))
    return Complex(tr.binop("sub", product(x.re, y.re), product(x.im, y.im), node),
                   tr.binop("add", product(x.re, y.im), product(x.im, y.re), node))


def matmul(tr, a: Any, b: Any, node: ast.AST) -> Complex:
    return _bilinear(tr, np.matmul, [a, b], {}, node)


def _linalg(tr, f: Any, args: list, kwargs: dict, node: ast.AST) -> Complex:
    """np.linalg.inv(A) and np.linalg.solve(A, b) of complex values: the real solver on [[Ar, -Ai], [Ai, Ar]]
    (Gaussian elimination with partial pivoting of the real form; the solution is [xr; xi])."""
    from dfc.frontend.numpy_calls import call as real_call

    names = ("a",) if f is np.linalg.inv else ("a", "b")
    values = bind(tr, args, kwargs, node, f"np.linalg.{f.__name__}", names)
    zs, _ = common(tr, values, node)
    a = zs[0]
    if a.ndim != 2 or a.shape[0].static is None or a.shape[0] != a.shape[1]:
        raise tr.fail(f"np.linalg.{f.__name__} takes a square matrix of constant size", node)
    n = a.shape[0].static
    cat = np.concatenate
    top = real_call(tr, cat, [(a.re, neg_part(tr, a.im, node))], {"axis": 1}, node)
    bottom = real_call(tr, cat, [(a.im, a.re)], {"axis": 1}, node)
    m = real_call(tr, cat, [(top, bottom)], {"axis": 0}, node)
    if f is np.linalg.inv:
        x = real_call(tr, np.linalg.inv, [m], {}, node)
        cols = slice(Affine(0), Affine(n))
        return Complex(tr.index(x, (slice(Affine(0), Affine(n)), cols), node),
                       tr.index(x, (slice(Affine(n), Affine(2 * n)), cols), node))
    b = zs[1]
    rhs = real_call(tr, cat, [(b.re, b.im)], {"axis": 0}, node)
    x = real_call(tr, np.linalg.solve, [m, rhs], {}, node)
    return Complex(tr.index(x, (slice(Affine(0), Affine(n)),), node), tr.index(x, (slice(Affine(n), Affine(2 * n)),), node))


def method(tr, z: Any, name: str, args: list, kwargs: dict, node: ast.AST) -> Any:
    """`z.name(*args)` of a complex array (or a real array's method given a complex argument)."""
    from dfc.frontend.numpy_calls import call as real_call

    if not isinstance(z, Complex):
        if name == "dot":
            return _bilinear(tr, np.dot, [z, *args], kwargs, node)
        if name == "astype":
            return call(tr, np.asarray, [z, *args], kwargs, node)
        raise tr.fail(f".{name}() with complex arguments is not supported", node)
    if name in ("conj", "conjugate") and not args and not kwargs:
        return conj(tr, z, node)
    if name == "astype":
        (dtype,) = bind(tr, args, kwargs, node, ".astype()", ("dtype",))
        part = complex_dtype(dtype)
        if part is None:
            raise tr.fail(f".astype({dtype!r}) of complex values (NumPy would drop the imaginary part) is not "
                          "supported: take .real", node)
        return _array(tr, np.array, [z, dtype], {}, node)
    if name == "dot":
        return _bilinear(tr, np.dot, [z, *args], kwargs, node)
    if name in complex_sort.METHODS:
        return complex_sort.METHODS[name](tr, z, args, kwargs, node)
    if name in complex_reductions.METHODS:
        return call(tr, complex_reductions.METHODS[name], [z, *args], kwargs, node)
    if name in _METHODS_FIRST:
        if any(isinstance(a, Complex) for a in args):
            raise tr.fail(f".{name}() with complex parameters is not supported", node)
        return Complex(real_call(tr, Method(z.re, name), list(args), dict(kwargs), node),
                       real_call(tr, Method(z.im, name), list(args), dict(kwargs), node))
    raise tr.fail(f".{name}() of complex values is not supported (docs/frontend.md lists the complex operations)",
                  node)


def attribute(tr, z: Complex, name: str, node: ast.AST) -> Any:
    """`z.real` and `z.imag` (views: `z.real[:] = 0` updates z), `.T`, `.shape`, `.ndim`, `.size`, `.dtype`,
    and the methods."""
    from dfc.frontend.numpy_calls import array_attribute

    if name == "real":
        return z.re
    if name == "imag":
        return z.im
    if name in ("shape", "ndim", "size"):
        return array_attribute(tr, z.re, name, node)
    if name == "T":
        return Complex(array_attribute(tr, z.re, "T", node), array_attribute(tr, z.im, "T", node))
    if name == "dtype":
        return np.dtype(COMPLEX_OF[part_dtype(tr, z)])
    return Method(z, name)  # type: ignore[arg-type]


def subscript(tr, z: Complex, parts: tuple, node: ast.AST, keep_cell: bool = False) -> Any:
    """`z[parts]`: both parts indexed the same way (a boolean mask gives masked parts)."""
    if any(masks.is_mask(p) for p in parts):
        return Complex(masks.split(tr, tr.as_expr(z.re, node), parts, node),
                       masks.split(tr, tr.as_expr(z.im, node), parts, node))
    return Complex(tr.index(tr.as_expr(z.re, node), parts, node, keep_cell, scatter=keep_cell),
                   tr.index(tr.as_expr(z.im, node), parts, node, keep_cell, scatter=keep_cell))


def target(tr, z: Complex, parts: tuple, node: ast.AST) -> ComplexTarget:
    """The target of `z[parts] = ...` (z a named complex array)."""
    if z.cell is None:
        raise tr.fail("cannot assign into a temporary array (only into named arrays and their views)", node)
    if any(masks.is_mask(p) for p in parts):
        masked = subscript(tr, z, parts, node)
        return ComplexTarget(z, (masked.re, masked.im))
    return ComplexTarget(subscript(tr, z, parts, node, keep_cell=True))


def assign(tr, t: ComplexTarget, value: Any, op: str | None, node: ast.AST) -> None:
    """`z[...] = value` or `z[...] op= value` of a named complex array."""
    from dfc.frontend.complex_values import assign_masked

    if t.masked is not None:
        assign_masked(tr, t.view, t.masked, value, op, node)
        return
    if op is not None:
        current = Complex(*(tr.as_expr(p, node) for p in (t.view.re, t.view.im)))
        value = binop(tr, op, current, value, node)
    write(tr, t.view, value, node)


def update_name(tr, current: Complex, value: Any, node: ast.AST) -> bool:
    """`z op= v` of a named complex array: in place, as NumPy (False when `z` names no array: rebind it)."""
    if current.cell is None:
        return False
    if not isinstance(value, Complex):
        value = lift(tr, value, node)
    write(tr, current, value, node)
    return True
