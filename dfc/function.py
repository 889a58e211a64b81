"""`Function`: a library-level module and the name of its entry function, callable.

Every way into the compiler (the NumPy frontend, the StableHLO and PyTorch
importers) produces one: `Function(module, name)` where `module` is an xDSL
`ModuleOp` at library level (func + nn + df + scf on tensors) and `name` the
function to call. Calling it compiles the module once with `ExecutionEngine`
(the `default` pipeline) and runs `@name` on numpy arrays; Python floats and
ints are accepted for 0-d tensor parameters, and 0-d results come back as
numpy scalars. `mlir(stage)` prints the module at a stage of the pipeline;
in a notebook, a Function displays its signature and IR (`_repr_html_`).

`gradient(wrt)` adds the gradient function `@name_grad` to a copy of the
module (the `autodiff` pass), compiled once per `wrt` and cached; the
transforms of `dfc.transforms` (`dfc.grad`, ...) are built on it. `jvp(wrt)`
does the same with the forward-mode `jvp` pass (`@name_jvp`), for
`dfc.forward_transforms` (`dfc.jvp`, `dfc.jacfwd`, `dfc.linearize`).
"""

from __future__ import annotations

import html
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import AnyFloat, FunctionType, ModuleOp, TensorType

from dfc import config
from dfc.errors import user_errors

STAGES = ("frontend", "autodiff", "lowered")
log = logging.getLogger(__name__)
"""Each compile's wall time at INFO; its passes' times come from `dfc.compiler.pass_manager`."""


class Function:
    """`@name` of a library-level `module`, compiled on first call."""

    def __init__(self, module: ModuleOp, name: str, threads: int | None = None,
                 result_views: Sequence[np.dtype | None] = ()):
        """`result_views`: per result, the NumPy dtype its bits are viewed as when called (the NumPy
        frontend's unsigned results, signless in the IR), or None."""
        entry = next((op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name), None)
        if entry is None:
            raise ValueError(f"no function @{name} in the module")
        self.module = module
        self.name = name
        self.threads = threads
        self.signature: FunctionType = entry.function_type
        self.result_views = tuple(result_views)
        self._engine = None
        self._gradients: dict[tuple[tuple[int, ...], bool], Any] = {}
        self._jvps: dict[tuple[int, ...], Any] = {}

    def __repr__(self) -> str:
        return f"<dfc.Function @{self.name}: {self.signature}>"

    @property
    def inputs(self) -> list:
        """The entry function's argument types."""
        return list(self.signature.inputs.data)

    @property
    def outputs(self) -> list:
        """The entry function's result types."""
        return list(self.signature.outputs.data)

    def _repr_html_(self) -> str:
        """The notebook display: the signature, and the IR as built in a folded block."""
        return (f"<p><b>dfc.Function</b> <code>@{html.escape(self.name)}: {html.escape(str(self.signature))}</code>"
                f"</p><details><summary>IR</summary><pre>{html.escape(self.mlir())}</pre></details>")

    def _engine_for(self, module: ModuleOp):
        from dfc.compiler import progress
        from dfc.compiler.engine import ExecutionEngine

        start = time.perf_counter()
        with progress.compiling(f"@{self.name}"):
            engine = ExecutionEngine(module, threads=self.threads)
        log.info("@%s compiled in %.1f ms", self.name, (time.perf_counter() - start) * 1e3)
        return engine

    @user_errors
    def __call__(self, *args: Any) -> Any:
        if self._engine is None:
            self._engine = self._engine_for(self.module)
        result = self._engine.invoke(self.name, *call_arguments(self.inputs, args))
        if any(self.result_views):
            result = view_results(result, self.result_views)
        return _results(result, len(self.outputs))

    @user_errors
    def mlir(self, stage: str = "frontend", wrt: Sequence[int] | None = None) -> str:
        """The module as text: as built ("frontend"), after `autodiff`
        ("autodiff"; gradients of `wrt`, default every float tensor argument),
        or lowered by the `default` pipeline ("lowered"). `opt-tool` reads it."""
        if stage not in STAGES:
            raise ValueError(f"unknown stage '{stage}': one of {', '.join(STAGES)}")
        if stage == "frontend":
            return str(self.module)
        if stage == "autodiff":
            return str(self.autodiff_module(tuple(wrt) if wrt is not None else ()))
        from dfc.compiler.engine import lower
        return str(lower(self.module, self.threads or config.default_threads()))

    def autodiff_module(self, wrt: tuple[int, ...] = ()) -> ModuleOp:
        """A copy of the module with `@name_grad` (gradients of `wrt`) added."""
        from dfc.compiler.pass_manager import PassManager
        from dfc.passes.autodiff.autodiff import AutodiffPass

        module = self.module.clone()
        PassManager(passes=[AutodiffPass(func=self.name, wrt=tuple(wrt))]).run(module)
        return module

    def float_arguments(self) -> list[int]:
        """The indices of the float arguments: those that can have gradients."""
        return [k for k, t in enumerate(self.inputs) if is_float_type(t)]

    @user_errors
    def gradient(self, wrt: Sequence[int]) -> Callable[..., tuple]:
        """A callable `(args..., seeds...) -> (results..., grads...)` for `wrt`."""
        key = tuple(wrt)
        if key not in self._gradients:
            for k in key:
                if not 0 <= k < len(self.inputs):
                    raise ValueError(f"@{self.name} has no argument #{k}")
                if not is_float_type(self.inputs[k]):
                    raise TypeError(f"argument #{k} of @{self.name} has type {self.inputs[k]}: gradients exist only for floats")
            engine = self._engine_for(self.autodiff_module(key))
            n_outputs = sum(1 for t in self.outputs if is_float_type(t))
            types = self.inputs + [t for t in self.outputs if is_float_type(t)]
            name = f"{self.name}_grad"

            def call(*args: Any) -> tuple:
                out = engine.invoke(name, *call_arguments(types, args))
                out = out if isinstance(out, tuple) else (out,)
                return tuple(_scalar(x) for x in out)

            call.n_outputs = n_outputs  # type: ignore[attr-defined]
            self._gradients[key] = call
        return self._gradients[key]


    def jvp_module(self, wrt: Sequence[int]) -> ModuleOp:
        """A copy of the module with `@name_jvp` (the tangents of arguments `wrt`) added."""
        from dfc.compiler.pass_manager import PassManager
        from dfc.passes.autodiff.forward import JvpPass

        module = self.module.clone()
        PassManager(passes=[JvpPass(func=self.name, wrt=tuple(wrt))]).run(module)
        return module

    @user_errors
    def jvp(self, wrt: Sequence[int]) -> Callable[..., tuple]:
        """A callable `(args..., tangents...) -> (results..., tangents...)`: one
        tangent per argument in `wrt` (at least one, each a float), and the
        Jacobian-vector product for each float result; compiled once per `wrt`."""
        key = tuple(wrt)
        if key not in self._jvps:
            if not key:
                raise ValueError(f"jvp of @{self.name}: no argument to differentiate")
            for k in key:
                if not 0 <= k < len(self.inputs):
                    raise ValueError(f"@{self.name} has no argument #{k}")
                if not is_float_type(self.inputs[k]):
                    raise TypeError(
                        f"argument #{k} of @{self.name} has type {self.inputs[k]}: tangents exist only for floats")
            engine = self._engine_for(self.jvp_module(key))
            types = self.inputs + [self.inputs[k] for k in key]
            name = f"{self.name}_jvp"

            def call(*args: Any) -> tuple:
                out = engine.invoke(name, *call_arguments(types, args))
                out = out if isinstance(out, tuple) else (out,)
                return tuple(_scalar(x) for x in out)

            self._jvps[key] = call
        return self._jvps[key]


def is_float_type(t) -> bool:
    """A float scalar type or a tensor of floats."""
    return isinstance(t, AnyFloat) or isinstance(t, TensorType) and isinstance(t.element_type, AnyFloat)


def call_arguments(types: Sequence, args: Sequence[Any]) -> list[Any]:
    """Python numbers for 0-d tensor parameters become 0-d arrays of their dtype."""
    from dfc.compiler.interpreter import dtype_of

    out = []
    for t, a in zip(types, args):
        if isinstance(t, TensorType) and not isinstance(a, np.ndarray) and isinstance(a, int | float | np.number):
            if t.get_shape():
                raise TypeError(f"expected an array of type {t}, got {type(a).__name__}")
            a = np.array(a, dtype_of(t.element_type))
        elif isinstance(a, np.ndarray) and isinstance(t, TensorType) and a.dtype != dtype_of(t.element_type):
            pass  # the engine names the mismatch
        out.append(a)
    return out + list(args[len(types):])


def view_results(result: Any, views: Sequence[np.dtype | None]) -> Any:
    """The results of a call (one value, or a tuple of them) with the bits of each viewed as its dtype in
    `views` (None: as it is)."""
    out = [r if d is None else np.asarray(r).view(d) for r, d in zip(result if len(views) != 1 else (result,), views)]
    return out[0] if len(views) == 1 else tuple(out)


def _scalar(x: Any) -> Any:
    return x[()] if isinstance(x, np.ndarray) and x.ndim == 0 else x


def _results(result: Any, n: int) -> Any:
    if n == 1:
        return _scalar(result)
    return tuple(_scalar(x) for x in result)
