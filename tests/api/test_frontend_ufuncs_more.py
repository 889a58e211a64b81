"""NumPy's ufuncs of dfc/frontend/numpy_ufuncs_more.py at the ends of the float range: each against NumPy on a
grid of special values (signed zeros, subnormals, 1e308, inf, NaN, exp's overflow points) in float64 and
float32 (4 ulp, NaN positions, signs of zeros), one compiled function per dtype returning them all (the
interpreter with --slow); the gradients of the differentiable ones against jax.grad in float64."""

import types
import warnings

import numpy as np
import pytest

import dfc

S = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -3.0, 0.7, 2.5, -2.5, 1e-310, -1e-310, 5e-324, 2.0 ** -1022, 1e-45, 3e38,
     1e308, -1e308, 88.7, 710.0, -745.2, np.inf, -np.inf, np.nan]


def ufuncs(x, X, Y):
    """The unary ufuncs of the grid `x` and the binary ones of the pairs (X, Y)."""
    fx, ex = np.frexp(x)
    mf, mi = np.modf(x)
    q, r = np.divmod(X, Y)
    n = np.array([1000, -1070, 2000, -2000, 130, -150, 2])
    return (np.arcsinh(x), np.arccosh(x), np.arctanh(x), np.trunc(x), np.fix(x), np.cbrt(x), np.signbit(x),
            np.positive(x), np.heaviside(x, 0.5), np.sinc(x), np.nan_to_num(x), np.float_power(x, 2), np.spacing(x),
            fx, ex, mf, mi, np.ldexp(x[:, None], n), np.copysign(X, Y), np.logaddexp(X, Y),
            np.logaddexp2(X, Y), np.fmod(X, Y), np.nextafter(X, Y), np.heaviside(X, Y), q, r)


def integers(a, b):
    return (np.fmod(a, b), np.signbit(a), np.trunc(a), np.positive(a), np.ldexp(np.float32(1.5), a % 300 - 150),
            np.gcd(a, b), np.lcm(a, b), np.gcd(a.astype(np.int32), 12), np.bitwise_count(a),
            np.bitwise_count(b.astype(np.uint8)),
            np.vecdot(a, b), np.matvec(a.reshape(2, 4), b[:4]), np.vecmat(b[:2], a.reshape(2, 4)))


def assert_numpy(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype)
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    same = (np.isnan(got) & np.isnan(want)) | ((got == want) & (np.signbit(got) == np.signbit(want)))
    near = np.isfinite(want) & (np.abs(got - want) <= 4 * np.spacing(np.abs(want).astype(want.dtype)))
    bad = ~(same | near)
    assert not bad.any(), (what, [(i, want[i], got[i]) for i in np.nonzero(bad)[0][:4]])


def grid(dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = np.array(S, dtype=np.float64).astype(dtype)  # 1e308 is inf in float32
    X, Y = (v.ravel() for v in np.meshgrid(x, x, indexing="ij"))
    return x, X, Y


def check(run, dtype):
    args = grid(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k, (g, w) in enumerate(zip(run(ufuncs, *args), ufuncs(*args), strict=True)):
            assert_numpy(g, w, f"ufuncs[{k}] {dtype.__name__}")


@pytest.mark.parametrize("dtype", [np.float64, pytest.param(np.float32, marks=pytest.mark.slow),
                                   pytest.param(np.float16, marks=pytest.mark.slow)])
def test_ufuncs_at_the_ends_of_the_range(dtype):
    check(lambda fn, *a: dfc.jit(fn)(*a), dtype)


@pytest.mark.slow
def test_integer_ufuncs():
    a = np.array([-7, 7, -7, 1071, 0, -1, 2**40 + 3, np.iinfo(np.int64).min], dtype=np.int64)
    b = np.array([2, -2, -2, 462, 3, 0, 0, -1], dtype=np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k, (g, w) in enumerate(zip(dfc.jit(integers)(a, b), integers(a, b), strict=True)):
            assert_numpy(g, w, f"integers[{k}]")


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ufuncs_interpreted(dtype):
    def run(fn, *args):
        f, ir_args, _ = dfc.jit(fn).specialize(*args)
        out = dfc.interpret(f.module, f.name, *ir_args)
        return out if isinstance(out, tuple) else (out,)

    check(run, dtype)


def small_loss(x, y):
    return np.sum(np.arcsinh(x) + np.arccosh(y) * 1.2 + np.arctanh(x * 0.3) + np.cbrt(x) * 1.4 + np.logaddexp(x, y)
                  + np.sinc(y - 1.5) + np.sinc(x))


def full_loss(x, y):
    return (small_loss(x, y) + np.sum(np.copysign(x, y) * np.trunc(y * 3.0)) + np.sum(np.logaddexp2(x, x) * 1.6)
            + np.sum(np.fmod(y, x) * 1.7) + np.sum(np.float_power(y, x) * 1.8) + np.sum(np.nan_to_num(x) * y)
            + np.sum(np.logaddexp(y, y + 0.0)) + np.sum(np.logaddexp2(x, y)) + np.sum(np.frexp(x)[0] * y)
            + np.sum(np.ldexp(y, -1060)) + np.sum(np.ldexp(x, 3)) + np.sum(np.modf(x * 2.0)[0] * y)
            + np.sum(np.modf(y)[0]))  # y: integers too (modf's slope 1 there)


def with_jax(fn, jnp):
    """`fn`'s code with `np` bound to jax.numpy."""
    names = dict(globals(), np=jnp)
    for name in ("small_loss", "full_loss"):
        names[name] = types.FunctionType(globals()[name].__code__, names)
    return names[fn.__name__]


X = np.array([0.3, -0.7, 1.9, -2.2, 1.3, 3.5])
Y = np.array([1.5, 2.0, 1.1, 4.0, 1.3, 2.7])  # sinc(y - 1.5) at 0; logaddexp(x, y) at a tie


def sinc_derivative(t):
    safe = np.where(t == 0, 1.0, t)
    return np.where(t == 0, 0.0, (np.cos(np.pi * safe) * np.pi * safe - np.sin(np.pi * safe)) / (np.pi * safe**2))


def test_gradients_against_closed_forms():
    """The small loss's gradient against its derivatives written out in float64 (JAX: --slow)."""
    x, y = X, Y
    total = np.logaddexp(x, y)
    want_x = (1 / np.sqrt(1 + x**2) + 0.3 / (1 - (0.3 * x) ** 2) + 1.4 / (3 * np.cbrt(x) ** 2) + np.exp(x - total)
              + sinc_derivative(x))
    want_y = 1.2 / np.sqrt(y**2 - 1) + np.exp(y - total) + sinc_derivative(y - 1.5)
    gx, gy = dfc.grad(small_loss, (0, 1))(x, y)
    np.testing.assert_allclose(gx, want_x, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(gy, want_y, rtol=1e-13, atol=1e-15)


@pytest.mark.slow
@pytest.mark.parametrize("which", ["small", "full"])
def test_gradients_against_jax(which):
    """Interior points, sinc at 0 (derivative 0) and logaddexp at a tie (1/2 to each operand)."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    fn = small_loss if which == "small" else full_loss
    got = dfc.grad(fn, (0, 1))(X, Y)
    want = jax.grad(with_jax(fn, jax.numpy), (0, 1))(X, Y)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-13, atol=1e-15)
