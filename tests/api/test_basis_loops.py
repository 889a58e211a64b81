"""`jacrev` and `jacfwd` of functions whose results and differentiated arguments
are static tensors run one compiled basis loop (`dfc.basis_loops`) per seeded
result or argument, not a call from Python per row: their Jacobians equal
JAX's for several results and both arguments (tests/api/test_forward_transforms.py and
test_transforms_family.py take the loop for the other forms), and the per-row path
(the reference the loop replaced) gives the same numbers."""

import numpy as np
import pytest

import dfc
from dfc import basis_loops
from dfc.transforms import _specialize

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


@pytest.fixture(autouse=True)
def _x64():
    """JAX in float64 for these tests only (a global switch would change other tests' JAX programs)."""
    with jax.enable_x64(True):
        yield

RNG = np.random.default_rng(5)
X, W = RNG.standard_normal(5), RNG.standard_normal((3, 5))


def two_results(x, w):
    return np.tanh(w @ x) * 2.0, np.sum(x * x)


def two_results_jax(x, w):
    return jnp.tanh(w @ x) * 2.0, jnp.sum(x * x)


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_basis_loop_jacobians_equal_jax(transform, argnums=(0, 1)):
    got = getattr(dfc, transform)(two_results, argnums)(X, W)
    want = getattr(jax, transform)(two_results_jax, argnums)(X, W)
    got_leaves, want_leaves = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
    fn = _specialize(two_results.__dfc_jit__, (X, W), {})[0]
    kind = "rev" if transform == "jacrev" else "fwd"
    assert (kind, (0, 1)) in basis_loops._COMPILED[fn], "the Jacobian did not run as a basis loop"


def test_basis_loop_equals_rows_called_from_python(monkeypatch):
    """The loop's Jacobian and the per-row path's (taken when the loop is not) are equal."""
    looped = dfc.jacrev(two_results, (0, 1))(X, W)
    monkeypatch.setattr("dfc.transforms.batchable", lambda types: False)
    rows = dfc.jacrev(two_results, (0, 1))(X, W)
    for a, b in zip(jax.tree_util.tree_leaves(looped), jax.tree_util.tree_leaves(rows)):
        np.testing.assert_array_equal(a, b)
