// RUN: opt-tool %s | filecheck %s
// RUN: opt-tool %s | opt-tool | filecheck %s

// Each op in the pretty form JAX prints reads into the generic form with its properties.

func.func @elementwise(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<4xi32>, %p: tensor<4xi1>) {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  %1 = stablehlo.exponential_minus_one %0 : tensor<4xf32>
  %2 = stablehlo.convert %i : (tensor<4xi32>) -> tensor<4xf32>
  %3 = stablehlo.compare LT, %a, %b, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %4 = stablehlo.compare EQ, %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %5 = stablehlo.select %p, %a, %b : tensor<4xi1>, tensor<4xf32>
  %6 = stablehlo.clamp %a, %b, %a : tensor<4xf32>
  %7 = stablehlo.shift_right_logical %i, %i : tensor<4xi32>
  func.return
}
// CHECK-LABEL: func.func @elementwise
// CHECK-NEXT:    %0 = "stablehlo.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %1 = "stablehlo.exponential_minus_one"(%0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %2 = "stablehlo.convert"(%i) : (tensor<4xi32>) -> tensor<4xf32>
// CHECK-NEXT:    %3 = "stablehlo.compare"(%a, %b) <{comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type FLOAT>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK-NEXT:    %4 = "stablehlo.compare"(%i, %i) <{comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
// CHECK-NEXT:    %5 = "stablehlo.select"(%p, %a, %b) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %6 = "stablehlo.clamp"(%a, %b, %a) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %7 = "stablehlo.shift_right_logical"(%i, %i) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>

func.func @shapes(%x: tensor<2x3xf32>, %s: tensor<f32>, %k: tensor<i32>) {
  %0 = stablehlo.constant dense<1.5> : tensor<f32>
  %1 = stablehlo.iota dim = 1 : tensor<2x3xi32>
  %2 = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %3 = stablehlo.reshape %x : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %4 = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %5 = stablehlo.reverse %x, dims = [0] : tensor<2x3xf32>
  %6 = stablehlo.slice %x [0:2, 1:3:2] : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %7 = stablehlo.dynamic_slice %x, %k, %k, sizes = [1, 2] : (tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
  %8 = stablehlo.dynamic_update_slice %x, %7, %k, %k : (tensor<2x3xf32>, tensor<1x2xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
  %9 = stablehlo.concatenate %x, %x, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %10 = stablehlo.pad %x, %s, low = [0, 1], high = [1, 0], interior = [1, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x4xf32>
  func.return
}
// CHECK-LABEL: func.func @shapes
// CHECK-NEXT:    %0 = "stablehlo.constant"() <{value = dense<1.500000e+00> : tensor<f32>}> : () -> tensor<f32>
// CHECK-NEXT:    %1 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<2x3xi32>
// CHECK-NEXT:    %2 = "stablehlo.broadcast_in_dim"(%s) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %3 = "stablehlo.reshape"(%x) : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    %4 = "stablehlo.transpose"(%x) <{permutation = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    %5 = "stablehlo.reverse"(%x) <{dimensions = array<i64: 0>}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %6 = "stablehlo.slice"(%x) <{start_indices = array<i64: 0, 1>, limit_indices = array<i64: 2, 3>, strides = array<i64: 1, 2>}> : (tensor<2x3xf32>) -> tensor<2x1xf32>
// CHECK-NEXT:    %7 = "stablehlo.dynamic_slice"(%x, %k, %k) <{slice_sizes = array<i64: 1, 2>}> : (tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
// CHECK-NEXT:    %8 = "stablehlo.dynamic_update_slice"(%x, %7, %k, %k) : (tensor<2x3xf32>, tensor<1x2xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %9 = "stablehlo.concatenate"(%x, %x) <{dimension = 0 : i64}> : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %10 = "stablehlo.pad"(%x, %s) <{edge_padding_low = array<i64: 0, 1>, edge_padding_high = array<i64: 1, 0>, interior_padding = array<i64: 1, 0>}> : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x4xf32>

func.func @contractions(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %x: tensor<1x3x8x8xf32>, %w: tensor<3x3x4x3xf32>) {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, HIGHEST] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %1 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], pad = [[1, 1], [0, 2]], rhs_dilate = [1, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<3x3x4x3xf32>) -> tensor<1x4x6x3xf32>
  func.return
}
// CHECK-LABEL: func.func @contractions
// CHECK-NEXT:    %0 = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]}> : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT:    %1 = "stablehlo.convolution"(%x, %w) <{dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 1, input_spatial_dimensions = [2, 3], kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2]>, window_strides = array<i64: 2, 1>, padding = dense<{{\[\[}}1, 1], [0, 2]]> : tensor<2x2xi64>, rhs_dilation = array<i64: 1, 2>, batch_group_count = 1 : i64, feature_group_count = 1 : i64}> : (tensor<1x3x8x8xf32>, tensor<3x3x4x3xf32>) -> tensor<1x4x6x3xf32>

func.func @regions(%x: tensor<4x5xf32>, %n: tensor<i32>) {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1] : (tensor<4x5xf32>, tensor<f32>) -> tensor<4xf32>
  %i = stablehlo.iota dim = 1 : tensor<4x5xi32>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %1:2 = stablehlo.reduce(%x init: %c), (%i init: %z) across dimensions = [1] : (tensor<4x5xf32>, tensor<4x5xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
   reducer(%a: tensor<f32>, %b: tensor<f32>) (%ia: tensor<i32>, %ib: tensor<i32>)  {
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m, %ia : tensor<f32>, tensor<i32>
  }
  %2:2 = stablehlo.while(%k = %z, %acc = %x) : tensor<i32>, tensor<4x5xf32>
  cond {
    %p = stablehlo.compare LT, %k, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %y = stablehlo.sine %acc : tensor<4x5xf32>
    stablehlo.return %k, %y : tensor<i32>, tensor<4x5xf32>
  }
  func.return
}
// CHECK-LABEL: func.func @regions
// CHECK:         %0 = "stablehlo.reduce"(%x, %c) <{dimensions = array<i64: 1>}> ({
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<f32>, %{{.*}}: tensor<f32>):
// CHECK-NEXT:      %{{.*}} = "stablehlo.add"
// CHECK-NEXT:      "stablehlo.return"
// CHECK-NEXT:    }) : (tensor<4x5xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK:         "stablehlo.reduce"(%x, %i, %c, %z) <{dimensions = array<i64: 1>}> ({
// CHECK-NEXT:    ^bb{{[0-9]+}}(%a: tensor<f32>, %ia: tensor<i32>, %b: tensor<f32>, %ib: tensor<i32>):
// CHECK:         "stablehlo.while"(%z, %x) ({
// CHECK-NEXT:    ^bb{{[0-9]+}}(%k: tensor<i32>, %acc: tensor<4x5xf32>):
// CHECK-NEXT:      %p = "stablehlo.compare"(%k, %n)
// CHECK-NEXT:      "stablehlo.return"(%p) : (tensor<i1>) -> ()
// CHECK-NEXT:    }, {
// CHECK-NEXT:    ^bb{{[0-9]+}}(%k_1: tensor<i32>, %acc_1: tensor<4x5xf32>):
// CHECK-NEXT:      %y = "stablehlo.sine"(%acc_1)
