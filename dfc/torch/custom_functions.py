"""Finding the `torch.autograd.Function`s a captured forward applies.

`torch.export` keeps a Function's forward (its ops, inlined) and drops its
`backward`, so dfc's gradient of the program would be the forward's
derivative, not the user's rule (a straight-through estimator, a gradient
reversal). `FunctionWatch` finds them while the module is exported, two ways:

- the exported nodes' stack traces: a frame in the `forward` of a user's
  Function (its call is the frame before it), whatever the grad mode;
- the autograd graph of the traced outputs (a forward hook on the module,
  removed after the export): its `BackwardCFunction` nodes name their
  Function (`_forward_cls`), also one whose forward has no op of its own
  (`return x`), where some input of the capture requires a gradient;
- in a graph `torch.compile` hands the backend, dynamo's
  `autograd_function_apply` calls (named by the stack traces of their
  backward's body).

A user's Function is one whose `forward` is defined outside torch and dfc
(torch's own, as `torch.utils.checkpoint`'s, recompute the same forward).
`refused` is the first found, as "what@file:line:col" (the mark
`dfc.unmodelled_gradient` takes): the program's forward runs, its gradient is
refused there.
"""

from __future__ import annotations

import os
import re
from typing import Any

import torch

_OWN_DIRS = (os.path.dirname(torch.__file__) + os.sep, os.path.dirname(os.path.dirname(__file__)) + os.sep)
"""torch's package and the `dfc` package (whose `DfcFunction`'s backward is dfc's own gradient)."""

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<name>[^\n]+)')


def _subclasses(cls: type) -> list[type]:
    found, pending = [], [cls]
    while pending:
        for sub in pending.pop().__subclasses__():
            found.append(sub)
            pending.append(sub)
    return found


def user_functions() -> dict[tuple[str, str], list[tuple[frozenset[int], type]]]:
    """(file, function name) -> (the lines of its code, the class) for the `forward` and the `backward` of
    each user's Function subclass defined so far."""
    table: dict[tuple[str, str], list[tuple[frozenset[int], type]]] = {}
    for cls in _subclasses(torch.autograd.Function):
        forward = getattr(getattr(cls, "forward", None), "__code__", None)
        if forward is None or forward.co_filename.startswith(_OWN_DIRS):
            continue
        for code in (forward, getattr(getattr(cls, "backward", None), "__code__", None)):
            if code is not None:
                lines = frozenset(line for _, _, line in code.co_lines() if line is not None)
                table.setdefault((code.co_filename, code.co_name), []).append((lines, cls))
    return table


def describe(cls: type) -> str:
    """"torch.autograd.Function `STE` (backward at model.py:7)"."""
    code = getattr(getattr(cls, "backward", None), "__code__", None)
    rule = f" (backward at {code.co_filename}:{code.co_firstlineno})" if code is not None else ""
    return f"torch.autograd.Function `{cls.__qualname__}`{rule}".replace("@", "_")


def _from_stack_trace(trace: str, table: dict) -> tuple[str, str] | None:
    """(what, where) for the innermost frame of `trace` in a user's Function's code, where is the line
    applying it (the innermost frame before it outside torch)."""
    frames = list(_FRAME.finditer(trace))
    for k in range(len(frames) - 1, -1, -1):
        f = frames[k]
        for lines, cls in table.get((f["file"], f["name"].strip()), ()):
            if int(f["line"]) in lines:
                at = next((c for c in reversed(frames[:k]) if not c["file"].startswith(_OWN_DIRS[0])), f)
                return describe(cls), f"{at['file']}:{at['line']}:1"
    return None


def _innermost(trace: str) -> str:
    frames = list(_FRAME.finditer(trace))
    return f"{frames[-1]['file']}:{frames[-1]['line']}:1" if frames else ""


def _dynamo_applies(module: torch.nn.Module, table: dict) -> str | None:
    """The first `autograd_function_apply` call (dynamo's form of a Function it traced) in the graphs of
    `module`, as "what@where": the Function its backward's stack traces name, the call's line."""
    for gm in module.modules():
        for node in getattr(getattr(gm, "graph", None), "nodes", ()) if isinstance(gm, torch.fx.GraphModule) else ():
            if node.op != "call_function" or node.target is not torch.ops.higher_order.autograd_function_apply:
                continue
            what = "a torch.autograd.Function (torch.compile's autograd_function_apply)"
            for body in node.args[:2]:
                sub = getattr(gm, body.target, None) if isinstance(body, torch.fx.Node) else None
                for inner in sub.graph.nodes if isinstance(sub, torch.fx.GraphModule) else ():
                    if found := _from_stack_trace(inner.meta.get("stack_trace") or "", table):
                        what = found[0]
            return f"{what}@{_innermost(node.meta.get('stack_trace') or '')}"
    return None


def _from_autograd_graph(outputs: Any, classes: set[type]) -> type | None:
    """The first user's Function (of `classes`) in the autograd graph behind the tensors in `outputs`."""
    pending = [t.grad_fn for t in torch.utils._pytree.tree_leaves(outputs)
               if isinstance(t, torch.Tensor) and t.grad_fn is not None]
    seen: set[int] = set()
    while pending:
        node = pending.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if getattr(node, "_forward_cls", None) in classes:
            return node._forward_cls
        pending.extend(n for n, _ in node.next_functions)
    return None


class FunctionWatch:
    """`with FunctionWatch(module) as watch: program = export(module, ...)`, then `watch.refused(program)`:
    the first user's Function the forward applies, as "what@file:line:col", or None."""

    def __init__(self, module: torch.nn.Module):
        self.module = module
        self.table = user_functions()
        self.found: type | None = None
        self._handle: Any = None

    def __enter__(self) -> FunctionWatch:
        self.grad_enabled = torch.is_grad_enabled()
        if self.table:  # no user Function is defined: nothing to watch
            classes = {cls for entries in self.table.values() for _, cls in entries}

            def hook(_module: Any, _args: Any, outputs: Any) -> None:
                self.found = self.found or _from_autograd_graph(outputs, classes)

            self._handle = self.module.register_forward_hook(hook)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            self._handle.remove()

    def refused(self, program: Any) -> str | None:
        if (dynamo := _dynamo_applies(self.module, self.table)) is not None:
            return dynamo
        if not self.table:
            return None
        for gm in program.graph_module.modules():
            for node in getattr(getattr(gm, "graph", None), "nodes", ()):
                found = _from_stack_trace(node.meta.get("stack_trace") or "", self.table)
                if found:
                    return "@".join(found)
        if self.found is not None:
            code = self.found.forward.__code__
            return f"{describe(self.found)}@{code.co_filename}:{code.co_firstlineno}:1"
        return None

    def traced(self, placeholder: torch.fx.Node) -> bool:
        """Whether the export traced gradients from `placeholder` (grad mode on, its value requiring one)."""
        val = placeholder.meta.get("val")
        return self.grad_enabled and isinstance(val, torch.Tensor) and val.requires_grad

    def untraced(self) -> str | None:
        """Why a gradient from an input the export traced none from is refused, or None: a user's Function
        whose forward has no op of its own (`return x`) leaves no trace but in the autograd graph."""
        if not self.table or self.found is not None:
            return None
        names = sorted({f"`{cls.__qualname__}`" for entries in self.table.values() for _, cls in entries})
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        return (f"dfc.torch: the gradient of a module captured without gradients (under torch.no_grad(), or from "
                f"inputs that did not require one) is refused while a torch.autograd.Function is defined ({shown}): "
                "the capture could not tell whether the forward applies one, whose backward dfc would ignore; "
                "compile the module anew and call it first with gradients enabled")

