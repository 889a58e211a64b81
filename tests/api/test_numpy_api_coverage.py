"""Every entry of the frontend's NumPy API table against NumPy itself.

`numpy_calls.HANDLERS` (NumPy, `math` and builtin functions) and
`numpy_calls.METHODS` (array methods): each case is a plain Python function
naming the callable (or method) it tests. A value case runs through `dfc.jit`
on the reference interpreter and must equal the same function run by NumPy
element by element (relative tolerance 1e-12 in float64, 1e-5 for float32
results against float64 NumPy; same shape and dtype), with each optional
argument omitted, given alone and at its edges (negative and tuple axes,
axis=None, keepdims both ways, size-1 dimensions, offsets, empty arrays,
NaN and infinities). A form the frontend refuses raises a `dfc.FrontendError`
located at the call (the line marked `# refused`). Gradient cases compare
autodiff with float64 sixth-order central differences (the corpus' check);
a subset runs compiled. `test_every_handler_has_a_case` walks HANDLERS and
METHODS, so a handler added without a case fails.
"""

from __future__ import annotations

import builtins
import inspect
import math
import warnings

import numpy as np
import pytest
from support.frontend_corpus.check import check, copies

import dfc
from dfc.frontend import numpy_calls
from dfc.frontend.numpy_fft import FFT_HANDLERS
from dfc.function import view_results

RTOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 1e-5}

rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4))                 # any sign
P = rng.uniform(0.5, 2.0, (3, 4))               # positive, away from 0 and 1
X3 = rng.standard_normal((2, 3, 4))
P3 = rng.uniform(0.5, 2.0, (2, 3, 4))
V3, V4 = rng.uniform(0.5, 2.0, 3), rng.uniform(0.5, 2.0, 4)
B45 = rng.uniform(0.5, 2.0, (4, 5))
Y = rng.standard_normal((3, 4))
I = rng.integers(-5, 6, (3, 4))                 # int64
I32 = I.astype(np.int32)
BOOL = X > 0.2
E = np.zeros((0, 3))                            # empty
S1 = rng.standard_normal((1, 4, 1))             # size-1 dims
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.5])
F32 = X.astype(np.float32)
PF32 = P.astype(np.float32)

VALUE: list[tuple] = []     # (targets, fn, args)
GRAD: list[tuple] = []      # (targets, fn, args)
SLOW_GRAD: set = set()      # fns whose gradient cases run with --slow
REFUSED: list[tuple] = []   # (targets, fn, args, message)


def values(fn, *arg_lists, of):
    """Registers `fn` called on each of `arg_lists` as a value case of `of` (a target or a tuple of them)."""
    for args in arg_lists:
        VALUE.append((of if isinstance(of, tuple) else (of,), fn, args))
    return fn


def grads(fn, *arg_lists, of, slow=False):
    """Registers `fn` (one float result) on each of `arg_lists` as a gradient case of `of` (`slow`: with
    --slow only, where a default case covers the same differentiation)."""
    for args in arg_lists:
        GRAD.append((of if isinstance(of, tuple) else (of,), fn, args))
    if slow:
        SLOW_GRAD.add(fn)
    return fn


def refused(of, message, *args):
    """Decorator: `fn(*args)` must raise a FrontendError containing `message` at its `# refused` line."""

    def register(fn):
        REFUSED.append((of if isinstance(of, tuple) else (of,), fn, args, message))
        return fn

    return register


def _name(t) -> str:
    return t if isinstance(t, str) else f"{getattr(t, '__module__', '') or ''}.{getattr(t, '__name__', t)}"


# -- elementwise functions of one argument ----------------------------------------------


def call1(f):
    def fn(x):
        return f(x)

    fn.__name__ = f"call1_{f.__name__}"
    return fn


def call1_forms(f):
    def fn(x, x32, size1, scalar, empty, special):
        return f(x), f(x32), f(size1), f(scalar), f(empty), f(special)

    fn.__name__ = f"forms_{f.__name__}"
    return fn


def call1_ints(f):
    def fn(i64, i32, b):
        return f(i64), f(i32), f(b)

    fn.__name__ = f"ints_{f.__name__}"
    return fn


def call_const(f, c):
    def fn(x):
        return f(c) + x  # folded at compile time

    fn.__name__ = f"const_{f.__name__}"
    return fn


POSITIVE_DOMAIN = {np.log, np.sqrt, np.log1p, np.log2, np.log10, np.reciprocal}
NUMPY_UNARY = [np.exp, np.log, np.sqrt, np.tanh, np.sin, np.cos, np.absolute, np.fabs, np.log1p, np.floor, np.ceil,
               np.rint, np.negative, np.sign, np.log2, np.log10, np.sinh, np.cosh, np.reciprocal, np.square]
for f in NUMPY_UNARY:
    base = P if f in POSITIVE_DOMAIN else X
    values(call1_forms(f), (base, base.astype(np.float32), S1 * 0.5 + 1.5, 1.25, E, SPECIAL), of=f)
    if f in (np.floor, np.ceil, np.absolute):
        values(call1_ints(f), (I, I32, BOOL), of=f)
    elif f is not np.reciprocal:
        values(call1(f), (I,), of=f)
    values(call_const(f, 1.75), (P,), of=f)
    if f is not np.reciprocal:  # NumPy's reciprocal of an int is an integer division: refused below
        values(call_const(f, 3), (P,), of=f)
    grads(call1(f), (base + 0.3 if f in (np.floor, np.ceil, np.rint) else base,), of=f)

HALVES = np.array([-2.5, -1.5, -0.5, -0.0, 0.5, 1.5, 2.5, 0.125, 0.375, 12.345, -7.65, 1e300, np.nan])


def rounded(x):
    return np.round(x), np.around(x, 1), np.round(x * 100.0, -1), np.round(x, decimals=2), np.round(x, 0)


def rounded_ints(i):
    return np.round(i), np.around(i, 2)


def rounded_loss(x):
    return np.sum(np.round(x * 3.0, 1) + x)


values(rounded, (HALVES,), (HALVES[:9].astype(np.float32),), (X,), (S1,), (E,), of=(np.round, np.around))  # float32: exact halves only
values(rounded_ints, (I,), (I32,), of=(np.round, np.around))
grads(rounded_loss, (X + 0.01,), of=(np.round, np.around))
values(call1(np.rint), (HALVES,), of=np.rint)


@refused(np.round, "decimals must be a constant integer", X)
def round_loop_decimals(x):
    for k in range(2):
        x = np.round(x, k)  # refused
    return x


@refused(np.around, "to negative decimals is not supported", I)
def round_ints_negative_decimals(i):
    return np.around(i, -1)  # refused


values(call1(np.sinh), (np.array([1e-9, -1e-7, 1e-5, 0.3, -0.9, 5.0, 30.0, -300.0]),), of=np.sinh)  # no cancellation
values(call1(np.sign), (np.array([3, -2, 0]),), of=np.sign)
values(call1(np.negative), (np.array([3, -2, 0], np.int32),), of=np.negative)


def scalar_math(f):
    def fn(s):
        return f(s)

    fn.__name__ = f"scalar_{f.__name__}"
    return fn


MATH_UNARY = [math.exp, math.log, math.sqrt, math.tanh, math.sin, math.cos, math.fabs, math.log1p, math.floor,
              math.ceil, math.erf, builtins.abs]
for f in MATH_UNARY:
    positive = f in (math.log, math.sqrt, math.log1p)
    values(scalar_math(f), (1.37,), (0.6,) if positive else (-0.6,), of=f)
    values(call_const(f, 2.5), (P,), of=f)
    values(call_const(f, 4), (P,), of=f)
    if f not in (math.floor, math.ceil):
        grads(scalar_math(f), (1.37,), (0.6,) if positive else (-0.6,), of=f)
values(call1(builtins.abs), (X,), (I,), (X.astype(np.float32),), of=builtins.abs)
grads(call1(builtins.abs), (X,), of=builtins.abs)


def abs_of_sizes(x):
    return x * abs(x.shape[0] - 5) + abs(-2)


values(abs_of_sizes, (X,), of=builtins.abs)


# -- elementwise functions of two arguments ---------------------------------------------


def call2(f):
    def fn(x, y):
        return f(x, y)

    fn.__name__ = f"call2_{f.__name__}"
    return fn


def call2_forms(f):
    def fn(a, b, column, row, a32, empty, nan_a, nan_b):
        return f(a, b), f(column, row), f(a, 1.5), f(1.5, b), f(a32, 2.0), f(a32, b), f(empty, empty), f(nan_a, nan_b)

    fn.__name__ = f"forms2_{f.__name__}"
    return fn


def call2_ints(f):
    def fn(i, j, i32):
        return f(i, j), f(i, 2.5), f(i32, i), f(i32, 3)

    fn.__name__ = f"ints2_{f.__name__}"
    return fn


def call2_const(f, c, first=False):
    def fn(x):
        return f(c, x) if first else f(x, c)

    fn.__name__ = f"const2_{f.__name__}"
    return fn


NUMPY_BINARY = [np.add, np.subtract, np.multiply, np.divide, np.power, np.maximum, np.minimum, np.fmax, np.fmin]
NAN_PAIR = (np.array([1.0, np.nan, np.nan, -np.inf, 2.0, -0.0]), np.array([np.nan, 2.0, np.nan, 1.0, np.inf, 0.0]))
for f in NUMPY_BINARY:
    a, b = (P, P[::-1].copy()) if f is np.power else (X, Y)
    values(call2_forms(f), (a, b, a[:, :1].copy(), b[:1, :].copy(), a.astype(np.float32), E, *NAN_PAIR), of=f)
    if f is not np.power:
        values(call2_ints(f), (I, I[::-1].copy(), I32), of=f)
    values(call2_const(f, 3), (P,), of=f)
    values(call2_const(f, 0.5, first=True), (P,), of=f)
    grads(call2(f), (a[:, :1].copy(), b), of=f)
for c in (2, 3, -2, 0, 0.5, 1.5, -1.0, 2.0):
    values(call2_const(np.power, c), (P,), (X,), of=np.power)
values(call2_const(np.power, 2), (I,), of=np.power)
values(call2_const(np.divide, 2), (I,), of=np.divide)


def math_pow(s, t):
    return math.pow(s, t) + math.pow(s, 2) + math.pow(2, 3)


values(math_pow, (1.3, 0.7), (2.0, -1.5), of=math.pow)
grads(math_pow, (1.3, 0.7), of=math.pow)


# -- reductions -------------------------------------------------------------------------


def reduce_forms(r):
    def fn(x):
        return (r(x), r(x, 1), r(x, -1), r(x, axis=None), r(x, axis=(0, 2)), r(x, axis=(-1, 0)),
                r(x, keepdims=True), r(x, keepdims=False), r(x, axis=-2, keepdims=True),
                r(x, axis=None, keepdims=True), r(x, axis=(), keepdims=False), r(x, axis=(0, 1, 2)))

    fn.__name__ = f"reduce_{r.__name__}"
    return fn


def reduce_axis(r, axis, keepdims=False):
    def fn(x):
        return r(x, axis=axis, keepdims=keepdims)

    fn.__name__ = f"reduce_axis_{r.__name__}"
    return fn


REDUCTIONS = [np.sum, np.max, np.amax, np.min, np.amin, np.prod, np.mean, np.var, np.std]
for r in REDUCTIONS:
    values(reduce_forms(r), (P3,), (P3.astype(np.float32),), (S1 + 3.0,), of=r)
    values(call1(r), (P,), (V4,), (2.5,), of=r)
    values(reduce_axis(r, 1), (np.array([[1.0, np.nan, 2.0], [0.5, 1.5, 3.0]]),), of=r)  # NaN propagates
    if r in (np.max, np.amax, np.min, np.amin):
        values(reduce_forms(r), (BOOL.reshape(2, 3, 2),), of=r)
        values(reduce_axis(r, 1), (E,), of=r)  # no lanes is fine; an empty lane is not (refused below)
    else:
        values(reduce_forms(r), (I.reshape(2, 3, 2),), (I32.reshape(2, 3, 2),), (BOOL.reshape(2, 3, 2),), of=r)
        values(reduce_axis(r, 0), (E,), of=r)
        values(call1(r), (E,), of=r)
    for axis, keep in ((None, False), ((0, -1), True)):
        grads(reduce_axis(r, axis, keep), (P3,), of=r)


def moment_ddof(r):
    def fn(x):
        return r(x, ddof=1), r(x, axis=0, ddof=1), r(x, 1, ddof=2, keepdims=True), r(x, axis=(0, 1), ddof=0)

    fn.__name__ = f"ddof_{r.__name__}"
    return fn


for r in (np.var, np.std):
    values(moment_ddof(r), (P,), (I,), of=r)


def ddof_grad_var(x):
    return np.var(x, axis=0, ddof=1)


def ddof_grad_std(x):
    return np.std(x, ddof=1)


grads(ddof_grad_var, (P,), of=np.var)
grads(ddof_grad_std, (P,), of=np.std)


# -- products and contractions ----------------------------------------------------------

C245 = rng.uniform(0.5, 2.0, (2, 4, 5))
C235 = rng.uniform(0.5, 2.0, (2, 3, 5))
A54 = rng.uniform(0.5, 2.0, (5, 4))
M26 = rng.uniform(0.5, 2.0, (2, 6))
P4 = P3[:, None].copy()  # (2, 1, 3, 4): a batch dimension broadcast against C245's
CONTRACTIONS = {
    np.dot: [(P, B45), (P, V4), (V3, P), (V4, V4), (2.5, P), (P, 2.5), (P3, C245), (P3, V4), (V3, C235),
             (P, C245), (PF32, B45.astype(np.float32))],
    np.matmul: [(P, B45), (P, V4), (V3, P), (V4, V4), (P3, C245), (P3, B45), (V4, C245), (C245, A54),
                (P3, V4), (P4, B45), (P4, C245), (PF32, B45)],
    np.inner: [(V4, V4), (P, A54), (V4, A54), (P3, V4), (P, 2.5), (P3, A54)],
    np.vdot: [(V4, V4), (P, P[::-1].copy()), (P, M26), (1.5, 2.5)],
    np.outer: [(V3, V4), (P, V3), (2.5, V4)],
}
for f, forms in CONTRACTIONS.items():
    values(call2(f), *forms, of=f)
    grads(call2(f), forms[0], forms[-2], of=f)


def einsum_case(spec, n):
    def one(a):
        return np.einsum(spec, a)

    def two(a, b):
        return np.einsum(spec, a, b)

    def three(a, b, c):
        return np.einsum(spec, a, b, c)

    fn = {1: one, 2: two, 3: three}[n]
    fn.__name__ = "einsum_" + "".join(c if c.isalnum() else "_" for c in spec)
    return fn


EINSUMS = [("ij,jk->ik", (P, B45)), ("ij,jk", (P, B45)), ("ij->ji", (P,)), ("ij->", (P,)), ("i,i", (V4, V4)),
           ("i,j->ij", (V3, V4)), ("ij,jk,kl->il", (P, B45, A54)), ("bij,bjk->bik", (P3, C245)),
           ("ij,ij->i", (P, P[::-1].copy())), (" ij , jk -> ik ", (P, B45)), ("aB,Bc", (P, B45)),
           ("ba,Ca", (P, A54.T.copy()[:, :3].T.copy())), ("ij->j", (P,)), ("i,i->i", (V4, V4))]
for spec, args in EINSUMS:
    values(einsum_case(spec, len(args)), args, of=np.einsum)
grads(einsum_case("ij,jk->ik", 2), (P, B45), of=np.einsum)
grads(einsum_case("ij,jk,kl->il", 3), (P, B45, A54), of=np.einsum)


def einsum_optimize(a, b):
    return np.einsum("ij,jk->ik", a, b, optimize=True)


values(einsum_optimize, (P, B45), of=np.einsum)


def norms(x):
    return np.linalg.norm(x), np.linalg.norm(x, None), np.linalg.norm(x, ord=None, axis=None, keepdims=False)


def norm_ord2(v):
    return np.linalg.norm(v, 2) + np.linalg.norm(v, ord=2.0)


def norm_fro(m):
    return np.linalg.norm(m, "fro")


values(norms, (V4,), (P,), (P3,), (1.5,), (I,), (E,), of=np.linalg.norm)
values(norm_ord2, (V4,), of=np.linalg.norm)
values(norm_fro, (P,), of=np.linalg.norm)


def norm_forms(v, m):
    return (np.linalg.norm(v, 1), np.linalg.norm(v, np.inf), np.linalg.norm(v, -np.inf), np.linalg.norm(v, 0),
            np.linalg.norm(m, axis=1), np.linalg.norm(m, axis=0, keepdims=True), np.linalg.norm(m, 1, axis=-1),
            np.linalg.norm(m, axis=(0, 1)), np.linalg.norm(m, "fro", axis=(1, 0)), np.linalg.norm(v.astype(int)))


values(norm_forms, (X[0], X), of=np.linalg.norm)


def norm_rows(m):
    return np.linalg.norm(m, axis=1) + np.linalg.norm(m, 1, axis=1)


grads(norm_rows, (X,), of=np.linalg.norm)
grads(call1(np.linalg.norm), (V4,), (P,), of=np.linalg.norm)


# -- shapes and views -------------------------------------------------------------------


def transposes(x):
    return (np.transpose(x), np.transpose(x, (1, 0, 2)), np.transpose(x, axes=(2, 0, 1)), np.transpose(x, (-1, 0, 1)),
            np.transpose(x, None), np.transpose(x[0, 0]))


def flips(x):
    return np.flip(x), np.flip(x, 0), np.flip(x, axis=-1), np.flip(x, axis=(0, 2)), np.flip(x, axis=None), np.flip(x[0, 0])


def reshapes(x):
    return (np.reshape(x, (4, 6)), np.reshape(x, -1), np.reshape(x, (2, -1)), np.reshape(x, shape=(6, 4)),
            np.reshape(x, (24,), order="C"), np.reshape(x, (2, 3, 4, 1)), np.reshape(x[0, 0, 0], (1, 1)),
            np.reshape(x[:1, :1, :1], ()))


def ravels(x):
    return np.ravel(x), np.ravel(x, order="C"), np.ravel(x[0, 0, 0]), np.ravel(x[0, 0])


values(transposes, (X3,), (I.reshape(2, 3, 2),), of=np.transpose)
values(flips, (X3,), (BOOL.reshape(2, 3, 2),), of=np.flip)
values(reshapes, (X3,), of=np.reshape)
values(ravels, (X3,), of=np.ravel)
values(call1(np.ravel), (E,), of=np.ravel)
for f in (np.transpose, np.flip, np.ravel):
    grads(call1(f), (X3,), of=f)


def reshape_grad(x):
    return np.reshape(x, (4, -1))


grads(reshape_grad, (X3,), of=np.reshape)


def diagonals(a):
    return (np.diagonal(a), np.diagonal(a, 1), np.diagonal(a, offset=-1), np.diagonal(a, 2, 1, 0),
            np.diagonal(a, axis1=-1, axis2=-2), np.diagonal(a, 7), np.diagonal(a, -2))


def traces(a):
    return np.trace(a), np.trace(a, 1), np.trace(a, offset=-2), np.trace(a, 1, 1, 0), np.trace(a, 9)


def diags(a, v):
    return np.diag(a), np.diag(a, 1), np.diag(a, k=-2), np.diag(v), np.diag(v, 2), np.diag(v, k=-1), np.diag(a, 8)


values(diagonals, (P,), (P.T.copy(),), (I,), (P[:3, :3].copy(),), of=np.diagonal)
values(traces, (P,), (P.T.copy(),), (I,), of=np.trace)
values(diags, (P, V3), (I, np.arange(3)), of=np.diag)
for f in (np.diagonal, np.trace, np.diag):
    grads(call1(f), (P,), of=f)


def diagonal_grad(a):
    return np.diagonal(a, 1) + np.trace(a, -1) + np.diag(a[0], -1)[1:, :3].sum(axis=0)


grads(diagonal_grad, (P,), of=(np.diagonal, np.trace, np.diag))


def concatenates(a, b, c):
    return (np.concatenate((a, b)), np.concatenate([a, b], 1), np.concatenate((a, b, c), axis=-1),
            np.concatenate((a, b), axis=None), np.concatenate((a[0], b[1], c[2])), np.concatenate((a,)),
            np.concatenate((a, b.astype(np.float32))), np.concatenate((a, (b * 10).astype(np.int64))))


def stacks(a, b):
    return (np.stack((a, b)), np.stack([a, b], 1), np.stack((a, b, a), axis=-1), np.stack((a[0], b[0]), axis=-2),
            np.stack((a,), axis=2), np.stack((a[0, 0], b[0, 0])))


values(concatenates, (X, Y, P), of=np.concatenate)
values(stacks, (X, Y), (I, I * 2), of=np.stack)


def side_stacks(a, b, v):
    """1-d, 2-d and 3-d operands, 0-d ones, mixed dtypes."""
    return (np.hstack((a, b)), np.hstack([v, v * 2.0]), np.hstack((a[0, 0], v[1], v)), np.hstack((a[None], b[None])),
            np.vstack((a, b)), np.vstack((v, v)), np.vstack((a[0], b)), np.vstack((v[0], v[1])),
            np.dstack((a, b)), np.dstack((v, v)), np.dstack((a[None], b[None])), np.dstack((v[2],)),
            np.column_stack((v, v * 3.0)), np.column_stack((a.T, v[:4])), np.column_stack((a[0], v)),
            np.hstack((a, (b * 10).astype(np.int64))), np.vstack((a.astype(np.float32), b)))


values(side_stacks, (X, Y, V4), (I, I * 2, np.arange(4)), of=(np.hstack, np.vstack, np.dstack, np.column_stack))


def at_least(a, v):
    first, second = np.atleast_1d(a, v[0])
    return (np.atleast_1d(a[0, 0]), np.atleast_1d(v), first, second, np.atleast_2d(a[0, 0]), np.atleast_2d(v),
            np.atleast_2d(a), np.atleast_3d(a[0, 0]), np.atleast_3d(v), np.atleast_3d(a), np.atleast_3d(a[None]),
            np.atleast_2d(v, a)[0] * 2.0, np.atleast_1d(2.5))


values(at_least, (X, V4), (I, np.arange(4)), of=(np.atleast_1d, np.atleast_2d, np.atleast_3d))


def concat_grad(a, b):
    return np.concatenate((a, b * 2.0), axis=-1)


def stack_grad(a, b):
    return np.stack((a, b * 2.0), axis=1)


grads(concat_grad, (X, Y), of=np.concatenate)
grads(stack_grad, (X, Y), of=np.stack)


def side_stack_grad(a, v):
    return (np.sum(np.hstack((a, a * v[:3, None])) ** 2) + np.sum(np.vstack((a, v)) * np.vstack((v, a)))
            + np.sum(np.dstack((a, a * 3.0)) ** 3) + np.sum(np.column_stack((v, v * v)) ** 3))


grads(side_stack_grad, (X, V4), of=(np.hstack, np.vstack, np.dstack, np.column_stack))


def at_least_grad(a, v):
    return np.sum(np.atleast_3d(a) ** 2 * np.atleast_2d(v)[..., None]) + np.sum(np.atleast_1d(v[0]) * v)


grads(at_least_grad, (X, V4), of=(np.atleast_1d, np.atleast_2d, np.atleast_3d))


# -- constructors -----------------------------------------------------------------------


def constructors(x):
    return (np.zeros(3), np.zeros((2, 3)), np.zeros(()), np.zeros((0,)), np.zeros(x.shape), np.zeros(4, np.float32),
            np.zeros((2,), dtype=int), np.zeros(2, dtype=bool), np.ones(3), np.ones((2, 1), dtype=np.int32),
            np.ones(x.shape[1], np.float32), np.ones((0, 2)), np.full(3, 2.5), np.full((2, 2), 7), np.full(2, True),
            np.full((2,), -2.7, dtype=int), np.full(3, 0.5, dtype=bool), np.full(2, 1.5, np.float32),
            np.full(x.shape, x[0, 0]), np.full(3, x[1, 1], dtype=np.float32), np.full(2, x[0, 0] > 0))


values(constructors, (X,), of=(np.zeros, np.ones, np.full))


def empties(x):
    a = np.empty((3, 4))
    a[:] = x
    b = np.empty(4, dtype=np.float32)
    b[:] = x[0]
    c = np.empty_like(x)
    c[:] = 2.0 * x
    d = np.empty_like(x, np.int64)
    d[:] = 3
    return a, b, c, d, np.empty((0, 2)).shape[0], np.empty_like(x[:0]).shape[0]


values(empties, (X,), of=(np.empty, np.empty_like))


def likes(x):
    return (np.zeros_like(x), np.ones_like(x), np.zeros_like(x, dtype=np.float32), np.ones_like(x, np.int64),
            np.full_like(x, 2.5), np.full_like(x, 3, dtype=np.float32), np.full_like(x, x[0, 0]),
            np.full_like(x, 2.7, int), np.zeros_like(x[:0]), np.ones_like(x[0, 0]), np.full_like(x, True, dtype=bool))


values(likes, (X,), (F32,), (I,), of=(np.zeros_like, np.ones_like, np.full_like))


def full_grad(x, s):
    return np.full((3, 4), s) * x + np.full_like(x, s) + np.zeros_like(x) + np.ones_like(x) * x


grads(full_grad, (X, 0.7), of=(np.full, np.full_like, np.zeros_like, np.ones_like))


def empty_like_grad(x):
    c = np.empty_like(x)
    c[:] = x * x
    return c


grads(empty_like_grad, (X,), of=np.empty_like)


def copies_and_arrays(x):
    a = np.copy(x)
    b = np.array(x)
    c = np.asarray(x)
    d = x.copy()
    x[0, 0] = 100.0  # a copy is unaffected; asarray is the same array
    return (a, b, c, d, np.array(x, dtype=np.float32), np.array(x, np.int64), np.asarray(x, np.float32),
            np.asarray(x, dtype=bool), np.copy(x, order="K"), np.array(x, copy=True), np.asarray(x, order="C"),
            np.array(2.5), np.asarray(x[0, 0]))


values(copies_and_arrays, (X,), (I,), of=(np.copy, np.array, np.asarray, "copy"))


def copy_grad(x):
    return np.copy(x) * np.array(x) + np.asarray(x) + x.copy()


grads(copy_grad, (X,), of=(np.copy, np.array, np.asarray, "copy"))


def aranges(x):
    return (np.arange(5), np.arange(2, 7), np.arange(1, 10, 3), np.arange(5, 2), np.arange(x.shape[0]),
            np.arange(4, dtype=float), np.arange(0, 5, 1, np.float32), np.arange(x.shape[1], dtype=np.int32),
            np.arange(0), x[0, 0] * np.arange(3))


values(aranges, (X,), of=np.arange)


def arange_in_a_loop(x):
    total = 0.0 * x[0]
    for i in range(1, x.shape[0]):
        total = total + np.sum(np.arange(i) * 1.0) + np.sum(x[i, :i] * np.arange(0, i))
    return total


values(arange_in_a_loop, (P,), of=np.arange)


# -- selection, clipping, squares ---------------------------------------------------------


def wheres(x, y):
    return (np.where(x > 0, x, y), np.where(x, 1.0, 0.0), np.where(x > y, 2, -1), np.where(x[:, :1] > 0, x, 0.5),
            np.where(True, x, y), np.where(x > 0, 1.5, 2.5), np.where(x > 0, x.astype(np.float32), 1.0))


def clips(x, lo, hi):
    return (np.clip(x, -0.5, 0.5), np.clip(x, lo, hi), np.clip(x, None, 0.5), np.clip(x, -0.5, None),
            np.clip(x, a_min=0.0, a_max=1.0), np.clip(x, min=-1.0), np.clip(x, 1.0, -1.0), np.clip(x, None, None),
            np.clip(x, lo[:, :1], 0.25))


SPECIAL2 = SPECIAL.reshape(7, 1)
values(wheres, (X, Y), (I, I[::-1].copy()), (SPECIAL2, SPECIAL2[::-1].copy()), of=np.where)
values(clips, (X, -np.abs(Y), np.abs(Y)), (I, I - 2, I + 2), (SPECIAL2, np.full((7, 1), -1.0), np.ones((7, 1))), of=np.clip)


def where_grad(x, y):
    return np.where(x > 0, x * y, y)


def clip_grad(x, lo, hi):
    return np.clip(x, lo, hi) + np.clip(x, -0.5, None)


grads(where_grad, (X, Y), of=np.where)
grads(clip_grad, (X, -np.abs(Y), np.abs(Y)), of=np.clip)


# -- builtins ---------------------------------------------------------------------------


def lengths(x):
    return x * len(x) + len(x.shape) + len(x[0]) + len((x, x, x))


values(lengths, (X,), (X3,), of=builtins.len)


def py_max(s, t, x):
    return (max(s, t), max(t, s), max(s, t, 0.5), max((s, t)), max(3, x.shape[0]), max(x.shape),
            max(x[0]), max(s, 2) * 1.0, max(x[0, 0], x[1, 1]))


def py_min(s, t, x):
    return (min(s, t), min(t, s), min(s, t, 0.5), min((s, t)), min(3, x.shape[0]), min(x.shape),
            min(x[0]), min(s, 2) * 1.0, min(x[0, 0], x[1, 1]))


for f, fn in ((builtins.max, py_max), (builtins.min, py_min)):
    values(fn, (0.3, 1.7, X), (1.7, 0.3, X), (np.nan, 1.0, X), (1.0, np.nan, X), (0.3, 0.3, X), of=f)


def py_max_grad(s, t):
    return max(s, t) * min(s, 0.5) + max(s * 2.0, t, 1.0)


grads(py_max_grad, (0.3, 1.7), (1.2, 0.4), of=(builtins.max, builtins.min))


def floats(x, s):
    return float(x[0, 0]) * 2.0, float(3), float(s), float(x.shape[0]), float(x[1, 1] > 0)


def ints(x):
    return x * int(2.7) + int(-2.7) + int(x.shape[0]) + int(7) + int(True)


values(floats, (X, 0.25), (F32, 0.25), of=builtins.float)
values(ints, (X,), of=builtins.int)


def float_grad(x, s):
    return float(x[0, 1]) * float(s) * x


grads(float_grad, (X, 0.7), of=builtins.float)


# -- array methods ----------------------------------------------------------------------


def method_reductions(x):
    return (x.sum(), x.sum(1), x.sum(axis=-1, keepdims=True), x.sum(axis=(0, 2)), x.sum(keepdims=True),
            x.max(), x.max(0), x.max(axis=(-1, -2), keepdims=True), x.min(), x.min(-1), x.min(axis=None, keepdims=True),
            x.prod(), x.prod(2), x.prod(axis=(0, 1), keepdims=True), x.mean(), x.mean(0), x.mean(axis=-1, keepdims=True),
            x.var(), x.var(1), x.var(axis=(0, 2), keepdims=True), x.var(ddof=1), x.std(), x.std(-1),
            x.std(axis=0, ddof=1, keepdims=True), x.sum(axis=()), x.mean(axis=None, keepdims=False))


values(method_reductions, (P3,), (P3.astype(np.float32),), (S1 + 2.0,), of=("sum", "max", "min", "prod", "mean", "var", "std"))


def int_method_reductions(x):
    return x.sum(), x.sum(0), x.prod(axis=1), x.mean(), x.var(0), x.std(ddof=1)


values(int_method_reductions, (I,), (BOOL,), of=("sum", "prod", "mean", "var", "std"))


def method_shapes(x):
    return (x.transpose(), x.transpose(1, 0, 2), x.transpose((2, 0, 1)), x.transpose(-1, 0, 1), x.transpose(None),
            x.reshape(4, 6), x.reshape((2, -1)), x.reshape(-1), x.reshape((24,), order="C"), x[0, 0, 0].reshape(1),
            x.ravel(), x.ravel("C"), x.flatten(), x.flatten(order="C"), x[0].ravel(), x.T, x[0].T)


values(method_shapes, (X3,), of=("transpose", "reshape", "ravel", "flatten"))


def method_matrices(a, b, v):
    return (a.dot(b), a.dot(v[:4]), v[:3].dot(a), v.dot(v), a.dot(2.0), a.diagonal(), a.diagonal(1),
            a.diagonal(offset=-1), a.diagonal(0, 1, 0), a.trace(), a.trace(2), a.trace(offset=-1, axis1=1, axis2=0))


values(method_matrices, (P, B45, rng.uniform(0.5, 2.0, 5)), of=("dot", "diagonal", "trace"))


def method_astype(x):
    return (x.astype(np.float32), x.astype(np.int64), x.astype(bool), x.astype("float64"), x.astype(int),
            x.astype(np.int32), x.astype(np.float64, copy=False), (x > 0).astype(float), x.astype(dtype=np.float32))


values(method_astype, (X * 3,), (SPECIAL[np.isfinite(SPECIAL)],), (I,), of="astype")


def unsigned_astype(x):
    return x.astype(np.uint8), x.astype(np.uint64), np.full(3, 7, dtype=np.uint8), np.full(2, 300, dtype=np.uint16)


values(unsigned_astype, (np.abs(X) * 50,), (I,), of=("astype", np.full))


def updated_results(x, i):
    a = x.flatten()
    a[0] = 100.0
    b = np.floor(i)
    b[0] = 7
    c = np.sum(x, axis=())
    c[1] = 100.0
    d = np.clip(x, None, None)
    d[2] = 100.0
    e = x.astype(np.float64)
    e[3] = 100.0
    f = np.asarray(x)  # the same array: the update is seen through x
    f[4] = -1.0
    g = np.ravel(x)  # a view of a vector
    g[5] = -2.0
    h = np.mean(x, axis=())
    h[0] = 5.0
    return x, i, a, b, c, d, e, f, g, h


values(updated_results, (rng.standard_normal(6), np.arange(6)),
       of=("flatten", np.floor, np.sum, np.clip, "astype", np.asarray, np.ravel, np.mean))


def update_through_reshape(x):
    y = x.reshape(2, 2)
    y[0, 0] = 100.0  # refused
    return x


def update_after_reshape(x):
    y = np.reshape(x, (2, 2))
    x[0] = 100.0  # refused
    return y


def update_reshaped_temporary(x):
    x.reshape(2, 2)[0, 0] = 1.0  # refused
    return x


@pytest.mark.parametrize("fn", [update_through_reshape, update_after_reshape, update_reshaped_temporary],
                         ids=lambda f: f.__name__)
def test_an_update_of_memory_a_reshape_shares_is_refused(fn):
    """NumPy's reshape of a named array is a view: an update through either name changes both; here they are
    separate values, so such an update is a located error, never a stale result."""
    with pytest.raises(dfc.FrontendError, match="views of the same memory in NumPy") as err:
        _interpret(fn, (np.arange(4.0),))
    line = next(k for k, text in enumerate(inspect.getsourcelines(fn)[0]) if "# refused" in text)
    assert err.value.location.endswith(f":{fn.__code__.co_firstlineno + line}:5")


def reshape_then_update_a_copy(x):
    y = x.reshape(2, 2).copy()
    y[0, 0] = 100.0
    z = np.ones(4)
    w = z.reshape(2, 2)
    z = w * 2.0  # the name z is rebound: the array w views is no longer reachable
    w[1, 1] = -1.0
    return x, y, w, z


values(reshape_then_update_a_copy, (np.arange(4.0),), of=())


def attributes(x):
    return x * x.ndim + x.size + x.shape[1], x.T, np.zeros(3, x.dtype)


values(attributes, (X,), (F32,), of=())

def m_reductions_grad(x):
    return (x.sum(axis=1)[:, :3] + x.max(axis=2) + x.min(-1) + x.prod(axis=(0, 2)) + x.mean(0)[:, 0]
            + x.mean(axis=(0, 2), keepdims=True)[0, :, 0] + x.var(axis=2) + x.std(ddof=1) + x.max(keepdims=True)[0])


grads(m_reductions_grad, (P3,), of=("sum", "max", "min", "prod", "mean", "var", "std"))


def m_shapes_grad(x, b):
    return (x.transpose(1, 0, 2).reshape(3, 8).ravel() + x.flatten() * 2.0 + x.copy().ravel()
            + x[0].dot(b).astype(np.float64).ravel().sum() + x[0].diagonal(1).sum() + x[1].trace())


grads(m_shapes_grad, (X3, B45), of=("transpose", "reshape", "ravel", "flatten", "copy", "dot", "astype", "diagonal", "trace"))


# -- scans, logical functions, arctan2, grids, cov (numpy_ufuncs.py, numpy_creation.py) -----


def scans(x3, p, i32, b):
    return (np.cumsum(x3), np.cumsum(x3, axis=1), np.cumsum(p, -1, dtype=np.float32), np.cumprod(p, axis=0),
            np.cumprod(p), np.cumsum(i32), np.cumsum(b, axis=0), np.cumprod(i32, 1), np.cumsum(np.ones(1)))


values(scans, (X3, P, I32, BOOL), (F32.reshape(2, 3, 2), PF32, I32, BOOL), of=(np.cumsum, np.cumprod))
grads(call1(np.cumsum), (P,), of=np.cumsum)
grads(call1(np.cumprod), (P,), of=np.cumprod)


def logicals(x, y, i):
    return (np.logical_and(x > 0, y < 0.5), np.logical_or(x, i), np.logical_xor(x > 0, True), np.logical_not(i),
            np.logical_not(x < 0), np.logical_and(True, 0), np.logical_or(0.0, 0), np.logical_xor(1, 1.5),
            np.logical_not(0))


values(logicals, (X, Y, I), of=(np.logical_and, np.logical_or, np.logical_xor, np.logical_not))


def bitwise(i, j, s):
    """Integers of each width and booleans; shift counts past the width and negative (NumPy: 0, or the sign)."""
    return (np.bitwise_and(i, j), np.bitwise_or(i, 3), np.bitwise_xor(0x35, j), np.invert(i), np.invert(i > 0),
            np.left_shift(i, s), np.right_shift(i, s), np.left_shift(1, s), np.right_shift(-100, s), i & j, i | j,
            i ^ 5, ~j, i << 2, j >> 1, (i > 0) & (j < 0), (i > 0) << (j > 0), np.bitwise_and(i > 0, 1))


SHIFTS = np.array([[0, 1, 7, 8], [9, 15, 63, -1], [2, 3, 64, -64]])
for _w in (np.int8, np.int16, np.int32, np.int64):
    values(bitwise, (I.astype(_w), (I * 7).astype(_w), SHIFTS.astype(_w)),
           of=(np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert, np.left_shift, np.right_shift))


@refused(np.bitwise_and, "needs integer or boolean operands", X, I)
def bitwise_of_floats(x, i):
    return np.bitwise_and(x, i)  # refused


def arctan2s(y, x, s):
    return np.arctan2(y, x), np.arctan2(y, 2.0), np.arctan2(s, x[0]), np.arctan2(1.0, -1.0), np.arctan2(y[0], x)


values(arctan2s, (X, Y, 0.5), (F32, F32 * 2, 0.5), (SPECIAL, SPECIAL[::-1], -0.0), of=np.arctan2)


def arctan2_loss(y, x):
    return np.arctan2(y, x)


grads(arctan2_loss, (X, P), of=np.arctan2)


def linspaces(s, t):
    y, step = np.linspace(s, t, 3, retstep=True)
    return (np.linspace(0.0, 1.0, 5), np.linspace(s, t, 7), np.linspace(2, 3, num=4, endpoint=False), y, step,
            np.linspace(0, 1, 1), np.linspace(0, 1, 0), np.linspace(t, s, 4, dtype=np.float32))


values(linspaces, (-1.5, 2.25), of=np.linspace)


def linspace_loss(s, t):
    return np.linspace(s, t, 6) ** 2


grads(linspace_loss, (0.5, 1.5), of=np.linspace)


def float_ranges(x):
    return np.arange(0.0, 1.0, 0.25) * x[0], np.arange(2.5), np.arange(1, 2, 0.3), np.arange(3.0, 0, -0.5, dtype=np.float32)


values(float_ranges, (V4,), of=np.arange)


def meshgrids(x, y, z):
    a, b = np.meshgrid(x, y)
    c, d, e = np.meshgrid(x, y, z, indexing="ij")
    f, g = np.meshgrid(x, y, sparse=True)
    return a, b, c, d, e, f, g, np.meshgrid(x)[0]


values(meshgrids, (V3, V4, rng.uniform(size=2)), of=np.meshgrid)


def meshgrid_loss(x, y):
    a, b = np.meshgrid(x, y)
    return a * b + np.sin(a)


grads(meshgrid_loss, (V3, V4), of=np.meshgrid)


def ndarrays(x):
    a, b, c = np.ndarray((2, 3)), np.ndarray(4, dtype=np.float32), np.ndarray((2,), int)  # uninitialised: filled
    a[:] = x[:2, :3]
    b[:] = 1.5
    c[:] = x.shape[0]
    return a, b, c


values(ndarrays, (P,), of=np.ndarray)


def covs(x, v):
    return np.cov(x), np.cov(x, rowvar=False), np.cov(x, bias=True), np.cov(x, ddof=0), np.cov(v), np.cov(x[:1])


values(covs, (P, V4), (I, V3), of=np.cov)
grads(call1(np.cov), (P,), of=np.cov)


def comparisons(x, y, i):
    return (np.greater(x, y), np.greater_equal(x, 0.5), np.less(i, 2), np.less_equal(x, x), np.equal(i, 2),
            np.not_equal(x, y), np.greater(1.0, 2))


values(comparisons, (X, Y, I), (SPECIAL, SPECIAL[::-1], I[0, :1]), of=(np.greater, np.greater_equal, np.less,
                                                                      np.less_equal, np.equal, np.not_equal))


def float_tests(x, i):
    return np.isnan(x), np.isinf(x), np.isfinite(x), np.isnan(i), np.isfinite(i), np.isinf(1.5)


values(float_tests, (SPECIAL, I), (X, I), of=(np.isnan, np.isinf, np.isfinite))


def mods(x, p, i):
    return np.mod(x, p), np.mod(i, 3), np.floor_divide(x, p), np.floor_divide(i, -2), np.mod(7, 3)


values(mods, (X, P, I), of=(np.mod, np.floor_divide))


def mod_loss(x, p):
    return np.mod(x, p) + np.floor_divide(x, p) * x


grads(mod_loss, (X + 0.05, P), of=(np.mod, np.floor_divide))

UNIT = rng.uniform(-0.9, 0.9, (3, 4))
TRIG = [np.arctan, np.arcsin, np.arccos, np.tan, np.expm1, np.exp2, np.deg2rad, np.radians, np.rad2deg, np.degrees]
for f in TRIG:
    values(call1_forms(f), (UNIT, UNIT.astype(np.float32), S1 * 0.5, 0.25, E, SPECIAL), of=f)
    values(call1(f), (I,), of=f)
    grads(call1(f), (UNIT,), of=f)


def hypots(x, y, s):
    return np.hypot(x, y), np.hypot(x, 2.0), np.hypot(s, 3.0), np.hypot(3, 4)


values(hypots, (X, Y, 1.5), (F32, F32, 0.5), of=np.hypot)


def hypot_loss(x, y):
    return np.hypot(x, y)


grads(hypot_loss, (P, X), of=np.hypot)


def logical_reductions(x, i, b, e):
    return (np.any(x > 1.0), np.all(x > -5.0, axis=0), np.any(b, axis=1, keepdims=True), np.all(i), np.any(e),
            np.all(e, axis=0), np.count_nonzero(x > 0), np.count_nonzero(i, axis=1), np.count_nonzero(b, axis=(0, 1),
            keepdims=True), (x > 0).any(), b.all(axis=-1), i.any(0))


values(logical_reductions, (X, I, BOOL, E), of=(np.any, np.all, np.count_nonzero, "any", "all"))

NAN_AT = X.copy()
NAN_AT[1, 2] = np.nan


def arg_extrema(x, i, b):
    return (np.argmax(x), np.argmin(x, axis=1), np.argmax(x, axis=0, keepdims=True), np.argmin(i, 0),
            np.argmax(b, axis=1), x.argmax(), x.argmin(axis=-1), i.argmax(axis=1, keepdims=True), np.argmax(x[0]))


values(arg_extrema, (X, I, BOOL), (NAN_AT, I, BOOL), (F32, I32, BOOL), of=(np.argmax, np.argmin, "argmax", "argmin"))


def sorts(x, i, b):
    y, z = x.copy(), i.copy()
    y.sort()
    z[1:].sort(axis=0, kind="stable")
    return (np.sort(x), np.sort(x, axis=0), np.sort(x, axis=None), np.sort(i, 0), np.sort(b), y, z,
            np.argsort(x), np.argsort(i, kind="stable"), np.argsort(b, axis=0, kind="stable"), x.argsort(axis=0),
            np.argsort(x, axis=None, stable=True), np.median(x), np.median(x, axis=1), np.median(x[:, :3], axis=-1),
            np.median(i, axis=0, keepdims=True), np.median(x, keepdims=True), np.median(b, 1))


values(sorts, (X, I, BOOL), (NAN_AT, I32, BOOL), (SPECIAL.reshape(1, 7), I, BOOL), (F32, I32, BOOL),
       of=(np.sort, np.argsort, np.median, "sort", "argsort"))


def quantiles(x, i):
    return (np.quantile(x, 0.3), np.quantile(x, 0.75, axis=1), np.quantile(x, 1, axis=0, keepdims=True),
            np.percentile(x, 40), np.percentile(i, 62.5, axis=0), np.percentile(x, 0, axis=-1), np.quantile(i, 0.5),
            np.percentile(x, 90.0, keepdims=True))


values(quantiles, (X, I), (NAN_AT, I32), (F32, I), of=(np.quantile, np.percentile))
def quantile_loss(x):
    return np.sum(np.quantile(x, 0.3, axis=1)) + np.percentile(x, 62.5)


grads(quantile_loss, (X,), of=(np.quantile, np.percentile))


@refused(np.percentile, "method='nearest' is not supported (only 'linear')", X)
def percentile_nearest(x):
    return np.percentile(x, 50, method="nearest")  # refused


def sorted_loss(x, w):
    y = x.copy()
    y.sort(axis=0)
    return np.sum(np.sort(x) * w) + np.sum(y * w) + np.sum(np.median(x, axis=1)) + np.median(x[:, :3])


grads(sorted_loss, (X, Y), of=(np.sort, np.median, "sort"))


@refused(np.sort, "order= (fields of a structured array) is not supported", X)
def sort_by_fields(x):
    return np.sort(x, order="a")  # refused


@refused(np.median, "np.median over several axes", X)
def median_of_two_axes(x):
    return np.median(x, axis=(0, 1))  # refused


def triangles(a, i):
    return (np.eye(3), np.eye(3, 4, 1, dtype=int), np.eye(4, M=2, k=-1), np.identity(2, dtype=np.float32),
            np.tri(3, 2, -1), np.tri(2, dtype=bool), np.tril(a), np.triu(a, 1), np.tril(i, -1), np.triu(a > 1.0),
            np.tril(np.ones((2, 3, 4)), 1))


values(triangles, (P, I), of=(np.eye, np.identity, np.tri, np.tril, np.triu))


def triangle_loss(a):
    return np.tril(a) @ np.triu(a, 1).T + np.eye(3) * a[:, :3]


grads(triangle_loss, (P,), of=(np.tril, np.triu))


SQ = rng.standard_normal((4, 4)) + 2 * np.eye(4)
SPD = SQ @ SQ.T + np.eye(4)


def linalgs(a, spd, b, c, i):
    return (np.linalg.cholesky(spd), np.linalg.det(a), np.linalg.solve(a, b), np.linalg.solve(a, c), np.linalg.inv(a),
            np.linalg.det(i), np.linalg.inv(spd[:1, :1]), np.linalg.solve(spd, b))


values(linalgs, (SQ, SPD, V4, B45, I[:, :3].T @ I[:, :3] + np.eye(3, dtype=int) * 20),
       (SQ.astype(np.float32), SPD.astype(np.float32), V4.astype(np.float32), B45.astype(np.float32), I[:2, :2]),
       of=(np.linalg.cholesky, np.linalg.det, np.linalg.solve, np.linalg.inv))


def linalg_loss(a, spd, b):
    return (np.sum(np.linalg.solve(a, b)) + np.linalg.det(a) + np.sum(np.linalg.cholesky(spd))
            + np.sum(np.linalg.inv(a) * a.T))


grads(linalg_loss, (SQ, SPD, V4), of=(np.linalg.cholesky, np.linalg.det, np.linalg.solve, np.linalg.inv))


@refused(np.linalg.solve, "takes a square matrix", P)
def solve_rectangular(a):
    return np.linalg.solve(a, a[:, 0])  # refused


@refused(np.linalg.solve, "b must have shape (4,) or (4, k)", SQ)
def solve_mismatch(a):
    return np.linalg.solve(a, a[:3, 0])  # refused


HIST = rng.uniform(0.0, 1.0, 40)
HIST[:3] = [0.0, 0.25, 1.0]  # values on edges


def histograms(x, w, i):
    a, e = np.histogram(x)
    b, f = np.histogram(x, bins=4, range=(0.0, 1.0))
    c, g = np.histogram(x, 5, weights=w)
    k, m = np.histogram(i)
    z, y = np.histogram(np.ones(4))
    return a, e, b, f, c, g, k, m, z, y


def histogram_density(x):
    d, e = np.histogram(x, 3, density=True)
    return d, e


values(histograms, (HIST, HIST[::-1], I), (HIST.astype(np.float32), HIST.astype(np.float32), I32), of=np.histogram)
values(histogram_density, (HIST,), of=np.histogram)


def histogram_loss(x, w):
    counts, _ = np.histogram(x, 4, range=(0.0, 1.0), weights=w * w)
    return counts


grads(histogram_loss, (HIST[3:] + 0.001, V4.repeat(10)[3:]), of=np.histogram)


@refused(np.histogram, "at least two increasing bin edges", V4)
def histogram_one_edge(x):
    return np.histogram(x, bins=x[:1])  # refused


def rolls(x, a, i, e):
    return (np.roll(x, 2), np.roll(x, -1), np.roll(a, 1, axis=0), np.roll(a, (1, -2), axis=(0, 1)), np.roll(a, 5),
            np.roll(x, 0), np.roll(i, 1, 1), np.roll(a, 2, axis=(0, 1)), np.roll(e, 1))


values(rolls, (V4, X, I, E), (V3.astype(np.float32), F32, I32, E), of=np.roll)


def roll_loss(a):
    return np.roll(a, 1, axis=1) * a + np.roll(a, -1)


grads(roll_loss, (X,), of=np.roll)


def averages(x, a, w, i):
    avg, wsum = np.average(a, axis=1, weights=w, returned=True)
    return (np.average(x), np.average(a, axis=0), np.average(a, axis=1, weights=w), np.average(x, weights=x),
            np.average(i), avg, wsum, np.average(a, axis=0, keepdims=True), np.average(a, weights=a))


values(averages, (V4, X, V4, I), (V4.astype(np.float32), F32, V4, I32), of=np.average)


def average_loss(a, w):
    return np.average(a, axis=1, weights=w) + np.average(a)


grads(average_loss, (X, V4), of=np.average)


# -- refusals (each `# refused` line is where the error must point) ----------------------


@refused(builtins.range, "range() is supported only", X)
def range_object(x):
    r = range(3)  # refused
    return x


def nonzero_forms(x, b, i):
    rows, columns = np.nonzero(x > 0.2)
    return rows, columns, np.argwhere(b), np.argwhere(i), np.flatnonzero(x < 0), np.nonzero(x > 9)[0]


values(nonzero_forms, (X, BOOL, I), of=(np.nonzero, np.argwhere, np.flatnonzero))


def selections(x, i):
    return np.compress(x[0] > 0, x, axis=1), np.compress(x[:, 0] > 0, x), np.extract(i > 0, i), x[x > 0.2] * 2.0


values(selections, (X, I), (F32, I32), of=(np.compress, np.extract))


def computing_with_nonzero(x):
    return np.argwhere(x) * 2, np.nonzero(x > 0)[1] + 1, x[np.nonzero(x > 0)] * 3.0


values(computing_with_nonzero, (X,), of=(np.argwhere, np.nonzero))


def uniques(x, i):
    _, first, inverse, counts = np.unique(i, return_index=True, return_inverse=True, return_counts=True)
    return np.unique(x), first, inverse, counts, np.unique(x > 0)


values(uniques, (np.round(X * 2), I), (np.array([np.nan, 1.0, np.nan, -0.0, 0.0]), I32), of=np.unique)


@refused((np.max, np.amax), "of an empty array", E)
def max_of_empty(x):
    return np.max(x, axis=0)  # refused


@refused("min", "of an empty array", E)
def min_method_of_empty(x):
    return x.min()  # refused


def min_of_ints(x):
    return np.min(x, axis=0), np.max(x[1:], axis=1), np.min(x)


values(min_of_ints, (I,), (I32,), (np.abs(I) + 1,), (-np.abs(I) - 1,), of=(np.min, np.max))


def py_max_of_int_vector(x):
    return max(x), min(x[1:])


values(py_max_of_int_vector, (I[0],), (-np.abs(I[0]) - 1,), (np.abs(I32[1]) + 1,), of=(builtins.max, builtins.min))


@refused(np.sum, "out of range", P3)
def sum_axis_out_of_range(x):
    return np.sum(x, axis=3)  # refused


@refused(np.mean, "out of range", P3)
def mean_negative_axis_out_of_range(x):
    return np.mean(x, axis=(0, -4))  # refused


@refused(np.sum, "repeats an axis", P3)
def sum_axis_repeated(x):
    return np.sum(x, axis=(0, -3))  # refused


@refused(np.prod, "unsupported keyword argument 'dtype'", P3)
def prod_dtype(x):
    return np.prod(x, dtype=np.float32)  # refused


@refused(np.sum, "takes an array and an optional axis", P3)
def sum_positional_dtype(x):
    return np.sum(x, 0, None)  # refused


@refused("sum", "takes at most 2 arguments", P3)
def sum_method_positional_keepdims(x):
    return x.sum(0, None, None, True)  # refused


@refused(np.var, "takes at most 4 arguments", P3)
def var_positional_ddof(x):
    return np.var(x, 0, None, None, 1)  # refused


@refused(np.reshape, "order='F' is not supported", X)
def reshape_fortran(x):
    return np.reshape(x, (4, 3), order="F")  # refused


@refused("reshape", "order='F' is not supported", X)
def reshape_method_fortran(x):
    return x.reshape(4, 3, order="F")  # refused


@refused(np.reshape, "cannot reshape", X)
def reshape_wrong_size(x):
    return np.reshape(x, (5, -1))  # refused


@refused(np.reshape, "cannot reshape", X)
def reshape_two_unknowns(x):
    return x.reshape(-1, -1)  # refused


@refused(np.ravel, "order='F' is not supported", X)
def ravel_fortran(x):
    return np.ravel(x, "F")  # refused


@refused("flatten", "order='F' is not supported", X)
def flatten_fortran(x):
    return x.flatten("F")  # refused


@refused("ravel", "order='A' is not supported", X)
def ravel_method_any(x):
    return x.ravel(order="A")  # refused


@refused("transpose", "unsupported keyword argument 'axes'", X3)
def transpose_method_keyword(x):
    return x.transpose(axes=(0, 2, 1))  # refused


@refused(np.transpose, "not a permutation", X3)
def transpose_repeated_axis(x):
    return np.transpose(x, (0, 0, 1))  # refused


@refused(np.transpose, "not a permutation", V4)
def transpose_vector_bad_axes(x):
    return np.transpose(x, (1,))  # refused


@refused(np.flip, "repeats an axis", X3)
def flip_repeated_axis(x):
    return np.flip(x, (0, 0))  # refused


@refused(np.reciprocal, "integer division", I)
def reciprocal_of_ints(x):
    return np.reciprocal(x)  # refused


@refused(np.reciprocal, "integer division", X)
def reciprocal_of_an_int_constant(x):
    return x + np.reciprocal(3)  # refused


@refused(np.square, "of booleans", BOOL)
def square_of_booleans(x):
    return np.square(x)  # refused


@refused(np.power, "Integers to negative integer powers are not allowed (NumPy's ValueError)", I)
def int_power_negative(x):
    return np.power(x, -1)  # refused


@refused(np.matmul, "batch dimensions (2,) and (3,) do not broadcast", P3, P)
def matmul_broadcast(a, b):
    return np.matmul(a, np.stack((b.T, b.T, b.T)))  # refused


@refused(np.matmul, "unsupported keyword argument 'axes'", P, B45)
def matmul_axes(a, b):
    return np.matmul(a, b, axes=[(0, 1), (0, 1), (0, 1)])  # refused


@refused(np.dot, "contraction sizes disagree", P, P)
def dot_mismatch(a, b):
    return np.dot(a, b)  # refused


@refused(np.dot, "of integer arrays are not supported", I, I)
def dot_of_ints(a, b):
    return np.dot(a, b.T)  # refused


@refused(np.inner, "contraction sizes disagree", V3, V4)
def inner_mismatch(a, b):
    return np.inner(a, b)  # refused


@refused(np.vdot, "contraction sizes disagree", V3, V4)
def vdot_mismatch(a, b):
    return np.vdot(a, b)  # refused


@refused(np.outer, "unsupported keyword argument 'out'", V3, V4)
def outer_out(a, b):
    return np.outer(a, b, out=a)  # refused


@refused(np.einsum, "repeated index", P)
def einsum_diagonal(a):
    return np.einsum("ii->i", a[:3, :3])  # refused


@refused(np.einsum, "ellipses", P)
def einsum_ellipsis(a):
    return np.einsum("...j->...", a)  # refused


@refused(np.einsum, "invalid subscripts", P)
def einsum_unknown_output(a):
    return np.einsum("ij->ik", a)  # refused


@refused(np.einsum, "2 subscripts for 1 operands", P)
def einsum_operand_count(a):
    return np.einsum("ij,jk->ik", a)  # refused


@refused(np.linalg.norm, "ord=3", V4)
def norm_ord3(v):
    return np.linalg.norm(v, 3)  # refused


@refused(np.linalg.norm, "ord=fro", V4)
def norm_fro_of_vector(v):
    return np.linalg.norm(v, "fro")  # refused


@refused(np.linalg.norm, "ord=1 of a matrix", P)
def norm_matrix_ord1(m):
    return np.linalg.norm(m, 1)  # refused


@refused(np.where, "three arguments", X)
def where_one_argument(x):
    return np.where(x > 0)  # refused


@refused(np.clip, "unsupported keyword argument 'out'", X)
def clip_out(x):
    return np.clip(x, 0.0, 1.0, out=x)  # refused


@refused(np.concatenate, "sizes differ outside axis", X, P3)
def concatenate_mismatch(a, b):
    return np.concatenate((a, b[0, :, :3]), axis=0)  # refused


@refused(np.concatenate, "one rank", X)
def concatenate_scalars(a):
    return np.concatenate((a[0, 0], a[1, 1]))  # refused


@refused(np.concatenate, "unsupported keyword argument 'dtype'", X)
def concatenate_dtype(a):
    return np.concatenate((a, a), dtype=np.float32)  # refused


@refused(np.stack, "out of range", V4)
def stack_axis_out_of_range(v):
    return np.stack((v, v), axis=2)  # refused


@refused(np.stack, "of one shape", V3, V4)
def stack_mismatch(a, b):
    return np.stack((a, b))  # refused


@refused(np.diagonal, "rank other than 2", X3)
def diagonal_of_3d(x):
    return np.diagonal(x)  # refused


@refused(np.trace, "same axis", X)
def trace_same_axes(x):
    return np.trace(x, 0, 1, 1)  # refused


@refused(np.diag, "rank 1 or 2", X3)
def diag_of_3d(x):
    return np.diag(x)  # refused


@refused(np.arange, "positive constant step", X)
def arange_negative_step(x):
    return np.arange(5, 0, -1)  # refused


@refused(np.arange, "float arguments and an integer dtype", X)
def arange_of_floats(x):
    return np.arange(2.5, dtype=int)  # refused


@refused(np.zeros, "unsupported keyword argument 'order'", X)
def zeros_fortran(x):
    return np.zeros((2, 2), order="F")  # refused


@refused(np.ones_like, "unsupported keyword argument 'shape'", X)
def ones_like_shape(x):
    return np.ones_like(x, shape=(2, 2))  # refused


@refused(np.array, "ndmin", X)
def array_ndmin(x):
    return np.array(x, ndmin=3)  # refused


@refused(np.asarray, "unsupported keyword argument 'like'", X)
def asarray_like(x):
    return np.asarray(x, like=x)  # refused


@refused(np.copy, "unsupported keyword argument 'subok'", X)
def copy_subok(x):
    return np.copy(x, subok=True)  # refused


def sinh_out(x):
    x = x.copy()
    return np.sinh(x, x)


def exp_out(x):
    x = x.copy()
    return np.exp(x, out=x)


def add_three(x):
    y = x.copy()
    np.add(x, x, y)
    return y


values(sinh_out, (X,), of=np.sinh)
values(exp_out, (X,), of=np.exp)
values(add_three, (X,), of=np.add)


@refused(np.fmax, "unsupported keyword argument 'where'", X)
def fmax_where(x):
    return np.fmax(x, 0.0, where=x > 0)  # refused


@refused(builtins.len, "len() of a scalar", X)
def len_of_scalar(x):
    return len(x[0, 0])  # refused


@refused(builtins.max, "unsupported keyword argument 'key'", X)
def max_key(x):
    return max(x[0, 0], x[0, 1], key=abs)  # refused


@refused(builtins.min, "takes a vector", X)
def min_of_matrix(x):
    return min(x)  # refused


@refused(builtins.int, "int() of a run-time float", X)
def int_of_data(x):
    return int(x[0, 0])  # refused


@refused(builtins.float, "float() of an array", X)
def float_of_array(x):
    return float(x)  # refused


@refused("dot", "contraction sizes disagree", P)
def dot_method_mismatch(a):
    return a.dot(a)  # refused


@refused("diagonal", "rank other than 2", X3)
def diagonal_method_3d(x):
    return x.diagonal()  # refused


@refused("trace", "expected an integer", X, 0.5)
def trace_runtime_offset(x, s):
    return x.trace(s)  # refused


@refused("copy", "unsupported keyword argument 'subok'", X)
def copy_method_subok(x):
    return x.copy(subok=True)  # refused


@refused(("var", "std"), "expected an integer", X, 0.5)
def var_runtime_ddof(x, s):
    return x.var(ddof=s)  # refused


@refused("mean", "keepdims must be a constant", X, 0.5)
def mean_runtime_keepdims(x, s):
    return x.mean(keepdims=s > 0)  # refused


@refused("prod", "out of range", X)
def prod_method_axis(x):
    return x.prod(axis=-3)  # refused


@refused("max", "unsupported keyword argument 'initial'", X)
def max_method_initial(x):
    return x.max(initial=0.0)  # refused


# -- sequences along an axis (numpy_sequences.py) ----------------------------------------------

I8 = rng.integers(-100, 100, (3, 5)).astype(np.int8)
U8 = rng.integers(0, 200, 6).astype(np.uint8)
A5, V3 = rng.standard_normal(5), rng.standard_normal(3)


def diffs(x, i8, u, b, f32):
    return (np.diff(x), np.diff(x, 2, axis=0), np.diff(x, n=0), np.diff(x, prepend=0.0, append=x[:, :1]),
            np.diff(i8, axis=-2, prepend=1), np.diff(u), np.diff(b), np.diff(f32, append=np.float32(1.5)),
            np.diff(f32, prepend=2.0))


def ptps(x, i8, u, f32):
    return np.ptp(x), np.ptp(x, axis=0), np.ptp(i8, 1, keepdims=True), np.ptp(u), np.ptp(f32, axis=(0, 1))


def trapezoids(x, i8, f32, a5):
    return (np.trapezoid(x), np.trapezoid(x, axis=0, dx=0.5), np.trapezoid(x, a5[:4]), np.trapezoid(x, x * x, axis=0),
            np.trapezoid(i8), np.trapezoid(f32, dx=2.0))


def slidings(a, v, i8, b):
    """Every mode, each array the longer one (NumPy swaps them), integers (wrapping) and booleans."""
    return (np.convolve(a, v), np.convolve(v, a, mode="same"), np.convolve(a, v, "valid"), np.convolve(v, a, "valid"),
            np.convolve(a, v, "same"), np.correlate(a, v, "full"), np.correlate(v, a, "full"),
            np.correlate(a, v, "same"), np.correlate(v, a, "same"), np.correlate(a, v), np.correlate(v, a),
            np.convolve(i8[0], i8[1, :3]), np.correlate(i8[0], i8[1, :4], "same"), np.convolve(b[0], b[1]),
            np.correlate(a, a), np.convolve(a[:1], v), np.correlate(a[:4], a, "same"))


def closes(x, f32, i8):
    z = np.array([np.nan, np.inf, -np.inf, 1.0, 0.0])
    return (np.isclose(x, x + 1e-9), np.isclose(x, x + 1e-3, rtol=1e-2), np.isclose(z, z),
            np.isclose(z, z, equal_nan=True), np.isclose(i8, i8 + 1, atol=1), np.isclose(f32, f32 * np.float32(1.000001)),
            np.allclose(x, x + 1e-9), np.allclose(x, x + 1.0), np.isclose(z, np.inf), np.isclose(x, x[0]))


def tiles(x, i8, b, a5):
    return (np.tile(x, 2), np.tile(x, (2, 1, 3)), np.tile(a5, (3, 2)), np.tile(i8, (2, 0)), np.tile(b, (1, 2)),
            np.repeat(x, 2), np.repeat(x, 3, axis=1), np.repeat(i8, 2, axis=-2), x.repeat(2, 0), np.repeat(b, 0),
            np.repeat(a5, 1))


def flips_lr_ud(x, a5, i8):
    return np.fliplr(x), np.flipud(x), np.flipud(a5), np.fliplr(i8)


def clip_arrays(x, i8):
    return np.clip(x, x[0], x[:, 1:2]), np.clip(i8, i8[0], 50), np.clip(x, None, x[1])


def sequences_loss(x, a, v):
    d = np.diff(x, prepend=x[:, :1] * 2.0, axis=1) + np.tile(x[0], (3, 1)) + np.repeat(x[:, :2], 2, axis=1)
    c = np.convolve(a, v, "same") * np.correlate(v, a, "full")[:5]
    return np.sum(d * d) + np.ptp(x) + np.trapezoid(x, a[:4]).sum() + np.sum(c) + np.fliplr(x)[0, 0] * np.flipud(x)[0, 1]


values(diffs, (X, I8, U8, BOOL, F32), of=np.diff)
values(ptps, (X, I8, U8, F32), of=np.ptp)
values(trapezoids, (X, I8, F32, A5), of=np.trapezoid)
values(slidings, (A5, V3, I8, BOOL), of=(np.convolve, np.correlate))
values(closes, (X, F32, I8), of=(np.isclose, np.allclose))
values(tiles, (X, I8, BOOL, A5), of=(np.tile, np.repeat, "repeat"))
values(flips_lr_ud, (X, A5, I8), of=(np.fliplr, np.flipud))
values(clip_arrays, (X, I8), of=np.clip)
grads(sequences_loss, (X, A5, V3), of=(np.diff, np.ptp, np.trapezoid, np.convolve, np.correlate, np.tile, np.repeat,
                                        np.fliplr, np.flipud))


def repeat_method_loss(x):
    return np.sum(x.repeat(3, axis=1) ** 2)


grads(repeat_method_loss, (X,), of="repeat")


@refused(np.repeat, "needs one constant count", X)
def repeat_counts(x):
    return np.repeat(x, (1, 2, 0))  # refused


@refused(np.convolve, "takes two 1-d arrays", X)
def convolve_2d(x):
    return np.convolve(x, x)  # refused


# -- searches in sorted sequences (numpy_search.py) and histogram edges ------------------------

SORTED6 = np.sort(rng.standard_normal(6))
SORTED_NAN = np.array([-1.0, 0.0, 0.0, 2.0, np.nan])
PROBES_NAN = np.array([np.nan, 0.0, -5.0, 5.0, 2.0])
SORTED_I32 = np.array([1, 3, 3, 7], np.int32)
SORTED_U8 = np.array([2, 9, 200], np.uint8)
SHUFFLE = rng.permutation(6)
XP5, FP5 = np.sort(rng.uniform(-2, 2, 5)), rng.standard_normal(5)
GRID13 = np.linspace(-3, 3, 13)


def searches(s, v, sn, vn, i, u, order):
    """Both sides, NaN (sorted last) among values and probes, ties, integer and unsigned dtypes, a sorter,
    scalar probes, the method."""
    shuffled = s[order]
    return (np.searchsorted(s, v), np.searchsorted(s, v, side="right"), np.searchsorted(sn, vn),
            np.searchsorted(sn, vn, "right"), np.searchsorted(i, np.array([0, 3, 8], np.int16)),
            np.searchsorted(i, 3, side="right"), np.searchsorted(s, 0.5),
            np.searchsorted(shuffled, v, sorter=np.argsort(shuffled)), s.searchsorted(v[0]),
            np.searchsorted(u, np.array([1, 200, 250], np.uint8)), np.searchsorted(s, s), np.searchsorted(s, s, "right"))


def digitizes(v, s, i, vn):
    """Increasing and decreasing bins, right both ways, values on the edges, NaN, one bin edge."""
    return (np.digitize(v, s), np.digitize(v, s, right=True), np.digitize(v, s[::-1]), np.digitize(v, s[::-1], True),
            np.digitize(s, s), np.digitize(s, s, right=True), np.digitize(s, s[::-1]), np.digitize(s, s[::-1], True),
            np.digitize(i, np.array([0, 3, 5])), np.digitize(vn, s), np.digitize(v, s[:1]))


def interps(x, xp, fp, xn):
    """Outside on both sides (default and given left/right), on the nodes, NaN, one node, a scalar, float32 x."""
    return (np.interp(x, xp, fp), np.interp(x, xp, fp, left=-7.0, right=9.0), np.interp(xp, xp, fp),
            np.interp(xn, xp, fp), np.interp(x, xp[:1], fp[:1]), np.interp(0.1, xp, fp),
            np.interp(x.astype(np.float32), xp, fp))


def searches_compiled(sn, vn, xp, i):
    """One compiled case of each search: NaN among values and probes, the interval ends, integer bins."""
    return (np.searchsorted(sn, vn, "right"), np.digitize(vn, sn[:4], right=True), np.interp(vn, xp, xp * 2.0),
            np.bincount(i, vn[:4], minlength=8))


def bincounts(i, u, w):
    return (np.bincount(i, minlength=9), np.bincount(u, minlength=201), np.bincount(i, w[:4], minlength=8),
            np.bincount(i, weights=i, minlength=12))


def histogram_given_edges(x, i):
    """Explicit (uneven) edges: values on them, outside them, NaN; range= ignored as NumPy ignores it."""
    a, e = np.histogram(x, np.array([-1.0, 0.0, 0.5, 2.0]))
    b, f = np.histogram(x, bins=np.array([-3.0, 0.0, 0.25]), range=(0.0, 1.0), weights=x * x)
    c, g = np.histogram(i, np.array([-5, 0, 1, 5]), density=True)
    return a, e, b, f, c, g


def searches_loss(x, xp, fp, w):
    counts, _ = np.histogram(x, np.array([-2.0, 0.0, 1.0, 3.0]), weights=w)
    return np.sum(np.interp(x, xp, fp) ** 2) + np.sum(np.bincount(np.array([0, 2, 2]), w[:3], minlength=4) ** 2) + \
        np.sum(counts * counts)


def bool_searches(b, u):
    """Booleans: False sorts before True, trapezoid adds them as NumPy does (logical or)."""
    return (np.trapezoid(b), np.searchsorted(np.sort(b[0]), b[1]), np.digitize(b[2], np.array([False, True])),
            np.bincount(b[0], minlength=3), np.digitize(u, np.array([0, 2, 9], np.uint8), right=True))


values(bool_searches, (BOOL, SORTED_U8), of=(np.trapezoid, np.searchsorted, np.digitize, np.bincount))
values(searches, (SORTED6, Y[:2, :3], SORTED_NAN, PROBES_NAN, SORTED_I32, SORTED_U8, SHUFFLE),
       of=(np.searchsorted, "searchsorted"))
values(digitizes, (Y[:2, :3], SORTED6, I32, PROBES_NAN), of=np.digitize)
values(interps, (GRID13, XP5, FP5, PROBES_NAN), of=np.interp)
values(bincounts, (SORTED_I32, SORTED_U8, SORTED6), of=np.bincount)
values(histogram_given_edges, (np.concatenate([X.ravel(), [0.0, 0.5, 2.0, 5.0, np.nan]]), I), of=np.histogram)
grads(searches_loss, (GRID13 * 0.9 + 0.013, XP5, FP5, GRID13 * 0.1 + 1.0), of=(np.interp, np.bincount))


@refused(np.bincount, "pass minlength=", SORTED_I32)
def bincount_unbounded(i):
    return np.bincount(i)  # refused


@refused(np.interp, "period= is not supported", GRID13)
def interp_period(x):
    return np.interp(x, x, x, period=2.0)  # refused


def test_bincount_value_past_minlength_is_an_index_error():
    """NumPy's result would be longer than minlength: both engines raise IndexError, never a shorter result."""
    for bad in (np.array([1, 5]), np.array([-1, 2])):
        with pytest.raises(IndexError):
            _interpret(bincount_bounded, (bad,))
        with pytest.raises(IndexError, match="out of bounds"):
            dfc.jit(bincount_bounded)(bad)


def bincount_bounded(i):
    return np.bincount(i, minlength=5)


# -- np.linalg.qr (Householder as LAPACK's: Q and R equal NumPy's, signs included) ----------------

TALL53, WIDE35 = rng.standard_normal((5, 3)), rng.standard_normal((3, 5))
TRIANGULAR = np.array([[1.0, 2.0, 0.0], [0.0, -3.0, 1.0], [0.0, 0.0, -2.0]])  # tau = 0: R keeps its signs


def qrs(a, t, w, z):
    q, r = np.linalg.qr(a)
    q2, r2 = np.linalg.qr(t)
    q3, r3 = np.linalg.qr(w, mode="complete")
    q4, r4 = np.linalg.qr(t, "complete")
    q5, r5 = np.linalg.qr(z)
    return q, r, q2, r2, q3, r3, q4, r4, np.linalg.qr(w, mode="r"), q5, r5


def qr_tall(t):
    return np.linalg.qr(t)


def qr_loss(a, t):
    q, r = np.linalg.qr(a)
    q2, r2 = np.linalg.qr(t)
    return np.sum(q * np.arange(16.0).reshape(4, 4)) + np.sum(r ** 2) + np.sum(q2[:, 0] * 3.0) + np.sum(r2)


values(qrs, (rng.standard_normal((3, 3)), TALL53, WIDE35, TRIANGULAR),
       (rng.standard_normal((4, 4)), TALL53.astype(np.float32), WIDE35.astype(np.float32), TRIANGULAR), of=np.linalg.qr)
grads(qr_loss, (rng.standard_normal((4, 4)), TALL53), of=np.linalg.qr)


# -- np.linalg.eigh/eigvalsh (Jacobi rotations; eigenvectors NumPy's up to their signs) -------------------

def eighs(a):
    """Eigenvalues of each triangle, sign-free functions of the eigenvectors (tests/api/test_frontend_eigh.py
    compares the vectors themselves)."""
    w, v = np.linalg.eigh(a)
    return w, np.sum(v ** 4, axis=0), np.linalg.eigvalsh(a, UPLO="U")


def eigh_loss(a):
    """Through the Jacobi loop (a data-dependent while loop): eigenvalues and within-column products."""
    w, v = np.linalg.eigh(a)
    return np.sum(w * np.arange(1.0, 5.0)) + np.sum(v[0, :] * v[1, :] * w) + np.sum(np.linalg.eigvalsh(a, "U") ** 2)


values(eighs, (rng.standard_normal((4, 4)),), of=(np.linalg.eigh, np.linalg.eigvalsh))
grads(eigh_loss, (rng.standard_normal((4, 4)),), of=(np.linalg.eigh, np.linalg.eigvalsh),
      slow=True)  # the same Jacobi rotations in a data-dependent while loop as svd_loss


# -- np.linalg.svd/svdvals (one-sided Jacobi; U and Vh NumPy's up to each pair's sign) ----------------------

def svds(a):
    """Singular values, sign-free functions of the vectors (tests/api/test_frontend_svd.py compares the vectors
    themselves) and the singular-value norms."""
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return s, np.sum(u ** 4, axis=0), np.sum(vh ** 4, axis=1), np.linalg.svdvals(a.T), np.linalg.norm(a, "nuc")


def svd_loss(a):
    """Through the Jacobi loop (a data-dependent while loop): singular values, within-pair products, pinv, cond."""
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(s * np.arange(1.0, 3.0)) + np.sum(u[0, :] * u[2, :] * s) + np.sum(vh[:, 0] * vh[:, 1]) + \
        np.sum(np.linalg.svdvals(a) ** 3) + np.sum(np.linalg.pinv(a) * np.arange(6.0).reshape(2, 3)) + \
        np.linalg.cond(a) + np.linalg.cond(a, -2)


values(svds, (rng.standard_normal((4, 3)),), of=(np.linalg.svd, np.linalg.svdvals))
grads(svd_loss, (rng.standard_normal((3, 2)),), of=(np.linalg.svd, np.linalg.svdvals, np.linalg.pinv, np.linalg.cond))


def pseudo(a, r):
    """pinv (default, rtol=None, rcond), matrix_rank (default, tol, rtol) of a full-rank and a rank-1 matrix, cond."""
    return (np.linalg.pinv(a), np.linalg.pinv(r), np.linalg.pinv(a.T, rtol=None), np.linalg.pinv(a, 0.3),
            np.linalg.matrix_rank(a), np.linalg.matrix_rank(r), np.linalg.matrix_rank(a, tol=0.5),
            np.linalg.matrix_rank(a, rtol=0.3), np.linalg.cond(a), np.linalg.cond(a.T, -2), np.linalg.cond(r * 0.0))


values(pseudo, (rng.standard_normal((4, 3)), np.outer([1.0, 2.0, 3.0, 4.0], [1.0, -1.0, 2.0])),
       of=(np.linalg.pinv, np.linalg.matrix_rank, np.linalg.cond))


@refused(np.linalg.cond, "np.linalg.cond with p='fro' is not supported", B45)
def cond_fro(a):
    return np.linalg.cond(a, "fro")  # refused


@refused(np.linalg.qr, "mode 'raw' is not supported", B45)
def qr_raw(a):
    return np.linalg.qr(a, mode="raw")  # refused


@pytest.mark.slow
def test_qr_compiled_gradient():
    check(qr_loss, (rng.standard_normal((4, 4)), TALL53), engine=True)


# -- np.fft (numpy_fft.py): complex results compared by their parts ----------------------

frng = np.random.default_rng(11)
FX = frng.standard_normal((3, 5))
FZ = frng.standard_normal((3, 5)) + 1j * frng.standard_normal((3, 5))
TRANSFORMS = (np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft, np.fft.fft2, np.fft.ifft2, np.fft.fftn, np.fft.ifftn,
              np.fft.rfft2, np.fft.irfft2, np.fft.rfftn, np.fft.irfftn)


def ffts(x, z):
    a, b, c = np.fft.fft(x), np.fft.ifft(z, n=4, axis=0, norm="ortho"), np.fft.rfft(x, n=7, norm="forward")
    d, e, f = np.fft.fft2(z, s=(2, 3)), np.fft.ifft2(x, axes=(1, 0)), np.fft.fftn(z, axes=(0,))
    g, h, k = np.fft.ifftn(z, norm="forward"), np.fft.rfft2(x), np.fft.rfftn(x, s=(4, 3), axes=(0, 1))
    return (a.real, a.imag, b.real, b.imag, c.real, c.imag, d.real, d.imag, e.real, e.imag, f.real, f.imag, g.real,
            g.imag, h.real, h.imag, k.real, k.imag, np.fft.irfft(z), np.fft.irfft(z, n=7, axis=0, norm="ortho"),
            np.fft.irfft2(z), np.fft.irfftn(z, s=(3, 6), axes=(0, 1)), np.fft.irfftn(x))


values(ffts, (FX, FZ), (frng.integers(-5, 6, (3, 5)), FZ[:, :3]), of=TRANSFORMS)


def hermitian_ffts(x, z):
    """hfft of complex and real halves, n odd and even, an axis, each norm; ihfft and its conjugate parts."""
    a, b = np.fft.ihfft(x), np.fft.ihfft(x, n=4, axis=0, norm="ortho")
    return (np.fft.hfft(z), np.fft.hfft(z, n=7, axis=0, norm="ortho"), np.fft.hfft(z, 4, norm="forward"),
            np.fft.hfft(x, norm="backward"), a.real, a.imag, b.real, b.imag, np.fft.ihfft(x, 6, norm="forward").imag)


def hermitian_loss(x):
    return np.sum(np.fft.hfft(x) ** 2) + np.sum(np.fft.hfft(x[::-1], n=9) * np.arange(9.0)) + \
        np.sum(np.abs(np.fft.ihfft(x * x, axis=0)))


values(hermitian_ffts, (FX, FZ), of=(np.fft.hfft, np.fft.ihfft))
grads(hermitian_loss, (FX,), of=(np.fft.hfft, np.fft.ihfft))


def fft_helpers(x, z):
    s = np.fft.ifftshift(z, axes=1)
    return (np.fft.fftfreq(5), np.fft.fftfreq(6, 0.25), np.fft.rfftfreq(7, d=2.0), np.fft.rfftfreq(1),
            np.fft.fftshift(x), np.fft.fftshift(x, axes=(0,)), np.fft.ifftshift(x), s.real, s.imag)


values(fft_helpers, (FX, FZ), of=(np.fft.fftfreq, np.fft.rfftfreq, np.fft.fftshift, np.fft.ifftshift))


def fft_loss(x):
    w = np.sin(np.arange(15.0).reshape(3, 5))
    spectrum = np.abs(np.fft.rfft(x)) + np.fft.fft(x).real[:, :3] + np.fft.rfftn(x).imag
    back = np.fft.irfft(np.fft.fft2(x)[:, :3]) + np.fft.irfft2(np.fft.rfft2(x * w), s=(3, 4))
    other = np.fft.fftn(x, axes=(0,)).real + np.fft.ifftn(x).real + np.fft.ifft2(x).imag + np.fft.ifft(x).imag
    return (np.sum(spectrum * w[:, :3]) + np.sum(back * w[:, :4]) + np.sum(other * w)
            + np.sum(np.fft.irfftn(np.fft.rfft(x), s=(3, 5)) * np.fft.fftshift(w)) + np.sum(np.fft.ifftshift(x) * w))


# with --slow: nn.dft's gradient (every kind, scaling, length and axis) is checked against torch and finite
# differences in tests/dialects/test_nn_fft.py, and the handlers' crops, pads and rolls are generic data movement
grads(fft_loss, (FX,), of=(*TRANSFORMS, np.fft.fftshift, np.fft.ifftshift), slow=True)


@refused(np.fft.rfft, "np.fft.rfft of a complex array (NumPy's TypeError: it takes a real signal)", FZ)
def rfft_of_complex(z):
    return np.fft.rfft(z)  # refused


@refused(np.fft.ihfft, "np.fft.ihfft of a complex array (NumPy's TypeError: it takes a real signal)", FZ)
def ihfft_of_complex(z):
    return np.fft.ihfft(z)  # refused


@refused(np.fft.fft, "np.fft.fft with out= is not supported", FX)
def fft_out(x):
    return np.fft.fft(x, out=x)  # refused


@refused(np.fft.fftn, "np.fft.fftn's s and axes differ in length (1 and 2)", FX)
def fftn_mismatched(x):
    return np.fft.fftn(x, s=(3,), axes=(0, 1))  # refused


# -- running the cases ------------------------------------------------------------------


def _interpret(fn, args):
    f, ir_args, _ = dfc.jit(fn).specialize(*copies(args))
    return view_results(dfc.interpret(f.module, f.name, *ir_args), f.result_views)  # unsigned results: their dtype


def _numpy(fn, args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*copies(args))


def _float64(args):
    return [a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a for a in args]


def assert_same(got, want, reference, where=""):
    """`got` (dfc) has `want`'s (NumPy's) shape and dtype and equals `reference` (NumPy in float64)
    element by element, relatively (NaN where it is NaN, infinities exactly)."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), f"{where}: {len(want)} results expected"
        for k, (g, w, r) in enumerate(zip(got, want, reference)):
            assert_same(g, w, r, f"{where}[{k}]")
        return
    g, w, r = np.asarray(got), np.asarray(want), np.asarray(reference)
    assert g.shape == w.shape, f"{where}: shape {g.shape}, NumPy {w.shape}"
    if isinstance(want, bool):
        assert g.dtype == np.bool_, f"{where}: dtype {g.dtype}, Python bool"
    elif isinstance(want, int):
        assert g.dtype.kind == "i", f"{where}: dtype {g.dtype}, Python int"
    elif isinstance(want, float):
        assert g.dtype.kind == "f", f"{where}: dtype {g.dtype}, Python float"
    else:
        assert g.dtype == w.dtype, f"{where}: dtype {g.dtype}, NumPy {w.dtype}"
    if g.dtype.kind in "biu":
        np.testing.assert_array_equal(g, r, err_msg=where)
    else:
        np.testing.assert_allclose(g.astype(np.float64), r, rtol=RTOL[g.dtype], atol=0, equal_nan=True, err_msg=where)


# -- the rest of NumPy's ufuncs (numpy_ufuncs_more.py; grids of extremes: test_frontend_ufuncs_more.py) ------
def ufuncs_more(x, y, p, i, j):
    return (np.arcsinh(x), np.arccosh(p + 1.0), np.arctanh(x / 4.0), np.cbrt(x), np.trunc(x * 3.0), np.fix(x * 3.0),
            np.copysign(x, y), np.signbit(x), np.positive(x), np.conjugate(x), np.heaviside(x, 0.5), np.sinc(x),
            np.nan_to_num(x), np.float_power(p, y), np.fmod(x * 3.0, p), np.logaddexp(x, y), np.logaddexp2(x, y),
            np.nextafter(x, y), np.spacing(x), np.ldexp(x, i), np.frexp(x)[0], np.frexp(x)[1], np.modf(x * 3.0)[0],
            np.modf(x * 3.0)[1], np.divmod(x * 3.0, p)[0], np.divmod(x * 3.0, p)[1], np.vecdot(x, y),
            np.matvec(x, p[0]), np.vecmat(p[:, 0], x), np.gcd(i, j), np.lcm(i, j), np.bitwise_count(j))


def ufuncs_more_loss(x, y, p):
    return (np.sum(np.arcsinh(x) + np.arccosh(p + 1.0) + np.arctanh(x / 4.0) + np.cbrt(p) + np.copysign(x, y)
                   + np.positive(x) + np.conjugate(x) + np.sinc(x) + np.nan_to_num(x) + np.float_power(p, y)
                   + np.fmod(x * 3.0, p) + np.logaddexp(x, y) + np.logaddexp2(x, y) + np.ldexp(x, 2)
                   + np.frexp(p * 0.7)[0] + np.modf(x * 3.0)[0] + np.divmod(x * 3.0, p)[1])
            + np.sum(np.vecdot(x, y)) + np.sum(np.matvec(x, p[0])) + np.sum(np.vecmat(p[:, 0], x)))


_MORE = (np.arcsinh, np.arccosh, np.arctanh, np.cbrt, np.trunc, np.fix, np.copysign, np.signbit, np.positive,
         np.conjugate, np.heaviside, np.sinc, np.nan_to_num, np.float_power, np.fmod, np.logaddexp, np.logaddexp2,
         np.nextafter, np.spacing, np.ldexp, np.frexp, np.modf, np.divmod, np.vecdot, np.matvec, np.vecmat, np.gcd,
         np.lcm, np.bitwise_count)
values(ufuncs_more, (X, Y, P, I, I * 2 + 1), of=_MORE)
grads(ufuncs_more_loss, (X, Y, P), of=tuple(f for f in _MORE if f not in (
    np.trunc, np.fix, np.signbit, np.heaviside, np.nextafter, np.spacing, np.gcd, np.lcm, np.bitwise_count)))


@refused((np.linalg.eig, np.linalg.eigvals), "a general matrix's eigenvalues, complex", X[:3, :3])
def general_eigenvalues(a):
    return np.linalg.eigvals(a) + np.linalg.eig(a)[0]  # refused


@refused(np.isnat, "datetime64/timedelta64", X)
def is_not_a_time(x):
    return np.isnat(x)  # refused


ALWAYS_REFUSED = {np.linalg.eig, np.linalg.eigvals, np.isnat}
"""Handlers that refuse every call though not made by `_unsupported` (a refusal case each)."""


def _ids(cases):
    seen: dict[str, int] = {}
    out = []
    for case in cases:
        base = f"{'+'.join(_name(t) for t in case[0]) or 'attributes'}-{case[1].__name__}"
        seen[base] = seen.get(base, -1) + 1
        out.append(f"{base}-{seen[base]}")
    return out


@pytest.mark.parametrize("targets, fn, args", VALUE, ids=_ids(VALUE))
def test_value(targets, fn, args):
    """dfc equals NumPy: same shapes and dtypes, values within RTOL of NumPy in float64."""
    want = _numpy(fn, args)
    reference = _numpy(fn, _float64(args))
    assert_same(_interpret(fn, args), want, reference, fn.__name__)


@pytest.mark.parametrize("targets, fn, args", [pytest.param(*c, marks=pytest.mark.slow) if c[1] in SLOW_GRAD else c
                                              for c in GRAD], ids=_ids(GRAD))
def test_gradient(targets, fn, args):
    """autodiff of the frontend's IR equals float64 central differences of the NumPy function (rtol 1e-9)."""
    check(fn, args)


def _refusal_line(fn) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if "# refused" in line)


@pytest.mark.parametrize("targets, fn, args, message", REFUSED, ids=[f"{'+'.join(map(_name, c[0]))}-{c[1].__name__}" for c in REFUSED])
def test_refused(targets, fn, args, message):
    """An unsupported form is a FrontendError at the call's line, never a number."""
    with pytest.raises(dfc.FrontendError) as err:
        _interpret(fn, args)
    assert message in err.value.message, err.value.message
    assert "internal error" not in err.value.message
    path, line, _col = err.value.location.rsplit(":", 2)
    assert path.endswith("test_numpy_api_coverage.py") and int(line) == _refusal_line(fn), err.value.location


# -- compiled (the engine): every handler once, in a few functions ------------------------


def compiled_elementwise(x, p, y, i):
    return (np.exp(x), np.log(p), np.sqrt(p), np.tanh(x), np.sin(x), np.cos(x), np.absolute(x), np.fabs(x),
            np.log1p(p), np.floor(x), np.ceil(x), np.negative(x), np.sign(x), np.log2(p), np.log10(p), np.sinh(x),
            np.cosh(x), np.reciprocal(p), np.square(x), abs(x), np.add(x, y), np.subtract(x, 1.5), np.multiply(x, y),
            np.divide(x, p), np.power(p, y), np.power(x, 3), np.power(p, -0.5), np.maximum(x, y), np.minimum(x, 0.0),
            np.fmax(x, y), np.fmin(x, y), np.where(x > y, x, y), np.clip(x, -0.5, y), np.sign(i), np.floor(i),
            np.divide(i, 4), np.maximum(i, 1), np.square(i), np.sum(i, axis=0), np.prod(i > 0, axis=1))


def compiled_scalars(s, t, x):
    return (math.exp(s), math.log(t), math.sqrt(t), math.tanh(s), math.sin(s), math.cos(s), math.fabs(s),
            math.log1p(t), math.floor(s), math.ceil(s), math.erf(s), abs(s), math.pow(t, s), max(s, t), min(s, t),
            max(x[0]), min(x[1]), float(x[0, 0]) + float(x.shape[0]) + int(2.5) + len(x))


def compiled_reductions(p3, p):
    return (np.sum(p3, axis=-1), np.max(p3, axis=(0, 2), keepdims=True), np.amax(p3), np.min(p3, 1),
            np.amin(p3, axis=None, keepdims=True), np.prod(p3, axis=0), np.mean(p3, axis=(1, 2)), np.var(p3, axis=-1),
            np.std(p3, ddof=1), np.linalg.norm(p), p3.sum(0), p3.max(axis=1), p3.min(keepdims=True), p3.prod(-1),
            p3.mean(axis=0, keepdims=True), p3.var(axis=(0, 1)), p3.std(2), np.trace(p, 1), p.trace(), np.sum(p3),
            np.max(p3 > 1.0, axis=0), np.min(p3 > 0.6, axis=2))


def compiled_shapes(x3, p, v):
    a = np.empty((2, 3))
    a[:] = p[:2, :3]
    b = np.empty_like(v)
    b[:] = v * 2.0
    return (np.transpose(x3, (2, 0, 1)), np.flip(x3, (0, -1)), np.reshape(x3, (4, -1)), np.ravel(x3), x3.ravel(),
            x3.flatten(), x3.reshape(6, 4), x3.transpose(1, 0, 2), x3.T, np.concatenate((p, p * 2.0), axis=1),
            np.concatenate((v, v), axis=None), np.stack((v, v * 3.0), axis=-1), np.diag(v, 1), np.diag(p, -1),
            np.diagonal(p, 1), p.diagonal(), np.zeros((2, 3)), np.ones(4, np.float32), np.full((2, 2), 3.5),
            np.full(3, p[0, 0]), np.zeros_like(p), np.ones_like(v), np.full_like(p, 2), a, b, np.arange(1, 9, 3),
            np.arange(4, dtype=float), np.copy(p), np.array(p, np.float32), np.asarray(p, dtype=int), p.copy(),
            p.astype(np.int32), (p > 1.0).astype(float), p.astype(bool))


def compiled_contractions(p, b, v3, v4, p3, c):
    return (np.dot(p, b), np.dot(p, v4), np.dot(p3, c), np.matmul(p, b), np.matmul(p3, c), np.inner(p, p),
            np.inner(v4, p), np.vdot(p, p), np.outer(v3, v4), np.einsum("ij,jk->ik", p, b),
            np.einsum("bij,bjk->bik", p3, c), np.einsum("ij,jk,kl->il", p, b, b.T), np.einsum("ij->", p), p.dot(v4),
            np.linalg.norm(v4, 2), np.linalg.norm(p, "fro"))


def compiled_loss(x, p, y):
    a = np.sum(np.exp(x) * np.tanh(y) + np.log(p) * np.sinh(x) + np.fmax(x, y) + np.clip(x, -0.5, 0.5))
    return a + np.var(p, axis=0).sum() + np.max(x, axis=1).sum() + np.einsum("ij,ij->", x, y) + np.trace(np.dot(x, y.T))


COMPILED = [
    (compiled_elementwise, (X, P, Y, I)),
    (compiled_scalars, (0.4, 1.3, X)),
    (compiled_reductions, (P3, P)),
    (compiled_shapes, (X3, P, V4)),
    (compiled_contractions, (P, B45, V3, V4, P3, C245)),
    (sorts, (NAN_AT, I, BOOL)),
    (slidings, (A5, V3, I8, BOOL)),
    (searches_compiled, (SORTED_NAN, PROBES_NAN, XP5, SORTED_I32)),
    (qr_tall, (TALL53,)),
]
COMPILED_SLOW = [
    (diffs, (X, I8, U8, BOOL, F32)),
    (tiles, (X, I8, BOOL, A5)),
    (closes, (X, F32, I8)),
    (searches, (SORTED6, Y[:2, :3], SORTED_NAN, PROBES_NAN, SORTED_I32, SORTED_U8, SHUFFLE)),
    (interps, (GRID13, XP5, FP5, PROBES_NAN)),
    (bincounts, (SORTED_I32, SORTED_U8, SORTED6)),
    (histogram_given_edges, (np.concatenate([X.ravel(), [0.0, 0.5, 2.0, 5.0, np.nan]]), I)),
    (trapezoids, (X, I8, F32, A5)),
    (ptps, (X, I8, U8, F32)),
]


@pytest.mark.parametrize("fn, args", COMPILED, ids=[c[0].__name__ for c in COMPILED])
def test_compiled(fn, args):
    """Compiled code (the engine) equals NumPy like the interpreter does."""
    want = _numpy(fn, args)
    assert_same(dfc.jit(fn)(*copies(args)), want, _numpy(fn, _float64(args)), fn.__name__)


@pytest.mark.slow
@pytest.mark.parametrize("fn, args", COMPILED_SLOW, ids=[c[0].__name__ for c in COMPILED_SLOW])
def test_compiled_more(fn, args):
    """The rest of the sequence and search functions compiled (CI compiles one case of each module)."""
    test_compiled(fn, args)


def test_compiled_gradient():
    """dfc.vjp of compiled code (elementwise, a moment, a max, contractions) equals central differences."""
    check(compiled_loss, (X, P, Y), engine=True)


# -- the walk ---------------------------------------------------------------------------

NO_GRADIENT = {
    np.trunc: "piecewise constant", np.fix: "piecewise constant", np.signbit: "booleans",
    np.heaviside: "piecewise constant", np.nextafter: "the next float (bits)", np.spacing: "the float's ulp (bits)",
    np.gcd: "integers", np.lcm: "integers", np.bitwise_count: "integers", np.linalg.eig: "refused",
    np.linalg.eigvals: "refused", np.isnat: "refused",
    np.linalg.matrix_rank: "an integer",
    np.zeros: "no float input", np.ones: "no float input", np.empty: "no float input", np.arange: "integers",
    builtins.len: "an integer", builtins.int: "an integer", math.floor: "a Python int", math.ceil: "a Python int",
    builtins.range: "refused", np.nonzero: "an integer", np.argwhere: "an integer", np.ndarray: "no float input",
    np.flatnonzero: "an integer", np.compress: "a selection (x[m]'s gradient: test_frontend_dynamic_use.py)",
    np.extract: "a selection (x[m]'s gradient: test_frontend_dynamic_use.py)",
    np.logical_and: "booleans", np.logical_or: "booleans", np.logical_xor: "booleans", np.logical_not: "booleans",
    np.greater: "booleans", np.greater_equal: "booleans", np.less: "booleans", np.less_equal: "booleans",
    np.equal: "booleans", np.not_equal: "booleans", np.isnan: "booleans", np.isinf: "booleans",
    np.isfinite: "booleans", np.any: "booleans", np.all: "booleans", "any": "booleans", "all": "booleans",
    np.count_nonzero: "an integer", np.argmax: "an integer", np.argmin: "an integer", "argmax": "an integer",
    "argmin": "an integer", np.argsort: "an integer", "argsort": "an integer", np.eye: "no float input", np.identity: "no float input", np.tri: "no float input",
    np.unique: "a data-dependent shape", np.bitwise_and: "integers", np.bitwise_or: "integers", np.bitwise_xor: "integers",
    np.invert: "integers", np.left_shift: "integers", np.right_shift: "integers",
    np.isclose: "booleans", np.allclose: "booleans", np.searchsorted: "an integer", "searchsorted": "an integer",
    np.digitize: "an integer", np.fft.fftfreq: "no float input", np.fft.rfftfreq: "no float input",
}


def _always_refuses(key, handler) -> bool:
    return handler.__qualname__.startswith("_unsupported.") or key in ALWAYS_REFUSED


def test_every_handler_has_a_case():
    """Each HANDLERS key (numpy_calls' and numpy_fft's, which complex_calls dispatches to) and METHODS name
    has a value case (a refusal case when its handler refuses every call) and a gradient case unless listed
    in NO_GRADIENT; the cases name nothing else."""
    valued = {t for targets, _, _ in VALUE for t in targets}
    refusals = {t for targets, *_ in REFUSED for t in targets}
    graded = {t for targets, _, _ in GRAD for t in targets}
    handlers = {**numpy_calls.HANDLERS, **FFT_HANDLERS}
    table = list(handlers) + list(numpy_calls.METHODS)
    missing = [_name(k) for k in handlers if k not in (refusals if _always_refuses(k, handlers[k]) else valued)]
    missing += [f".{k}()" for k in numpy_calls.METHODS if k not in valued]
    assert not missing, f"handlers without a value case: {missing}"
    ungraded = [_name(k) for k in table if k not in graded and k not in NO_GRADIENT]
    assert not ungraded, f"handlers without a gradient case (or a NO_GRADIENT reason): {ungraded}"
    stale = [_name(t) for t in valued | refusals | graded | set(NO_GRADIENT) if t not in table]
    assert not stale, f"cases of callables the table does not have: {stale}"
