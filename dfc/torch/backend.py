"""The `torch.compile` backend "dfc".

Dynamo hands the backend an FX graph of torch-level calls whose inputs are
the user's tensors and the module's parameters (dynamo lifts them as graph
inputs). The backend wraps that graph in a `CompiledModule`, which exports it
to aten on its first call and compiles forward and backward; dynamo's own
guards decide when to call the backend again (new shapes, new code paths).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from dfc.torch.module import CompiledModule


def dfc_backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
    compiled = CompiledModule(gm, name="graph")

    def run(*args: Any) -> Any:
        return compiled(*args)

    return run


def register() -> None:
    """Make `torch.compile(model, backend="dfc")` work (idempotent)."""
    from torch._dynamo import list_backends
    from torch._dynamo.backends.registry import register_backend

    if "dfc" not in list_backends(exclude_tags=()):
        register_backend(name="dfc")(dfc_backend)
