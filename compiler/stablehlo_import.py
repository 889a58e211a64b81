"""Importing JAX programs: StableHLO text -> library-level IR -> a callable.

`import_stablehlo(text)` parses a StableHLO module (pretty or generic form, as
`jax.jit(f).lower(*args).as_text()` prints it) and runs `convert-stablehlo`
and `dce`; the result holds func + nn + scf, ready for `autodiff` and the
engine. `from_jax(f, *example_args)` lowers `f` with JAX for the example
arguments' shapes and dtypes, imports it under the function's own name, and
returns a `JaxFunction` that compiles on its first call. JAX is imported only
by `from_jax`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr

from dfc.compiler.interpreter import dtype_of
from dfc.compiler.parsing import parse_module
from dfc.compiler.pass_manager import PassManager


def import_stablehlo(text: str, filename: str = "<stablehlo>") -> ModuleOp:
    """The library-level module of a StableHLO module's text."""
    module = parse_module(text, filename)
    PassManager.parse("convert-stablehlo,dce").run(module)
    return module


class JaxFunction:
    """A JAX function imported as `module`'s `@name`; calling it runs the compiled code."""

    def __init__(self, module: ModuleOp, name: str):
        self.module = module
        self.name = name
        self._engine: Any = None

    def mlir(self) -> str:
        """The imported module (func + nn + scf) as MLIR text."""
        return str(self.module)

    def arguments(self, *args: Any) -> list[np.ndarray]:
        """`args` as numpy arrays of the dtypes JAX lowered them to (a Python
        float becomes an f32 0-d array, as in JAX)."""
        f = next(op for op in self.module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == self.name)
        types = f.function_type.inputs.data
        if len(args) != len(types):
            raise TypeError(f"@{self.name} takes {len(types)} arguments, got {len(args)}")
        return [np.asarray(a, dtype=dtype_of(t.element_type)) for a, t in zip(args, types)]  # type: ignore[attr-defined]

    def __call__(self, *args: Any) -> Any:
        if self._engine is None:
            from dfc.compiler.engine import ExecutionEngine

            self._engine = ExecutionEngine(self.module.clone())
        return self._engine.invoke(self.name, *self.arguments(*args))


def _symbol(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return cleaned if cleaned and not cleaned[0].isdigit() else f"f_{cleaned}"


def from_jax(f: Callable[..., Any], *example_args: Any) -> JaxFunction:
    """`f` lowered by `jax.jit` for arguments shaped like `example_args`, imported.

    The module's entry function (JAX's `@main`) is renamed after `f`.
    """
    import jax

    text = jax.jit(f).lower(*example_args).as_text()
    name = _symbol(getattr(f, "__name__", "main"))
    module = import_stablehlo(text, f"<jax:{name}>")
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == "main":
            op.sym_name = StringAttr(name)
    return JaxFunction(module, name)
