"""`dfc.checkpoint` (issue 37): a helper's calls from jitted code, a `dfc.Function`
and a function to transform, marked for recomputation; the gradients equal
the unmarked ones and JAX's (`jax.checkpoint`, float64)."""

import numpy as np
import pytest

import dfc


def block(h, w):
    return np.tanh(h @ w) * h


checkpointed = dfc.checkpoint(block)
saving_dots = dfc.checkpoint(block, policy="dots_saveable")


@dfc.checkpoint
def decorated(h, w):
    return np.sin(h @ w) + h


def stored_loss(x, w):
    return np.sum(block(block(x, w), w) ** 2)


def checkpointed_loss(x, w):
    return np.sum(checkpointed(checkpointed(x, w), w) ** 2)


def dots_loss(x, w):
    return np.sum(saving_dots(saving_dots(x, w), w) ** 2)


def decorated_loss(x, w):
    return np.sum(decorated(decorated(x, w), w))


RNG = np.random.default_rng(37)
X, W = RNG.standard_normal((5, 4)), RNG.standard_normal((4, 4)) / 2


@pytest.fixture
def jax_x64():
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        yield jax


def close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12 * np.max(np.abs(want)))


@pytest.mark.parametrize("loss, policy", [(checkpointed_loss, "nothing_saveable"), (dots_loss, "dots_saveable")],
                         ids=["nothing", "dots"])
def test_checkpointed_helper_in_jitted_code(jax_x64, loss, policy):
    """The calls carry the mark; the gradients equal the stored helper's and
    jax.grad of jax.checkpoint with the same policy."""
    import jax.numpy as jnp

    f = dfc.jit(loss)
    assert f.mlir(X, W).count(f'{{df.checkpoint = "{policy}"}}') == 2
    gx, gw = dfc.grad(f, (0, 1))(X, W)
    sx, sw = dfc.grad(stored_loss, (0, 1))(X, W)
    close(gx, sx)
    close(gw, sw)

    remat = jax_x64.checkpoint(lambda h, w: jnp.tanh(h @ w) * h,
                               policy=getattr(jax_x64.checkpoint_policies, policy))
    want = jax_x64.grad(lambda x, w: jnp.sum(remat(remat(x, w), w) ** 2), (0, 1))(X, W)
    close(gx, np.asarray(want[0]))
    close(gw, np.asarray(want[1]))
    grad_fn, _, _ = dfc.grad(f, (0, 1)).specialize(X, W)
    names = {op.sym_name.data for op in grad_fn.module.ops}
    assert any(n.startswith("block_grad") for n in names), names  # the backward calls the helper's gradient


def test_decorator_and_the_plain_call():
    np.testing.assert_allclose(decorated(X, W), np.sin(X @ W) + X, rtol=1e-12)
    g = dfc.grad(decorated_loss, 1)(X, W)
    x, w, eps = X, W, 1e-6
    e = np.zeros_like(w)
    e[1, 2] = 1
    fd = (decorated_loss(x, w + eps * e) - decorated_loss(x, w - eps * e)) / (2 * eps)
    np.testing.assert_allclose(g[1, 2], fd, rtol=1e-7)


def test_checkpointed_function_and_transformed_function():
    """grad(checkpoint(f)) and checkpoint(Function): the entry is a marked call; the
    gradient is f's."""
    fn, _, _ = dfc.jit(stored_loss).specialize(X, W)
    marked = dfc.checkpoint(fn)
    assert isinstance(marked, dfc.Function) and 'df.checkpoint = "nothing_saveable"' in marked.mlir()
    assert dfc.checkpoint(fn) is marked  # built once per Function and policy
    want = dfc.grad(fn, 1)(X, W)
    close(dfc.grad(marked, 1)(X, W), want)
    close(dfc.grad(dfc.checkpoint(stored_loss), 1)(X, W), want)
    np.testing.assert_allclose(dfc.checkpoint(stored_loss)(X, W), stored_loss(X, W), rtol=1e-12)


def test_refusals():
    with pytest.raises(ValueError, match="unknown checkpoint policy 'everything_saveable'"):
        dfc.checkpoint(block, policy="everything_saveable")
    marked = dfc.checkpoint(dfc.grad(stored_loss))  # transformable, but not a function jitted code can call

    def calls_a_gradient(x, w):
        return np.sum(marked(x, w))

    with pytest.raises(dfc.FrontendError, match="dfc.checkpoint of Derivative 'grad_stored_loss' cannot be called "
                                                "from a jitted function"):
        dfc.jit(calls_a_gradient)(X, W)
