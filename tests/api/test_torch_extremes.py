"""dfc.torch against eager at the ends of the float range and at NaN: sign(NaN) is 0, a NaN clamp bound gives
NaN, exp2 within a few ulp (libm's pow), asinh/acosh finite up to 1e308 and infinite at inf, with finite
gradients there and asinh'(0) = 1."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import dfc.torch  # noqa: E402

X = [0.0, -0.0, 0.5, -2.0, 30.0, 88.7, 710.0, -745.2, 1e9, -1e9, 1e308, -1e308, np.inf, -np.inf, np.nan]
BOUND = [0.1, np.nan] * 7 + [0.0]


class Extremes(torch.nn.Module):
    def forward(self, x, bound):
        return (torch.sign(x), torch.exp2(x), torch.asinh(x), torch.acosh(x), torch.clamp(x, min=bound),
                torch.clamp(x, max=bound))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_values_match_eager(dtype):
    x, bound = torch.tensor(X, dtype=dtype), torch.tensor(BOUND, dtype=dtype)
    for got, want in zip(dfc.torch.compile(Extremes())(x, bound), Extremes()(x, bound)):
        got, want = got.numpy(), want.numpy()
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        finite = np.isfinite(want)
        np.testing.assert_array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
        assert np.all(np.abs(got[finite] - want[finite]) <= 4 * np.spacing(np.abs(want[finite])))


class Inverse(torch.nn.Module):
    def forward(self, x):
        return (torch.asinh(x) + 3.0 * torch.acosh(x.abs() + 1.5)).sum()


def test_gradients_are_finite_up_to_1e300():
    """Against the derivatives' formulas in float64 (eager's own asinh gradient is 0 at 1e300: x^2 overflows)."""
    values = np.array([0.0, 0.3, -2.0, 1e8, 2.0 ** 28 + 1, -1e9, 1e300])
    x = torch.tensor(values, requires_grad=True)
    dfc.torch.compile(Inverse())(x).backward()
    a = np.abs(values) + 1.5
    want = 1.0 / np.hypot(1.0, values) + 3.0 * np.sign(values) / (np.sqrt(a - 1.0) * np.sqrt(a + 1.0))
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-14, atol=0)


class Ndtr(torch.nn.Module):
    def forward(self, x):
        return torch.special.ndtr(x)


def test_ndtr_keeps_its_lower_tail():
    """special_ndtr is kept from the export (its decomposition 0.5 (1 + erf(x / sqrt 2)) cancels in the lower
    tail): values against mpmath's normal CDF, the gradient against the density, in float64."""
    mpmath = pytest.importorskip("mpmath")
    values = [-30.0, -8.0, -5.0, -3.0, -1.0, 0.0, 2.0, 6.0]
    x = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    y = dfc.torch.compile(Ndtr())(x)
    want = np.array([float(mpmath.ncdf(v)) for v in values])
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-13, atol=0)  # nn.erfc: 6e-14 (mpmath)
    y.sum().backward()
    density = np.exp(-np.square(values) / 2) / np.sqrt(2 * np.pi)
    np.testing.assert_allclose(x.grad.numpy(), density, rtol=1e-13, atol=0)
