// RUN: opt-tool %s --split-input-file --verify-diagnostics

// Verifier messages of nn.convolution.

func.func @nn_convolution_0(%x: tensor<1x3x8x8xf32>, %k: tensor<4x3x3x3xf64>) {
  // expected-error @+1 {{'nn.convolution' op input and kernel element types differ: f32 and f64}}
  %r = nn.convolution %x, %k {input_dimensions = array<i64: 0, 1, 2, 3>, kernel_dimensions = array<i64: 0, 1, 2, 3>, output_dimensions = array<i64: 0, 1, 2, 3>, window_strides = array<i64: 2, 2>, padding_low = array<i64: 1, 1>, padding_high = array<i64: 1, 1>, rhs_dilation = array<i64: 1, 1>, feature_group_count = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf64>) -> tensor<1x4x4x4xf32>
  func.return
}

// -----

func.func @nn_convolution_1(%x: tensor<3x8xf32>, %k: tensor<3x3xf32>) {
  // expected-error @+1 {{'nn.convolution' op input and kernel must have one rank of at least 3, got 2 and 2}}
  %r = nn.convolution %x, %k {input_dimensions = array<i64: 0, 1, 2, 3>, kernel_dimensions = array<i64: 0, 1, 2, 3>, output_dimensions = array<i64: 0, 1, 2, 3>, window_strides = array<i64: 2, 2>, padding_low = array<i64: 1, 1>, padding_high = array<i64: 1, 1>, rhs_dilation = array<i64: 1, 1>, feature_group_count = 1 : i64} : (tensor<3x8xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  func.return
}

// -----

func.func @nn_convolution_2(%x: tensor<1x3x8x8xf32>, %k: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.convolution' op input_dimensions [0, 1, 1, 3] is not a permutation of 4 dimensions}}
  %r = nn.convolution %x, %k {input_dimensions = array<i64: 0, 1, 1, 3>, kernel_dimensions = array<i64: 0, 1, 2, 3>, output_dimensions = array<i64: 0, 1, 2, 3>, window_strides = array<i64: 2, 2>, padding_low = array<i64: 1, 1>, padding_high = array<i64: 1, 1>, rhs_dilation = array<i64: 1, 1>, feature_group_count = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  func.return
}

// -----

func.func @nn_convolution_3(%x: tensor<1x3x8x8xf32>, %k: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'nn.convolution' op spatial dimension 0: strides and dilations must be at least 1, padding non-negative}}
  %r = nn.convolution %x, %k {input_dimensions = array<i64: 0, 1, 2, 3>, kernel_dimensions = array<i64: 0, 1, 2, 3>, output_dimensions = array<i64: 0, 1, 2, 3>, window_strides = array<i64: 0, 2>, padding_low = array<i64: 1, 1>, padding_high = array<i64: 1, 1>, rhs_dilation = array<i64: 1, 1>, feature_group_count = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  func.return
}
