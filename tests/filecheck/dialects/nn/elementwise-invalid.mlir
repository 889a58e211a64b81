// RUN: opt-tool %s --split-input-file --verify-diagnostics

// One case per verifier message of the elementwise nn ops.

func.func @nn_sign_0(%a: tensor<4xi1>) {
  // expected-error @+1 {{'nn.sign' op input must have a float or signless integer element type, got tensor<4xi1>}}
  %r = nn.sign %a : (tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

func.func @nn_tan_15(%a: tensor<4xi32>) {
  // expected-error @+1 {{'nn.tan' op input must have a float element type, got tensor<4xi32>}}
  %r = nn.tan %a : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

func.func @nn_atan2_1(%a: tensor<3x4xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{'nn.atan2' op shapes [3, 4] and [5] do not broadcast}}
  %r = nn.atan2 %a, %b : (tensor<3x4xf32>, tensor<5xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @nn_clamp_2(%a: tensor<f32>, %x: tensor<4xf32>, %b: tensor<f64>) {
  // expected-error @+1 {{'nn.clamp' op element types differ: f32, f32, f64}}
  %r = nn.clamp %a, %x, %b : (tensor<f32>, tensor<4xf32>, tensor<f64>) -> tensor<4xf32>
  func.return
}

// -----

func.func @nn_clamp_3(%a: tensor<3xf32>, %x: tensor<4xf32>, %b: tensor<f32>) {
  // expected-error @+1 {{'nn.clamp' op shapes of min, operand, max ([3], [4], []) do not broadcast}}
  %r = nn.clamp %a, %x, %b : (tensor<3xf32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @nn_compare_4(%a: tensor<4xf32>) {
  // expected-error @+1 {{'nn.compare' op direction must be one of EQ, NE, LT, LE, GT, GE, got 'LTE'}}
  %r = nn.compare %a, %a {direction = "LTE"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  func.return
}

// -----

func.func @nn_compare_5(%a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{'nn.compare' op operand element types differ: f32 and i32}}
  %r = nn.compare %a, %b {direction = "EQ"} : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xi1>
  func.return
}

// -----

func.func @nn_compare_6(%a: tensor<4xf32>) {
  // expected-error @+1 {{'nn.compare' op result type tensor<4xf32> does not match the inferred type tensor<4xi1>}}
  %r = nn.compare %a, %a {direction = "EQ"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @nn_compare_7(%a: tensor<4xui32>) {
  // expected-error @+1 {{'nn.compare' op operands must have a float or signless integer element type, got tensor<4xui32>}}
  %r = nn.compare %a, %a {direction = "EQ"} : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xi1>
  func.return
}

// -----

func.func @nn_select_8(%p: tensor<4xi32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'nn.select' op pred must be an i1 tensor, got tensor<4xi32>}}
  %r = nn.select %p, %a, %a : (tensor<4xi32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @nn_select_9(%p: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf64>) {
  // expected-error @+1 {{'nn.select' op on_true and on_false element types differ: f32 and f64}}
  %r = nn.select %p, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  func.return
}

// -----

func.func @nn_convert_10(%a: tensor<4xui8>) {
  // expected-error @+1 {{'nn.convert' op input element type must be f16, bf16, f32, f64, i1, i8, i16, i32 or i64, got ui8}}
  %r = nn.convert %a : (tensor<4xui8>) -> tensor<4xf32>
  func.return
}

// -----

func.func @nn_convert_11(%a: tensor<4xf32>) {
  // expected-error @+1 {{'nn.convert' op result type tensor<3xi32> does not match the inferred type tensor<4xi32>}}
  %r = nn.convert %a : (tensor<4xf32>) -> tensor<3xi32>
  func.return
}

// -----

func.func @nn_and_12(%a: tensor<4xf32>) {
  // expected-error @+1 {{'nn.and' op lhs must have an i1 or signless integer element type, got tensor<4xf32>}}
  %r = nn.and %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @nn_or_13(%a: tensor<4xi1>, %b: tensor<4xi32>) {
  // expected-error @+1 {{'nn.or' op operand element types differ: i1 and i32}}
  %r = nn.or %a, %b : (tensor<4xi1>, tensor<4xi32>) -> tensor<4xi1>
  func.return
}

// -----

func.func @nn_add_14(%a: tensor<4xi1>) {
  // expected-error @+1 {{'nn.add' op lhs must have a float or signless integer element type, got tensor<4xi1>}}
  %r = nn.add %a, %a : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}
