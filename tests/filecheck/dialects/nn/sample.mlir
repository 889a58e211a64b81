// RUN: opt-tool %s | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool | filecheck %s
// RUN: opt-tool %s -p expand-library | filecheck %s --check-prefix=EXPANDED

// nn.grid_sample (dialects/nn_sample.py) in its custom form, with and without
// align_corners, 2-D and 3-D; the generic form parses back to the same IR. Its composite
// expansion leaves no nn op behind (expand-library expands the nn ops it writes).

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
