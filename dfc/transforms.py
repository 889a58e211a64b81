"""The JAX-style transforms: `grad`, `value_and_grad` and `vjp` (exported as
`dfc.grad`, ...).

Each takes a `Function`, anything with a `specialize(*args) -> (Function,
arguments, positions)` method (what `dfc.jit` returns), or a plain Python
function (jitted on the way), and runs the `autodiff` pass through
`Function.gradient`: the gradient function is compiled once per `argnums` and
cached on the `Function`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType

from dfc.compiler.interpreter import dtype_of
from dfc.errors import user_errors
from dfc.frontend import jit
from dfc.function import Function, is_float_type


def _types(types: Sequence[Any]) -> str:
    """Types as MLIR writes a result list: `tensor<8xf64>`, `(f32, i64)`, `()`."""
    text = ", ".join(str(t) for t in types)
    return text if len(types) == 1 else f"({text})"


def _specialize(f: Any, args: Sequence[Any], kwargs: dict) -> tuple[Function, list[Any], list[int]]:
    """(the Function, its IR arguments, IR index of each parameter or -1); keyword
    arguments and defaults bind as in Python (not for a `Function`)."""
    if isinstance(f, Function):
        if kwargs:
            raise TypeError(f"@{f.name} takes positional arguments only")
        return f, list(args), list(range(len(args)))
    if hasattr(f, "specialize"):
        return f.specialize(*args, **kwargs)
    if callable(f):
        return jit(f).specialize(*args, **kwargs)
    raise TypeError(f"expected a dfc.Function or a Python function, got {type(f).__name__}")


def _wrt(fn: Function, argnums: int | Sequence[int], positions: list[int], what: str = "argnums") -> list[int]:
    nums = [argnums] if isinstance(argnums, int) else list(argnums)
    wrt = []
    for k in nums:
        if not -len(positions) <= k < len(positions):
            raise ValueError(f"{what} {k} out of range for {len(positions)} arguments")
        ir = positions[k]
        if ir < 0 or not is_float_type(fn.inputs[ir]):
            raise TypeError(f"argument {k} of @{fn.name} is not a float array: it has no gradient")
        wrt.append(ir)
    return wrt


def _value_and_grads(f: Any, argnums: int | Sequence[int], args: Sequence[Any], kwargs: dict) -> tuple[Any, Any]:
    fn, ir_args, positions = _specialize(f, args, kwargs)
    wrt = _wrt(fn, argnums, positions)
    float_outputs = [t for t in fn.outputs if is_float_type(t)]
    if len(fn.outputs) != 1 or len(float_outputs) != 1 or (isinstance(float_outputs[0], TensorType) and float_outputs[0].get_shape()):
        raise TypeError(f"grad needs a function with one scalar float result; @{fn.name} returns {_types(fn.outputs)}")
    t = float_outputs[0]
    seed = np.array(1.0, dtype_of(t.element_type if isinstance(t, TensorType) else t))
    value, *grads = fn.gradient(wrt)(*ir_args, seed if isinstance(t, TensorType) else seed[()])
    return value, grads[0] if isinstance(argnums, int) else tuple(grads)


def grad(f: Any, argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """The gradient of scalar-valued `f` (a `Function` or a Python function,
    jitted) with respect to argument `argnums` (an int, or a tuple: a tuple of gradients;
    keyword arguments bind as in a call, and `argnums` counts the parameters in order)."""

    @user_errors
    def gradient(*args: Any, **kwargs: Any) -> Any:
        return _value_and_grads(f, argnums, args, kwargs)[1]

    return gradient


def value_and_grad(f: Any, argnums: int | Sequence[int] = 0) -> Callable[..., tuple[Any, Any]]:
    """Like `grad`, returning `(f(*args), gradient)`."""

    @user_errors
    def both(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        return _value_and_grads(f, argnums, args, kwargs)

    return both


@user_errors
def vjp(f: Any, *args: Any, **kwargs: Any) -> tuple[Any, Callable[[Any], tuple]]:
    """`(f(*args, **kwargs), pullback)`: `pullback(cotangent)` returns the vector-Jacobian
    product for every float parameter of `f`, in order (None for the others; defaults
    and keyword arguments included)."""
    fn, ir_args, positions = _specialize(f, args, kwargs)
    floats = [k for k, ir in enumerate(positions) if ir >= 0 and is_float_type(fn.inputs[ir])]
    if len(fn.outputs) != 1 or not is_float_type(fn.outputs[0]):
        raise TypeError(f"vjp needs a function with one float result; @{fn.name} returns {_types(fn.outputs)}")
    gradient = fn.gradient([positions[k] for k in floats])
    value = fn(*ir_args)

    def pullback(cotangent: Any) -> tuple:
        _, *grads = gradient(*ir_args, cotangent)
        by_arg: list[Any] = [None] * len(positions)
        for k, g in zip(floats, grads):
            by_arg[k] = g
        return tuple(by_arg)

    return value, pullback
