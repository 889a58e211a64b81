"""JAX programs imported through StableHLO (`dfc.from_jax`): the forward result
equals JAX's, and the gradient from dfc's own `autodiff` equals `jax.grad`."""

import numpy as np
import pytest

from dfc.compiler.engine import ExecutionEngine
from dfc.compiler.pass_manager import PassManager
from dfc.compiler.stablehlo_import import from_jax
from jax_programs import programs

jax = pytest.importorskip("jax")

DIFFERENTIABLE = ["mlp", "softmax_xent", "attention", "convnet", "jacobi2d", "lstm", "branch_argmax"]


def _as_tuple(value):
    return value if isinstance(value, tuple) else (value,)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_forward_and_gradient_equal_jax(name):
    f, args = programs()[name]
    imported = from_jax(f, *args)
    module = imported.module.clone()
    PassManager.parse("autodiff").run(module)
    engine = ExecutionEngine(module)
    want = _as_tuple(f(*args))
    floats = [k for k, a in enumerate(args) if a.dtype.kind == "f"]
    got = engine.invoke(f"{imported.name}_grad", *imported.arguments(*args), np.array(1.0, np.float32))
    for value, expected in zip(got[: len(want)], want):
        np.testing.assert_allclose(value, np.asarray(expected), rtol=1e-5, atol=1e-5)
    grads = jax.grad(lambda *a: _as_tuple(f(*a))[0], argnums=tuple(floats))(*args)
    assert len(got) == len(want) + len(floats)
    for g, expected in zip(got[len(want):], grads):
        np.testing.assert_allclose(g, np.asarray(expected), rtol=1e-4, atol=1e-5)


def test_call_matches_jax_and_python_scalars_take_jax_dtypes():
    f, args = programs()["branch_argmax"]
    imported = from_jax(f, *args)
    for p in (0.5, -0.5):  # both branches of the lax.cond
        value, index = imported(args[0], p)
        want_value, want_index = f(args[0], p)
        np.testing.assert_allclose(value, np.asarray(want_value), rtol=1e-5)
        assert int(index) == int(want_index)


def test_data_dependent_while_runs_forward_and_autodiff_refuses_it():
    from dfc import CompileError, interpret

    f, args = programs()["newton_sqrt"]
    imported = from_jax(f, *args)
    want = np.asarray(f(*args))
    np.testing.assert_allclose(interpret(imported.module, imported.name, *args), want, rtol=1e-6)
    np.testing.assert_allclose(imported(*args), want, rtol=1e-6)
    with pytest.raises(CompileError, match=r"scf.while.*trip count depends on the data"):
        PassManager.parse("autodiff").run(imported.module.clone())
