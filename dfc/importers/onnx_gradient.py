"""The ONNX importer's `Gradient` operator (`ai.onnx.preview.training`) by dfc's reverse-mode autodiff.

`Gradient(xs, zs, y)` outputs dy/dx for each tensor named in `xs`, evaluated at the node's inputs (values
for `xs`, then `zs`). The nodes that compute `y` from `xs`, `zs` and the initializers are imported on
their own as `@main(xs..., zs..., weights...) -> y` (the model's weights as arguments, so that a
gradient of the whole model still reaches them), the `autodiff` pass derives `@main_grad` with the seed
1, and its body is inlined at the node. `y` must be a float with one element (the operator defines no
seed for other shapes); a `y` that depends on a graph input outside `xs` and `zs`, or is computed by an
If, Loop or Scan, or draws random numbers, is refused. A Gradient inside the differentiated nodes
(higher order) is imported the same way, inside."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import AnyFloat, ModuleOp, TensorType
from xdsl.ir import SSAValue

from dfc.compiler.interpreter import dtype_of
from dfc.importers.onnx_common import NodeError, tensor_of


class GradientOps:
    """`op_Gradient`, mixed into `OnnxImporter` (whose `graph`, `model`, `values`, `parameters`, `value`,
    `ins`, `constant`, `is_unsigned` and `formats` it uses)."""

    def _differentiated_nodes(self, y: str, leaves: set[str], initializers: set[str]) -> tuple[list[Any], set[str]]:
        """The graph's nodes that compute `y` from `leaves` and the initializers, in graph order, and the
        initializers they read."""
        producers = {out: node for node in self.graph.node for out in node.output if out}
        needed: dict[int, Any] = {}
        read: set[str] = set()
        todo, seen = [y], set()
        while todo:
            name = todo.pop()
            if name in seen or name in leaves:
                continue
            seen.add(name)
            if name in initializers:
                read.add(name)
            elif name in producers:
                node = producers[name]
                if node.op_type in ("If", "Loop", "Scan"):
                    raise NodeError(f"Gradient of '{y}' through {node.op_type} is not supported")
                needed[id(node)] = node
                todo.extend(n for n in node.input if n)
            else:
                raise NodeError(f"y '{y}' depends on '{name}', which is neither in xs or zs nor computed from them")
        order = [n for n in self.graph.node if id(n) in needed]
        return order, read

    def _value_info(self, name: str, value: SSAValue) -> Any:
        from onnx import helper

        if name in self.formats:
            raise NodeError(f"Gradient input '{name}' of {self.formats[name]} is not supported")
        t = tensor_of(value)
        dtype = np.dtype(dtype_of(t.element_type))
        if self.is_unsigned(name):
            dtype = np.dtype(f"u{dtype.itemsize}")
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(dtype), list(t.get_shape()))

    def op_Gradient(self, node: Any, attrs: dict[str, Any]) -> list[SSAValue]:
        from onnx import helper

        from dfc.compiler.pass_manager import PassManager
        from dfc.passes.autodiff.autodiff import AutodiffPass

        xs, zs = ([_text(n) for n in attrs.get(key) or ()] for key in ("xs", "zs"))
        y = _text(attrs.get("y") or "")
        if not xs or not y or len(node.input) != len(xs) + len(zs):
            raise NodeError(f"Gradient takes one input per name in xs and zs ({len(xs) + len(zs)}), and y")
        given = [self.value(name) for name in node.input]
        for name, v in zip(xs, given):
            if not isinstance(tensor_of(v).element_type, AnyFloat):
                raise NodeError(f"Gradient with respect to '{name}' of {tensor_of(v)} (floats only)")
        initializers = {t.name: t for t in self.graph.initializer}
        nodes, read = self._differentiated_nodes(y, set(xs) | set(zs), set(initializers))
        weights = [name for name, _ in self.parameters if name in read]
        inputs = [self._value_info(name, v) for name, v in zip(xs + zs, given)]
        inputs += [self._value_info(name, self.value(name)) for name in weights]
        graph = helper.make_graph(nodes, f"gradient of {y}", inputs, [helper.make_empty_tensor_value_info(y)],
                                  [initializers[name] for name in sorted(read - set(weights))])
        sub = type(self)(helper.make_model(graph, opset_imports=list(self.model.opset_import)), self.filename, [])
        module = sub.run()
        if sub.key is not None:
            raise NodeError(f"Gradient of '{y}', which draws random numbers, is not supported")
        out = _function(module, "main").function_type.outputs.data[0]
        if not isinstance(out, TensorType) or not isinstance(out.element_type, AnyFloat) or math.prod(
                out.get_shape()) != 1:
            raise NodeError(f"Gradient of y '{y}' of {out} (a float of one element)")
        PassManager(passes=[AutodiffPass(func="main", wrt=tuple(range(len(xs))))]).run(module)
        grad = _function(module, "main_grad")
        mapping: dict[SSAValue, SSAValue] = dict(zip(grad.body.block.args, [
            *given, *(self.value(name) for name in weights),
            self.constant(np.ones(out.get_shape(), dtype_of(out.element_type)))]))
        results: list[SSAValue] = []
        for op in grad.body.block.ops:
            if isinstance(op, func.ReturnOp):
                results = [mapping.get(v, v) for v in op.arguments]
                break
            if isinstance(op, func.CallOp):
                raise NodeError(f"Gradient of '{y}': its derivative calls @{op.callee.string_value()}, "
                                "which cannot be inlined here")
            self.ins(op.clone(value_mapper=mapping))
        return results[1:][:len(node.output)]


def _function(module: ModuleOp, name: str) -> func.FuncOp:
    return next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name)


def _text(name: str | bytes) -> str:
    return name.decode() if isinstance(name, bytes) else name
