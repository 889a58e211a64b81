"""Unsigned integer arrays (uint8/16/32/64) in `@dfc.jit`, against NumPy on the
interpreter and compiled: wrap-around arithmetic, unsigned comparisons,
division, remainder, shifts (by the width or more too), max/min and their
reductions, conversions to and from floats and signed integers, NEP 50
promotion (uint8 with int8 is int16, uint64 with int64 float64, Python ints
take the array's dtype and out of its range are NumPy's OverflowError),
locals in loops and branches, in-place updates, calls between jitted
functions, dtype= arguments, and gradients of float inputs next to unsigned
ones. Edge values: 0, 1, the top bit, the maximum; uint64 divisors with the
top bit set. CI runs each op table on uint8 and uint64 (one on each engine);
`--slow` runs every width on both."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dfc
from dfc.function import view_results

ENGINES = ["interpreter", "compiled"]


def cases(*fast: tuple) -> list:
    """Every (dtype, engine); those not in `fast` only with --slow."""
    return [pytest.param(t, e, marks=() if (t, e) in fast else pytest.mark.slow)
            for t in (np.uint8, np.uint16, np.uint32, np.uint64) for e in ENGINES]


def edges(t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Operands a, b (every pair of 0, 1, 2, 7, the top bit and its neighbours, the maximum) and shift counts
    (0, 1, 3, bits - 1, bits, bits + 1, the maximum)."""
    top = np.iinfo(t).max // 2 + 1
    values = np.array([0, 1, 2, 7, top - 1, top, top + 1, np.iinfo(t).max], t)
    a, b = (v.ravel() for v in np.meshgrid(values, values, indexing="ij"))
    bits = np.iinfo(t).bits
    s = np.resize(np.array([0, 1, 3, bits - 1, bits, bits + 1, np.iinfo(t).max], t), a.shape)
    return a, b, s


def arithmetic(a, b, s):
    return (a + b, a - b, a * b, a // b, a % b, np.maximum(a, b), np.minimum(a, b), a & b, a | b, a ^ b, ~a, -a,
            np.abs(a), a >> s, a << s, a + 1, a * 3, a - 2, a // 7, a % 10, 5 - a, a ** 2, np.floor_divide(b, a),
            np.mod(b, a), np.right_shift(a, 3), np.left_shift(a, 1))


def comparisons(a, b):
    return a < b, a <= b, a > b, a >= b, a == b, a != b, a > 5, 3 < a, a < -1, a != -1, a <= 2 ** 70, np.sign(a)


def reductions(a, b):
    return (np.max(a), np.min(a), np.max(b.reshape(8, 8), axis=0), np.min(b.reshape(8, 8), axis=1), np.sum(a),
            np.prod(b[:5]), np.cumsum(a), np.argmax(a), np.argmin(b), np.mean(a), a.max(), np.maximum.reduce(b),
            np.minimum.accumulate(b), np.sort(b[::7]), np.argsort(b[::7], kind="stable"), np.median(a[::7]),
            a[b > 5].max(), a[b > 5].min(), np.clip(a, 3, 200))


def conversions(a, i):
    return (a.astype(np.float64), a.astype(np.float32), a / 3, np.sqrt(a), a * 2.5, a.astype(np.int64),
            a.astype(np.int8), a.astype(np.uint8), a.astype(np.uint64), i.astype(a.dtype), a + i, a < i,
            np.maximum(a, i), a * np.float32(1.5), a.astype(bool), a.astype(np.float16))


def _run(fn, engine: str, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # division by zero: NumPy and dfc warn alike
        if engine == "compiled":
            return dfc.jit(fn)(*args)
        f, ir_args, _ = dfc.jit(fn).specialize(*args)
        return view_results(dfc.interpret(f.module, f.name, *ir_args), f.result_views)


def _numpy(fn, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args)


def _same(got, want):
    got, want = (got if isinstance(got, tuple) else (got,)), (want if isinstance(want, tuple) else (want,))
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype, f"result {k}: {g.dtype}, NumPy {w.dtype}"
        assert g.shape == w.shape, f"result {k}: shape {g.shape}, NumPy {w.shape}"
        if w.dtype.kind == "f":
            rtol = {2: 1e-3, 4: 1e-6}.get(w.dtype.itemsize, 1e-12)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=0, err_msg=f"result {k}")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"result {k}")


@pytest.mark.parametrize("t, engine", cases((np.uint64, "compiled"), (np.uint8, "interpreter")))
def test_arithmetic_and_comparisons_wrap_and_compare_as_numpy(t, engine):
    a, b, s = edges(t)
    _same(_run(arithmetic, engine, a, b, s), _numpy(arithmetic, a, b, s))
    _same(_run(comparisons, engine, a, b), _numpy(comparisons, a, b))


@pytest.mark.parametrize("t, engine", cases((np.uint8, "compiled"), (np.uint64, "interpreter")))
def test_reductions_and_conversions_as_numpy(t, engine):
    a, b, _ = edges(t)
    i = a.view(np.dtype(f"int{np.iinfo(t).bits}"))  # the same bits, signed: negative where the top bit is set
    _same(_run(reductions, engine, a, b), _numpy(reductions, a, b))
    _same(_run(conversions, engine, a, i), _numpy(conversions, a, i))


def mixed(u8, i8, u64, i64, u32, i32, f16, f32):
    return u8 + i8, u8 * i8, u8 < i8, u64 + i64, u64 < i64, u32 - i32, u8 + f16, u32 * f32, u8 + np.int8(-3), \
        u8 + np.uint16(300), i8 + np.uint8(200), u64 // np.uint64(3), np.uint8(200) + np.uint8(100) + u8


@pytest.mark.parametrize("engine", ENGINES)
def test_mixed_dtypes_promote_as_numpy(engine):
    rng = np.random.default_rng(0)
    args = [rng.integers(np.iinfo(t).min, np.iinfo(t).max, 6, dtype=t, endpoint=True)
            for t in (np.uint8, np.int8, np.uint64, np.int64, np.uint32, np.int32)]
    args += [rng.standard_normal(6).astype(np.float16), rng.standard_normal(6).astype(np.float32)]
    _same(_run(mixed, engine, *args), _numpy(mixed, *args))


def hashed(data):
    """A loop-carried uint32 hash (FNV-1a: xor, multiply, wrap) with a branch on an unsigned compare."""
    h = data[0] ^ np.uint32(2166136261)
    for k in range(1, data.shape[0]):
        h = (h ^ data[k]) * np.uint32(16777619)
        if h > np.uint32(3000000000):
            h = h >> np.uint32(1)
    return h


def crc(data):
    crc = 0xFFFF
    for b in data:
        cur = 0xFF & b
        for _ in range(8):
            if (crc & 1) ^ (cur & 1):
                crc = (crc >> 1) ^ 0x8408
            else:
                crc >>= 1
            cur >>= 1
    crc = ~crc & 0xFFFF
    return ((crc << 8) | ((crc >> 8) & 0xFF)) & 0xFFFF


@pytest.mark.parametrize("engine", ENGINES)
def test_loops_and_branches_carry_unsigned_values(engine):
    data = np.random.default_rng(1).integers(0, 2 ** 32, 40, dtype=np.uint32)
    _same(_run(hashed, engine, data), _numpy(hashed, data))
    bytes_ = np.random.default_rng(2).integers(0, 256, 24, dtype=np.uint8)
    _same(_run(crc, engine, bytes_), _numpy(crc, bytes_))


def bump(a, b):
    a[1:] += b[:-1]
    a[0] = a[0] >> 1


@dfc.jit
def shifted(a):
    return a >> 3, a.astype(np.float64)


def calls(a):
    s, f = shifted(a)
    return s * np.uint8(3), f


def creations(x, n):
    return (np.zeros(n, np.uint16), np.full(3, 300, dtype=np.uint16), np.arange(5, dtype=np.uint32),
            np.ones((2, 2), dtype="uint8"), np.full(2, 2 ** 64 - 1, np.uint64), x.astype(np.uint64),
            x[:3].astype(np.uint8), x[:3].astype(np.uint32), np.array([1, 2, 2 ** 64 - 1], dtype=np.uint64),
            np.array([[3, 255], [0, n]], dtype=np.uint8), np.asarray((x[0], 2 ** 63), dtype=np.uint64),
            x.astype(np.float32).astype(np.uint64), x[:3].astype(np.float16).astype(np.uint64))


def test_in_place_updates_calls_and_creation():
    jitted, called = dfc.jit(bump), dfc.jit(calls)
    for _ in range(2):  # the first call compiles, the second takes the fast path (views of the same arrays)
        a, b = np.array([255, 1, 200, 128], np.uint8), np.array([1, 255, 100, 3], np.uint8)
        want = a.copy()
        bump(want, b)
        jitted(a, b)
        assert a.dtype == np.uint8
        np.testing.assert_array_equal(a, want)
        x = np.array([0, 7, 255, 128], np.uint8)
        _same(called(x), calls(x))
    x = np.array([0.0, 1.7, 255.9, 2.0 ** 63, 2.0 ** 63 + 4096, 1.8e19])  # in range: NumPy's casts are defined
    _same(_run(creations, "compiled", x, 4), creations(x, 4))
    _same(_run(creations, "interpreter", x, 4), creations(x, 4))


def weighted(x, counts):
    return np.sum(x * counts + x ** 2 * (counts > 128) + np.sqrt(x) * counts.astype(np.float64))


def test_gradients_of_floats_next_to_unsigned_values():
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 2.0, 6)
    counts = np.array([0, 1, 127, 128, 200, 255], np.uint8)
    got = dfc.grad(weighted, 0)(x, counts)
    h = 1e-6
    numeric = np.array([(weighted(x + h * e, counts) - weighted(x - h * e, counts)) / (2 * h) for e in np.eye(6)])
    np.testing.assert_allclose(got, numeric, rtol=1e-7, atol=1e-9)
    analytic = counts + 2 * x * (counts > 128) + 0.5 / np.sqrt(x) * counts
    np.testing.assert_allclose(got, analytic, rtol=1e-12)


def overflows(a):
    return a + 300


def negative(a):
    return a + np.array([1, -1], dtype=np.uint64)


def counts_past(a):
    for i in range(300):
        a = a + i
    return a


@pytest.mark.parametrize("fn, message", [(overflows, "Python integer 300 out of bounds for uint8"),
                                         (negative, "Python integer -1 out of bounds for uint64"),
                                         (counts_past, "takes values from 0 to 299, out of bounds for uint8")])
def test_python_int_out_of_the_dtype_is_numpys_overflow_error(fn, message):
    a = np.array([1, 2], np.uint8)
    with pytest.raises(OverflowError):
        fn(a)
    with pytest.raises(dfc.FrontendError, match=message) as err:
        dfc.jit(fn)(a)
    line = fn.__code__.co_firstlineno + (2 if fn is counts_past else 1)
    assert err.value.location.startswith(f"{__file__}:{line}:")
