// RUN: opt-tool %s | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool | filecheck %s
// RUN: opt-tool %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// nn.nonzero, nn.gather_points and nn.unique (dialects/nn_dynamic.py), whose results have
// a data-dependent (dynamic) size, and nn.reduce over such a size; the generic
// form parses back to the same IR.

// CHECK-LABEL: func.func @masked
// CHECK-NEXT:    %{{.*}} = nn.nonzero %m : (tensor<3x4xi1>) -> tensor<?x2xi64>
// CHECK-NEXT:    %{{.*}} = nn.nonzero %m {transposed} : (tensor<3x4xi1>) -> tensor<2x?xi64>
// CHECK-NEXT:    %{{.*}} = nn.nonzero %s : (tensor<f32>) -> tensor<?x0xi64>
// CHECK-NEXT:    %{{.*}} = nn.gather_points %x, %{{.*}} {axis = 0 : i64} : (tensor<3x4x5xf32>, tensor<?x2xi64>) -> tensor<?x5xf32>
// CHECK-NEXT:    %{{.*}} = nn.gather_points %{{.*}}, %c {axis = 1 : i64} : (tensor<?x2xi64>, tensor<1xi64>) -> tensor<?xi64>
// CHECK-NEXT:    %{{.*}} = nn.reduce %{{.*}} {kind = "sum", axes = array<i64: 0>} : (tensor<?x5xf32>) -> tensor<5xf32>
// CHECK-NEXT:    %{{.*}} = nn.unique %u {part = "values"} : (tensor<6xf32>) -> tensor<?xf32>
// CHECK-NEXT:    %{{.*}} = nn.unique %u {part = "inverse", first_occurrence, equal_nan} : (tensor<6xf32>) -> tensor<6xi64>
// GENERIC-LABEL: "func.func"() <{sym_name = "masked"
// GENERIC:       "nn.nonzero"(%{{.*}}) <{transposed}> : (tensor<3x4xi1>) -> tensor<2x?xi64>
// GENERIC:       "nn.gather_points"(%{{.*}}, %{{.*}}) <{axis = 0 : i64}>
func.func @masked(%x: tensor<3x4x5xf32>, %m: tensor<3x4xi1>, %s: tensor<f32>, %c: tensor<1xi64>, %u: tensor<6xf32>) {
  %0 = nn.nonzero %m : (tensor<3x4xi1>) -> tensor<?x2xi64>
  %1 = nn.nonzero %m {transposed} : (tensor<3x4xi1>) -> tensor<2x?xi64>
  %2 = nn.nonzero %s : (tensor<f32>) -> tensor<?x0xi64>
  %3 = nn.gather_points %x, %0 {axis = 0 : i64} : (tensor<3x4x5xf32>, tensor<?x2xi64>) -> tensor<?x5xf32>
  %4 = nn.gather_points %0, %c {axis = 1 : i64} : (tensor<?x2xi64>, tensor<1xi64>) -> tensor<?xi64>
  %5 = nn.reduce %3 {kind = "sum", axes = array<i64: 0>} : (tensor<?x5xf32>) -> tensor<5xf32>
  %6 = nn.unique %u {part = "values"} : (tensor<6xf32>) -> tensor<?xf32>
  %7 = nn.unique %u {part = "inverse", first_occurrence, equal_nan} : (tensor<6xf32>) -> tensor<6xi64>
  func.return
}
