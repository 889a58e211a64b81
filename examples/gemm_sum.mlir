// Z = X @ Y with the nn library op, then S = sum(Z) as a df map whose tasklet
// result is written with wcr(add) into a 0-d tensor.
func.func @gemm_sum(%X: tensor<5x4xf32>, %Y: tensor<4x3xf32>) -> tensor<f32> {
  %Z = nn.matmul %X, %Y : (tensor<5x4xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %S = df.map (%i, %j) in (5, 3) outs(%acc = %zero : tensor<f32>) {
    %z = df.read %Z[%i, %j] : tensor<5x3xf32>
    %v = df.tasklet (%z) : (f32) -> f32 {
    ^bb0(%a: f32):
      df.yield %a : f32
    }
    df.write %v, %acc[] wcr(add) : tensor<f32>
  } -> tensor<f32>
  func.return %S : tensor<f32>
}
