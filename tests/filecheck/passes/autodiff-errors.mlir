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

func.func @recursive(%x: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error @+1 {{autodiff: cannot differentiate the recursive call to @recursive}}
  %y = func.call @recursive(%x) : (tensor<4xf64>) -> tensor<4xf64>
  func.return %y : tensor<4xf64>
}

// -----

func.func @nested_outs(%x: tensor<4x5xf64>) -> tensor<4x5xf64> {
  %e = tensor.empty() : tensor<4x5xf64>
  %m = df.map (%i) in (4) outs(%o = %e : tensor<4x5xf64>) {
    %e2 = tensor.empty() : tensor<5xf64>
    // expected-error @+1 {{autodiff: a nested map with its own outputs is not supported}}
    %n = df.map (%j) in (5) outs(%p = %e2 : tensor<5xf64>) {
      %v = df.read %x[%i, %j] : tensor<4x5xf64>
      df.write %v, %p[%j] : tensor<5xf64>
    } -> tensor<5xf64>
    df.map (%j) in (5) {
      %v = df.read %n[%j] : tensor<5xf64>
      df.write %v, %o[%i, %j] : tensor<4x5xf64>
    }
  } -> tensor<4x5xf64>
  func.return %m : tensor<4x5xf64>
}

// -----

// A data-dependent while loop differentiates (tests/filecheck/passes/autodiff-while.mlir),
// but not over scalars in a map body.
func.func @while_in_map(%x: tensor<4xf64>) -> tensor<4xf64> {
  %e = tensor.empty() : tensor<4xf64>
  %m = df.map (%i) in (4) outs(%o = %e : tensor<4xf64>) {
    %v = df.read %x[%i] : tensor<4xf64>
    // expected-error @+1 {{autodiff: cannot differentiate 'scf.while' in a map body}}
    %r = scf.while (%h = %v) : (f64) -> f64 {
      %one = arith.constant 1.0 : f64
      %c = arith.cmpf olt, %h, %one : f64
      scf.condition(%c) %h : f64
    } do {
    ^bb0(%h2: f64):
      %y = df.tasklet (%h2) : (f64) -> f64 {
      ^bb0(%a: f64):
        %t = arith.addf %a, %a : f64
        df.yield %t : f64
      }
      scf.yield %y : f64
    }
    df.write %r, %o[%i] : tensor<4xf64>
  } -> tensor<4xf64>
  func.return %m : tensor<4xf64>
}

// -----

func.func @loop_float_scalar(%x: tensor<4xf64>) -> tensor<4xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s0 = tensor.extract %x[%c0] : tensor<4xf64>
  // expected-error @+1 {{autodiff: scalar float iter_args are not differentiable; use 0-d tensors}}
  %r, %s = scf.for %t = %c0 to %c1 step %c1 iter_args(%h = %x, %a = %s0) -> (tensor<4xf64>, f64) {
    %y = nn.tanh %h : (tensor<4xf64>) -> tensor<4xf64>
    scf.yield %y, %a : tensor<4xf64>, f64
  }
  func.return %r : tensor<4xf64>
}

// -----

func.func @outer_then_nested(%v: tensor<3x4xf64>, %w: tensor<3xf64>) -> tensor<3x4xf64> {
  %e = tensor.empty() : tensor<3x4xf64>
  %c = df.map (%i) in (3) outs(%o = %e : tensor<3x4xf64>) {
    %c0 = arith.constant 0 : index
    %b = df.read %w[%i] : tensor<3xf64>
    // expected-error @+1 {{autodiff: a later write in a nested map may overwrite this element in the same iteration}}
    df.write %b, %o[%i, %c0] : tensor<3x4xf64>
    df.map (%j) in (4) {
      %a = df.read %v[%i, %j] : tensor<3x4xf64>
      df.write %a, %o[%i, %j] : tensor<3x4xf64>
    }
  } -> tensor<3x4xf64>
  func.return %c : tensor<3x4xf64>
}

// -----

func.func @write_in_loop_in_map(%x: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %e = tensor.empty() : tensor<3x4xf64>
  %m = df.map (%i) in (3) outs(%o = %e : tensor<3x4xf64>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %z = arith.constant 1.0 : f64
    %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %z) -> (f64) {
      %v = df.read %x[%i, %k] : tensor<3x4xf64>
      %p = df.tasklet (%acc, %v) : (f64, f64) -> f64 {
      ^bb0(%a: f64, %b: f64):
        %q = arith.mulf %a, %b : f64
        df.yield %q : f64
      }
      // expected-error @+1 {{autodiff: 'df.write' in a loop of a map body is not supported}}
      df.write %p, %o[%i, %k] : tensor<3x4xf64>
      scf.yield %p : f64
    }
  } -> tensor<3x4xf64>
  func.return %m : tensor<3x4xf64>
}
