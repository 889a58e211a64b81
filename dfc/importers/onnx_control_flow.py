"""The ONNX importer's control flow: If, Loop and Scan, whose bodies are subgraphs
(graph attributes) imported in a scope of the enclosing graphs' values.

A subgraph sees every value of the graphs around it (captured by name), binds its
inputs, and imports its nodes like the graph's (`import_node`, so what is known
at import time folds); an error inside names the subgraph and the node.

* `If` with a condition known at import time is the chosen branch; otherwise an
  `scf.if` whose regions hold the branches, which must give outputs of one type
  (and signedness) each.
* `Loop` with a trip count `M` known at import time, a condition absent or
  true, and a body that imports with its iteration number known only at run
  time (a 0-d i64 tensor) and folds its condition to true, is one `scf.for`
  (scan outputs written into `[M, ...]` accumulators), unless all its carried
  values are known at import time (unrolled, it folds). So is a Scan whose body
  imports with its elements known only at run time (each read at the step with
  `nn.dynamic_slice`), unless all its inputs are known at import time.
* A Loop whose trip count is known only at run time, or whose condition is known only at run time with
  no trip count (or one beyond `UNROLL_LIMIT`), is one `scf.while` (`onnx_loop_while`); so is a Loop
  without trip count whose body computes its condition, unless its carried values are known at import
  time or its body needs its iteration number then.
* Other Loops and Scans are unrolled: each copy of the body sees its
  iteration number as a constant (a body may slice with it) and the scan
  outputs have a static length. Such a Loop needs `M` at import time, or a
  condition that folds to false within `UNROLL_LIMIT` iterations; a condition
  known only at run time (with `M`) masks the loop-carried values (`select(running, new,
  old)`, running the conjunction of the conditions so far) for the `M`
  iterations, which a Loop with scan outputs (whose length it would set) does
  not allow. Scan's opset-8 form (batched, `sequence_lens`) runs the body per
  batch element, the lengths being the full one.

Both keep every body ordinary nn ops (and `scf.for`), so `autodiff`, fusion and
both backends need nothing of their own; unrolling costs IR proportional to
the trip count (`UNROLL_LIMIT` bounds it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import IndexType, TensorType, i1
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from dfc.compiler.interpreter import dtype_of
from dfc.dialects import nn_elementwise as nne
from dfc.dialects import nn_shape as nns
from dfc.importers.onnx_common import NodeError, element_type, normalize_axis, tensor_of
from dfc.importers.onnx_sequences import EMPTY, is_structured, layout, leaves, regroup

UNROLL_LIMIT = 4096
"""The most iterations a Loop or Scan is unrolled to (more is a NodeError naming the node)."""

Value = SSAValue | np.ndarray
"""A value of a subgraph: built in the IR, or known at import time."""


class ControlFlowOps:
    """`op_If`, `op_Loop` and `op_Scan`, mixed into `OnnxImporter` (whose `import_node`, `value`, `ins`,
    `constant`, `_cut`, `_reshape` and `format_of` they use)."""

    # ------------------------------------------------------------ subgraphs

    def subgraph(self, graph: Any, bindings: Sequence[Value], unsigned: Sequence[bool]) -> tuple[list[Value], list[bool]]:
        """The outputs of `graph` (and which are unsigned) with its inputs bound to `bindings`, its nodes
        built at `self.b`; the names it defines are gone afterwards (the enclosing scope is restored)."""
        from onnx import numpy_helper

        if len(bindings) != len(graph.input):
            raise NodeError(f"subgraph '{graph.name}' takes {len(graph.input)} inputs, {len(bindings)} given")
        saved = (dict(self.values), dict(self.consts), set(self.unsigned), dict(self.formats), self.unsigned_inputs,
                 self.unsigned_outputs)
        try:
            for info, value, flag in zip(graph.input, bindings, unsigned):
                value = np.asarray(value) if isinstance(value, np.generic) else value  # an element of a constant
                self.values.pop(info.name, None)
                self.consts.pop(info.name, None)
                (self.consts if isinstance(value, np.ndarray) else self.values)[info.name] = value
                (self.unsigned.add if flag else self.unsigned.discard)(info.name)
            for init in graph.initializer:
                self.values.pop(init.name, None)
                self.consts[init.name] = numpy_helper.to_array(init)
            for index, node in enumerate(graph.node):
                where = f"subgraph '{graph.name}' node '{node.name or index}' ({node.op_type})"
                try:
                    self.import_node(node)
                except NodeError as err:
                    raise NodeError(f"{where}: {err}") from None
                except VerifyException as err:
                    raise NodeError(f"{where}: not supported for these operands: {err}") from None
            for o in graph.output:
                if fmt := self.format_of(o.name):
                    raise NodeError(f"subgraph '{graph.name}' output '{o.name}' holds {fmt} codes, which If, Loop "
                                    "and Scan do not carry")
            outputs = [self.item(o.name) for o in graph.output]
            return outputs, [self.is_unsigned(o.name) for o in graph.output]
        finally:
            self.values, self.consts, self.unsigned, self.formats, self.unsigned_inputs, self.unsigned_outputs = saved

    def _ssa(self, v: Value) -> SSAValue:
        return self.constant(v) if isinstance(v, np.ndarray) else v

    def _current(self, name: str) -> Value:
        """The value of `name`: known at import time, built, or a sequence or optional (`onnx_sequences`)."""
        return self.item(name)

    def _results(self, node: Any, outputs: Sequence[Value], unsigned: Sequence[bool]) -> list[SSAValue]:
        """The node's outputs built, those known at import time also kept as constants (for folding)."""
        if len(outputs) < len(node.output):
            raise NodeError(f"{len(node.output)} outputs named, the body gives {len(outputs)}")
        for name, v in zip(node.output, outputs):
            if name and isinstance(v, np.ndarray):
                self.consts[name] = v
        self.unsigned_outputs = {k for k, flag in enumerate(unsigned) if flag}
        return [self._ssa(v) for v in outputs]

    def _flag(self, v: Value, what: str) -> bool | SSAValue:
        """A condition: a bool when known at import time, else a 0-d i1 tensor."""
        if isinstance(v, np.ndarray):
            if v.size != 1:
                raise NodeError(f"{what} has {v.size} elements; one boolean is needed")
            return bool(v.reshape(-1)[0])
        t = tensor_of(v)
        if t.element_type != i1 or int(np.prod(t.get_shape())) != 1:
            raise NodeError(f"{what} is {t}; one boolean is needed")
        return self._reshape(v, [])

    # ------------------------------------------------------------ If

    def op_If(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The branch a condition known at import time chooses; else `scf.if` of both branches."""
        branches = (attrs["then_branch"], attrs["else_branch"])
        cond = self._flag(self._current(node.input[0]), f"If condition '{node.input[0]}'")
        if isinstance(cond, bool):
            return self._results(node, *self.subgraph(branches[0 if cond else 1], [], []))
        outer = self.b
        blocks, yields, flags, layouts = [], [], [], []
        for graph in branches:
            block = Block()
            self.b = Builder(InsertPoint.at_end(block))
            try:
                outputs, unsigned = self.subgraph(graph, [], [])
                yields.append([self._ssa(v) for v in leaves(outputs)])
            finally:
                self.b = outer
            blocks.append(block)
            flags.append(unsigned)
            layouts.append([layout(v) for v in outputs])
        structured = any(t != 0 for t in (*layouts[0], *layouts[1]))
        if structured and (layouts[0] != layouts[1] or any(a.type != b.type for a, b in zip(*yields))):
            self.known(node.input[0])  # the branches' sequences or optionals differ: the choice is needed now
        if len(yields[0]) != len(yields[1]):
            raise NodeError(f"If: then_branch gives {len(yields[0])} outputs, else_branch {len(yields[1])}")
        for k, (a, b) in enumerate(zip(*yields)):
            if a.type != b.type or flags[0] != flags[1]:
                raise NodeError(f"If: output {k} is {a.type} in then_branch and {b.type} in else_branch "
                                "(a run-time condition needs one type)")
        for block, values in zip(blocks, yields):
            block.add_op(scf.YieldOp(*values))
        scalar = self.ins(tensor.ExtractOp(cond, [], i1))
        op = self.b.insert(scf.IfOp(scalar, [v.type for v in yields[0]], Region(blocks[0]), Region(blocks[1])))
        self.unsigned_outputs = {k for k, flag in enumerate(flags[0]) if flag}
        results = iter(op.results)
        return [regroup(t, results, EMPTY) for t in layouts[0]]

    # ------------------------------------------------------------ Loop

    def op_Loop(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The body unrolled while `iteration < M` and the condition holds (see the module docstring)."""
        body = attrs["body"]
        trip_name = node.input[0] if node.input else ""
        cond_name = node.input[1] if len(node.input) > 1 else ""
        names = list(node.input[2:])
        carried = len(names)
        scanned = len(body.output) - 1 - carried
        if scanned < 0:
            raise NodeError(f"Loop body gives {len(body.output)} outputs for {carried} loop-carried values")
        values: list[Value] = [self._current(n) for n in names]
        unsigned = [self.is_unsigned(n) for n in names]
        run_time_trips = bool(trip_name) and trip_name not in self.consts
        if run_time_trips and (scanned or any(is_structured(v) for v in values)):
            self.known(trip_name)  # the scan outputs' or a carried sequence's length depends on it
        trips = int(self.known(trip_name).reshape(-1)[0]) if trip_name and not run_time_trips else None
        if scanned and cond_name and cond_name not in self.consts:
            self.known(cond_name)  # the scan outputs' length depends on it
        running: bool | SSAValue = self._flag(self._current(cond_name), "Loop condition") if cond_name else True
        if run_time_trips or isinstance(running, SSAValue) and (trips is None or trips > UNROLL_LIMIT):
            return self._results(node, *self._loop_as_while(body, self.value(trip_name) if run_time_trips else None,
                                                            running, values, unsigned, scanned))
        if trips is None and running is True and not scanned and not all(
                isinstance(v, np.ndarray) for v in values):
            try:  # a while loop whose condition the body computes
                return self._results(node, *self._loop_as_while(body, None, True, values, unsigned, scanned))
            except NodeError:
                pass  # the body needs its iteration number at import time: unrolled
        if isinstance(running, SSAValue) and any(is_structured(v) for v in values):
            self.known(cond_name)  # a carried sequence's length would depend on it
        if running is True and trips and not all(isinstance(v, np.ndarray) for v in values) and not any(
                is_structured(v) for v in values):
            built = self._loop_as_for(body, trips, values, unsigned)
            if built is not None:
                return self._results(node, *built)
        scans: list[list[Value]] = [[] for _ in range(scanned)]
        scan_unsigned = [False] * scanned
        iteration = 0
        while running is not False and (trips is None or iteration < trips):
            if iteration == UNROLL_LIMIT:
                raise NodeError(f"Loop still running after {UNROLL_LIMIT} iterations (the most unrolled)")
            cond_in = np.array(True) if running is True else running
            outputs, flags = self.subgraph(body, [np.array(iteration, np.int64), cond_in, *values],
                                           [False, False, *unsigned])
            new = outputs[1:1 + carried]
            cond_out = self._flag(outputs[0], "Loop body condition")
            if isinstance(running, SSAValue):
                new = [self._carried_if(running, n, v, k) for k, (n, v) in enumerate(zip(new, values))]
                running = self.ins(nne.AndOp(running, self._ssa(np.array(cond_out)) if isinstance(cond_out, bool)
                                             else cond_out))
            elif isinstance(cond_out, SSAValue) and scanned:
                raise NodeError("Loop: the body's condition is known only at run time, and the scan outputs' "
                                "length would depend on it")
            else:
                running = cond_out
            values, unsigned, scan_unsigned = new, flags[1:1 + carried], flags[1 + carried:]
            for k, v in enumerate(outputs[1 + carried:]):
                scans[k].append(v)
            iteration += 1
        stacked = [self._stacked(vs, 0, body.output[1 + carried + k], "Loop scan output") for k, vs in enumerate(scans)]
        return self._results(node, [*values, *stacked], [*unsigned, *scan_unsigned])

    def _loop_as_for(self, body: Any, trips: int, values: list[Value],
                     unsigned: list[bool]) -> tuple[list[SSAValue], list[bool]] | None:
        """The Loop as one `scf.for` of `trips` iterations (`_counted_for`), its body imported once with the
        iteration number a run-time value and its scan outputs accumulated along a new first dimension; None,
        to unroll instead, when the body needs the iteration number at import time, its condition does not
        fold to true, or a carried value changes type."""
        carried = len(values)

        def fill(block: Block) -> tuple[list[SSAValue], list[bool]] | None:
            counter = block.args[1]
            try:
                outputs, flags = self.subgraph(body, [counter, np.array(True), *block.args[2:]],
                                               [False, False, *unsigned])
            except NodeError:
                return None
            cond_out, new = outputs[0], [self._ssa(v) for v in outputs[1:1 + carried]]
            if not (isinstance(cond_out, np.ndarray) and cond_out.size == 1 and cond_out.all()) or any(
                    n.type != a.type for n, a in zip(new, block.args[2:])):
                return None
            scans = [self._accumulate(block, v, 0, counter, trips) for v in outputs[1 + carried:]]
            return [*new, *scans], flags[1:]

        return self._counted_for(trips, [self._ssa(v) for v in values], fill)

    def _counted_for(self, length: int, inits: list[SSAValue],
                     fill: Callable[[Block], tuple[list[SSAValue], list[bool]] | None]
                     ) -> tuple[list[SSAValue], list[bool]] | None:
        """(results, unsigned flags) of an `scf.for` of `length` steps whose block carries a step counter (a
        0-d i64 tensor, `block.args[1]`), then `inits`, then the accumulators `fill` adds (`_accumulate`).
        `fill(block)` builds the body at `self.b` and gives what it yields after the counter; None from it
        leaves no loop (the caller unrolls)."""
        counter = self.constant(np.zeros((), np.int64))
        block = Block(arg_types=[IndexType(), counter.type, *(v.type for v in inits)])
        outer = self.b
        self.b = Builder(InsertPoint.at_end(block))
        try:
            filled = fill(block)
            if filled is None:
                return None
            yields, flags = filled
            self.b.insert(scf.YieldOp(self.add(block.args[1], self.constant(np.ones((), np.int64))), *yields))
        finally:
            self.b = outer
        accumulators = [self._ssa(np.zeros(a.type.get_shape(), dtype_of(a.type.element_type)))
                        for a in block.args[2 + len(inits):]]
        bounds = [self.ins(arith.ConstantOp.from_int_and_width(v, IndexType())) for v in (0, length, 1)]
        loop = self.b.insert(scf.ForOp(*bounds, [counter, *inits, *accumulators], block))
        return list(loop.results[1:]), flags

    def _accumulate(self, block: Block, value: Value, axis: int, step: SSAValue, length: int) -> SSAValue:
        """A new accumulator argument of `block` ([length] inserted at `axis` of `value`'s shape) with `value`
        written at index `step` of that dimension."""
        v = self._ssa(value)
        shape = list(tensor_of(v).get_shape())
        axis = normalize_axis(axis, len(shape) + 1, "scan output axis")
        full = shape[:axis] + [length] + shape[axis:]
        accumulator = block.insert_arg(TensorType(tensor_of(v).element_type, full), len(block.args))
        zero = self.constant(np.zeros((), np.int64))
        starts = [step if k == axis else zero for k in range(len(full))]
        return self.ins(nns.DynamicUpdateSliceOp(accumulator, self._reshape(v, shape[:axis] + [1] + shape[axis:]),
                                                 starts))

    def _carried_if(self, running: SSAValue, new: Value, old: Value, k: int) -> SSAValue:
        if is_structured(new) or is_structured(old):
            raise NodeError(f"Loop: loop-carried value {k} is a sequence or optional and the body's condition is "
                            "known only at run time (its length would depend on it)")
        new, old = self._ssa(new), self._ssa(old)
        if new.type != old.type:
            raise NodeError(f"Loop: loop-carried value {k} changes from {old.type} to {new.type} under a run-time "
                            "condition")
        return self.ins(nne.SelectOp(running, new, old))

    # ------------------------------------------------------------ Scan

    def op_Scan(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """The body unrolled over the scan inputs' axis (opset 8: per batch element, the scan axis 1)."""
        body, count = attrs["body"], attrs["num_scan_inputs"]
        if self.opset < 9:
            return self._batched_scan(node, attrs)
        states = [self._current(n) for n in node.input[:len(node.input) - count]]
        inputs = [self._current(n) for n in node.input[len(node.input) - count:]]
        if any(is_structured(v) for v in (*states, *inputs)):
            raise NodeError("Scan of a sequence or optional (Scan takes tensors)")
        unsigned = [self.is_unsigned(n) for n in node.input]
        outputs, flags = self._scan_body(body, states, inputs, unsigned, attrs.get("scan_input_axes"),
                                    attrs.get("scan_input_directions"), attrs.get("scan_output_axes"),
                                    attrs.get("scan_output_directions"))
        return self._results(node, outputs, flags)

    def _batched_scan(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        """Scan-8: inputs with a batch dimension first, scanned along dimension 1."""
        body, count = attrs["body"], attrs["num_scan_inputs"]
        names = list(node.input[1:])
        values = [self._current(n) for n in names]
        batch = _shape(values[0])[0]
        if any(_shape(v)[0] != batch for v in values):
            raise NodeError("Scan (opset 8): the inputs' batch dimensions differ")
        length = _shape(values[-1])[1] if count else 0
        if node.input[0]:
            lengths = self.known(node.input[0])
            if (lengths != length).any():
                raise NodeError(f"Scan (opset 8) with sequence_lens {lengths.tolist()} other than the full length "
                                f"{length} is not supported")
        unsigned = [self.is_unsigned(n) for n in names]
        per_batch = []
        for b in range(batch):
            row = [self._element(v, 0, b) for v in values]
            per_batch.append(self._scan_body(body, row[:len(row) - count], row[len(row) - count:], unsigned,
                                        None, attrs.get("directions"), None, None))
        outputs = [self._stacked([p[0][k] for p in per_batch], 0, body.output[k], "Scan output")
                   for k in range(len(body.output))]
        return self._results(node, outputs, per_batch[0][1] if per_batch else [False] * len(outputs))

    def _scan_body(self, body: Any, states: list[Value], inputs: list[Value], unsigned: Sequence[bool],
              in_axes: Sequence[int] | None, in_dirs: Sequence[int] | None, out_axes: Sequence[int] | None,
              out_dirs: Sequence[int] | None) -> tuple[list[Value], list[bool]]:
        count, carried = len(inputs), len(states)
        in_axes = [normalize_axis(a, len(_shape(x)), "scan_input_axes")
                   for a, x in zip(in_axes or [0] * count, inputs)]
        in_dirs = list(in_dirs or [0] * count)
        lengths = {_shape(x)[a] for x, a in zip(inputs, in_axes)}
        if len(lengths) > 1:
            raise NodeError(f"Scan inputs of different lengths {sorted(lengths)} along their scan axes")
        length = lengths.pop() if lengths else 0
        scanned = len(body.output) - carried
        out_axes = list(out_axes or [0] * scanned)
        out_dirs = list(out_dirs or [0] * scanned)
        if length and not all(isinstance(v, np.ndarray) for v in (*states, *inputs)):
            built = self._scan_as_for(body, states, inputs, unsigned, (in_axes, in_dirs, out_axes, out_dirs), length)
            if built is not None:
                return built
        if length > UNROLL_LIMIT:
            raise NodeError(f"Scan of {length} iterations (at most {UNROLL_LIMIT} are unrolled) is not supported")
        scans: list[list[Value]] = [[] for _ in range(scanned)]
        flags = list(unsigned[:carried])
        for t in range(length):
            elements = [self._element(x, a, length - 1 - t if d else t) for x, a, d in zip(inputs, in_axes, in_dirs)]
            outputs, flags = self.subgraph(body, [*states, *elements], unsigned)
            states = outputs[:carried]
            for k, v in enumerate(outputs[carried:]):
                scans[k].append(v)
        stacked = [self._stacked(vs[::-1] if d else vs, a, body.output[carried + k], "Scan output")
                   for k, (vs, a, d) in enumerate(zip(scans, out_axes, out_dirs))]
        if not length:
            flags = [*flags, *(False for _ in range(scanned))]
        return [*states, *stacked], flags

    def _scan_as_for(self, body: Any, states: list[Value], inputs: list[Value], unsigned: Sequence[bool],
                     axes: tuple[list[int], ...], length: int) -> tuple[list[Value], list[bool]] | None:
        """The Scan as one `scf.for` over its `length` steps (`_counted_for`): the body imported once, each
        scan input read at the step (`nn.dynamic_slice`; reversed: at `length - 1 - step`), each scan output
        accumulated at it; None, to unroll instead, when the body does not import with run-time elements or
        a state changes type."""
        in_axes, in_dirs, out_axes, out_dirs = axes
        carried = len(states)
        sources = [self._ssa(x) for x in inputs]

        def fill(block: Block) -> tuple[list[SSAValue], list[bool]] | None:
            counter = block.args[1]
            steps = [counter, self.sub(self.constant(np.array(length - 1, np.int64)), counter)]
            zero = self.constant(np.zeros((), np.int64))
            elements = []
            for x, a, d in zip(sources, in_axes, in_dirs):
                shape = list(tensor_of(x).get_shape())
                piece = self.ins(nns.DynamicSliceOp(x, [steps[d] if k == a else zero for k in range(len(shape))],
                                                    [1 if k == a else n for k, n in enumerate(shape)]))
                elements.append(self._reshape(piece, shape[:a] + shape[a + 1:]))
            try:
                outputs, flags = self.subgraph(body, [*block.args[2:], *elements], unsigned)
            except NodeError:
                return None
            new = [self._ssa(v) for v in outputs[:carried]]
            if any(n.type != a.type for n, a in zip(new, block.args[2:])):
                return None
            scans = [self._accumulate(block, v, a, steps[d], length)
                     for v, a, d in zip(outputs[carried:], out_axes, out_dirs)]
            return [*new, *scans], flags

        return self._counted_for(length, [self._ssa(v) for v in states], fill)

    # ------------------------------------------------------------ slicing and stacking

    def _element(self, x: Value, axis: int, index: int) -> Value:
        """Element `index` of `x` along `axis` (the axis removed)."""
        if isinstance(x, np.ndarray):
            return np.take(x, index, axis=axis)
        shape = list(tensor_of(x).get_shape())
        return self._reshape(self._cut(x, axis, index, index + 1), shape[:axis] + shape[axis + 1:])

    def _stacked(self, values: Sequence[Value], axis: int, declared: Any, what: str) -> Value:
        """`values` stacked along a new `axis` (negative: counted from the end of the result); none: the
        empty tensor of the body output's declared type."""
        if not values:
            return _empty(declared, what)
        shapes = {tuple(_shape(v)) for v in values}
        if len(shapes) > 1:
            raise NodeError(f"{what}: the iterations give shapes {sorted(shapes)}; stacking needs one")
        shape = list(shapes.pop())
        axis = normalize_axis(axis, len(shape) + 1, f"{what} axis")
        if all(isinstance(v, np.ndarray) for v in values):
            return np.stack(values, axis)
        one = shape[:axis] + [1] + shape[axis:]
        parts = [self._reshape(self._ssa(v), one) for v in values]
        return parts[0] if len(parts) == 1 else self.ins(nns.ConcatenateOp(parts, axis))


def _shape(v: Value) -> list[int]:
    return list(v.shape) if isinstance(v, np.ndarray) else list(tensor_of(v).get_shape())


def _empty(declared: Any, what: str) -> np.ndarray:
    """A tensor of no iterations: [0, ...] of the body output's declared static type."""
    from onnx import helper

    t = declared.type.tensor_type
    dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
    if not declared.type.HasField("tensor_type") or None in dims or not t.elem_type:
        raise NodeError(f"{what} '{declared.name}' of no iterations: its declared type is not static")
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type))
    element_type(dtype)
    return np.zeros([0, *dims], dtype)
