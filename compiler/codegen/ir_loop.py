"""A counted loop in LLVM IR, shared by the emitter and the GEMM kernel."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import llvmlite.ir as ir


def counted_loop(fn: ir.Function, b: ir.IRBuilder, lb: ir.Value, ub: ir.Value, step: ir.Value,
                 inits: Sequence[ir.Value], body: Callable[[ir.Value, list[ir.Value]], Sequence[ir.Value]],
                 name: str = "for", keep_going: Callable[[], ir.Value] | None = None,
                 metadata: dict[str, ir.MDValue] | None = None) -> list[ir.Value]:
    """`for (iv = lb; iv < ub; iv += step)` at `b`'s position in `fn`, with
    loop-carried `inits`: `body(iv, carried)` emits one iteration and returns
    the next values; `keep_going()`, emitted before each iteration, an i1 that
    ends the loop early when false; `metadata` is set on the back edge's branch
    (`llvm.loop` hints). Returns the carried values on exit; `b` is
    left after the loop."""
    pre = b.block
    header = fn.append_basic_block(f"{name}.header")
    body_bb = fn.append_basic_block(f"{name}.body")
    exit_bb = fn.append_basic_block(f"{name}.exit")
    b.branch(header)
    b.position_at_end(header)
    iv = b.phi(lb.type)
    iv.add_incoming(lb, pre)
    phis = []
    for v in inits:
        p = b.phi(v.type)
        p.add_incoming(v, pre)
        phis.append(p)
    more = b.icmp_signed("<", iv, ub)
    if keep_going is not None:
        more = b.and_(more, keep_going())
    b.cbranch(more, body_bb, exit_bb)
    b.position_at_end(body_bb)
    nexts = body(iv, list(phis))
    iv_next = b.add(iv, step, name="iv.next")
    latch = b.block
    iv.add_incoming(iv_next, latch)
    for p, v in zip(phis, nexts, strict=True):
        p.add_incoming(v, latch)
    back = b.branch(header)
    for kind, md in (metadata or {}).items():
        back.set_metadata(kind, md)
    b.position_at_end(exit_bb)
    return list(phis)
