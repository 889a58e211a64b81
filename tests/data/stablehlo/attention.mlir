module @jit_attention attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x4xf32>, %arg1: tensor<4x4xf32>, %arg2: tensor<4x4xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<4x4xf32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3x4xf32>, tensor<4x4xf32>) -> tensor<2x3x4xf32>
    %1 = stablehlo.reshape %0 : (tensor<2x3x4xf32>) -> tensor<2x3x2x2xf32>
    %2 = stablehlo.transpose %1, dims = [0, 2, 1, 3] : (tensor<2x3x2x2xf32>) -> tensor<2x2x3x2xf32>
    %3 = stablehlo.dot_general %arg0, %arg2, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3x4xf32>, tensor<4x4xf32>) -> tensor<2x3x4xf32>
    %4 = stablehlo.reshape %3 : (tensor<2x3x4xf32>) -> tensor<2x3x2x2xf32>
    %5 = stablehlo.transpose %4, dims = [0, 2, 1, 3] : (tensor<2x3x2x2xf32>) -> tensor<2x2x3x2xf32>
    %6 = stablehlo.dot_general %arg0, %arg3, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3x4xf32>, tensor<4x4xf32>) -> tensor<2x3x4xf32>
    %7 = stablehlo.reshape %6 : (tensor<2x3x4xf32>) -> tensor<2x3x2x2xf32>
    %8 = stablehlo.transpose %7, dims = [0, 2, 1, 3] : (tensor<2x3x2x2xf32>) -> tensor<2x2x3x2xf32>
    %9 = stablehlo.dot_general %2, %5, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>) -> tensor<2x2x3x3xf32>
    %cst = stablehlo.constant dense<1.41421354> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x2x3x3xf32>
    %11 = stablehlo.divide %9, %10 : tensor<2x2x3x3xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %12 = stablehlo.reduce(%11 init: %cst_0) applies stablehlo.maximum across dimensions = [3] : (tensor<2x2x3x3xf32>, tensor<f32>) -> tensor<2x2x3xf32>
    %cst_1 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<2x2x3xf32>
    %14 = stablehlo.maximum %13, %12 : tensor<2x2x3xf32>
    %15 = stablehlo.broadcast_in_dim %14, dims = [0, 1, 2] : (tensor<2x2x3xf32>) -> tensor<2x2x3x1xf32>
    %16 = stablehlo.broadcast_in_dim %15, dims = [0, 1, 2, 3] : (tensor<2x2x3x1xf32>) -> tensor<2x2x3x3xf32>
    %17 = stablehlo.subtract %11, %16 : tensor<2x2x3x3xf32>
    %18 = stablehlo.exponential %17 : tensor<2x2x3x3xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %19 = stablehlo.reduce(%18 init: %cst_2) applies stablehlo.add across dimensions = [3] : (tensor<2x2x3x3xf32>, tensor<f32>) -> tensor<2x2x3xf32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [0, 1, 2] : (tensor<2x2x3xf32>) -> tensor<2x2x3x1xf32>
    %21 = stablehlo.broadcast_in_dim %20, dims = [0, 1, 2, 3] : (tensor<2x2x3x1xf32>) -> tensor<2x2x3x3xf32>
    %22 = stablehlo.divide %18, %21 : tensor<2x2x3x3xf32>
    %23 = stablehlo.dot_general %22, %8, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<2x2x3x3xf32>, tensor<2x2x3x2xf32>) -> tensor<2x2x3x2xf32>
    %24 = stablehlo.transpose %23, dims = [0, 2, 1, 3] : (tensor<2x2x3x2xf32>) -> tensor<2x3x2x2xf32>
    %25 = stablehlo.reshape %24 : (tensor<2x3x2x2xf32>) -> tensor<2x3x4xf32>
    %26 = stablehlo.dot_general %25, %arg4, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3x4xf32>, tensor<4x4xf32>) -> tensor<2x3x4xf32>
    %27 = stablehlo.tanh %26 : tensor<2x3x4xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %28 = stablehlo.reduce(%27 init: %cst_3) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<f32>
    return %28 : tensor<f32>
  }
}
