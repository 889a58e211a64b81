"""Public Python API, in the style of MLIR's Python bindings."""

from compiler.context import make_context
from compiler.parsing import parse_module

__all__ = ["make_context", "parse_module", "PassManager", "ExecutionEngine"]


def __getattr__(name: str):
    if name == "PassManager":
        from compiler.pass_manager import PassManager

        return PassManager
    if name == "ExecutionEngine":
        from compiler.engine import ExecutionEngine

        return ExecutionEngine
    raise AttributeError(name)
