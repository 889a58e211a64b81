"""`view-dataflow`: Graphviz of the maps, memlets and tasklets of each function.

    opt-tool f.mlir --expand-library --fuse '--view-dataflow{output="f.dot"}'
    dot -Tsvg f.dot -o f.svg

Like MLIR's `-view-op-graph`, the pass leaves the IR unchanged and writes a
DOT graph (to stderr by default, or to `output`). Each function is a cluster;
its arguments are ellipses; a `df.map` is a cluster labelled with its
iteration space, holding its tasklets (boxes listing their scalar ops; a
dashed `copy` box where a read is written as it is) and nested maps; each memlet is an edge labelled with its indices (`X[i, j]` for
a read, `[i] wcr(add)` for a write) into or out of a tasklet; a map's outputs
are ellipses (its results before bufferize, the buffers it updates after),
fed by their initial value (dashed). Library ops (`nn.*`) and other ops are
boxes with their operands' edges; index arithmetic appears only in the
memlet labels. `func=NAME` draws one function.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass

from dfc.dialects.df import MapOp, ReadOp, TaskletOp, WriteOp, YieldOp
from dfc.dialects.diagnostics import CompileError

_INFIX = {arith.AddiOp: "+", arith.SubiOp: "-", arith.MuliOp: "*", arith.FloorDivSIOp: "//", arith.RemSIOp: "%"}


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _name(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else "%" + ("arg" if isinstance(value, BlockArgument) else "v")


def index_text(value: SSAValue, names: dict[SSAValue, str]) -> str:
    """An index expression as text: `i`, `i+1`, `2*j` (names without `%`;
    `names` for map variables that have none in the IR)."""
    if isinstance(value, OpResult):
        op = value.op
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            return str(op.value.value.data)
        if type(op) in _INFIX:
            lhs, rhs = (index_text(v, names) for v in op.operands)
            return f"{lhs}{_INFIX[type(op)]}{rhs}"
        if isinstance(op, arith.IndexCastOp):
            return index_text(op.input, names)
    return value.name_hint or names.get(value, "?")


@dataclass
class _Graph:
    lines: list[str] = field(default_factory=list)
    nodes: dict[SSAValue, str] = field(default_factory=dict)
    memlets: dict[SSAValue, tuple[str, str]] = field(default_factory=dict)
    edges: list[str] = field(default_factory=list)
    """Written after every cluster: an edge inside a cluster would pull its ends into it."""
    variables: dict[SSAValue, str] = field(default_factory=dict)
    """Names for map variables unnamed in the IR: d0, d1, ... in order of appearance."""
    count: int = 0

    def node(self, label: str, shape: str = "box", **attrs: str) -> str:
        self.count += 1
        name = f"n{self.count}"
        extra = "".join(f", {k}={v}" for k, v in attrs.items())
        self.lines.append(f"{name} [label={_quote(label)}, shape={shape}{extra}];")
        return name

    def edge(self, src: str, dst: str, label: str | None = None, style: str | None = None) -> None:
        attrs = [f"label={_quote(label)}"] if label else []
        attrs += [f"style={style}"] if style else []
        self.edges.append(f"{src} -> {dst}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")

    def indices(self, values: Sequence[SSAValue]) -> str:
        return ", ".join(index_text(v, self.variables) for v in values)

    def source(self, value: SSAValue) -> tuple[str, str | None] | None:
        """The node a value comes from, and the memlet label when it is a read."""
        if value in self.memlets:
            return self.memlets[value]
        if value in self.nodes:
            return self.nodes[value], None
        return None

    def use(self, value: SSAValue, dst: str, style: str | None = None) -> None:
        if (found := self.source(value)) is not None:
            self.edge(found[0], dst, found[1], style)

    def cluster(self, label: str) -> None:
        self.count += 1
        self.lines.append(f"subgraph cluster_{self.count} {{")
        self.lines.append(f"label={_quote(label)};")


def _block(graph: _Graph, block: Block) -> None:
    for op in block.ops:
        if isinstance(op, MapOp):
            _map(graph, op)
        elif isinstance(op, ReadOp):
            indices = graph.indices(op.indices)
            found = graph.source(op.source)
            if found is not None:
                graph.memlets[op.res] = (found[0], f"{_name(op.source)[1:]}[{indices}]")
        elif isinstance(op, TaskletOp):
            body = [o.name.split(".", 1)[1] for o in op.body.block.ops if not isinstance(o, YieldOp)]
            node = graph.node("tasklet\n" + (", ".join(body) or "copy"))
            for value in op.inputs:
                graph.use(value, node)
            for r in op.res:
                graph.nodes[r] = node
        elif isinstance(op, WriteOp):
            dest = graph.nodes.get(op.dest)
            if op.value in graph.memlets:  # a read written as it is: a copy inside the map
                copy = graph.node("copy", "box", style="dashed")
                graph.use(op.value, copy)
                graph.nodes[op.value] = copy
                del graph.memlets[op.value]
            found = graph.source(op.value)
            if dest is not None and found is not None:
                wcr = f" wcr({op.wcr_kind})" if op.wcr_kind else ""
                graph.edge(found[0], dest, f"[{graph.indices(op.indices)}]{wcr}")
        elif op.name in ("df.yield", "scf.yield") or _is_index_math(op):
            continue
        else:
            _generic(graph, op)


def _is_index_math(op: Operation) -> bool:
    return bool(op.results) and all(isinstance(r.type, IndexType) for r in op.results)


def _map(graph: _Graph, op: MapOp) -> None:
    outs = []
    for k, init in enumerate(op.outs):
        if op.res:
            result = op.res[k]
            node = graph.node(f"{_name(result)}: {result.type}", "ellipse")
            graph.use(init, node, "dashed")
            graph.nodes[result] = node
        else:  # buffer form: the map updates the buffer in place
            node = graph.nodes.get(init) or graph.node(f"{_name(init)}: {init.type}", "ellipse")
        graph.nodes[op.out_args[k]] = node
        outs.append(node)
    outer = len(graph.variables)
    for k, v in enumerate(op.ivs):
        graph.variables.setdefault(v, f"d{outer + k}")
    space = graph.indices(op.ivs)
    bounds = ", ".join(str(b) if isinstance(b, int) else _name(b) for b in op.bounds)
    graph.cluster(f"df.map ({space}) in ({bounds})")
    _block(graph, op.body.block)
    graph.lines.append("}")


def _generic(graph: _Graph, op: Operation) -> None:
    label = "return" if isinstance(op, ReturnOp) else op.name
    node = graph.node(label, "box", style="rounded")
    for value in op.operands:
        graph.use(value, node)
    for r in op.results:
        graph.nodes[r] = node
    for region in op.regions:
        for block in region.blocks:
            _block(graph, block)


def dataflow_dot(module: ModuleOp, function: str = "") -> str:
    """The DOT text of `module`'s functions (or of `@function` alone)."""
    graph = _Graph()
    functions = [op for op in module.ops if isinstance(op, FuncOp) and not op.is_declaration]
    if function:
        functions = [f for f in functions if f.sym_name.data == function]
        if not functions:
            raise CompileError(f"view-dataflow: no function @{function}")
    for f in functions:
        graph.cluster(f"@{f.sym_name.data}")
        for arg in f.body.block.args:
            graph.nodes[arg] = graph.node(f"{_name(arg)}: {arg.type}", "ellipse", style="bold")
        _block(graph, f.body.block)
        graph.lines.append("}")
    body = "\n".join("  " + line for line in [*graph.lines, *graph.edges])
    return f"digraph dataflow {{\n  compound=true;\n  node [fontname=monospace];\n{body}\n}}\n"


@dataclass(frozen=True)
class ViewDataflowPass(ModulePass):
    """Write the Graphviz dataflow graph of the module (see module docstring)."""

    name = "view-dataflow"

    func: str = ""
    output: str = "-"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        text = dataflow_dot(op, self.func)
        if self.output == "-":
            sys.stderr.write(text)
            return
        try:
            with open(self.output, "w") as f:
                f.write(text)
        except OSError as err:
            raise CompileError(f"view-dataflow: cannot write '{self.output}': {err.strerror}") from None
