// RUN: opt-tool %s | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool | filecheck %s
// RUN: opt-tool %s -p expand-library | filecheck %s --check-prefix=EXPANDED

// nn.grid_sample (dialects/nn_sample.py) in its custom form, with and without
// align_corners, 2-D and 3-D, and nn.deform_conv; the generic form parses back to the same IR.
// Their composite expansions leave no nn op behind (expand-library expands the nn ops they write).

// CHECK-LABEL: func.func @grid_sample
// CHECK-NEXT:    %{{.*}} = nn.grid_sample %x, %g {mode = "bilinear", padding_mode = "zeros"} : (tensor<1x2x4x5xf32>, tensor<1x3x2x2xf32>) -> tensor<1x2x3x2xf32>
// CHECK-NEXT:    %{{.*}} = nn.grid_sample %x, %g {mode = "bicubic", padding_mode = "reflection", align_corners} : (tensor<1x2x4x5xf32>, tensor<1x3x2x2xf32>) -> tensor<1x2x3x2xf32>
// CHECK-NEXT:    %{{.*}} = nn.grid_sample %v, %h {mode = "bilinear", padding_mode = "border"} : (tensor<1x2x3x4x5xf32>, tensor<1x2x1x2x3xf32>) -> tensor<1x2x2x1x2xf32>
// EXPANDED-LABEL: func.func @grid_sample
// EXPANDED-NOT:   nn.
// EXPANDED:       func.return
func.func @grid_sample(%x: tensor<1x2x4x5xf32>, %g: tensor<1x3x2x2xf32>, %v: tensor<1x2x3x4x5xf32>, %h: tensor<1x2x1x2x3xf32>) -> (tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x2x1x2xf32>) {
  %0 = nn.grid_sample %x, %g {mode = "bilinear", padding_mode = "zeros"} : (tensor<1x2x4x5xf32>, tensor<1x3x2x2xf32>) -> tensor<1x2x3x2xf32>
  %1 = nn.grid_sample %x, %g {mode = "bicubic", padding_mode = "reflection", align_corners} : (tensor<1x2x4x5xf32>, tensor<1x3x2x2xf32>) -> tensor<1x2x3x2xf32>
  %2 = nn.grid_sample %v, %h {mode = "bilinear", padding_mode = "border"} : (tensor<1x2x3x4x5xf32>, tensor<1x2x1x2x3xf32>) -> tensor<1x2x2x1x2xf32>
  func.return %0, %1, %2 : tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x2x1x2xf32>
}

// CHECK-LABEL: func.func @deform_conv
// CHECK-NEXT:    %{{.*}} = nn.deform_conv %x, %w, %o, %m, %b {strides = array<i64: 2, 1>, padding_low = array<i64: 1, 0>, padding_high = array<i64: 1, 0>, dilations = array<i64: 1, 1>, group = 2 : i64, offset_group = 2 : i64} : (tensor<1x4x5x4xf32>, tensor<6x2x2x2xf32>, tensor<1x16x3x3xf32>, tensor<1x8x3x3xf32>, tensor<6xf32>) -> tensor<1x6x3x3xf32>
// EXPANDED-LABEL: func.func @deform_conv
// EXPANDED-NOT:   nn.
// EXPANDED:       func.return
func.func @deform_conv(%x: tensor<1x4x5x4xf32>, %w: tensor<6x2x2x2xf32>, %o: tensor<1x16x3x3xf32>, %m: tensor<1x8x3x3xf32>, %b: tensor<6xf32>) -> tensor<1x6x3x3xf32> {
  %0 = nn.deform_conv %x, %w, %o, %m, %b {strides = array<i64: 2, 1>, padding_low = array<i64: 1, 0>, padding_high = array<i64: 1, 0>, dilations = array<i64: 1, 1>, group = 2 : i64, offset_group = 2 : i64} : (tensor<1x4x5x4xf32>, tensor<6x2x2x2xf32>, tensor<1x16x3x3xf32>, tensor<1x8x3x3xf32>, tensor<6xf32>) -> tensor<1x6x3x3xf32>
  func.return %0 : tensor<1x6x3x3xf32>
}
