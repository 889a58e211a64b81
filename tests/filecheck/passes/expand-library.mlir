// RUN: opt-tool %s --expand-library | filecheck %s
// RUN: opt-tool %s --expand-library --canonicalize --cse | filecheck %s --check-prefix=CLEAN

// nn ops become df maps over their result shapes; tasklets hold the arithmetic.

// matmul iterates (i, k, j), so that the innermost loop walks rows of %y and
// of the result.
// CHECK-LABEL: func.func @matmul
// CHECK:         %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<5x3xf32>
// CHECK-NEXT:    %{{.*}} = df.map (%[[I:.*]], %[[K:.*]], %[[J:.*]]) in (5, 4, 3) outs(%[[O:.*]] = %[[Z]] : tensor<5x3xf32>) {
// CHECK-NEXT:      %[[A:.*]] = df.read %x[%[[I]], %[[K]]] : tensor<5x4xf32>
// CHECK-NEXT:      %[[B:.*]] = df.read %y[%[[K]], %[[J]]] : tensor<4x3xf32>
// CHECK-NEXT:      %[[P:.*]] = df.tasklet (%[[A]], %[[B]]) : (f32, f32) -> f32 {
// CHECK:             arith.mulf
// CHECK:           df.write %[[P]], %[[O]][%[[I]], %[[J]]] wcr(add) : tensor<5x3xf32>
// CHECK-NOT:     nn.
func.func @matmul(%x: tensor<5x4xf32>, %y: tensor<4x3xf32>) -> tensor<5x3xf32> {
  %z = nn.matmul %x, %y : (tensor<5x4xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  func.return %z : tensor<5x3xf32>
}

// Broadcasting reads index 0 along size-1 dimensions.
// CLEAN-LABEL: func.func @broadcast_add
// CLEAN:         df.map (%[[I:.*]], %[[J:.*]]) in (4, 8)
// CLEAN-DAG:       df.read %a[%[[I]], %{{.*}}] : tensor<4x1xf32>
// CLEAN-DAG:       df.read %b[%[[J]]] : tensor<8xf32>
// CLEAN:           arith.addf
func.func @broadcast_add(%a: tensor<4x1xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %c = nn.add %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %c : tensor<4x8xf32>
}

// log_softmax: a max by wcr(max) from -inf, exp and a sum by wcr(add), then x - m - log(s).
// CLEAN-LABEL: func.func @log_softmax
// CLEAN:         arith.constant dense<0xff800000> : tensor<4x1xf32>
// CLEAN:         wcr(max)
// CLEAN:         math.exp
// CLEAN:         wcr(add)
// CLEAN:         math.log
// CLEAN-NOT:     nn.
func.func @log_softmax(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %y = nn.log_softmax %x {axis = 1 : i64} : (tensor<4x10xf32>) -> tensor<4x10xf32>
  func.return %y : tensor<4x10xf32>
}

// nll_loss gathers at the labels; `check-bounds` makes a label outside
// [0, 10) an IndexError at run time.
// CLEAN-LABEL: func.func @nll
// CLEAN:         df.map (%[[I:.*]]) in (8)
// CLEAN:           %[[L:.*]] = arith.index_cast
// CLEAN-NEXT:      df.read %logp[%[[I]], %[[L]]] : tensor<8x10xf32>
// CLEAN:           wcr(add) : tensor<f32>
func.func @nll(%logp: tensor<8x10xf32>, %labels: tensor<8xi64>) -> tensor<f32> {
  %l = nn.nll_loss %logp, %labels : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  func.return %l : tensor<f32>
}

// Elementwise ops of dialects/nn_elementwise.py: compare gives an i1 map, select
// reads it, remainder is arith.remf (C fmod), convert a cast in the tasklet.
// CLEAN-LABEL: func.func @compare_select
// CLEAN:         %[[P:.*]] = df.map (%{{.*}}, %{{.*}}) in (4, 8) outs(%{{.*}} = %{{.*}} : tensor<4x8xi1>)
// CLEAN:           arith.cmpf une
// CLEAN:         df.map
// CLEAN:           df.read %[[P]]
// CLEAN:           arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CLEAN:         df.map
// CLEAN:           arith.remf
// CLEAN:         df.map
// CLEAN:           arith.extf %{{.*}} : f32 to f64
// CLEAN-NOT:     nn.
func.func @compare_select(%x: tensor<4x1xf32>, %y: tensor<8xf32>) -> tensor<4x8xf64> {
  %p = nn.compare %x, %y {direction = "NE"} : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %s = nn.select %p, %x, %y : (tensor<4x8xi1>, tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %r = nn.remainder %s, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %c = nn.convert %r : (tensor<4x8xf32>) -> tensor<4x8xf64>
  func.return %c : tensor<4x8xf64>
}

// Shape ops of dialects/nn_shape.py are maps of copies with affine indices. pad
// fills with the padding value, then writes the operand elements that land
// inside (negative low padding skips the first one) at low + 2 * i; the
// dynamic_slice start is read outside the map and clamped to [0, 5 - 2].
// CLEAN-LABEL: func.func @pad_and_slice
// CLEAN:         %[[FILL:.*]] = df.map (%{{.*}}) in (9) outs
// CLEAN:           df.read %v[] : tensor<f32>
// CLEAN:         %[[PAD:.*]] = df.map (%[[I:.*]]) in (4) outs(%[[O:.*]] = %[[FILL]] : tensor<9xf32>)
// CLEAN:           %[[SRC:.*]] = arith.addi %[[I]], %{{.*}} : index
// CLEAN:           df.read %x[%[[SRC]]] : tensor<5xf32>
// CLEAN:           df.write %{{.*}}, %[[O]][%{{.*}}] : tensor<9xf32>
// CLEAN:         tensor.extract %start[] : tensor<i32>
// CLEAN:         arith.maxsi
// CLEAN:         arith.minsi
// CLEAN:         df.map (%{{.*}}) in (2) outs
// CLEAN-NOT:     nn.
func.func @pad_and_slice(%x: tensor<5xf32>, %v: tensor<f32>, %start: tensor<i32>) -> tensor<2xf32> {
  %p = nn.pad %x, %v {edge_padding_low = array<i64: -1>, edge_padding_high = array<i64: 1>, interior_padding = array<i64: 1>} : (tensor<5xf32>, tensor<f32>) -> tensor<9xf32>
  %s = nn.dynamic_slice %x, %start {slice_sizes = array<i64: 2>} : (tensor<5xf32>, tensor<i32>) -> tensor<2xf32>
  %r = nn.add %s, %s : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %q = nn.slice %p {start_indices = array<i64: 0>, limit_indices = array<i64: 2>, strides = array<i64: 1>} : (tensor<9xf32>) -> tensor<2xf32>
  %t = nn.add %r, %q : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %t : tensor<2xf32>
}

// dot_general is one map over (batch, lhs free, contracting, rhs free) with a
// wcr(add) write; argmax reduces the maximum, then the first index holding it
// (or a NaN) with an integer wcr(min) from the axis size.
// CLEAN-LABEL: func.func @dot_general_argmax
// CLEAN:         df.map (%[[B:.*]], %[[I:.*]], %[[K:.*]], %[[J:.*]]) in (2, 3, 4, 5)
// CLEAN-DAG:       df.read %a[%[[B]], %[[I]], %[[K]]] : tensor<2x3x4xf32>
// CLEAN-DAG:       df.read %b[%[[B]], %[[K]], %[[J]]] : tensor<2x4x5xf32>
// CLEAN:           arith.mulf
// CLEAN:           df.write %{{.*}}, %{{.*}}[%[[B]], %[[I]], %[[J]]] wcr(add) : tensor<2x3x5xf32>
// CLEAN:         wcr(max) : tensor<3x1xf32>
// CLEAN:         arith.constant dense<5> : tensor<3xi64>
// CLEAN:           arith.cmpf oeq
// CLEAN:           arith.cmpf uno
// CLEAN:           wcr(min) : tensor<3xi64>
// CLEAN-NOT:     nn.
func.func @dot_general_argmax(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> (tensor<2x3x5xf32>, tensor<3xi64>) {
  %0 = nn.dot_general %a, %b {lhs_batching_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %s = nn.slice %0 {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 3, 5>, strides = array<i64: 1, 1, 1>} : (tensor<2x3x5xf32>) -> tensor<1x3x5xf32>
  %m = nn.reshape %s : (tensor<1x3x5xf32>) -> tensor<3x5xf32>
  %1 = nn.argmax %m {axis = 1 : i64} : (tensor<3x5xf32>) -> tensor<3xi64>
  func.return %0, %1 : tensor<2x3x5xf32>, tensor<3xi64>
}

// reduce_window copies the input into a -inf tensor (padding 1 on each side),
// then maps over (output, window) reading out * 2 + w and writing with wcr(max).
// CLEAN-LABEL: func.func @max_pool
// CLEAN:         %[[NEG:.*]] = arith.constant dense<0xff800000> : tensor<7xf32>
// CLEAN:         %[[PAD:.*]] = df.map (%{{.*}}) in (5) outs(%{{.*}} = %[[NEG]] : tensor<7xf32>)
// CLEAN:         df.map (%[[O:.*]], %[[W:.*]]) in (3, 3) outs(%[[OUT:.*]] = %{{.*}} : tensor<3xf32>)
// CLEAN:           %[[AT:.*]] = arith.addi %[[W]], %{{.*}} : index
// CLEAN:           %[[V:.*]] = df.read %[[PAD]][%[[AT]]] : tensor<7xf32>
// CLEAN:           df.write %[[V]], %[[OUT]][%[[O]]] wcr(max) : tensor<3xf32>
// CLEAN-NOT:     nn.
func.func @max_pool(%x: tensor<5xf32>) -> tensor<3xf32> {
  %r = nn.reduce_window %x {kind = "max", window_dimensions = array<i64: 3>, window_strides = array<i64: 2>, window_dilations = array<i64: 1>, padding_low = array<i64: 1>, padding_high = array<i64: 1>} : (tensor<5xf32>) -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}

// gather (an embedding lookup) reads the row index at the element's batch
// position, clamps it to [0, 10 - 1] and reads that row.
// CLEAN-LABEL: func.func @embedding
// CLEAN:         df.map (%[[B:.*]], %[[C:.*]]) in (5, 8)
// CLEAN:           %[[I:.*]] = df.read %i[%[[B]], %{{.*}}] : tensor<5x1xi64>
// CLEAN:           %[[X:.*]] = arith.index_cast %[[I]] : i64 to index
// CLEAN:           %[[LO:.*]] = arith.maxsi %[[X]], %{{.*}} : index
// CLEAN:           %[[ROW:.*]] = arith.minsi %[[LO]], %{{.*}} : index
// CLEAN:           df.read %x[%[[ROW]], %[[C]]] : tensor<10x8xf32>
// CLEAN-NOT:     nn.
func.func @embedding(%x: tensor<10x8xf32>, %i: tensor<5x1xi64>) -> tensor<5x8xf32> {
  %r = nn.gather %x, %i {offset_dims = array<i64: 1>, collapsed_slice_dims = array<i64: 0>, operand_batching_dims = array<i64>, start_indices_batching_dims = array<i64>, start_index_map = array<i64: 0>, index_vector_dim = 1 : i64, slice_sizes = array<i64: 1, 8>} : (tensor<10x8xf32>, tensor<5x1xi64>) -> tensor<5x8xf32>
  func.return %r : tensor<5x8xf32>
}

// convolution with more than 16 output features (per group) copies the input
// into zeros (padding 1), unfolds it into
// patches (one row per output position, one column per (c, ky, kx); the row
// of (y, x) reads the padded input at 2 * y + ky), lays the kernel out as
// (o, c * 9 + ky * 3 + kx), accumulates their product with wcr(add) (a GEMM
// for contraction-to-blas), and lays the product out as NCHW.
// CLEAN-LABEL: func.func @conv
// CLEAN:         %[[PAD:.*]] = df.map (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) in (1, 3, 8, 8) outs(%{{.*}} = %{{.*}} : tensor<1x3x10x10xf32>)
// CLEAN:         %[[P:.*]] = df.map (%[[N:.*]], %[[Y:.*]], %[[X:.*]], %[[C:.*]], %[[KY:.*]], %[[KX:.*]]) in (1, 4, 4, 3, 3, 3) outs(%[[PO:.*]] = %{{.*}} : tensor<16x27xf32>)
// CLEAN:           df.read %[[PAD]][%[[N]], %[[C]], %{{.*}}, %{{.*}}] : tensor<1x3x10x10xf32>
// CLEAN:           df.write %{{.*}}, %[[PO]][%{{.*}}, %{{.*}}] : tensor<16x27xf32>
// CLEAN:         %[[W:.*]] = df.map (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) in (24, 3, 3, 3) outs(%{{.*}} = %{{.*}} : tensor<24x27xf32>)
// CLEAN:           df.read %k
// CLEAN:         %[[R:.*]] = df.map (%[[M:.*]], %[[O:.*]], %[[K:.*]]) in (16, 24, 27)
// CLEAN-DAG:       df.read %[[P]][%[[M]], %[[K]]] : tensor<16x27xf32>
// CLEAN-DAG:       df.read %[[W]][%[[O]], %[[K]]] : tensor<24x27xf32>
// CLEAN:           arith.mulf
// CLEAN:           df.write %{{.*}}, %{{.*}}[%[[M]], %[[O]]] wcr(add) : tensor<16x24xf32>
// CLEAN:         df.map (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) in (1, 24, 4, 4)
// CLEAN:           df.read %[[R]]
// CLEAN-NOT:     nn.
func.func @conv(%x: tensor<1x3x8x8xf32>, %k: tensor<24x3x3x3xf32>) -> tensor<1x24x4x4xf32> {
  %r = nn.convolution %x, %k {input_dimensions = array<i64: 0, 1, 2, 3>, kernel_dimensions = array<i64: 0, 1, 2, 3>, output_dimensions = array<i64: 0, 1, 2, 3>, window_strides = array<i64: 2, 2>, padding_low = array<i64: 1, 1>, padding_high = array<i64: 1, 1>, rhs_dilation = array<i64: 1, 1>, feature_group_count = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<24x3x3x3xf32>) -> tensor<1x24x4x4xf32>
  func.return %r : tensor<1x24x4x4xf32>
}

// With at most 16 output features per group, one direct map accumulates
// input * kernel into the zeroed result: the output positions (y, x) inside
// the input feature and the first tap, then a block of output features
// (o = 4 * ob + oi: their terms read the same input element) and the last tap
// innermost; the input is read at 2 * y + ky and 2 * x + kx.
// CLEAN-LABEL: func.func @conv_direct
// CLEAN:         %[[PAD:.*]] = df.map (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) in (1, 3, 8, 8) outs(%{{.*}} = %{{.*}} : tensor<1x3x10x10xf32>)
// CLEAN:         %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<1x4x4x4xf32>
// CLEAN:         df.map (%[[N:.*]], %[[OB:.*]], %[[C:.*]], %[[KY:.*]], %[[Y:.*]], %[[X:.*]], %[[OI:.*]], %[[KX:.*]]) in (1, 1, 3, 3, 4, 4, 4, 3) outs(%[[OUT:.*]] = %[[ZERO]] : tensor<1x4x4x4xf32>)
// CLEAN:           %[[FOUR:.*]] = arith.constant 4 : index
// CLEAN:           %[[OB4:.*]] = arith.muli %[[OB]], %[[FOUR]] : index
// CLEAN:           %[[O:.*]] = arith.addi %[[OB4]], %[[OI]] : index
// CLEAN:           %[[TWO:.*]] = arith.constant 2 : index
// CLEAN:           %[[SY:.*]] = arith.muli %[[Y]], %[[TWO]] : index
// CLEAN:           %[[IY:.*]] = arith.addi %[[KY]], %[[SY]] : index
// CLEAN:           %[[SX:.*]] = arith.muli %[[X]], %[[TWO]] : index
// CLEAN:           %[[IX:.*]] = arith.addi %[[KX]], %[[SX]] : index
// CLEAN:           df.read %[[PAD]][%[[N]], %[[C]], %[[IY]], %[[IX]]] : tensor<1x3x10x10xf32>
// CLEAN:           df.read %k[%[[O]], %[[C]], %[[KY]], %[[KX]]] : tensor<4x3x3x3xf32>
// CLEAN:           arith.mulf
// CLEAN:           df.write %{{.*}}, %[[OUT]][%[[N]], %[[O]], %[[Y]], %[[X]]] wcr(add) : tensor<1x4x4x4xf32>
// CLEAN-NOT:     nn.
func.func @conv_direct(%x: tensor<1x3x8x8xf32>, %k: tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %r = nn.convolution %x, %k {input_dimensions = array<i64: 0, 1, 2, 3>, kernel_dimensions = array<i64: 0, 1, 2, 3>, output_dimensions = array<i64: 0, 1, 2, 3>, window_strides = array<i64: 2, 2>, padding_low = array<i64: 1, 1>, padding_high = array<i64: 1, 1>, rhs_dilation = array<i64: 1, 1>, feature_group_count = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  func.return %r : tensor<1x4x4x4xf32>
}

// scatter-add copies the operand into a tensor one row and column larger, adds
// each update at its row (a window that does not fit goes to the extra corner),
// and slices the extra row and column off.
// CLEAN-LABEL: func.func @scatter_add
// CLEAN:         %[[EXT:.*]] = df.map (%{{.*}}, %{{.*}}) in (10, 8) outs(%{{.*}} = %{{.*}} : tensor<11x9xf32>)
// CLEAN:         %[[ADDED:.*]] = df.map (%{{.*}}, %{{.*}}) in (5, 8) outs(%[[O:.*]] = %[[EXT]] : tensor<11x9xf32>)
// CLEAN:           df.read %i
// CLEAN:           arith.cmpi sge
// CLEAN:           arith.cmpi sle
// CLEAN:           arith.select
// CLEAN:           df.write %{{.*}}, %[[O]][%{{.*}}, %{{.*}}] wcr(add) : tensor<11x9xf32>
// CLEAN:         df.map (%{{.*}}, %{{.*}}) in (10, 8)
// CLEAN:           df.read %[[ADDED]]
// CLEAN-NOT:     nn.
func.func @scatter_add(%x: tensor<10x8xf32>, %i: tensor<5x1xi64>, %u: tensor<5x8xf32>) -> tensor<10x8xf32> {
  %r = nn.scatter %x, %i, %u {kind = "add", update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64} : (tensor<10x8xf32>, tensor<5x1xi64>, tensor<5x8xf32>) -> tensor<10x8xf32>
  func.return %r : tensor<10x8xf32>
}

// On integers, add is arith.addi and div a guarded arith.divsi: y = 0 gives -1
// and y = -1 gives 0 - x (XLA's results), so the division never traps.
// CLEAN-LABEL: func.func @integer_div
// CLEAN:           arith.addi
// CLEAN:         df.map
// CLEAN:           arith.cmpi eq
// CLEAN:           arith.cmpi eq
// CLEAN:           arith.ori
// CLEAN:           arith.select
// CLEAN:           arith.divsi
// CLEAN-NOT:     nn.
func.func @integer_div(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %s = nn.add %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %q = nn.div %s, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %q : tensor<4xi32>
}
