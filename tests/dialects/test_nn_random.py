"""The random ops (dialects/nn_random.py): Philox-4x32-10 against Random123's known-answer
vectors, the stream layout against a reference, both engines bit for bit, determinism for any
thread count, and the distributions' statistics (fixed keys)."""

import math

import numpy as np
import pytest

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.interpreter import interpret

KAT = [  # Random123 kat_vectors, philox4x32 10 rounds: counter, key, output
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


def philox_reference(counter, key):
    """Philox-4x32-10 on Python integers (Salmon et al. 2011)."""
    c, k = list(counter), list(key)
    for r in range(10):
        if r:
            k = [(k[0] + 0x9E3779B9) & 0xFFFFFFFF, (k[1] + 0xBB67AE85) & 0xFFFFFFFF]
        p0, p1 = c[0] * 0xD2511F53, c[2] * 0xCD9E8D57  # < 2^64: exact in Python ints and numpy uint64
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & 0xFFFFFFFF, (p0 >> 32) ^ c[3] ^ k[1], p0 & 0xFFFFFFFF]
    return c


def stream_reference(key, stream, n):
    """The words of `nn.random_bits`: element i is word i % 4 of the block at counter (i // 4, 0, stream, 0)
    (`philox_reference` vectorised over numpy uint64 arrays)."""
    i = np.arange(n, dtype=np.uint64)
    zeros = np.zeros(n, np.uint64)
    words = philox_reference([i // 4, zeros, zeros + np.uint64(stream), zeros], [np.uint64(k) for k in key])
    return np.choose((i % 4).astype(np.int64), words).astype(np.uint32)


@pytest.mark.parametrize("counter,key,expected", KAT)
def test_reference_matches_random123_kat(counter, key, expected):
    assert tuple(philox_reference(counter, key)) == expected


def test_the_expansion_is_philox_on_the_kat_vectors():
    """`philox` of the expansion (a tasklet on i64 words) against the KAT outputs, on both engines."""
    from xdsl.builder import Builder, InsertPoint
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ModuleOp, TensorType, i64

    from dfc.dialects.df_builders import elementwise
    from dfc.dialects.nn_expand_random import _Words, philox

    word = TensorType(i64, [])
    fn = func.FuncOp("f", ([word] * 6, [word] * 4))
    b = Builder(InsertPoint.at_end(fn.body.block))
    args = list(fn.body.block.args)
    outs = [elementwise(b, word, args, lambda s, a, j=j: philox(_Words(s.b), a[:4], a[4:])[j]) for j in range(4)]
    b.insert(func.ReturnOp(*outs))
    text = str(ModuleOp([fn]))
    engine = ExecutionEngine(parse_module(text))
    for counter, key, expected in KAT:
        values = [np.array(v, np.int64) for v in (*counter, *key)]
        for got in (interpret(parse_module(text), "f", *values), engine.invoke("f", *values)):
            assert tuple(int(g) for g in got) == expected


def _module(op, shape, dtype, stream=0):
    t = f"tensor<{''.join(f'{d}x' for d in shape)}{dtype}>"
    return f"""func.func @f(%k: tensor<2xi32>) -> {t} {{
  %r = {op} %k {{stream = {stream} : i64}} : (tensor<2xi32>) -> {t}
  func.return %r : {t}
}}"""


def _key(a, b):
    return np.array([a, b], np.uint32).view(np.int32)


def _both(text, key, threads=None):
    module = parse_module(text)
    PassManager.parse("expand-library,canonicalize,cse").run(module)
    assert not any(o.name.startswith("nn.") for o in module.walk())
    return interpret(module, "f", key), ExecutionEngine(parse_module(text), threads=threads).invoke("f", key)


@pytest.mark.parametrize("shape,stream", [((3, 5), 0), ((7,), 0xDEADBEEF), ((), 1)])
def test_random_bits_stream_layout_on_both_engines(shape, stream):
    key = (0x12345678, 0x9ABCDEF0)
    expected = stream_reference(key, stream, math.prod(shape)).reshape(shape)
    for got in _both(_module("nn.random_bits", shape, "i32", stream), _key(*key)):
        np.testing.assert_array_equal(np.asarray(got).view(np.uint32), expected)


def test_any_thread_count_gives_the_same_words():
    text = _module("nn.random_uniform", (64, 33), "f32")
    key = _key(7, 11)
    runs = [ExecutionEngine(parse_module(text), threads=t).invoke("f", key) for t in (1, 3)]
    for r in runs[1:]:
        np.testing.assert_array_equal(r, runs[0])


def test_keys_and_streams_give_different_draws():
    def draw(stream, key):
        return ExecutionEngine(parse_module(_module("nn.random_uniform", (256,), "f32", stream))).invoke("f", key)

    a, b, c = draw(0, _key(1, 2)), draw(0, _key(1, 3)), draw(1, _key(1, 2))
    assert np.mean(a == b) < 0.01 and np.mean(a == c) < 0.01


@pytest.mark.parametrize("dtype", ["f16", "f32", pytest.param("f64", marks=pytest.mark.slow)])
def test_uniform_statistics(dtype):
    n = 20000
    interp, engine = _both(_module("nn.random_uniform", (64,), dtype), _key(2024, 11))
    np.testing.assert_array_equal(interp, engine)
    u = np.asarray(ExecutionEngine(parse_module(_module("nn.random_uniform", (n,), dtype))).invoke(
        "f", _key(2024, 11)), np.float64)
    bits = {"f16": 11, "f32": 24, "f64": 32}[dtype]
    words = stream_reference((2024, 11), 0, n)
    np.testing.assert_array_equal(u, (words >> (32 - bits)).astype(np.float64) * 2.0 ** -bits)
    assert u.min() >= 0 and u.max() < 1
    se = math.sqrt(1 / 12 / n)
    assert abs(u.mean() - 0.5) < 4 * se
    assert abs(u.var() - 1 / 12) < 4 * math.sqrt((1 / 80 - 1 / 144) / n)
    counts = np.bincount((u * 20).astype(int), minlength=20)
    chi2 = ((counts - n / 20) ** 2 / (n / 20)).sum()
    assert chi2 < 43.8  # the 0.999 quantile of chi-square with 19 degrees of freedom


def test_normal_statistics():
    n = 20000
    interp, engine = _both(_module("nn.random_normal", (4, 16), "f64"), _key(5, 6))
    np.testing.assert_allclose(interp, engine, rtol=1e-14, atol=1e-14)
    u, v = (stream_reference((5, 6), 0, 128).astype(np.float64) * 2.0 ** -32).reshape(2, 64)
    box_muller = np.sqrt(-2 * np.log(1 - u)) * np.cos(2 * np.pi * v)
    np.testing.assert_allclose(np.ravel(engine), box_muller, rtol=1e-13, atol=1e-13)
    z = ExecutionEngine(parse_module(_module("nn.random_normal", (100, 200), "f64"))).invoke("f", _key(5, 6)).ravel()
    assert abs(z.mean()) < 4 / math.sqrt(n)
    assert abs(z.var() - 1) < 4 * math.sqrt(2 / n)
    edges = np.array([-np.inf, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, np.inf])
    cdf = np.array([0.5 * (1 + math.erf(e / math.sqrt(2))) if np.isfinite(e) else float(e > 0) for e in edges])
    expected = np.diff(cdf) * n
    counts = np.histogram(z, edges)[0]
    assert ((counts - expected) ** 2 / expected).sum() < 24.3  # chi-square, 7 degrees of freedom, 0.999


def test_gpu_lowering_gives_the_same_bits():
    """The CUDA engine's kernels (PTX assembled, run on the simulated device of tests/support/gpu_sim.py)."""
    from support.gpu_sim import simulated_engine

    text = _module("nn.random_bits", (5, 3), "i32", stream=4)
    got = simulated_engine(parse_module(text)).invoke("f", _key(0xCAFEF00D, 17))
    expected = stream_reference((0xCAFEF00D, 17), 4, 15).reshape(5, 3)
    np.testing.assert_array_equal(np.asarray(got).view(np.uint32), expected)
