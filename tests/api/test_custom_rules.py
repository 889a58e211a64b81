"""User-defined differentiation rules: `jax.custom_jvp`/`jax.custom_vjp` (StableHLO holds the primal only) and
`torch.autograd.Function` (torch.export keeps its forward only). dfc cannot carry the user's rule, so a gradient
through one is refused at the user's call (file:line) instead of differentiating the primal; the forward still
runs. JAX's own functions with custom rules (relu, softmax, logsumexp) stay differentiated, against `jax.grad`
in float64."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from dfc import CompileError, interpret

jax = pytest.importorskip("jax")
jnp = jax.numpy

from dfc.importers.stablehlo_import import from_jax  # noqa: E402


@jax.custom_vjp
def _ste(x):
    return jnp.round(x)


_ste.defvjp(lambda x: (jnp.round(x), None), lambda _, g: (g * 3.0,))


@jax.custom_jvp
def _sq(x):
    return x * x


@_sq.defjvp
def _sq_jvp(primals, tangents):
    return primals[0] * primals[0], 5.0 * tangents[0]


@jax.custom_jvp
def _sine(x):
    return jnp.sin(x)


_sine.defjvps(lambda t, ans, x: 7.0 * t)  # the rule's wrapper is JAX's: the primal's file decides

_cosine = jax.custom_jvp(jnp.cos)  # JAX's primal, the user's rule
_cosine.defjvp(lambda primals, tangents: (jnp.cos(primals[0]), 9.0 * tangents[0]))


@jax.custom_gradient
def _clipped(x):  # JAX's wrappers for primal and rules around the user's
    return jnp.tanh(x), lambda g: (jnp.clip(g, -0.1, 0.1),)

X = np.linspace(0.1, 2.0, 5)


def _line_of(f, text: str) -> int:
    lines, first = inspect.getsourcelines(f)
    return first + next(k for k, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("rule,primal,what", [
    (_ste, np.round, "jax.custom_vjp rule of `_ste`"), (_sq, np.square, "jax.custom_jvp rule of `_sq`"),
    pytest.param(_sine, np.sin, "jax.custom_jvp rule of `_sine`", marks=pytest.mark.slow),
    (_clipped, np.tanh, "jax.custom_vjp rule of `wrapped_fun`"),
    pytest.param(_cosine, np.cos, "jax.custom_jvp rule of `cos`", marks=pytest.mark.slow)])
def test_a_gradient_through_a_users_jax_rule_is_refused_at_the_call(rule, primal, what):
    """The forward runs (the primal); the gradient is refused at the line calling the rule."""
    def loss(x):
        return jnp.sum(rule(x) * x)  # the call

    with jax.enable_x64(True):
        imported = from_jax(loss, X)
        np.testing.assert_allclose(interpret(imported.module, imported.name, X), np.sum(primal(X) * X), rtol=1e-14)
        with pytest.raises(CompileError, match=f"gradient of @loss through the {what}") as err:
            imported.autodiff_module((0,))
    assert str(err.value).startswith(f"{__file__}:{_line_of(loss, '# the call')}:")


_MATRIX = np.diag(np.arange(1.0, 6.0)) + 0.1


@pytest.mark.slow
@pytest.mark.parametrize("solve,what", [
    (lambda x: jax.scipy.sparse.linalg.cg(lambda v: _MATRIX @ v, x, maxiter=3)[0], "lax.custom_linear_solve"),
    (lambda x: jax.lax.custom_root(lambda y: y**3 - x, jnp.ones_like(x), lambda g, y0: y0 + 0 * g(y0),
                                   lambda g, y: y / 3.0), "lax.custom_root")])
def test_a_gradient_through_an_iterative_solve_is_refused(solve, what):
    """JAX differentiates `lax.custom_linear_solve` (`cg`, `gmres`, `bicgstab`) and `lax.custom_root`
    implicitly, not through the solver's iterations (dfc's gradient of 3 CG steps differed by 70%)."""
    def loss(x):
        return jnp.sum(solve(x) ** 2)

    with jax.enable_x64(True):
        imported = from_jax(loss, X)
        with pytest.raises(CompileError, match=f"gradient of @loss through {what}") as err:
            imported.autodiff_module((0,))
    assert str(err.value).startswith(f"{__file__}:{solve.__code__.co_firstlineno}:")  # the innermost user line


@pytest.mark.slow
def test_jnp_linalg_solve_is_differentiated():
    """`jnp.linalg.solve` is an exact `custom_linear_solve`: its gradient is the primal's, not refused."""
    def loss(x):
        return jnp.sum(jnp.linalg.solve(_MATRIX, x) ** 2)

    with jax.enable_x64(True):
        imported = from_jax(loss, X)
        got = interpret(imported.autodiff_module((0,)), f"{imported.name}_grad", X, np.ones(()))[1]
    inverse = np.linalg.inv(_MATRIX)
    np.testing.assert_allclose(got, 2 * inverse.T @ (inverse @ X), rtol=1e-13, atol=1e-15)


def test_jax_own_rules_are_differentiated():
    """JAX's own custom rules (jax.nn.relu at nonzero points, softmax, logsumexp) are not user rules: the
    primal's derivative is JAX's gradient there (in closed form, float64)."""
    weights = np.linspace(-1.0, 1.5, 6)

    def loss(x):
        return jnp.sum(jax.nn.relu(x) * weights) + jnp.sum(jax.nn.softmax(x * x) * weights) + jax.nn.logsumexp(x)

    x = np.array([-1.3, -0.2, 0.4, 0.9, 1.7, 2.5])
    with jax.enable_x64(True):
        imported = from_jax(loss, x)
        got = interpret(imported.autodiff_module((0,)), f"{imported.name}_grad", x, np.ones(()))[1]
    s = np.exp(x * x) / np.sum(np.exp(x * x))
    want = weights * (x > 0) + 2 * x * s * (weights - s @ weights) + np.exp(x) / np.sum(np.exp(x))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)


def _torch_module(apply):
    torch = pytest.importorskip("torch")

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.linspace(0.1, 2.0, 5, dtype=torch.float64))

        def forward(self, x):
            return (apply(self.w * x) * self.w).sum()  # the call

    return M()


@pytest.fixture
def functions():
    """A straight-through rounding and a gradient reversal whose forward returns its input (no op of its
    own), defined for the test only (a defined Function makes captures without gradients refuse theirs)."""
    torch = pytest.importorskip("torch")
    import gc

    class STE(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return torch.round(x)

        @staticmethod
        def backward(ctx, g):
            return g * 3.0

    class Reversal(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return -g

    yield {"STE": STE, "Reversal": Reversal}
    del STE, Reversal
    gc.collect()


@pytest.mark.parametrize("name", ["STE", pytest.param("Reversal", marks=pytest.mark.slow)])
def test_a_backward_through_a_torch_autograd_function_is_refused_at_the_call(functions, name):
    """torch.export keeps the Function's forward and drops its backward: the compiled forward (gradients
    enabled) equals eager's, its backward is refused at the line applying the Function (found in the
    stack traces of its forward's ops), or, for a forward without ops of its own (found in the autograd
    graph of the capture), at its forward's definition (its first line)."""
    torch = pytest.importorskip("torch")
    import dfc.torch as dt

    module = _torch_module(functions[name].apply)
    x = torch.ones(5, dtype=torch.float64)
    y = dt.compile(module)(x)
    np.testing.assert_allclose(y.detach().numpy(), module(x).detach().numpy(), rtol=1e-15)
    with pytest.raises(CompileError, match=f"through torch.autograd.Function `.*{name}`") as err:
        y.backward()
    assert module.w.grad is None
    line = _line_of(type(module).forward, "# the call") if name == "STE" else (
        functions[name].forward.__code__.co_firstlineno)
    assert str(err.value).startswith(f"{__file__}:{line}:")


@pytest.mark.slow
def test_a_module_captured_without_gradients_refuses_them_while_a_function_is_defined(functions):
    """A capture under torch.no_grad() traces no autograd graph, where a Function without ops of its own
    would show: with a Function defined, a later backward is refused; the forward runs either way."""
    torch = pytest.importorskip("torch")
    import dfc.torch as dt

    module = _torch_module(functions["Reversal"].apply)
    x = torch.ones(5, dtype=torch.float64)
    compiled = dt.compile(module)
    with torch.no_grad():
        np.testing.assert_allclose(compiled(x).numpy(), module(x).detach().numpy(), rtol=1e-15)
    y = compiled(x)
    np.testing.assert_allclose(y.detach().numpy(), module(x).detach().numpy(), rtol=1e-15)
    with pytest.raises(CompileError, match="captured without gradients .* is refused while a torch.autograd"):
        y.backward()


@pytest.mark.slow
@pytest.mark.parametrize("reentrant", [False, True])
def test_torch_checkpoint_is_differentiated_as_eager(reentrant):
    """torch.utils.checkpoint is torch's own (its backward recomputes the same forward): the gradient of
    the forward through it equals eager's."""
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint

    import dfc.torch as dt

    module = _torch_module(lambda v: checkpoint(torch.sin, v, use_reentrant=reentrant))
    x = torch.linspace(-1.0, 1.5, 5, dtype=torch.float64)
    module(x).backward()
    want = module.w.grad.clone()
    module.w.grad = None
    dt.compile(module)(x).backward()
    np.testing.assert_allclose(module.w.grad.numpy(), want.numpy(), rtol=1e-13, atol=1e-15)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="jax.nn.relu's rule gives 0 at exactly 0 (relu6's at 0 and 6); dfc "
                                       "differentiates its primal, maximum(x, 0), whose tie gives 0.5")
def test_jax_relu_at_zero_is_jax_grad():
    def loss(x):
        return jnp.sum(jax.nn.relu(x)) + jnp.sum(jax.nn.relu6(x))

    x = np.array([-1.0, 0.0, 2.0, 6.0])
    with jax.enable_x64(True):
        imported = from_jax(loss, x)
        got = interpret(imported.autodiff_module((0,)), f"{imported.name}_grad", x, np.ones(()))[1]
    np.testing.assert_allclose(got, [0.0, 0.0, 2.0, 1.0], rtol=1e-15)
