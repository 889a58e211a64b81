func.func @gs(%x: tensor<8xf64>, %w: tensor<8xf64>) -> tensor<f64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c1 to %c7 step %c1 iter_args(%a = %x) -> (tensor<8xf64>) {
      %n = df.map (%k) in (1) outs(%o = %a : tensor<8xf64>) {
        %im = arith.subi %i, %c1 : index
        %ip = arith.addi %i, %c1 : index
        %l = df.read %a[%im] : tensor<8xf64>
        %c = df.read %a[%i] : tensor<8xf64>
        %rr = df.read %a[%ip] : tensor<8xf64>
        %wi = df.read %w[%i] : tensor<8xf64>
        %v = df.tasklet(%l, %c, %rr, %wi) : (f64, f64, f64, f64) -> f64 {
        ^bb0(%p: f64, %q: f64, %u: f64, %z: f64):
          %s1 = arith.addf %p, %q : f64
          %s2 = arith.addf %s1, %u : f64
          %s3 = arith.mulf %s2, %z : f64
          df.yield %s3 : f64
        }
        df.write %v, %o[%i] : tensor<8xf64>
      } -> tensor<8xf64>
      scf.yield %n : tensor<8xf64>
  }
  %e = tensor.empty() : tensor<f64>
  %z = df.map () in () outs(%oz = %e : tensor<f64>) {
    %zz = arith.constant 0.0 : f64
    df.write %zz, %oz[] : tensor<f64>
  } -> tensor<f64>
  %loss = df.map (%j) in (8) outs(%ol = %z : tensor<f64>) {
    %v = df.read %r[%j] : tensor<8xf64>
    %sq = df.tasklet(%v) : (f64) -> f64 {
    ^bb0(%p: f64):
      %m = arith.mulf %p, %p : f64
      df.yield %m : f64
    }
    df.write %sq, %ol[] wcr(add) : tensor<f64>
  } -> tensor<f64>
  func.return %loss : tensor<f64>
}
