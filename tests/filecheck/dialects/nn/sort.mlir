// RUN: opt-tool %s | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool | filecheck %s
// RUN: opt-tool %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// nn.argsort (dialects/nn_sort.py) in its custom form, with its unit flags
// and `k`; the generic form parses back to the same IR.

// CHECK-LABEL: func.func @argsort
// CHECK-NEXT:    %{{.*}} = nn.argsort %x {axis = 1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xi64>
// CHECK-NEXT:    %{{.*}} = nn.argsort %x {axis = -1 : i64, descending, k = 3 : i64} : (tensor<2x5xf32>) -> tensor<2x3xi64>
// CHECK-NEXT:    %{{.*}} = nn.argsort %u {axis = 0 : i64, unsigned} : (tensor<4xi8>) -> tensor<4xi64>
// GENERIC-LABEL: "func.func"() <{sym_name = "argsort"
// GENERIC:       "nn.argsort"(%{{.*}}) <{axis = -1 : i64, descending, k = 3 : i64}>
func.func @argsort(%x: tensor<2x5xf32>, %u: tensor<4xi8>) {
  %0 = nn.argsort %x {axis = 1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xi64>
  %1 = nn.argsort %x {axis = -1 : i64, descending, k = 3 : i64} : (tensor<2x5xf32>) -> tensor<2x3xi64>
  %2 = nn.argsort %u {axis = 0 : i64, unsigned} : (tensor<4xi8>) -> tensor<4xi64>
  func.return
}
