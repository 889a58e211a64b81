"""Run a captured program from PyTorch: engines, and the autograd.Function.

A `CompiledGraph` holds the translated module and compiles it lazily:

- for inference (no input needs a gradient), `@forward` alone;
- for training, per set of inputs that need gradients (`wrt`), the module
  after `autodiff{func=forward wrt=... split=true}` without `@forward`:
  `@forward_fwd(args) -> (results, saved)` and
  `@forward_bwd(saved, seeds) -> (gradients of wrt)`.

`DfcFunction` is the `torch.autograd.Function` that calls them (`RefusedGradient` where the capture
marked the gradient refused, `custom_functions.py`: its backward raises): its forward
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
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument

from dfc import config
from dfc.compiler.engine import ExecutionEngine
from dfc.compiler.parsing import parse_module
from dfc.compiler.pass_manager import PassManager
from dfc.dialects.diagnostics import CompileError
from dfc.passes.autodiff.autodiff import AutodiffPass, function_named, split_info
from dfc.passes.autodiff.float_bits import UNMODELLED_GRADIENT, check_unmodelled
from dfc.torch.capture import Captured


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """The numpy view of a CPU tensor (a copy only when it is not contiguous)."""
    if t.device.type != "cpu":
        raise ValueError(f"dfc.torch runs on the CPU; got a tensor on {t.device}")
    return t.detach().contiguous().numpy()


def to_torch(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.asarray(a))


class TrainingStep:
    """The split forward/backward engine for one `wrt`.

    A value the backward needs that is an argument of the forward (a weight,
    the input) is not returned by `@forward_fwd`, which would copy it into a
    new buffer each step: the caller passes the argument's own array on
    (`saved_arguments`), as PyTorch saves the tensor itself."""

    def __init__(self, module: ModuleOp, wrt: tuple[int, ...], threads: int | None, n_outputs: int):
        """`module`: the captured program (changed here). The differentiated
        module is verified with the engine's lowered one, not apart (as the
        engine's passes: `DFC_VERIFY_EACH=1` verifies after autodiff too)."""
        PassManager(passes=[AutodiffPass(func="forward", wrt=tuple(wrt), split=True)],
                    verify_each=config.VERIFY_EACH.value()).run(module)
        forward = function_named(module, "forward")  # only @forward_fwd and @forward_bwd are compiled
        assert forward is not None
        module.body.block.erase_op(forward)
        self.info = split_info(module, "forward")
        self.saved_arguments = _return_arguments_in_place(module, n_outputs)
        """Per saved value: the forward's argument index it is, or None (returned)."""
        self.engine = ExecutionEngine(module, threads=threads)
        self.wrt = wrt

    def saved(self, arguments: list[np.ndarray], returned: tuple) -> list:
        """The backward's saved operands: `@forward_fwd`'s returned values,
        with the forward's own arguments in their places."""
        rest = iter(returned)
        return [next(rest) if k is None else arguments[k] for k in self.saved_arguments]


def _return_arguments_in_place(module: ModuleOp, n_outputs: int) -> list[int | None]:
    """Drop the saved values of `@forward_fwd` that are its arguments from its
    results; per saved value, the argument index or None."""
    fwd = function_named(module, "forward_fwd")
    assert fwd is not None
    ret = fwd.get_return_op()
    assert ret is not None
    block = fwd.body.block
    saved = list(ret.operands[n_outputs:])
    where = [v.index if isinstance(v, BlockArgument) and v.block is block else None for v in saved]
    ret.operands = [*ret.operands[:n_outputs], *(v for v, k in zip(saved, where) if k is None)]
    fwd.update_function_type()
    return where


class CompiledGraph:
    """One captured program (fixed input shapes) and its engines."""

    def __init__(self, captured: Captured, threads: int | None = None):
        self.captured = captured
        self.module = parse_module(captured.text, "<dfc.torch>")  # verified now: a translation bug fails here
        if "stablehlo.custom_call" in captured.text:  # the LAPACK calls of aten_linalg.py, built as JAX's are
            PassManager.parse("convert-stablehlo").run(self.module)
        """The parsed program, which each engine starts from a copy of (parsed once)."""
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
                self._inference = ExecutionEngine(self.module, threads=self.threads)
            return self._inference

    def step(self, wrt: tuple[int, ...]) -> TrainingStep:
        with self._lock:
            if wrt not in self._steps:
                self._steps[wrt] = TrainingStep(self.module.clone(), wrt, self.threads, self.n_outputs)
            return self._steps[wrt]

    def run(self, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """All outputs, differentiable through the compiler's own backward. A complex tensor is passed
        as its `view_as_real` (the program's packed layout), whose gradient autograd turns into the
        complex tensor's."""
        tensors = tuple(torch.view_as_real(t) if t.is_complex() else t for t in tensors)
        if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
            forward = function_named(self.module, "forward")
            if forward is not None and UNMODELLED_GRADIENT in forward.attributes:
                return RefusedGradient.apply(self, None, *tensors)
            untraced = self.captured.untraced
            if untraced and any(t.requires_grad and not seen for t, seen in zip(tensors, self.captured.grad_traced)):
                return RefusedGradient.apply(self, untraced, *tensors)
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
        outputs = everything[: graph.n_outputs]
        ctx.saved = step.saved(arrays, everything[graph.n_outputs :])
        # the saved arguments are the tensors' own memory: autograd's version check
        # then refuses a backward after they were changed in place, as for eager
        ctx.save_for_backward(*(tensors[k] for k in step.saved_arguments if k is not None))
        ctx.out_meta = [(np.shape(o), np.asarray(o).dtype) for o in outputs]
        results = tuple(to_torch(o) for o in outputs)
        updates = len(graph.captured.mutated)  # new buffer values (running statistics) take no gradient
        ctx.mark_non_differentiable(*results[:updates], *(r for r in results if not r.is_floating_point()))
        return results

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *grads: torch.Tensor):
        step: TrainingStep = ctx.step
        _ = ctx.saved_tensors  # raises if a saved argument was modified in place since the forward
        seeds = []
        for k in step.info.outputs:
            g = grads[k]
            seeds.append(to_numpy(g) if g is not None else np.zeros(*ctx.out_meta[k]))
        gradients = _tuple(step.engine.invoke("forward_bwd", *ctx.saved, *seeds))
        result: list[torch.Tensor | None] = [None] * (1 + ctx.n_inputs)
        for k, g in zip(step.wrt, gradients):
            result[1 + k] = to_torch(g)
        return tuple(result)


class RefusedGradient(torch.autograd.Function):
    """forward: `@forward` (the inference engine); backward: a `CompileError`, `reason` or that of the
    module's `dfc.unmodelled_gradient` mark (a user's autograd.Function, whose backward the export dropped),
    so a forward with gradients enabled runs and only a backward through it is refused."""

    @staticmethod
    def forward(ctx, graph: CompiledGraph, reason: str | None, *tensors: torch.Tensor):
        ctx.graph, ctx.reason = graph, reason
        outputs = _tuple(graph.inference().invoke("forward", *(to_numpy(t) for t in tensors)))
        return tuple(to_torch(o) for o in outputs)

    @staticmethod
    def backward(ctx, *grads: torch.Tensor):
        if ctx.reason:
            raise CompileError(ctx.reason)
        forward = function_named(ctx.graph.module, "forward")
        assert forward is not None
        check_unmodelled(forward)
        raise AssertionError("a refused gradient without its mark")
