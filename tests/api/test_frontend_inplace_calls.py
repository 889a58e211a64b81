"""In-place updates through calls between jitted functions, with NumPy's
semantics: an argument the callee updates is updated in the caller when it
names the caller's memory (a named array or a basic view of one), and not when
it is a temporary; calls whose arguments alias an updated one are refused.

Each caller is compared with its NumPy twin (the same code with the plain
Python callees), forward on the interpreter and the engine and gradients
against float64 Richardson central differences."""

import types

import numpy as np
import pytest

import dfc
from support.frontend_corpus.check import RTOL64, copies, gradient_error, richardson_gradient


def log_into(Z, W):
    W[:] = np.log(Z)
    return W


def scale_rows(A, s):
    A[1:, :] *= s
    return np.sum(A)


def twice(A, s):
    scale_rows(A, s)
    scale_rows(A[:, 1:], s)
    return 0.0


def smooth(A, B):
    B[1:-1] = 0.5 * (A[:-2] + A[2:])
    return 0.0


def sqrt_log_sum(Y, W):  # the reproducer: a statement call, then a read of W
    log_into(np.sqrt(Y), W)
    return np.sum(W)


def update_view(Y, W):
    log_into(Y[1:], W[1:, :])
    return W * Y


def nested(A, s):
    twice(A, s)
    return A * A


def temporary(A, B):
    smooth(A * 2.0, B)  # smooth does not update its first argument: nothing to write back
    smooth(B, A + 0.0)  # the second argument is a temporary: NumPy drops its update
    return A + B


def time_loop(A, B):
    for t in range(3):
        smooth(A, B)
        smooth(B, A)
    return np.sum(A * A) + np.sum(B)


def updated_before_read(A, s):
    return np.sum(A * scale_rows(A, s))  # A is read after the call that updates it


JITTED_SCOPE = dict(globals())  # the callees' names bound to their jitted versions, below


def jitted(fn):
    """`fn` calling the jitted callees (the plain `fn` calls the plain ones: NumPy)."""
    return dfc.jit(types.FunctionType(fn.__code__, JITTED_SCOPE, fn.__name__))


JITTED_SCOPE.update({fn.__name__: jitted(fn) for fn in (log_into, scale_rows, twice, smooth)})


def _args(name, rng):
    y = rng.random((5, 3)) + 0.5
    return {
        "sqrt_log_sum": (y, np.zeros((5, 3))),
        "update_view": (y[:, :], rng.random((5, 3))),
        "nested": (rng.random((4, 3)), 1.5),
        "temporary": (rng.random(7), rng.random(7)),
        "time_loop": (rng.random(9), rng.random(9)),
        "updated_before_read": (rng.random((4, 3)), 0.7),
    }[name]


CALLERS = [sqrt_log_sum, update_view, nested, temporary, time_loop, updated_before_read]


@pytest.mark.parametrize("fn", CALLERS, ids=lambda f: f.__name__)
def test_forward_matches_numpy(fn):
    args = _args(fn.__name__, np.random.default_rng(0))
    want = fn(*copies(args))
    jf = jitted(fn)
    f, ir_args, _ = jf.specialize(*copies(args))
    np.testing.assert_allclose(dfc.interpret(f.module, f.name, *ir_args), want, rtol=1e-12)
    np.testing.assert_allclose(jf(*copies(args)), want, rtol=1e-12)


@pytest.mark.parametrize("fn", CALLERS, ids=lambda f: f.__name__)
def test_gradient_matches_finite_differences(fn):
    args = _args(fn.__name__, np.random.default_rng(1))
    want = fn(*copies(args))
    w = np.random.default_rng(2).standard_normal(np.shape(want)) if np.ndim(want) else 1.0
    floats = [k for k, a in enumerate(args) if isinstance(a, float | np.ndarray)]
    _, pullback = dfc.vjp(jitted(fn), *copies(args))
    grads = pullback(np.asarray(w, np.float64))

    def loss(*a):
        return float(np.sum(np.asarray(fn(*copies(a)), np.float64) * w))

    for k in floats:
        error = gradient_error(grads[k], richardson_gradient(loss, args, k))
        assert error <= RTOL64, f"gradient of argument {k}: relative error {error:.2e}"


def aliased(A):
    smooth(A, A)
    return A


def aliased_view(A):
    log_into(A[:, 0] + 1.0, A[:, 1])  # A[:, 1] is A's memory, and no other argument is
    scale_rows(A, 2.0)
    smooth(A[0], A[1])  # two views of one array, one updated: refused
    return A


@pytest.mark.parametrize("fn", [aliased, aliased_view], ids=lambda f: f.__name__)
def test_updated_argument_sharing_memory_is_refused(fn):
    with pytest.raises(dfc.FrontendError, match="updates its argument 1 in place, and argument 0 is the same array") as err:
        jitted(fn)(np.random.rand(4, 4))
    assert err.value.location and err.value.location.endswith(f":{fn.__code__.co_firstlineno + (1 if fn is aliased else 3)}:5")
