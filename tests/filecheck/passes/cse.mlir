// RUN: opt-tool %s --cse | filecheck %s

// Equal reads and equal tasklets inside a map are computed once; equal maps
// (same inputs, same body) become one. Writes are never merged.
// CHECK-LABEL: func.func @inside_maps
// CHECK:         df.map
// CHECK-COUNT-1:   df.read
// CHECK-NOT:       df.read
// CHECK:           df.tasklet
// CHECK-NOT:       df.tasklet
// CHECK:           df.write
// CHECK-NEXT:      df.write
// CHECK:         } -> tensor<8xf32>, tensor<8xf32>
// CHECK-NOT:     df.map
func.func @inside_maps(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %y, %z = df.map (%i) in (8) outs(%o = %e : tensor<8xf32>, %p = %e : tensor<8xf32>) {
    %a = df.read %x[%i] : tensor<8xf32>
    %b = df.read %x[%i] : tensor<8xf32>
    %r = df.tasklet (%a) : (f32) -> f32 {
    ^bb0(%u: f32):
      %v = math.exp %u : f32
      df.yield %v : f32
    }
    %s = df.tasklet (%b) : (f32) -> f32 {
    ^bb0(%u: f32):
      %v = math.exp %u : f32
      df.yield %v : f32
    }
    df.write %r, %o[%i] : tensor<8xf32>
    df.write %s, %p[%i] : tensor<8xf32>
  } -> tensor<8xf32>, tensor<8xf32>
  %w, %q = df.map (%i) in (8) outs(%o = %e : tensor<8xf32>, %p = %e : tensor<8xf32>) {
    %a = df.read %x[%i] : tensor<8xf32>
    %b = df.read %x[%i] : tensor<8xf32>
    %r = df.tasklet (%a) : (f32) -> f32 {
    ^bb0(%u: f32):
      %v = math.exp %u : f32
      df.yield %v : f32
    }
    %s = df.tasklet (%b) : (f32) -> f32 {
    ^bb0(%u: f32):
      %v = math.exp %u : f32
      df.yield %v : f32
    }
    df.write %r, %o[%i] : tensor<8xf32>
    df.write %s, %p[%i] : tensor<8xf32>
  } -> tensor<8xf32>, tensor<8xf32>
  func.return %y, %z, %w : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// nn ops are pure: equal ones are computed once.
// CHECK-LABEL: func.func @nn_common
// CHECK-NEXT:    %[[E:.*]] = nn.exp %x
// CHECK-NEXT:    %[[S:.*]] = nn.add %[[E]], %[[E]]
// CHECK-NEXT:    func.return %[[S]]
func.func @nn_common(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = nn.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = nn.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %s = nn.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}
