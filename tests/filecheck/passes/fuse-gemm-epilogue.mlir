// RUN: opt-tool %s --fuse-gemm-epilogue | filecheck %s

// nn.linear's bias fill and the relu after it: the gemm stops accumulating
// (beta = 0), and its epilogue adds the bias into C at the element (t, i, j)
// and applies the relu, writing the activation.
// CHECK-LABEL: func.func @bias_relu
// CHECK-NOT:     df.map
// CHECK:         blas.gemm %x, %w, %h, {{.*}} {beta = 0.000000e+00 : f64, transpose_b} : memref<8x16xf32>, memref<24x16xf32>, memref<8x24xf32> epilogue {
// CHECK-NEXT:    ^{{.*}}(%{{.*}}: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:      %[[B:.*]] = memref.load %bias[%[[J]]] : memref<24xf32>
// CHECK-NEXT:      %[[P:.*]] = memref.load %h[%[[I]], %[[J]]] : memref<8x24xf32>
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[P]], %[[B]] : f32
// CHECK-NEXT:      memref.store %[[S]], %h[%[[I]], %[[J]]] : memref<8x24xf32>
// CHECK-NEXT:      %[[V:.*]] = memref.load %h[%[[I]], %[[J]]] : memref<8x24xf32>
// CHECK:           %[[R:.*]] = arith.maximumf %[[V]], %{{.*}} : f32
// CHECK-NEXT:      memref.store %[[R]], %a[%[[I]], %[[J]]] : memref<8x24xf32>
// CHECK-NEXT:    }
// CHECK-NOT:     df.map
// CHECK:         func.return %a
func.func @bias_relu(%x: memref<8x16xf32>, %w: memref<24x16xf32>, %bias: memref<24xf32>) -> memref<8x24xf32> {
  %h = memref.alloc() {alignment = 64 : i64} : memref<8x24xf32>
  %a = memref.alloc() {alignment = 64 : i64} : memref<8x24xf32>
  df.map (%i, %j) in (8, 24) outs(%o = %h : memref<8x24xf32>) {
    %b = df.read %bias[%j] : memref<24xf32>
    df.write %b, %o[%i, %j] : memref<8x24xf32>
  }
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c24 = arith.constant 24 : index
  %c0 = arith.constant 0 : index
  blas.gemm %x, %w, %h, %c1, %c8, %c24, %c16, %c16, %c16, %c24, %c0, %c0, %c0 {beta = 1.0 : f64, transpose_b} : memref<8x16xf32>, memref<24x16xf32>, memref<8x24xf32>
  df.map (%i, %j) in (8, 24) outs(%o = %a : memref<8x24xf32>) {
    %v = df.read %h[%i, %j] : memref<8x24xf32>
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %v, %zero : f32
    df.write %r, %o[%i, %j] : memref<8x24xf32>
  }
  func.return %a : memref<8x24xf32>
}

// The consumer (the gradient's relu mask, written transposed) comes after an
// unrelated map: the gemm moves down to it. C's element is read through the
// map's out argument when the map updates C in place.
// CHECK-LABEL: func.func @moved_down
// CHECK:         df.map
// CHECK:         df.write {{.*}} %{{.*}}[%{{.*}}] : memref<4xf64>
// CHECK:         blas.gemm %x, %y, %c, {{.*}} epilogue {
// CHECK-NEXT:    ^{{.*}}(%{{.*}}: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-DAG:       memref.load %c[%[[I]], %[[J]]]
// CHECK-DAG:       memref.load %pre[%[[I]], %[[J]]]
// CHECK:           memref.store %{{.*}}, %t[%[[J]], %[[I]]] : memref<6x4xf64>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @moved_down(%x: memref<4x5xf64>, %y: memref<5x6xf64>, %pre: memref<4x6xf64>, %v: memref<4xf64>) -> (memref<6x4xf64>, memref<4xf64>) {
  %c = memref.alloc() {alignment = 64 : i64} : memref<4x6xf64>
  %t = memref.alloc() {alignment = 64 : i64} : memref<6x4xf64>
  %s = memref.alloc() {alignment = 64 : i64} : memref<4xf64>
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c0 = arith.constant 0 : index
  blas.gemm %x, %y, %c, %c1, %c4, %c6, %c5, %c5, %c6, %c6, %c0, %c0, %c0 {beta = 0.0 : f64} : memref<4x5xf64>, memref<5x6xf64>, memref<4x6xf64>
  df.map (%i) in (4) outs(%o = %s : memref<4xf64>) {
    %e = df.read %x[%i, %c0] : memref<4x5xf64>
    %f = df.read %v[%i] : memref<4xf64>
    %g = arith.addf %e, %f : f64
    df.write %g, %o[%i] : memref<4xf64>
  }
  df.map (%i, %j) in (4, 6) outs(%o = %t : memref<6x4xf64>) {
    %p = df.read %c[%i, %j] : memref<4x6xf64>
    %q = df.read %pre[%i, %j] : memref<4x6xf64>
    %zero = arith.constant 0.0 : f64
    %pos = arith.cmpf ugt, %q, %zero : f64
    %r = arith.select %pos, %p, %zero : f64
    df.write %r, %o[%j, %i] : memref<6x4xf64>
  }
  func.return %t, %s : memref<6x4xf64>, memref<4xf64>
}

// A batched product: C[t, i, j] is the element (t, i, j); the consumer
// updates C in place through its out argument.
// CHECK-LABEL: func.func @batched_in_place
// CHECK:         blas.gemm {{.*}} epilogue {
// CHECK-NEXT:    ^{{.*}}(%[[T:.*]]: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK:           memref.load %c[%[[T]], %[[I]], %[[J]]]
// CHECK:           memref.store %{{.*}}, %c[%[[T]], %[[I]], %[[J]]] : memref<2x3x4xf64>
// CHECK-NEXT:    }
// CHECK-NOT:     df.map
func.func @batched_in_place(%x: memref<2x3x5xf64>, %y: memref<2x5x4xf64>) -> memref<2x3x4xf64> {
  %c = memref.alloc() {alignment = 64 : i64} : memref<2x3x4xf64>
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c12 = arith.constant 12 : index
  %c15 = arith.constant 15 : index
  %c20 = arith.constant 20 : index
  blas.gemm %x, %y, %c, %c2, %c3, %c4, %c5, %c5, %c4, %c4, %c15, %c20, %c12 {beta = 0.0 : f64} : memref<2x3x5xf64>, memref<2x5x4xf64>, memref<2x3x4xf64>
  df.map (%t, %i, %j) in (2, 3, 4) outs(%o = %c : memref<2x3x4xf64>) {
    %p = df.read %o[%t, %i, %j] : memref<2x3x4xf64>
    %e = math.exp %p : f64
    df.write %e, %o[%t, %i, %j] : memref<2x3x4xf64>
  }
  func.return %c : memref<2x3x4xf64>
}

// Left alone: a consumer reading another element of C (the tile holding it
// may not be final), one reducing (wcr), one writing a function argument
// (which may be A or B), and a consumer after a map that writes A.
// CHECK-LABEL: func.func @not_fused
// CHECK-NOT:     epilogue
// CHECK:         func.return
func.func @not_fused(%x: memref<4x5xf64>, %y: memref<5x6xf64>, %arg: memref<4x6xf64>) -> (memref<4x6xf64>, memref<4xf64>) {
  %c = memref.alloc() {alignment = 64 : i64} : memref<4x6xf64>
  %d = memref.alloc() {alignment = 64 : i64} : memref<4x6xf64>
  %s = memref.alloc() {alignment = 64 : i64} : memref<4xf64>
  %x2 = memref.alloc() {alignment = 64 : i64} : memref<4x5xf64>
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c0 = arith.constant 0 : index
  blas.gemm %x, %y, %c, %c1, %c4, %c6, %c5, %c5, %c6, %c6, %c0, %c0, %c0 {beta = 0.0 : f64} : memref<4x5xf64>, memref<5x6xf64>, memref<4x6xf64>
  df.map (%i, %j) in (4, 6) outs(%o = %d : memref<4x6xf64>) {
    %p = df.read %c[%i, %c0] : memref<4x6xf64>
    df.write %p, %o[%i, %j] : memref<4x6xf64>
  }
  blas.gemm %x, %y, %d, %c1, %c4, %c6, %c5, %c5, %c6, %c6, %c0, %c0, %c0 {beta = 0.0 : f64} : memref<4x5xf64>, memref<5x6xf64>, memref<4x6xf64>
  df.map (%i, %j) in (4, 6) outs(%o = %s : memref<4xf64>) {
    %p = df.read %d[%i, %j] : memref<4x6xf64>
    df.write %p, %o[%i] wcr(add) : memref<4xf64>
  }
  df.map (%i, %j) in (4, 5) outs(%o = %x2 : memref<4x5xf64>) {
    %p = df.read %x[%i, %j] : memref<4x5xf64>
    df.write %p, %o[%i, %j] : memref<4x5xf64>
  }
  blas.gemm %x2, %y, %c, %c1, %c4, %c6, %c5, %c5, %c6, %c6, %c0, %c0, %c0 {beta = 0.0 : f64} : memref<4x5xf64>, memref<5x6xf64>, memref<4x6xf64>
  df.map (%i, %j) in (4, 6) outs(%o = %arg : memref<4x6xf64>) {
    %p = df.read %c[%i, %j] : memref<4x6xf64>
    df.write %p, %o[%i, %j] : memref<4x6xf64>
  }
  blas.gemm %x2, %y, %d, %c1, %c4, %c6, %c5, %c5, %c6, %c6, %c0, %c0, %c0 {beta = 0.0 : f64} : memref<4x5xf64>, memref<5x6xf64>, memref<4x6xf64>
  df.map (%i, %j) in (4, 5) outs(%o = %x2 : memref<4x5xf64>) {
    %z = arith.constant 0.0 : f64
    df.write %z, %o[%i, %j] : memref<4x5xf64>
  }
  df.map (%i, %j) in (4, 6) outs(%o = %d : memref<4x6xf64>) {
    %p = df.read %d[%i, %j] : memref<4x6xf64>
    %e = math.exp %p : f64
    df.write %e, %o[%i, %j] : memref<4x6xf64>
  }
  func.return %d, %s : memref<4x6xf64>, memref<4xf64>
}
