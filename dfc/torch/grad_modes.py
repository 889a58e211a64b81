"""What `torch.export` records of autograd but does not apply: grad-mode regions and gradient hooks.

    detach_no_grad_regions(program, lines) the outputs of each `torch.no_grad()` region detached (in place)
    GradientHookSpy(root)              a TorchFunctionMode, around the export, that finds tensor hooks and
                                       computations under `torch.inference_mode()` (`.refusal`)
    module_backward_hook(module, root) a module (or global) backward hook, described

The exported graph inlines a `torch.no_grad()` block as a call of the
higher-order op `wrap_with_set_grad_enabled(False, ...)`, which the
decomposition then inlines as ordinary ops: without the `detach` added here
a gradient would flow through it (but for the regions export records where it lost track of the grad mode:
`detach_no_grad_regions`). A tensor's `register_hook`, a module's
backward hooks and `torch.inference_mode()` leave no trace in the graph at
all, so the gradient dfc computes would silently differ from eager's: capture
refuses each (`UnsupportedOpError`) naming where it is.
"""

from __future__ import annotations

import os
import re
import sys
import sysconfig
import traceback
from typing import Any

import torch
from torch.export import ExportedProgram
from torch.overrides import TorchFunctionMode

__all__ = ["detach_no_grad_regions", "GradientHookSpy", "module_backward_hook"]


def detach_no_grad_regions(program: ExportedProgram, no_grad_lines: set[tuple[str, int]]) -> None:
    """Detach every output of each `wrap_with_set_grad_enabled(False, ...)` call of `program`'s graph that
    ran with gradients off: one of whose ops comes from a line of the user's code the spy saw running with
    gradients disabled (`GradientHookSpy.no_grad_lines`), or whose ops carry no trace at all. Export also
    records such a region where it lost track of the grad mode (after torch's reentrant checkpoint, whose
    autograd.Function restores it unseen: the rest of the program became a region): those are left alone,
    as is the checkpoint's own forward, which its backward recomputes with gradients."""
    graph = program.graph_module.graph
    region = torch.ops.higher_order.wrap_with_set_grad_enabled
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not region or node.args[0] is not False:
            continue
        ops = [n for n in getattr(program.graph_module, node.args[1].target).graph.nodes if n.op == "call_function"]
        traces = [n.meta.get("stack_trace") or "" for n in ops]
        if all(traces) and not any(_user_line(t) in no_grad_lines for t in traces):
            continue
        for item in list(node.users):
            val = item.meta.get("val")
            if not isinstance(val, torch.Tensor) or not val.is_floating_point() and not val.is_complex():
                continue
            with graph.inserting_after(item):
                detached = graph.call_function(torch.ops.aten.detach.default, (item,))
            detached.meta = {**item.meta, "val": val.detach()}
            item.replace_all_uses_with(detached, delete_user_cb=lambda user: user is not detached)
    program.graph_module.recompile()


_CHECKPOINT = os.path.join(os.path.dirname(torch.__file__), "utils", "checkpoint.py")
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


def _user_line(stack_trace: str) -> tuple[str, int] | None:
    """(file, line) of the innermost frame of an exported node's trace outside torch, dfc and the standard
    library, or None."""
    for m in reversed(list(_FRAME.finditer(stack_trace))):
        if not m["file"].startswith(_SKIPPED) and not m["file"].startswith("<"):
            return m["file"], int(m["line"])
    return None


class GradientHookSpy(TorchFunctionMode):
    """Records, while active, each `Tensor.register_hook`/`register_post_accumulate_grad_hook` call and the
    first torch call made under `torch.inference_mode()`, with the user's frame."""

    def __init__(self, root: str):
        super().__init__()
        self.root = root
        self.found: list[str] = []
        self.no_grad_lines: set[tuple[str, int]] = set()
        """The user's lines whose torch calls ran with gradients disabled (outside torch's checkpoint)."""
        self._inference = torch.is_inference_mode_enabled()

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        name = getattr(func, "__name__", "")
        if not torch.is_grad_enabled() and name != "_set_grad_enabled":
            line = _no_grad_line()
            if line is not None:
                self.no_grad_lines.add(line)
        if name in ("register_hook", "register_post_accumulate_grad_hook"):
            self.found.append(f"a gradient hook (Tensor.{name}){_user_frame()}")
        elif not self._inference and torch.is_inference_mode_enabled() and len(self.found) < 8:
            self.found.append(f"a computation under torch.inference_mode(){_user_frame()}")
        return func(*args, **(kwargs or {}))

    def refusal(self) -> str | None:
        """Why the captured gradient would differ from eager's, or None."""
        if not self.found:
            return None
        return (f"{self.root}: {self.found[0]}: the exported graph keeps no trace of it, so dfc's gradients would "
                "differ from eager's (torch.no_grad() or .detach() make a region without gradient)")


def module_backward_hook(module: torch.nn.Module, root: str) -> str | None:
    """Where `module`, a submodule, or every module (the global hooks) has a backward hook, or None."""
    from torch.nn.modules import module as nn_module

    if nn_module._global_backward_hooks or nn_module._global_backward_pre_hooks:
        return f"{root}: a global module backward hook is registered; dfc's compiled backward does not run it"
    for path, sub in module.named_modules():
        if sub._backward_hooks or sub._backward_pre_hooks:
            where = f"{root}.{path}" if path else root
            return (f"{where} ({type(sub).__name__}) has a backward hook (register_full_backward_hook or its "
                    "pre-hook); dfc's compiled backward does not run module hooks")
    return None


_SKIPPED = (os.path.dirname(torch.__file__) + os.sep, os.path.dirname(os.path.dirname(__file__)) + os.sep,
            sysconfig.get_paths()["stdlib"] + os.sep)


def _no_grad_line() -> tuple[str, int] | None:
    """(file, line) of the innermost frame outside torch, dfc and the standard library, or None when there
    is none or torch's checkpoint is on the stack (frames walked, not formatted: this runs for every torch
    call made with gradients off)."""
    user = None
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if name == _CHECKPOINT:
            return None
        if user is None and not name.startswith(_SKIPPED) and not name.startswith("<"):
            user = (name, frame.f_lineno)
        frame = frame.f_back
    return user


def _user_frame() -> str:
    """` at file:line: code` of the innermost frame outside torch, dfc and the standard library."""
    for frame in reversed(traceback.extract_stack()):
        if not frame.filename.startswith(_SKIPPED) and not frame.filename.startswith("<"):
            return f" at {frame.filename}:{frame.lineno}: {frame.line}"
    return ""
