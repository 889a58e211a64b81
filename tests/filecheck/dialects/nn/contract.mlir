// RUN: opt-tool %s | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool | filecheck %s
// RUN: opt-tool %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// dot_general, argmax and argmin (dialects/nn_contract.py) in their custom
// form; the generic form parses back to the same IR.

// CHECK-LABEL: func.func @contract
// CHECK-NEXT:    %{{.*}} = nn.dot_general %a, %b {lhs_batching_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT:    %{{.*}} = nn.dot_general %x, %x {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64>, rhs_contracting_dimensions = array<i64>} : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4x3x4xf32>
// CHECK-NEXT:    %{{.*}} = nn.argmax %x {axis = 1 : i64} : (tensor<3x4xf32>) -> tensor<3xi64>
// CHECK-NEXT:    %{{.*}} = nn.argmin %x {axis = -2 : i64} : (tensor<3x4xf32>) -> tensor<4xi32>
// GENERIC-LABEL: "func.func"() <{sym_name = "contract"
// GENERIC:       "nn.argmax"(%{{.*}}) <{axis = 1 : i64}> : (tensor<3x4xf32>) -> tensor<3xi64>
func.func @contract(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %x: tensor<3x4xf32>) {
  %0 = nn.dot_general %a, %b {lhs_batching_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %1 = nn.dot_general %x, %x {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64>, rhs_contracting_dimensions = array<i64>} : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4x3x4xf32>
  %2 = nn.argmax %x {axis = 1 : i64} : (tensor<3x4xf32>) -> tensor<3xi64>
  %3 = nn.argmin %x {axis = -2 : i64} : (tensor<3x4xf32>) -> tensor<4xi32>
  func.return
}
