"""Complex numbers through StableHLO (`passes/stablehlo_complex.py`): JAX programs on
complex64/complex128 arrays, imported by `dfc.from_jax`, against NumPy's complex128
results (relatively and absolutely), on the interpreter and the engine; the gradient
of a real loss through complex intermediates against `jax.grad`; and the refusals."""

from __future__ import annotations

import numpy as np
import pytest

import dfc
from dfc import CompileError, interpret
from dfc.importers.stablehlo_import import from_jax, import_stablehlo

jax = pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

rng = np.random.default_rng(7)


def _complex(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


Z = np.array([1.5 + 2.5j, -3.0 + 0.5j, 0.25 - 4.0j, -1.0 - 1.0j, 2.0 + 0.0j, -2.0 + 0.0j, 0.0 + 3.0j, 1e-9 + 2e-9j])
W = np.array([2.5 + 1.5j, 0.5 - 7.5j, -3.0 + 0.0j, 1e-3 + 4.0j, 0.0 + 1.0j, 5.0 - 2.0j, -0.5 - 0.5j, 3.0 + 1e-7j])


def elementwise(z, w):
    return (z * w, z / w, z - w, -z, jnp.exp(z), jnp.expm1(z), jnp.log(z), jnp.log1p(z), jnp.sqrt(z),
            lax.rsqrt(z), jnp.sin(z), jnp.cos(z), jnp.tan(z), jnp.tanh(z), z ** w, jnp.sign(z),
            jnp.abs(z), jnp.conj(z), jnp.real(z), jnp.imag(w), z == w, z != jnp.conj(z))


def elementwise_numpy(z, w):
    return (z * w, z / w, z - w, -z, np.exp(z), np.expm1(z), np.log(z), np.log1p(z), np.sqrt(z),
            1 / np.sqrt(z), np.sin(z), np.cos(z), np.tan(z), np.tanh(z), z ** w, z / np.abs(z),
            np.abs(z), np.conj(z), z.real, w.imag, z == w, z != np.conj(z))


def structured(a, b, x):
    m = a @ b  # dot_general, four real products
    s = jnp.sum(m, axis=1) + jnp.prod(a[:, :3], axis=0).sum()
    t = jnp.concatenate([m.T[1:].T, jnp.flip(m, 0)[:, :1]], axis=1)
    p = jnp.pad(a, ((1, 0), (0, 2)), constant_values=1 - 2j)
    g = a[jnp.array([2, 0, 1])]  # gather
    sel = jnp.where(jnp.abs(a) > 1.0, a, 2j * x[:, None])  # select, broadcast of a real-times-complex
    c = lax.complex(x, 2 * x) * jnp.exp(1j * x)
    u = a.at[jnp.array([0, 2]), 1].set(b[:2, 0]).at[1].add(1j)  # scatter, replace and add
    return m, s, t, p, g, sel, c, x @ a, lax.dynamic_slice(a, (1, 1), (2, 2)), u


def structured_numpy(a, b, x):
    m = a @ b
    s = m.sum(axis=1) + np.prod(a[:, :3], axis=0).sum()
    t = np.concatenate([m.T[1:].T, np.flip(m, 0)[:, :1]], axis=1)
    p = np.pad(a, ((1, 0), (0, 2)), constant_values=1 - 2j)
    sel = np.where(np.abs(a) > 1.0, a, 2j * x[:, None])
    c = (x + 2j * x) * np.exp(1j * x)
    u = a.copy()
    u[[0, 2], 1] = b[:2, 0]
    u[1] += 1j
    return m, s, t, p, a[[2, 0, 1]], sel, c, x @ a, a[1:3, 1:3], u


def _close(got, want, rtol):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype.kind == want.dtype.kind, (got.dtype, want.dtype)
    if want.dtype.kind == "b":
        np.testing.assert_array_equal(got, want)
        return
    scale = np.max(np.abs(want)) if want.size else 0.0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 1e-3 * scale)


@pytest.mark.parametrize("dtype, rtol, engine", [
    (np.complex128, 1e-12, False),
    pytest.param(np.complex64, 2e-5, False, marks=pytest.mark.slow),
    pytest.param(np.complex128, 1e-12, True, marks=pytest.mark.slow),
    pytest.param(np.complex64, 2e-5, True, marks=pytest.mark.slow),
], ids=["c128-interpreter", "c64-interpreter", "c128-engine", "c64-engine"])
def test_elementwise_functions_equal_numpy(dtype, rtol, engine):
    z, w = Z.astype(dtype), W.astype(dtype)
    with jax.enable_x64(True):
        f = from_jax(elementwise, z, w)
    got = f(z, w) if engine else f.with_jax_dtypes(interpret(f.module, f.name, *f.arguments(z, w)))
    for k, (g, want) in enumerate(zip(got, elementwise_numpy(Z, W))):
        want = np.asarray(want)
        if want.dtype.kind in "fc":
            want = want.astype(dtype if want.dtype.kind == "c" else np.dtype(dtype).char.lower())
        _close(g, want, rtol)


@pytest.mark.parametrize("dtype, rtol", [
    (np.complex128, 1e-12),
    pytest.param(np.complex64, 2e-5, marks=pytest.mark.slow),
], ids=["c128", "c64"])
def test_engine_equals_numpy_and_crosses_complex_arrays(dtype, rtol):
    z, w = Z.astype(dtype), W.astype(dtype)
    with jax.enable_x64(True):
        f = from_jax(lambda z, w: (z / w, jnp.abs(z)), z, w)
    got = f(z, w)
    assert got[0].dtype == dtype and got[0].shape == Z.shape
    for g, want in zip(got, (Z / W, np.abs(Z))):
        _close(g, want.astype(dtype if want.dtype.kind == "c" else np.dtype(dtype).char.lower()), rtol)


def test_shapes_contractions_and_reductions_equal_numpy_on_the_interpreter():
    a, b, x = _complex(3, 4), _complex(4, 2), rng.standard_normal(3)
    with jax.enable_x64(True):
        f = from_jax(structured, a, b, x)
    packed = interpret(f.module, f.name, *f.arguments(a, b, x))
    got = f.with_jax_dtypes(packed)
    for g, want in zip(got, structured_numpy(a, b, x)):
        _close(g, want, 1e-12)


def test_loops_and_branches_carry_complex_values():
    def f(z, n):
        out = lax.fori_loop(0, 5, lambda i, acc: acc * z + jnp.conj(acc) * 0.5j, jnp.ones_like(z))
        return lax.cond(n > 0, lambda: out * 2, lambda: -out), jnp.sum(out)

    z = np.array([0.3 + 0.2j, -0.5 + 1.0j])
    with jax.enable_x64(True):
        imported = from_jax(f, z, 1)
    for n in (1, -1):
        acc = np.ones_like(z)
        for _ in range(5):
            acc = acc * z + np.conj(acc) * 0.5j
        got = imported.with_jax_dtypes(interpret(imported.module, imported.name, *imported.arguments(z, n)))
        _close(got[0], acc * 2 if n > 0 else -acc, 1e-13)
        _close(got[1], acc.sum(), 1e-13)


@pytest.mark.parametrize("lower, transpose_a", [(True, False), (False, True)], ids=["lower", "upper_adjoint"])
def test_triangular_solve_of_complex_matrices_equals_numpy(lower, transpose_a):
    """A hand-written module (JAX on CPU calls LAPACK instead), its complex arguments passed packed."""
    a, b = _complex(2, 3, 3) + 3 * np.eye(3), _complex(2, 3, 2)
    ta, tb = "tensor<2x3x3xcomplex<f64>>", "tensor<2x3x2xcomplex<f64>>"
    text = f"""func.func @main(%a: {ta}, %b: {tb}) -> {tb} {{
  %x = "stablehlo.triangular_solve"(%a, %b) {{left_side = true, lower = {str(lower).lower()}, unit_diagonal = false,
    transpose_a = #stablehlo<transpose {"ADJOINT" if transpose_a else "NO_TRANSPOSE"}>}} : ({ta}, {tb}) -> {tb}
  func.return %x : {tb}
}}"""
    packed = interpret(import_stablehlo(text), "main", *(np.ascontiguousarray(v[..., None]).view(np.float64)
                                                        for v in (a, b)))
    got = np.ascontiguousarray(packed).view(np.complex128)[..., 0]
    m = np.tril(a) if lower else np.triu(a)
    m = np.conj(np.swapaxes(m, -1, -2)) if transpose_a else m
    _close(got, np.linalg.solve(m, b), 1e-12)


def small_loss(x, y):
    z = lax.complex(x, y)
    u = jnp.exp(z) * z
    return jnp.sum(jnp.abs(u)) + jnp.real(jnp.sum(u @ jnp.conj(z).T))


def loss(x, y):
    z = lax.complex(x, y)
    u = jnp.exp(z) * jnp.sin(z) / (z + 3.0) + jnp.sqrt(z * z + 1.0j)
    v = jnp.log(u) @ jnp.conj(z[:2]).T
    return jnp.sum(jnp.abs(u)) + jnp.real(jnp.sum(v * jnp.tanh(v))) + jnp.imag(jnp.prod(u[0]))


@pytest.mark.parametrize("f", [small_loss, pytest.param(loss, marks=pytest.mark.slow)], ids=["small", "many_ops"])
def test_gradient_through_complex_intermediates_equals_jax(f):
    """dfc's `autodiff` of the imported program, run on the interpreter, against `jax.grad` in float64."""
    x, y = rng.standard_normal((2, 3)) * 0.5, rng.standard_normal((2, 3)) * 0.5
    with jax.enable_x64(True):
        imported = from_jax(f, x, y)
        want = jax.grad(f, argnums=(0, 1))(x, y)
        want_value = f(x, y)
    module = imported.autodiff_module((0, 1))
    value, gx, gy = interpret(module, f"{imported.name}_grad", *imported.arguments(x, y), np.array(1.0))
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    np.testing.assert_allclose(gx, want[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gy, want[1], rtol=1e-10, atol=1e-12)


SPEC_STYLE = """
func.func @main() -> (tensor<4xi1>, tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<2xf32>) {
  %lhs = stablehlo.constant dense<[(0x7FF0000000000001, 0x0000000000000000), (0x0000000000000000, 0x7FF0000000000001),
                                   (0x8000000000000000, 0x0000000000000000), (2.0, 2.0)]> : tensor<4xcomplex<f64>>
  %rhs = stablehlo.constant dense<(0x0000000000000000, 0.0)> : tensor<4xcomplex<f64>>
  %eq = stablehlo.compare EQ, %lhs, %rhs : (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>) -> tensor<4xi1>
  %max = stablehlo.maximum %lhs, %rhs : tensor<4xcomplex<f64>>
  %sign = stablehlo.sign %lhs : tensor<4xcomplex<f64>>
  %c = stablehlo.constant dense<[(1.0, 2.0), (3.0, -4.0)]> : tensor<2xcomplex<f32>>
  %abs = "stablehlo.abs"(%c) : (tensor<2xcomplex<f32>>) -> tensor<2xf32>
  func.return %eq, %max, %sign, %abs : tensor<4xi1>, tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<2xf32>
}
"""


def test_hexadecimal_parts_nan_compare_lexicographic_maximum_and_sign():
    eq, maximum, sign, modulus = interpret(import_stablehlo(SPEC_STYLE), "main")
    np.testing.assert_array_equal(eq, [False, False, True, False])  # NaN never equal; -0 == +0
    maximum = maximum.view(np.complex128)[..., 0]
    assert np.isnan(maximum[0]) and np.isnan(maximum[1])  # NaN propagates
    np.testing.assert_array_equal(maximum[2:], [0.0, 2.0 + 2.0j])  # equal ones give lhs, (2, 2) > (0, 0)
    assert np.signbit(maximum[2].real)
    sign = sign.view(np.complex128)[..., 0]
    assert np.isnan(sign[0].real) and np.isnan(sign[0].imag) and np.isnan(sign[1].imag)
    np.testing.assert_allclose(sign[2:], [0.0, (2 + 2j) / abs(2 + 2j)], rtol=1e-15)
    np.testing.assert_allclose(modulus, [np.sqrt(5.0), 5.0], rtol=1e-7)


def test_max_and_min_of_complex_numbers_are_lexicographic_as_numpy():
    """`jnp.max`/`jnp.min` reduce with a compare-and-select body (`stablehlo_complex.lexicographic_extreme`);
    ties of the real parts break by the imaginary ones."""
    z = np.array([[1 + 0j, 1 + 3j, 0 + 5j], [2 + 1j, -1 + 1j, 2 - 1j]])
    with jax.enable_x64(True):
        imported = from_jax(lambda x: (jnp.max(x, 1), jnp.min(x, 0), jnp.max(x)), z)
        got = imported.with_jax_dtypes(interpret(imported.module, imported.name, *imported.arguments(z)))
    for g, w in zip(got, (z.max(1), z.min(0), z.max())):
        np.testing.assert_array_equal(g, w)


def test_unsupported_complex_ops_are_refused_at_the_op():
    text = """func.func @main(%a: tensor<2xcomplex<f32>>) -> tensor<2xi1> {
  %r = stablehlo.compare LT, %a, %a : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xi1>
  func.return %r : tensor<2xi1>
}"""
    with pytest.raises(CompileError, match="<stablehlo>:2:8: .*compare LT of complex numbers is not supported"):
        import_stablehlo(text)
    with jax.enable_x64(True), pytest.raises(CompileError, match="'stablehlo.sort' of complex numbers"):
        from_jax(jnp.sort, Z)


def test_gradient_with_respect_to_a_complex_argument_is_refused():
    with jax.enable_x64(True):
        f = from_jax(lambda z: jnp.abs(z).sum(), Z)
    with pytest.raises(TypeError, match="argument 0 of @.* is complex"):
        dfc.grad(f)(Z)
    with pytest.raises(TypeError, match="argument #0 of @.* is complex"):
        f.gradient([0])
