// RUN: opt-tool %s --dce | filecheck %s

// Unused reads and tasklets inside a map go; a map whose results are unused goes
// as a whole (its writes only touch its own outputs); live writes stay.
// CHECK-LABEL: func.func @dead_code
// CHECK:         df.map (%[[I:.*]]) in (8)
// CHECK-NEXT:      %[[A:.*]] = df.read
// CHECK-NEXT:      df.write %[[A]]
// CHECK-NEXT:    } -> tensor<8xf32>
// CHECK-NOT:     df.map
// CHECK:         func.return
func.func @dead_code(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %y = df.map (%i) in (8) outs(%o = %e : tensor<8xf32>) {
    %a = df.read %x[%i] : tensor<8xf32>
    %unused = df.read %x[%i] : tensor<8xf32>
    %t = df.tasklet (%unused) : (f32) -> f32 {
    ^bb0(%u: f32):
      %v = math.exp %u : f32
      df.yield %v : f32
    }
    df.write %a, %o[%i] : tensor<8xf32>
  } -> tensor<8xf32>
  %dead = df.map (%i) in (8) outs(%o = %e : tensor<8xf32>) {
    %a = df.read %x[%i] : tensor<8xf32>
    df.write %a, %o[%i] : tensor<8xf32>
  } -> tensor<8xf32>
  func.return %y : tensor<8xf32>
}

// Unused nn ops go, whole chains of them.
// CHECK-LABEL: func.func @nn_dead
// CHECK-NEXT:    func.return %x
func.func @nn_dead(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %m = nn.matmul %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = nn.softmax %m {axis = 1 : i64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %x : tensor<4x4xf32>
}

// A map in buffer form writes memory: dce keeps it, but drops an unused memref read.
// CHECK-LABEL: func.func @buffer_map_kept
// CHECK-NEXT:    df.map
// CHECK-NEXT:      df.write
func.func @buffer_map_kept(%in: memref<4xf32>, %out: memref<4xf32>, %f: f32) {
  df.map (%i) in (4) outs(%o = %out : memref<4xf32>) {
    %unused = df.read %in[%i] : memref<4xf32>
    df.write %f, %o[%i] : memref<4xf32>
  }
  func.return
}
