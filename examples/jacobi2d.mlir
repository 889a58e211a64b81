// jacobi2d(A): B starts as a copy of A; 20 time steps, each updating the interior
// of B from A with a five-point stencil and then the interior of A from B (borders
// unchanged). Returns sum(A).
func.func @jacobi2d(%A: tensor<64x64xf64>) -> tensor<f64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %steps = arith.constant 20 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<f64>
  %empty = tensor.empty() : tensor<64x64xf64>
  %B = df.map (%i, %j) in (64, 64) outs(%o = %empty : tensor<64x64xf64>) {
    %v = df.read %A[%i, %j] : tensor<64x64xf64>
    df.write %v, %o[%i, %j] : tensor<64x64xf64>
  } -> tensor<64x64xf64>
  %Afinal, %Bfinal = scf.for %t = %c0 to %steps step %c1
      iter_args(%a = %A, %b = %B) -> (tensor<64x64xf64>, tensor<64x64xf64>) {
    %b2 = df.map (%i, %j) in (62, 62) outs(%o = %b : tensor<64x64xf64>) {
      %i1 = arith.addi %i, %c1 : index
      %j1 = arith.addi %j, %c1 : index
      %i2 = arith.addi %i, %c2 : index
      %j2 = arith.addi %j, %c2 : index
      %center = df.read %a[%i1, %j1] : tensor<64x64xf64>
      %west = df.read %a[%i1, %j] : tensor<64x64xf64>
      %east = df.read %a[%i1, %j2] : tensor<64x64xf64>
      %south = df.read %a[%i2, %j1] : tensor<64x64xf64>
      %north = df.read %a[%i, %j1] : tensor<64x64xf64>
      %r = df.tasklet (%center, %west, %east, %south, %north) : (f64, f64, f64, f64, f64) -> f64 {
      ^bb0(%vc: f64, %vw: f64, %ve: f64, %vs: f64, %vn: f64):
        %k = arith.constant 2.000000e-01 : f64
        %s0 = arith.addf %vc, %vw : f64
        %s1 = arith.addf %s0, %ve : f64
        %s2 = arith.addf %s1, %vs : f64
        %s3 = arith.addf %s2, %vn : f64
        %m = arith.mulf %k, %s3 : f64
        df.yield %m : f64
      }
      df.write %r, %o[%i1, %j1] : tensor<64x64xf64>
    } -> tensor<64x64xf64>
    %a2 = df.map (%i, %j) in (62, 62) outs(%o = %a : tensor<64x64xf64>) {
      %i1 = arith.addi %i, %c1 : index
      %j1 = arith.addi %j, %c1 : index
      %i2 = arith.addi %i, %c2 : index
      %j2 = arith.addi %j, %c2 : index
      %center = df.read %b2[%i1, %j1] : tensor<64x64xf64>
      %west = df.read %b2[%i1, %j] : tensor<64x64xf64>
      %east = df.read %b2[%i1, %j2] : tensor<64x64xf64>
      %south = df.read %b2[%i2, %j1] : tensor<64x64xf64>
      %north = df.read %b2[%i, %j1] : tensor<64x64xf64>
      %r = df.tasklet (%center, %west, %east, %south, %north) : (f64, f64, f64, f64, f64) -> f64 {
      ^bb0(%vc: f64, %vw: f64, %ve: f64, %vs: f64, %vn: f64):
        %k = arith.constant 2.000000e-01 : f64
        %s0 = arith.addf %vc, %vw : f64
        %s1 = arith.addf %s0, %ve : f64
        %s2 = arith.addf %s1, %vs : f64
        %s3 = arith.addf %s2, %vn : f64
        %m = arith.mulf %k, %s3 : f64
        df.yield %m : f64
      }
      df.write %r, %o[%i1, %j1] : tensor<64x64xf64>
    } -> tensor<64x64xf64>
    scf.yield %a2, %b2 : tensor<64x64xf64>, tensor<64x64xf64>
  }
  %sum = df.map (%i, %j) in (64, 64) outs(%s = %zero : tensor<f64>) {
    %v = df.read %Afinal[%i, %j] : tensor<64x64xf64>
    df.write %v, %s[] wcr(add) : tensor<f64>
  } -> tensor<f64>
  func.return %sum : tensor<f64>
}
