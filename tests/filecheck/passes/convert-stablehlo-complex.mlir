// RUN: opt-tool %s --split-input-file --convert-stablehlo --cse --dce | filecheck %s

// A complex tensor is packed as a real one with a trailing dimension of 2 (re, im): the signature too.
// A product is built from the parts (sliced out of the packed tensor), then packed again; real is
// the first part; transpose keeps the trailing dimension last.
func.func @parts(%z: tensor<3xcomplex<f32>>, %m: tensor<2x3xcomplex<f32>>) -> (tensor<3xcomplex<f32>>, tensor<3xf32>, tensor<3x2xcomplex<f32>>) {
  %0 = stablehlo.multiply %z, %z : tensor<3xcomplex<f32>>
  %1 = stablehlo.real %0 : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
  %2 = stablehlo.transpose %m, dims = [1, 0] : (tensor<2x3xcomplex<f32>>) -> tensor<3x2xcomplex<f32>>
  func.return %0, %1, %2 : tensor<3xcomplex<f32>>, tensor<3xf32>, tensor<3x2xcomplex<f32>>
}
// CHECK-LABEL: func.func @parts(%z: tensor<3x2xf32>, %m: tensor<2x3x2xf32>) -> (tensor<3x2xf32>, tensor<3xf32>, tensor<3x2x2xf32>)
// CHECK-NEXT:    %[[RE0:.*]] = nn.slice %z {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 3, 1>, strides = array<i64: 1, 1>}
// CHECK-NEXT:    %[[RE:.*]] = nn.reshape %[[RE0]] : (tensor<3x1xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[IM0:.*]] = nn.slice %z {start_indices = array<i64: 0, 1>, limit_indices = array<i64: 3, 2>, strides = array<i64: 1, 1>}
// CHECK-NEXT:    %[[IM:.*]] = nn.reshape %[[IM0]] : (tensor<3x1xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[AC:.*]] = nn.mul %[[RE]], %[[RE]]
// CHECK-NEXT:    %[[BD:.*]] = nn.mul %[[IM]], %[[IM]]
// CHECK-NEXT:    %[[PRE:.*]] = nn.sub %[[AC]], %[[BD]]
// CHECK-NEXT:    %[[AD:.*]] = nn.mul %[[RE]], %[[IM]]
// CHECK-NEXT:    %[[BC:.*]] = nn.mul %[[IM]], %[[RE]]
// CHECK-NEXT:    %[[PIM:.*]] = nn.add %[[AD]], %[[BC]]
// CHECK-NEXT:    %[[C0:.*]] = nn.broadcast_in_dim %[[PRE]] {broadcast_dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<3x1xf32>
// CHECK-NEXT:    %[[C1:.*]] = nn.broadcast_in_dim %[[PIM]] {broadcast_dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<3x1xf32>
// CHECK-NEXT:    %[[P:.*]] = nn.concatenate %[[C0]], %[[C1]] {dimension = 1 : i64} : (tensor<3x1xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
// CHECK:         %[[REAL:.*]] = nn.reshape {{.*}} : (tensor<3x1xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[T:.*]] = nn.transpose %m {permutation = array<i64: 1, 0, 2>} : (tensor<2x3x2xf32>) -> tensor<3x2x2xf32>
// CHECK-NEXT:    func.return %[[P]], %[[REAL]], %[[T]] : tensor<3x2xf32>, tensor<3xf32>, tensor<3x2x2xf32>

// -----

// A constant's (re, im) pairs are the packed tensor's elements (a hexadecimal part is a bit pattern);
// a splat pair is broadcast; fft is nn.dft over the trailing fft_length dimensions.
func.func @constants_and_fft() -> (tensor<2xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<2x3xcomplex<f64>>) {
  %0 = stablehlo.constant dense<[(1.5, -2.0), (0x7FF0000000000000, 0.0)]> : tensor<2xcomplex<f64>>
  %1 = stablehlo.constant dense<(1.0, 2.0)> : tensor<4xcomplex<f64>>
  %x = stablehlo.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf64>
  %2 = stablehlo.fft %x, type = RFFT, length = [2, 4] : (tensor<2x4xf64>) -> tensor<2x3xcomplex<f64>>
  func.return %0, %1, %2 : tensor<2xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<2x3xcomplex<f64>>
}
// CHECK-LABEL: func.func @constants_and_fft() -> (tensor<2x2xf64>, tensor<4x2xf64>, tensor<2x3x2xf64>)
// CHECK-NEXT:    %0 = nn.constant {value = dense<{{\[}}[1.500000e+00, -2.000000e+00], [0x7ff0000000000000, 0.000000e+00]]> : tensor<2x2xf64>}
// CHECK-NEXT:    %[[PAIR:.*]] = nn.constant {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf64>}
// CHECK-NEXT:    %[[SPLAT:.*]] = nn.broadcast_in_dim %[[PAIR]] {broadcast_dimensions = array<i64: 1>} : (tensor<2xf64>) -> tensor<4x2xf64>
// CHECK:         %[[R2C:.*]] = nn.dft %x {axis = 1 : i64, kind = "r2c", scale = "none", onesided} : (tensor<2x4xf64>) -> tensor<2x3x2xf64>
// CHECK-NEXT:    %[[C2C:.*]] = nn.dft %[[R2C]] {axis = 0 : i64, kind = "c2c", scale = "none"} : (tensor<2x3x2xf64>) -> tensor<2x3x2xf64>
// CHECK-NEXT:    func.return %0, %[[SPLAT]], %[[C2C]]
