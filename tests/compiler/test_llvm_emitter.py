"""The LLVM backend: upstream MLIR text -> LLVM IR -> MCJIT, called through
ctypes with hand-built `desc` slot arrays and compared with numpy."""

from __future__ import annotations

import ctypes
import re

import numpy as np
import pytest

from dfc.compiler import parse_module
from dfc.compiler.codegen.llvm.jit import JitModule, optimize
from dfc.compiler.codegen.llvm.module import emit_module

_ENTRY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]


def jit(src: str, **kw) -> JitModule:
    return JitModule(parse_module(src), **kw)


def call(j: JitModule, name: str, slots: list, n_results: int = 0) -> np.ndarray:
    """Call `_dfc_entry_<name>` with argument slots (ints are stored as they
    are, np.float32/np.float64 by their bits) and room for result slots."""
    desc = np.zeros(len(slots) + n_results, np.int64)
    for k, v in enumerate(slots):
        if isinstance(v, np.float32):
            desc[k : k + 1].view(np.float32)[0] = v
        elif isinstance(v, (float, np.float64)):
            desc[k : k + 1].view(np.float64)[0] = v
        else:
            desc[k] = int(v)
    _ENTRY(j.entry_address(name))(desc.ctypes.data)
    return desc[len(slots) :]


def f32_slot(desc: np.ndarray, k: int) -> np.float32:
    return desc[k : k + 1].view(np.float32)[0]


def f64_slot(desc: np.ndarray, k: int) -> np.float64:
    return desc[k : k + 1].view(np.float64)[0]


ELEMENTWISE = """
func.func @axpb(%x: memref<1000xf32>, %y: memref<1000xf32>, %a: f32, %b: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1000 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<1000xf32>
    %m = arith.mulf %v, %a : f32
    %s = arith.addf %m, %b : f32
    memref.store %s, %y[%i] : memref<1000xf32>
  }
  func.return
}
"""


def test_elementwise_f32():
    j = jit(ELEMENTWISE)
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    y = np.zeros_like(x)
    call(j, "axpb", [x.ctypes.data, y.ctypes.data, np.float32(2.5), np.float32(-1.0)])
    # `contract` fuses the multiply-add (one rounding), hence atol near 0
    np.testing.assert_allclose(y, x * np.float32(2.5) - 1, rtol=1e-6, atol=1e-7)


SUM = """
func.func @sum(%a: memref<?x{t}>) -> {t} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x{t}>
  %z = arith.constant 0.0 : {t}
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> ({t}) {{
    %x = memref.load %a[%i] : memref<?x{t}>
    %s = arith.addf %acc, %x : {t}
    scf.yield %s : {t}
  }}
  func.return %r : {t}
}}
"""


@pytest.mark.parametrize("t, dtype", [("f32", np.float32), ("f64", np.float64)])
def test_sum_reduction_iter_args(t, dtype):
    j = jit(SUM.format(t=t))
    a = np.random.default_rng(1).random(12345).astype(dtype)
    out = call(j, "sum", [a.ctypes.data, a.size], 1)
    got = f32_slot(out, 0) if dtype == np.float32 else f64_slot(out, 0)
    np.testing.assert_allclose(got, a.sum(dtype=np.float64), rtol=1e-5 if t == "f32" else 1e-12)


def test_2d_dynamic_loop_nest():
    src = """
    func.func @rowscale(%a: memref<?x?xf64>, %s: memref<?xf64>, %o: memref<?x?xf64>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %m = memref.dim %a, %c0 : memref<?x?xf64>
      %n = memref.dim %a, %c1 : memref<?x?xf64>
      scf.for %i = %c0 to %m step %c1 {
        %f = memref.load %s[%i] : memref<?xf64>
        scf.for %j = %c0 to %n step %c1 {
          %v = memref.load %a[%i, %j] : memref<?x?xf64>
          %w = arith.mulf %v, %f : f64
          memref.store %w, %o[%i, %j] : memref<?x?xf64>
        }
      }
      func.return
    }
    """
    j = jit(src)
    rng = np.random.default_rng(2)
    a = rng.random((7, 13))
    s = rng.random(7)
    o = np.zeros_like(a)
    call(j, "rowscale", [a.ctypes.data, 7, 13, s.ctypes.data, 7, o.ctypes.data, 7, 13])
    np.testing.assert_allclose(o, a * s[:, None], rtol=1e-15)


def test_alloc_result_is_returned_and_freed():
    src = """
    func.func @iota(%n: index, %scale: f32) -> (memref<?x4xf32>, f32) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %buf = memref.alloc(%n) : memref<?x4xf32>
      scf.for %i = %c0 to %n step %c1 {
        scf.for %j = %c0 to %c4 step %c1 {
          %k0 = arith.muli %i, %c4 : index
          %k = arith.addi %k0, %j : index
          %ki = arith.index_cast %k : index to i64
          %kf = arith.sitofp %ki : i64 to f32
          %v = arith.mulf %kf, %scale : f32
          memref.store %v, %buf[%i, %j] : memref<?x4xf32>
        }
      }
      func.return %buf, %scale : memref<?x4xf32>, f32
    }
    """
    j = jit(src)
    out = call(j, "iota", [5, np.float32(0.5)], 4)
    ptr, d0, d1 = int(out[0]), int(out[1]), int(out[2])
    assert (d0, d1) == (5, 4)
    assert ptr % 64 == 0
    assert f32_slot(out, 3) == np.float32(0.5)
    arr = np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(d0, d1)).copy()
    _libc.free(ptr)
    np.testing.assert_array_equal(arr, np.arange(20, dtype=np.float32).reshape(5, 4) * np.float32(0.5))


WINDOWS = """
func.func @pool(%x: memref<64xf32>, %y: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %n = arith.constant 16 : index
  %lo = arith.constant 0xFF800000 : f32
  scf.for %i = %c0 to %n step %c1 {
    %base = arith.muli %i, %c4 : index
    %m = scf.for %a = %c0 to %c2 step %c1 iter_args(%row = %lo) -> (f32) {
      %r = scf.for %k = %c0 to %c2 step %c1 iter_args(%acc = %row) -> (f32) {
        %two_a = arith.muli %a, %c2 : index
        %off = arith.addi %two_a, %k : index
        %at = arith.addi %base, %off : index
        %v = memref.load %x[%at] : memref<64xf32>
        %w = arith.maximumf %acc, %v : f32
        scf.yield %w : f32
      }
      scf.yield %r : f32
    }
    memref.store %m, %y[%i] : memref<16xf32>
  }
  func.return
}
"""


def test_small_loops_are_unrolled():
    """A 2x2 window (two nested loops of constant bounds) is emitted as
    straight-line code carrying its iter_args; the loop around it, of 16
    trips, stays a loop."""
    text = str(emit_module(parse_module(WINDOWS)))
    assert len(re.findall(r"^for\.header[.\d]*:", text, re.M)) == 1
    x = np.random.default_rng(2).standard_normal(64).astype(np.float32)
    x[5] = np.nan
    y = np.zeros(16, np.float32)
    call(jit(WINDOWS), "pool", [x.ctypes.data, y.ctypes.data])
    np.testing.assert_array_equal(y, np.max(x.reshape(16, 4), axis=1))


COPY_TAPS = """
func.func @taps(%x: memref<64xf32>, %y: memref<16x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %n = arith.constant 16 : index
  scf.for %i = %c0 to %n step %c1 {
    %base = arith.muli %i, %c4 : index
    scf.for %a = %c0 to %c2 step %c1 {
      scf.for %k = %c0 to %c2 step %c1 {
        %two_a = arith.muli %a, %c2 : index
        %off = arith.addi %two_a, %k : index
        %at = arith.addi %base, %off : index
        %v = memref.load %x[%at] : memref<64xf32>
        memref.store %v, %y[%i, %off] : memref<16x4xf32>
      }
    }
  }
  func.return
}
"""


def test_a_nest_of_copies_unrolls_only_its_innermost_loop():
    """Taps that only copy (im2col's): unrolled whole, the loop left around
    them vectorised with gathers and a 3x3 convolution took 2x as long; so
    only the innermost loop unrolls."""
    text = str(emit_module(parse_module(COPY_TAPS)))
    assert len(re.findall(r"^for\.header[.\d]*:", text, re.M)) == 2
    x = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    y = np.zeros((16, 4), np.float32)
    call(jit(COPY_TAPS), "taps", [x.ctypes.data, y.ctypes.data])
    np.testing.assert_array_equal(y, x.reshape(16, 4))


def test_scf_if_and_select():
    src = """
    func.func @relu_or_neg(%x: f64, %flag: i1) -> f64 {
      %z = arith.constant 0.0 : f64
      %r = scf.if %flag -> (f64) {
        %p = arith.cmpf ogt, %x, %z : f64
        %m = arith.select %p, %x, %z : f64
        scf.yield %m : f64
      } else {
        %n = arith.negf %x : f64
        scf.yield %n : f64
      }
      func.return %r : f64
    }
    """
    j = jit(src)
    for x, flag, want in [(3.5, 1, 3.5), (-2.0, 1, 0.0), (-2.0, 0, 2.0), (4.0, 0, -4.0)]:
        out = call(j, "relu_or_neg", [float(x), flag], 1)
        assert f64_slot(out, 0) == want


def test_integer_ops():
    src = """
    func.func @ints(%a: i32, %b: i32, %c: i64) -> (i32, i32, i32, i32, i32, i32, i32, i32, i64, i1, i64, i32, i32) {
      %0 = arith.addi %a, %b : i32
      %1 = arith.subi %a, %b : i32
      %2 = arith.muli %a, %b : i32
      %3 = arith.divsi %a, %b : i32
      %4 = arith.remsi %a, %b : i32
      %5 = arith.andi %a, %b : i32
      %6 = arith.xori %a, %b : i32
      %7 = arith.maxsi %a, %b : i32
      %8 = arith.extsi %a : i32 to i64
      %9 = arith.cmpi slt, %a, %b : i32
      %10 = arith.divui %c, %c : i64
      %11 = arith.floordivsi %a, %b : i32
      %12 = arith.trunci %c : i64 to i32
      func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12 : i32, i32, i32, i32, i32, i32, i32, i32, i64, i1, i64, i32, i32
    }
    """
    j = jit(src)
    a, b, c = -17, 5, (1 << 40) + 3
    out = call(j, "ints", [a, b, c], 13)
    want = [a + b, a - b, a * b, -3, -2, a & b, a ^ b, 5, a, 1, 1, -4, 3]
    assert list(out) == want


MATH = """
func.func @m(%x: memref<64xf32>, %o: memref<12x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 64 : index
  %half = arith.constant 0.5 : f32
  %two = arith.constant 2.0 : f32
  %r0 = arith.constant 0 : index
  %r1 = arith.constant 1 : index
  %r2 = arith.constant 2 : index
  %r3 = arith.constant 3 : index
  %r4 = arith.constant 4 : index
  %r5 = arith.constant 5 : index
  %r6 = arith.constant 6 : index
  %r7 = arith.constant 7 : index
  %r8 = arith.constant 8 : index
  %r9 = arith.constant 9 : index
  %r10 = arith.constant 10 : index
  %r11 = arith.constant 11 : index
  scf.for %i = %c0 to %n step %c1 {
    %x0 = memref.load %x[%i] : memref<64xf32>
    %v0 = math.exp %x0 : f32
    memref.store %v0, %o[%r0, %i] : memref<12x64xf32>
    %ax = math.absf %x0 : f32
    %v1 = math.log %ax : f32
    memref.store %v1, %o[%r1, %i] : memref<12x64xf32>
    %v2 = math.log1p %ax : f32
    memref.store %v2, %o[%r2, %i] : memref<12x64xf32>
    %v3 = math.sqrt %ax : f32
    memref.store %v3, %o[%r3, %i] : memref<12x64xf32>
    %v4 = math.rsqrt %ax : f32
    memref.store %v4, %o[%r4, %i] : memref<12x64xf32>
    %v5 = math.tanh %x0 : f32
    memref.store %v5, %o[%r5, %i] : memref<12x64xf32>
    %v6 = math.sin %x0 : f32
    memref.store %v6, %o[%r6, %i] : memref<12x64xf32>
    %v7 = math.cos %x0 : f32
    memref.store %v7, %o[%r7, %i] : memref<12x64xf32>
    %v8 = math.powf %ax, %half : f32
    memref.store %v8, %o[%r8, %i] : memref<12x64xf32>
    %v9 = math.erf %x0 : f32
    memref.store %v9, %o[%r9, %i] : memref<12x64xf32>
    %v10 = math.fma %x0, %two, %half : f32
    memref.store %v10, %o[%r10, %i] : memref<12x64xf32>
    %v11 = arith.maximumf %x0, %half : f32
    memref.store %v11, %o[%r11, %i] : memref<12x64xf32>
  }
  func.return
}
"""


def _math_reference(x: np.ndarray) -> np.ndarray:
    from math import erf

    ax = np.abs(x)
    return np.stack(
        [
            np.exp(x),
            np.log(ax),
            np.log1p(ax),
            np.sqrt(ax),
            1 / np.sqrt(ax),
            np.tanh(x),
            np.sin(x),
            np.cos(x),
            np.power(ax, np.float32(0.5)),
            np.array([erf(float(v)) for v in x], np.float32),
            x * 2 + np.float32(0.5),
            np.maximum(x, np.float32(0.5)),
        ]
    ).astype(np.float32)


@pytest.mark.parametrize("vector_math", [False, True])
def test_math_ops_match_numpy(vector_math):
    j = jit(MATH, vector_math=vector_math)
    x = np.linspace(-4, 4, 64, dtype=np.float32) + np.float32(0.01)
    o = np.zeros((12, 64), np.float32)
    call(j, "m", [x.ctypes.data, o.ctypes.data])
    want = _math_reference(x)
    np.testing.assert_allclose(o, want, rtol=1e-6 if not vector_math else 2e-6, atol=1e-7)


def _elementwise(name: str, op: str, t: str) -> str:
    """@name(x, y): y[i] = op(x[i]) over memrefs of dynamic size."""
    return f"""
    func.func @{name}(%x: memref<?x{t}>, %y: memref<?x{t}>) {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n = memref.dim %x, %c0 : memref<?x{t}>
      scf.for %i = %c0 to %n step %c1 {{
        %v = memref.load %x[%i] : memref<?x{t}>
        %e = {op} %v : {t}
        memref.store %e, %y[%i] : memref<?x{t}>
      }}
      func.return
    }}
    """


@pytest.mark.parametrize("t, dtype", [("f32", np.float32), ("f64", np.float64)])
def test_vector_exp_special_values(t, dtype):
    j = jit(_elementwise("e", "math.exp", t), vector_math=True)
    assert not re.search(r"llvm\.exp\.|@expf?\b", j.llvm_ir)
    info = np.finfo(dtype)
    x = np.concatenate(
        [
            np.array([-np.inf, np.inf, np.nan, 0.0, -0.0, 1.0, -1.0, 1e-30, 80.0, -90.0, -700.0, 700.0, 1e4, -1e4], dtype),
            np.linspace(float(np.log(info.tiny)) - 10, float(np.log(info.max)), 20001, dtype=dtype),
        ]
    )
    y = np.zeros_like(x)
    call(j, "e", [x.ctypes.data, x.size, y.ctypes.data, y.size])
    with np.errstate(over="ignore", under="ignore"):
        want = np.exp(x)
    normal = np.abs(want) >= info.tiny
    np.testing.assert_allclose(y[normal], want[normal], rtol=4 * info.eps)
    np.testing.assert_allclose(y[~normal], want[~normal], atol=4 * info.smallest_subnormal, rtol=0)
    assert np.isnan(y[2]) and y[0] == 0 and y[1] == np.inf


@pytest.mark.parametrize("t, dtype", [("f32", np.float32), ("f64", np.float64)])
def test_vector_log_special_values_and_range(t, dtype):
    """The inline log (fdlibm's reduction and polynomial): no libm call, within
    2 ulp of a correctly rounded log from normal numbers down to subnormals,
    and IEEE's special values."""
    j = jit(_elementwise("l", "math.log", t), vector_math=True)
    assert not re.search(r"llvm\.log\.|@logf?\b", j.llvm_ir)
    info = np.finfo(dtype)
    rng = np.random.default_rng(5)
    special = np.array([0.0, -0.0, -1.0, np.inf, -np.inf, np.nan, 1.0], dtype)
    x = np.concatenate([
        special,
        np.exp(rng.uniform(np.log(float(info.smallest_subnormal)), np.log(float(info.max)), 40000)).astype(dtype),
        rng.uniform(1 - 1e-3, 1 + 1e-3, 10000).astype(dtype),  # near 1, where cancellation would show
        rng.uniform(0.5, 2.0, 10000).astype(dtype),
    ])
    y = np.zeros_like(x)
    call(j, "l", [x.ctypes.data, x.size, y.ctypes.data, y.size])
    with np.errstate(divide="ignore", invalid="ignore"):
        exact = np.log(x[7:].astype(np.float64))  # f32: correctly rounded; f64: numpy's libm
    ulps = np.abs(y[7:] - exact) / np.spacing(np.abs(exact.astype(dtype))).astype(np.float64)
    assert ulps.max() <= 2, ulps.max()
    assert y[0] == -np.inf and y[1] == -np.inf and np.isnan(y[2]) and y[3] == np.inf
    assert np.isnan(y[4]) and np.isnan(y[5]) and y[6] == 0.0


def test_global_constant():
    src = """
    "memref.global"() <{sym_name = "w", type = memref<2x3xf32>, initial_value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, -6.5]]> : tensor<2x3xf32>, sym_visibility = "private", constant}> : () -> ()
    "memref.global"() <{sym_name = "k", type = memref<4xi32>, initial_value = dense<7> : tensor<4xi32>, sym_visibility = "private", constant}> : () -> ()
    func.func @dot(%x: memref<3xf32>) -> (f32, i32) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %w = memref.get_global @w : memref<2x3xf32>
      %k = memref.get_global @k : memref<4xi32>
      %z = arith.constant 0.0 : f32
      %r = scf.for %j = %c0 to %c3 step %c1 iter_args(%acc = %z) -> (f32) {
        %a = memref.load %w[%c1, %j] : memref<2x3xf32>
        %b = memref.load %x[%j] : memref<3xf32>
        %p = arith.mulf %a, %b : f32
        %s = arith.addf %acc, %p : f32
        scf.yield %s : f32
      }
      %kv = memref.load %k[%c3] : memref<4xi32>
      func.return %r, %kv : f32, i32
    }
    """
    j = jit(src)
    x = np.array([1.0, 10.0, 100.0], np.float32)
    out = call(j, "dot", [x.ctypes.data], 2)
    assert f32_slot(out, 0) == np.float32(4 + 50 - 650)
    assert out[1] == 7


PARALLEL = """
func.func @sq(%x: memref<?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %x[%i] : memref<?xf32>
    %w = arith.mulf %v, %v : f32
    %ii = arith.index_cast %i : index to i64
    %if = arith.sitofp %ii : i64 to f32
    %r = arith.addf %w, %if : f32
    memref.store %r, %y[%i] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
"""


@pytest.mark.parametrize("n", [0, 1, 17, 1000, 100003])
def test_parallel_equals_serial(n):
    serial = jit(PARALLEL, num_threads=1)
    par = jit(PARALLEL, num_threads=4, parallel_min_work=0)
    assert "__dfc_parallel_for" in par.llvm_ir
    x = np.random.default_rng(3).standard_normal(n).astype(np.float32)
    y1 = np.full(n, np.nan, np.float32)
    y2 = np.full(n, np.nan, np.float32)
    call(serial, "sq", [x.ctypes.data, n, y1.ctypes.data, n])
    call(par, "sq", [x.ctypes.data, n, y2.ctypes.data, n])
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_allclose(y1, x * x + np.arange(n, dtype=np.float32), rtol=1e-6)


def test_parallel_2d_with_step_and_captures():
    src = """
    func.func @fill(%y: memref<?x?xf64>, %s: f64) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %m = memref.dim %y, %c0 : memref<?x?xf64>
      %n = memref.dim %y, %c1 : memref<?x?xf64>
      "scf.parallel"(%c1, %c0, %m, %n, %c3, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
      ^bb0(%i: index, %j: index):
        %ii = arith.index_cast %i : index to i64
        %jj = arith.index_cast %j : index to i64
        %a = arith.sitofp %ii : i64 to f64
        %b = arith.sitofp %jj : i64 to f64
        %c = arith.mulf %a, %s : f64
        %d = arith.addf %c, %b : f64
        memref.store %d, %y[%i, %j] : memref<?x?xf64>
        scf.reduce
      }) : (index, index, index, index, index, index) -> ()
      func.return
    }
    """
    j = jit(src, num_threads=3, parallel_min_work=0)
    y = np.zeros((100, 9))
    call(j, "fill", [y.ctypes.data, 100, 9, 1000.0])
    want = np.zeros((100, 9))
    want[1::3] = np.arange(100)[1::3, None] * 1000.0 + np.arange(9)[None, :]
    np.testing.assert_array_equal(y, want)


def test_fast_math_flags():
    fast = str(emit_module(parse_module(SUM.format(t="f32"))))
    assert "reassoc" in fast and "contract" in fast
    assert not re.search(r"\b(fast|nnan|ninf)\b", fast)
    strict = JitModule(parse_module(SUM.format(t="f32")), fast_math=False)
    assert "reassoc" not in strict.llvm_ir and "contract" not in strict.llvm_ir
    a = np.random.default_rng(4).random(1001).astype(np.float32)
    out = call(strict, "sum", [a.ctypes.data, a.size], 1)
    want = np.float32(0)
    for v in a:
        want = np.float32(want + v)
    assert f32_slot(out, 0) == want  # sequential order, bit for bit


_VEC = re.compile(r"<(4|8|16|32) x float>")

REDUCE_4096 = """
func.func @s(%a: memref<4096xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 4096 : index
  %z = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f32) {
    %x = memref.load %a[%i] : memref<4096xf32>
    %s = arith.addf %acc, %x : f32
    scf.yield %s : f32
  }
  func.return %r : f32
}
"""


def test_elementwise_and_reduction_vectorise():
    ew = optimize(emit_module(parse_module(ELEMENTWISE)))
    assert _VEC.search(str(ew)), "elementwise f32 loop not vectorised"
    red = JitModule(parse_module(REDUCE_4096))
    assert _VEC.search(red.llvm_ir), "f32 sum not vectorised"
    a = np.random.default_rng(5).random(4096).astype(np.float32)
    out = call(red, "s", [a.ctypes.data], 1)
    np.testing.assert_allclose(f32_slot(out, 0), a.sum(dtype=np.float64), rtol=1e-5)
    assert red.assembly().strip()


def test_function_calls_and_while_loop():
    src = """
    func.func private @square(%x: i64) -> i64 {
      %r = arith.muli %x, %x : i64
      func.return %r : i64
    }
    func.func @first_square_above(%limit: i64) -> i64 {
      %c1 = arith.constant 1 : i64
      %r = scf.while (%i = %c1) : (i64) -> i64 {
        %s = func.call @square(%i) : (i64) -> i64
        %c = arith.cmpi sle, %s, %limit : i64
        scf.condition(%c) %i : i64
      } do {
      ^bb0(%j: i64):
        %n = arith.addi %j, %c1 : i64
        scf.yield %n : i64
      }
      %sq = func.call @square(%r) : (i64) -> i64
      func.return %sq : i64
    }
    """
    j = jit(src)
    assert call(j, "first_square_above", [50], 1)[0] == 64


def test_memref_copy_alloca_dealloc_and_casts():
    src = """
    func.func @roll(%x: memref<2x3xf32>, %y: memref<6xf32>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c6 = arith.constant 6 : index
      %t = memref.alloca() : memref<2x3xf32>
      "memref.copy"(%x, %t) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
      %h = memref.alloc() : memref<2x3xf32>
      "memref.copy"(%t, %h) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
      %flat = memref.collapse_shape %h [[0, 1]] : memref<2x3xf32> into memref<6xf32>
      %dyn = "memref.cast"(%flat) : (memref<6xf32>) -> memref<?xf32>
      scf.for %i = %c0 to %c6 step %c1 {
        %j0 = arith.addi %i, %c1 : index
        %j = arith.remui %j0, %c6 : index
        %v = memref.load %dyn[%j] : memref<?xf32>
        memref.store %v, %y[%i] : memref<6xf32>
      }
      memref.dealloc %h : memref<2x3xf32>
      func.return
    }
    """
    j = jit(src)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.zeros(6, np.float32)
    call(j, "roll", [x.ctypes.data, y.ctypes.data])
    np.testing.assert_array_equal(y, np.roll(x.ravel(), -1))


def test_unsupported_op_is_named():
    src = """
    func.func @t(%x: tensor<4xf32>) -> f32 {
      %c0 = arith.constant 0 : index
      %v = tensor.extract %x[%c0] : tensor<4xf32>
      func.return %v : f32
    }
    """
    with pytest.raises(NotImplementedError, match="tensor"):
        emit_module(parse_module(src))
    body = """
    func.func @u(%x: memref<4xf32>) {
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<4xf32>
      %t = tensor.empty() : tensor<4xf32>
      func.return
    }
    """
    with pytest.raises(NotImplementedError, match="unsupported op 'tensor.empty'"):
        emit_module(parse_module(body))


def test_max_reduction_vectorises_and_propagates_nan():
    src = """
    func.func @mx(%a: memref<4096xf32>) -> f32 {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n = arith.constant 4096 : index
      %z = arith.constant 0xFF800000 : f32
      %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f32) {
        %x = memref.load %a[%i] : memref<4096xf32>
        %s = arith.maximumf %acc, %x : f32
        scf.yield %s : f32
      }
      func.return %r : f32
    }
    """
    j = jit(src)
    assert _VEC.search(j.llvm_ir)
    a = np.random.default_rng(6).standard_normal(4096).astype(np.float32)
    assert f32_slot(call(j, "mx", [a.ctypes.data], 1), 0) == a.max()
    a[1234] = np.nan
    assert np.isnan(f32_slot(call(j, "mx", [a.ctypes.data], 1), 0))


def test_memref_control_flow_calls_f16_i1():
    src = """
    func.func private @ident(%a: memref<?xf32>) -> memref<?xf32> {
      func.return %a : memref<?xf32>
    }
    func.func @pick(%a: memref<?xf32>, %b: memref<?xf32>, %flag: i1) -> (memref<?xf32>, index) {
      %c0 = arith.constant 0 : index
      %r = scf.if %flag -> (memref<?xf32>) {
        scf.yield %a : memref<?xf32>
      } else {
        scf.yield %b : memref<?xf32>
      }
      %r2 = func.call @ident(%r) : (memref<?xf32>) -> memref<?xf32>
      %d = memref.dim %r2, %c0 : memref<?xf32>
      func.return %r2, %d : memref<?xf32>, index
    }
    func.func @masked(%a: memref<8xf16>, %m: memref<8xi1>) -> f16 {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %z = arith.constant 0.0 : f16
      %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %z) -> (f16) {
        %x = memref.load %a[%i] : memref<8xf16>
        %b = memref.load %m[%i] : memref<8xi1>
        %v = arith.select %b, %x, %z : f16
        %s = arith.addf %acc, %v : f16
        scf.yield %s : f16
      }
      func.return %r : f16
    }
    """
    j = jit(src)
    a, b = np.ones(5, np.float32), np.zeros(3, np.float32)
    out = call(j, "pick", [a.ctypes.data, 5, b.ctypes.data, 3, 0], 3)
    assert (out[0], out[1], out[2]) == (b.ctypes.data, 3, 3)
    out = call(j, "pick", [a.ctypes.data, 5, b.ctypes.data, 3, 1], 3)
    assert (out[0], out[1], out[2]) == (a.ctypes.data, 5, 5)
    h = np.arange(8, dtype=np.float16)
    m = np.array([1, 0, 1, 1, 0, 1, 0, 1], np.bool_)
    out = call(j, "masked", [h.ctypes.data, m.ctypes.data], 1)
    assert out[:1].view(np.float16)[0] == h[m].sum()


def test_parallel_rows_threshold_is_evaluated_at_run_time():
    src = """
    func.func @rows(%x: memref<?x?xf32>, %y: memref<?xf32>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %m = memref.dim %x, %c0 : memref<?x?xf32>
      %n = memref.dim %x, %c1 : memref<?x?xf32>
      %z = arith.constant 0.0 : f32
      "scf.parallel"(%c0, %m, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
      ^bb0(%i: index):
        %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %z) -> (f32) {
          %v = memref.load %x[%i, %j] {nontemporal = true} : memref<?x?xf32>
          %s = arith.addf %acc, %v : f32
          scf.yield %s : f32
        }
        memref.store %r, %y[%i] : memref<?xf32>
        scf.reduce
      }) : (index, index, index) -> ()
      func.return
    }
    """
    ir_text = str(emit_module(parse_module(src), num_threads=2))
    assert "par.min_iters" in ir_text and "!nontemporal" in ir_text
    j = jit(src, num_threads=2)
    for m, n in [(3, 5), (64, 50000)]:
        x = np.random.default_rng(m).random((m, n)).astype(np.float32)
        y = np.zeros(m, np.float32)
        call(j, "rows", [x.ctypes.data, m, n, y.ctypes.data, m])
        np.testing.assert_allclose(y, x.sum(axis=1, dtype=np.float64), rtol=1e-4)  # f32 accumulation


@pytest.mark.parametrize("threads", [pytest.param(1, marks=pytest.mark.slow), 2])
def test_many_loop_nests_are_outlined(threads):
    """A function of OUTLINE_MIN_NESTS or more top-level loop nests (here the
    gradient of three stencils) emits each as a noinline function: LLVM's time
    on one function grows faster than its size. Fewer (the three stencils)
    stay inline. LLVM merges the identical ones (`merge_identical_functions`):
    the emitted IR has them all, the optimised IR keeps them noinline. Values
    and gradients agree with the interpreter."""
    from benchmarks.compile_time import stencil_chain
    from dfc.compiler import ExecutionEngine, PassManager
    from dfc.compiler.codegen.llvm.outline import OUTLINE_MIN_NESTS
    from dfc.compiler.engine import lower
    from dfc.compiler.interpreter import interpret

    text = stencil_chain(3, size=10)
    module = parse_module(text)
    PassManager.parse("autodiff{func=f}").run(module)
    engine = ExecutionEngine(module.clone(), threads=threads)
    emitted = str(emit_module(lower(module, threads), num_threads=threads))
    assert not re.search(r'define internal void @"f\.nest', emitted)
    assert len(re.findall(r'define internal void @"f_grad\.nest', emitted)) >= OUTLINE_MIN_NESTS

    def outlined(fn: str) -> list[str]:  # a part of its own (one per kernel), called from the function's part
        found = []
        for part in engine.jit.object.irs:
            attrs = re.findall(rf"define (?:internal )?(?:fastcc )?void @\"?{fn}\.nest[\w.]*\"?\([^)]*\)[^{{]*#(\d+)", part)
            for a in set(attrs):
                assert "noinline" in re.search(rf"attributes #{a} = {{[^}}]*}}", part).group(0)
            found += attrs
        return found

    assert not outlined("f") and outlined("f_grad")
    rng = np.random.default_rng(3)
    x, y, seed = (rng.standard_normal((10, 10)) for _ in range(3))
    np.testing.assert_allclose(engine.invoke("f", x, y), interpret(parse_module(text), "f", x, y), rtol=1e-12)
    for got, want in zip(engine.invoke("f_grad", x, y, seed), interpret(module, "f_grad", x, y, seed), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-12)


def test_an_outlined_nest_keeps_its_parallel_loops():
    """A top-level loop around a parallel loop, outlined among many nests, still
    runs the parallel loop on the thread pool, and computes what it did inline."""
    from dfc.compiler.codegen.llvm.outline import OUTLINE_MIN_NESTS

    steps = """
  scf.for %t = %c0 to %c3 step %c1 {
    "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %v = memref.load %x[%i] : memref<4096xf64>
      %w = arith.addf %v, %v : f64
      memref.store %w, %x[%i] : memref<4096xf64>
      scf.reduce
    }) : (index, index, index) -> ()
  }"""
    scale = """
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<4096xf64>
    %w = arith.mulf %v, %v : f64
    memref.store %w, %x[%i] : memref<4096xf64>
  }"""
    for nests in (2, OUTLINE_MIN_NESTS):
        src = f"""
func.func @f(%x: memref<4096xf64>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %n = arith.constant 4096 : index{steps}{scale * (nests - 1)}
  func.return
}}"""
        j = jit(src, num_threads=2, parallel_min_work=1)
        outlined = nests >= OUTLINE_MIN_NESTS
        assert ("@f.nest" in j.llvm_ir) == outlined
        assert j.llvm_ir.count("call void @__dfc_parallel_for") == 1
        x = np.linspace(0.5, 1.0, 4096)
        call(j, "f", [x.ctypes.data])
        np.testing.assert_allclose(x, (np.linspace(0.5, 1.0, 4096) * 8) ** (2 ** (nests - 1)), rtol=1e-12)
