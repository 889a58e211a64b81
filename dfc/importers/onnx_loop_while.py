"""ONNX Loops whose number of iterations is known only at run time, as one `scf.while`.

A Loop whose trip count `M` is a run-time value, or whose condition is a run-time value and `M` is absent
(or beyond `UNROLL_LIMIT`, the most the masked unrolling copies), runs as

    %i, %c, %v... = scf.while (%i = 0, %c = cond (or true), %v = the initial values) {
        scf.condition(c && i < M) %i, %c, %v...          // `i < M` only with a trip count
    } do { the body on (%i, %c, %v...); yield %i + 1, cond_out, v_out... }

its body imported once with the iteration number and the condition as run-time 0-d tensors. The loop
carries only tensors of one type each iteration (a value changing shape, a sequence or optional, or scan
outputs, whose length would be the run-time trip count, are a NodeError naming the Loop). The interpreter
and the engine run `scf.while`, and `autodiff` differentiates it (it counts the iterations, then replays
them as an `scf.for`: passes/autodiff/whiles.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import scf, tensor
from xdsl.dialects.builtin import i1, i64
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from dfc.dialects import nn_elementwise as nne
from dfc.importers.onnx_common import NodeError, tensor_of
from dfc.importers.onnx_sequences import is_structured


class WhileLoopOps:
    """`_loop_as_while`, mixed into `OnnxImporter` (whose `subgraph`, `constant`, `ins`, `_reshape`, `_add`,
    `_ssa` and `_flag` it uses); `op_Loop` calls it."""

    def _loop_as_while(self, body: Any, trips: SSAValue | None, running: bool | SSAValue, values: list[Any],
                       unsigned: list[bool], scanned: int) -> tuple[list[SSAValue], list[bool]]:
        """(final carried values, their unsigned flags) of a Loop of run-time length as one `scf.while`."""
        if scanned:
            raise NodeError(f"Loop with {scanned} scan outputs and a number of iterations known only at run time "
                            "is not supported (their length would depend on the data)")
        if any(is_structured(v) for v in values):
            raise NodeError("Loop carrying a sequence or optional over a number of iterations known only at run "
                            "time is not supported (the sequence's length would depend on the data)")
        if trips is not None:
            t = tensor_of(trips)
            if t.element_type != i64 or int(np.prod(t.get_shape())) != 1:
                raise NodeError(f"Loop trip count is {t}; one int64 is needed")
            trips = self._reshape(trips, [])
        inits = [self.constant(np.zeros((), np.int64)),
                 self._ssa(np.array(True)) if running is True else running, *(self._ssa(v) for v in values)]
        types = [v.type for v in inits]
        before, after = Block(arg_types=types), Block(arg_types=types)
        outer = self.b
        try:
            self.b = Builder(InsertPoint.at_end(before))
            flag = before.args[1]
            if trips is not None:
                flag = self.ins(nne.AndOp(flag, self.ins(nne.CompareOp(before.args[0], trips, "LT"))))
            self.b.insert(scf.ConditionOp(self.ins(tensor.ExtractOp(flag, [], i1)), *before.args))
            self.b = Builder(InsertPoint.at_end(after))
            outputs, flags = self.subgraph(body, list(after.args), [False, False, *unsigned])
            cond = self._flag(outputs[0], "Loop body condition")
            new = [self._ssa(np.array(cond)) if isinstance(cond, bool) else cond, *(self._ssa(v) for v in outputs[1:])]
            for k, (n, a) in enumerate(zip(new[2:], after.args[2:])):
                if n.type != a.type:
                    raise NodeError(f"Loop: loop-carried value {k} changes from {a.type} to {n.type}; a number of "
                                    "iterations known only at run time needs one type")
            step = self.add(after.args[0], self.constant(np.ones((), np.int64)))
            self.b.insert(scf.YieldOp(step, *new))
        finally:
            self.b = outer
        loop = self.b.insert(scf.WhileOp(inits, types, Region(before), Region(after)))
        return list(loop.results[2:]), flags[1:]
