// RUN: opt-tool %s | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool | filecheck %s
// RUN: opt-tool %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// nn.convolution (dialects/nn_conv.py), NCHW/OIHW strided and padded, and
// NHWC/HWIO with two feature groups; the generic form parses back.

// CHECK-LABEL: func.func @conv
// CHECK-NEXT:    %{{.*}} = nn.convolution %x, %k {input_dimensions = array<i64: 0, 1, 2, 3>, kernel_dimensions = array<i64: 0, 1, 2, 3>, output_dimensions = array<i64: 0, 1, 2, 3>, window_strides = array<i64: 2, 2>, padding_low = array<i64: 1, 1>, padding_high = array<i64: 1, 1>, rhs_dilation = array<i64: 1, 1>, feature_group_count = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NEXT:    %{{.*}} = nn.convolution %y, %w {input_dimensions = array<i64: 0, 3, 1, 2>, kernel_dimensions = array<i64: 3, 2, 0, 1>, output_dimensions = array<i64: 0, 3, 1, 2>, window_strides = array<i64: 1, 1>, padding_low = array<i64: 0, 0>, padding_high = array<i64: 0, 0>, rhs_dilation = array<i64: 1, 1>, feature_group_count = 2 : i64} : (tensor<1x5x5x4xf32>, tensor<3x3x2x6xf32>) -> tensor<1x3x3x6xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "conv"
// GENERIC:       "nn.convolution"(%{{.*}}, %{{.*}}) <{input_dimensions = array<i64: 0, 1, 2, 3>
func.func @conv(%x: tensor<1x3x8x8xf32>, %k: tensor<4x3x3x3xf32>, %y: tensor<1x5x5x4xf32>, %w: tensor<3x3x2x6xf32>) {
  %0 = nn.convolution %x, %k {input_dimensions = array<i64: 0, 1, 2, 3>, kernel_dimensions = array<i64: 0, 1, 2, 3>, output_dimensions = array<i64: 0, 1, 2, 3>, window_strides = array<i64: 2, 2>, padding_low = array<i64: 1, 1>, padding_high = array<i64: 1, 1>, rhs_dilation = array<i64: 1, 1>, feature_group_count = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  %1 = nn.convolution %y, %w {input_dimensions = array<i64: 0, 3, 1, 2>, kernel_dimensions = array<i64: 3, 2, 0, 1>, output_dimensions = array<i64: 0, 3, 1, 2>, window_strides = array<i64: 1, 1>, padding_low = array<i64: 0, 0>, padding_high = array<i64: 0, 0>, rhs_dilation = array<i64: 1, 1>, feature_group_count = 2 : i64} : (tensor<1x5x5x4xf32>, tensor<3x3x2x6xf32>) -> tensor<1x3x3x6xf32>
  func.return
}
