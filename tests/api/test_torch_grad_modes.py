"""dfc.torch and autograd's modes: a `torch.no_grad()`/`set_grad_enabled(False)` region stops the
gradient as in eager (an `enable_grad()` inside it does not, nor does a reentrant checkpoint's), a leaf's hook runs; what the exported graph
cannot hold (a tensor's `register_hook`, a module's backward hook, `torch.inference_mode()`) is refused by
name at capture instead of giving a different gradient."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch.utils.checkpoint import checkpoint  # noqa: E402

import dfc.torch  # noqa: E402
from dfc.torch.capture import UnsupportedOpError  # noqa: E402


class Regions(torch.nn.Module):
    def __init__(self, mode: str):
        super().__init__()
        self.mode = mode
        self.w = torch.nn.Parameter(torch.linspace(0.1, 2.0, 5, dtype=torch.float64))
        self.lin = torch.nn.Linear(5, 5, dtype=torch.float64)

    def forward(self, x):
        if self.mode == "no_grad":
            x = checkpoint(torch.sin, self.w * x, use_reentrant=True)  # torch's own no_grad, recomputed
            with torch.no_grad():
                a = self.w * x
                with torch.enable_grad():
                    b = self.w * a  # differentiable again, through w only
            torch.set_grad_enabled(False)
            c = torch.sin(self.w)
            torch.set_grad_enabled(True)
            b = b * c
        elif self.mode == "tensor_hook":
            a = self.w * x
            a.register_hook(lambda g: 2 * g)
            b = a
        else:
            a = self.w * x
            with torch.inference_mode():
                b = 2 * x
        return (a * self.w + b + self.lin(x) ** 2).sum()


def _grads(module, x):
    module.zero_grad()
    out = module(x)
    out.backward()
    return out.detach().clone(), [p.grad.clone() for p in module.parameters()]


def test_a_no_grad_region_stops_the_gradient_as_in_eager():
    eager = Regions("no_grad")
    eager.w.register_hook(lambda g: 3 * g)  # a leaf's hook: torch's engine runs it for both
    x = torch.linspace(-1.0, 1.0, 5, dtype=torch.float64)
    want, want_grads = _grads(eager, x)
    got, got_grads = _grads(dfc.torch.compile(eager), x)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=0)
    for g, w in zip(got_grads, want_grads):
        torch.testing.assert_close(g, w, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("mode, what", [("tensor_hook", r"Tensor.register_hook\) at .*test_torch_grad_modes.py"),
                                        ("inference_mode", r"torch.inference_mode\(\) at .*test_torch_grad_modes")])
def test_what_the_graph_cannot_hold_is_refused_where_it_is(mode, what):
    with pytest.raises(UnsupportedOpError, match=what):
        dfc.torch.compile(Regions(mode))(torch.ones(5, dtype=torch.float64))


def test_a_module_backward_hook_is_refused_by_its_path():
    model = Regions("no_grad")
    model.lin.register_full_backward_hook(lambda module, grad_in, grad_out: None)
    with pytest.raises(UnsupportedOpError, match=r"Regions.lin \(Linear\) has a backward hook"):
        dfc.torch.compile(model)(torch.ones(5, dtype=torch.float64))
