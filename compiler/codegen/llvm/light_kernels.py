"""Outlined kernels light enough for LLVM's light pipeline.

    mark_if_light(op, *fns)    marks `fns` `!dfc.light` when `work_estimate.static_work(op) < LIGHT_WORK`

An outlined loop nest or parallel body (with its trampoline) whose work per
call is a constant below `LIGHT_WORK` ops (a channel vector's statistics, an
elementwise map over a small image) runs for a few microseconds whatever
LLVM makes of it. Its functions get the metadata `!dfc.light`, and a part
whose functions all have it is compiled with the light pipeline
(`workers.compile_part`: O1 without vectorisation, about a quarter less
compile time).
"""

from __future__ import annotations

import llvmlite.ir as ir
from xdsl.ir import Operation

from dfc.compiler.codegen.llvm.work_estimate import static_work
from dfc.compiler.codegen.llvm.workers import LIGHT_KIND

__all__ = ["LIGHT_WORK", "mark_if_light"]

LIGHT_WORK = 1 << 16
"""Estimated ops per call below which an outlined kernel is light."""


def mark_if_light(op: Operation, *fns: ir.Function) -> None:
    """Mark `fns`, the functions outlined from `op`, light (`!dfc.light`) when
    one execution of `op` is estimated below `LIGHT_WORK` ops."""
    work = static_work(op)
    if work is not None and work < LIGHT_WORK:
        for fn in fns:
            fn.set_metadata(LIGHT_KIND, fn.module.add_metadata([]))
