"""How the Python API reports the user's errors.

`user_errors` wraps the API's entry points (`dfc.jit` calls, `dfc.grad`, the
importers): a `CompileError` leaves them with the line its location names and
a caret under the column, and without dfc's internal frames, so that the
traceback ends at the user's call (`DFC_TRACEBACK=1` keeps every frame).
`require_extra` imports an optional dependency or raises an `ImportError`
naming the extra that installs it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib import import_module
from types import ModuleType
from typing import Any, TypeVar

from dfc import config
from dfc.dialects.diagnostics import CompileError

F = TypeVar("F", bound=Callable[..., Any])


def user_errors(fn: F) -> F:
    """`fn`, raising its `CompileError`s with their source line and without dfc's frames."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except CompileError as err:
            err.with_source()
            if config.TRACEBACK.value():
                raise
            raise err.with_traceback(None) from None

    return wrapper  # type: ignore[return-value]


def require_extra(module: str, extra: str, what: str) -> ModuleType:
    """`import module`, or an ImportError saying that `what` needs `pip install "dfc[extra]"`."""
    try:
        return import_module(module)
    except ModuleNotFoundError as err:
        if err.name is None or err.name.split(".")[0] != module.split(".")[0]:
            raise  # the package is there but one of its own imports is missing
        raise ImportError(f'{what} needs {module.split(".")[0]}, which is not installed: '
                          f'pip install "dfc[{extra}]"', name=module) from None
