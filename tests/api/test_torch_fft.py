"""dfc.torch's complex tensors (dfc/torch/aten_fft.py) at the edges of what it represents: a
complex output and an op without a complex form are refused by name, never computed as reals."""

import pytest

torch = pytest.importorskip("torch")

import dfc.torch  # noqa: E402
from dfc.torch.capture import UnsupportedOpError  # noqa: E402


class ComplexOut(torch.nn.Module):
    def forward(self, x):
        return torch.fft.rfft(x)


class ComplexExp(torch.nn.Module):
    def forward(self, x):
        return torch.view_as_real(torch.exp(torch.fft.fft(x)))


def test_a_complex_output_is_refused():
    with pytest.raises(UnsupportedOpError, match=r"a complex output .*torch\.view_as_real"):
        dfc.torch.compile(ComplexOut(), [torch.randn(6, dtype=torch.float64)])


def test_an_op_of_complex_tensors_without_a_complex_form_is_refused():
    with pytest.raises(UnsupportedOpError, match=r"(?s)unsupported aten\.exp\.default in .*: of complex tensors"):
        dfc.torch.compile(ComplexExp(), [torch.randn(6, dtype=torch.float64)])
