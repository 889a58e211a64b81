// RUN: opt-tool %s --split-input-file --verify-diagnostics '--autodiff{wrt=1}'

// expected-error @+1 {{autodiff: argument #1 of @int_arg has type tensor<3xi64>; gradients exist only for floats (tensors or scalars)}}
func.func @int_arg(%a: tensor<3xf32>, %l: tensor<3xi64>) -> tensor<3xf32> {
  func.return %a : tensor<3xf32>
}

// -----

// expected-error @+1 {{autodiff: @one_arg has no argument #1}}
func.func @one_arg(%a: tensor<3xf32>) -> tensor<3xf32> {
  func.return %a : tensor<3xf32>
}

