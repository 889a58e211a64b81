"""`while` loops, `break`/`continue`, early `return` and iteration over arrays
(`for v in x`, `enumerate`, `zip`, tuples) in jitted functions,
written as scientific Python writes them (Newton iterations, searches, guarded
accumulations).

Forward values against NumPy (the reference interpreter and compiled code);
gradients of the differentiable forms (a `for` loop with break/continue is an
`scf.for` with flags, an early return an `scf.if`) against float64 Richardson
differences, a `while` whose trip count depends on the data included (autodiff
counts its trips and replays them); refusals with their message and location."""

import numpy as np
import pytest
from support.frontend_corpus.check import check, copies

import dfc


def newton_sqrt(x, tol):
    y = x.copy()
    it = 0
    while np.max(np.abs(y * y - x)) > tol and it < 50:
        y = 0.5 * (y + x / y)
        it += 1
    return y, it


def first_negative(x):
    n = x.shape[0]
    i = 0
    while i < n and x[i] >= 0:  # short circuit: x[n] is never read
        i += 1
    return i


def bisect(a, b, c):
    lo, hi = 0.0, 2.0
    while True:
        mid = 0.5 * (lo + hi)
        if np.sum(a * mid * mid + b * mid) > c:
            hi = mid
        else:
            lo = mid
        if hi - lo < 1e-10:
            break
    return lo


def countdown_update(x, steps):
    k = steps
    while k > 0:
        x[k % x.shape[0]] += 1.0  # an in-place update carried by the while loop
        k -= 1
        if k == 2:
            continue
        x *= 0.5


def while_else(x):
    i = 0
    found = -1
    while i < x.shape[0]:
        if x[i] > 0.9:
            found = i
            break
        i += 1
    else:
        found = x.shape[0]
    return found


def sum_until_negative(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0:
            break
        if x[i] > 0.5:
            continue
        s += x[i] * x[i]
    return s


def nested_break(A):
    total = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            if A[i, j] > 0.8:
                break  # the inner loop only
            total += np.sin(A[i, j])
        else:
            total += 1.0
    return total


def for_else(x, t):
    acc = np.zeros_like(x)
    for i in range(x.shape[0]):
        acc[i] = x[i] * t
        if x[i] * t > 1.0:
            break
    else:
        acc *= 2.0
    return np.sum(acc * acc)


def early_return(x, flag):
    if flag > 0:
        return np.sum(x * 2.0)
    y = x + 1.0
    if np.sum(y) > 100.0:
        return np.sum(np.sqrt(y))
    return np.sum(y * y)


def early_static(x, k):
    if k == 0:
        return np.sum(x)
    return np.sum(x * k)


def early_tuple(x, s):
    if s > 0.5:
        return x * s, np.sum(x)
    return x, np.sum(x) * s


def early_none(x):
    if x[0] > 0.5:
        return
    x *= 2.0


def iterations(x, A):
    s = 0.0
    for v in x:
        s += v * v
    for i, v in enumerate(x):
        s += i * v
    for k, (a, b) in enumerate(zip(x, x[::-1]), 1):
        s += k * a * b
    for row in A:
        s += np.sum(np.sin(row))
    for c in (1.0, 2.0, 3.0):  # unrolled
        s += c * x[0]
    for r in A:
        r *= 2.0  # a view: updates A, as NumPy's iterator does
    for v in x:
        if v > 0.7:
            break
        s += v
    for j in np.arange(1, x.shape[0], 2):  # a range: j is an integer
        s += x[j] * j
    return s + np.sum(A * A)


FORWARD = [
    (iterations, lambda r: (r.random(5), r.random((3, 2)))),
    (newton_sqrt, lambda r: (r.random(4) + 1.0, 1e-12)),
    (first_negative, lambda r: (np.array([1.0, 2.0, -1.0, 3.0]),)),
    (first_negative, lambda r: (np.array([1.0, 2.0]),)),
    (bisect, lambda r: (r.random(3), r.random(3), 1.0)),
    (countdown_update, lambda r: (r.random(4), 6)),
    (while_else, lambda r: (np.array([0.1, 0.95, 0.2]),)),
    (while_else, lambda r: (np.array([0.1, 0.5, 0.2]),)),
    (sum_until_negative, lambda r: (np.array([0.2, 0.7, 0.1, -1.0, 0.3]),)),
    (nested_break, lambda r: (r.random((4, 5)),)),
    (for_else, lambda r: (r.random(5), 1.5)),
    (for_else, lambda r: (r.random(5), 0.5)),
    (early_return, lambda r: (r.random(3), 1.0)),
    (early_return, lambda r: (r.random(3), -1.0)),
    (early_return, lambda r: (r.random(3) * 100, -1.0)),
    (early_static, lambda r: (r.random(3), 0)),
    (early_static, lambda r: (r.random(3), 2)),
    (early_tuple, lambda r: (r.random(3), 0.7)),
    (early_tuple, lambda r: (r.random(3), 0.2)),
    (early_none, lambda r: (np.array([0.7, 0.1]),)),
    (early_none, lambda r: (np.array([0.2, 0.1]),)),
]


def _same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    elif want is None:
        assert got is None
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("engine", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["interpreter", "compiled"])
@pytest.mark.parametrize("fn, args", FORWARD, ids=[f.__name__ for f, _ in FORWARD])
def test_forward_matches_numpy(fn, args, engine):
    a = args(np.random.default_rng(0))
    want_args, got_args = copies(a), copies(a)
    want = fn(*want_args)
    jf = dfc.jit(fn)
    if engine:
        got = jf(*got_args)
        for w, g in zip(want_args, got_args):
            np.testing.assert_allclose(g, w, rtol=1e-12)  # in-place updates too
    else:
        f, ir_args, _ = jf.specialize(*got_args)
        got = dfc.interpret(f.module, f.name, *ir_args)
        got = tuple(got) if isinstance(got, list) else got
        if want is None:
            return
    _same(got, want)


@pytest.mark.parametrize("fn, args", [
    (iterations, lambda r: (np.array([0.2, 0.5, 0.1, 0.9, 0.3]), r.random((3, 2)))),
    (sum_until_negative, lambda r: (np.array([0.2, 0.7, 0.1, -1.0, 0.3]),)),
    (nested_break, lambda r: (np.array([[0.1, 0.9, 0.3], [0.2, 0.3, 0.4]]),)),
    (for_else, lambda r: (r.random(5), 1.5)),
    (for_else, lambda r: (r.random(5) * 0.1, 0.5)),
    (early_return, lambda r: (r.random(3), 1.0)),
    (early_return, lambda r: (r.random(3), -1.0)),
], ids=lambda x: getattr(x, "__name__", ""))
def test_gradients_through_break_continue_and_early_return(fn, args):
    check(fn, args(np.random.default_rng(3)))


def newton_loss(x):
    y, _ = newton_sqrt(x, 1e-12)
    return np.sum(np.sin(y))


def growth_loss(x, w):
    """Sums and products of arrays, as many times as the data say."""
    h, p = x.copy(), w.copy()
    while np.sum(h) < 20.0:
        h, p = h * w + x, p * np.tanh(h)
    return np.sum(h * p)


@pytest.mark.parametrize("engine", [False, True], ids=["interpreter", "compiled"])
@pytest.mark.parametrize("fn, args", [
    (newton_loss, lambda r: (np.array([2.0, 3.0, 0.5]),)),
    (growth_loss, lambda r: (np.array([0.3, 0.5, 0.2, 0.4]), np.array([1.1, 1.3, 0.9, 1.2]))),
], ids=["newton", "growth"])
def test_gradient_through_a_data_dependent_while(fn, args, engine):
    """Autodiff counts the trips and replays them (an scf.for with a tape)."""
    check(fn, args(None), engine=engine)


def test_gradient_of_newton_sqrt_is_the_derivative_of_sqrt():
    x = np.array([2.0, 3.0, 0.5])
    np.testing.assert_allclose(dfc.grad(newton_loss)(x), np.cos(np.sqrt(x)) / (2 * np.sqrt(x)), rtol=1e-10)


def find_first(x, t):
    for i in range(x.shape[0]):
        if x[i] > t:
            return x[i] * 2.0, i  # a return in a loop: results and a flag set, every loop broken
    return 0.0, -1


def first_row_above(A, t):
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            if A[i, j] > t:
                return A[i, :] * t  # out of both loops
    return A[0, :]


def accumulate_until(x):
    k = 0
    s = 0.0
    while k < x.shape[0]:
        s += x[k] * x[k]
        if s > 1.0:
            return s
        k += 1
    return -s


@pytest.mark.parametrize("fn, args", [
    (find_first, (np.array([0.1, 0.5, 0.9]), 0.4)),
    (find_first, (np.array([0.1, 0.5, 0.9]), 0.95)),
    (first_row_above, (np.array([[0.1, 0.2], [0.7, 0.3], [0.9, 0.1]]), 0.5)),
    (first_row_above, (np.array([[0.1, 0.2], [0.7, 0.3]]), 1.5)),
    (accumulate_until, (np.array([0.3, 0.6, 0.9, 0.2]),)),
    (accumulate_until, (np.array([0.1, 0.2]),)),
], ids=lambda x: getattr(x, "__name__", ""))
def test_return_inside_loops(fn, args):
    f, ir_args, _ = dfc.jit(fn).specialize(*copies(args))
    got = dfc.interpret(f.module, f.name, *ir_args)
    _same(tuple(got) if isinstance(got, list) else got, fn(*copies(args)))


def search_loss(x, t):
    v, i = find_first(x, t)
    return v + np.sum(first_row_above(np.outer(x, x), t)) * i


def test_gradient_through_returns_in_loops():
    check(search_loss, (np.array([0.1, 0.5, 0.9]), 0.4))


def mixed_returns(x):
    if x[0] > 0:
        return x
    x += 1.0


def endless(x):
    n = 3
    while n > 0:
        x += 1.0
    return x


def changes_type(x):
    y = 0
    while y < 3:
        y = x * 2.0
    return y


def returns_in_loop_else(x):
    for i in range(x.shape[0]):
        if x[i] > 0:
            break
    else:
        return -1
    return i


@pytest.mark.parametrize("fn, message, line", [
    (returns_in_loop_else, "return in the else block of a loop is not supported", 5),
    (mixed_returns, "returns different numbers of values on different paths", 2),
    (endless, "this while loop never ends", 2),
    (changes_type, "changes its type or shape in the loop", 2),
])
def test_refusals_are_located(fn, message, line):
    with pytest.raises(dfc.FrontendError, match=message) as err:
        dfc.jit(fn).specialize(np.random.rand(3))
    assert f"{__file__}:{fn.__code__.co_firstlineno + line}:" in str(err.value)


def ci_compiled(x, steps):
    """One compiled function for CI (the sweep above runs compiled with --slow): a while loop carrying an
    array and an int, a for loop with break and continue, an early return."""
    countdown_update(x, steps)
    i = first_negative(x - 1.0)
    if i == 0:
        return sum_until_negative(x), i
    return sum_until_negative(x) + 1.0, i


def test_compiled_in_ci():
    a = (np.random.default_rng(4).random(5), 5)
    want_args, got_args = copies(a), copies(a)
    _same(dfc.jit(ci_compiled)(*got_args), ci_compiled(*want_args))
    np.testing.assert_allclose(got_args[0], want_args[0], rtol=1e-12)
