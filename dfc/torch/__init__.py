"""PyTorch integration: compile an nn.Module (forward and backward) with dfc.

    import dfc.torch
    fast = dfc.torch.compile(model)              # an nn.Module sharing model's parameters
    loss = F.cross_entropy(fast(x), y); loss.backward()   # gradients from dfc's autodiff
    torch.compile(model, backend="dfc")          # the same through dynamo

Capture is `torch.export` (`capture.py`), the aten -> nn translation is
`aten_ops.py` (the handler tables of `aten_<family>.py`, merged), the
engines and the autograd.Function are `runtime.py`, the module wrapper
`module.py` and the dynamo backend `backend.py`. The rest of
dfc never imports torch; importing this package registers the backend.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dfc.errors import require_extra

torch = require_extra("torch", "torch", "dfc.torch")

from dfc.torch.backend import dfc_backend, register
from dfc.torch.capture import UnsupportedOpError
from dfc.torch.module import CompiledModule, FunctionModule

__all__ = ["compile", "CompiledModule", "UnsupportedOpError", "dfc_backend"]


def compile(module_or_function: torch.nn.Module | Callable[..., Any], example_inputs: tuple | None = None,
            threads: int | None = None) -> CompiledModule:
    """`module_or_function` compiled by dfc, as an nn.Module whose parameters
    are the original ones. With `example_inputs` it is captured and translated
    now (an unsupported op fails here); otherwise on the first call. The
    engines compile on first use (inference, or training for the inputs that
    need gradients). `threads`: of the compiled kernels (default:
    `dfc.torch.module.torch_threads()`: torch's, on torch's OpenMP team)."""
    module = module_or_function if isinstance(module_or_function, torch.nn.Module) else FunctionModule(
        module_or_function)
    return CompiledModule(module, example_inputs, threads=threads)


register()
