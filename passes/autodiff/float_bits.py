"""Refusing gradients through the bits of a differentiated float.

`nn.bitcast_convert` of a float to integers has no derivative (its rule passes
nothing), so a float rebuilt from those bits, as `jnp.ldexp`, `jnp.frexp` or
`jnp.nextafter` do it, would get a gradient of 0 where the function has
another (JAX differentiates those by rules of their own that StableHLO does not
carry). `check_float_bits` makes that an error at the bitcast instead of a
silently wrong gradient. Values behind an `nn.stop_gradient` (the
straight-through rounding of `reduce_precision` and the narrow float types)
are not differentiated, so their bits may be read.

A function an importer marks `dfc.unmodelled_gradient` ("what@file:line:col":
`from_jax` marks a JAX function holding `lax.stop_gradient`, which StableHLO
does not carry) is refused there too: `check_unmodelled`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import AnyFloat, StringAttr, TensorType
from xdsl.ir import Operation, SSAValue

from dfc.dialects import nn_elementwise as nne
from dfc.dialects.diagnostics import CompileError

UNMODELLED_GRADIENT = "dfc.unmodelled_gradient"


def check_unmodelled(f: func.FuncOp) -> None:
    """A `CompileError` where `f`'s `dfc.unmodelled_gradient` mark says, if it has one."""
    mark = f.attributes.get(UNMODELLED_GRADIENT)
    if isinstance(mark, StringAttr):
        what, _, where = mark.data.partition("@")
        raise CompileError(f"autodiff: the gradient of @{f.sym_name.data} through {what} is not supported (the "
                           "imported program does not carry it, so the gradient would differ)", where or None)


def _is_float(v: SSAValue) -> bool:
    return isinstance(v.type, TensorType) and isinstance(v.type.element_type, AnyFloat)


def check_float_bits(ops: Sequence[Operation], differentiated: Iterable[SSAValue]) -> None:
    """A `CompileError` at the first `nn.bitcast_convert` in `ops` (nested included) that reads the bits of
    a float depending on `differentiated` other than through `nn.stop_gradient`."""
    live = set(differentiated)
    for op in ops:
        for inner in op.walk():
            if isinstance(inner, nne.StopGradientOp) or not any(v in live for v in inner.operands):
                continue
            if isinstance(inner, nne.BitcastConvertOp) and not _is_float(inner.results[0]):
                raise CompileError.at(inner, "autodiff: the gradient through the bits of a float (nn.bitcast_convert "
                                             "to integers, as ldexp, frexp or nextafter read them) is not defined")
            live.update(r for r in inner.results if _is_float(r))
            for region in inner.regions:
                for block in region.blocks:
                    live.update(a for a in block.args if _is_float(a))
