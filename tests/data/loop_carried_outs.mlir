func.func @g(%x: tensor<4xf64>) -> tensor<4xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %e = tensor.empty() : tensor<4xf64>
  %zero = df.map (%q) in (4) outs(%oz = %e : tensor<4xf64>) {
    %zz = arith.constant 0.0 : f64
    df.write %zz, %oz[%q] : tensor<4xf64>
  } -> tensor<4xf64>
  %r = scf.for %t = %c0 to %c4 step %c1 iter_args(%acc = %x) -> (tensor<4xf64>) {
    %m = df.map (%k) in (1) outs(%o = %zero : tensor<4xf64>) {
      %v = df.read %acc[%t] : tensor<4xf64>
      df.write %v, %o[%t] : tensor<4xf64>
    } -> tensor<4xf64>
    %s = nn.add %m, %acc : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
    scf.yield %s : tensor<4xf64>
  }
  func.return %r : tensor<4xf64>
}
