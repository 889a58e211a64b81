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

X = np.linspace(0.1, 2.0, 5)


def _line_of(f, text: str) -> int:
    lines, first = inspect.getsourcelines(f)
    return first + next(k for k, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("rule,primal,what", [(_ste, np.round, "jax.custom_vjp rule of `_ste`"),
                                              (_sq, np.square, "jax.custom_jvp rule of `_sq`"),
                                              (_sine, np.sin, "jax.custom_jvp rule of `_sine`"),
                                              (_cosine, np.cos, "jax.custom_jvp rule of `cos`")])
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
