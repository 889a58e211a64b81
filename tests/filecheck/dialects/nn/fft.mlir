// RUN: opt-tool %s | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool | filecheck %s
// RUN: opt-tool %s -p expand-library | filecheck %s --check-prefix=EXPANDED

// nn.dft (dialects/nn_fft.py) of each kind in its custom form; the generic form parses back to
// the same IR. Its composite expansion leaves no nn op behind and multiplies by the twiddle
// matrix once per transform.

// CHECK-LABEL: func.func @dft
// CHECK-NEXT:    %{{.*}} = nn.dft %x {axis = 1 : i64, kind = "c2c", scale = "none"} : (tensor<3x8x2xf32>) -> tensor<3x8x2xf32>
// CHECK-NEXT:    %{{.*}} = nn.dft %r {axis = 0 : i64, kind = "r2c", scale = "sqrt", onesided} : (tensor<8x3xf64>) -> tensor<5x3x2xf64>
// CHECK-NEXT:    %{{.*}} = nn.dft %h {axis = 0 : i64, kind = "c2r", scale = "n", inverse, length = 7 : i64} : (tensor<4x2xf32>) -> tensor<7xf32>
// EXPANDED-LABEL: func.func @dft
// EXPANDED-NOT:   nn.
// EXPANDED:       func.return
func.func @dft(%x: tensor<3x8x2xf32>, %r: tensor<8x3xf64>, %h: tensor<4x2xf32>) -> (tensor<3x8x2xf32>, tensor<5x3x2xf64>, tensor<7xf32>) {
  %0 = nn.dft %x {axis = 1 : i64, kind = "c2c", scale = "none"} : (tensor<3x8x2xf32>) -> tensor<3x8x2xf32>
  %1 = nn.dft %r {axis = 0 : i64, kind = "r2c", scale = "sqrt", onesided} : (tensor<8x3xf64>) -> tensor<5x3x2xf64>
  %2 = nn.dft %h {axis = 0 : i64, kind = "c2r", scale = "n", inverse, length = 7 : i64} : (tensor<4x2xf32>) -> tensor<7xf32>
  func.return %0, %1, %2 : tensor<3x8x2xf32>, tensor<5x3x2xf64>, tensor<7xf32>
}
