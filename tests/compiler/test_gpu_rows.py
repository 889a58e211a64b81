"""Row reductions on the GPU (`passes.gpu_rows`): a block per row, a tree in shared memory.

On the simulated device (tests/support/gpu_sim.py), against float64 NumPy: softmax,
log_softmax, max/mean over the last axis and a layer norm's variance, integer sums over two axes, full
reductions that several blocks share (an atomic per block), dynamic sizes, and
what the plan leaves to one thread per iteration. Float reductions reassociate
(a tree per row), so results compare relatively, as in the other GPU tests.
"""

import numpy as np
import pytest
from support.gpu_sim import SimulationError, simulated_engine
from test_gpu import cuda_or_skip
from xdsl.dialects import gpu, memref

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.passes.gpu_rows import THREADS, row_plan

RNG = np.random.default_rng(36)

NN_ROWS = """func.func @rows(%x: tensor<6x300xf32>) -> (tensor<6x300xf32>, tensor<6x300xf32>, tensor<6xf32>, tensor<6xf32>) {
  %sm = nn.softmax %x {axis = -1 : i64} : (tensor<6x300xf32>) -> tensor<6x300xf32>
  %ls = nn.log_softmax %x {axis = -1 : i64} : (tensor<6x300xf32>) -> tensor<6x300xf32>
  %mean = nn.reduce %x {kind = "mean", axes = array<i64: 1>, keepdims} : (tensor<6x300xf32>) -> tensor<6x1xf32>
  %d = nn.sub %x, %mean : (tensor<6x300xf32>, tensor<6x1xf32>) -> tensor<6x300xf32>
  %sq = nn.mul %d, %d : (tensor<6x300xf32>, tensor<6x300xf32>) -> tensor<6x300xf32>
  %var = nn.reduce %sq {kind = "mean", axes = array<i64: 1>} : (tensor<6x300xf32>) -> tensor<6xf32>
  %mx = nn.reduce %x {kind = "max", axes = array<i64: 1>} : (tensor<6x300xf32>) -> tensor<6xf32>
  func.return %sm, %ls, %var, %mx : tensor<6x300xf32>, tensor<6x300xf32>, tensor<6xf32>, tensor<6xf32>
}"""


def kernels(module) -> list[gpu.FuncOp]:
    return [op for op in module.walk() if isinstance(op, gpu.FuncOp)]


def row_kernels(module) -> list[gpu.FuncOp]:
    return [k for k in kernels(module) if any(isinstance(op, gpu.BarrierOp) for op in k.walk())]


def test_softmax_log_softmax_and_row_statistics():
    engine = simulated_engine(parse_module(NN_ROWS))
    x = RNG.standard_normal((6, 300)).astype(np.float32) * 4
    x[2, 17] = 40.0  # a large maximum: softmax's shift matters
    sm, ls, var, mx = engine.invoke("rows", x)
    xd = x.astype(np.float64)
    shifted = xd - xd.max(1, keepdims=True)
    log_z = np.log(np.exp(shifted).sum(1, keepdims=True))
    np.testing.assert_allclose(sm, np.exp(shifted - log_z), rtol=2e-5, atol=1e-30)
    np.testing.assert_allclose(ls, shifted - log_z, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(var, xd.var(1), rtol=1e-5)
    np.testing.assert_array_equal(mx, x.max(1))
    rows = row_kernels(engine.module)
    # every reduction (maxima and sums of exponentials, as CSE left them; mean, variance) is a block
    # per row, and none uses an atomic
    assert len(rows) >= 4
    assert not any(isinstance(op, memref.AtomicRMWOp) for k in kernels(engine.module) for op in k.walk())
    grids = {name: grid for name, grid, _ in engine.driver.launches}
    assert {grids[k.sym_name.data] for k in rows} == {(6, 1, 1)}
    assert all(k.known_block_size.get_values() == (THREADS, 1, 1) for k in rows)
    assert engine.driver.live == {}


FULL = """func.func @total(%x: tensor<{n}x{m}xf32>, %w: tensor<{n}x{m}xf32>) -> tensor<f32> {{
  %zero = arith.constant dense<0.0> : tensor<f32>
  %r = df.map (%i, %j) in ({n}, {m}) outs(%o = %zero : tensor<f32>) {{
    %a = df.read %x[%i, %j] : tensor<{n}x{m}xf32>
    %b = df.read %w[%i, %j] : tensor<{n}x{m}xf32>
    %p = df.tasklet (%a, %b) : (f32, f32) -> f32 {{
    ^bb0(%u: f32, %v: f32):
      %q = arith.mulf %u, %v : f32
      df.yield %q : f32
    }}
    df.write %p, %o[] wcr(add) : tensor<f32>
  }} -> tensor<f32>
  func.return %r : tensor<f32>
}}"""


@pytest.mark.parametrize("n, m, blocks", [(3, 10, None), (2, 50, 1), (7, 1000, 4)])
def test_a_full_reduction_is_shared_by_blocks(n, m, blocks):
    """A loss's total: one row of n*m elements; blocks of 256 threads each get at least 8
    elements per thread, each adding its total with one atomic. Fewer than 32 elements: one
    thread per iteration."""
    engine = simulated_engine(parse_module(FULL.format(n=n, m=m)))
    x, w = (RNG.random((n, m)).astype(np.float32) + 0.5 for _ in range(2))
    got = engine.invoke("total", x, w)
    np.testing.assert_allclose(got, (x.astype(np.float64) * w).sum(), rtol=1e-5)
    rows = row_kernels(engine.module)
    if blocks is None:
        assert rows == []
        return
    (k,) = rows
    atomics = [op for op in k.walk() if isinstance(op, memref.AtomicRMWOp)]
    assert len(atomics) == (blocks > 1)  # one block alone loads, adds and stores
    assert [grid for name, grid, _ in engine.driver.launches if name == k.sym_name.data] == [(blocks, 1, 1)]


DYNAMIC = """func.func @rows(%x: tensor<?x?xf32>, %init: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %m = tensor.dim %x, %c1 : tensor<?x?xf32>
  %r = df.map (%i, %j) in (%n, %m) outs(%o = %init : tensor<?xf32>) {
    %v = df.read %x[%i, %j] : tensor<?x?xf32>
    df.write %v, %o[%i] wcr(max) : tensor<?xf32>
  } -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}"""


@pytest.mark.parametrize("n, m, blocks", [(0, 5, None), (3, 0, 3), (1, 1, 1), (5, 700, 5), (1, 5000, 3)])
def test_dynamic_rows_split_at_run_time(n, m, blocks):
    """Dynamic sizes: the host and the kernel compute the blocks per row alike (a long single
    row: ceil(5000 / 2048) = 3 blocks, combined by atomic maxima)."""
    engine = simulated_engine(parse_module(DYNAMIC))
    x = RNG.standard_normal((n, m)).astype(np.float32)
    init = RNG.standard_normal(n).astype(np.float32)
    got = engine.invoke("rows", x, init)
    np.testing.assert_array_equal(got, np.maximum(init, x.max(1, initial=-np.inf)))
    (k,) = row_kernels(engine.module)
    launched = [grid for name, grid, _ in engine.driver.launches if name == k.sym_name.data]
    assert launched == ([] if blocks is None else [(blocks, 1, 1)])


INTEGER = """func.func @rows(%x: tensor<4x3x50xi32>) -> tensor<4xi32> {
  %zero = arith.constant dense<0> : tensor<4xi32>
  %r = df.map (%i, %j, %k) in (4, 3, 50) outs(%o = %zero : tensor<4xi32>) {
    %v = df.read %x[%i, %j, %k] : tensor<4x3x50xi32>
    df.write %v, %o[%i] wcr(add) : tensor<4xi32>
  } -> tensor<4xi32>
  func.return %r : tensor<4xi32>
}"""


def test_rows_over_two_trailing_axes_in_integers():
    """The row is every variable the write's index does not use (here the last two, flattened)."""
    engine = simulated_engine(parse_module(INTEGER))
    x = RNG.integers(-1000, 1000, (4, 3, 50)).astype(np.int32)
    np.testing.assert_array_equal(engine.invoke("rows", x), x.sum((1, 2)))
    (k,) = row_kernels(engine.module)
    assert k.known_block_size.get_values() == (256, 1, 1)  # 150 elements: rounded up to a power of two


COLUMNS = """func.func @cols(%x: tensor<4x64xf32>) -> tensor<64xf32> {
  %zero = arith.constant dense<0.0> : tensor<64xf32>
  %r = df.map (%i, %j) in (4, 64) outs(%o = %zero : tensor<64xf32>) {
    %v = df.read %x[%i, %j] : tensor<4x64xf32>
    df.write %v, %o[%j] wcr(add) : tensor<64xf32>
  } -> tensor<64xf32>
  func.return %r : tensor<64xf32>
}"""


MIXED = """func.func @mixed(%x: tensor<4x64xf32>) -> tensor<4xf32> {
  %zero = arith.constant dense<0.0> : tensor<4xf32>
  %r = df.map (%i, %j) in (4, 64) outs(%o = %zero : tensor<4xf32>) {
    %v = df.read %x[%i, %j] : tensor<4x64xf32>
    df.write %v, %o[%i] wcr(max) : tensor<4xf32>
    df.write %v, %o[%i] wcr(add) : tensor<4xf32>
  } -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}"""


@pytest.mark.parametrize("program, is_rows", [(INTEGER, True), (COLUMNS, False), (FULL.format(n=3, m=10), False),
                                              (FULL.format(n=3, m=11), True), (MIXED, False)])  # fmt: skip
def test_which_maps_are_row_reductions(program, is_rows):
    """Column sums (the index uses the last variable), rows shorter than 32 and two wcr kinds into one
    output (a maximum and a sum do not regroup) keep one thread per iteration."""
    module = parse_module(program)
    PassManager.parse("bufferize").run(module)
    (reduction,) = [op for op in module.walk() if op.name == "df.map" and any(w.name == "df.write" and w.wcr_kind
                                                                              for w in op.body.block.ops)]  # fmt: skip
    assert (row_plan(reduction) is not None) == is_rows


def test_the_simulator_needs_every_barrier_of_the_tree():
    """Removing any barrier of a row kernel's tree makes the simulated device report a race."""
    engine = simulated_engine(parse_module(DYNAMIC))
    x, init = RNG.standard_normal((3, 600)).astype(np.float32), np.zeros(3, np.float32)
    np.testing.assert_array_equal(engine.invoke("rows", x, init), np.maximum(x.max(1), 0))
    (kernel,) = row_kernels(engine.module)
    count = sum(isinstance(op, gpu.BarrierOp) for op in kernel.walk())
    assert count == 8  # after the registers' store, then after each halving step (128 ... 2) of 256 threads
    for k in range(count):
        broken = engine.module.clone()
        barrier = [op for op in row_kernels(broken)[0].walk() if isinstance(op, gpu.BarrierOp)][k]
        barrier.detach()
        barrier.erase()
        engine.driver.module = broken
        with pytest.raises(SimulationError, match="missing barrier"):
            engine.invoke("rows", x, init)


def test_row_reductions_on_a_real_gpu():
    """On a GPU: rows of 4096 (every thread's unrolled loop runs 4 times), a row that 3 blocks share
    through atomics, ragged rows; against float64 NumPy."""
    cuda_or_skip()
    rows = ExecutionEngine(parse_module(NN_ROWS.replace("6x300", "300x4096").replace("<6x", "<300x")
                                        .replace("tensor<6xf32>", "tensor<300xf32>")), target="gpu")  # fmt: skip
    x = RNG.standard_normal((300, 4096)).astype(np.float32) * 4
    sm, ls, var, mx = rows.invoke("rows", x)
    xd = x.astype(np.float64)
    shifted = xd - xd.max(1, keepdims=True)
    log_z = np.log(np.exp(shifted).sum(1, keepdims=True))
    np.testing.assert_allclose(sm, np.exp(shifted - log_z), rtol=1e-4, atol=1e-30)
    np.testing.assert_allclose(ls, shifted - log_z, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(var, xd.var(1), rtol=1e-4)
    np.testing.assert_array_equal(mx, x.max(1))
    dynamic = ExecutionEngine(parse_module(DYNAMIC), target="gpu")
    for n, m in ((1, 5000), (5, 700), (3, 0), (0, 5)):
        y, init = RNG.standard_normal((n, m)).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
        np.testing.assert_array_equal(dynamic.invoke("rows", y, init), np.maximum(init, y.max(1, initial=-np.inf)))
    full = ExecutionEngine(parse_module(FULL.format(n=7, m=1000)), target="gpu")
    a, b = (RNG.random((7, 1000)).astype(np.float32) + 0.5 for _ in range(2))
    np.testing.assert_allclose(full.invoke("total", a, b), (a.astype(np.float64) * b).sum(), rtol=1e-5)
