// RUN: opt-tool %s --split-input-file --verify-diagnostics

// One case per verifier message of nn.dft.

func.func @nn_dft_0(%x: tensor<4x2xf32>) {
  // expected-error @+1 {{'nn.dft' op kind must be one of c2c, r2c, c2r, got 'c2x'}}
  %r = nn.dft %x {axis = 0 : i64, kind = "c2x", scale = "none"} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return
}

// -----

func.func @nn_dft_1(%x: tensor<4x2xf32>) {
  // expected-error @+1 {{'nn.dft' op scale must be one of none, sqrt, n, got 'ortho'}}
  %r = nn.dft %x {axis = 0 : i64, kind = "c2c", scale = "ortho"} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return
}

// -----

func.func @nn_dft_2(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'nn.dft' op a c2c input must be complex, a trailing dimension of 2 (re, im), got tensor<4x3xf32>}}
  %r = nn.dft %x {axis = 0 : i64, kind = "c2c", scale = "none"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @nn_dft_3(%x: tensor<4x2xf32>) {
  // expected-error @+1 {{'nn.dft' op axis 1 is outside the 1 signal dimensions of tensor<4x2xf32>}}
  %r = nn.dft %x {axis = 1 : i64, kind = "c2c", scale = "none"} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return
}

// -----

func.func @nn_dft_4(%x: tensor<4x2xf32>) {
  // expected-error @+1 {{'nn.dft' op onesided applies to r2c only (a c2r input is always one-sided)}}
  %r = nn.dft %x {axis = 0 : i64, kind = "c2c", scale = "none", onesided} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return
}

// -----

func.func @nn_dft_5(%x: tensor<4x2xf32>) {
  // expected-error @+1 {{'nn.dft' op length is required by c2r and applies to it only}}
  %r = nn.dft %x {axis = 0 : i64, kind = "c2r", scale = "n", inverse} : (tensor<4x2xf32>) -> tensor<6xf32>
  func.return
}

// -----

func.func @nn_dft_6(%x: tensor<0x3xf32>) {
  // expected-error @+1 {{'nn.dft' op the signal length must be at least 1, got 0}}
  %r = nn.dft %x {axis = 0 : i64, kind = "r2c", scale = "none"} : (tensor<0x3xf32>) -> tensor<0x3x2xf32>
  func.return
}

// -----

func.func @nn_dft_7(%x: tensor<4x2xf32>) {
  // expected-error @+1 {{'nn.dft' op a c2r input of length 8 has 5 frequencies along axis 0, got 4}}
  %r = nn.dft %x {axis = 0 : i64, kind = "c2r", scale = "n", inverse, length = 8 : i64} : (tensor<4x2xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @nn_dft_8(%x: tensor<4x2xi32>) {
  // expected-error @+1 {{'nn.dft' op input must have a float element type, got tensor<4x2xi32>}}
  %r = nn.dft %x {axis = 0 : i64, kind = "c2c", scale = "none"} : (tensor<4x2xi32>) -> tensor<4x2xi32>
  func.return
}

// -----

func.func @nn_dft_9(%x: tensor<8xf32>) {
  // expected-error @+1 {{'nn.dft' op result type tensor<8x2xf32> does not match the inferred type tensor<5x2xf32>}}
  %r = nn.dft %x {axis = 0 : i64, kind = "r2c", scale = "none", onesided} : (tensor<8xf32>) -> tensor<8x2xf32>
  func.return
}
