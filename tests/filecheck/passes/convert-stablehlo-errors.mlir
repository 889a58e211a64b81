// RUN: opt-tool %s --split-input-file --verify-diagnostics --convert-stablehlo

// What the conversion does not cover is an error at the op, naming it.

func.func @subtract_reduce(%x: tensor<4xi32>) -> tensor<i32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  // expected-error @+1 {{convert-stablehlo: reduce with a 'stablehlo.subtract' body is not supported}}
  %0 = stablehlo.reduce(%x init: %zero) applies stablehlo.subtract across dimensions = [0] : (tensor<4xi32>, tensor<i32>) -> tensor<i32>
  func.return %0 : tensor<i32>
}

// -----

func.func @unsigned_sign(%x: tensor<4xui8>) -> tensor<4xui8> {
  // expected-error @+1 {{convert-stablehlo: 'stablehlo.sign' of unsigned integers is not supported}}
  %0 = stablehlo.sign %x : tensor<4xui8>
  func.return %0 : tensor<4xui8>
}

// -----

func.func @window_subtract(%x: tensor<4xf32>) -> tensor<2xf32> {
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  // expected-error @+1 {{convert-stablehlo: reduce_window with a 'stablehlo.subtract' body is not supported}}
  %0 = "stablehlo.reduce_window"(%x, %one) <{window_dimensions = array<i64: 2>, window_strides = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.subtract %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4xf32>, tensor<f32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @both_groups_conv(%x: tensor<2x2x4xf32>, %w: tensor<2x1x2xf32>) -> tensor<1x2x3xf32> {
  // expected-error @+1 {{convert-stablehlo: convolution with both feature_group_count and batch_group_count above 1 is not valid}}
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {} {batch_group_count = 2 : i64, feature_group_count = 2 : i64} : (tensor<2x2x4xf32>, tensor<2x1x2xf32>) -> tensor<1x2x3xf32>
  func.return %0 : tensor<1x2x3xf32>
}

// -----

func.func @total_order(%a: tensor<4xi32>) -> tensor<4xi1> {
  // expected-error @+1 {{convert-stablehlo: compare LT with compare_type TOTALORDER is not supported}}
  %0 = stablehlo.compare LT, %a, %a, TOTALORDER : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  func.return %0 : tensor<4xi1>
}

// -----

func.func @two_input_reduce(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<f32> {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  // expected-error @+1 {{convert-stablehlo: a reduce of two inputs is supported only as JAX's argmax/argmin}}
  %0:2 = stablehlo.reduce(%x init: %c), (%y init: %c) across dimensions = [0] : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
   reducer(%a: tensor<f32>, %b: tensor<f32>) (%p: tensor<f32>, %q: tensor<f32>)  {
    %s = stablehlo.add %a, %b : tensor<f32>
    %t = stablehlo.add %p, %q : tensor<f32>
    stablehlo.return %s, %t : tensor<f32>, tensor<f32>
  }
  func.return %0#0 : tensor<f32>
}

// -----

func.func @inside_a_loop(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c, %y = %x) : tensor<i32>, tensor<4xf32>
  cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    // expected-error @+1 {{convert-stablehlo: compare GE with compare_type TOTALORDER is not supported}}
    %f = stablehlo.compare GE, %j, %one, TOTALORDER : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %j, %y : tensor<i32>, tensor<4xf32>
  }
  func.return %0#1 : tensor<4xf32>
}

// -----

func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @r(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func private @r(%y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{convert-stablehlo: @r calls itself; recursion is not inlined}}
  %0 = func.call @r(%y) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @raw_float_sort(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{convert-stablehlo: a sort comparator of a FLOAT compare of floats without JAX's canonicalization (-0.0 to 0.0, NaN to one NaN) under TOTALORDER is not supported}}
  %0 = "stablehlo.sort"(%x) <{dimension = 0 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
