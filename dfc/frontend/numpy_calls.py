"""The dispatch of calls and attributes in jitted code: NumPy functions and
array methods (the tables of numpy_api.py, numpy_ufuncs.py, numpy_creation.py,
numpy_sequences.py and numpy_search.py merged), ufunc methods, NumPy scalar types, boolean-masked reads (masks.py),
jitted and plain Python functions."""

from __future__ import annotations

import ast
import builtins
import types
from typing import Any

import numpy as np

from dfc.frontend import masks
from dfc.frontend.affine import Affine
from dfc.frontend.arrays import NUMPY_NAMES, Expr, Method
from dfc.frontend.checkpoint import Checkpointed, checkpointed_call
from dfc.frontend.dynamic_values import DYNAMIC_HANDLERS, masked
from dfc.frontend.numpy_api import (
    ELEMENTWISE,
    METHOD_MOMENTS,
    METHOD_REDUCTIONS,
    REDUCTIONS,
    Handler,
)
from dfc.frontend.numpy_api import HANDLERS as API_HANDLERS
from dfc.frontend.numpy_api import METHODS as API_METHODS
from dfc.frontend.numpy_creation import CREATION_HANDLERS
from dfc.frontend.numpy_search import SEARCH_HANDLERS, SEARCH_METHODS
from dfc.frontend.numpy_sequences import SEQUENCE_HANDLERS, SEQUENCE_METHODS
from dfc.frontend.numpy_shapes import transpose
from dfc.frontend.numpy_ufuncs import UFUNC_HANDLERS, UFUNC_METHODS, scalar_type, ufunc_method

HANDLERS: dict[Any, Handler] = {**API_HANDLERS, **UFUNC_HANDLERS, **CREATION_HANDLERS, **SEQUENCE_HANDLERS,
                               **SEARCH_HANDLERS, **DYNAMIC_HANDLERS}
"""Every NumPy, `math` and builtin function the frontend translates, by the function object."""

METHODS: dict[str, Handler] = {**API_METHODS, **UFUNC_METHODS, **SEQUENCE_METHODS, **SEARCH_METHODS}
"""Every array method the frontend translates, by name."""


def call(tr, f: Any, args: list, kwargs: dict, node: ast.AST) -> Any:
    """`f(*args, **kwargs)`: a translated NumPy function, method or builtin, or a call of
    a jitted function or of a plain Python function (compiled like a jitted one)."""
    from dfc.frontend import FrontendError, JitFunction, helper

    if isinstance(f, Checkpointed):
        return checkpointed_call(tr, f, args, kwargs, node)
    if isinstance(f, types.FunctionType) and f not in HANDLERS:
        try:
            f = helper(f) or f
        except FrontendError as err:
            raise tr.fail(err.message, node) from None
    if isinstance(f, JitFunction):
        return tr.callee(tr, f, args, kwargs, node)
    if isinstance(f, Method) and isinstance(f.value, masks.Masked):
        return _masked_method(tr, f.value, f.name, args, kwargs, node)
    if isinstance(f, Method):
        return method(tr, f.value, f.name, args, kwargs, node)
    if any(isinstance(a, masks.Masked) for a in args):
        return _masked_call(tr, f, args, kwargs, node)
    if isinstance(getattr(f, "__self__", None), np.ufunc) and not isinstance(f, np.ufunc):
        return ufunc_method(tr, f.__self__, f.__name__, args, kwargs, node, HANDLERS)
    if isinstance(f, type) and issubclass(f, np.generic):
        return scalar_type(tr, f, args, kwargs, node)
    try:
        handler = HANDLERS.get(f)
    except TypeError:
        handler = None
    if handler is None:
        name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or type(f).__name__
        module = getattr(f, "__module__", None)
        raise tr.fail(f"call of unsupported function {module + '.' if module else ''}{name}: the frontend compiles the "
                      "NumPy functions docs/frontend.md lists and Python functions whose source it can read, not "
                      "other library or C functions", node)
    return handler(tr, args, kwargs, node)


def _masked_call(tr, f: Any, args: list, kwargs: dict, node: ast.AST) -> Any:
    """A NumPy function of a boolean-masked read (masks.py): reductions over all
    elements, elementwise functions (which stay masked), len()."""
    m = args[0]
    if f in REDUCTIONS and REDUCTIONS[f] in masks.LAZY_REDUCTIONS and isinstance(m, masks.Masked) and len(args) == 1 \
            and not kwargs:
        return masks.reduce(tr, REDUCTIONS[f], m, node)
    if f in (np.var, np.std) and isinstance(m, masks.Masked) and len(args) == 1 and set(kwargs) <= {"ddof"}:
        return masks.reduce(tr, f.__name__, m, node, kwargs.get("ddof", 0))
    if f is builtins.len and isinstance(m, masks.Masked):
        return masks.count(tr, m, node)
    if f in ELEMENTWISE and masks.combinable(args):
        return masks.elementwise(tr, HANDLERS[f], args, kwargs, node)
    return call(tr, f, [masked(tr, a, node) if isinstance(a, masks.Masked) else a for a in args], kwargs, node)


def _masked_method(tr, m: masks.Masked, name: str, args: list, kwargs: dict, node: ast.AST) -> Any:
    if name in METHOD_REDUCTIONS and METHOD_REDUCTIONS[name] in masks.LAZY_REDUCTIONS and not args and not kwargs:
        return masks.reduce(tr, METHOD_REDUCTIONS[name], m, node)
    if name in METHOD_MOMENTS and not args and set(kwargs) <= {"ddof"}:
        return masks.reduce(tr, name, m, node, kwargs.get("ddof", 0))
    return method(tr, masked(tr, m, node), name, args, kwargs, node)


def array_attribute(tr, e: Expr, name: str, node: ast.AST) -> Any:
    if isinstance(e, masks.Masked):
        if name in METHOD_REDUCTIONS or name in METHOD_MOMENTS:
            return Method(e, name)  # type: ignore[arg-type]
        if name == "size":
            return masks.count(tr, e, node)
        if name == "ndim":
            return Affine(1)
        e = masked(tr, e, node)
    if name == "T":
        return transpose(tr, e, None, node)
    if name == "shape":
        return tuple(e.shape)
    if name == "ndim":
        return Affine(e.ndim)
    if name == "size":
        total = Affine(1)
        for d in e.shape:
            total = tr.int_binop("mul", total, d, node)
        return total
    if name == "dtype":
        return np.dtype(NUMPY_NAMES[tr.em.concrete(e)])
    if name in METHODS:
        return Method(e, name)
    raise tr.fail(f"unsupported array attribute '.{name}'", node)


def method(tr, e: Expr, name: str, args: list, kwargs: dict, node: ast.AST) -> Any:
    return METHODS[name](tr, e, args, kwargs, node)
