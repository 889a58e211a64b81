// RUN: opt-tool %s --split-input-file --verify-diagnostics

// One case per verifier message of nn.grid_sample and nn.deform_conv.

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

// -----

func.func @nn_deform_conv_0(%x: tensor<1x4x5x4xf32>, %w: tensor<6x2x2x2xf32>, %o: tensor<1x16x3x3xf32>, %m: tensor<1x8x3x3xf32>, %b: tensor<6xf32>) {
  // expected-error @+1 {{'nn.deform_conv' op input (N, C, D1, ..., Dr), kernel (oC, C / group, K1, ..., Kr) and r strides, pads and dilations are needed, got tensor<1x4x5x4xf32>, tensor<6x2x2x2xf32> and [(2,), (1, 0), (1, 0), (1, 1)]}}
  %r = nn.deform_conv %x, %w, %o, %m, %b {strides = array<i64: 2>, padding_low = array<i64: 1, 0>, padding_high = array<i64: 1, 0>, dilations = array<i64: 1, 1>, group = 2 : i64, offset_group = 2 : i64} : (tensor<1x4x5x4xf32>, tensor<6x2x2x2xf32>, tensor<1x16x3x3xf32>, tensor<1x8x3x3xf32>, tensor<6xf32>) -> tensor<1x6x3x3xf32>
  func.return
}

// -----

func.func @nn_deform_conv_1(%x: tensor<1x4x5x4xf32>, %w: tensor<6x2x2x2xf32>, %o: tensor<1x16x3x3xf32>, %m: tensor<1x4x3x3xf32>, %b: tensor<6xf32>) {
  // expected-error @+1 {{'nn.deform_conv' op nn.deform_conv of input tensor<1x4x5x4xf32> and kernel tensor<6x2x2x2xf32> with group 2 and offset_group 2 needs offset, mask and bias of {'offset': [1, 16, 3, 3], 'mask': [1, 8, 3, 3], 'bias': [6]} and one element type, got tensor<1x16x3x3xf32>, tensor<1x4x3x3xf32>, tensor<6xf32>}}
  %r = nn.deform_conv %x, %w, %o, %m, %b {strides = array<i64: 2, 1>, padding_low = array<i64: 1, 0>, padding_high = array<i64: 1, 0>, dilations = array<i64: 1, 1>, group = 2 : i64, offset_group = 2 : i64} : (tensor<1x4x5x4xf32>, tensor<6x2x2x2xf32>, tensor<1x16x3x3xf32>, tensor<1x4x3x3xf32>, tensor<6xf32>) -> tensor<1x6x3x3xf32>
  func.return
}
