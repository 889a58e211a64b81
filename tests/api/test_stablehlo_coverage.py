"""Every StableHLO op `convert-stablehlo` handles, against JAX in float64.

Each case is a JAX function with arguments (edge values included: zeros,
negatives, infinities and NaN where the op defines them, size-1 and empty
dimensions where legal). It is lowered by JAX with 64-bit types, imported by
`dfc.from_jax`, run on the interpreter and compared with JAX's result element
by element (integers and booleans exactly; floats within a relative tolerance,
NaN where JAX gives NaN). Cases marked differentiable also compare the
gradient of `sum(f(x) * w)` (w fixed, random) from dfc's `autodiff` with
`jax.grad`.

`test_every_handled_op_has_a_case` reads the op names off the StableHLO text
the cases lower to, and fails when an op of the conversion's tables
(`UNARY`, `BINARY`, the `Converter.on_*` handlers) or of the StableHLO column
of `dialects/nn_names.py` appears in none. Ops JAX does not emit (`dot`,
`logistic`, `if`, `get_dimension_size`, the dynamic_* ops) are covered by hand-written modules (`HAND_WRITTEN`)
compared with the same computation in JAX.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

from dfc import CompileError, interpret  # noqa: E402
from dfc.compiler.pass_manager import PassManager  # noqa: E402
from dfc.dialects.nn_names import EXTERNAL_NAMES  # noqa: E402
from dfc.importers.stablehlo_import import from_jax, import_stablehlo  # noqa: E402
from dfc.passes import convert_stablehlo as cs  # noqa: E402

RTOL, FLOOR = 1e-12, 1e-13
"""A float element may differ from JAX's by RTOL of its magnitude, or by FLOOR times the
largest magnitude of the output (a value near 0 from cancellation)."""

rng = np.random.default_rng(0)


def normal(*shape):
    return rng.standard_normal(shape)


def ints(*shape, low=-7, high=8, dtype=np.int32):
    return rng.integers(low, high, shape).astype(dtype)


INT_MIN, INT_MAX = np.iinfo(np.int32).min, np.iinfo(np.int32).max
EDGE = np.array([-np.inf, -2.5, -1.5, -1.0, -0.5, -0.0, 0.0, 0.5, 1.5, 2.5, 3.7, np.inf, np.nan])
"""Values where rounding, signs and non-finite inputs matter."""
POSITIVE = np.abs(normal(3, 4)) + 0.1
UNIT = rng.uniform(-0.99, 0.99, (3, 4))
SPD = normal(3, 3) @ normal(3, 3).T + 3 * np.eye(3)
CHLO_EDGE = np.array([-np.inf, -1e300, -30.0, -5.5, -3.0, -1.0, -0.999, -1e-8, -0.0, 0.0, 1e-300, 0.5, 0.999, 1.0,
                      2.0, 7.9, 8.1, 26.0, 27.5, 170.0, 1e10, 1e300, np.inf, np.nan])
"""Where the chlo decompositions switch formulas, their poles and the ends of their domains."""


def _cases():
    """name -> (function, arguments, differentiable)."""
    x34, y34 = normal(3, 4), normal(3, 4)
    i34, j34 = ints(3, 4), ints(3, 4, low=1, high=5)
    b34, c34 = normal(3, 4) > 0, normal(3, 4) > 0
    cases = {
        # unary, on finite values (differentiable) and on EDGE
        "abs": (jnp.abs, [x34], True),
        "cbrt": (lax.cbrt, [x34], True),
        "ceil_floor": (lambda x: jnp.ceil(x) + 10 * jnp.floor(x), [EDGE], False),
        "cosine_sine_tan": (lambda x: jnp.cos(x) + jnp.sin(2 * x) * jnp.tan(x), [x34], True),
        "exponential": (jnp.exp, [x34], True),
        "exponential_minus_one": (jnp.expm1, [x34 * 1e-3], True),
        "log": (jnp.log, [POSITIVE], True),
        "log_plus_one": (jnp.log1p, [POSITIVE * 1e-4], True),
        "sigmoid": (jax.nn.sigmoid, [x34 * 4], True),
        "negate": (lambda x, i: (-x, -i), [x34, i34], True),
        # complex numbers (packed as real pairs, passes/stablehlo_complex.py): complex, real, imag and fft
        "complex_fft": (lambda x, y: (jnp.real(jnp.fft.fft(lax.complex(x, y))),
                                      jnp.imag(jnp.fft.ifft2(lax.complex(x, y))),
                                      jnp.abs(jnp.fft.rfft(x)), jnp.fft.irfft(lax.complex(x, y))), [x34, y34], True),
        "not": (lambda i, b: (~i, jnp.logical_not(b)), [i34, b34], False),
        "round_nearest_afz": (lax.round, [EDGE], False),
        "round_nearest_even": (jnp.round, [EDGE], False),
        "rsqrt": (lax.rsqrt, [POSITIVE], True),
        "sign": (jnp.sign, [EDGE], False),
        "sqrt": (jnp.sqrt, [POSITIVE], True),
        "sqrt_negative": (jnp.sqrt, [EDGE], False),
        "tanh": (jnp.tanh, [x34], True),
        "is_finite": (jnp.isfinite, [EDGE], False),
        # chlo's elementwise ops (passes/stablehlo_chlo.py)
        "chlo_square": (jnp.square, [normal(4)], True),
        "chlo_asin": (lambda x: jnp.arcsin(x / 4), [normal(4)], True),
        "chlo_hyperbolic": (lambda x: (jnp.sinh(x), jnp.cosh(x), jnp.arctan(x), jnp.arcsinh(x)), [x34], True),
        "chlo_inverse_trig": (lambda u: (jnp.arcsin(u), jnp.arccos(u), jnp.arctanh(u), jnp.arccosh(2 - u)), [UNIT],
                              True),
        "chlo_special": (lambda x, u: (lax.erf(x), lax.erfc(x * 3), lax.erf_inv(u), lax.lgamma(x * 3),
                                       lax.digamma(x * 3)), [x34, UNIT], True),
        "chlo_edges": (lambda x: (jnp.sinh(x), jnp.cosh(x), jnp.arcsinh(x), jnp.arccosh(x), jnp.arcsin(x),
                                  jnp.arctanh(x), lax.erf(x), lax.erfc(x), lax.erf_inv(x), lax.lgamma(x),
                                  lax.digamma(x)), [CHLO_EDGE], False),
        "chlo_bessel_polygamma": (lambda x: (jax.scipy.special.i1e(x * 3),
                                             jax.scipy.special.polygamma(1, jnp.abs(x) + 0.5)), [x34], True),
        "chlo_zeta": (lambda q: jax.scipy.special.zeta(3.0, q), [POSITIVE], False),
        "next_after": (lax.nextafter, [EDGE, EDGE[::-1].copy()], False),
        # JAX's LAPACK calls on CPU (passes/stablehlo_lapack.py): potrf, then trsm twice
        "lapack_potrf_trsm": (lambda a, b: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor((a + a.T) / 2), b),
                              [SPD, normal(3, 2)], True),
        "lapack_getrf": (lambda a, b: (jnp.linalg.solve(a, b), jax.scipy.linalg.lu_factor(a)[0]),
                         [normal(4, 4), normal(4, 2)], True),
        "lapack_getrf_zero_column": (lambda a: jax.scipy.linalg.lu_factor(a), [np.array([[0.0, 1, 2], [0, 3, 4],
                                                                                      [0, 5, 7]])], False),
        # binary
        "add_subtract_multiply_divide": (lambda x, y: (x + y) * (x - y) / (y + 3.0), [x34, y34], True),
        "integer_arithmetic": (lambda i, j: (i + j, i - j, i * j, lax.div(i, j), lax.rem(i, j)), [i34, j34], False),
        "remainder": (lax.rem, [x34 * 5, y34], True),
        "power": (lax.pow, [POSITIVE, y34], True),
        "maximum_minimum": (lambda x, y: jnp.maximum(x, y) + 2 * jnp.minimum(x, y), [x34, y34], True),
        "maximum_minimum_nan": (lambda x, y: (lax.max(x, y), lax.min(x, y)), [EDGE, EDGE[::-1].copy()], False),
        "atan2": (jnp.arctan2, [x34, y34], True),
        "and_or_xor": (lambda i, j, a, b: (i & j, i | j, i ^ j, a & b, a | b, a ^ b), [i34, ints(3, 4), b34, c34],
                       False),
        "shifts": (lambda i, s: (lax.shift_left(i, s), lax.shift_right_arithmetic(i, s), lax.shift_right_logical(i, s)),
                   [np.array([-100, 100, -1, 1, 7, -8, 5], np.int32), np.array([3, 31, 32, 33, 40, -1, 0], np.int32)],
                   False),
        "integer_edges": (lambda i, j: (lax.div(i, j), lax.rem(i, j), i + j, i * j, -i, jnp.abs(i), jnp.sign(i)),
                          [np.array([INT_MIN, -7, 7, 0, INT_MAX, INT_MIN, 5], np.int32),
                           np.array([-1, 0, 2, 0, -1, 1, -3], np.int32)], False),
        # elementwise others
        "convert": (lambda x, i, b: (x.astype(jnp.int32), i.astype(jnp.float64), b.astype(jnp.float64),
                                     x.astype(jnp.bool_), i.astype(jnp.int64)), [x34 * 5, i34, b34], False),
        "convert_float": (lambda x: x.astype(jnp.float32).astype(jnp.float64) * x, [x34], True),
        "select": (lambda b, x, y: jnp.where(b, x, y), [b34, x34, y34], True),
        "clamp": (lambda x: lax.clamp(-0.5, x, 0.5), [x34], True),
        "compare_float": (lambda x, y: (x < y, x <= y, x > y, x >= y, x == y, x != y),
                          [EDGE, EDGE[::-1].copy()], False),
        "compare_signed": (lambda i, j: (i < j, i <= j, i > j, i >= j, i == j, i != j), [i34, ints(3, 4)], False),
        "compare_unsigned": (lambda a, b: (a == b, a != b), [b34, c34], False),
        # constants and shapes
        "constant": (lambda x: x * jnp.array([[1.0, -2.0, 3.0, 0.5]]) + 2.5, [x34], True),
        "constant_int": (lambda i: i * jnp.array([1, -2, 3, 4], jnp.int32) + 3, [i34], False),
        "iota": (lambda x: x * jnp.arange(4.0) + jnp.arange(3)[:, None], [x34], True),
        "broadcast_in_dim": (lambda x, v: x + v[:, None] + v[0], [x34, normal(3)], True),
        "broadcast_size_one": (lambda x: jnp.broadcast_to(x, (2, 3, 4)), [normal(3, 1)], True),
        "reshape": (lambda x: x.reshape(2, 6, 1), [x34], True),
        "transpose": (lambda x: x.transpose(2, 0, 1), [normal(2, 3, 4)], True),
        "reverse": (lambda x: jnp.flip(x, (0, 2)), [normal(2, 3, 4)], True),
        "slice": (lambda x: x[1:, ::2] * x[:2, 1:3], [x34], True),
        "slice_empty": (lambda x: x[:, 3:1], [x34], False),
        "dynamic_slice": (lambda x, k: (lax.dynamic_slice(x, (k, k), (2, 2)), lax.dynamic_slice(x, (k - 5, k * 0), (2, 4))),
                          [x34, np.int32(2)], True),
        "dynamic_update_slice": (lambda x, u, k: lax.dynamic_update_slice(x, u, (k, k + 1)),
                                 [x34, normal(2, 2), np.int32(2)], True),
        "concatenate": (lambda x, y, e: jnp.concatenate([x, e, y[:1]], axis=0), [x34, y34, normal(0, 4)], True),
        "pad": (lambda x: lax.pad(x, 0.5, [(1, -1, 1), (-2, 2, 0)]), [x34], True),
        # contractions
        "dot_general": (lambda a, b: jnp.einsum("bij,bjk->bik", a, b), [normal(2, 3, 4), normal(2, 4, 5)], True),
        "dot_general_vector": (lambda a, v: (a @ v, v @ v), [x34, normal(4)], True),
        "optimization_barrier": (lambda x, y: sum(lax.optimization_barrier((x, y))), [x34, y34], True),
        "convolution": (lambda x, w: lax.conv_general_dilated(x, w, (2, 1), [(1, 0), (2, 1)], rhs_dilation=(1, 2),
                                                              dimension_numbers=("NCHW", "OIHW", "NCHW")),
                        [normal(1, 2, 5, 4), normal(2, 2, 3, 2)], True),
        "convolution_groups_nhwc": (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", feature_group_count=2,
                                                                          dimension_numbers=("NHWC", "HWIO", "NHWC")),
                                    [normal(1, 3, 3, 4), normal(3, 3, 2, 4)], True),
        # reductions
        "reduce": (lambda x: (jnp.sum(x, 0), jnp.max(x, 1), jnp.min(x), jnp.sum(x, (0, 1), keepdims=True)),
                   [normal(3, 4, 1)], True),
        "reduce_init": (lambda x: lax.reduce(x, 1.5, lax.add, (1,)) + lax.reduce(x, 0.25, lax.max, (0,))[0],
                        [x34], True),
        "reduce_empty": (lambda e: (jnp.sum(e, 0), jnp.max(e, 0, initial=-1.0), jnp.min(e, 1)), [normal(0, 3)], False),
        "reduce_logical": (lambda b: (jnp.all(b, 0), jnp.any(b, 1), jnp.all(b[:, :0], 1)), [b34], False),
        "reduce_argmax_argmin": (lambda x: (jnp.argmax(x, 1), jnp.argmin(x, 0), jnp.max(x, 1) * jnp.argmax(x, 1)),
                                 [x34], False),
        "reduce_window": (lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2), (1, 2, 1), [(0, 0), (1, 1), (0, 1)]),
                          [normal(1, 5, 4)], True),
        "reduce_window_dilated": (lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2), (1, 1, 1), "VALID",
                                                              window_dilation=(1, 2, 2)), [normal(2, 5, 6)], False),
        "select_and_scatter": (jax.grad(lambda x: (lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (1, 2), "SAME")
                                                  * jnp.arange(2.0)).sum()), [x34], False),
        "reduce_window_sum_min": (lambda x: (jnp.cumsum(x, 1), lax.reduce_window(x, jnp.inf, lax.min, (2, 1), (1, 1),
                                                                                  "VALID")), [x34], True),
        # indexing
        "gather": (lambda x, i: (x[i], x[:, i[:2]], jnp.take_along_axis(x[:4], jnp.abs(i[:, None]) % 4, 1)),
                   [normal(5, 4), np.array([3, -1, 0, -5], np.int32)], True),
        "gather_out_of_range": (lambda x, i: (x[i], jnp.take(x, i, axis=0, mode="clip")),
                                [normal(5, 4), np.array([7, -3, 2, -9], np.int32)], False),
        "scatter": (lambda x, i, u: (x.at[i].set(u), x.at[i].add(u)), [normal(5, 3), np.array([3, 0, 3], np.int32),
                                                                       normal(3, 3)], True),
        # control flow
        "while_static": (lambda x: lax.fori_loop(0, 3, lambda k, y: jnp.sin(y) + k, x), [x34], True),
        "while_dynamic": (lambda x: lax.while_loop(lambda c: c[1] < 10.0, lambda c: (c[0] * 1.5, c[1] + jnp.sum(c[0])),
                                                   (x, 0.0))[0], [POSITIVE], False),
        "cond_true": (lambda p, x: lax.cond(p > 0, jnp.sin, jnp.cos, x), [np.float64(0.5), x34], True),
        "cond_false": (lambda p, x: lax.cond(p > 0, jnp.sin, jnp.cos, x), [np.float64(-0.5), x34], True),
        "case": (lambda k, x: lax.switch(k, [jnp.sin, jnp.cos, jnp.tanh], x), [np.int32(1), x34], True),
        "case_out_of_range": (lambda k, x: lax.switch(k, [jnp.sin, jnp.cos, jnp.tanh], x), [np.int32(7), x34], True),
        "call": (lambda x: jax.jit(jnp.tanh, inline=False)(x) * 2, [x34], True),
        # sorting (nn.argsort): ties in index order, NaN last (first for top_k), -0.0 tying 0.0
        "sort": (lambda x, y: (jnp.sort(x), jnp.sort(x, axis=0, descending=True), *lax.sort((x, y), num_keys=1)),
                 [x34, y34], True),
        "sort_edge_values": (lambda x, i, b: (jnp.sort(x), jnp.argsort(x), jnp.argsort(x, descending=True),
                                              jnp.sort(i, axis=0), jnp.argsort(i, axis=1, descending=True),
                                              jnp.sort(b), jnp.argsort(b, axis=0), *lax.top_k(x, 8)),
                             [np.concatenate([EDGE, EDGE[::-1]]), ints(4, 6, low=-2, high=2), b34], False),
        "top_k": (lambda x, i: (*lax.top_k(x, 2), *lax.top_k(i, 3)), [x34, ints(3, 5, low=-2, high=2)], True),
        "sort_several_keys": (lambda a, b, x, f, u: (*lax.sort((a, b, x), num_keys=2, dimension=1),
                                                     *lax.sort((f, a[0], x[0]), num_keys=3), jnp.sort(u, axis=1),
                                                     *lax.sort((b, u, x), num_keys=2, dimension=0)),
                              [ints(3, 8, low=-2, high=2), ints(3, 8, low=-2, high=2), normal(3, 8),
                               np.array([np.nan, -0.0, 0.0, 1.0, np.nan, -1.0, 1.0, 0.0]),
                               ints(3, 8, low=0, high=2 ** 32, dtype=np.uint32)], False),
        # integers: bit counts, unsigned values, integer and boolean reductions
        "popcnt_clz": (lambda i, u: (lax.population_count(i), lax.clz(i), lax.population_count(u), lax.clz(u)),
                       [ints(3, 4, low=INT_MIN, high=INT_MAX), ints(3, 4, low=0, high=2 ** 32, dtype=np.uint32)], False),
        "unsigned": (lambda a, b: (a // b, a % b, jnp.maximum(a, b), a > b, a.astype(jnp.float64), jnp.max(a, 0),
                                   jnp.sum(a, 1), a >> (b % 40)),
                     [ints(3, 4, low=0, high=2 ** 32, dtype=np.uint32), ints(3, 4, low=1, high=2 ** 32, dtype=np.uint32)],
                     False),
        "integer_reduce": (lambda i: (jnp.sum(i, 0), jnp.prod(i, 1), jnp.max(i), jnp.min(i, 0)), [i34], False),
        "conv_transpose": (lambda x, w: lax.conv_transpose(x, w, (2, 2), [(1, 2), (0, 1)],
                                                           dimension_numbers=("NCHW", "OIHW", "NCHW")),
                           [normal(1, 2, 3, 4), normal(3, 2, 2, 3)], True),
        # the bits of floats
        "bitcast_convert": (lambda x, i: (lax.bitcast_convert_type(x, jnp.int64), lax.bitcast_convert_type(x, jnp.int8),
                                          lax.bitcast_convert_type(i, jnp.float32)),
                            [EDGE, ints(3, 4, low=INT_MIN, high=INT_MAX)], False),
        "reduce_precision": (lambda x: (lax.reduce_precision(x, 5, 10), lax.reduce_precision(x, 8, 7),
                                        lax.reduce_precision(x * 1e-3, 4, 2)),
                             [np.concatenate([EDGE, normal(8) * 1e4, [65520.0, 1 + 2.0 ** -11, 6e-5]])], False),
    }
    return cases


@pytest.fixture(scope="module", autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


def _lowered_text(f, args) -> str:
    return jax.jit(f).lower(*args).as_text()


def _compare(got, want, what: str) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, f"{what}: {got.dtype}{got.shape} vs {want.dtype}{want.shape}"
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    finite = np.abs(want[np.isfinite(want)])
    floor = FLOOR * float(finite.max()) if finite.size else 0.0
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=floor, equal_nan=True, err_msg=what)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=what)


def _tuple(value):
    return value if isinstance(value, tuple) else (value,)


CASES = _cases()


SLOW_CASES = {"chlo_asin", "chlo_hyperbolic", "chlo_inverse_trig", "chlo_special", "chlo_edges",
              "lapack_potrf_trsm", "lapack_getrf", "lapack_getrf_zero_column"}
"""Cases of many expanded ops (seconds each on the interpreter; tests/api/test_jax_api_sweep.py checks the same
functions in float32 and float64 with --slow): --slow."""


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_CASES else n for n in CASES])
def test_forward_and_gradient_equal_jax(name):
    f, args, differentiable = CASES[name]
    args = [np.asarray(a) for a in args]
    want = _tuple(jax.jit(f)(*args))
    imported = from_jax(f, *args)
    got = _tuple(imported.with_jax_dtypes(interpret(imported.module, imported.name, *imported.arguments(*args))))
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        _compare(g, w, f"{name} output {k}")
    if not differentiable:
        return
    floats = [k for k, a in enumerate(args) if a.dtype.kind == "f"]
    w_rng = np.random.default_rng(1)
    weights = [w_rng.standard_normal(np.shape(w)) for w in want]

    def loss(*xs):
        """sum(f * w) over the float outputs, a function of the float arguments (the others fixed)."""
        full = list(args)
        for k, x in zip(floats, xs):
            full[k] = x
        return sum(jnp.sum(y * w) for y, w in zip(_tuple(f(*full)), weights) if y.dtype.kind == "f")

    xs = [args[k] for k in floats]
    scalar = from_jax(loss, *xs)
    module = scalar.autodiff_module()
    grads = _tuple(interpret(module, f"{scalar.name}_grad", *scalar.arguments(*xs), np.array(1.0)))[1:]
    want_grads = jax.jit(jax.grad(loss, argnums=tuple(range(len(xs)))))(*xs)
    assert len(grads) == len(xs)
    for k, g, w in zip(floats, grads, want_grads):
        _compare(g, w, f"{name} gradient of argument {k}")


def _text(signature: str, body: str) -> str:
    """`@main` with `signature` (its arguments, `)`, and results) and `body`."""
    return f"func.func @main({signature} {{\n{body}\n}}\n"


HAND_WRITTEN = {
    # name -> (StableHLO text of @main, arguments, the same computation in JAX); for ops JAX does not emit
    "dot": (_text("%a: tensor<3x4xf64>, %b: tensor<4x2xf64>) -> tensor<3x2xf64>",
                  '  %0 = "stablehlo.dot"(%a, %b) : (tensor<3x4xf64>, tensor<4x2xf64>) -> tensor<3x2xf64>\n'
                  "  func.return %0 : tensor<3x2xf64>"), [normal(3, 4), normal(4, 2)], jnp.dot),
    "dot_vector": (_text("%a: tensor<3x4xf64>, %v: tensor<4xf64>) -> tensor<3xf64>",
                         '  %0 = "stablehlo.dot"(%a, %v) : (tensor<3x4xf64>, tensor<4xf64>) -> tensor<3xf64>\n'
                         "  func.return %0 : tensor<3xf64>"), [normal(3, 4), normal(4)], jnp.dot),
    "logistic": (_text("%x: tensor<3x4xf64>) -> tensor<3x4xf64>",
                       "  %0 = stablehlo.logistic %x : tensor<3x4xf64>\n  func.return %0 : tensor<3x4xf64>"),
                 [normal(3, 4) * 4], jax.nn.sigmoid),
    "get_dimension_size": (_text("%x: tensor<2x3xf64>) -> tensor<2x3xf64>", """\
  %n = stablehlo.get_dimension_size %x, dim = 1 : (tensor<2x3xf64>) -> tensor<i32>
  %f = stablehlo.convert %n : (tensor<i32>) -> tensor<f64>
  %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f64>) -> tensor<2x3xf64>
  %0 = stablehlo.multiply %x, %b : tensor<2x3xf64>
  func.return %0 : tensor<2x3xf64>"""), [normal(2, 3)], lambda x: x * x.shape[1]),
    "dynamic_iota": (_text("%x: tensor<3x4xf64>) -> tensor<3x4xf64>", """\
  %s = stablehlo.constant dense<[3, 4]> : tensor<2xi64>
  %i = stablehlo.dynamic_iota %s, dim = 1 : (tensor<2xi64>) -> tensor<3x4xf64>
  %0 = stablehlo.multiply %x, %i : tensor<3x4xf64>
  func.return %0 : tensor<3x4xf64>"""), [normal(3, 4)], lambda x: x * jnp.arange(4.0)),
    "dynamic_reshape": (_text("%x: tensor<2x3xf64>) -> tensor<6xf64>", """\
  %s = stablehlo.constant dense<6> : tensor<1xi64>
  %0 = stablehlo.dynamic_reshape %x, %s : (tensor<2x3xf64>, tensor<1xi64>) -> tensor<6xf64>
  func.return %0 : tensor<6xf64>"""), [normal(2, 3)], lambda x: x.reshape(6)),
    "dynamic_broadcast_in_dim": (_text("%x: tensor<3x1xf64>) -> tensor<3x2x2xf64>", """\
  %s = stablehlo.constant dense<[3, 2, 2]> : tensor<3xi64>
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %s, dims = [0, 2] : (tensor<3x1xf64>, tensor<3xi64>) -> tensor<3x2x2xf64>
  func.return %0 : tensor<3x2x2xf64>"""), [normal(3, 1)], lambda x: jnp.broadcast_to(x[:, None, :], (3, 2, 2))),
    "dynamic_pad": (_text("%x: tensor<2x3xf64>) -> tensor<4x7xf64>", """\
  %v = stablehlo.constant dense<0.5> : tensor<f64>
  %lo = stablehlo.constant dense<[1, 0]> : tensor<2xi64>
  %hi = stablehlo.constant dense<[0, 2]> : tensor<2xi64>
  %in = stablehlo.constant dense<1> : tensor<2xi64>
  %0 = stablehlo.dynamic_pad %x, %v, %lo, %hi, %in
    : (tensor<2x3xf64>, tensor<f64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<4x7xf64>
  func.return %0 : tensor<4x7xf64>"""), [normal(2, 3)], lambda x: lax.pad(x, 0.5, [(1, 0, 1), (0, 2, 1)])),
    "dynamic_gather": (_text("%x: tensor<4x3xf64>) -> tensor<2x2x3xf64>", """\
  %i = stablehlo.constant dense<[[2], [0]]> : tensor<2x1xi64>
  %s = stablehlo.constant dense<[2, 3]> : tensor<2xi64>
  %0 = "stablehlo.dynamic_gather"(%x, %i, %s) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2],
    start_index_map = [0], index_vector_dim = 1>} : (tensor<4x3xf64>, tensor<2x1xi64>, tensor<2xi64>) -> tensor<2x2x3xf64>
  func.return %0 : tensor<2x2x3xf64>"""), [normal(4, 3)], lambda x: jnp.stack([x[2:4], x[0:2]])),
    "dynamic_conv": (_text("%x: tensor<1x2x5x4xf64>, %w: tensor<3x2x2x2xf64>) -> tensor<1x3x3x5xf64>", """\
  %p = stablehlo.constant dense<[[1, 0], [1, 1]]> : tensor<2x2xi64>
  %0 = "stablehlo.dynamic_conv"(%x, %w, %p) {window_strides = array<i64: 2, 1>,
    dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>,
    batch_group_count = 1 : i64, feature_group_count = 1 : i64}
    : (tensor<1x2x5x4xf64>, tensor<3x2x2x2xf64>, tensor<2x2xi64>) -> tensor<1x3x3x5xf64>
  func.return %0 : tensor<1x3x3x5xf64>"""), [normal(1, 2, 5, 4), normal(3, 2, 2, 2)],
                     lambda x, w: lax.conv_general_dilated(x, w, (2, 1), ((1, 0), (1, 1)))),
    "scan": (_text("%x: tensor<3x4xf64>) -> tensor<3x4xf64>", """\
  %c = stablehlo.constant dense<1.0> : tensor<3xf64>
  %0:2 = chlo.scan(%x) inits(%c) dimension=1 {
  ^bb0(%xi: tensor<3xf64>, %p: tensor<3xf64>):
    %q = stablehlo.multiply %p, %xi : tensor<3xf64>
    stablehlo.return %q, %q : tensor<3xf64>, tensor<3xf64>
  } : (tensor<3x4xf64>, tensor<3xf64>) -> (tensor<3x4xf64>, tensor<3xf64>)
  func.return %0#0 : tensor<3x4xf64>"""), [normal(3, 4)], lambda x: jnp.cumprod(x, axis=1)),
    "triangular_solve": (_text("%a: tensor<3x3xf64>, %b: tensor<3x2xf64>) -> tensor<3x2xf64>", """\
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false,
    transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<3x3xf64>, tensor<3x2xf64>) -> tensor<3x2xf64>
  func.return %0 : tensor<3x2xf64>"""), [normal(3, 3) + 3 * np.eye(3), normal(3, 2)],
                         lambda a, b: jax.scipy.linalg.solve_triangular(a, b, lower=True)),
    "map": (_text("%x: tensor<3x4xf64>, %y: tensor<3x4xf64>) -> tensor<3x4xf64>", """\
  %0 = "stablehlo.map"(%x, %y) ({
    ^bb0(%a: tensor<f64>, %b: tensor<f64>):
      %s = stablehlo.sine %a : tensor<f64>
      %p = stablehlo.multiply %s, %b : tensor<f64>
      stablehlo.return %p : tensor<f64>
  }) {dimensions = array<i64: 0, 1>} : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>
  func.return %0 : tensor<3x4xf64>"""), [normal(3, 4), normal(3, 4)], lambda x, y: jnp.sin(x) * y),
    "mulhi": (_text("%x: tensor<4xf64>, %a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xf64>", """\
  %h = "chlo.mulhi"(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %f = stablehlo.convert %h : (tensor<4xi32>) -> tensor<4xf64>
  %0 = stablehlo.multiply %x, %f : tensor<4xf64>
  func.return %0 : tensor<4xf64>"""), [normal(4), np.array([INT_MIN, INT_MAX, -7, 123456789], np.int32),
                                       np.array([INT_MIN, 3, INT_MAX, -987654321], np.int32)],
              lambda x, a, b: x * ((a.astype(jnp.int64) * b) >> 32).astype(jnp.float64)),
    **{f"if_{flag}": (_text("%p: tensor<i1>, %x: tensor<3xf64>) -> tensor<3xf64>", """\
  %0 = "stablehlo.if"(%p) ({
    %a = stablehlo.sine %x : tensor<3xf64>
    stablehlo.return %a : tensor<3xf64>
  }, {
    %b = stablehlo.cosine %x : tensor<3xf64>
    stablehlo.return %b : tensor<3xf64>
  }) : (tensor<i1>) -> tensor<3xf64>
  func.return %0 : tensor<3xf64>"""), [np.array(flag), normal(3)], lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x))
       for flag in (True, False)},
}


SLOW_HAND_WRITTEN = {"dynamic_gather", "dynamic_conv", "scan"}
"""Hand-written cases whose op other tests check by default (the spec-style and scan tests): --slow."""


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_HAND_WRITTEN else n
                                  for n in HAND_WRITTEN])
def test_hand_written_forward_and_gradient_equal_jax(name):
    text, args, reference = HAND_WRITTEN[name]
    module = import_stablehlo(text)
    want = reference(*args)
    _compare(interpret(module, "main", *args), want, name)
    floats = tuple(k for k, a in enumerate(args) if a.dtype.kind == "f")
    PassManager.parse("autodiff{func=main}").run(module)
    seed = np.random.default_rng(1).standard_normal(np.shape(want))
    out = _tuple(interpret(module, "main_grad", *args, seed))
    _, pullback = jax.vjp(lambda *xs: reference(*[xs[floats.index(k)] if k in floats else a
                                                  for k, a in enumerate(args)]), *[args[k] for k in floats])
    for k, g, w in zip(floats, out[1:], pullback(seed)):
        _compare(g, w, f"{name} gradient of argument {k}")


def test_a_reduction_of_8_bit_floats_is_refused_at_its_source():
    import inspect

    def narrow_sum(x):
        return lax.reduce(x.astype(jnp.float8_e4m3fn), jnp.float8_e4m3fn(0), lax.add, (0,)).astype(jnp.float32)

    line = inspect.getsourcelines(narrow_sum)[1] + 1
    with pytest.raises(CompileError, match=r"'stablehlo.reduce' of 4-, 6- or 8-bit values is not supported") as err:
        from_jax(narrow_sum, np.arange(3, dtype=np.float32))
    assert str(err.value).startswith(f"{__file__}:{line}:")


@pytest.mark.slow
def test_a_round_trip_through_an_8_bit_float_equals_jax():
    def narrow(x):
        return (x.astype(jnp.float8_e4m3fn) * jnp.float8_e4m3fn(3)).astype(jnp.float32)

    x = np.array([0.1, -1.3, 100.0, 500.0, -0.0, np.nan], np.float32)
    imported = from_jax(narrow, x)
    np.testing.assert_array_equal(interpret(imported.module, imported.name, x), jax.jit(narrow)(x))


RAW_FLOAT_SORT = _text("%x: tensor<4xf64>) -> tensor<4xf64>", """\
  %0 = "stablehlo.sort"(%x) <{dimension = 0 : i64}> ({
  ^bb0(%a: tensor<f64>, %b: tensor<f64>):
    %1 = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }) : (tensor<4xf64>) -> tensor<4xf64>
  func.return %0 : tensor<4xf64>""")


TWO_KEYS_WITHOUT_TIE = _text("%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32>", """\
  %0:2 = "stablehlo.sort"(%x, %y) <{dimension = 0 : i64}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<i32>, %d: tensor<i32>):
    %1 = stablehlo.compare LT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %2 = stablehlo.compare LT, %c, %d, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %3 = stablehlo.or %1, %2 : tensor<i1>
    stablehlo.return %3 : tensor<i1>
  }) : (tensor<4xi32>, tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>)
  func.return %0#0 : tensor<4xi32>""")


def test_a_sort_comparator_jax_does_not_write_is_refused():
    """Two keys or-ed without the tie on the first, and floats compared raw (NaN unordered), are refused at
    the sort."""
    with pytest.raises(CompileError, match=r"prog.mlir:2:.*a sort comparator combining compares otherwise than "
                                           r"several keys in order"):
        import_stablehlo(TWO_KEYS_WITHOUT_TIE, "prog.mlir")
    with pytest.raises(CompileError, match=r"prog.mlir:2:.*a sort comparator of a FLOAT compare of floats without "
                                           r"JAX's canonicalization"):
        import_stablehlo(RAW_FLOAT_SORT, "prog.mlir")


T23 = "tensor<2x3xf64>"
BAD_DIMENSIONS = {
    # name -> (body of @main(%x: tensor<2x3xf64>) defining %0, its type, the error)
    "concatenate": (f'%0 = "stablehlo.concatenate"(%x, %x) {{dimension = 2 : i64}} : ({T23}, {T23}) -> tensor<2x6xf64>',
                    "tensor<2x6xf64>", r"dimension 2 of 'stablehlo.concatenate' is out of range \[0, 2\)"),
    "concatenate_negative": (f'%0 = "stablehlo.concatenate"(%x, %x) {{dimension = -1 : i64}} : ({T23}, {T23}) -> '
                             "tensor<2x6xf64>", "tensor<2x6xf64>", r"dimension -1 of 'stablehlo.concatenate'"),
    "reduce_negative": ("%c = stablehlo.constant dense<0.0> : tensor<f64>\n  %0 = stablehlo.reduce(%x init: %c) applies "
                        f"stablehlo.add across dimensions = [-1] : ({T23}, tensor<f64>) -> tensor<2xf64>",
                        "tensor<2xf64>", r"dimension -1 of 'stablehlo.reduce' is out of range"),
    "transpose": (f"%0 = stablehlo.transpose %x, dims = [1, 1] : ({T23}) -> tensor<3x3xf64>", "tensor<3x3xf64>",
                  r"'stablehlo.transpose' is not supported here: permutation \[1, 1\] is not a permutation"),
    "reverse_negative": (f"%0 = stablehlo.reverse %x, dims = [-1] : {T23}", T23, r"dimension -1 is out of range"),
    "iota": ("%0 = stablehlo.iota dim = 2 : tensor<2x3xf64>", T23, r"iota_dimension 2 is out of range"),
    "broadcast_in_dim": (f"%0 = stablehlo.broadcast_in_dim %x, dims = [0, 3] : ({T23}) -> tensor<2x3x4xf64>",
                         "tensor<2x3x4xf64>", r"broadcast dimension 3 is out of range for rank 3"),
}


@pytest.mark.parametrize("name", BAD_DIMENSIONS)
def test_a_dimension_outside_the_rank_is_refused_at_the_op(name):
    body, result, message = BAD_DIMENSIONS[name]
    text = f"func.func @main(%x: {T23}) -> {result} {{\n  {body}\n  func.return %0 : {result}\n}}\n"
    with pytest.raises(CompileError, match=message) as err:
        import_stablehlo(text, "prog.mlir")
    assert str(err.value).startswith(f"prog.mlir:{2 + body.count(chr(10))}:")


def handled_ops() -> set[str]:
    """The StableHLO ops the conversion handles (its tables and `on_*` handlers) and those
    nn_names.py says nn ops stand for."""
    ops = set(cs.UNARY) | set(cs.BINARY)
    ops |= {name[3:] for name in dir(cs.Converter) if name.startswith("on_")}
    for stablehlo, _ in EXTERNAL_NAMES.values():
        if not stablehlo.startswith("-"):
            ops.add(stablehlo.split()[0])
    return ops


def test_every_handled_op_has_a_case():
    texts = [_lowered_text(f, [np.asarray(a) for a in args]) for f, args, _ in CASES.values()]
    texts += [text for text, _, _ in HAND_WRITTEN.values()]
    covered = {name for text in texts for name in re.findall(r"(?:stablehlo|chlo)\.(\w+)", text)}
    missing = handled_ops() - covered
    assert not missing, f"StableHLO ops without a numeric case: {sorted(missing)}"
