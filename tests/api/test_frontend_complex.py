"""Complex arrays (complex64, complex128) in `@dfc.jit`: each complex value is a
pair of real arrays (dfc/frontend/complex_values.py), arguments and results
cross the boundary as NumPy complex arrays.

Kernels of this project's own, checked against NumPy on the interpreter (the
semantics) and compiled (one function in CI, every one with --slow), relatively
and absolutely; NumPy's own formulas (Smith's division, the overflow-safe
`abs`, integer powers by multiplication) are checked at the values where they
matter (huge, tiny, zero and infinite parts); the refusals are located
`FrontendError`s naming the operation."""

import numpy as np
import pytest

import dfc

RNG = np.random.default_rng(7)


def cplx(*shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def arithmetic(z, w, x):
    a = z * w + x / z - 2.0j * x
    b = (z - w) / (w + 1.5) + z ** 2 - w ** 3 + z ** -2
    c = -np.conj(z) * 1j + np.square(w) - x * z.imag
    return a, b, c, z == w, np.abs(z) + np.angle(w), z.real - w.imag


def elementary(z, x):
    return np.exp(z), np.log(z), np.sqrt(z), np.power(z, x), z ** 0.5, np.power(z, z)


def creation(n, x, z):
    a = np.zeros((n, 3), dtype=np.complex128)
    a[0] = z[:3] + 1.0
    b = np.ones_like(z) * 2j + np.full(z.shape, 1 - 2j)
    c = np.empty((2, n), dtype=complex)
    c[:] = x[:n] * (3 + 4j)
    d = np.array(x, dtype=np.complex128) + x.astype(np.complex128).conj()
    e = np.zeros_like(x, dtype=np.complex128)
    e[1:] = z[:-1]
    return a, b, c, d, e, np.complex64(x[:2]) * 2


def promotion(z64, x32, x64, k):
    c = complex(x64[0], 2.0)  # a Python complex: weak, as NumPy's
    return z64 * x32, z64 * x64, k * 1j, x32 * 1j, z64 + 1j, np.abs(z64), k + z64, z64 * c, c * x64


def structure(A, B, idx, m):
    C = A[1:, ::2] + B[None, 0, :2].T * 0.5  # slicing, broadcasting, transpose
    D = A.copy()
    D[:, 0] = 5.0
    D[1:3] = B[:2, :4]
    D[m] = D[m] * 1j + 1.0  # a boolean mask: both parts
    E = np.concatenate((A, B[:, :4]), axis=0).reshape(4, -1)
    s = np.sum(A, axis=0) + np.mean(B) + A[idx].sum()
    return C, D, E, s, np.where(m, A, 0.5), np.transpose(A)[::-1]


def masked(z, w, m):
    """Elementwise formulas and reductions of boolean-masked reads (one mask), and a masked update."""
    s = np.sum(np.abs(z[m])) + np.mean(np.exp(z[m])) + np.sum(z[m] / (w[m] + 1.0))
    z[m] = np.sqrt(z[m]) * w[m] - 1j
    return s, z, np.sum(np.isfinite(w[m]))


def products(A, B, v):
    x = np.linalg.solve(A, v)
    return A @ B, np.dot(A, v), np.einsum("ij,jk->ik", A, B.real), np.linalg.inv(A), x, np.vdot(B, B * 1j), \
        np.linalg.norm(A)


def escape_time(re_lo, re_hi, n, steps):
    """The iteration count of z -> z^2 + c before |z| passes 2, on a grid of c."""
    c = np.linspace(re_lo, re_hi, n)[None, :] + 1j * np.linspace(-1.0, 1.0, n)[:, None]
    z = np.zeros_like(c)
    count = np.zeros(c.shape, dtype=np.int64)
    for k in range(steps):
        inside = np.abs(z) <= 2.0
        count[inside] += 1
        z[inside] = z[inside] * z[inside] + c[inside]
    return z, count


def scalar_loops(points, M):
    acc = np.zeros_like(M)
    total = 0j
    for p in points:
        T = M * p
        if abs(p) < 1.0:
            T = -T
        acc += T / p
        total = total + p * p
    return acc, total


def rebinds_a_python_complex(x, z):
    z += 1  # a Python complex argument: rebound, not updated in place
    z *= 2j
    return x * z, z


def while_and_branches(c, x):
    z = 0j  # a Python complex carried by a while loop, then names bound in the branches of an if
    n = 0
    while abs(z) <= 2.0 and n < 40:
        z = z * z + c
        n += 1
    if x[0] > 0.5:
        w = x * 1j
    else:
        w = x + z
    return z, n, w


def rotate_in_place(S, A, phase):
    for i in range(A.shape[0]):
        S[i] += A[i] @ A[i].T * np.exp(1j * phase * i)


def edge_values(z, w):
    return z / w, np.abs(z), np.sqrt(z), np.exp(z)


HUGE = np.array([1e300 + 1e300j, 3e-320 + 4e-320j, 0j, complex(np.inf, 1.0), complex(1.0, np.nan), -0.0 + 0j,
                 1e-200 + 1e200j, -1.0 + 0j, -1.7e308 + 1.5e308j, 1.7e308 - 1e308j])
EDGE_W = np.array([0j, 1e300 + 1e-300j, 1e-300 + 1e300j, 2.0 + 0j, 0j, 1.0 - 1.0j, complex(0.0, -0.0), 1e-310 + 0j,
                   1e308 + 1e308j, 3.0 - 1e-308j])

CASES = [
    (arithmetic, lambda: (cplx(4, 3), cplx(4, 3), RNG.random(3) + 0.5)),
    (arithmetic, lambda: (cplx(5, dtype=np.complex64), cplx(5, dtype=np.complex64),
                          (RNG.random(5) + 0.5).astype(np.float32))),
    (elementary, lambda: (cplx(6), RNG.random(6) * 3 - 1)),
    (creation, lambda: (4, RNG.random(5), cplx(5))),
    (promotion, lambda: (cplx(3, dtype=np.complex64), RNG.random(3).astype(np.float32), RNG.random(3),
                         np.arange(3, dtype=np.int32))),
    (structure, lambda: (cplx(3, 4), cplx(3, 5), np.array([2, 0, 1]), RNG.random((3, 4)) > 0.5)),
    (masked, lambda: (cplx(3, 4), cplx(3, 4), RNG.random((3, 4)) > 0.4)),
    (products, lambda: (cplx(4, 4) + 4 * np.eye(4), cplx(4, 2), cplx(4))),
    (escape_time, lambda: (-1.8, 0.4, 12, 8)),
    (scalar_loops, lambda: (cplx(5) * 1.2, cplx(2, 3))),
    (rebinds_a_python_complex, lambda: (cplx(2), 1 + 2j)),
    (rebinds_a_python_complex, lambda: (cplx(2), np.complex128(0.5 - 1j))),
    (while_and_branches, lambda: (0.25 + 0.5j, RNG.random(3))),
    (while_and_branches, lambda: (-0.9 + 0.3j, RNG.random(3) * 0.4)),
    (edge_values, lambda: (HUGE.copy(), EDGE_W.copy())),
]
IDS = ["arithmetic", "arithmetic-c64", "elementary", "creation", "promotion", "structure", "masked", "products",
       "escape_time", "scalar_loops", "python-complex", "numpy-complex", "while-if", "while-else", "edge_values"]


def close(got, want, scaled=True):
    """Values, dtypes and shapes as NumPy's (NaN where NumPy has NaN, infinities equal), relatively and (`scaled`)
    absolutely at the array's scale (a value from cancellation)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
        return
    single = want.dtype in (np.float32, np.complex64)
    rtol = 2e-5 if single else 1e-12
    finite = np.abs(want[np.isfinite(want)])
    scale = float(finite.max()) if finite.size and scaled else 0.0
    for g, w in ((got.real, want.real), (got.imag, want.imag)) if want.dtype.kind == "c" else ((got, want),):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * scale, equal_nan=True)


def interpreted(fn, args):
    """The results of the frontend's module on the interpreter, complex ones unpacked like NumPy's."""
    jf = dfc.jit(fn)
    f, ir_args, _ = jf.specialize(*args)
    out = dfc.interpret(f.module, f.name, *ir_args)
    return out if isinstance(out, tuple) else (out,)


def unpack(value, like):
    value = np.asarray(value)
    if np.asarray(like).dtype.kind != "c":
        return value
    z = np.ascontiguousarray(value).view(np.complex64 if value.dtype == np.float32 else np.complex128)[..., 0]
    return z


SLOW_ON_INTERPRETER = ("arithmetic-c64", "products", "escape_time")  # compiled in CI (escape_time) or with --slow


@pytest.mark.parametrize("fn, make", [pytest.param(*c, marks=pytest.mark.slow) if i in SLOW_ON_INTERPRETER else c
                                      for c, i in zip(CASES, IDS)], ids=IDS)
def test_interpreter_matches_numpy(fn, make):
    args = make()
    with np.errstate(all="ignore"):
        want = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    want = want if isinstance(want, tuple) else (want,)
    got = interpreted(fn, args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        close(unpack(g, w), w, fn is not edge_values)


@pytest.mark.parametrize("fn, make", [pytest.param(*c, marks=pytest.mark.slow) if i != "escape_time" else c
                                      for c, i in zip(CASES, IDS)], ids=IDS)
def test_compiled_matches_numpy(fn, make):
    args = make()
    with np.errstate(all="ignore"):
        want = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    got = dfc.jit(fn)(*args)
    want, got = (v if isinstance(v, tuple) else (v,) for v in (want, got))
    for g, w in zip(got, want):
        close(g, w, fn is not edge_values)


def test_in_place_update_of_complex_arguments():
    """A kernel updating a complex argument (also a strided view of one) leaves what NumPy leaves."""
    A, phase, jf = cplx(3, 2, 2), 0.3, dfc.jit(rotate_in_place)
    for S in (cplx(3, 2, 2), cplx(3, 2, 4)[:, :, ::2]):
        want = S.copy()
        rotate_in_place(want, A, phase)
        jf(S, A, phase)
        close(S, want)


def scale_row(S, z, k):
    S[k] *= z
    return S[k] * 2


def rotated(z):
    return z * 1j, np.abs(z)


def calls_helpers(S, z):
    """Plain helpers taking, updating and returning complex arrays (compiled with their caller)."""
    a = scale_row(S, z, 1)
    b, m = rotated(S[0])
    return a, b, m, S


def test_helpers_take_update_and_return_complex_arrays():
    S, z = cplx(3, 2), 0.5 - 2j
    want_S, got_S = S.copy(), S.copy()
    want = calls_helpers(want_S, z)
    f, ir_args, _ = dfc.jit(calls_helpers).specialize(got_S, z)
    got = dfc.interpret(f.module, f.name, *ir_args)
    for g, w in zip(got, want):
        close(unpack(g, w), w)


def test_result_aliasing_an_argument_is_the_argument():
    def same(z):
        z[0] = 1j
        return z

    z = cplx(3)
    assert dfc.jit(same)(z) is z and z[0] == 1j


def bad_order(z, w):
    return z * (1j < 2j)  # Python's TypeError (arrays and NumPy scalars order lexicographically)


def bad_function(z):
    return np.log10(z)


def bad_store(x, z):
    x[:] = z


def bad_median(z):
    return np.median(z)


def stale_reshape(z):
    v = z.reshape(4)  # a view of z's memory in NumPy, a separate value here
    z[0, 0] = 1j
    return v


@pytest.mark.parametrize("fn, args, message", [
    (bad_order, (cplx(2), cplx(2)), "ordering comparison ('lt') of two Python complex numbers"),
    (bad_function, (cplx(2),), "np.log10 of complex values is not supported"),
    (bad_store, (np.zeros(2), cplx(2)), "a complex value where a real one is needed"),
    (bad_median, (cplx(2),), "np.median of complex values is not supported"),
    (stale_reshape, (cplx(2, 2),), "views of the same memory in NumPy (a reshape of a named array)"),
], ids=["order", "log10", "store", "median", "stale-reshape"])
def test_refusals_are_located(fn, args, message):
    with pytest.raises(dfc.FrontendError) as err:
        dfc.jit(fn).specialize(*args)
    assert message in str(err.value) and "test_frontend_complex.py:" in str(err.value)


def real_through_complex(x, y):
    z = (x + 1j * y) * 0.7
    w = np.exp(z ** 2) / (x + 2j) * np.conj(z)
    return np.sum(np.abs(w)) + np.sum(w.real * w.imag)


def phase_product(x, y):
    return np.sum(np.abs(np.exp(1j * x) * (y + 2j)) ** 2)


@pytest.mark.parametrize("fn", [phase_product, pytest.param(real_through_complex, marks=pytest.mark.slow)],
                         ids=["phase_product", "real_through_complex"])
def test_gradient_of_a_real_function_through_complex_values(fn):
    """Complex intermediates are real operations on the parts: autodiff differentiates them (float64
    Richardson differences of the NumPy function)."""
    from support.frontend_corpus.check import gradient_error, richardson_gradient

    x, y = RNG.random(3) + 0.2, RNG.random(3) - 0.5
    f, ir_args, positions = dfc.jit(fn).specialize(x, y)
    module = f.autodiff_module((positions[0], positions[1]))
    out = dfc.interpret(module, f.name + "_grad", *ir_args, np.array(1.0))
    for k in range(2):
        assert gradient_error(out[1 + k], richardson_gradient(fn, [x, y], k)) < 1e-9


def test_complex_gradient_refused():
    def loss(z):
        return np.abs(z).sum()

    with pytest.raises(dfc.FrontendError, match="complex gradient not supported"):
        dfc.grad(loss)(cplx(3))


def test_extended_precision_complex_refused():
    with pytest.raises(dfc.FrontendError, match="extended-precision complex numbers are not supported"):
        dfc.jit(bad_function)(np.zeros(2, np.clongdouble))
