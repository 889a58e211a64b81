module @jit_jacobi2d attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x8xf32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0) : tensor<i32>, tensor<8x8xf32>
    cond {
      %c_1 = stablehlo.constant dense<4> : tensor<i32>
      %3 = stablehlo.compare LT, %iterArg, %c_1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %3 : tensor<i1>
    } do {
      %3 = func.call @closed_call(%iterArg_0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
      %c_1 = stablehlo.constant dense<1> : tensor<i32>
      %4 = stablehlo.add %iterArg, %c_1 : tensor<i32>
      stablehlo.return %4, %3 : tensor<i32>, tensor<8x8xf32>
    }
    %1 = stablehlo.multiply %0#1, %0#1 : tensor<8x8xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8xf32>, tensor<f32>) -> tensor<f32>
    return %2 : tensor<f32>
  }
  func.func private @closed_call(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.slice %arg0 [0:6, 1:7] : (tensor<8x8xf32>) -> tensor<6x6xf32>
    %1 = stablehlo.slice %arg0 [2:8, 1:7] : (tensor<8x8xf32>) -> tensor<6x6xf32>
    %2 = stablehlo.add %0, %1 : tensor<6x6xf32>
    %3 = stablehlo.slice %arg0 [1:7, 0:6] : (tensor<8x8xf32>) -> tensor<6x6xf32>
    %4 = stablehlo.add %2, %3 : tensor<6x6xf32>
    %5 = stablehlo.slice %arg0 [1:7, 2:8] : (tensor<8x8xf32>) -> tensor<6x6xf32>
    %6 = stablehlo.add %4, %5 : tensor<6x6xf32>
    %cst = stablehlo.constant dense<2.500000e-01> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6x6xf32>
    %8 = stablehlo.multiply %7, %6 : tensor<6x6xf32>
    %c = stablehlo.constant dense<1> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %10 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %11 = stablehlo.concatenate %9, %10, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %12 = "stablehlo.scatter"(%arg0, %11, %8) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1]>, unique_indices = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      stablehlo.return %arg2 : tensor<f32>
    }) : (tensor<8x8xf32>, tensor<2xi32>, tensor<6x6xf32>) -> tensor<8x8xf32>
    return %12 : tensor<8x8xf32>
  }
}
