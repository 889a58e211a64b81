"""Public Python API, in the style of MLIR's Python bindings.

Every name is imported on first use, so that importing a submodule
(`dfc.dialects.limits`, which the dialects use) loads nothing else.
"""

__all__ = ["make_context", "parse_module", "PassManager", "ExecutionEngine"]

_HOMES = {
    "make_context": "dfc.compiler.context",
    "parse_module": "dfc.compiler.parsing",
    "PassManager": "dfc.compiler.pass_manager",
    "ExecutionEngine": "dfc.compiler.engine",
}


def __getattr__(name: str):
    if name in _HOMES:
        from importlib import import_module

        return getattr(import_module(_HOMES[name]), name)
    raise AttributeError(name)
