"""`blas.gemm` on the GPU (`passes.gpu_gemm`): the tiled shared-memory kernel on the
simulated device (tests/support/gpu_sim.py) against numpy, its barriers, its PTX through ptxas,
and, where a GPU is present, on it.

Products are written as `blas.gemm` on flat buffers, so that the test states every
address (leading dimensions, batch strides, transpositions, offset tables) and the
reference below reads exactly the elements the op's definition names.
"""

import re
import shutil
import subprocess

import numpy as np
import pytest
from support.gpu_sim import SimulationError, simulated_engine
from test_gpu import cuda_or_skip, kernels
from xdsl.dialects import gpu, memref, scf

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.codegen import blas_runtime
from dfc.compiler.codegen.nvptx import emit_ptx
from dfc.dialects.blas import GemmOp
from dfc.dialects.diagnostics import CompileError
from dfc.passes import default_pipeline
from dfc.passes.gpu_gemm import SHARED

T = {np.float32: "f32", np.float64: "f64"}


def reference(a, b, c, batch, m, n, k, lda, ldb, ldc, sa, sb, sc, beta, ta=False, tb=False, ga=None, gb=None):
    """`blas.gemm`'s definition (dialects/blas.py), in float64."""
    out = c.astype(np.float64)
    i, p, j = np.arange(m)[:, None], np.arange(k)[None, :], np.arange(n)[None, :]
    for t in range(batch):
        if ga is not None:
            A = a[t * sa + ga[0][i] + ga[1][p]]
        else:
            A = a[t * sa + p * lda + i] if ta else a[t * sa + i * lda + p]
        pc = np.arange(k)[:, None]
        if gb is not None:
            B = b[t * sb + gb[0][pc] + gb[1][j]]
        else:
            B = b[t * sb + j * ldb + pc] if tb else b[t * sb + pc * ldb + j]
        at = t * sc + np.arange(m)[:, None] * ldc + j
        out[at] = A.astype(np.float64) @ B.astype(np.float64) + beta * out[at]
    return out


def gemm_module(dtype, sizes: tuple[int, int, int], config: dict, epilogue: bool = False) -> str:
    """@f(a, b, c0[, tables][, d0]) -> c (and d): c = c0, then the gemm of `config` into c."""
    t = T[dtype]
    na, nb, nc = sizes
    args = [f"%a: memref<{na}x{t}>", f"%b: memref<{nb}x{t}>", f"%c0: memref<{nc}x{t}>"]
    gather = ""
    for side in "ab":
        if config.get(f"g{side}") is not None:
            args += [f"%{side}r: memref<?xindex>", f"%{side}c: memref<?xindex>"]
            gather += f" gather_{side}(%{side}r, %{side}c : memref<?xindex>, memref<?xindex>)"
    results = [f"memref<{nc}x{t}>"]
    if epilogue:
        args.append(f"%d0: memref<{nc}x{t}>")
        results.append(f"memref<{nc}x{t}>")
    names = ["batch", "m", "n", "k", "lda", "ldb", "ldc", "sa", "sb", "sc"]
    consts = "\n".join(f"  %{x} = arith.constant {config[x]} : index" for x in names)
    flags = [f"beta = {float(config['beta'])} : f64"] + [f"transpose_{s}" for s in "ab" if config.get(f"t{s}")]
    body = ""
    returned = "%c"
    if epilogue:  # d[at] += relu(c[at]), at = t*sc + i*ldc + j: once per element or the sum shows it
        body = f"""  %d = memref.alloc() : memref<{nc}x{t}>
  "memref.copy"(%d0, %d) : (memref<{nc}x{t}>, memref<{nc}x{t}>) -> ()
"""
        returned = "%c, %d"
    ep = ""
    if epilogue:
        ep = f""" epilogue {{
  ^bb0(%t: index, %i: index, %j: index):
    %ts = arith.muli %t, %sc : index
    %ir = arith.muli %i, %ldc : index
    %o = arith.addi %ts, %ir : index
    %at = arith.addi %o, %j : index
    %v = memref.load %c[%at] : memref<{nc}x{t}>
    %z = arith.constant 0.0 : {t}
    %r = arith.maximumf %v, %z : {t}
    %w = memref.load %d[%at] : memref<{nc}x{t}>
    %s = arith.addf %w, %r : {t}
    memref.store %s, %d[%at] : memref<{nc}x{t}>
  }}"""
    return f"""func.func @f({", ".join(args)}) -> ({", ".join(results)}) {{
  %c = memref.alloc() : memref<{nc}x{t}>
  "memref.copy"(%c0, %c) : (memref<{nc}x{t}>, memref<{nc}x{t}>) -> ()
{body}{consts}
  blas.gemm %a, %b, %c, %batch, %m, %n, %k, %lda, %ldb, %ldc, %sa, %sb, %sc{gather} {{{", ".join(flags)}}} : memref<{na}x{t}>, memref<{nb}x{t}>, memref<{nc}x{t}>{ep}
  func.return {returned} : {", ".join(results)}
}}
"""


def gemm_engine(dtype, sizes: tuple[int, int, int], config: dict, epilogue: bool = False):
    """The simulated engine of `gemm_module`, lowered by `lower-dataflow{target=gpu}` alone."""
    module = parse_module(gemm_module(dtype, sizes, config, epilogue))
    PassManager.parse("lower-dataflow{target=gpu},canonicalize,cse").run(module)
    return simulated_engine(module)


def random_config(rng: np.random.Generator) -> dict:
    """A product of random sizes (edges of the 64 x 64 tiles and 16-deep steps, and
    single rows, columns and depths), layouts, padding and batch strides."""
    pick = [1, 2, 5, 15, 16, 17, 63, 64, 65, 100, 130]
    m, n, k = (int(rng.choice(pick)) for _ in range(3))
    batch = int(rng.choice([1, 1, 2, 3]))
    ta, tb, beta = bool(rng.integers(2)), bool(rng.integers(2)), int(rng.integers(2))
    pad = lambda: int(rng.choice([0, 0, 3]))  # noqa: E731
    lda, ldb, ldc = (m if ta else k) + pad(), (k if tb else n) + pad(), n + pad()
    rows_a, rows_b = (k if ta else m), (n if tb else k)
    sa, sb, sc = rows_a * lda + pad(), rows_b * ldb + pad(), m * ldc + pad()
    config = dict(batch=batch, m=m, n=n, k=k, lda=lda, ldb=ldb, ldc=ldc, sa=sa, sb=sb, sc=sc, beta=beta, ta=ta, tb=tb)
    return config


def buffers(config: dict, dtype, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    batch = config["batch"]
    sizes = [max(1, batch * config[s]) for s in ("sa", "sb", "sc")]
    return tuple(rng.standard_normal(size).astype(dtype) for size in sizes)  # type: ignore[return-value]


def run(config: dict, dtype, rng: np.random.Generator, epilogue: bool = False):
    a, b, c = buffers(config, dtype, rng)
    tables = [x for side in "ab" if config.get(f"g{side}") is not None for x in config[f"g{side}"]]
    args = [a, b, c, *tables]
    if epilogue:
        args.append(rng.standard_normal(c.size).astype(dtype))
    engine = gemm_engine(dtype, (a.size, b.size, c.size), config, epilogue)
    names = ["batch", "m", "n", "k", "lda", "ldb", "ldc", "sa", "sb", "sc", "beta", "ta", "tb", "ga", "gb"]
    want = reference(a, b, c, **{x: config.get(x) for x in names})
    return engine, engine.invoke("f", *args), want, args


def assert_close(got, want, dtype) -> None:
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * float(np.max(np.abs(want), initial=1)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed", range(6))
def test_random_products_match_numpy(seed, dtype):
    rng = np.random.default_rng(seed)
    config = random_config(rng)
    engine, got, want, _ = run(config, dtype, rng)
    assert got.dtype == dtype
    assert_close(got, want, dtype)  # every element of c: the ones outside the product keep c0's value
    (name, grid, block), *rest = engine.driver.launches
    m, n, batch = config["m"], config["n"], config["batch"]
    assert not rest and block == (256, 1, 1) and grid == (-(-m // 64) * -(-n // 64) * batch, 1, 1)


@pytest.mark.parametrize("ta, tb", [(False, False), (True, False), (False, True), (True, True)])
def test_each_transposition_at_ragged_edges(ta, tb):
    # rows, columns and depth one past a tile and a step
    m, n, k = 65, 129, 17
    lda, ldb = (m if ta else k), (k if tb else n)
    config = dict(batch=2, m=m, n=n, k=k, lda=lda, ldb=ldb, ldc=n, sa=m * k, sb=k * n, sc=m * n, beta=1, ta=ta, tb=tb)
    _, got, want, _ = run(config, np.float32, np.random.default_rng(1))
    assert_close(got, want, np.float32)


def test_zero_sizes():
    rng = np.random.default_rng(2)
    base = dict(batch=1, m=5, n=7, k=3, lda=3, ldb=7, ldc=7, sa=15, sb=21, sc=35, beta=1)
    _, got, want, (_, _, c) = run({**base, "k": 0}, np.float32, rng)  # no depth: c kept (beta = 1)
    np.testing.assert_array_equal(got, c)
    _, got, _, _ = run({**base, "k": 0, "beta": 0}, np.float64, rng)  # ... or zeroed (beta = 0)
    np.testing.assert_array_equal(got, 0)
    engine, got, _, (_, _, c) = run({**base, "m": 0}, np.float32, rng)  # no rows: no launch
    np.testing.assert_array_equal(got, c)
    assert engine.driver.launches == []


@pytest.mark.parametrize("side", ["a", "b"])
def test_gathered_factor(side):
    # a 3x3 convolution's patches as offset tables: A(i, p) = x[rows[i] + cols[p]] over
    # a 12x12 image with 4 channels, 10x10 outputs (as `fuse-gemm-gather` builds them)
    rng = np.random.default_rng(3)
    h = w = 12
    out = np.arange(10)
    positions = (out[:, None] * w + out[None, :]).reshape(-1)  # 100 output pixels
    taps = np.array([ch * h * w + dy * w + dx for ch in range(4) for dy in range(3) for dx in range(3)])  # 36
    x = rng.standard_normal(4 * h * w * 2).astype(np.float32)  # two batch entries
    if side == "a":  # patches (100 x 36) times a kernel (36 x 8)
        config = dict(batch=2, m=100, n=8, k=36, lda=0, ldb=8, ldc=8, sa=4 * h * w, sb=0, sc=800, beta=0,
                      ga=(positions, taps))  # fmt: skip
        a, b = x, rng.standard_normal(36 * 8).astype(np.float32)
    else:  # a kernel (8 x 36) times patches (36 x 100)
        config = dict(batch=2, m=8, n=100, k=36, lda=36, ldb=0, ldc=100, sa=0, sb=4 * h * w, sc=800, beta=0,
                      gb=(taps, positions))  # fmt: skip
        a, b = rng.standard_normal(8 * 36).astype(np.float32), x
    c = rng.standard_normal(1600).astype(np.float32)
    tables = [t.astype(np.int64) for t in config[f"g{side}"]]
    engine = gemm_engine(np.float32, (a.size, b.size, c.size), config)
    got = engine.invoke("f", a, b, c, *tables)
    want = reference(a, b, c, **{k: v for k, v in config.items()})
    assert_close(got, want, np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_epilogue_runs_once_per_element_after_its_store(dtype):
    rng = np.random.default_rng(4)
    config = dict(batch=2, m=70, n=33, k=20, lda=20, ldb=33, ldc=35, sa=1400, sb=660, sc=70 * 35 + 1, beta=1)
    _, (c, d), want, args = run(config, dtype, rng, epilogue=True)
    assert_close(c, want, dtype)
    d0 = args[-1]
    touched = np.zeros(c.size, bool)
    for t in range(2):
        touched[t * config["sc"] + np.arange(70)[:, None] * 35 + np.arange(33)[None, :]] = True
    assert_close(d[touched], d0[touched] + np.maximum(want[touched], 0), dtype)  # added once, after the final c
    np.testing.assert_array_equal(d[~touched], d0[~touched])


def test_matmul_runs_on_the_tiled_kernel():
    # nn ops through GPU_PIPELINE: the product maps become blas.gemm (contraction-to-blas)
    # and each gemm a tiled kernel, not a map of atomic adds
    src = """
func.func @f(%x: tensor<3x40x70xf32>, %y: tensor<3x70x50xf32>, %w: tensor<50x20xf32>) -> tensor<3x40x20xf32> {
  %p = nn.dot_general %x, %y {lhs_batching_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64: 0>,
    lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 1>}
    : (tensor<3x40x70xf32>, tensor<3x70x50xf32>) -> tensor<3x40x50xf32>
  %q = nn.reshape %p : (tensor<3x40x50xf32>) -> tensor<120x50xf32>
  %r = nn.matmul %q, %w : (tensor<120x50xf32>, tensor<50x20xf32>) -> tensor<120x20xf32>
  %s = nn.reshape %r : (tensor<120x20xf32>) -> tensor<3x40x20xf32>
  func.return %s : tensor<3x40x20xf32>
}
"""
    rng = np.random.default_rng(5)
    x, y, w = (rng.standard_normal(s).astype(np.float32) for s in ((3, 40, 70), (3, 70, 50), (50, 20)))
    engine = simulated_engine(parse_module(src))
    got = engine.invoke("f", x, y, w)
    want = ((x.astype(np.float64) @ y).reshape(120, 50) @ w).reshape(3, 40, 20)
    assert_close(got, want, np.float32)
    lowered = engine.module
    gemms = [k for k in kernels(lowered) if any(isinstance(op, memref.GetGlobalOp) for op in k.walk())]
    assert len(gemms) == 2  # (the other kernels copy for the reshapes)
    tiles = [op for op in lowered.walk() if isinstance(op, memref.GlobalOp)]
    assert len(tiles) == 4 and all(op.type.memory_space == SHARED for op in tiles)
    assert not any(op.name == "memref.atomic_rmw" for op in lowered.walk())


MATMUL = """func.func @f(%a: tensor<30x20xf64>, %b: tensor<20x10xf64>) -> tensor<30x10xf64> {
  %c = nn.matmul %a, %b : (tensor<30x20xf64>, tensor<20x10xf64>) -> tensor<30x10xf64>
  func.return %c : tensor<30x10xf64>
}"""


def test_the_gpu_target_needs_no_cpu_blas(monkeypatch):
    monkeypatch.setattr(blas_runtime, "available", lambda: False)

    def gemms(pipeline: str) -> int:
        module = parse_module(MATMUL)
        PassManager.parse(pipeline).run(module)
        return sum(isinstance(op, GemmOp) for op in module.walk())

    assert "contraction-to-blas{blas=false}" in default_pipeline(2, blas_runtime.available())
    assert gemms("expand-library,bufferize,contraction-to-blas{blas=false}") == 0
    assert gemms("expand-library,bufferize,contraction-to-blas{blas=false target=gpu}") == 1
    with pytest.raises(CompileError, match="contraction-to-blas: unknown target 'tpu' \\(cpu or gpu\\)"):
        gemms("expand-library,bufferize,contraction-to-blas{target=tpu}")


def test_dynamic_sizes_are_passed_to_the_kernel():
    src = """func.func @f(%x: tensor<?x20xf32>, %y: tensor<20x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : tensor<?x20xf32>
  %n = tensor.dim %y, %c1 : tensor<20x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %z = arith.constant 0.0 : f32
  %s = df.map (%i, %j) in (%m, %n) outs(%o = %e : tensor<?x?xf32>) {
    df.write %z, %o[%i, %j] : tensor<?x?xf32>
  } -> tensor<?x?xf32>
  %r = df.map (%i, %j, %k) in (%m, %n, 20) outs(%acc = %s : tensor<?x?xf32>) {
    %a = df.read %x[%i, %k] : tensor<?x20xf32>
    %b = df.read %y[%k, %j] : tensor<20x?xf32>
    %p = arith.mulf %a, %b : f32
    df.write %p, %acc[%i, %j] wcr(add) : tensor<?x?xf32>
  } -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}"""
    engine = simulated_engine(parse_module(src))
    rng = np.random.default_rng(9)
    for m, n in ((1, 1), (70, 3), (5, 130)):
        a, b = rng.standard_normal((m, 20)).astype(np.float32), rng.standard_normal((20, n)).astype(np.float32)
        assert_close(engine.invoke("f", a, b), a.astype(np.float64) @ b, np.float32)
    gemm = next(k for k in kernels(engine.module) if any(isinstance(op, memref.GetGlobalOp) for op in k.walk()))
    grids = {grid for name, grid, _ in engine.driver.launches if name == gemm.sym_name.data}
    assert grids == {(1, 1, 1), (2, 1, 1), (3, 1, 1)}  # ceil(n / 64) * ceil(m / 64) blocks


def _broken(engine) -> gpu.FuncOp:
    """The kernel of a copy of the engine's module, which its simulated device runs from now on."""
    engine.driver.module = engine.module.clone()
    return kernels(engine.driver.module)[0]


@pytest.mark.parametrize("which, race", [(0, "reads element .* which thread .* stored"),
                                         (1, "stores to element .* which thread .* read")])  # fmt: skip
def test_each_barrier_is_needed(which, race):
    # without the first barrier a thread reads the tile before others stored it; without
    # the second, the next step overwrites what others still read: the simulator, which
    # runs threads in lockstep, must still catch both
    config = dict(batch=1, m=64, n=64, k=32, lda=32, ldb=64, ldc=64, sa=0, sb=0, sc=0, beta=0)
    rng = np.random.default_rng(6)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in (2048, 2048, 4096))
    engine = gemm_engine(np.float32, (a.size, b.size, c.size), config)
    barriers = [op for op in _broken(engine).walk() if isinstance(op, gpu.BarrierOp)]
    assert len(barriers) == 2
    barriers[which].detach()
    barriers[which].erase()
    with pytest.raises(SimulationError, match=f"missing barrier: thread .* {race} since the last barrier"):
        engine.invoke("f", a, b, c)


def test_a_divergent_barrier_is_caught():
    config = dict(batch=1, m=64, n=60, k=16, lda=16, ldb=60, ldc=60, sa=0, sb=0, sc=0, beta=0)
    rng = np.random.default_rng(7)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in (1024, 960, 3840))
    engine = gemm_engine(np.float32, (a.size, b.size, c.size), config)
    last = [op for op in _broken(engine).walk() if isinstance(op, scf.IfOp)][-1]  # C's column tx + 48 < 60: 12 of 16
    last.true_region.block.insert_op_before(gpu.BarrierOp(), last.true_region.block.first_op)
    with pytest.raises(SimulationError, match="gpu.barrier reached by 192 of the 256 threads of block 0"):
        engine.invoke("f", a, b, c)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA toolkit) is not installed")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ptx_assembles_with_shared_tiles(dtype, tmp_path):
    config = dict(batch=2, m=100, n=90, k=40, lda=100, ldb=40, ldc=90, sa=4000, sb=3600, sc=9000, beta=1,
                  ta=True, tb=True)  # fmt: skip
    ptx = emit_ptx(parse_module(gemm_module(dtype, (8000, 7200, 18000), config, epilogue=True)))
    t = T[dtype]
    size = 16 * 65 * np.dtype(dtype).itemsize
    assert len(re.findall(rf"^\s*\.shared \.align 16 \.b8 f_k0_[ab]\[{size}\];", ptx, re.M)) == 2
    assert ptx.count("bar.sync") == 2
    assert ptx.count(f"fma.rn.{t}") >= 16 * 16  # a step's 16 depths of 4 x 4, unrolled
    path = tmp_path / "gemm.ptx"
    path.write_text(ptx)
    result = subprocess.run(["ptxas", "-arch=sm_90", "-v", str(path), "-o", str(tmp_path / "out.cubin")],
                            capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "0 bytes spill" in result.stderr


class TestOnGpu:
    @pytest.mark.parametrize("dtype", [np.float32, np.float64])
    def test_random_products(self, dtype):
        cuda_or_skip()
        for seed in range(8):
            rng = np.random.default_rng(seed)
            config = random_config(rng)
            a, b, c = buffers(config, dtype, rng)
            engine = ExecutionEngine(parse_module(gemm_module(dtype, (a.size, b.size, c.size), config)),
                                     target="gpu")  # fmt: skip
            want = reference(a, b, c, **{x: config.get(x) for x in config})
            assert_close(engine.invoke("f", a, b, c), want, dtype)

    def test_large_matmul(self):
        cuda_or_skip()
        src = """func.func @f(%a: tensor<1000x700xf32>, %b: tensor<700x1300xf32>) -> tensor<1000x1300xf32> {
  %c = nn.matmul %a, %b : (tensor<1000x700xf32>, tensor<700x1300xf32>) -> tensor<1000x1300xf32>
  func.return %c : tensor<1000x1300xf32>
}"""
        rng = np.random.default_rng(8)
        a, b = rng.standard_normal((1000, 700)).astype(np.float32), rng.standard_normal((700, 1300)).astype(np.float32)
        got = ExecutionEngine(parse_module(src), target="gpu").invoke("f", a, b)
        assert_close(got, a.astype(np.float64) @ b, np.float32)
