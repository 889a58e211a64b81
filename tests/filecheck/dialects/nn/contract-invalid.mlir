// RUN: opt-tool %s --split-input-file --verify-diagnostics

// One case per verifier message of dot_general, argmax and argmin.

func.func @nn_dot_general_0(%a: tensor<3x4xf32>, %b: tensor<4x5xf64>) {
  // expected-error @+1 {{'nn.dot_general' op operand element types differ: f32 and f64}}
  %r = nn.dot_general %a, %b {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<3x4xf32>, tensor<4x5xf64>) -> tensor<3x5xf32>
  func.return
}

// -----

func.func @nn_dot_general_1(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'nn.dot_general' op 1 lhs and 0 rhs batching dimensions}}
  %r = nn.dot_general %a, %b {lhs_batching_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  func.return
}

// -----

func.func @nn_dot_general_2(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'nn.dot_general' op rhs batching/contracting dimensions [2] out of range for rank 2}}
  %r = nn.dot_general %a, %b {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 2>} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  func.return
}

// -----

func.func @nn_dot_general_3(%a: tensor<2x3x4xf32>, %b: tensor<3x4x5xf32>) {
  // expected-error @+1 {{'nn.dot_general' op batching dimension sizes differ: lhs dimension 0 (2), rhs dimension 0 (3)}}
  %r = nn.dot_general %a, %b {lhs_batching_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<2x3x4xf32>, tensor<3x4x5xf32>) -> tensor<2x3x5xf32>
  func.return
}

// -----

func.func @nn_dot_general_4(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'nn.dot_general' op result type tensor<5x3xf32> does not match the inferred type tensor<3x5xf32>}}
  %r = nn.dot_general %a, %b {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<5x3xf32>
  func.return
}

// -----

func.func @nn_argmax_5(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'nn.argmax' op result must be an i32 or i64 tensor, got tensor<3xi16>}}
  %r = nn.argmax %x {axis = 1 : i64} : (tensor<3x4xf32>) -> tensor<3xi16>
  func.return
}

// -----

func.func @nn_argmin_6(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'nn.argmin' op axis 2 is out of range for rank 2}}
  %r = nn.argmin %x {axis = 2 : i64} : (tensor<3x4xf32>) -> tensor<3xi64>
  func.return
}

// -----

func.func @nn_argmax_7(%x: tensor<f32>) {
  // expected-error @+1 {{'nn.argmax' op input must have at least one dimension}}
  %r = nn.argmax %x {axis = 0 : i64} : (tensor<f32>) -> tensor<i64>
  func.return
}
