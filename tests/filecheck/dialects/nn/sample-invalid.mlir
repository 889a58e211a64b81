// RUN: opt-tool %s --split-input-file --verify-diagnostics

// One case per verifier message of nn.grid_sample.

func.func @nn_grid_sample_0(%x: tensor<1x2x4x5xf32>, %g: tensor<1x3x2x2xf32>) {
  // expected-error @+1 {{'nn.grid_sample' op mode must be one of bilinear, nearest, bicubic, got 'linear'}}
  %r = nn.grid_sample %x, %g {mode = "linear", padding_mode = "zeros"} : (tensor<1x2x4x5xf32>, tensor<1x3x2x2xf32>) -> tensor<1x2x3x2xf32>
  func.return
}

// -----

func.func @nn_grid_sample_1(%x: tensor<1x2x4x5xf32>, %g: tensor<1x3x2x2xf32>) {
  // expected-error @+1 {{'nn.grid_sample' op padding_mode must be one of zeros, border, reflection, got 'wrap'}}
  %r = nn.grid_sample %x, %g {mode = "nearest", padding_mode = "wrap"} : (tensor<1x2x4x5xf32>, tensor<1x3x2x2xf32>) -> tensor<1x2x3x2xf32>
  func.return
}

// -----

func.func @nn_grid_sample_2(%x: tensor<2x4x5xf32>, %g: tensor<1x3x2x2xf32>) {
  // expected-error @+1 {{'nn.grid_sample' op input must be (N, C, D1, ..., Dr) and grid (N, O1, ..., Or, r), r >= 1, got tensor<2x4x5xf32> and tensor<1x3x2x2xf32>}}
  %r = nn.grid_sample %x, %g {mode = "nearest", padding_mode = "zeros"} : (tensor<2x4x5xf32>, tensor<1x3x2x2xf32>) -> tensor<1x2x3x2xf32>
  func.return
}

// -----

func.func @nn_grid_sample_3(%x: tensor<2x2x4x5xf32>, %g: tensor<1x3x2x2xf32>) {
  // expected-error @+1 {{'nn.grid_sample' op input and grid must share their element type and batch size, got tensor<2x2x4x5xf32> and tensor<1x3x2x2xf32>}}
  %r = nn.grid_sample %x, %g {mode = "nearest", padding_mode = "zeros"} : (tensor<2x2x4x5xf32>, tensor<1x3x2x2xf32>) -> tensor<1x2x3x2xf32>
  func.return
}

// -----

func.func @nn_grid_sample_4(%x: tensor<1x2x4x5xf32>, %g: tensor<1x3x2x2xf32>) {
  // expected-error @+1 {{'nn.grid_sample' op result type tensor<1x2x3x3xf32> does not match the inferred type tensor<1x2x3x2xf32>}}
  %r = nn.grid_sample %x, %g {mode = "nearest", padding_mode = "zeros"} : (tensor<1x2x4x5xf32>, tensor<1x3x2x2xf32>) -> tensor<1x2x3x3xf32>
  func.return
}
