// softmax_loss(x, w) = sum(softmax(x, axis=-1) * w), the softmax written out as
// df maps: a row max by wcr(max), exp(x - max), a row sum by wcr(add), a divide,
// and the weighted total by wcr(add) into a 0-d tensor.
func.func @softmax_loss(%x: tensor<64x512xf32>, %w: tensor<64x512xf32>) -> tensor<f32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<64xf32>
  %zeros = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %zero = arith.constant dense<0.000000e+00> : tensor<f32>
  %empty = tensor.empty() : tensor<64x512xf32>
  %max = df.map (%i, %j) in (64, 512) outs(%m = %ninf : tensor<64xf32>) {
    %v = df.read %x[%i, %j] : tensor<64x512xf32>
    df.write %v, %m[%i] wcr(max) : tensor<64xf32>
  } -> tensor<64xf32>
  %e = df.map (%i, %j) in (64, 512) outs(%o = %empty : tensor<64x512xf32>) {
    %v = df.read %x[%i, %j] : tensor<64x512xf32>
    %mi = df.read %max[%i] : tensor<64xf32>
    %r = df.tasklet (%v, %mi) : (f32, f32) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %d = arith.subf %a, %b : f32
      %ex = math.exp %d : f32
      df.yield %ex : f32
    }
    df.write %r, %o[%i, %j] : tensor<64x512xf32>
  } -> tensor<64x512xf32>
  %sum = df.map (%i, %j) in (64, 512) outs(%s = %zeros : tensor<64xf32>) {
    %v = df.read %e[%i, %j] : tensor<64x512xf32>
    df.write %v, %s[%i] wcr(add) : tensor<64xf32>
  } -> tensor<64xf32>
  %p = df.map (%i, %j) in (64, 512) outs(%o = %empty : tensor<64x512xf32>) {
    %v = df.read %e[%i, %j] : tensor<64x512xf32>
    %si = df.read %sum[%i] : tensor<64xf32>
    %r = df.tasklet (%v, %si) : (f32, f32) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %q = arith.divf %a, %b : f32
      df.yield %q : f32
    }
    df.write %r, %o[%i, %j] : tensor<64x512xf32>
  } -> tensor<64x512xf32>
  %loss = df.map (%i, %j) in (64, 512) outs(%l = %zero : tensor<f32>) {
    %pv = df.read %p[%i, %j] : tensor<64x512xf32>
    %wv = df.read %w[%i, %j] : tensor<64x512xf32>
    %r = df.tasklet (%pv, %wv) : (f32, f32) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %q = arith.mulf %a, %b : f32
      df.yield %q : f32
    }
    df.write %r, %l[] wcr(add) : tensor<f32>
  } -> tensor<f32>
  func.return %loss : tensor<f32>
}
