"""The op library's new families on the simulated GPU (tests/support/gpu_sim.py): a program using
the elementwise, shape, contraction and window ops, and its gradient, against the
interpreter and the CPU engine. The simulator checks the lowering (indexing, guards, atomics for the wcr
writes, integer atomics for argmax), not the PTX's math."""

import numpy as np
from support.gpu_sim import simulated_engine

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


INDEXING = """
func.func @g(%x: tensor<1x2x6x6xf32>, %k: tensor<3x2x3x3xf32>, %e: tensor<10x4xf32>, %i: tensor<5x1xi32>) -> (tensor<f32>, tensor<10x4xf32>) {
  %c = nn.convolution %x, %k {input_dimensions = array<i64: 0, 1, 2, 3>, kernel_dimensions = array<i64: 0, 1, 2, 3>, output_dimensions = array<i64: 0, 1, 2, 3>, window_strides = array<i64: 2, 2>, padding_low = array<i64: 1, 1>, padding_high = array<i64: 0, 0>, rhs_dilation = array<i64: 1, 1>, feature_group_count = 1 : i64} : (tensor<1x2x6x6xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  %two = nn.full {value = 2 : i32} : tensor<i32>
  %j = nn.mul %i, %two : (tensor<5x1xi32>, tensor<i32>) -> tensor<5x1xi32>
  %rows = nn.gather %e, %j {offset_dims = array<i64: 1>, collapsed_slice_dims = array<i64: 0>, operand_batching_dims = array<i64>, start_indices_batching_dims = array<i64>, start_index_map = array<i64: 0>, index_vector_dim = 1 : i64, slice_sizes = array<i64: 1, 4>} : (tensor<10x4xf32>, tensor<5x1xi32>) -> tensor<5x4xf32>
  %added = nn.scatter %e, %i, %rows {kind = "add", update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64} : (tensor<10x4xf32>, tensor<5x1xi32>, tensor<5x4xf32>) -> tensor<10x4xf32>
  %replaced = nn.scatter %added, %j, %rows {kind = "replace", update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64} : (tensor<10x4xf32>, tensor<5x1xi32>, tensor<5x4xf32>) -> tensor<10x4xf32>
  %sq = nn.mul %replaced, %replaced : (tensor<10x4xf32>, tensor<10x4xf32>) -> tensor<10x4xf32>
  %s1 = nn.reduce %sq {kind = "sum", axes = array<i64: 0, 1>} : (tensor<10x4xf32>) -> tensor<f32>
  %cc = nn.mul %c, %c : (tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %s2 = nn.reduce %cc {kind = "sum", axes = array<i64: 0, 1, 2, 3>} : (tensor<1x3x3x3xf32>) -> tensor<f32>
  %loss = nn.add %s1, %s2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return %loss, %replaced : tensor<f32>, tensor<10x4xf32>
}
"""


def test_convolution_gather_scatter_and_integer_arithmetic_on_the_simulated_gpu():
    rng = np.random.default_rng(19)
    f32 = np.float32
    args = [rng.standard_normal((1, 2, 6, 6)).astype(f32), rng.standard_normal((3, 2, 3, 3)).astype(f32),
            rng.standard_normal((10, 4)).astype(f32), np.array([[1], [4], [1], [7], [-2]], dtype=np.int32)]
    module = parse_module(INDEXING)
    PassManager.parse("autodiff{func=g outputs=0}").run(module)
    cpu, gpu = ExecutionEngine(module), simulated_engine(module)
    expanded = module.clone()
    PassManager.parse("expand-library").run(expanded)
    for name, call_args in (("g", args), ("g_grad", [*args, np.asarray(1.0, f32)])):
        want = interpret(expanded, name, *call_args)
        for engine, got_all in (("cpu", cpu.invoke(name, *call_args)), ("gpu", gpu.invoke(name, *call_args))):
            for got, expected in zip(got_all, want, strict=True):
                np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5, err_msg=f"{engine} {name}")
    assert all(np.count_nonzero(g) for g in want[2:])


def test_bitcast_convert_on_the_simulated_gpu():
    """nn.bitcast_convert (arith.bitcast in the kernel) reads the same bits as numpy's view, both ways."""
    module = parse_module("""
func.func @f(%x: tensor<6xf64>) -> (tensor<6xi64>, tensor<6xf64>) {
  %i = nn.bitcast_convert %x : (tensor<6xf64>) -> tensor<6xi64>
  %y = nn.bitcast_convert %i : (tensor<6xi64>) -> tensor<6xf64>
  func.return %i, %y : tensor<6xi64>, tensor<6xf64>
}""")
    x = np.array([1.5, -0.0, np.inf, np.nan, -3e-300, 7.0])
    bits, back = simulated_engine(module).invoke("f", x)
    np.testing.assert_array_equal(bits, x.view(np.int64))
    np.testing.assert_array_equal(back.view(np.int64), x.view(np.int64))
