"""Run a captured program from PyTorch: engines, and the autograd.Function.

A `CompiledGraph` holds the translated module and compiles it lazily:

- for inference (no input needs a gradient), `@forward` alone;
- for training, per set of inputs that need gradients (`wrt`), the module
  after `autodiff{func=forward wrt=... split=true}` without `@forward`:
  `@forward_fwd(args) -> (results, saved)` and
  `@forward_bwd(saved, seeds) -> (gradients of wrt)`.

`DfcFunction` is the `torch.autograd.Function` that calls them: its forward
runs `@forward_fwd` and keeps the saved values (numpy arrays owned by the
engine's runtime) for its backward, which runs `@forward_bwd`. Only the
gradients autograd asks for (`ctx.needs_input_grad`) are built, so frozen
parameters and inputs with `requires_grad=False` cost nothing.

Tensors cross without copies: a contiguous CPU tensor is passed as the numpy
array sharing its memory, and results come back as tensors sharing the
engine's buffers (`torch.from_numpy`).
"""

from __future__ import annotations

import threading

import numpy as np
import torch

from dfc.compiler.engine import ExecutionEngine
from dfc.compiler.parsing import parse_module
from dfc.compiler.pass_manager import PassManager
from dfc.passes.autodiff.autodiff import function_named, split_info
from dfc.torch.capture import Captured


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """The numpy view of a CPU tensor (a copy only when it is not contiguous)."""
    if t.device.type != "cpu":
        raise ValueError(f"dfc.torch runs on the CPU; got a tensor on {t.device}")
    return t.detach().contiguous().numpy()


def to_torch(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.asarray(a))


class TrainingStep:
    """The split forward/backward engine for one `wrt`."""

    def __init__(self, text: str, wrt: tuple[int, ...], threads: int | None):
        module = parse_module(text, "<dfc.torch>")
        options = f"func=forward split=true wrt={','.join(map(str, wrt))}"
        PassManager.parse(f"autodiff{{{options}}}").run(module)
        forward = function_named(module, "forward")  # only @forward_fwd and @forward_bwd are compiled
        assert forward is not None
        module.body.block.erase_op(forward)
        self.info = split_info(module, "forward")
        self.engine = ExecutionEngine(module, threads=threads)
        self.wrt = wrt


class CompiledGraph:
    """One captured program (fixed input shapes) and its engines."""

    def __init__(self, captured: Captured, threads: int | None = None):
        self.captured = captured
        parse_module(captured.text, "<dfc.torch>")  # verified now: a translation bug fails at compile time
        self.threads = threads
        self.n_outputs = len(captured.outputs)
        self._inference: ExecutionEngine | None = None
        self._steps: dict[tuple[int, ...], TrainingStep] = {}
        self._lock = threading.Lock()

    @property
    def text(self) -> str:
        return self.captured.text

    def inference(self) -> ExecutionEngine:
        with self._lock:
            if self._inference is None:
                self._inference = ExecutionEngine(parse_module(self.text, "<dfc.torch>"), threads=self.threads)
            return self._inference

    def step(self, wrt: tuple[int, ...]) -> TrainingStep:
        with self._lock:
            if wrt not in self._steps:
                self._steps[wrt] = TrainingStep(self.text, wrt, self.threads)
            return self._steps[wrt]

    def run(self, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """All outputs, differentiable through the compiler's own backward."""
        if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
            return DfcFunction.apply(self, *tensors)
        outputs = _tuple(self.inference().invoke("forward", *(to_numpy(t) for t in tensors)))
        return tuple(to_torch(o) for o in outputs)


def _tuple(r) -> tuple:
    return r if isinstance(r, tuple) else (r,)


class DfcFunction(torch.autograd.Function):
    """forward: `@forward_fwd`; backward: `@forward_bwd` (for the inputs that need gradients)."""

    @staticmethod
    def forward(ctx, graph: CompiledGraph, *tensors: torch.Tensor):
        arrays = [to_numpy(t) for t in tensors]
        floats = graph.captured.float_inputs
        wrt = tuple(k for k, t in enumerate(tensors) if ctx.needs_input_grad[1 + k] and floats[k])
        ctx.n_inputs = len(tensors)
        ctx.step = step = graph.step(wrt)
        everything = _tuple(step.engine.invoke("forward_fwd", *arrays))
        outputs, ctx.saved = everything[: graph.n_outputs], everything[graph.n_outputs :]
        ctx.out_meta = [(np.shape(o), np.asarray(o).dtype) for o in outputs]
        results = tuple(to_torch(o) for o in outputs)
        ctx.mark_non_differentiable(*(r for r in results if not r.is_floating_point()))
        return results

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *grads: torch.Tensor):
        step: TrainingStep = ctx.step
        seeds = []
        for k in step.info.outputs:
            g = grads[k]
            seeds.append(to_numpy(g) if g is not None else np.zeros(*ctx.out_meta[k]))
        gradients = _tuple(step.engine.invoke("forward_bwd", *ctx.saved, *seeds))
        result: list[torch.Tensor | None] = [None] * (1 + ctx.n_inputs)
        for k, g in zip(step.wrt, gradients):
            result[1 + k] = to_torch(g)
        return tuple(result)
