"""Refusing gradients through the bits of a differentiated float.

`nn.bitcast_convert` of a float to integers has no derivative (its rule passes
nothing), so a float rebuilt from those bits, as `jnp.ldexp`, `jnp.frexp` or
`jnp.nextafter` do it, would get a gradient of 0 where the function has
another (JAX differentiates those by rules of their own that StableHLO does not
carry). `check_float_bits` makes that an error at the bitcast instead of a
silently wrong gradient. Values behind an `nn.stop_gradient` (the
straight-through rounding of `reduce_precision` and the narrow float types)
are not differentiated, so their bits may be read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from xdsl.dialects.builtin import AnyFloat, TensorType
from xdsl.ir import Operation, SSAValue

from dfc.dialects import nn_elementwise as nne
from dfc.dialects.diagnostics import CompileError


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
