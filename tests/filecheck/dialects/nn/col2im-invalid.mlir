// RUN: opt-tool %s --split-input-file --verify-diagnostics

// Verifier messages of nn.col2im.

func.func @nn_col2im_0(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'nn.col2im' op input (N, C * K, L) = (1, 8, 8) does not fit blocks of [2, 2] (K = 4) at [3, 3] positions (L = 9)}}
  %r = nn.col2im %x {image_shape = array<i64: 4, 4>, block_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, padding_low = array<i64: 0, 0>, padding_high = array<i64: 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x8x8xf32>) -> tensor<1x2x4x4xf32>
  func.return
}

// -----

func.func @nn_col2im_1(%x: tensor<1x4x4xi1>) {
  // expected-error @+1 {{'nn.col2im' op input must have a float or integer element type other than i1, got tensor<1x4x4xi1>}}
  %r = nn.col2im %x {image_shape = array<i64: 3, 3>, block_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, padding_low = array<i64: 0, 0>, padding_high = array<i64: 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x4xi1>) -> tensor<1x1x3x3xi1>
  func.return
}
