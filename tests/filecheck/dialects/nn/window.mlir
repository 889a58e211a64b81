// RUN: opt-tool %s | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool | filecheck %s
// RUN: opt-tool %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// nn.reduce_window (dialects/nn_window.py) in its custom form; the generic
// form parses back to the same IR.

// CHECK-LABEL: func.func @pooling
// CHECK-NEXT:    %{{.*}} = nn.reduce_window %x {kind = "max", window_dimensions = array<i64: 1, 1, 3, 3>, window_strides = array<i64: 1, 1, 2, 2>, window_dilations = array<i64: 1, 1, 1, 1>, padding_low = array<i64: 0, 0, 1, 1>, padding_high = array<i64: 0, 0, 1, 1>} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
// CHECK-NEXT:    %{{.*}} = nn.reduce_window %x {kind = "mean", window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>, window_dilations = array<i64: 1, 1, 1, 1>, padding_low = array<i64: 0, 0, 0, 0>, padding_high = array<i64: 0, 0, 0, 0>} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "pooling"
// GENERIC:       "nn.reduce_window"(%{{.*}}) <{kind = "max", window_dimensions = array<i64: 1, 1, 3, 3>
func.func @pooling(%x: tensor<2x3x8x8xf32>) {
  %0 = nn.reduce_window %x {kind = "max", window_dimensions = array<i64: 1, 1, 3, 3>, window_strides = array<i64: 1, 1, 2, 2>, window_dilations = array<i64: 1, 1, 1, 1>, padding_low = array<i64: 0, 0, 1, 1>, padding_high = array<i64: 0, 0, 1, 1>} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
  %1 = nn.reduce_window %x {kind = "mean", window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>, window_dilations = array<i64: 1, 1, 1, 1>, padding_low = array<i64: 0, 0, 0, 0>, padding_high = array<i64: 0, 0, 0, 0>} : (tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32>
  func.return
}
