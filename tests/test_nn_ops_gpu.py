"""The op library's new families on the simulated GPU (tests/gpu_sim.py): a program using
the elementwise, shape, contraction and window ops, and its gradient, against the
interpreter and the CPU engine. The simulator checks the lowering (indexing, guards, atomics for the wcr
writes, integer atomics for argmax), not the PTX's math."""

import numpy as np
from gpu_sim import simulated_engine

from dfc.compiler import ExecutionEngine, PassManager, parse_module
from dfc.compiler.interpreter import interpret

PROGRAM = """
func.func @f(%x: tensor<4x6xf32>, %w: tensor<6x5xf32>, %lo: tensor<f32>, %i: tensor<i32>) -> (tensor<f32>, tensor<4xi64>) {
  %h = nn.dot_general %x, %w {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x6xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
  %a = nn.abs %h : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %hi = nn.full {value = 1.5 : f32} : tensor<f32>
  %c = nn.clamp %lo, %h, %hi : (tensor<f32>, tensor<4x5xf32>, tensor<f32>) -> tensor<4x5xf32>
  %p = nn.compare %a, %c {direction = "GT"} : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xi1>
  %s = nn.select %p, %c, %h : (tensor<4x5xi1>, tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  %m = nn.maximum %s, %a : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  %r = nn.remainder %m, %hi : (tensor<4x5xf32>, tensor<f32>) -> tensor<4x5xf32>
  %rev = nn.reverse %r {dimensions = array<i64: 1>} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %zero = nn.full {value = 0.0 : f32} : tensor<f32>
  %pad = nn.pad %rev, %zero {edge_padding_low = array<i64: 1, 0>, edge_padding_high = array<i64: 0, 1>, interior_padding = array<i64: 0, 1>} : (tensor<4x5xf32>, tensor<f32>) -> tensor<5x10xf32>
  %cat = nn.concatenate %pad, %pad {dimension = 0 : i64} : (tensor<5x10xf32>, tensor<5x10xf32>) -> tensor<10x10xf32>
  %sl = nn.slice %cat {start_indices = array<i64: 1, 0>, limit_indices = array<i64: 9, 10>, strides = array<i64: 1, 2>} : (tensor<10x10xf32>) -> tensor<8x5xf32>
  %ds = nn.dynamic_slice %sl, %i, %i {slice_sizes = array<i64: 6, 4>} : (tensor<8x5xf32>, tensor<i32>, tensor<i32>) -> tensor<6x4xf32>
  %pool = nn.reduce_window %ds {kind = "max", window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 1>, window_dilations = array<i64: 1, 1>, padding_low = array<i64: 0, 1>, padding_high = array<i64: 0, 0>} : (tensor<6x4xf32>) -> tensor<3x4xf32>
  %b = nn.broadcast_in_dim %lo {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<3x4xf32>
  %u = nn.dynamic_update_slice %pool, %b, %i, %i : (tensor<3x4xf32>, tensor<3x4xf32>, tensor<i32>, tensor<i32>) -> tensor<3x4xf32>
  %sq = nn.mul %u, %pool : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %loss = nn.reduce %sq {kind = "sum", axes = array<i64: 0, 1>} : (tensor<3x4xf32>) -> tensor<f32>
  %am = nn.argmax %h {axis = 1 : i64} : (tensor<4x5xf32>) -> tensor<4xi64>
  func.return %loss, %am : tensor<f32>, tensor<4xi64>
}
"""


def test_program_and_gradient_on_the_simulated_gpu():
    rng = np.random.default_rng(18)
    args = [rng.standard_normal((4, 6)).astype(np.float32), rng.standard_normal((6, 5)).astype(np.float32),
            np.asarray(-0.5, np.float32), np.asarray(1, np.int32)]
    seed = np.asarray(0.75, np.float32)
    module = parse_module(PROGRAM)
    PassManager.parse("autodiff{func=f outputs=0}").run(module)
    cpu, gpu = ExecutionEngine(module), simulated_engine(module)
    expanded = module.clone()
    PassManager.parse("expand-library").run(expanded)
    for name, call_args in (("f", args), ("f_grad", [*args, seed])):
        want = interpret(expanded, name, *call_args)
        for engine, got_all in (("cpu", cpu.invoke(name, *call_args)), ("gpu", gpu.invoke(name, *call_args))):
            for got, expected in zip(got_all, want, strict=True):
                assert got.dtype == expected.dtype
                np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6, err_msg=f"{engine} {name}")
    gx, gw, _ = want[2:]  # x, w and lo
    assert np.count_nonzero(gx) > 4 and np.count_nonzero(gw) > 4  # the gradient reaches through every family
