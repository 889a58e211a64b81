"""Kernels written the way scientific Python is written: arguments updated in
place with no `return`, undecorated helpers (also from another module),
default and keyword arguments, `print`.

Each kernel runs through `dfc.jit` (compiled code) on copies of its arguments
and is compared with the same Python function run by NumPy on other copies:
its result and the final contents of every argument. Gradients of a reduction
of an in-place kernel's outputs (with respect to the values the arrays held at
entry) are checked against float64 Richardson central differences."""

import inspect

import numpy as np
import pytest
from support.frontend_corpus import helpers
from support.frontend_corpus.check import RTOL64, check, copies, gradient_error, richardson_gradient

import dfc


def jacobi_1d(steps, A, B):
    for t in range(steps):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def loop_nest(A, B):
    n, m = A.shape
    for i in range(n):
        for j in range(m):
            A[i, j] = 0.5 * A[i, j] + B[j, i] * A[i, (j + 1) % m]


def add_one(x):
    x += 1


def whole_update(A, s):
    A[:] = np.tanh(A) * s
    return


def scaled_rows(A, s):
    A[1:, :] *= s
    return A  # returns the argument it updated: NumPy returns the same array


def accumulate(x, total):
    total += np.sum(x)  # a 0-d array argument: updated in place, as NumPy does
    x *= total


def sq(x):
    return x * x


def uses_helpers(x, A):
    helpers.damp_into(A)  # another module's helper, its default argument, in place
    helpers.damp_into(A[0], rate=2.0)
    return np.sum(sq(x)) + helpers.energy(A)


def scaled(x, k=2, scale=1.0):
    return x * k * scale


def calls_with_defaults(x):
    return scaled(x) + scaled(x, scale=3.0) + scaled(x, 3, scale=0.5) + scaled(scale=0.25, x=x)


def rng_args(name):
    rng = np.random.default_rng(0)
    return {
        "jacobi_1d": (4, rng.random(12), rng.random(12)),
        "loop_nest": (rng.random((3, 4)), rng.random((4, 3))),
        "add_one": (rng.random(5),),
        "whole_update": (rng.random((3, 2)), 1.5),
        "scaled_rows": (rng.random((4, 3)), 0.5),
        "accumulate": (rng.random(3), np.array(0.5)),
        "uses_helpers": (rng.random(4), rng.random((3, 2))),
        "calls_with_defaults": (rng.random(5),),
    }[name]


KERNELS = [jacobi_1d, loop_nest, add_one, whole_update, scaled_rows, accumulate, uses_helpers, calls_with_defaults]


@pytest.mark.parametrize("fn", KERNELS, ids=lambda f: f.__name__)
def test_kernel_matches_numpy_and_updates_the_arguments(fn):
    args = rng_args(fn.__name__)
    want_args, got_args = copies(args), copies(args)
    want = fn(*want_args)
    got = dfc.jit(fn)(*got_args)
    if want is None:
        assert got is None
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12)
    for k, (w, g) in enumerate(zip(want_args, got_args)):
        np.testing.assert_allclose(g, w, rtol=1e-12, err_msg=f"argument {k} after the call")
    assert any(not np.array_equal(g, a) for g, a in zip(got_args, args) if isinstance(a, np.ndarray)) or \
        fn is calls_with_defaults  # the kernels do update something


def test_returned_argument_is_the_callers_array():
    A = np.random.rand(4, 3)
    assert dfc.jit(scaled_rows)(A, 2.0) is A


def test_strided_arguments_are_updated_where_they_live():
    A, B = np.random.rand(20), np.random.rand(10, 3).T  # A[::2] is strided, B[1] a column of a C array
    want_A, want_B = A.copy(), B.copy()
    jacobi_1d(3, want_A[::2], want_B[1])
    dfc.jit(jacobi_1d)(3, A[::2], B[1])
    np.testing.assert_allclose(A, want_A, rtol=1e-12)
    np.testing.assert_allclose(B, want_B, rtol=1e-12)  # the other elements untouched, as in NumPy


# -- gradients of reductions of in-place kernels' outputs ------------------------------------------

def jacobi_energy(A, B):
    jacobi_1d(3, A, B)  # an undecorated in-place kernel, called as a statement
    return np.sum(A * B)


def loop_nest_energy(A, B):
    loop_nest(A, B)
    add_one(B)
    return np.sum(A * A) + np.sum(np.sin(B))


def returned_energy(A, s):
    R = scaled_rows(A, s)  # R is A: an update through R is one of A
    R[0, :] = 2.0
    return np.sum(A * A)


def defaults_energy(x, A):
    return uses_helpers(x, A) + np.sum(calls_with_defaults(x)) + np.sum(A)


@pytest.mark.parametrize("fn, args", [
    (jacobi_energy, lambda rng: (rng.random(10), rng.random(10))),
    (loop_nest_energy, lambda rng: (rng.random((3, 4)), rng.random((4, 3)))),
    (returned_energy, lambda rng: (rng.random((4, 3)), 0.7)),
    (defaults_energy, lambda rng: (rng.random(4), rng.random((3, 2)))),
], ids=lambda x: getattr(x, "__name__", ""))
def test_gradient_of_in_place_kernels_matches_finite_differences(fn, args):
    check(fn, args(np.random.default_rng(1)))


def test_gradient_through_the_engine():
    """Compiled: the gradient is with respect to the values at entry, and grad updates no argument."""
    args = (np.random.rand(10), np.random.rand(10))
    passed = copies(args)
    value, grads = dfc.value_and_grad(jacobi_energy, (0, 1))(*passed)
    np.testing.assert_allclose(value, jacobi_energy(*copies(args)), rtol=1e-12)
    for k, g in enumerate(grads):
        np.testing.assert_array_equal(passed[k], args[k])
        error = gradient_error(g, richardson_gradient(lambda *a: jacobi_energy(*copies(a)), args, k))
        assert error <= RTOL64, f"gradient of argument {k}: relative error {error:.2e}"


# -- defaults and keywords from Python; Python's errors for bad calls --------------------------------

def test_defaults_and_keywords_from_python():
    f = dfc.jit(scaled)
    x = np.random.rand(5)
    for args, kwargs in [((x,), {}), ((x,), {"scale": 3.0}), ((x, 3), {"scale": 0.5}), ((), {"x": x, "k": 4})]:
        np.testing.assert_allclose(f(*args, **kwargs), scaled(*args, **kwargs), rtol=1e-12)


def scaled_energy(x, k=2, *, scale=1.0):
    return np.sum(scaled(x, k, scale=scale) * x)


def test_gradients_take_keywords_and_defaults():
    x = np.random.rand(5)
    np.testing.assert_allclose(dfc.grad(scaled_energy)(x), 4 * x, rtol=1e-12)
    np.testing.assert_allclose(dfc.grad(dfc.jit(scaled_energy))(x, scale=3.0), 12 * x, rtol=1e-12)
    value, pullback = dfc.vjp(scaled_energy, x, k=3)
    np.testing.assert_allclose(value, 3 * np.sum(x * x), rtol=1e-12)
    gx, gk, gscale = pullback(1.0)
    np.testing.assert_allclose(gx, 6 * x, rtol=1e-12)
    assert gk is None and gscale == pytest.approx(3 * np.sum(x * x), rel=1e-12)  # scale: a float parameter


@pytest.mark.parametrize("args, kwargs", [((), {}), ((1.0, 2, 3.0, 4), {}), ((1.0,), {"size": 2}),
                                          ((1.0, 2), {"k": 3})])
def test_bad_calls_raise_pythons_type_error(args, kwargs):
    with pytest.raises(TypeError) as want:
        inspect.signature(scaled).bind(*args, **kwargs)
    with pytest.raises(TypeError, match=f"scaled\\(\\): {want.value}"):
        dfc.jit(scaled)(*args, **kwargs)


def test_bad_call_inside_a_jitted_function_is_located():
    def bad(x):
        return scaled(x, 1, 2.0, 3)

    with pytest.raises(dfc.FrontendError, match="scaled\\(\\): too many positional arguments") as err:
        dfc.jit(bad)(np.ones(3))
    assert err.value.location.endswith(f":{bad.__code__.co_firstlineno + 1}:16")


# -- what is refused, and where --------------------------------------------------------------------

def test_update_the_caller_could_not_see_is_refused():
    f = dfc.jit(add_one)
    frozen = np.ones(3)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="updates its argument 'x' in place, but the array passed is read-only"):
        f(frozen)
    g = dfc.jit(jacobi_1d)
    A = np.random.rand(12)
    with pytest.raises(ValueError, match="another argument shares its memory"):
        g(2, A, A[::-1])
    want = A.copy()
    jacobi_1d(2, want[::2], want[1::2])  # interleaved: no element shared
    g(2, A[::2], A[1::2])
    np.testing.assert_allclose(A, want, rtol=1e-12)
    h = dfc.jit(lambda_free_annotated)
    with pytest.raises(TypeError, match="but a list was passed: pass a NumPy array"):
        h([1.0, 2.0])


def lambda_free_annotated(x: dfc.f64[2]):
    x[0] = 3.0


twice = lambda x: 2 * x


def calls_lambda(x):
    return twice(x)


def calls_c_function(x):
    return np.unwrap(x)


def countdown(x, n):
    return countdown(x, n)


def calls_recursive(x):
    return countdown(x, 2)


@pytest.mark.parametrize("fn, message, line", [
    (calls_lambda, "a lambda .* cannot be compiled: define it with `def`", 1),
    (calls_c_function, "call of unsupported function numpy.unwrap: the frontend compiles the NumPy functions", 1),
    (countdown, "countdown calls itself with the same signature: recursion is not supported", 1),
], ids=lambda x: getattr(x, "__name__", ""))
def test_refused_calls_are_located(fn, message, line):
    with pytest.raises(dfc.FrontendError, match=message) as err:
        dfc.jit(fn)(np.ones(3), *([2] if fn is countdown else []))
    assert err.value.location.endswith(f":{fn.__code__.co_firstlineno + line}:{err.value.location.split(':')[-1]}")
    assert err.value.location.startswith(__file__)


# -- print ------------------------------------------------------------------------------------------

def prints(x):
    for i in range(2):
        print(f"step {i}", np.sum(x))
        x = x * 2.0
    return x


def test_print_is_ignored_with_a_warning_naming_its_line():
    x = np.random.rand(3)
    with pytest.warns(UserWarning, match="print\\(\\) in the compiled function prints is ignored") as record:
        np.testing.assert_allclose(dfc.jit(prints)(x), prints(x), rtol=1e-12)
    assert [(w.filename, w.lineno) for w in record] == [(__file__, prints.__code__.co_firstlineno + 2)]


def counts(x, n):
    x *= 2.0
    n += 1  # NumPy updates a 0-d array argument in place; here it is a compile-time constant


def test_update_of_a_0d_integer_array_argument_is_refused():
    with pytest.raises(dfc.FrontendError, match="'n' is a 0-d integer array argument, compiled as a constant") as err:
        dfc.jit(counts)(np.ones(2), np.array(3))
    assert err.value.location.endswith(f":{counts.__code__.co_firstlineno + 2}:5")
    x = np.ones(2)
    dfc.jit(counts)(x, 3)  # a Python int is rebound, as in Python
    np.testing.assert_array_equal(x, 2.0)
