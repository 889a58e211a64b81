"""dfc.jvp, dfc.jacfwd and dfc.linearize (dfc/forward_transforms.py, the `jvp`
pass): the frontend corpus's JVPs on the interpreter against float64 central
differences of the NumPy code, against the reverse pass (<w, J t> = <J^T w, t>)
and, for the functional kernels, against `jax.jvp`; the compiled transforms
against JAX's `jvp` and the JVP's own columns (`jacfwd`, `linearize`),
forward over reverse included. `--slow` (or `DFC_CORPUS_FORWARD=1`) runs every
kernel of the corpus, the functional ones against `jax.jvp` too (about two
minutes)."""

import os
import types

import numpy as np
import pytest
from support.frontend_corpus import kernels
from support.frontend_corpus.check import copies, float_positions
from xdsl.dialects.builtin import TensorType

import dfc

CI = ["cumsum_loop", "floyd_warshall", "jacobi_2d", "permuted_dot", "piecewise_sum", "rnn", "running_max_loss",
      "trisolv"]
"""Kernels checked without --slow: loops, branches, max/min, gathers (the nn-heavy ones are in test_forward_mode.py)."""
NAMES = [name if name in CI or os.environ.get("DFC_CORPUS_FORWARD") else pytest.param(name, marks=pytest.mark.slow)
         for name in sorted(kernels.CASES)]
FUNCTIONAL = ["attention", "conv2d_bias", "huber", "layernorm", "log_softmax_ce", "logistic_regression", "maxpool2x2",
              "mlp", "softmax"]
"""Kernels that run unchanged on jax.numpy (no in-place updates)."""


@pytest.fixture(autouse=True)
def _x64():
    """JAX in float64 for this module's tests only: the setting is the process's,
    and the other JAX tests lower float32."""
    try:
        import jax
    except ImportError:
        yield
        return
    with jax.enable_x64(True):
        yield


def _jax():
    return pytest.importorskip("jax")


def _on_jax(fn):
    """`fn` with `np` bound to jax.numpy."""
    import jax.numpy as jnp

    return types.FunctionType(fn.__code__, {**fn.__globals__, "np": jnp}, fn.__name__, fn.__defaults__)


def _directional(fn, args, floats, tangents, h=1e-6):
    def at(s):
        moved = copies(args)
        for k, t in zip(floats, tangents):
            moved[k] = args[k] + s * t
        return np.asarray(fn(*moved), np.float64)

    return (at(h) - at(-h)) / (2 * h)


@pytest.mark.parametrize("name", NAMES)
def test_corpus_kernel(name):
    fn, args = getattr(kernels, name), list(kernels.CASES[name](np.random.default_rng(0)))
    rng = np.random.default_rng(1)
    f, ir_args, positions = dfc.jit(fn).specialize(*copies(args))
    floats = [k for k in float_positions(args) if positions[k] >= 0]
    if any(args[k].dtype != np.float64 for k in floats if isinstance(args[k], np.ndarray)):
        pytest.skip("float32: checked in float64 only")
    wrt = [positions[k] for k in floats]
    ir_args = [np.asarray(a) if isinstance(a, float) and isinstance(t, TensorType) else a
               for a, t in zip(ir_args, f.inputs)]
    tangents = [np.asarray(rng.standard_normal(np.shape(args[k]))) for k in floats]
    ir_tangents = [t if isinstance(ir_args[positions[k]], np.ndarray) else float(t) for k, t in zip(floats, tangents)]
    value, jt = dfc.interpret(f.jvp_module(wrt), f"{f.name}_jvp", *ir_args, *ir_tangents)

    reference = _directional(fn, args, floats, tangents)
    scale = max(1.0, float(np.max(np.abs(reference))))
    assert np.max(np.abs(jt - reference)) <= 1e-7 * scale, "central differences"

    seed = np.asarray(rng.standard_normal(np.shape(value)))
    seed_arg = seed if isinstance(value, np.ndarray) else float(seed)
    grads = dfc.interpret(f.autodiff_module(tuple(wrt)), f"{f.name}_grad", *ir_args, seed_arg)[1:]
    forward = float(np.sum(seed * jt))
    backward = sum(float(np.sum(np.asarray(g) * t)) for g, t in zip(grads, tangents))
    assert forward == pytest.approx(backward, rel=1e-11, abs=1e-12), "<w, J t> != <J^T w, t>"

    if name in FUNCTIONAL:
        jax = _jax()
        _, want = jax.jvp(_on_jax(fn), tuple(args), tuple(
            tangents[floats.index(k)] if k in floats else np.zeros_like(a) for k, a in enumerate(args)))
        np.testing.assert_allclose(jt, np.asarray(want), rtol=1e-11, atol=1e-12, err_msg="jax.jvp")


def _net(x, w, b):
    """Tall Jacobian: 3 x 4 inputs, 3 x 6 outputs."""
    return np.tanh(x @ w + b) * np.exp(-0.5 * x[:, :1] ** 2)


def test_compiled_jvp_jacfwd_linearize_against_jax():
    jax = _jax()
    rng = np.random.default_rng(2)
    x, w, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 6)), rng.standard_normal(6)
    tangents = [rng.standard_normal(a.shape) for a in (x, w, b)]
    reference = _on_jax(_net)
    value, jt = dfc.jvp(_net, (x, w, b), tangents)
    want_value, want = jax.jvp(reference, (x, w, b), tuple(tangents))
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    np.testing.assert_allclose(jt, want, rtol=1e-11, atol=1e-13)

    jacobians = dfc.jacfwd(_net, argnums=(0, 1, 2))(x, w, b)  # the same compiled @_net_jvp, once per column
    assert [j.shape for j in jacobians] == [(3, 6, 3, 4), (3, 6, 4, 6), (3, 6, 6)]
    columns = sum(np.tensordot(j, t, axes=t.ndim) for j, t in zip(jacobians, tangents))
    np.testing.assert_allclose(columns, want, rtol=1e-11, atol=1e-13)

    value, f_jvp = dfc.linearize(_net, x, w, b)
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    np.testing.assert_allclose(f_jvp(*tangents), want, rtol=1e-11, atol=1e-13)


def _energy(x, s):
    return np.sum(np.sin(x) * s * x ** 2)


@pytest.mark.slow
def test_forward_over_reverse_hessian_vector_product():
    """jvp(grad(f)): the Hessian of a scalar function applied to a tangent,
    against JAX's forward-over-reverse; a float scalar argument gets a scalar
    tangent, and jacfwd of a scalar result has the argument's shape."""
    jax = _jax()
    x, t = np.linspace(-1.0, 1.0, 5), np.linspace(0.5, 1.5, 5)
    _, hv = dfc.jvp(dfc.grad(_energy, 0), (x, 1.5), (t, 0.25))
    _, want = jax.jvp(jax.grad(_on_jax(_energy), 0), (x, 1.5), (t, 0.25))
    np.testing.assert_allclose(hv, want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(dfc.jacfwd(_energy)(x, 1.5), jax.grad(_on_jax(_energy))(x, 1.5), rtol=1e-12)


def _with_aux(x, s):
    return np.sum(np.sin(x) * s), x * 2.0, np.max(x)


@pytest.mark.slow
def test_has_aux():
    jax = _jax()
    x, t = np.linspace(-1.0, 1.0, 5), np.linspace(0.5, 1.5, 5)
    value, tangent, (doubled, top) = dfc.jvp(_with_aux, (x, 1.5), (t, 0.25), has_aux=True)
    want_value, want, aux = jax.jvp(lambda x, s: (jax.numpy.sum(jax.numpy.sin(x) * s), (x * 2.0, jax.numpy.max(x))),
                                    (x, 1.5), (t, 0.25), has_aux=True)
    np.testing.assert_allclose([value, tangent], [want_value, want], rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(doubled, aux[0])
    assert top == aux[1]


def test_errors():
    x = np.ones(3)
    with pytest.raises(ValueError, match="tangent 0 has shape \\(2,\\), but its primal has shape \\(3,\\)"):
        dfc.jvp(_energy, (x, 1.0), (np.ones(2), 0.0))
    with pytest.raises(ValueError, match="2 primals but 1 tangents"):
        dfc.jvp(_energy, (x, 1.0), (x,))
    with pytest.raises(TypeError, match="cannot be transformed again"):
        dfc.jvp(dfc.jacfwd(_energy), (x, 1.0), (x, 0.0))


@pytest.mark.slow
def test_imported_jax_programs():
    """Every program of the StableHLO importer's tests (float32) through
    `dfc.from_jax`: its JVP on the interpreter against `jax.jvp`."""
    jax = _jax()
    from support.jax_programs import programs

    for name, (fn, args) in programs().items():
        f = dfc.from_jax(fn, *args)
        floats = [k for k, a in enumerate(args) if np.asarray(a).dtype.kind == "f"]
        rng = np.random.default_rng(3)
        tangents = {k: rng.standard_normal(np.shape(args[k])).astype(np.asarray(args[k]).dtype) for k in floats}
        out = dfc.interpret(f.jvp_module(floats), f"{f.name}_jvp", *f.arguments(*args), *tangents.values())
        out = out if isinstance(out, tuple) else (out,)
        _, want = jax.jvp(fn, tuple(args), tuple(tangents[k] if k in floats else np.zeros(np.shape(a), jax.dtypes.float0)
                                                   for k, a in enumerate(args)))
        want = [w for w in (want if isinstance(want, tuple) else (want,)) if np.asarray(w).dtype != jax.dtypes.float0]
        for got, expected in zip(out[len(f.outputs):], want, strict=True):
            scale = 1.0 + float(np.max(np.abs(expected)))
            assert np.max(np.abs(np.asarray(got, np.float64) - np.asarray(expected, np.float64))) <= 1e-5 * scale, name


@pytest.mark.slow
@pytest.mark.parametrize("name", ["attention", "layernorm", "maxpool2x2", "softmax"])
def test_jacfwd_equals_jacrev(name):
    """The whole Jacobian both ways, compiled: one JVP per argument element
    against one VJP per result element."""
    fn, args = getattr(kernels, name), kernels.CASES[name](np.random.default_rng(0))
    argnums = tuple(range(len(args)))
    for forward, reverse in zip(dfc.jacfwd(fn, argnums)(*args), dfc.jacrev(fn, argnums)(*args), strict=True):
        np.testing.assert_allclose(forward, reverse, rtol=1e-12, atol=1e-14)
