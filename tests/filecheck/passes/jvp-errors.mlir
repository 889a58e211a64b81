// RUN: opt-tool %s --split-input-file --verify-diagnostics --jvp

func.func @no_rule(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = df.map (%i) in (4) outs(%o = %e : tensor<4xf32>) {
    %v = df.read %x[%i] : tensor<4xf32>
    %r = df.tasklet (%v) : (f32) -> f32 {
    ^bb0(%a: f32):
      // expected-error @+1 {{jvp: cannot differentiate 'math.atan': no symbolic rule}}
      %t = math.atan %a : f32
      df.yield %t : f32
    }
    df.write %r, %o[%i] : tensor<4xf32>
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

func.func @recursive(%x: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error @+1 {{jvp: cannot differentiate the recursive call to @recursive}}
  %y = func.call @recursive(%x) : (tensor<4xf64>) -> tensor<4xf64>
  func.return %y : tensor<4xf64>
}

// -----

func.func private @external(tensor<4xf64>) -> tensor<4xf64>
func.func @calls_a_declaration(%x: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error @+1 {{jvp: cannot differentiate the call to @external: it has no body}}
  %y = func.call @external(%x) : (tensor<4xf64>) -> tensor<4xf64>
  func.return %y : tensor<4xf64>
}

// -----

func.func @writes_and_reads_its_max(%x: tensor<4xf64>) -> tensor<f64> {
  %init = arith.constant dense<0.0> : tensor<f64>
  // expected-error @+1 {{jvp: the map reads its wcr(max) output #0 while reducing into it}}
  %m = df.map (%i) in (4) outs(%o = %init : tensor<f64>) {
    %v = df.read %x[%i] : tensor<4xf64>
    %w = df.read %o[] : tensor<f64>
    %s = df.tasklet (%v, %w) : (f64, f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      df.yield %t : f64
    }
    df.write %s, %o[] wcr(max) : tensor<f64>
  } -> tensor<f64>
  func.return %m : tensor<f64>
}

// -----

func.func @max_in_a_loop(%x: tensor<4x3xf64>) -> tensor<4xf64> {
  %init = arith.constant dense<0.0> : tensor<4xf64>
  %m = df.map (%i) in (4) outs(%o = %init : tensor<4xf64>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    scf.for %j = %c0 to %c3 step %c1 {
      %v = df.read %x[%i, %j] : tensor<4x3xf64>
      // expected-error @+1 {{jvp: a wcr(max) write in 'scf.for' of a map body is not supported (one candidate per map iteration is stored)}}
      df.write %v, %o[%i] wcr(max) : tensor<4xf64>
    }
  } -> tensor<4xf64>
  func.return %m : tensor<4xf64>
}
