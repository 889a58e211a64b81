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


def _normalised_np(v):
    k = np.argmax(np.abs(v), axis=-2)[..., None, :]
    return v * np.sign(np.take_along_axis(v, k, axis=-2))


def np_cholesky(a, w):
    return np.sum(np.linalg.cholesky(a) * w)


def np_qr(a, w):
    q, r = np.linalg.qr(a)
    return np.sum(q * w) + np.sum(r * w[..., :3, :])


def np_eigh(a, w):
    vals, vecs = np.linalg.eigh(a)
    return np.sum(vecs * vecs * w) + np.sum(vals * w[..., 0, :])


def np_svd(a, w):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(u * u * w) + np.sum(s * w[..., 0, :])


def np_solve_inv_det(a, b, w):
    return np.sum(np.linalg.solve(a, b) * w[..., :2]) + np.sum(np.linalg.inv(a) * w) + np.sum(np.linalg.det(a))


def _lower_read(a):
    """The symmetric matrix NumPy's cholesky and eigh read (the lower triangle mirrored), for JAX."""
    return jnp.tril(a) + jnp.swapaxes(jnp.tril(a, -1), -1, -2)


def jax_cholesky(a, w):
    return jnp.sum(jnp.linalg.cholesky(_lower_read(a), symmetrize_input=False) * w)


def jax_qr(a, w):
    q, r = jnp.linalg.qr(a)
    return jnp.sum(q * w) + jnp.sum(r * w[..., :3, :])


def jax_eigh(a, w):
    vals, vecs = jnp.linalg.eigh(_lower_read(a), symmetrize_input=False)
    return jnp.sum(vecs * vecs * w) + jnp.sum(vals * w[..., 0, :])


def jax_svd(a, w):
    return sum(jnp.sum(u * u * wi) + jnp.sum(s * wi[0]) for u, s, wi in
               ((*jnp.linalg.svd(a[i], full_matrices=False)[:2], w[i]) for i in range(a.shape[0])))


def jax_solve_inv_det(a, b, w):
    return jnp.sum(jnp.linalg.solve(a, b) * w[..., :2]) + jnp.sum(jnp.linalg.inv(a) * w) + jnp.sum(jnp.linalg.det(a))


def _stacks():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((2, 4, 4))
    return {"square": a, "spd": a @ np.swapaxes(a, -1, -2) + 4 * np.eye(4), "sym": a + np.swapaxes(a, -1, -2),
            "tall": rng.standard_normal((2, 5, 3)), "rhs": rng.standard_normal((2, 4, 2)),
            "w4": rng.standard_normal((2, 4, 4)), "w53": rng.standard_normal((2, 5, 3))}


NUMPY_CASES = {
    "cholesky": (np_cholesky, jax_cholesky, ["spd"], "w4"),
    "qr": (np_qr, jax_qr, ["tall"], "w53"),
    "eigh": (np_eigh, jax_eigh, ["sym"], "w4"),
    "svd": (np_svd, jax_svd, ["tall"], "w53"),
    "solve_inv_det": (np_solve_inv_det, jax_solve_inv_det, ["square", "rhs"], "w4"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(NUMPY_CASES))
def test_numpy_stacks_equal_numpy_and_their_gradients_jax(name):
    """Stacks of matrices through dfc.jit: each decomposition's values against NumPy's (sign-normalised vectors),
    the gradient of a weighting of them against JAX's on the same function."""
    f, reference, names, weight = NUMPY_CASES[name]
    data = _stacks()
    args, w = [data[n] for n in names], data[weight]
    _close(dfc.jit(f)(*args, w), f(*args, w), "value")
    argnums = tuple(range(len(args)))
    got = dfc.grad(f, argnums)(*args, w)
    want = jax.grad(reference, argnums)(*args, w)
    for k, (g, r) in enumerate(zip(got if isinstance(got, tuple) else (got,), want)):
        _close(g, r, f"gradient {k}")


def np_vectors(s, a):
    vals, vecs = np.linalg.eigh(s)
    u, sv, vh = np.linalg.svd(a)
    q, r = np.linalg.qr(a[:, :, :3], mode="complete")  # of full rank: a's R[3, 3] is rounding, its Q's last columns too
    return vals, vecs, u, sv, vh, q, r, np.linalg.det(s), np.linalg.solve(s, a[:, :4, :])


@pytest.mark.slow
def test_numpy_stacked_values_equal_numpy():
    """Full outputs of stacks of matrices: Q and R equal NumPy's, eigenvectors and singular vectors up to sign (of
    rank-3 matrices: U's columns past the third are a completion, compared by orthonormality)."""
    data = _stacks()
    s, a = data["sym"], np.concatenate([data["tall"], data["tall"][:, :, :1]], axis=2)  # (2, 5, 4)
    got, want = dfc.jit(np_vectors)(s, a), np_vectors(s, a)
    _close(got[0], want[0], "eigenvalues")
    _close(_normalised_np(got[1]), _normalised_np(want[1]), "eigenvectors")
    _close(_normalised_np(got[2][..., :3]), _normalised_np(want[2][..., :3]), "U")  # the 4th singular value is 0
    _close(got[3], want[3], "singular values")
    _close(_normalised_np(np.swapaxes(got[4], -1, -2)), _normalised_np(np.swapaxes(want[4], -1, -2)), "V")
    _close(np.swapaxes(got[2], -1, -2) @ got[2], np.broadcast_to(np.eye(5), (2, 5, 5)), "U^T U (completed)")
    for k, what in ((5, "Q"), (6, "R"), (7, "det"), (8, "solve")):
        _close(got[k], want[k], what)


def test_numpy_eig_is_refused_by_name():
    def f(a):
        return np.linalg.eig(a)

    with pytest.raises(dfc.FrontendError, match="np.linalg.eig"):
        dfc.jit(f)(np.eye(2))


torch = pytest.importorskip("torch")


class _Fn(torch.nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, a):
        return self.f(a)


def _sn_torch(v):
    k = v.abs().argmax(dim=-2, keepdim=True)
    return v * torch.sign(torch.gather(v, -2, k))


def _torch_data():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(4, 4, dtype=torch.float64, generator=g)
    return {"a": a, "spd": a @ a.T + 4 * torch.eye(4, dtype=torch.float64), "sym": a + a.T,
            "tall": torch.randn(5, 3, dtype=torch.float64, generator=g), "batch": torch.randn(2, 4, 4, dtype=torch.float64,
                                                                                           generator=g)}


TORCH_CASES = {
    "cholesky": (lambda a: torch.linalg.cholesky(a), "spd"),
    "cholesky_upper_ex": (lambda a: torch.linalg.cholesky_ex(a, upper=True), "spd"),
    "cholesky_solve_inverse": (lambda a: (torch.cholesky_solve(a[:, :2], torch.linalg.cholesky(a)),
                                          torch.cholesky_inverse(torch.linalg.cholesky(a))), "spd"),
    "qr": (lambda a: torch.linalg.qr(a), "tall"),
    "qr_wide": (lambda a: torch.linalg.qr(a.T), "tall"),
    "eigh": (lambda a: (torch.linalg.eigh(a)[0], _sn_torch(torch.linalg.eigh(a)[1])), "sym"),
    "eigvalsh_batched": (lambda a: torch.linalg.eigvalsh(a + a.transpose(-1, -2)), "batch"),
    "svd": (lambda a: (torch.linalg.svd(a, full_matrices=False)[1], _sn_torch(torch.linalg.svd(a, full_matrices=False)[0])),
            "tall"),
    "svdvals_cond_norm": (lambda a: (torch.linalg.svdvals(a), torch.linalg.cond(a), torch.linalg.matrix_norm(a, 2)), "a"),
    "det_slogdet_logdet": (lambda a: (torch.linalg.det(a), *torch.linalg.slogdet(a), torch.logdet(a @ a.T)), "a"),
    "inv_solve": (lambda a: (torch.linalg.inv(a), torch.linalg.solve(a, a[:, :2] + 1), torch.linalg.solve(a, a[0])), "a"),
    "lu_factor_lu": (lambda a: (*torch.linalg.lu_factor(a), *torch.linalg.lu(a)), "a"),
    "solve_triangular": (lambda a: (torch.linalg.solve_triangular(a, a[:, :2] + 1, upper=False),
                                    torch.linalg.solve_triangular(a, a[:2] + 1, upper=True, left=False)), "spd"),
    "det_batched": (lambda a: torch.linalg.det(a), "batch"),
    "pinv": (lambda a: torch.linalg.pinv(a), "tall"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(TORCH_CASES))
def test_torch_linalg_equals_eager(name):
    """Values and the gradient of a fixed weighting of the float outputs against eager PyTorch in float64."""
    import dfc.torch

    f, which = TORCH_CASES[name]
    x = _torch_data()[which]
    compiled = dfc.torch.compile(_Fn(f))

    def outputs(fn, a):
        out = fn(a)
        return list(out) if isinstance(out, tuple) else [out]

    for k, (g, w) in enumerate(zip(outputs(compiled, x), outputs(f, x))):
        assert g.dtype == w.dtype and g.shape == w.shape, f"output {k}"
        _close(g.detach().double().numpy(), w.detach().double().numpy(), f"output {k}")

    def loss(fn, a):
        return sum((o * torch.linspace(0.5, 1.5, o.numel(), dtype=o.dtype).reshape(o.shape)).sum()
                   for o in outputs(fn, a) if o.is_floating_point())

    xs = [x.clone().requires_grad_(True) for _ in range(2)]
    want = torch.autograd.grad(loss(f, xs[0]), xs[0])[0]
    got = torch.autograd.grad(loss(compiled, xs[1]), xs[1])[0]
    _close(got.numpy(), want.numpy(), "gradient")
