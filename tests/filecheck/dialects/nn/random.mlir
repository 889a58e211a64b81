// RUN: opt-tool %s | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool | filecheck %s
// RUN: opt-tool %s -p expand-library | filecheck %s --check-prefix=EXPANDED

// The random ops (dialects/nn_random.py) in their custom form; the generic form parses back
// to the same IR. Their expansions leave no nn op behind.

// CHECK-LABEL: func.func @random
// CHECK-NEXT:    %{{.*}} = nn.random_bits %k {stream = 0 : i64} : (tensor<2xi32>) -> tensor<4x3xi32>
// CHECK-NEXT:    %{{.*}} = nn.random_uniform %k {stream = 1 : i64} : (tensor<2xi32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.random_normal %k {stream = 2 : i64} : (tensor<2xi32>) -> tensor<2x2xf64>
// EXPANDED-LABEL: func.func @random
// EXPANDED-NOT:   nn.
// EXPANDED:       func.return
func.func @random(%k: tensor<2xi32>) -> (tensor<4x3xi32>, tensor<8xf32>, tensor<2x2xf64>) {
  %0 = nn.random_bits %k {stream = 0 : i64} : (tensor<2xi32>) -> tensor<4x3xi32>
  %1 = nn.random_uniform %k {stream = 1 : i64} : (tensor<2xi32>) -> tensor<8xf32>
  %2 = nn.random_normal %k {stream = 2 : i64} : (tensor<2xi32>) -> tensor<2x2xf64>
  func.return %0, %1, %2 : tensor<4x3xi32>, tensor<8xf32>, tensor<2x2xf64>
}
