"""`CompiledModule`: an nn.Module that runs its wrapped module through dfc.

The wrapped module is registered as the submodule `module`, so `parameters()`
are the original tensors (optimizers, `DistributedDataParallel` and gradient
clipping see the same objects) and `state_dict`/`load_state_dict` are the
original module's, without a prefix. Each call captures the module once per
input signature (shapes, dtypes, the structure of the arguments and
`training`), then passes the module's live parameters and buffers with the
user's tensors to the compiled program.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import torch
from torch.export.graph_signature import InputKind
from torch.utils import _pytree as pytree

from dfc import config
from dfc.compiler.codegen import runtime
from dfc.torch.capture import RNG_KEY, UnsupportedOpError, capture
from dfc.torch.runtime import CompiledGraph


class FunctionModule(torch.nn.Module):
    """A plain function as a module without parameters (what `torch.export` takes)."""

    def __init__(self, fn: Callable[..., Any]):
        super().__init__()
        self.fn = fn

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)


def _signature(leaf: Any) -> Any:
    """What a capture depends on: a tensor's shape and dtype, a number's value (export specialises it)."""
    if isinstance(leaf, torch.Tensor):
        return ("tensor", tuple(leaf.shape), leaf.dtype)
    if isinstance(leaf, int | float | bool):
        return (type(leaf), leaf)
    raise TypeError(f"dfc.torch.compile: inputs must be tensors or numbers, got {type(leaf).__name__}")


def share_openmp() -> bool:
    """Run the compiled kernels' parallel loops on the OpenMP runtime torch
    loaded (`runtime.use_openmp`), so that one pool owns the cores; False when
    there is none, or `DFC_TORCH_OPENMP=0` asks for dfc's own pool."""
    library = runtime.loaded_openmp() if config.TORCH_OPENMP.value() else None
    runtime.use_openmp(library)
    return library is not None


def torch_threads() -> int | None:
    """Threads of the compiled kernels unless `threads` says otherwise: as many
    as torch's operators use (`torch.get_num_threads()`) when they share
    torch's OpenMP team (`share_openmp`). On dfc's own pool: all cores (None)
    when `OMP_WAIT_POLICY=PASSIVE`, else 1, because two pools of spinning
    threads on the same cores take the cores from each other while they spin
    and slow each other down. docs/torch.md ("Speed") and
    docs/performance-notes.md have the measurements."""
    if share_openmp():
        return torch.get_num_threads()
    return None if os.environ.get("OMP_WAIT_POLICY", "").strip().upper() == "PASSIVE" else 1


def random_key() -> torch.Tensor:
    """A new key for a program's random draws: two 32-bit words drawn from torch's default generator,
    so `torch.manual_seed` reproduces a run and each call draws other numbers (docs/random.md)."""
    return torch.randint(-2**31, 2**31, (2,), dtype=torch.int32)


class CompiledModule(torch.nn.Module):
    """The module (or function), its forward and backward compiled by dfc."""

    def __init__(self, module: torch.nn.Module, example_inputs: tuple | None = None, threads: int | None = None,
                 name: str = "model"):
        super().__init__()
        self.module = module
        self._name = name
        self._threads = torch_threads()
        if threads is not None:
            self._threads = threads
        self._graphs: dict[Any, tuple[CompiledGraph, list[Callable[[list], torch.Tensor]]]] = {}
        self._quick: dict[Any, tuple[CompiledGraph, list[Callable[[list], torch.Tensor]]]] = {}
        if example_inputs is not None:
            self._graph_for(tuple(example_inputs), {})

    def state_dict(self, *args: Any, **kwargs: Any) -> dict:
        return self.module.state_dict(*args, **kwargs)

    def load_state_dict(self, *args: Any, **kwargs: Any) -> Any:
        return self.module.load_state_dict(*args, **kwargs)

    def _graph_for(self, args: tuple, kwargs: dict) -> tuple[CompiledGraph, list, list]:
        """The graph, its getters and the argument leaves for this call.
        Positional tensors alone (the usual call) skip the pytree flattening."""
        if not kwargs and all(type(a) is torch.Tensor for a in args):
            quick = (len(args), tuple((a.shape, a.dtype) for a in args), self.module.training)
            if (hit := self._quick.get(quick)) is not None:
                return *hit, list(args)
        else:
            quick = None
        leaves, spec = pytree.tree_flatten((args, kwargs))
        key = (spec, tuple(_signature(x) for x in leaves), self.module.training)
        if key not in self._graphs:
            try:
                captured = capture(self.module, args, kwargs, root=self._name)
            except UnsupportedOpError as err:
                if config.TRACEBACK.value():
                    raise
                raise err.with_traceback(None) from None  # the message names the op and the user's line
            self._graphs[key] = (CompiledGraph(captured, self._threads), self._getters(captured))
        if quick is not None:
            self._quick[quick] = self._graphs[key]
        return *self._graphs[key], leaves

    def _getters(self, captured) -> list[Callable[[list], torch.Tensor]]:
        """Per function argument: how to fetch it from the module or the user's inputs."""
        getters = []
        for kind, target in captured.inputs:
            if kind in (InputKind.PARAMETER, InputKind.BUFFER):
                # the owner's table, looked up per call: a reassigned parameter is seen
                path, _, name = target.rpartition(".")
                owner = self.module.get_submodule(path)
                table = owner._parameters if kind == InputKind.PARAMETER else owner._buffers
                getters.append(lambda leaves, table=table, name=name: table[name])
            elif kind == InputKind.CONSTANT_TENSOR:
                getters.append(lambda leaves, c=captured.constants[target]: c)
            elif kind == InputKind.USER_INPUT:
                getters.append(lambda leaves, k=target: leaves[k])
            elif kind == RNG_KEY:
                getters.append(lambda leaves: random_key())
            else:
                raise NotImplementedError(f"dfc.torch: exported input of kind {kind.name}")
        return getters

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        graph, getters, leaves = self._graph_for(args, kwargs)
        outputs = graph.run(*(get(leaves) for get in getters))
        updates = len(graph.captured.mutated)
        if updates:
            with torch.no_grad():  # as the module itself updates its running statistics
                for target, value in zip(graph.captured.mutated, outputs):
                    self.module.get_buffer(target).copy_(value)
        return pytree.tree_unflatten(list(outputs[updates:]), graph.captured.out_spec)

    def compiled_text(self) -> list[str]:
        """The nn-level IR of every captured signature (for reading, and for opt-tool)."""
        return [graph.text for graph, _ in self._graphs.values()]
