"""dfc.torch against eager PyTorch: outputs, every parameter gradient, SGD loss
curves, only the needed gradients, zero-copy crossing, named errors for
unsupported ops, and the `torch.compile` backend.

Each model is compiled once per session (`compiled` fixture); compile time
dominates this file. `DFC_TORCH_STEPS` sets the SGD steps (default 20 in CI; the issue asks for 50:
`DFC_TORCH_STEPS=50 pytest tests/api/test_torch.py`).
"""

from __future__ import annotations

import copy
import inspect
import os
import traceback
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from support.torch_models import MODELS, ResNetSmall, make_mlp  # noqa: E402
from torch import nn  # noqa: E402

import dfc.torch  # noqa: E402
from dfc.torch.runtime import to_numpy  # noqa: E402

TOL = {"rtol": 1e-4, "atol": 1e-5}
STEPS = int(os.environ.get("DFC_TORCH_STEPS", "20"))

_COMPILED: dict[str, tuple] = {}


def compiled(name: str):
    """(eager model, its compiled twin sharing parameters, a deep copy for eager reference, x, y)."""
    if name not in _COMPILED:
        model, x, y = MODELS[name]()
        reference = copy.deepcopy(model)
        _COMPILED[name] = (model, dfc.torch.compile(model, (x,)), reference, x, y)
    return _COMPILED[name]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_outputs_and_gradients_match_eager(name):
    model, fast, reference, x, y = compiled(name)
    model.zero_grad()
    out = fast(x)
    F.cross_entropy(out, y).backward()
    ref = copy.deepcopy(model)
    ref.zero_grad()
    expected = ref(x)
    F.cross_entropy(expected, y).backward()
    torch.testing.assert_close(out, expected, **TOL)
    params = dict(ref.named_parameters())
    for n, p in model.named_parameters():
        assert p.grad is not None, n
        torch.testing.assert_close(p.grad, params[n].grad, **TOL, msg=lambda m, n=n: f"{name} {n}: {m}")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_sgd_loss_curve_matches_eager(name):
    model, fast, reference, x, y = compiled(name)
    ours = _train(fast, list(model.parameters()), x, y)
    theirs = _train(reference, list(reference.parameters()), x, y)
    np.testing.assert_allclose(ours, theirs, rtol=1e-3)
    assert ours[-1] < ours[0]  # it learns


def _train(net, params, x, y):
    # lr 0.02 keeps training out of the chaotic regime: at lr 0.05, LeNet-5 trained in eager
    # from parameters perturbed by 1e-7 (relative) departs by 6 % at step 33, so no two
    # correct implementations with different rounding could agree to 1e-3 there.
    nets = ((net, torch.optim.SGD(params, lr=0.02)),)
    return [_sgd_steps(nets, x, y)[0] for _ in range(STEPS)]


class _FusedAttention(nn.Module):
    """F.scaled_dot_product_attention over 2 heads, then a tanh-approximated GELU."""

    def __init__(self, width=8):
        super().__init__()
        self.qkv = nn.Linear(width, 3 * width)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).reshape(b, s, 3, 2, d // 2).permute(2, 0, 3, 1, 4)
        return F.gelu(F.scaled_dot_product_attention(q, k, v), approximate="tanh")


def test_scaled_dot_product_attention_and_tanh_gelu():
    torch.manual_seed(0)
    model, x = _FusedAttention(), torch.randn(2, 5, 8, requires_grad=True)
    out = dfc.torch.compile(model)(x)
    got = torch.autograd.grad(out.square().sum(), [x, *model.parameters()])
    expected = model(x)
    want = torch.autograd.grad(expected.square().sum(), [x, *model.parameters()])
    torch.testing.assert_close(out, expected, **TOL)
    for g, e in zip(got, want):
        torch.testing.assert_close(g, e, **TOL)


class _WithLoss(nn.Module):
    def __init__(self, model, loss):
        super().__init__()
        self.model, self.loss = model, loss

    def forward(self, x, y):
        out = self.model(x)
        if self.loss == "cross_entropy":
            return F.cross_entropy(out, y)
        if self.loss == "nll_sum":
            return F.nll_loss(F.log_softmax(out, dim=1), y, reduction="sum")
        return F.mse_loss(torch.tanh(out), y)  # y: float targets


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_sum", "mse"])
def test_losses_inside_the_compiled_module(loss):
    model, x, y = make_mlp(batch=6)
    objective = _WithLoss(model, loss)
    if loss == "mse":
        y = F.one_hot(y, 10).float()
    x = x.requires_grad_()
    got = dfc.torch.compile(objective)(x, y)
    gx, *gp = torch.autograd.grad(got, [x, *model.parameters()])
    expected = objective(x, y)
    ex, *ep = torch.autograd.grad(expected, [x, *model.parameters()])
    torch.testing.assert_close(got, expected, **TOL)
    for a, b in zip([gx, *gp], [ex, *ep]):
        torch.testing.assert_close(a, b, **TOL)


def test_function_gradients_flow_to_its_inputs():
    def f(a, b):
        return (torch.sigmoid(a @ b) * a.sum(dim=1, keepdim=True)).mean()

    a, b = torch.randn(3, 4, requires_grad=True), torch.randn(4, 5, requires_grad=True)
    got = torch.autograd.grad(dfc.torch.compile(f)(a, b), [a, b])
    expected = torch.autograd.grad(f(a, b), [a, b])
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, **TOL)


def test_translation_is_library_level_ir():
    model, x, _ = MODELS["lenet"]()
    text = dfc.torch.compile(model, (x,)).compiled_text()[0]
    ops = [line.split(" = ")[1].split()[0] for line in text.splitlines() if " = nn." in line]
    assert ops.count("nn.convolution") == 2 and ops.count("nn.reduce_window") == 2 and ops.count("nn.linear") == 3
    assert "%arg_p_conv1_weight: tensor<6x1x5x5xf32>" in text  # parameters are arguments, by their names


def test_only_needed_gradients_are_built():
    model, x, y = make_mlp()
    first = model.net[0]
    first.weight.requires_grad_(False)
    fast = dfc.torch.compile(model)
    F.cross_entropy(fast(x), y).backward()
    assert first.weight.grad is None and first.bias.grad is not None
    (graph, _), = fast._graphs.values()
    (wrt, step), = graph._steps.items()
    assert len(wrt) == len(step.info.wrt) == 3  # the trainable parameters, not the frozen one nor x
    bwd = next(op for op in step.engine.signatures if op.endswith("_bwd"))
    assert len(step.engine.signatures[bwd].outputs.data) == 3
    reference = copy.deepcopy(model)
    reference.zero_grad()
    F.cross_entropy(reference(x), y).backward()
    torch.testing.assert_close(first.bias.grad, reference.net[0].bias.grad, **TOL)


def test_kernels_run_on_torchs_openmp_team(monkeypatch):
    """By default the kernels' parallel loops and products run on the team of
    the libgomp torch loaded, on torch's thread count, and agree with eager
    (sizes at which the products split into blocks); `DFC_TORCH_OPENMP=0`
    keeps dfc's own pool."""
    from dfc.compiler.codegen import runtime

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 512), nn.Tanh(), nn.Linear(512, 256))
    x = torch.randn(256, 256)
    fast = dfc.torch.compile(model, threads=2)
    assert runtime.install().gomp_parallel.value is not None
    assert runtime.loaded_openmp() is not None and "gomp" in runtime.loaded_openmp()
    assert dfc.torch.compile(model)._threads == torch.get_num_threads()
    fast(x).square().sum().backward()
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).square().sum().backward()
    for g, p in zip(got, model.parameters()):
        torch.testing.assert_close(g, p.grad, **TOL)
    monkeypatch.setenv("DFC_TORCH_OPENMP", "0")
    try:
        dfc.torch.compile(model)
        assert runtime.install().gomp_parallel.value is None
    finally:
        monkeypatch.delenv("DFC_TORCH_OPENMP")
        dfc.torch.module.share_openmp()


def test_inference_builds_no_backward():
    model, x, _ = make_mlp()
    fast = dfc.torch.compile(model)
    with torch.no_grad():
        out = fast(x)
    (graph, _), = fast._graphs.values()
    assert graph._steps == {} and graph._inference is not None
    torch.testing.assert_close(out, model(x), **TOL)


def test_tensors_cross_without_copies_and_parameters_are_shared():
    model, x, y = make_mlp()
    fast = dfc.torch.compile(model)
    assert all(a is b for a, b in zip(fast.parameters(), model.parameters()))
    assert fast.state_dict().keys() == model.state_dict().keys()
    w = model.net[0].weight
    assert to_numpy(w).ctypes.data == w.data_ptr()
    before = [p.detach().clone() for p in model.parameters()]
    F.cross_entropy(fast(x), y).backward()
    for a, b in zip(before, model.parameters()):  # the compiled code never writes its inputs
        assert torch.equal(a, b)


def test_saved_arguments_are_passed_on_not_copied():
    """The weights and input the backward needs are not returned (copied) by
    the forward: the tensors' own arrays go to the backward, and, as in eager
    PyTorch, changing one in place before the backward is an error."""
    model, x, y = make_mlp()
    fast = dfc.torch.compile(model)
    loss = F.cross_entropy(fast(x), y)
    (graph, _), = fast._graphs.values()
    (step,) = graph._steps.values()
    names = [str(target) for _, target in graph.captured.inputs]
    saved = {names[k] for k in step.saved_arguments if k is not None}
    assert saved == {"net.2.weight", "0"}  # W2 for dh, x for dW1 (dx is not built, so W1 is not saved)
    returned = step.engine.signatures["forward_fwd"].outputs.data
    assert len(returned) == graph.n_outputs + step.saved_arguments.count(None)
    with torch.no_grad():
        model.net[2].weight.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    reference = copy.deepcopy(model)
    F.cross_entropy(fast(x), y).backward()
    F.cross_entropy(reference(x), y).backward()
    for a, b in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(a.grad, b.grad, **TOL)


class _Inner(nn.Module):
    def forward(self, x):
        return torch.sin(torch.fft.rfft(x)).real  # sin of a complex tensor has no translation


class _Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(4, 4), _Inner())

    def forward(self, x):
        return self.layers(x)


def test_unsupported_op_names_the_op_and_the_module_path():
    with pytest.raises(dfc.torch.UnsupportedOpError, match=r"aten\.sin\.default in model\.layers\.1 \(_Inner\)"):
        dfc.torch.compile(_Outer(), (torch.randn(2, 4),))


class _NormNet(nn.Module):
    """Batch norm in training mode: 2-D with running statistics, 2-D without
    (`track_running_stats=False`), and 1-D."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6, momentum=0.3), nn.ReLU(),
            nn.Conv2d(6, 8, 3, stride=2), nn.BatchNorm2d(8, track_running_stats=False), nn.ReLU(), nn.Flatten(),
        )
        self.head = nn.Sequential(nn.Linear(8 * 3 * 3, 12), nn.BatchNorm1d(12), nn.ReLU(), nn.Linear(12, 10))

    def forward(self, x):
        return self.head(self.features(x))


def _beside_eager(model: nn.Module):
    """`model` compiled by dfc.torch, an eager copy, and an SGD optimizer (lr 0.1) for each: (fast, reference, nets)."""
    reference = copy.deepcopy(model)
    fast = dfc.torch.compile(model)
    nets = tuple((net, torch.optim.SGD(m.parameters(), lr=0.1)) for net, m in ((fast, model), (reference, reference)))
    return fast, reference, nets


def _sgd_steps(nets, x, y) -> list[float]:
    """One cross-entropy SGD step of each (model, optimizer) in `nets` on (x, y); their losses."""
    losses = []
    for net, opt in nets:
        opt.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _step_matches_eager(nets, models, x, y, *, loss_rtol: float, rtol: float, atol: float) -> tuple[dict, dict]:
    """One SGD step of each of `nets` (`_beside_eager`'s) on (x, y): equal losses,
    and every entry of the state (parameters, running statistics) of `models`
    (the compiled model, eager's copy) equal; their two state dicts."""
    losses = _sgd_steps(nets, x, y)
    assert losses[0] == pytest.approx(losses[1], rel=loss_rtol)
    ours, theirs = (m.state_dict() for m in models)
    for key in ours:
        torch.testing.assert_close(ours[key], theirs[key], rtol=rtol, atol=atol, msg=key)
    return ours, theirs


@pytest.mark.slow  # 11-17 s in CI; test_resnet_training_steps_match_eager checks training-mode batch norm's statistics
def test_training_mode_batch_norm_updates_its_running_statistics():
    """Over SGD steps in training mode: the loss, every gradient, and the running
    mean, variance and batch count after each step equal eager's (float64);
    then in eval mode, where the updated statistics normalise, the outputs."""
    torch.manual_seed(0)
    model = _NormNet().double().train()
    fast, reference, nets = _beside_eager(model)
    for step in range(3):
        x, y = torch.randn(5, 3, 8, 8, dtype=torch.float64), torch.randint(0, 10, (5,))
        ours, theirs = _step_matches_eager(nets, (model, reference), x, y, loss_rtol=1e-12, rtol=1e-12, atol=1e-12)
        assert ours.keys() == theirs.keys() and ours["features.1.num_batches_tracked"] == step + 1
    model.eval(), reference.eval()
    x = torch.randn(5, 3, 8, 8, dtype=torch.float64)
    torch.testing.assert_close(fast(x), reference(x), rtol=1e-12, atol=1e-12)


def test_resnet_training_steps_match_eager():
    """The benchmark's ResNet (3x3 and strided convolutions with more than 16
    features, which run as gathered GEMMs, a strided 1x1 projection, batch
    norm in training mode, residual adds), two SGD steps in float64: loss,
    parameters and running statistics equal eager's."""
    torch.manual_seed(0)
    model = ResNetSmall((18, 20)).double().train()
    fast, reference, nets = _beside_eager(model)
    for _ in range(2):
        x, y = torch.randn(2, 3, 12, 12, dtype=torch.float64), torch.randint(0, 10, (2,))
        _step_matches_eager(nets, (model, reference), x, y, loss_rtol=1e-11, rtol=1e-10, atol=1e-11)


class _Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(8, 8), nn.Linear(8, 4)

    def forward(self, x):
        h = torch.relu(self.a(x))
        if h.sum() > 0:  # data-dependent: export refuses, dynamo breaks the graph here
            h = h * 2
        return self.b(h)


def test_data_dependent_control_flow_is_named_and_the_backend_compiles_around_it():
    model, x = _Branchy(), torch.randn(3, 8)
    with pytest.raises(dfc.torch.UnsupportedOpError, match="control flow depends on tensor values"):
        dfc.torch.compile(model, (x,))
    reference = copy.deepcopy(model)
    torch.compile(model, backend="dfc")(x).sum().backward()
    reference(x).sum().backward()
    for a, b in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(a.grad, b.grad, **TOL)


def test_torch_compile_backend():
    model, x, y = make_mlp()
    reference = copy.deepcopy(model)
    fast = torch.compile(model, backend="dfc")
    F.cross_entropy(fast(x), y).backward()
    F.cross_entropy(reference(x), y).backward()
    for a, b in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(a.grad, b.grad, **TOL)
    x2 = torch.randn(5, 32)  # a second shape: dynamo marks the batch dynamic and passes its size as an int
    torch.testing.assert_close(fast(x2), model(x2), **TOL)


class _Zoo(nn.Module):
    """The aten ops the four models do not reach: embedding, silu, sigmoid, tanh,
    hardtanh, sub/div with broadcasting, sum/mean over dims, bmm, cat, slicing,
    adaptive pooling to 2x2, max pooling with padding, grouped convolution."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(11, 6)
        self.conv = nn.Conv2d(4, 4, 3, padding=1, groups=2, bias=False)
        self.lin = nn.Linear(6, 6, bias=False)

    def forward(self, tokens, img):
        e = self.emb(tokens)  # 2 x 5 x 6
        a = F.silu(self.lin(e)) - torch.sigmoid(e) / 2.0
        b = torch.bmm(a, a.transpose(1, 2)).tanh()  # 2 x 5 x 5
        c = torch.cat([b[:, 1:4], F.hardtanh(b[:, :2] * 3)], dim=1).sum(dim=(1, 2))
        p = F.max_pool2d(self.conv(img), 3, stride=2, padding=1)
        q = F.adaptive_avg_pool2d(p, 2).mean(dim=(1, 2, 3))
        return c + q + e.select(1, 0).mean(dim=1)


def test_aten_op_coverage():
    torch.manual_seed(0)
    model = _Zoo()
    tokens, img = torch.randint(0, 11, (2, 5)), torch.randn(2, 4, 8, 8, requires_grad=True)
    fast = dfc.torch.compile(model)
    got = fast(tokens, img)
    g = torch.autograd.grad(got.sum(), [img, *model.parameters()])
    expected = model(tokens, img)
    e = torch.autograd.grad(expected.sum(), [img, *model.parameters()])
    torch.testing.assert_close(got, expected, **TOL)
    for a, b in zip(g, e):
        torch.testing.assert_close(a, b, **TOL)


@pytest.mark.parametrize("doc", ["docs/torch.md", "README.md"])
def test_the_documented_example_trains(doc):
    """The PyTorch example (docs/torch.md's first, the README's under
    "Training PyTorch models"), run as written (with x and y supplied)."""
    text = (Path(__file__).parents[2] / doc).read_text()
    text = text.split("## Training PyTorch models", 1)[-1]
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    scope = {"x": torch.randn(16, 784), "y": torch.randint(0, 10, (16,))}
    exec(code, scope)
    assert all(p.grad is not None for p in scope["model"].parameters())
    assert scope["loss"].item() > 0


def test_a_refusal_shows_the_users_line_without_dfcs_frames():
    with pytest.raises(dfc.torch.UnsupportedOpError) as info:
        dfc.torch.compile(_Outer(), (torch.randn(2, 4),))
    line = inspect.getsourcelines(_Inner.forward)[1] + 1
    assert f"at {__file__}:{line}\n    return torch.sin(torch.fft.rfft(x)).real" in str(info.value)
    assert not [f for f in traceback.extract_tb(info.tb) if "/dfc/torch/capture.py" in f.filename]


class _Failing(nn.Module):
    def forward(self, x):
        raise ValueError("Cannot view a tensor with shape [2] and strides [1] as a tensor with shape [1, 2]")


def test_an_error_inside_torch_export_is_named_with_a_hint():
    with pytest.raises(dfc.torch.UnsupportedOpError,
                       match=r"torch\.export could not capture _Failing .*ValueError: Cannot view a tensor.*"
                             r"attn_implementation=\"eager\""):
        dfc.torch.compile(_Failing(), (torch.randn(2),))


class _Lookup(nn.Module):
    def forward(self, x):
        return x * {"a": 1}["b"]


def test_any_error_inside_torch_export_is_named_with_the_models_line():
    """Not only torch's RuntimeErrors: a KeyError (here the model's own, as a decomposition's could be)
    is an UnsupportedOpError naming the module, the error and the model's line that raised it."""
    line = inspect.getsourcelines(_Lookup.forward)[1] + 1
    with pytest.raises(dfc.torch.UnsupportedOpError) as info:
        dfc.torch.compile(_Lookup(), (torch.randn(2),))
    assert (f"torch.export could not capture _Lookup (an error of the model, or a limit of torch.export): "
            f"KeyError: 'b' (raised at {__file__}:{line}: return x * {{\"a\": 1}}[\"b\"])") in str(info.value)
