"""dfc.torch's complex tensors beyond the transforms (dfc/torch/aten_complex.py): an FNO-style spectral
layer (rfft2, a complex product with complex weights, irfft2) with a complex parameter trains as eager
does; the elementwise forms are compared value by value and gradient by gradient in
test_aten_coverage's hand cases, the refusals in its `refused_forms`. CI checks the capture; the
training comparison (half a minute on the 2-core VM) runs with --slow."""

import pytest

torch = pytest.importorskip("torch")

import dfc.torch  # noqa: E402

F64 = torch.float64


class SpectralConv2d(torch.nn.Module):
    """The Fourier layer of an FNO: the lowest `modes` frequencies of each channel mixed by complex weights."""

    def __init__(self, channels_in: int, channels_out: int, modes: tuple[int, int]):
        super().__init__()
        self.modes = modes
        self.weight = torch.nn.Parameter(torch.randn(channels_in, channels_out, *modes, dtype=torch.complex128) / 4)
        self.skip = torch.nn.Conv2d(channels_in, channels_out, 1, dtype=F64)

    def forward(self, x):
        m1, m2 = self.modes
        spectrum = torch.fft.rfft2(x)
        mixed = torch.einsum("bixy,ioxy->boxy", spectrum[:, :, :m1, :m2], self.weight)
        out = torch.zeros(x.shape[0], self.weight.shape[1], x.shape[2], x.shape[3] // 2 + 1, dtype=mixed.dtype)
        out[:, :, :m1, :m2] = mixed
        return torch.tanh(torch.fft.irfft2(out, s=x.shape[-2:]) + self.skip(x))


def test_spectral_layer_captures_its_complex_weight_packed():
    """CI's check (the capture, verified against torch's types; the compiled comparison runs with --slow): the
    complex weight is the program's (re, im)-packed argument, the product four real contractions."""
    torch.manual_seed(0)
    (text,) = dfc.torch.compile(SpectralConv2d(2, 3, (3, 2)), [torch.randn(2, 2, 6, 6, dtype=F64)]).compiled_text()
    assert "%arg_p_weight: tensor<2x3x3x2x2xf64>" in text
    assert text.count("nn.dot_general") == 4 and text.count("nn.dft") == 4


@pytest.mark.slow
def test_spectral_layer_with_complex_weights_trains_as_eager():
    torch.manual_seed(0)
    model = SpectralConv2d(2, 3, (3, 2))
    reference = SpectralConv2d(2, 3, (3, 2))
    reference.load_state_dict(model.state_dict())
    fast = dfc.torch.compile(model)
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (model, reference)]
    x, target = torch.randn(2, 2, 6, 6, dtype=F64), torch.randn(2, 3, 6, 6, dtype=F64)
    for _ in range(2):
        losses = []
        for module, optimizer in zip((fast, reference), optimizers):
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(module(x), target)
            loss.backward()
            losses.append(loss.detach())
        torch.testing.assert_close(losses[0], losses[1], rtol=1e-12, atol=1e-14)
        assert model.weight.grad.dtype == torch.complex128 and model.weight.grad.abs().max() > 1e-4
        for a, b in zip(model.parameters(), reference.parameters()):
            torch.testing.assert_close(a.grad, b.grad, rtol=1e-10, atol=1e-13)
        for optimizer in optimizers:
            optimizer.step()
