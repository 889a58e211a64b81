"""dfc: a dataflow compiler in the MLIR tradition, built on xDSL.

The repository's top-level folders are this package's subpackages:
`dfc.compiler` (parsing, pass manager, interpreter, engine, backend),
`dfc.dialects` (df, nn), `dfc.passes` (one module per pass) and `dfc.tools`
(opt-tool, run-tool). The names below are the public Python API, in the
style of MLIR's Python bindings; each is imported on first use so that
`import dfc` stays cheap, and `dir(dfc)`, tab completion and `help(dfc)` list
them all. docs/api.md is their reference.

    @dfc.jit                               # the NumPy frontend
    def loss(x, w): return np.sum(np.tanh(x @ w))
    dfc.grad(loss, 1)(x, w)                # reverse mode by the autodiff pass

The optional front ends need their extras: `dfc.torch` (`pip install
"dfc[torch]"`), `from_jax` (`dfc[jax]`), `from_onnx` (`dfc[onnx]`).
"""

from importlib import import_module
from types import ModuleType
from typing import Any

__version__ = "0.2.0"

_EXPORTS = {
    "parse_module": "dfc.compiler.parsing",
    "make_context": "dfc.compiler.context",
    "PassManager": "dfc.compiler.pass_manager",
    "ExecutionEngine": "dfc.compiler.engine",
    "CompileError": "dfc.dialects.diagnostics",
    "interpret": "dfc.compiler.interpreter",
    "Function": "dfc.function",
    "grad": "dfc.transforms",
    "value_and_grad": "dfc.transforms",
    "vjp": "dfc.transforms",
    "jvp": "dfc.forward_transforms",
    "jacfwd": "dfc.forward_transforms",
    "linearize": "dfc.forward_transforms",
    "jacrev": "dfc.transforms",
    "vmap": "dfc.vmap_transform",
    "hessian": "dfc.second_order",
    "hvp": "dfc.second_order",
    "checkpoint": "dfc.remat",
    "MemoryBudgetError": "dfc.memory_budget",
    "jit": "dfc.frontend",
    "FrontendError": "dfc.frontend",
    "f16": "dfc.frontend",
    "f32": "dfc.frontend",
    "f64": "dfc.frontend",
    "i32": "dfc.frontend",
    "i64": "dfc.frontend",
    "from_jax": "dfc.importers.stablehlo_import",
    "import_stablehlo": "dfc.importers.stablehlo_import",
    "from_onnx": "dfc.importers.onnx_import",
    "import_onnx": "dfc.importers.onnx_import",
}

__all__ = ["__version__", *_EXPORTS]


def __dir__() -> list[str]:
    """The public API, the module's dunders and the subpackages imported so far."""
    names = globals()
    loaded = (n for n, v in names.items() if isinstance(v, ModuleType))
    return sorted({*__all__, *loaded, *(n for n in names if n.startswith("__"))})


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'dfc' has no attribute '{name}'")
