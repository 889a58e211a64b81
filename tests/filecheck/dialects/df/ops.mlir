// RUN: opt-tool %s | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool | filecheck %s
// RUN: opt-tool %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @elementwise_and_row_sum
// CHECK:       %{{.*}}, %{{.*}} = df.map (%[[I:.*]], %[[J:.*]]) in (64, 512) outs(%[[Y0:.*]] = %{{.*}} : tensor<64x512xf32>, %[[S0:.*]] = %{{.*}} : tensor<64xf32>) {
// CHECK-NEXT:    %[[A:.*]] = df.read %{{.*}}[%[[I]], %[[J]]] : tensor<64x512xf32>
// CHECK-NEXT:    %[[B:.*]] = df.read %{{.*}}[%[[I]], %[[J]]] : tensor<64x512xf32>
// CHECK-NEXT:    %[[P:.*]] = df.tasklet (%[[A]], %[[B]]) : (f32, f32) -> f32 {
// CHECK-NEXT:    ^bb0(%[[U:.*]]: f32, %[[V:.*]]: f32):
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[U]], %[[V]] : f32
// CHECK-NEXT:      df.yield %[[M]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    df.write %[[P]], %[[Y0]][%[[I]], %[[J]]] : tensor<64x512xf32>
// CHECK-NEXT:    df.write %[[P]], %[[S0]][%[[I]]] wcr(add) : tensor<64xf32>
// CHECK-NEXT:  } -> tensor<64x512xf32>, tensor<64xf32>

// GENERIC: "df.map"(%{{.*}}, %{{.*}}) <{static_bounds = array<i64: 64, 512>, operandSegmentSizes = array<i32: 0, 2>}>
// GENERIC: "df.read"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<64x512xf32>, index, index) -> f32
// GENERIC: "df.tasklet"(%{{.*}}, %{{.*}}) ({
// GENERIC: "df.yield"(%{{.*}}) : (f32) -> ()
// GENERIC: "df.write"(%{{.*}}, %{{.*}}, %{{.*}}) <{wcr = "add"}> : (f32, tensor<64xf32>, index) -> ()
func.func @elementwise_and_row_sum(%x: tensor<64x512xf32>, %w: tensor<64x512xf32>) -> (tensor<64x512xf32>, tensor<64xf32>) {
  %empty = tensor.empty() : tensor<64x512xf32>
  %zeros = arith.constant dense<0.0> : tensor<64xf32>
  %y, %s = df.map (%i, %j) in (64, 512) outs(%y0 = %empty : tensor<64x512xf32>, %s0 = %zeros : tensor<64xf32>) {
    %a = df.read %x[%i, %j] : tensor<64x512xf32>
    %b = df.read %w[%i, %j] : tensor<64x512xf32>
    %p = df.tasklet (%a, %b) : (f32, f32) -> f32 {
    ^bb0(%u: f32, %v: f32):
      %m = arith.mulf %u, %v : f32
      df.yield %m : f32
    }
    df.write %p, %y0[%i, %j] : tensor<64x512xf32>
    df.write %p, %s0[%i] wcr(add) : tensor<64xf32>
  } -> tensor<64x512xf32>, tensor<64xf32>
  func.return %y, %s : tensor<64x512xf32>, tensor<64xf32>
}

// CHECK-LABEL: func.func @dynamic_nested_and_wcr_kinds
// CHECK:       df.map (%[[I:.*]]) in (%{{.*}}) outs(%[[MX:.*]] = %{{.*}} : tensor<?xf64>, %[[MN:.*]] = %{{.*}} : tensor<?xf64>, %[[PR:.*]] = %{{.*}} : tensor<?xf64>) {
// CHECK-NEXT:    df.map (%[[J:.*]]) in (16) {
// CHECK:           df.write %{{.*}}, %[[MX]][%[[I]]] wcr(max) : tensor<?xf64>
// CHECK-NEXT:      df.write %{{.*}}, %[[MN]][%[[I]]] wcr(min) : tensor<?xf64>
// CHECK-NEXT:      df.write %{{.*}}, %[[PR]][%[[I]]] wcr(mul) : tensor<?xf64>
// CHECK-NEXT:    }
// CHECK-NEXT:  } -> tensor<?xf64>, tensor<?xf64>, tensor<?xf64>
// CHECK:       df.tasklet (%{{.*}}, %{{.*}}) : (index, index) -> (f64, f64) {
func.func @dynamic_nested_and_wcr_kinds(%x: tensor<?x16xf64>, %init: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>, tensor<?xf64>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16xf64>
  %mx, %mn, %pr = df.map (%i) in (%n) outs(%a = %init : tensor<?xf64>, %b = %init : tensor<?xf64>, %c = %init : tensor<?xf64>) {
    df.map (%j) in (16) {
      %v = df.read %x[%i, %j] : tensor<?x16xf64>
      df.write %v, %a[%i] wcr(max) : tensor<?xf64>
      df.write %v, %b[%i] wcr(min) : tensor<?xf64>
      df.write %v, %c[%i] wcr(mul) : tensor<?xf64>
    }
  } -> tensor<?xf64>, tensor<?xf64>, tensor<?xf64>
  %s, %d = df.tasklet (%c0, %c0) : (index, index) -> (f64, f64) {
  ^bb0(%p: index, %q: index):
    %f = arith.constant 1.0 : f64
    df.yield %f, %f : f64, f64
  }
  func.return %mx, %mn, %pr : tensor<?xf64>, tensor<?xf64>, tensor<?xf64>
}

// CHECK-LABEL: func.func @zero_dim_and_index_arith
// CHECK:       %[[I1:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:  %{{.*}} = df.read %{{.*}}[%[[I1]]] : tensor<9xf32>
// CHECK-NEXT:  df.write %{{.*}}, %{{.*}}[] wcr(add) : tensor<f32>
func.func @zero_dim_and_index_arith(%x: tensor<9xf32>) -> tensor<f32> {
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<f32>
  %s = df.map (%i) in (8) outs(%o = %zero : tensor<f32>) {
    %i1 = arith.addi %i, %c1 : index
    %v = df.read %x[%i1] : tensor<9xf32>
    df.write %v, %o[] wcr(add) : tensor<f32>
  } -> tensor<f32>
  func.return %s : tensor<f32>
}

// Buffer form: memref outputs updated in place, no results.
// CHECK-LABEL: func.func @buffer_form
// CHECK:         df.map (%[[I:.*]]) in (4) outs(%[[O:.*]] = %out : memref<4xf32>) {
// CHECK-NEXT:      %[[V:.*]] = df.read %in[%[[I]]] : memref<4xf32>
// CHECK-NEXT:      df.write %[[V]], %[[O]][%[[I]]] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @buffer_form(%in: memref<4xf32>, %out: memref<4xf32>) {
  df.map (%i) in (4) outs(%o = %out : memref<4xf32>) {
    %v = df.read %in[%i] : memref<4xf32>
    df.write %v, %o[%i] : memref<4xf32>
  }
  func.return
}
