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

// -----

// Found by tools/fuzz_opt_tool.py: a word where an integer list element belongs,
// and a case index or if predicate of the wrong type, are errors, not crashes.

func.func @word_in_dims(%a: tensor<4xf32>) {
  // expected-error @+1 {{expected an integer, got 'FASTEST'}}
  %0 = stablehlo.dot_general %a, %a, contracting_dims = [0] x [FASTEST] : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  func.return
}

// -----

func.func @word_in_window(%x: tensor<1x2x6x6xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{expected an integer, got 'x1'}}
  %1 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, x1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x6x6xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
  func.return
}

// -----

func.func @float_case_index(%k: tensor<f64>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'stablehlo.case' op index must be a 0-d tensor of integers, got tensor<f64>}}
  %0 = "stablehlo.case"(%k) ({
    stablehlo.return %x : tensor<4xf32>
  }, {
    stablehlo.return %x : tensor<4xf32>
  }) : (tensor<f64>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @integer_if_predicate(%p: tensor<i32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'stablehlo.if' op pred must be a 0-d tensor of i1, got tensor<i32>}}
  %0 = "stablehlo.if"(%p) ({
    stablehlo.return %x : tensor<4xf32>
  }, {
    stablehlo.return %x : tensor<4xf32>
  }) : (tensor<i32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @word_for_dimension() {
  // expected-error @+1 {{'stablehlo.iota': bad value for 'dim' (expected an integer, got 'nan')}}
  %1 = stablehlo.iota dim = nan : tensor<2x3xi32>
  func.return
}

// -----

func.func @reverse_not_a_list(%x: tensor<1x2x6x6xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+1 {{'stablehlo.convolution' window reverse must be a list}}
  %1 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], reverse = 3} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x6x6xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
  func.return
}
