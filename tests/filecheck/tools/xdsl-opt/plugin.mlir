// The `xdsl.universe` entry point: xDSL's own xdsl-opt reads df/nn and runs
// the project's passes once dfc is installed.
// RUN: xdsl-opt %s -p expand-library,fuse | filecheck %s
// RUN: xdsl-opt --print-op-generic %s | xdsl-opt | filecheck %s --check-prefix=ROUNDTRIP

// CHECK-LABEL: func.func @scale_exp
// CHECK-NOT:     nn.
// CHECK:         df.map
// CHECK:           math.exp
// CHECK-NEXT:      arith.mulf
// CHECK-NOT:     df.map

// ROUNDTRIP: nn.exp %x : (tensor<8xf32>) -> tensor<8xf32>
// ROUNDTRIP: nn.mul
func.func @scale_exp(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %e = nn.exp %x : (tensor<8xf32>) -> tensor<8xf32>
  %s = nn.mul %e, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %s : tensor<8xf32>
}
