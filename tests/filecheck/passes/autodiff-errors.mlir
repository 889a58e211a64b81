// RUN: opt-tool %s --split-input-file --verify-diagnostics --autodiff

func.func @no_rule(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = df.map (%i) in (4) outs(%o = %e : tensor<4xf32>) {
    %v = df.read %x[%i] : tensor<4xf32>
    %r = df.tasklet (%v) : (f32) -> f32 {
    ^bb0(%a: f32):
      // expected-error @+1 {{autodiff: cannot differentiate 'math.atan': no symbolic rule}}
      %t = math.atan %a : f32
      df.yield %t : f32
    }
    df.write %r, %o[%i] : tensor<4xf32>
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

func.func @wcr_mul(%x: tensor<4xf32>) -> tensor<f32> {
  %one = arith.constant dense<1.0> : tensor<f32>
  %p = df.map (%i) in (4) outs(%o = %one : tensor<f32>) {
    %v = df.read %x[%i] : tensor<4xf32>
    // expected-error @+1 {{autodiff: wcr(mul) is not differentiable here}}
    df.write %v, %o[] wcr(mul) : tensor<f32>
  } -> tensor<f32>
  func.return %p : tensor<f32>
}

// -----

func.func @scalar_arith(%x: tensor<3xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %a = tensor.extract %x[%c0] : tensor<3xf64>
  // expected-error @+1 {{autodiff: 'arith.mulf' on floats outside a tasklet is not differentiable; put it in a df.tasklet}}
  %b = arith.mulf %a, %a : f64
  func.return %b : f64
}
