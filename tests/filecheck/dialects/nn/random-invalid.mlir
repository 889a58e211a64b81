// RUN: opt-tool %s --split-input-file --verify-diagnostics

// One case per verifier message of the random ops.

func.func @random_0(%k: tensor<3xi32>) {
  // expected-error @+1 {{'nn.random_uniform' op key must be a tensor<2xi32> (two 32-bit words), got tensor<3xi32>}}
  %r = nn.random_uniform %k {stream = 0 : i64} : (tensor<3xi32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @random_1(%k: tensor<2xi32>) {
  // expected-error @+1 {{'nn.random_uniform' op stream must be a 32-bit unsigned number, got -1}}
  %r = nn.random_uniform %k {stream = -1 : i64} : (tensor<2xi32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @random_2(%k: tensor<2xi32>) {
  // expected-error @+1 {{'nn.random_normal' op result must have a float element type, got i32}}
  %r = nn.random_normal %k {stream = 0 : i64} : (tensor<2xi32>) -> tensor<4xi32>
  func.return
}

// -----

func.func @random_3(%k: tensor<2xi32>) {
  // expected-error @+1 {{'nn.random_bits' op result must have element type i32, got f32}}
  %r = nn.random_bits %k {stream = 0 : i64} : (tensor<2xi32>) -> tensor<4xf32>
  func.return
}
