// RUN: opt-tool %s --split-input-file --verify-diagnostics

// Unknown ops, keywords, attribute fields and properties are errors naming them.

func.func @unknown_op(%x: tensor<4xf32>) {
  // expected-error @+1 {{unregistered operation 'stablehlo.cholesky' (the stablehlo dialect has no such op)}}
  %0 = stablehlo.cholesky %x : tensor<4xf32>
  func.return
}

// -----

func.func @unknown_keyword(%x: tensor<4xf32>) {
  // expected-error @+1 {{'stablehlo.transpose' has no keyword 'perm'}}
  %0 = stablehlo.transpose %x, perm = [0] : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @unknown_field(%a: tensor<4xf32>) {
  // expected-error @+1 {{#stablehlo.dot has no field 'lhs_contracting_dims'}}
  %0 = "stablehlo.dot_general"(%a, %a) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dims = [0]>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  func.return
}

// -----

func.func @unknown_property(%a: tensor<4xf32>) {
  // expected-error @+1 {{property 'algorithm' is not defined by the operation 'stablehlo.dot_general'}}
  %0 = "stablehlo.dot_general"(%a, %a) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, algorithm = 1 : i64}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  func.return
}

// -----

func.func @unknown_enum(%a: tensor<4xf32>) {
  // expected-error @+1 {{precision}}
  %0 = stablehlo.dot_general %a, %a, contracting_dims = [0] x [0], precision = [FASTEST] : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  func.return
}

// -----

func.func @unknown_attribute(%a: tensor<4xf32>) {
  // expected-error @+1 {{'stablehlo.rng_algorithm' is not registered}}
  %0 = "stablehlo.abs"(%a) {x = #stablehlo<rng_algorithm PHILOX>} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @reduce_body(%x: tensor<4xf32>, %c: tensor<f32>) {
  // expected-error @+1 {{'stablehlo.reduce' cannot apply 'stablehlo.sine'}}
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.sine across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  func.return
}
