"""Ops PyTorch's OpInfo sweep found refused (tests/api/opinfo_sweep.py), now translated: values (and gradients
where torch has them) against eager."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from torch.utils import _pytree as pytree  # noqa: E402

import dfc.torch  # noqa: E402


def test_int64_argmax_argmin_are_exact():
    """int64 beyond f64's 2^53 (distinct values that round to one double; ties with the first index kept), by
    the high 32 bits and then the low ones: argmax over all, argmin along a dim with keepdim, max.dim."""
    x = torch.tensor([[5, -3, 2**40 + 1, 2**40, -2**62, 2**40 + 1],
                      [7, 7, -1, 0, -2**63, 2**63 - 1],
                      [3, 2**32, 2**32 - 1, 2**33, 2**32, -5],
                      [2**60 + 1, 2**60, 2**60 + 1, -2**60 - 1, -2**60, -2**60 - 1]], dtype=torch.int64)

    def f(x):
        return torch.argmax(x), torch.argmin(x, 0, keepdim=True), torch.max(x, 1)

    for got, want in zip(pytree.tree_leaves(dfc.torch.compile(f)(x)), pytree.tree_leaves(f(x)), strict=True):
        assert torch.equal(got, want), (got, want)


@pytest.mark.slow
def test_integer_pow_with_a_tensor_exponent_is_torchs():
    """int64 and int32 x ** p: wrapping products, exponents beyond the width (2^40 + 3), negative ones (1, +-1
    by parity, else 0), 0 ** 0 = 1, broadcast."""
    x = torch.tensor([[2, -3, 7, 1, -1, 0, 3, -2], [5, 2, -1, 1, 10, 0, -7, 3]], dtype=torch.int64)
    p = torch.tensor([[3, 5, 40, -4, -3, 0, 63, 64], [27, -2, -6, 100, 19, 5, 21, 2**40 + 3]], dtype=torch.int64)
    for dtype in (torch.int64, torch.int32):
        a, b = x.to(dtype), p.to(dtype)
        for got, want in zip(dfc.torch.compile(lambda a, b: (a ** b, a[0] ** b))(a, b), (a ** b, a[0] ** b)):
            assert torch.equal(got, want), (dtype, got, want)
