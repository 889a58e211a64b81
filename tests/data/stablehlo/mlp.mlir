module @jit_mlp attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8xf32>, %arg1: tensor<8x16xf32>, %arg2: tensor<16xf32>, %arg3: tensor<16x3xf32>, %arg4: tensor<3xf32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<16xf32>) -> tensor<1x16xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<4x16xf32>
    %3 = stablehlo.add %0, %2 : tensor<4x16xf32>
    %4 = call @relu(%3) : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %5 = stablehlo.dot_general %4, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16xf32>, tensor<16x3xf32>) -> tensor<4x3xf32>
    %6 = stablehlo.broadcast_in_dim %arg4, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<4x3xf32>
    %8 = stablehlo.add %5, %7 : tensor<4x3xf32>
    %9 = stablehlo.tanh %8 : tensor<4x3xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %10 = stablehlo.reduce(%9 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x3xf32>, tensor<f32>) -> tensor<f32>
    return %10 : tensor<f32>
  }
  func.func private @relu(%arg0: tensor<4x16xf32>) -> tensor<4x16xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x16xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<4x16xf32>
    return %1 : tensor<4x16xf32>
  }
}
