module @jit_library attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x5xf32>, %arg1: tensor<4x6xf32>, %arg2: tensor<4xi32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<4x5xf32>, tensor<f32>) -> tensor<4xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %2 = stablehlo.maximum %1, %0 : tensor<4xf32>
    %3 = stablehlo.is_finite %2 : (tensor<4xf32>) -> tensor<4xi1>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %5 = stablehlo.select %3, %2, %4 : tensor<4xi1>, tensor<4xf32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x5xf32>
    %8 = stablehlo.subtract %arg0, %7 : tensor<4x5xf32>
    %9 = stablehlo.exponential %8 : tensor<4x5xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %10 = stablehlo.reduce(%9 init: %cst_2) applies stablehlo.add across dimensions = [1] : (tensor<4x5xf32>, tensor<f32>) -> tensor<4xf32>
    %11 = stablehlo.abs %10 : tensor<4xf32>
    %12 = stablehlo.log %11 : tensor<4xf32>
    %13 = stablehlo.add %12, %5 : tensor<4xf32>
    %14 = call @cumsum(%arg1) : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %15 = call @_one_hot(%arg2) : (tensor<4xi32>) -> tensor<4x5xf32>
    %16 = stablehlo.multiply %15, %arg0 : tensor<4x5xf32>
    %cst_3 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %cst_4 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %17 = call @clip(%arg0, %cst_3, %cst_4) : (tensor<4x5xf32>, tensor<f32>, tensor<f32>) -> tensor<4x5xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %18 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<4x5xf32>
    %19 = stablehlo.compare GT, %arg0, %18, FLOAT : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xi1>
    %cst_6 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %20 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<4x5xf32>
    %21 = stablehlo.multiply %20, %arg0 : tensor<4x5xf32>
    %22 = call @_where(%19, %arg0, %21) : (tensor<4x5xi1>, tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
    %23 = stablehlo.add %17, %22 : tensor<4x5xf32>
    %24 = stablehlo.multiply %arg0, %arg0 : tensor<4x5xf32>
    %25 = stablehlo.multiply %24, %arg0 : tensor<4x5xf32>
    %cst_7 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %26 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<4x5xf32>
    %27 = stablehlo.multiply %26, %25 : tensor<4x5xf32>
    %28 = stablehlo.add %arg0, %27 : tensor<4x5xf32>
    %cst_8 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %29 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<4x5xf32>
    %30 = stablehlo.multiply %29, %28 : tensor<4x5xf32>
    %31 = stablehlo.tanh %30 : tensor<4x5xf32>
    %cst_9 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %32 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<4x5xf32>
    %33 = stablehlo.add %32, %31 : tensor<4x5xf32>
    %cst_10 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %34 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<4x5xf32>
    %35 = stablehlo.multiply %34, %33 : tensor<4x5xf32>
    %36 = stablehlo.multiply %arg0, %35 : tensor<4x5xf32>
    %37 = call @softplus(%arg0) : (tensor<4x5xf32>) -> tensor<4x5xf32>
    %38 = stablehlo.add %36, %37 : tensor<4x5xf32>
    %39 = call @silu(%arg0) : (tensor<4x5xf32>) -> tensor<4x5xf32>
    %40 = stablehlo.add %38, %39 : tensor<4x5xf32>
    %cst_11 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %41 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<4x5xf32>
    %42 = stablehlo.multiply %41, %arg0 : tensor<4x5xf32>
    %43 = call @round(%42) : (tensor<4x5xf32>) -> tensor<4x5xf32>
    %44 = stablehlo.add %40, %43 : tensor<4x5xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %45 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<4x5xf32>
    %46 = stablehlo.maximum %arg0, %45 : tensor<4x5xf32>
    %cst_13 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %47 = stablehlo.reduce(%46 init: %cst_13) applies stablehlo.maximum across dimensions = [0] : (tensor<4x5xf32>, tensor<f32>) -> tensor<5xf32>
    %48 = stablehlo.abs %arg1 : tensor<4x6xf32>
    %cst_14 = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %49 = stablehlo.reduce(%48 init: %cst_14) applies stablehlo.minimum across dimensions = [0, 1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<f32>
    %50 = stablehlo.broadcast_in_dim %49, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %51 = stablehlo.add %47, %50 : tensor<5xf32>
    %cst_15 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %52 = stablehlo.reduce(%13 init: %cst_15) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    %cst_16 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %53 = stablehlo.reduce(%14 init: %cst_16) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<f32>
    %54 = stablehlo.add %52, %53 : tensor<f32>
    %cst_17 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %55 = stablehlo.reduce(%16 init: %cst_17) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x5xf32>, tensor<f32>) -> tensor<f32>
    %56 = stablehlo.add %54, %55 : tensor<f32>
    %cst_18 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %57 = stablehlo.reduce(%23 init: %cst_18) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x5xf32>, tensor<f32>) -> tensor<f32>
    %58 = stablehlo.add %56, %57 : tensor<f32>
    %cst_19 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %59 = stablehlo.reduce(%44 init: %cst_19) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x5xf32>, tensor<f32>) -> tensor<f32>
    %60 = stablehlo.add %58, %59 : tensor<f32>
    %cst_20 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %61 = stablehlo.reduce(%51 init: %cst_20) applies stablehlo.add across dimensions = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
    %62 = stablehlo.add %60, %61 : tensor<f32>
    %63 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<4x5xf32>) -> tensor<5x4xf32>
    %64 = stablehlo.slice %arg1 [0:4, 0:5] : (tensor<4x6xf32>) -> tensor<4x5xf32>
    %65 = stablehlo.dot_general %63, %64, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<5x4xf32>, tensor<4x5xf32>) -> tensor<5x5xf32>
    %cst_21 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %66 = stablehlo.reduce(%65 init: %cst_21) applies stablehlo.add across dimensions = [0, 1] : (tensor<5x5xf32>, tensor<f32>) -> tensor<f32>
    %cst_22 = stablehlo.constant dense<2.500000e+01> : tensor<f32>
    %67 = stablehlo.divide %66, %cst_22 : tensor<f32>
    %68 = stablehlo.add %62, %67 : tensor<f32>
    return %68 : tensor<f32>
  }
  func.func private @cumsum(%arg0: tensor<4x6xf32>) -> tensor<4x6xf32> {
    %0 = call @cumsum_0(%arg0) : (tensor<4x6xf32>) -> tensor<4x6xf32>
    return %0 : tensor<4x6xf32>
  }
  func.func private @cumsum_0(%arg0: tensor<4x6xf32>) -> tensor<4x6xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1>, padding = dense<[[3, 0], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 4, 1>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<4x6xf32>
    return %1 : tensor<4x6xf32>
  }
  func.func private @_one_hot(%arg0: tensor<4xi32>) -> tensor<4x5xf32> {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0] : (tensor<4xi32>) -> tensor<4x1xi32>
    %1 = stablehlo.iota dim = 1 : tensor<1x5xi32>
    %2 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<4x1xi32>) -> tensor<4x5xi32>
    %3 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x5xi32>) -> tensor<4x5xi32>
    %4 = stablehlo.compare EQ, %2, %3, SIGNED : (tensor<4x5xi32>, tensor<4x5xi32>) -> tensor<4x5xi1>
    %5 = stablehlo.convert %4 : (tensor<4x5xi1>) -> tensor<4x5xf32>
    return %5 : tensor<4x5xf32>
  }
  func.func private @clip(%arg0: tensor<4x5xf32>, %arg1: tensor<f32>, %arg2: tensor<f32>) -> tensor<4x5xf32> {
    %0 = stablehlo.convert %arg1 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<4x5xf32>
    %2 = stablehlo.maximum %1, %arg0 : tensor<4x5xf32>
    %3 = stablehlo.convert %arg2 : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<4x5xf32>
    %5 = stablehlo.minimum %4, %2 : tensor<4x5xf32>
    return %5 : tensor<4x5xf32>
  }
  func.func private @_where(%arg0: tensor<4x5xi1>, %arg1: tensor<4x5xf32>, %arg2: tensor<4x5xf32>) -> tensor<4x5xf32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<4x5xi1>, tensor<4x5xf32>
    return %0 : tensor<4x5xf32>
  }
  func.func private @softplus(%arg0: tensor<4x5xf32>) -> tensor<4x5xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x5xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<4x5xf32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x5xf32>
    %3 = stablehlo.subtract %arg0, %2 : tensor<4x5xf32>
    %4 = stablehlo.compare NE, %3, %3, FLOAT : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xi1>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x5xf32>
    %6 = stablehlo.add %arg0, %5 : tensor<4x5xf32>
    %7 = stablehlo.abs %3 : tensor<4x5xf32>
    %8 = stablehlo.negate %7 : tensor<4x5xf32>
    %9 = stablehlo.exponential %8 : tensor<4x5xf32>
    %10 = stablehlo.log_plus_one %9 : tensor<4x5xf32>
    %11 = stablehlo.add %1, %10 : tensor<4x5xf32>
    %12 = stablehlo.select %4, %6, %11 : tensor<4x5xi1>, tensor<4x5xf32>
    return %12 : tensor<4x5xf32>
  }
  func.func private @silu(%arg0: tensor<4x5xf32>) -> tensor<4x5xf32> {
    %0 = stablehlo.negate %arg0 : tensor<4x5xf32>
    %1 = stablehlo.exponential %0 : tensor<4x5xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x5xf32>
    %3 = stablehlo.add %2, %1 : tensor<4x5xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4x5xf32>
    %5 = stablehlo.divide %4, %3 : tensor<4x5xf32>
    %6 = stablehlo.multiply %arg0, %5 : tensor<4x5xf32>
    return %6 : tensor<4x5xf32>
  }
  func.func private @round(%arg0: tensor<4x5xf32>) -> tensor<4x5xf32> {
    %0 = stablehlo.round_nearest_even %arg0 : tensor<4x5xf32>
    return %0 : tensor<4x5xf32>
  }
}
