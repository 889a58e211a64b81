"""The CPU backend end to end: programs compiled by the ExecutionEngine match numpy."""

import resource
from pathlib import Path

import numpy as np
import pytest

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.engine import lower
from dfc.compiler.interpreter import interpret

EXAMPLES = Path(__file__).parents[2] / "examples"
RNG = np.random.default_rng(3)


def engine(text: str, **options) -> ExecutionEngine:
    return ExecutionEngine(parse_module(text), **options)


def example(name: str) -> str:
    return (EXAMPLES / f"{name}.mlir").read_text()


def test_gemm_sum():
    x, y = RNG.standard_normal((5, 4)).astype(np.float32), RNG.standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(engine(example("gemm_sum")).invoke("gemm_sum", x, y), (x @ y).sum(), rtol=1e-5)


def test_mlp_matches_numpy():
    shapes = [(120, 784), (120,), (32, 120), (32,), (10, 32), (10,)]
    params = [(RNG.standard_normal(s) * 0.05).astype(np.float32) for s in shapes]
    x, labels = RNG.standard_normal((8, 784)).astype(np.float32), RNG.integers(0, 10, 8)
    w1, b1, w2, b2, w3, b3 = params
    h = np.maximum(x @ w1.T + b1, 0)
    h = np.maximum(h @ w2.T + b2, 0)
    logits = h @ w3.T + b3
    logp = logits - logits.max(1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(1, keepdims=True))
    expected = -logp[np.arange(8), labels].mean()
    got = engine(example("mlp")).invoke("mlp", x, labels, *params)
    np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_softmax_loss():
    x, w = RNG.standard_normal((64, 512)).astype(np.float32), RNG.standard_normal((64, 512)).astype(np.float32)
    e = np.exp(x - x.max(1, keepdims=True))
    expected = (e / e.sum(1, keepdims=True) * w).sum(dtype=np.float64)
    np.testing.assert_allclose(engine(example("softmax")).invoke("softmax_loss", x, w), expected, rtol=1e-5)


def numpy_jacobi(a, steps=20):
    a, b = a.copy(), a.copy()
    for _ in range(steps):
        b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])
        a[1:-1, 1:-1] = 0.2 * (b[1:-1, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] + b[2:, 1:-1] + b[:-2, 1:-1])
    return a.sum()


@pytest.mark.parametrize("threads", [1, 4])
def test_jacobi2d(threads):
    a = RNG.standard_normal((64, 64))
    got = engine(example("jacobi2d"), threads=threads).invoke("jacobi2d", a)
    np.testing.assert_allclose(got, numpy_jacobi(a), rtol=1e-12)


WCR = """func.func @f(%x: tensor<{n}x{m}x{t}>) -> tensor<{m}x{t}> {{
  %init = arith.constant dense<{init}> : tensor<{m}x{t}>
  %r = df.map (%i, %j) in ({n}, {m}) outs(%o = %init : tensor<{m}x{t}>) {{
    %v = df.read %x[%i, %j] : tensor<{n}x{m}x{t}>
    df.write %v, %o[%j] wcr({kind}) : tensor<{m}x{t}>
  }} -> tensor<{m}x{t}>
  func.return %r : tensor<{m}x{t}>
}}"""
WCR_INIT = {"add": ("0.0", np.sum), "mul": ("1.0", np.prod), "max": ("0xFF800000", np.max), "min": ("0x7F800000", np.min)}


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("kind", sorted(WCR_INIT))
@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_each_wcr_kind_in_parallel_and_serial(kind, dtype, threads):
    init, reduce = WCR_INIT[kind]
    if dtype == "f64" and init.startswith("0x"):
        init = {"0xFF800000": "0xFFF0000000000000", "0x7F800000": "0x7FF0000000000000"}[init]
    n, m = 20000, 3  # enough work to run in parallel
    x = RNG.random((n, m)) + 0.5  # positive: sums without cancellation, so rtol is meaningful
    if kind == "mul":  # products of many rounded floats drift; powers of two multiply exactly
        x = RNG.choice([0.5, 2.0], (n, m)) ** (RNG.random((n, m)) < 0.01)
    x = x.astype(np.float32 if dtype == "f32" else np.float64)
    got = engine(WCR.format(n=n, m=m, t=dtype, init=init, kind=kind), threads=threads).invoke("f", x)
    rtol = 1e-5 if dtype == "f32" else 1e-12
    np.testing.assert_allclose(got, reduce(x.astype(np.float64), axis=0), rtol=rtol)


SCATTER = """func.func @f(%x: tensor<4000x64xf64>) -> tensor<4002x64xf64> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zeros = arith.constant dense<0.0> : tensor<4002x64xf64>
  %r = df.map (%i, %j) in (4000, 64) outs(%o = %zeros : tensor<4002x64xf64>) {
    %v = df.read %x[%i, %j] : tensor<4000x64xf64>
    %i1 = arith.addi %i, %c1 : index
    %i2 = arith.addi %i, %c2 : index
    df.write %v, %o[%i, %j] wcr(add) : tensor<4002x64xf64>
    df.write %v, %o[%i1, %j] wcr(add) : tensor<4002x64xf64>
    df.write %v, %o[%i2, %j] wcr(add) : tensor<4002x64xf64>
  } -> tensor<4002x64xf64>
  func.return %r : tensor<4002x64xf64>
}"""


@pytest.mark.parametrize("threads", [1, 2, 7])
def test_wcr_writes_across_chunk_boundaries(threads):
    """Rows i, i+1, i+2 of the output: neighbouring chunks update the same rows,
    so the parallel lowering must keep private copies (no lost updates)."""
    x = RNG.random((4000, 64))
    want = np.zeros((4002, 64))
    for k in range(3):
        want[k : k + 4000] += x
    got = engine(SCATTER, threads=threads).invoke("f", x)
    np.testing.assert_allclose(got, want, rtol=1e-12)


SHORT_OUTER = """func.func @f(%x: tensor<{b}x3x40x512xf64>) -> (tensor<{b}x3x40x512xf64>, tensor<f64>, tensor<40xf64>) {{
  %e = tensor.empty() : tensor<{b}x3x40x512xf64>
  %z = arith.constant dense<0.0> : tensor<f64>
  %zr = arith.constant dense<0.0> : tensor<40xf64>
  %y, %s, %r = df.map (%i, %j, %k, %l) in ({b}, 3, 40, 512) outs(%o = %e : tensor<{b}x3x40x512xf64>,
      %os = %z : tensor<f64>, %or = %zr : tensor<40xf64>) {{
    %v = df.read %x[%i, %j, %k, %l] : tensor<{b}x3x40x512xf64>
    %m = arith.mulf %v, %v : f64
    df.write %m, %o[%i, %j, %k, %l] : tensor<{b}x3x40x512xf64>
    df.write %v, %os[] wcr(add) : tensor<f64>
    df.write %m, %or[%k] wcr(max) : tensor<40xf64>
  }} -> tensor<{b}x3x40x512xf64>, tensor<f64>, tensor<40xf64>
  func.return %y, %s, %r : tensor<{b}x3x40x512xf64>, tensor<f64>, tensor<40xf64>
}}"""


@pytest.mark.parametrize("threads", [2, 3, 7])
@pytest.mark.parametrize("batch", [1, 2])
def test_short_outer_dimension_is_chunked_with_the_next(batch, threads):
    """An outer extent of 1 or 2 joins the next dimensions for chunking (the
    flat index split back by division); the total and the row maxima are
    reductions every chunk shares (private copies, combined)."""
    x = RNG.standard_normal((batch, 3, 40, 512))
    text = SHORT_OUTER.format(b=batch)
    lowered = str(lower(parse_module(text), threads=threads))
    assert "scf.parallel" in lowered and "arith.remui" in lowered
    y, s, r = engine(text, threads=threads).invoke("f", x)
    np.testing.assert_allclose(y, x * x, rtol=1e-15)
    np.testing.assert_allclose(s, x.sum(), rtol=1e-12)
    np.testing.assert_allclose(r, (x * x).max(axis=(0, 1, 3)), rtol=1e-15)


DYNAMIC = """func.func @f(%x: tensor<?x16xf64>, %y: tensor<?x16xf64>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16xf64>
  %init = tensor.empty(%n) : tensor<?xf64>
  %zeros = df.map (%i) in (%n) outs(%o = %init : tensor<?xf64>) {
    %z = arith.constant 0.0 : f64
    df.write %z, %o[%i] : tensor<?xf64>
  } -> tensor<?xf64>
  %r = df.map (%i) in (%n) outs(%o = %zeros : tensor<?xf64>) {
    df.map (%j) in (16) {
      %a = df.read %x[%i, %j] : tensor<?x16xf64>
      %b = df.read %y[%i, %j] : tensor<?x16xf64>
      %p = df.tasklet (%a, %b) : (f64, f64) -> f64 {
      ^bb0(%u: f64, %v: f64):
        %m = arith.mulf %u, %v : f64
        df.yield %m : f64
      }
      df.write %p, %o[%i] wcr(add) : tensor<?xf64>
    }
  } -> tensor<?xf64>
  func.return %r : tensor<?xf64>
}"""


def test_dynamic_shapes_and_nested_maps():
    e = engine(DYNAMIC)
    for n in (1, 7, 3000):
        x, y = RNG.standard_normal((n, 16)), RNG.standard_normal((n, 16))
        terms = x.astype(np.longdouble) * y
        # any order of 16 float64 additions is within 16 eps of the terms' absolute sum (a row that cancels
        # has a large relative error in every order, NumPy's pairwise one included)
        bound = 16 * np.finfo(np.float64).eps * np.abs(terms).sum(1)
        assert np.all(np.abs(e.invoke("f", x, y) - terms.sum(1)) <= bound)


def test_dynamic_dimensions_that_must_agree_are_checked():
    """The map runs over x's rows and reads y's: a shorter y would be read out of bounds."""
    e = engine(DYNAMIC)
    with pytest.raises(ValueError, match=r"argument #1 has size 5 in dimension 0, but the program indexes it over \[0, 6\]"):
        e.invoke("f", np.zeros((7, 16)), np.zeros((5, 16)))
    np.testing.assert_allclose(e.invoke("f", np.ones((2, 16)), np.ones((9, 16))), [16.0, 16.0])  # a longer y is safe
    assert e.invoke("f", np.zeros((0, 16)), np.zeros((0, 16))).shape == (0,)


@pytest.mark.parametrize(
    "args,error,message",
    [
        ((np.zeros((5, 4), np.float64), np.zeros((4, 3), np.float32)), TypeError, "argument #0 must have dtype float32"),
        ((np.zeros((5, 5), np.float32), np.zeros((4, 3), np.float32)), ValueError, "size 4 in dimension 1"),
        ((np.zeros(20, np.float32), np.zeros((4, 3), np.float32)), ValueError, "must have rank 2"),
        ((np.zeros((5, 4), np.float32),), TypeError, "takes 2 arguments, got 1"),
        (([[1.0]], np.zeros((4, 3), np.float32)), TypeError, "must be a numpy array"),
    ],
)
def test_bad_arguments_raise(args, error, message):
    with pytest.raises(error, match=message):
        engine(example("gemm_sum")).invoke("gemm_sum", *args)


def test_non_contiguous_arguments_are_accepted():
    x = RNG.standard_normal((4, 5)).astype(np.float32).T
    y = RNG.standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(engine(example("gemm_sum")).invoke("gemm_sum", x, y), (x @ y).sum(), rtol=1e-5)


def test_compiled_code_is_cached():
    first = engine(example("gemm_sum"))
    assert engine(example("gemm_sum")).jit is first.jit
    assert engine(example("gemm_sum"), fast_math=False).jit is not first.jit


def test_scalar_arguments_and_results():
    text = """func.func @f(%x: tensor<4xf32>, %s: f32, %k: i64) -> (tensor<4xf32>, f32) {
  %r = df.map (%i) in (4) outs(%o = %x : tensor<4xf32>) {
    %v = df.read %x[%i] : tensor<4xf32>
    %w = df.tasklet (%v, %s) : (f32, f32) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %b : f32
      df.yield %m : f32
    }
    df.write %w, %o[%i] : tensor<4xf32>
  } -> tensor<4xf32>
  %kf = arith.sitofp %k : i64 to f32
  %t = arith.addf %s, %kf : f32
  func.return %r, %t : tensor<4xf32>, f32
}"""
    x = np.arange(4, dtype=np.float32)
    r, t = engine(text).invoke("f", x, 2.5, 3)
    np.testing.assert_array_equal(r, x * 2.5)
    assert t == np.float32(5.5)
    np.testing.assert_array_equal(x, np.arange(4))  # arguments are never written


SCALARS = """func.func @f(%x: tensor<2xf64>, %s: f64, %k: i64) -> (tensor<2xf64>, f64, i64) {
  %r = df.map (%i) in (2) outs(%o = %x : tensor<2xf64>) {
    %v = df.read %x[%i] : tensor<2xf64>
    %w = df.tasklet (%v, %s) : (f64, f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %m = arith.mulf %a, %b : f64
      df.yield %m : f64
    }
    df.write %w, %o[%i] : tensor<2xf64>
  } -> tensor<2xf64>
  %n = arith.negf %s : f64
  %j = arith.subi %k, %k : i64
  %l = arith.subi %j, %k : i64
  func.return %r, %n, %l : tensor<2xf64>, f64, i64
}"""


@pytest.mark.parametrize("s,k", [(2.5, 3), (-1e300, -(2**62)), (np.float64(-0.5), np.int64(7)), (3, 2**63 - 1)])
def test_scalars_round_trip_through_slots(s, k):
    """Negative floats and integers use every bit of their 8-byte slot."""
    x = np.array([1.0, -2.0])
    r, n, m = engine(SCALARS).invoke("f", x, s, k)
    np.testing.assert_array_equal(r, x * float(s))
    assert n == -float(s) and type(n) is np.float64
    assert m == -int(k) and type(m) is np.int64


def test_arrays_the_fast_path_does_not_take():
    """Read-only and non-contiguous arrays, and a wrong scalar type, still get
    the checked path: the same results, or the same errors."""
    e = engine(SCALARS)
    x = np.array([1.0, -2.0])
    frozen = x.copy()
    frozen.setflags(write=False)
    strided = np.array([1.0, 0.0, -2.0])[::2]
    for arg in (frozen, strided):
        np.testing.assert_array_equal(e.invoke("f", arg, 2.0, 1)[0], [2.0, -4.0])
    with pytest.raises(TypeError, match="argument #2 must be an integer, got float"):
        e.invoke("f", x, 2.0, 1.5)
    with pytest.raises(TypeError, match="argument #1 must be a float, got str"):
        e.invoke("f", x, "2", 1)
    with pytest.raises(TypeError, match="argument #0 must have dtype float64, got float32"):
        e.invoke("f", x.astype(np.float32), 2.0, 1)


def test_interpreter_and_engine_agree_on_nn_ops():
    text = """func.func @f(%a: tensor<6x5xf32>, %b: tensor<5xf32>) -> tensor<6x5xf32> {
  %s = nn.add %a, %b : (tensor<6x5xf32>, tensor<5xf32>) -> tensor<6x5xf32>
  %t = nn.tanh %s : (tensor<6x5xf32>) -> tensor<6x5xf32>
  %m = nn.softmax %t {axis = 0 : i64} : (tensor<6x5xf32>) -> tensor<6x5xf32>
  %r = nn.transpose %m {permutation = array<i64: 1, 0>} : (tensor<6x5xf32>) -> tensor<5x6xf32>
  %q = nn.reshape %r : (tensor<5x6xf32>) -> tensor<6x5xf32>
  %l = nn.sigmoid %q : (tensor<6x5xf32>) -> tensor<6x5xf32>
  func.return %l : tensor<6x5xf32>
}"""
    from dfc.compiler import PassManager

    a, b = RNG.standard_normal((6, 5)).astype(np.float32), RNG.standard_normal(5).astype(np.float32)
    module = parse_module(text)
    got = ExecutionEngine(module).invoke("f", a, b)
    PassManager.parse("expand-library").run(module)
    np.testing.assert_allclose(got, interpret(module, "f", a, b), rtol=1e-5)


def _rss_kb() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() // 1024


def test_ten_thousand_invocations_do_not_leak():
    text = """func.func @f(%x: tensor<256xf32>) -> tensor<256xf32> {
  %e = nn.exp %x : (tensor<256xf32>) -> tensor<256xf32>
  %n = nn.neg %e : (tensor<256xf32>) -> tensor<256xf32>
  func.return %n : tensor<256xf32>
}"""
    e = engine(text, threads=1)
    x = np.ones(256, np.float32)
    for _ in range(1000):
        e.invoke("f", x)
    before = _rss_kb()
    for _ in range(10000):
        e.invoke("f", x)
    assert _rss_kb() - before < 2048, "resident memory grew by more than 2 MiB over 10,000 calls"


def test_box_fill_fold_and_donor_buffers_keep_results():
    """A box fill folded into its reader (canonicalize), and a map writing into
    the buffer of the tensor it accumulates (bufferize): the compiled program
    has one buffer, its result, and matches the interpreter and numpy."""
    program = """
func.func @fill_then_add(%g: tensor<6x5xf32>, %x: tensor<6x5xf32>) -> tensor<6x5xf32> {
  %c1 = arith.constant 1 : index
  %empty = tensor.empty() : tensor<6x5xf32>
  %zeroed = df.map (%i, %j) in (4, 3) outs(%o = %g : tensor<6x5xf32>) {
    %i1 = arith.addi %i, %c1 : index
    %j1 = arith.addi %j, %c1 : index
    %z = arith.constant 0.0 : f32
    df.write %z, %o[%i1, %j1] : tensor<6x5xf32>
  } -> tensor<6x5xf32>
  %r = df.map (%i, %j) in (6, 5) outs(%o = %empty : tensor<6x5xf32>) {
    %a = df.read %zeroed[%i, %j] : tensor<6x5xf32>
    %b = df.read %x[%i, %j] : tensor<6x5xf32>
    %s = df.tasklet (%a, %b) : (f32, f32) -> f32 {
    ^bb0(%p: f32, %q: f32):
      %t = arith.addf %p, %q : f32
      df.yield %t : f32
    }
    df.write %s, %o[%i, %j] : tensor<6x5xf32>
  } -> tensor<6x5xf32>
  %e2 = tensor.empty() : tensor<6x5xf32>
  %twice = df.map (%i, %j) in (6, 5) outs(%o = %e2 : tensor<6x5xf32>) {
    %a = df.read %r[%i, %j] : tensor<6x5xf32>
    %b = df.read %x[%i, %j] : tensor<6x5xf32>
    %s = df.tasklet (%a, %b) : (f32, f32) -> f32 {
    ^bb0(%p: f32, %q: f32):
      %t = arith.mulf %p, %q : f32
      df.yield %t : f32
    }
    df.write %s, %o[%i, %j] : tensor<6x5xf32>
  } -> tensor<6x5xf32>
  func.return %twice : tensor<6x5xf32>
}"""
    rng = np.random.default_rng(5)
    g, x = rng.standard_normal((6, 5)).astype(np.float32), rng.standard_normal((6, 5)).astype(np.float32)
    zeroed = g.copy()
    zeroed[1:5, 1:4] = 0.0
    want = (zeroed + x) * x
    module = parse_module(program)
    lowered = str(lower(module, threads=1))
    assert lowered.count("memref.alloc") == 1 and "memref.global" not in lowered
    np.testing.assert_allclose(interpret(module, "fill_then_add", g, x), want, rtol=1e-6)
    np.testing.assert_allclose(ExecutionEngine(module).invoke("fill_then_add", g, x), want, rtol=1e-6)


@pytest.mark.parametrize("width", [3, 6, 64, 203])
def test_guarded_gather_split_into_three_loops(width):
    """lower-dataflow splits the inner loop of a guarded gather at the points
    where its guards change; every width (down to ones with empty parts)
    still matches numpy."""
    text = f"""func.func @gather(%x: tensor<4x{width}xf32>) -> tensor<4x{width}xf32> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %last = arith.constant {width - 1} : index
  %empty = tensor.empty() : tensor<4x{width}xf32>
  %r = df.map (%i, %j) in (4, {width}) outs(%o = %empty : tensor<4x{width}xf32>) {{
    %w = arith.subi %j, %c1 : index
    %has_w = arith.cmpi sge, %w, %c0 : index
    %wc = arith.maxsi %w, %c0 : index
    %e = arith.addi %j, %c1 : index
    %has_e = arith.cmpi slt, %e, %last : index
    %ec = arith.minsi %e, %last : index
    %a = df.read %x[%i, %wc] : tensor<4x{width}xf32>
    %b = df.read %x[%i, %ec] : tensor<4x{width}xf32>
    %s = df.tasklet (%a, %b, %has_w, %has_e) : (f32, f32, i1, i1) -> f32 {{
    ^bb0(%p: f32, %q: f32, %u: i1, %v: i1):
      %z = arith.constant 0.0 : f32
      %p1 = arith.select %u, %p, %z : f32
      %q1 = arith.select %v, %q, %z : f32
      %t = arith.addf %p1, %q1 : f32
      df.yield %t : f32
    }}
    df.write %s, %o[%i, %j] : tensor<4x{width}xf32>
  }} -> tensor<4x{width}xf32>
  func.return %r : tensor<4x{width}xf32>
}}"""
    x = RNG.standard_normal((4, width)).astype(np.float32)
    want = np.zeros_like(x)
    want[:, 1:] += x[:, :-1]
    want[:, : width - 2] += x[:, 1 : width - 1]
    np.testing.assert_allclose(engine(text, threads=2).invoke("gather", x), want, rtol=1e-6)


def test_reduction_in_a_loop_inside_a_map():
    """A wcr write in an scf.for of a map body reduces once per loop iteration
    (canonicalize turned it into a plain write: only the last iteration counted)."""
    text = """func.func @f(%x: tensor<4xf64>) -> tensor<4xf64> {
  %zero = arith.constant dense<0.0> : tensor<4xf64>
  %r = df.map (%i) in (4) outs(%o = %zero : tensor<4xf64>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    scf.for %k = %c0 to %c3 step %c1 {
      %v = df.read %x[%i] : tensor<4xf64>
      df.write %v, %o[%i] wcr(add) : tensor<4xf64>
    }
  } -> tensor<4xf64>
  func.return %r : tensor<4xf64>
}"""
    x = np.arange(4.0)
    module = parse_module(text)
    PassManager.parse("canonicalize").run(module)
    np.testing.assert_array_equal(interpret(module, "f", x), 3 * x)
    np.testing.assert_array_equal(engine(text).invoke("f", x), 3 * x)
