"""JAX programs imported through StableHLO (`dfc.from_jax`): the forward result
equals JAX's, and the gradient from dfc's own `autodiff` equals `jax.grad`.

The gradients run on the interpreter (the semantics) except for the MLP,
which goes through `dfc.value_and_grad` and the engine; `DFC_IMPORT_ENGINE=1`
runs every program on the engine (about 40 s more)."""

import os

import numpy as np
import pytest
from support.jax_programs import programs

import dfc
from dfc import CompileError, interpret
from dfc.importers.stablehlo_import import from_jax

jax = pytest.importorskip("jax")

DIFFERENTIABLE = ["mlp", "softmax_xent", "attention", "convnet", "jacobi2d", "lstm", "branch_argmax", "library"]
ON_ENGINE = set(DIFFERENTIABLE) if os.environ.get("DFC_IMPORT_ENGINE") else {"mlp"}


def _as_tuple(value):
    return value if isinstance(value, tuple) else (value,)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_forward_and_gradient_equal_jax(name):
    f, args = programs()[name]
    imported = from_jax(f, *args)
    want = _as_tuple(jax.jit(f)(*args))
    floats = tuple(k for k, a in enumerate(args) if a.dtype.kind == "f")
    jax_grads = jax.jit(jax.grad(lambda *a: _as_tuple(f(*a))[0], argnums=floats))(*args)
    if name in ON_ENGINE and len(want) == 1:
        value, grads = dfc.value_and_grad(imported, argnums=floats)(*args)
        got = (value,)
    else:
        module = imported.autodiff_module(floats)
        out = interpret(module, f"{imported.name}_grad", *imported.arguments(*args), np.array(1.0, np.float32))
        got, grads = out[: len(want)], out[len(want):]
    for value, expected in zip(got, want):
        np.testing.assert_allclose(value, np.asarray(expected), rtol=1e-5, atol=1e-5)
    assert len(grads) == len(floats)
    for g, expected in zip(grads, jax_grads):
        np.testing.assert_allclose(g, np.asarray(expected), rtol=1e-4, atol=1e-5)


def test_call_matches_jax_and_python_scalars_take_jax_dtypes():
    f, args = programs()["branch_argmax"]
    imported = from_jax(f, *args)
    assert isinstance(imported, dfc.Function)
    for p in (0.5, -0.5):  # both branches of the lax.cond
        value, index = imported(args[0].astype(np.float64), p)
        want_value, want_index = f(args[0], p)
        np.testing.assert_allclose(value, np.asarray(want_value), rtol=1e-5)
        assert int(index) == int(want_index)


@pytest.mark.parametrize("engine", [False, True], ids=["interpreter", "compiled"])
def test_data_dependent_while_loop_differentiates_in_reverse(engine):
    """lax.while_loop (Newton's square root until converged): JAX has no reverse
    mode for it; dfc's gradient equals JAX's forward mode (jacfwd)."""
    f, args = programs()["newton_sqrt"]
    imported = from_jax(f, *args)
    want = np.asarray(f(*args))
    np.testing.assert_allclose(interpret(imported.module, imported.name, *args), want, rtol=1e-6)
    np.testing.assert_allclose(imported(*args), want, rtol=1e-6)
    want_grad = np.asarray(jax.jacfwd(f)(*args))
    if engine:
        got = dfc.grad(imported)(*args)
    else:
        module = imported.autodiff_module((0,))
        got = interpret(module, f"{imported.name}_grad", *args, np.array(1.0, np.float32))[1]
    np.testing.assert_allclose(got, want_grad, rtol=1e-5)


def test_conversion_errors_point_at_the_python_source():
    import inspect

    def f8_sum(x):
        return jax.lax.reduce(jax.numpy.sin(x).astype("float8_e4m3fn"), np.zeros((), "float8_e4m3fn"), jax.lax.add, (0,))

    line = inspect.getsourcelines(f8_sum)[1] + 1
    with pytest.raises(CompileError) as err:
        from_jax(f8_sum, np.ones(4, np.float32))
    assert str(err.value).startswith(f"{__file__}:{line}:")
    assert "'stablehlo.reduce' of 4-, 6- or 8-bit values is not supported" in str(err.value)
