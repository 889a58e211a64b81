// RUN: opt-tool %s | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool | filecheck %s

// nn.col2im (dialects/nn_conv.py): 2-D columns strided, padded and dilated, folded into images; the generic
// form parses back.

// CHECK-LABEL: func.func @col2im
// CHECK-NEXT:    %{{.*}} = nn.col2im %x {image_shape = array<i64: 6, 7>, block_shape = array<i64: 3, 2>, strides = array<i64: 2, 3>, padding_low = array<i64: 1, 2>, padding_high = array<i64: 1, 2>, dilations = array<i64: 2, 1>} : (tensor<1x12x8xf32>) -> tensor<1x2x6x7xf32>
func.func @col2im(%x: tensor<1x12x8xf32>) {
  %0 = nn.col2im %x {image_shape = array<i64: 6, 7>, block_shape = array<i64: 3, 2>, strides = array<i64: 2, 3>, padding_low = array<i64: 1, 2>, padding_high = array<i64: 1, 2>, dilations = array<i64: 2, 1>} : (tensor<1x12x8xf32>) -> tensor<1x2x6x7xf32>
  func.return
}
