// RUN: opt-tool %s --split-input-file --verify-diagnostics

// One case per verifier message of nn.reduce_window.

func.func @nn_reduce_window_0(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.reduce_window' op kind must be one of max, min, sum, mean, got 'avg'}}
  %r = nn.reduce_window %x {kind = "avg", window_dimensions = array<i64: 2>, window_strides = array<i64: 1>, window_dilations = array<i64: 1>, padding_low = array<i64: 0>, padding_high = array<i64: 0>} : (tensor<4xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @nn_reduce_window_1(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'nn.reduce_window' op window_strides has 1 elements, expected one per dimension (2)}}
  %r = nn.reduce_window %x {kind = "max", window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1>, window_dilations = array<i64: 1, 1>, padding_low = array<i64: 0, 0>, padding_high = array<i64: 0, 0>} : (tensor<4x4xf32>) -> tensor<3x3xf32>
  func.return
}

// -----

func.func @nn_reduce_window_2(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.reduce_window' op dimension 0: window size, stride and dilation must be at least 1}}
  %r = nn.reduce_window %x {kind = "max", window_dimensions = array<i64: 2>, window_strides = array<i64: 1>, window_dilations = array<i64: 0>, padding_low = array<i64: 0>, padding_high = array<i64: 0>} : (tensor<4xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @nn_reduce_window_3(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.reduce_window' op dimension 0: padding must be non-negative}}
  %r = nn.reduce_window %x {kind = "max", window_dimensions = array<i64: 2>, window_strides = array<i64: 1>, window_dilations = array<i64: 1>, padding_low = array<i64: 0>, padding_high = array<i64: -1>} : (tensor<4xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @nn_reduce_window_4(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.reduce_window' op dimension 0: the window spans 7 elements, more than the padded size 4}}
  %r = nn.reduce_window %x {kind = "max", window_dimensions = array<i64: 4>, window_strides = array<i64: 1>, window_dilations = array<i64: 2>, padding_low = array<i64: 0>, padding_high = array<i64: 0>} : (tensor<4xf32>) -> tensor<1xf32>
  func.return
}

// -----

func.func @nn_reduce_window_5(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.reduce_window' op result type tensor<2xf32> does not match the inferred type tensor<3xf32>}}
  %r = nn.reduce_window %x {kind = "sum", window_dimensions = array<i64: 2>, window_strides = array<i64: 1>, window_dilations = array<i64: 1>, padding_low = array<i64: 0>, padding_high = array<i64: 0>} : (tensor<4xf32>) -> tensor<2xf32>
  func.return
}
