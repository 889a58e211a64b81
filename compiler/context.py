"""The xDSL context with every dialect the compiler understands.

builtin, func, arith (xDSL's and `arith.remf`: `xdsl_fixes.ARITH`), df and
nn are loaded; the others are registered and loaded by xDSL when the parser
first meets one of their ops or types, so a command that never sees `llvm`,
`gpu`, `vector` or `stablehlo` does not import them.
"""

from collections.abc import Callable
from importlib import import_module

from xdsl.context import Context
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.ir import Dialect

from dfc.dialects.df import DF
from dfc.dialects.nn import NN
from dfc.dialects.xdsl_fixes import ARITH

_ON_DEMAND = {
    "math": "xdsl.dialects.math:Math",
    "scf": "xdsl.dialects.scf:Scf",
    "tensor": "xdsl.dialects.tensor:Tensor",
    "memref": "xdsl.dialects.memref:MemRef",
    "vector": "xdsl.dialects.vector:Vector",
    "llvm": "xdsl.dialects.llvm:LLVM",
    "gpu": "xdsl.dialects.gpu:GPU",
    "blas": "dfc.dialects.blas:BLAS",
    "stablehlo": "dfc.dialects.stablehlo:StableHLO",
    "chlo": "dfc.dialects.stablehlo_chlo:CHLO",
}


def _loader(target: str) -> Callable[[], Dialect]:
    module, name = target.split(":")
    return lambda: getattr(import_module(module), name)


def make_context(allow_unregistered: bool = False) -> Context:
    """A fresh context with builtin, func, arith, math, scf, tensor, memref,
    vector, llvm, gpu (what `lower-dataflow{target=gpu}` produces), df, nn, blas
    and stablehlo and chlo (the input of `convert-stablehlo`). `allow_unregistered`:
    ops of other dialects parse as unregistered ops (mlir-opt's
    `--allow-unregistered-dialect`)."""
    ctx = Context(allow_unregistered=allow_unregistered)
    for dialect in (Builtin, Func, ARITH, DF, NN):
        ctx.load_dialect(dialect)
    for name, target in _ON_DEMAND.items():
        ctx.register_dialect(name, _loader(target))
    return ctx
