"""`dfc.checkpoint(f)` in jitted code: a call of `f` that autodiff does not store.

A `Checkpointed` function called from a function being translated becomes a
`func.call` of its translation carrying `{df.checkpoint = "<policy>"}`; the
`autodiff` pass recomputes what the callee computes in the backward sweep
instead of keeping it (passes/autodiff/checkpoint.py)."""

from __future__ import annotations

import ast
import types
from typing import Any


class Checkpointed:
    """`fn` (a Python function or a `dfc.jit` function) marked for recomputation
    under `policy` (one of `dfc.passes.autodiff.checkpoint.POLICIES`)."""

    def __init__(self, fn: Any, policy: str):
        self.fn = fn
        self.policy = policy
        self.__name__ = getattr(fn, "__name__", None) or getattr(fn, "name", "f")
        self.__doc__ = getattr(fn, "__doc__", None)

    def __repr__(self) -> str:
        return f"<dfc.checkpoint({self.fn!r}, policy={self.policy!r})>"


def checkpointed_call(tr, f: Checkpointed, args: list, kwargs: dict, node: ast.AST) -> Any:
    """`f(*args, **kwargs)` inside a function being translated: the call of a jitted
    function (a plain Python one is jitted as any helper is), marked as a checkpoint."""
    from dfc.frontend import FrontendError, JitFunction, helper

    fn = f.fn
    if isinstance(fn, types.FunctionType):
        try:
            fn = helper(fn) or fn
        except FrontendError as err:
            raise tr.fail(err.message, node) from None
    if not isinstance(fn, JitFunction):
        raise tr.fail(f"dfc.checkpoint of {type(fn).__name__} {f.__name__!r} cannot be called from a jitted "
                      "function: checkpoint a Python function or a dfc.jit function there", node)
    return tr.callee(tr, fn, args, kwargs, node, checkpoint=f.policy)
