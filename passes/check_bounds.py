"""`check-bounds`: mark the accesses that need a bounds check at run time.

Runs on buffers (after bufferize). Every `df.read` and `df.write` of a map,
and every `memref.load`/`memref.store` (what `tensor.extract`/`tensor.insert`
became), whose indices `dialects.index_ranges` cannot prove inside the buffer
gets the attribute `check_bounds = "<op name>"` (the op that wrote the
access in the source, for the error message). That covers indices read from data
(gathers, `nll_loss` labels), indices built from function arguments, and
bounds the range analysis does not relate to the buffer's sizes. Accesses the
verifier proved out of bounds never get here; affine accesses over their
map's range are proven and stay unmarked, so kernels pay nothing for them.

`lower-dataflow` carries the mark to the loads and stores it creates, and the
LLVM backend guards each marked access: an index outside the buffer skips the
access (a load yields 0), counts the failure, and records its source location,
and `ExecutionEngine.invoke` raises `IndexError` naming it after the call; the
loops holding a marked access end soon after a failure (`FunctionEmitter.loop`).
`print-stats=true` prints `check-bounds: @f checked=N proven=M` per function.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from dfc.dialects import df
from dfc.dialects.index_ranges import proven_in_bounds

CHECK = "check_bounds"
"""The attribute marking an access to check at run time."""

_ACCESSES = (df.ReadOp, df.WriteOp, memref.LoadOp, memref.StoreOp)


@dataclass(frozen=True)
class CheckBoundsPass(ModulePass):
    """Mark accesses not proven in bounds with `check_bounds` (see the module docstring)."""

    name = "check-bounds"

    print_stats: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.ops:
            if not isinstance(f, func.FuncOp) or f.is_declaration:
                continue
            checked = proven = 0
            for access in f.walk():
                if not isinstance(access, _ACCESSES) or CHECK in access.attributes:
                    continue
                if proven_in_bounds(access):
                    proven += 1
                else:
                    access.attributes[CHECK] = StringAttr(access.name)
                    checked += 1
            if self.print_stats:
                print(f"check-bounds: @{f.sym_name.data} checked={checked} proven={proven}", file=sys.stderr)


def checked(access: Operation, new: Operation) -> Operation:
    """`new`, marked for a run-time bounds check when `access` is (`check-bounds`)."""
    if CHECK in access.attributes:
        new.attributes[CHECK] = access.attributes[CHECK]
        new.location = access.location
    return new
