// RUN: opt-tool %s | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool | filecheck %s
// RUN: opt-tool %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Every shape nn op (dialects/nn_shape.py) in its custom form; the generic form
// parses back to the same IR.

// CHECK-LABEL: func.func @shape
// CHECK-NEXT:    %{{.*}} = nn.slice %x {start_indices = array<i64: 1, 0>, limit_indices = array<i64: 5, 5>, strides = array<i64: 2, 3>} : (tensor<5x6xf32>) -> tensor<2x2xf32>
// CHECK-NEXT:    %{{.*}} = nn.pad %x, %v {edge_padding_low = array<i64: 1, -1>, edge_padding_high = array<i64: 2, 5>, interior_padding = array<i64: 0, 1>} : (tensor<5x6xf32>, tensor<f32>) -> tensor<8x15xf32>
// CHECK-NEXT:    %{{.*}} = nn.concatenate %x, %y {dimension = 1 : i64} : (tensor<5x6xf32>, tensor<5x2xf32>) -> tensor<5x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.reverse %x {dimensions = array<i64: 1, 0>} : (tensor<5x6xf32>) -> tensor<5x6xf32>
// CHECK-NEXT:    %{{.*}} = nn.iota {iota_dimension = 0 : i64} : tensor<4x3xf32>
// CHECK-NEXT:    %{{.*}} = nn.broadcast_in_dim %r {broadcast_dimensions = array<i64: 2>} : (tensor<3xf32>) -> tensor<2x5x3xf32>
// CHECK-NEXT:    %{{.*}} = nn.dynamic_slice %x, %i, %j {slice_sizes = array<i64: 3, 4>} : (tensor<5x6xf32>, tensor<i64>, tensor<i32>) -> tensor<3x4xf32>
// CHECK-NEXT:    %{{.*}} = nn.dynamic_update_slice %x, %u, %i, %j : (tensor<5x6xf32>, tensor<2x3xf32>, tensor<i64>, tensor<i32>) -> tensor<5x6xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "shape"
// GENERIC:       "nn.dynamic_slice"(%{{.*}}, %{{.*}}, %{{.*}}) <{slice_sizes = array<i64: 3, 4>}> : (tensor<5x6xf32>, tensor<i64>, tensor<i32>) -> tensor<3x4xf32>
func.func @shape(%x: tensor<5x6xf32>, %v: tensor<f32>, %y: tensor<5x2xf32>, %i: tensor<i64>, %j: tensor<i32>, %u: tensor<2x3xf32>, %r: tensor<3xf32>) -> (tensor<2x2xf32>, tensor<8x15xf32>, tensor<5x8xf32>, tensor<5x6xf32>, tensor<4x3xf32>, tensor<2x5x3xf32>, tensor<3x4xf32>, tensor<5x6xf32>) {
  %0 = nn.slice %x {start_indices = array<i64: 1, 0>, limit_indices = array<i64: 5, 5>, strides = array<i64: 2, 3>} : (tensor<5x6xf32>) -> tensor<2x2xf32>
  %1 = nn.pad %x, %v {edge_padding_low = array<i64: 1, -1>, edge_padding_high = array<i64: 2, 5>, interior_padding = array<i64: 0, 1>} : (tensor<5x6xf32>, tensor<f32>) -> tensor<8x15xf32>
  %2 = nn.concatenate %x, %y {dimension = 1 : i64} : (tensor<5x6xf32>, tensor<5x2xf32>) -> tensor<5x8xf32>
  %3 = nn.reverse %x {dimensions = array<i64: 1, 0>} : (tensor<5x6xf32>) -> tensor<5x6xf32>
  %4 = nn.iota {iota_dimension = 0 : i64} : tensor<4x3xf32>
  %5 = nn.broadcast_in_dim %r {broadcast_dimensions = array<i64: 2>} : (tensor<3xf32>) -> tensor<2x5x3xf32>
  %6 = nn.dynamic_slice %x, %i, %j {slice_sizes = array<i64: 3, 4>} : (tensor<5x6xf32>, tensor<i64>, tensor<i32>) -> tensor<3x4xf32>
  %7 = nn.dynamic_update_slice %x, %u, %i, %j : (tensor<5x6xf32>, tensor<2x3xf32>, tensor<i64>, tensor<i32>) -> tensor<5x6xf32>
  func.return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2x2xf32>, tensor<8x15xf32>, tensor<5x8xf32>, tensor<5x6xf32>, tensor<4x3xf32>, tensor<2x5x3xf32>, tensor<3x4xf32>, tensor<5x6xf32>
}
