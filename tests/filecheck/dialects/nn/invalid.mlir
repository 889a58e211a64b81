// RUN: opt-tool %s --split-input-file --verify-diagnostics

// One case per nn verifier message.

func.func @nn_exp_0(%a: tensor<?xf32>) {
  // expected-error @+1 {{'nn.exp' op input must have a static shape, got tensor<?xf32>}}
  %r = nn.exp %a : (tensor<?xf32>) -> tensor<?xf32>
  func.return
}

// -----

func.func @nn_exp_1(%a: tensor<4xi32>) {
  // expected-error @+1 {{'nn.exp' op input must have a float element type, got tensor<4xi32>}}
  %r = nn.exp %a : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

func.func @nn_add_2(%a: tensor<4xf32>, %b: tensor<4xf64>) {
  // expected-error @+1 {{'nn.add' op operand element types differ: f32 and f64}}
  %r = nn.add %a, %b : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  func.return
}

// -----

func.func @nn_add_3(%a: tensor<3x4xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{'nn.add' op shapes [3, 4] and [5] do not broadcast}}
  %r = nn.add %a, %b : (tensor<3x4xf32>, tensor<5xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @nn_mul_4(%a: tensor<3xf32>) {
  // expected-error @+1 {{'nn.mul' op result type tensor<4xf32> does not match the inferred type tensor<3xf32>}}
  %r = nn.mul %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @nn_matmul_5(%a: tensor<3xf32>, %b: tensor<3x2xf32>) {
  // expected-error @+1 {{'nn.matmul' op matmul operands must be 2-D}}
  %r = nn.matmul %a, %b : (tensor<3xf32>, tensor<3x2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @nn_matmul_6(%a: tensor<3x4xf32>, %b: tensor<5x2xf32>) {
  // expected-error @+1 {{'nn.matmul' op contraction dimensions differ}}
  %r = nn.matmul %a, %b : (tensor<3x4xf32>, tensor<5x2xf32>) -> tensor<3x2xf32>
  func.return
}

// -----

func.func @nn_matmul_7(%a: tensor<3x4xf32>, %b: tensor<4x2xf64>) {
  // expected-error @+1 {{'nn.matmul' op operand element types differ: f32 and f64}}
  %r = nn.matmul %a, %b : (tensor<3x4xf32>, tensor<4x2xf64>) -> tensor<3x2xf32>
  func.return
}

// -----

func.func @nn_linear_8(%a: tensor<3xf32>, %b: tensor<2x3xf32>, %c: tensor<2xf32>) {
  // expected-error @+1 {{'nn.linear' op linear expects a 2-D input, 2-D weight and 1-D bias}}
  %r = nn.linear %a, %b, %c : (tensor<3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @nn_linear_9(%a: tensor<1x3xf32>, %b: tensor<2x3xf64>, %c: tensor<2xf32>) {
  // expected-error @+1 {{'nn.linear' op input, weight and bias element types differ}}
  %r = nn.linear %a, %b, %c : (tensor<1x3xf32>, tensor<2x3xf64>, tensor<2xf32>) -> tensor<1x2xf32>
  func.return
}

// -----

func.func @nn_linear_10(%a: tensor<1x3xf32>, %b: tensor<2x4xf32>, %c: tensor<2xf32>) {
  // expected-error @+1 {{'nn.linear' op weight tensor<2x4xf32> does not take 3 input features}}
  %r = nn.linear %a, %b, %c : (tensor<1x3xf32>, tensor<2x4xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  func.return
}

// -----

func.func @nn_linear_11(%a: tensor<1x3xf32>, %b: tensor<2x3xf32>, %c: tensor<5xf32>) {
  // expected-error @+1 {{'nn.linear' op bias tensor<5xf32> does not have 2 elements}}
  %r = nn.linear %a, %b, %c : (tensor<1x3xf32>, tensor<2x3xf32>, tensor<5xf32>) -> tensor<1x2xf32>
  func.return
}

// -----

func.func @nn_reduce_12(%a: tensor<3xf32>) {
  // expected-error @+1 {{'nn.reduce' op reduce kind must be one of sum, max, min, mean, got 'prod'}}
  %r = nn.reduce %a {kind = "prod", axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  func.return
}

// -----

func.func @nn_reduce_13(%a: tensor<3x2xf32>) {
  // expected-error @+1 {{'nn.reduce' op axis 2 is out of range for rank 2}}
  %r = nn.reduce %a {kind = "sum", axes = array<i64: 2>} : (tensor<3x2xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @nn_reduce_14(%a: tensor<3x2xf32>) {
  // expected-error @+1 {{'nn.reduce' op axes [1, -1] repeat an axis}}
  %r = nn.reduce %a {kind = "sum", axes = array<i64: 1, -1>} : (tensor<3x2xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @nn_broadcast_15(%a: tensor<3xf32>) {
  // expected-error @+1 {{'nn.broadcast' op tensor<3xf32> does not broadcast to tensor<2x4xf32>}}
  %r = nn.broadcast %a : (tensor<3xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

func.func @nn_transpose_16(%a: tensor<3x2xf32>) {
  // expected-error @+1 {{'nn.transpose' op permutation [0, 0] is not a permutation of 2 dimensions}}
  %r = nn.transpose %a {permutation = array<i64: 0, 0>} : (tensor<3x2xf32>) -> tensor<3x3xf32>
  func.return
}

// -----

func.func @nn_reshape_17(%a: tensor<3x2xf32>) {
  // expected-error @+1 {{'nn.reshape' op cannot reshape tensor<3x2xf32> (6 elements) to tensor<5xf32>}}
  %r = nn.reshape %a : (tensor<3x2xf32>) -> tensor<5xf32>
  func.return
}

// -----

func.func @nn_reshape_18(%a: tensor<3x2xf32>) {
  // expected-error @+1 {{'nn.reshape' op reshape cannot change the element type f32 to f64}}
  %r = nn.reshape %a : (tensor<3x2xf32>) -> tensor<6xf64>
  func.return
}

// -----

func.func @nn_softmax_19(%a: tensor<f32>) {
  // expected-error @+1 {{'nn.softmax' op input must have at least one dimension}}
  %r = nn.softmax %a {axis = 0 : i64} : (tensor<f32>) -> tensor<f32>
  func.return
}

// -----

func.func @nn_log_softmax_20(%a: tensor<3x2xf32>) {
  // expected-error @+1 {{'nn.log_softmax' op axis -3 is out of range for rank 2}}
  %r = nn.log_softmax %a {axis = -3 : i64} : (tensor<3x2xf32>) -> tensor<3x2xf32>
  func.return
}

// -----

func.func @nn_nll_loss_21(%a: tensor<3xf32>, %b: tensor<3xi64>) {
  // expected-error @+1 {{'nn.nll_loss' op input must be 2-D (N x C), got tensor<3xf32>}}
  %r = nn.nll_loss %a, %b : (tensor<3xf32>, tensor<3xi64>) -> tensor<f32>
  func.return
}

// -----

func.func @nn_nll_loss_22(%a: tensor<3x4xf32>, %b: tensor<4xi64>) {
  // expected-error @+1 {{'nn.nll_loss' op labels must be a 1-D integer tensor of 3 elements, got tensor<4xi64>}}
  %r = nn.nll_loss %a, %b : (tensor<3x4xf32>, tensor<4xi64>) -> tensor<f32>
  func.return
}

// -----

func.func @nn_nll_loss_23(%a: tensor<3x4xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'nn.nll_loss' op labels must be a 1-D integer tensor of 3 elements, got tensor<3xf32>}}
  %r = nn.nll_loss %a, %b : (tensor<3x4xf32>, tensor<3xf32>) -> tensor<f32>
  func.return
}

// -----

func.func @nn_full_24(%a: tensor<2xf32>) {
  // expected-error @+1 {{'nn.full' op value type f64 is not the element type of tensor<2xf32>}}
  %r = nn.full {value = 1.0 : f64} : tensor<2xf32>
  func.return
}

// -----

func.func @nn_constant_25(%a: tensor<2xf32>) {
  // expected-error @+1 {{'nn.constant' op value must be a tensor, got vector<2xf32>}}
  %r = nn.constant {value = dense<1.0> : vector<2xf32>} : tensor<2xf32>
  func.return
}
