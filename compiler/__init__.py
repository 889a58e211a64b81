"""Public Python API, in the style of MLIR's Python bindings."""

from dfc.compiler.context import make_context
from dfc.compiler.parsing import parse_module

__all__ = ["make_context", "parse_module", "PassManager", "ExecutionEngine"]


def __getattr__(name: str):
    if name == "PassManager":
        from dfc.compiler.pass_manager import PassManager

        return PassManager
    if name == "ExecutionEngine":
        from dfc.compiler.engine import ExecutionEngine

        return ExecutionEngine
    raise AttributeError(name)
