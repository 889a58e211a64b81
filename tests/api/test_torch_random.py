"""dfc.torch's random numbers (dfc/torch/aten_random.py): dropout in training mode (the mask of
the forward is the backward's), the seed policy (torch.manual_seed reproduces, each call
draws anew) and the distributions of rand/randn/bernoulli/randint/uniform_/normal_."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import dfc.torch  # noqa: E402


class Dropout(torch.nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        y, mask = torch.ops.aten.native_dropout(x, self.p, True)
        return y, mask


def test_dropout_forward_and_gradient_use_one_mask():
    x = torch.randn(40, 50, dtype=torch.float64, requires_grad=True)
    y, mask = dfc.torch.compile(Dropout(0.3))(x)
    keep = mask.numpy()
    np.testing.assert_allclose(y.detach().numpy(), np.where(keep, x.detach().numpy() / 0.7, 0.0), rtol=1e-15, atol=0)
    assert abs(keep.mean() - 0.7) < 4 * math.sqrt(0.21 / keep.size)
    seed = torch.randn(40, 50, dtype=torch.float64)
    (grad,) = torch.autograd.grad(y, x, seed)
    np.testing.assert_allclose(grad.numpy(), np.where(keep, seed.numpy() / 0.7, 0.0), rtol=1e-15, atol=0)


@pytest.mark.parametrize("p,train", [(0.0, True), (0.5, False), (1.0, True)])
def test_dropout_edges(p, train):
    x = torch.randn(6, 7, requires_grad=True)
    model = torch.nn.Dropout(p).train(train)
    y = dfc.torch.compile(model)(x)
    np.testing.assert_array_equal(y.detach().numpy(), np.zeros((6, 7)) if p == 1 else x.detach().numpy())
    (grad,) = torch.autograd.grad(y.sum(), x)
    np.testing.assert_array_equal(grad.numpy(), np.zeros((6, 7)) if p == 1 else np.ones((6, 7)))


def test_seed_policy():
    """torch.manual_seed reproduces a run; two calls draw two masks."""
    model = dfc.torch.compile(torch.nn.Dropout(0.5).train())
    x = torch.ones(64, 64)
    torch.manual_seed(3)
    a, b = model(x), model(x)
    torch.manual_seed(3)
    a2 = model(x)
    np.testing.assert_array_equal(a.numpy(), a2.numpy())
    assert np.mean(a.numpy() == b.numpy()) < 0.75  # independent masks agree on half the elements


class Draws(torch.nn.Module):
    def forward(self, x):
        return (torch.rand(200, 100, dtype=x.dtype), torch.randn_like(x), torch.bernoulli(x, 0.25),
                torch.randint(3, 10, (200, 100)), torch.empty_like(x).uniform_(-1, 2),
                torch.empty_like(x).normal_(1, 2))


def test_distributions():
    x = torch.zeros(200, 100, dtype=torch.float64)
    u, z, bern, ints, wide, normal = (t.numpy() for t in dfc.torch.compile(Draws())(x))
    n = u.size
    assert u.dtype == np.float64 and ints.dtype == np.int64
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 4 * math.sqrt(1 / 12 / n)
    assert abs(z.mean()) < 4 / math.sqrt(n) and abs(z.var() - 1) < 4 * math.sqrt(2 / n)
    assert set(np.unique(bern)) == {0.0, 1.0} and abs(bern.mean() - 0.25) < 4 * math.sqrt(0.1875 / n)
    counts = np.bincount(ints.ravel() - 3, minlength=7)
    assert ints.min() == 3 and ints.max() == 9
    assert ((counts - n / 7) ** 2 / (n / 7)).sum() < 22.5  # chi-square, 6 degrees of freedom, 0.999
    assert -1 <= wide.min() and wide.max() < 2 and abs(wide.mean() - 0.5) < 4 * math.sqrt(0.75 / n)
    assert abs(normal.mean() - 1) < 4 * 2 / math.sqrt(n) and abs(normal.std() - 2) < 0.05
    assert np.mean(u == wide) == 0  # each draw has a stream of its own


def test_a_model_with_dropout_trains_and_is_reproducible():
    def run():
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Dropout(0.1),
                                    torch.nn.Linear(32, 1))
        compiled = dfc.torch.compile(model)
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        x = torch.randn(64, 8)
        target = x[:, :1] * 2 - x[:, 1:2]
        losses = []
        for _ in range(15):
            loss = torch.nn.functional.mse_loss(compiled(x), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses

    first, second = run(), run()
    assert first == second
    assert first[-1] < 0.7 * first[0]


def test_randperm_is_a_uniform_permutation():
    n = 5000
    compiled = dfc.torch.compile(lambda x: x + torch.randperm(n))
    zero = torch.zeros(n, dtype=torch.int64)
    p, q = compiled(zero).numpy(), compiled(zero).numpy()
    np.testing.assert_array_equal(np.sort(p), np.arange(n))
    assert not np.array_equal(p, q)
    rank_correlation = np.corrcoef(np.arange(n), p)[0, 1]
    assert abs(rank_correlation) < 4 / math.sqrt(n)


@pytest.mark.slow
def test_attention_dropout_drops_weights_with_one_mask():
    """scaled_dot_product_attention with dropout_p (applied by torch whether training or not): with q = 0 every
    weight is 1/S, and v = I makes the output the weights themselves, so it shows the mask; the gradient to v
    (weights^T seed) uses the same one."""
    p, length, keys = 0.3, 40, 50
    q, k = torch.zeros(length, 4, dtype=torch.float64), torch.randn(keys, 4, dtype=torch.float64)
    v = torch.eye(keys, dtype=torch.float64, requires_grad=True)
    y = dfc.torch.compile(lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=p))(
        q, k, v)
    weights = y.detach().numpy()
    keep = weights != 0
    np.testing.assert_allclose(weights, np.where(keep, 1 / (keys * (1 - p)), 0.0), rtol=1e-15, atol=0)
    assert abs(keep.mean() - (1 - p)) < 4 * math.sqrt(p * (1 - p) / keep.size)
    seed = torch.randn(length, keys, dtype=torch.float64)
    (grad,) = torch.autograd.grad(y, v, seed)
    np.testing.assert_allclose(grad.numpy(), weights.T @ seed.numpy(), rtol=1e-13, atol=1e-15)
