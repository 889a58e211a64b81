module @jit_convnet attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x6x6xf32>, %arg1: tensor<4x3x3x3xf32>, %arg2: tensor<4xf32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<4xf32>) -> tensor<1x4x1x1xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2, 3] : (tensor<1x4x1x1xf32>) -> tensor<2x4x6x6xf32>
    %3 = stablehlo.add %0, %2 : tensor<2x4x6x6xf32>
    %4 = call @relu(%3) : (tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %6 = "stablehlo.reduce_window"(%4, %5) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %10 = stablehlo.maximum %arg3, %arg4 : tensor<f32>
      stablehlo.return %10 : tensor<f32>
    }) : (tensor<2x4x6x6xf32>, tensor<f32>) -> tensor<2x4x3x3xf32>
    %7 = stablehlo.multiply %6, %6 : tensor<2x4x3x3xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.reduce(%7 init: %cst_0) applies stablehlo.add across dimensions = [0, 1, 2, 3] : (tensor<2x4x3x3xf32>, tensor<f32>) -> tensor<f32>
    %cst_1 = stablehlo.constant dense<7.200000e+01> : tensor<f32>
    %9 = stablehlo.divide %8, %cst_1 : tensor<f32>
    return %9 : tensor<f32>
  }
  func.func private @relu(%arg0: tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x4x6x6xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<2x4x6x6xf32>
    return %1 : tensor<2x4x6x6xf32>
  }
}
