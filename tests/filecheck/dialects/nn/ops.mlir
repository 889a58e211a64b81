// RUN: opt-tool %s | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool | filecheck %s
// RUN: opt-tool %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Every nn op in its custom form; the generic form parses back to the same IR.

// CHECK-LABEL: func.func @elementwise
// CHECK-NEXT:    %{{.*}} = nn.add %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.sub %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.mul %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.div %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.neg %b : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.exp %b : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.log %b : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.tanh %b : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.sqrt %b : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.relu %b : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.sigmoid %b : (tensor<8xf32>) -> tensor<8xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "elementwise"
// GENERIC:       "nn.add"(%{{.*}}, %{{.*}}) : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
func.func @elementwise(%a: tensor<4x1xf32>, %b: tensor<8xf32>) {
  %0 = nn.add %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = nn.sub %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = nn.mul %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %3 = nn.div %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %4 = nn.neg %b : (tensor<8xf32>) -> tensor<8xf32>
  %5 = nn.exp %b : (tensor<8xf32>) -> tensor<8xf32>
  %6 = nn.log %b : (tensor<8xf32>) -> tensor<8xf32>
  %7 = nn.tanh %b : (tensor<8xf32>) -> tensor<8xf32>
  %8 = nn.sqrt %b : (tensor<8xf32>) -> tensor<8xf32>
  %9 = nn.relu %b : (tensor<8xf32>) -> tensor<8xf32>
  %10 = nn.sigmoid %b : (tensor<8xf32>) -> tensor<8xf32>
  func.return
}

// CHECK-LABEL: func.func @structural
// CHECK-NEXT:    %{{.*}} = nn.matmul %x, %w : (tensor<8x16xf64>, tensor<16x4xf64>) -> tensor<8x4xf64>
// CHECK-NEXT:    %{{.*}} = nn.linear %x, %v, %bias : (tensor<8x16xf64>, tensor<4x16xf64>, tensor<4xf64>) -> tensor<8x4xf64>
// CHECK-NEXT:    %{{.*}} = nn.reduce %x {kind = "mean", axes = array<i64: 0, -1>, keepdims} : (tensor<8x16xf64>) -> tensor<1x1xf64>
// CHECK-NEXT:    %{{.*}} = nn.reduce %x {kind = "max", axes = array<i64: 1>} : (tensor<8x16xf64>) -> tensor<8xf64>
// CHECK-NEXT:    %{{.*}} = nn.broadcast %bias : (tensor<4xf64>) -> tensor<2x8x4xf64>
// CHECK-NEXT:    %{{.*}} = nn.transpose %x {permutation = array<i64: 1, 0>} : (tensor<8x16xf64>) -> tensor<16x8xf64>
// CHECK-NEXT:    %{{.*}} = nn.reshape %x : (tensor<8x16xf64>) -> tensor<2x64xf64>
// CHECK-NEXT:    %{{.*}} = nn.softmax %x {axis = 0 : i64} : (tensor<8x16xf64>) -> tensor<8x16xf64>
// CHECK-NEXT:    %{{.*}} = nn.log_softmax %x {axis = -1 : i64} : (tensor<8x16xf64>) -> tensor<8x16xf64>
// CHECK-NEXT:    %{{.*}} = nn.nll_loss %{{.*}}, %labels : (tensor<8x16xf64>, tensor<8xi64>) -> tensor<f64>
// CHECK-NEXT:    %{{.*}} = nn.constant {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>} : tensor<2xf32>
// CHECK-NEXT:    %{{.*}} = nn.full {value = 5.000000e-01 : f64} : tensor<3x3xf64>
// GENERIC:       "nn.reduce"(%{{.*}}) <{kind = "mean", axes = array<i64: 0, -1>, keepdims}> : (tensor<8x16xf64>) -> tensor<1x1xf64>
func.func @structural(%x: tensor<8x16xf64>, %w: tensor<16x4xf64>, %v: tensor<4x16xf64>, %bias: tensor<4xf64>, %labels: tensor<8xi64>) {
  %0 = nn.matmul %x, %w : (tensor<8x16xf64>, tensor<16x4xf64>) -> tensor<8x4xf64>
  %1 = nn.linear %x, %v, %bias : (tensor<8x16xf64>, tensor<4x16xf64>, tensor<4xf64>) -> tensor<8x4xf64>
  %2 = nn.reduce %x {kind = "mean", axes = array<i64: 0, -1>, keepdims} : (tensor<8x16xf64>) -> tensor<1x1xf64>
  %3 = nn.reduce %x {kind = "max", axes = array<i64: 1>} : (tensor<8x16xf64>) -> tensor<8xf64>
  %4 = nn.broadcast %bias : (tensor<4xf64>) -> tensor<2x8x4xf64>
  %5 = nn.transpose %x {permutation = array<i64: 1, 0>} : (tensor<8x16xf64>) -> tensor<16x8xf64>
  %6 = nn.reshape %x : (tensor<8x16xf64>) -> tensor<2x64xf64>
  %7 = nn.softmax %x {axis = 0 : i64} : (tensor<8x16xf64>) -> tensor<8x16xf64>
  %8 = nn.log_softmax %x {axis = -1 : i64} : (tensor<8x16xf64>) -> tensor<8x16xf64>
  %9 = nn.nll_loss %8, %labels : (tensor<8x16xf64>, tensor<8xi64>) -> tensor<f64>
  %10 = nn.constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>
  %11 = nn.full {value = 0.5 : f64} : tensor<3x3xf64>
  func.return
}
