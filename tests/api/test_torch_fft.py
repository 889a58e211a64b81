"""dfc.torch's complex tensors (dfc/torch/aten_fft.py) at the edge of what it represents: a complex
output is refused by name, never returned as reals (an op without a complex form is refused in
test_aten_coverage's `refused_forms`; the transforms are compared with eager torch in its hand cases)."""

import pytest

torch = pytest.importorskip("torch")

import dfc.torch  # noqa: E402
from dfc.torch.capture import UnsupportedOpError  # noqa: E402


class ComplexOut(torch.nn.Module):
    def forward(self, x):
        return torch.fft.rfft(x)


def test_a_complex_output_is_refused():
    with pytest.raises(UnsupportedOpError, match=r"a complex output .*torch\.view_as_real"):
        dfc.torch.compile(ComplexOut(), [torch.randn(6, dtype=torch.float64)])
