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
