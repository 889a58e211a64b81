module @jit_newton_sqrt attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:4 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg0, %iterArg_1 = %arg0, %iterArg_2 = %c) : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i32>
    cond {
      %2 = stablehlo.multiply %iterArg_1, %iterArg_1 : tensor<4xf32>
      %3 = stablehlo.subtract %2, %iterArg : tensor<4xf32>
      %4 = stablehlo.abs %3 : tensor<4xf32>
      %cst_3 = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %5 = stablehlo.reduce(%4 init: %cst_3) applies stablehlo.maximum across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
      %cst_4 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
      %6 = stablehlo.compare GT, %5, %cst_4, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %c_5 = stablehlo.constant dense<50> : tensor<i32>
      %7 = stablehlo.compare LT, %iterArg_2, %c_5, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %c_6 = stablehlo.constant dense<false> : tensor<i1>
      %8 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<i1>) -> tensor<i1>
      %9 = stablehlo.compare NE, %7, %8, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %10 = stablehlo.convert %9 : tensor<i1>
      %11 = stablehlo.and %6, %10 : tensor<i1>
      stablehlo.return %11 : tensor<i1>
    } do {
      %2 = stablehlo.divide %iterArg_0, %iterArg_1 : tensor<4xf32>
      %3 = stablehlo.add %iterArg_1, %2 : tensor<4xf32>
      %cst_3 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
      %4 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<4xf32>
      %5 = stablehlo.multiply %4, %3 : tensor<4xf32>
      %c_4 = stablehlo.constant dense<1> : tensor<i32>
      %6 = stablehlo.add %iterArg_2, %c_4 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_0, %5, %6 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i32>
    }
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0#2 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    return %1 : tensor<f32>
  }
}
