"""The matrix decompositions built once (dialects/nn_linalg_builders.py, passes/stablehlo_lapack.py) and used
from JAX (LAPACK custom calls) and PyTorch (dfc/torch/aten_linalg.py): values and gradients against JAX and
eager PyTorch in float64. Eigenvectors and singular vectors are compared with each column's sign normalised
(the entry of largest magnitude positive); the loss of a gradient case is a fixed weighting of such values, so
it is the same function in both programs. One small interpreted case runs by default, the rest with --slow."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

import dfc  # noqa: E402
from dfc import from_jax  # noqa: E402
from dfc.compiler.interpreter import interpret  # noqa: E402

RTOL, ATOL = 1e-10, 1e-12


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


def _normalised(v):
    """v with each column (the second-to-last axis) signed so that its entry of largest magnitude is positive."""
    k = jnp.argmax(jnp.abs(v), axis=-2, keepdims=True)
    return v * jnp.sign(jnp.take_along_axis(v, k, axis=-2))


def _rng():
    return np.random.default_rng(7)


def _symmetric(*shape):
    a = _rng().standard_normal(shape)
    return a + np.swapaxes(a, -1, -2)


def _close(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: {got.shape} vs {want.shape}"
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL * max(1.0, float(np.abs(want).max(initial=0))),
                               equal_nan=True, err_msg=what)


def _flat(value):
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(value)]


def test_small_qr_eigh_svd_equal_jax_interpreted():
    """Householder QR (signs included), Jacobi eigenvalues and singular values of small matrices, on the reference
    interpreter."""

    def f(s, a):
        q, r = jnp.linalg.qr(a)
        return q, r, jnp.linalg.eigvalsh(s), jnp.linalg.svd(a, compute_uv=False)

    s, a = _symmetric(3, 3), _rng().standard_normal((3, 2))
    imported = from_jax(f, s, a)
    got = interpret(imported.module, imported.name, *imported.arguments(s, a))
    for k, (g, w) in enumerate(zip(got, _flat(f(s, a)))):
        _close(g, w, f"output {k}")


def _weights(value):
    rng = np.random.default_rng(3)
    return [rng.standard_normal(np.shape(x)) for x in _flat(value)]


def _jax_case(f, *args):
    """f's values and the gradient of a fixed weighting of its float outputs, by dfc against JAX."""
    imported = from_jax(f, *args)
    want = _flat(f(*args))
    got = _flat(imported(*args))
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        _close(g, w, f"output {k}")
    weights = _weights(f(*args))

    def loss(*xs):
        return sum(jnp.sum(y * w) for y, w in zip(jax.tree_util.tree_leaves(f(*xs)), weights)
                   if jnp.issubdtype(y.dtype, jnp.floating))

    argnums = tuple(range(len(args)))
    want_grads = jax.grad(loss, argnums)(*args)
    got_grads = dfc.grad(from_jax(loss, *args), argnums)(*args)
    got_grads = got_grads if isinstance(got_grads, tuple) else (got_grads,)
    for k, (g, w) in enumerate(zip(got_grads, want_grads)):
        _close(g, w, f"gradient {k}")


def _svd_parts(a, full=False):
    u, s, vh = jnp.linalg.svd(a, full_matrices=full)
    k = s.shape[-1]
    return _normalised(u[..., :k]), s, _normalised(jnp.swapaxes(vh, -1, -2)[..., :k])


JAX_CASES = {
    "qr_reduced": (lambda a: jnp.linalg.qr(a), [(5, 3)]),
    "qr_complete": (lambda a: jnp.linalg.qr(a, mode="complete"), [(5, 3)]),
    "qr_wide": (lambda a: jnp.linalg.qr(a), [(3, 5)]),
    "qr_batched": (lambda a: jnp.linalg.qr(a), [(2, 4, 3)]),
    "eigh": (lambda s: (lambda w, v: (w, _normalised(v)))(*jnp.linalg.eigh(s)), ["sym", 5]),
    # JAX's eigh differentiates as if the whole matrix were read; dfc's reads one triangle (LAPACK's): both agree
    # on symmetric perturbations
    "eigh_upper": (lambda s: jnp.linalg.eigh((s + s.T) / 2, UPLO="U", symmetrize_input=False)[0], ["sym", 4]),
    "eigh_batched": (lambda s: (lambda w, v: (w, _normalised(v)))(*jnp.linalg.eigh(s)), ["sym", 2, 4]),
    "eigvalsh": (lambda s: jnp.linalg.eigvalsh(s), ["sym", 6]),
    "svd_tall": (lambda a: _svd_parts(a), [(5, 3)]),
    "svd_wide": (lambda a: _svd_parts(a), [(3, 5)]),
    "svd_square_full": (lambda a: _svd_parts(a, True), [(4, 4)]),
    "svd_batched": (lambda a: _svd_parts(a), [(2, 4, 3)]),
    "svdvals": (lambda a: jnp.linalg.svd(a, compute_uv=False), [(4, 6)]),
    "pinv": (lambda a: jnp.linalg.pinv(a), [(5, 3)]),
    "lstsq": (lambda a, b: jnp.linalg.lstsq(a, b)[0], [(5, 3), (5, 2)]),
    "cond": (lambda a: jnp.linalg.cond(a), [(4, 4)]),
    "norm_2_nuc": (lambda a: (jnp.linalg.norm(a, 2), jnp.linalg.norm(a, "nuc")), [(4, 3)]),
}


def _arguments(spec):
    if spec[0] == "sym":
        return [_symmetric(*spec[1:][:-1], spec[-1], spec[-1])]
    return [np.random.default_rng(11 + k).standard_normal(shape) for k, shape in enumerate(spec)]


@pytest.mark.slow
@pytest.mark.parametrize("name", list(JAX_CASES))
def test_jax_decompositions_equal_jax(name):
    f, spec = JAX_CASES[name]
    _jax_case(f, *_arguments(spec))


@pytest.mark.slow
def test_jax_matrix_rank_and_full_u_of_a_rank_deficient_matrix():
    """A rank-2 4x4 matrix: matrix_rank 2, and svd's U (completed where the singular values are 0) orthonormal."""
    rng = _rng()
    a = rng.standard_normal((4, 2)) @ rng.standard_normal((2, 4))
    assert int(from_jax(lambda a: jnp.linalg.matrix_rank(a), a)(a)) == 2
    u, s, vh = from_jax(lambda a: jnp.linalg.svd(a), a)(a)
    _close(u.T @ u, np.eye(4), "U^T U")
    _close(vh @ vh.T, np.eye(4), "Vh Vh^T")
    _close((u * s) @ vh, a, "U S Vh")
    _close(s, np.linalg.svd(a, compute_uv=False), "singular values")


@pytest.mark.slow
def test_jax_eigenvector_gradient_of_a_diagonal_matrix():
    """No rotation turns a diagonal matrix, yet the eigenvectors' gradient (from the rotations of angle 0) is
    JAX's."""
    s = np.diag([1.0, 2.0, 4.0]) + 0.0
    _jax_case(lambda s: _normalised(jnp.linalg.eigh(s)[1]), s)


@pytest.mark.slow
def test_jax_float32_and_a_nan_matrix():
    """float32 values within float32's rounding of JAX's; a NaN matrix gives NaN eigenvalues (JAX's answer)."""
    a = _symmetric(4, 4).astype(np.float32)
    got = from_jax(lambda s: jnp.linalg.eigvalsh(s), a)(a)
    np.testing.assert_allclose(got, np.linalg.eigvalsh(a.astype(np.float64)), rtol=1e-5, atol=1e-5)
    bad = a.astype(np.float64)
    bad[1, 2] = bad[2, 1] = np.nan
    assert np.isnan(from_jax(lambda s: jnp.linalg.eigvalsh(s), bad)(bad)).all()
