"""The xDSL context with every dialect the compiler understands."""

from xdsl.context import Context
from xdsl.ir import Dialect
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.dialects.gpu import GPU
from xdsl.dialects.llvm import LLVM
from xdsl.dialects.math import Math
from xdsl.dialects.memref import MemRef
from xdsl.dialects.scf import Scf
from xdsl.dialects.tensor import Tensor
from xdsl.dialects.vector import Vector

import dfc.compiler.xdsl_fixes  # noqa: F401  (parser fixes, applied on import)
from dfc.dialects.blas import BLAS
from dfc.dialects.df import DF
from dfc.dialects.nn import NN


def _stablehlo() -> Dialect:
    from dfc.dialects.stablehlo import StableHLO

    return StableHLO


def make_context(allow_unregistered: bool = False) -> Context:
    """A fresh context with builtin, func, arith, math, scf, tensor, memref,
    vector, llvm, gpu (what `lower-dataflow{target=gpu}` produces), df, nn and blas
    loaded, and stablehlo (the input of `convert-stablehlo`) registered: it loads
    when a stablehlo op or attribute is read. `allow_unregistered`:
    ops of other dialects parse as unregistered ops (mlir-opt's
    `--allow-unregistered-dialect`)."""
    ctx = Context(allow_unregistered=allow_unregistered)
    for dialect in (Builtin, Func, Arith, Math, Scf, Tensor, MemRef, Vector, LLVM, GPU, DF, NN, BLAS):
        ctx.load_dialect(dialect)
    ctx.register_dialect("stablehlo", _stablehlo)
    return ctx
