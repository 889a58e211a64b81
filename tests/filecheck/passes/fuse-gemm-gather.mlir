// RUN: opt-tool %s --fuse-gemm-gather | filecheck %s

// im2col: the patches of a 2x3x6x6 input for a 3x3 kernel, one row per
// (feature, tap), one column per (image, output position), read by a
// forward product (B) and, transposed, by the weight gradient's (B^T).
// Both gemms read %x through two tables instead (the second with rows and
// columns swapped); the copy, the patches and their dealloc are gone.
// CHECK-LABEL: func.func @patches
// CHECK:         %[[R:.*]] = memref.alloc() : memref<27xindex>
// CHECK-NEXT:    df.map ({{.*}}) in (3, 3, 3) outs(%{{.*}} = %[[R]] : memref<27xindex>)
// CHECK:         %[[C:.*]] = memref.alloc() : memref<32xindex>
// CHECK-NEXT:    df.map ({{.*}}) in (2, 4, 4) outs(%{{.*}} = %[[C]] : memref<32xindex>)
// CHECK-NOT:     memref<27x32xf32>
// CHECK:         blas.gemm %w, %x, %y, {{.*}} gather_b(%[[R]], %[[C]] : memref<27xindex>, memref<32xindex>) {beta = 0.000000e+00 : f64} : memref<4x27xf32>, memref<2x3x6x6xf32>, memref<4x32xf32>
// CHECK:         blas.gemm %g, %x, %dw, {{.*}} gather_b(%[[C]], %[[R]] : memref<32xindex>, memref<27xindex>) {beta = 0.000000e+00 : f64} : memref<4x32xf32>, memref<2x3x6x6xf32>, memref<4x27xf32>
// CHECK-NEXT:    memref.dealloc %[[R]] : memref<27xindex>
// CHECK-NEXT:    memref.dealloc %[[C]] : memref<32xindex>
// CHECK-NEXT:    func.return
func.func @patches(%x: memref<2x3x6x6xf32>, %w: memref<4x27xf32>, %g: memref<4x32xf32>) -> (memref<4x32xf32>, memref<4x27xf32>) {
  %p = memref.alloc() {alignment = 64 : i64} : memref<27x32xf32>
  df.map (%c, %i, %j, %n, %u, %v) in (3, 3, 3, 2, 4, 4) outs(%o = %p : memref<27x32xf32>) {
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %t0 = arith.muli %c, %c3 : index
    %t1 = arith.addi %t0, %i : index
    %t2 = arith.muli %t1, %c3 : index
    %k = arith.addi %t2, %j : index
    %m0 = arith.muli %n, %c4 : index
    %m1 = arith.addi %m0, %u : index
    %m2 = arith.muli %m1, %c4 : index
    %m = arith.addi %m2, %v : index
    %h = arith.addi %u, %i : index
    %wd = arith.addi %v, %j : index
    %e = df.read %x[%n, %c, %h, %wd] : memref<2x3x6x6xf32>
    df.write %e, %o[%k, %m] : memref<27x32xf32>
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c27 = arith.constant 27 : index
  %c32 = arith.constant 32 : index
  %y = memref.alloc() {alignment = 64 : i64} : memref<4x32xf32>
  blas.gemm %w, %p, %y, %c1, %c4, %c32, %c27, %c27, %c32, %c32, %c0, %c0, %c0 {beta = 0.0 : f64} : memref<4x27xf32>, memref<27x32xf32>, memref<4x32xf32>
  %dw = memref.alloc() {alignment = 64 : i64} : memref<4x27xf32>
  blas.gemm %g, %p, %dw, %c1, %c4, %c27, %c32, %c32, %c32, %c27, %c0, %c0, %c0 {beta = 0.0 : f64, transpose_b} : memref<4x32xf32>, memref<27x32xf32>, memref<4x27xf32>
  memref.dealloc %p : memref<27x32xf32>
  func.return %y, %dw : memref<4x32xf32>, memref<4x27xf32>
}

// A grouped convolution's patches (2 groups of 2 features): the batch of
// products reads group g at g * 2 * 49 elements of %x.
// CHECK-LABEL: func.func @groups
// CHECK:         %[[S:.*]] = arith.constant 98 : index
// CHECK:         blas.gemm %w, %x, %y, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[S]], %{{.*}} gather_b(
func.func @groups(%x: memref<1x4x7x7xf32>, %w: memref<2x3x2xf32>) -> memref<2x3x36xf32> {
  %p = memref.alloc() {alignment = 64 : i64} : memref<2x2x36xf32>
  df.map (%g, %c, %u, %v) in (2, 2, 6, 6) outs(%o = %p : memref<2x2x36xf32>) {
    %c2 = arith.constant 2 : index
    %c6 = arith.constant 6 : index
    %g2 = arith.muli %g, %c2 : index
    %f = arith.addi %g2, %c : index
    %m0 = arith.muli %u, %c6 : index
    %m = arith.addi %m0, %v : index
    %z = arith.constant 0 : index
    %e = df.read %x[%z, %f, %u, %v] : memref<1x4x7x7xf32>
    df.write %e, %o[%g, %c, %m] : memref<2x2x36xf32>
  }
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %c36 = arith.constant 36 : index
  %c72 = arith.constant 72 : index
  %c108 = arith.constant 108 : index
  %y = memref.alloc() {alignment = 64 : i64} : memref<2x3x36xf32>
  blas.gemm %w, %p, %y, %c2, %c3, %c36, %c2, %c2, %c36, %c36, %c6, %c72, %c108 {beta = 0.0 : f64} : memref<2x3x2xf32>, memref<2x2x36xf32>, memref<2x3x36xf32>
  memref.dealloc %p : memref<2x2x36xf32>
  func.return %y : memref<2x3x36xf32>
}

// Left alone: the source is written between the copy and the product (the
// gemm must read the copy's values); the copied factor is read by a map too;
// an element of the source used by a row and a column variable at once
// (i * j: no table per row and per column gives it).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     gather_
// CHECK:         func.return
func.func @left_alone(%x: memref<8x8xf32>, %w: memref<4x8xf32>) -> (memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %p = memref.alloc() {alignment = 64 : i64} : memref<8x8xf32>
  df.map (%i, %j) in (8, 8) outs(%o = %p : memref<8x8xf32>) {
    %e = df.read %x[%j, %i] : memref<8x8xf32>
    df.write %e, %o[%i, %j] : memref<8x8xf32>
  }
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %x[%c0, %c0] : memref<8x8xf32>
  %y = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  blas.gemm %w, %p, %y, %c1, %c4, %c8, %c8, %c8, %c8, %c8, %c0, %c0, %c0 {beta = 0.0 : f64} : memref<4x8xf32>, memref<8x8xf32>, memref<4x8xf32>
  %q = memref.alloc() {alignment = 64 : i64} : memref<8x8xf32>
  df.map (%i, %j) in (8, 8) outs(%o = %q : memref<8x8xf32>) {
    %e = df.read %w[%c0, %j] : memref<4x8xf32>
    df.write %e, %o[%i, %j] : memref<8x8xf32>
  }
  %s = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  blas.gemm %w, %q, %s, %c1, %c4, %c8, %c8, %c8, %c8, %c8, %c0, %c0, %c0 {beta = 0.0 : f64} : memref<4x8xf32>, memref<8x8xf32>, memref<4x8xf32>
  %q0 = memref.load %q[%c1, %c1] : memref<8x8xf32>
  %r = memref.alloc() {alignment = 64 : i64} : memref<8x8xf32>
  df.map (%i, %j) in (8, 8) outs(%o = %r : memref<8x8xf32>) {
    %ij = arith.muli %i, %j : index
    %c7 = arith.constant 7 : index
    %a = arith.minsi %ij, %c7 : index
    %e = df.read %w[%c0, %a] : memref<4x8xf32>
    df.write %e, %o[%i, %j] : memref<8x8xf32>
  }
  %t = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  blas.gemm %w, %r, %t, %c1, %c4, %c8, %c8, %c8, %c8, %c8, %c0, %c0, %c0 {beta = 0.0 : f64} : memref<4x8xf32>, memref<8x8xf32>, memref<4x8xf32>
  func.return %y, %s, %t, %q0 : memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>, f32
}

// Copies that only reshape or transpose a strided matrix: a kernel laid out
// as a 4 x 27 matrix is read in place (leading dimension 27), and a matrix
// copied transposed is read as stored, with the product's transposition
// flipped (leading dimension 8); no tables.
// CHECK-LABEL: func.func @reshaped
// CHECK-NOT:     df.map
// CHECK:         %[[LD:.*]] = arith.constant 27 : index
// CHECK:         blas.gemm %k, %p, %y, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[LD]], {{.*}} {beta = 0.000000e+00 : f64} : memref<4x3x3x3xf32>, memref<27x5xf32>, memref<4x5xf32>
// CHECK:         %[[LD8:.*]] = arith.constant 8 : index
// CHECK:         blas.gemm %w, %x, %s, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[LD8]], {{.*}} {beta = 0.000000e+00 : f64, transpose_b} : memref<4x8xf32>, memref<8x8xf32>, memref<4x8xf32>
// CHECK-NOT:     gather_
func.func @reshaped(%k: memref<4x3x3x3xf32>, %p: memref<27x5xf32>, %w: memref<4x8xf32>, %x: memref<8x8xf32>) -> (memref<4x5xf32>, memref<4x8xf32>) {
  %m = memref.alloc() {alignment = 64 : i64} : memref<4x27xf32>
  df.map (%o, %c, %i, %j) in (4, 3, 3, 3) outs(%out = %m : memref<4x27xf32>) {
    %e = df.read %k[%o, %c, %i, %j] : memref<4x3x3x3xf32>
    %c3 = arith.constant 3 : index
    %t0 = arith.muli %c, %c3 : index
    %t1 = arith.addi %t0, %i : index
    %t2 = arith.muli %t1, %c3 : index
    %t = arith.addi %t2, %j : index
    df.write %e, %out[%o, %t] : memref<4x27xf32>
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %c27 = arith.constant 27 : index
  %y = memref.alloc() {alignment = 64 : i64} : memref<4x5xf32>
  blas.gemm %m, %p, %y, %c1, %c4, %c5, %c27, %c27, %c5, %c5, %c0, %c0, %c0 {beta = 0.0 : f64} : memref<4x27xf32>, memref<27x5xf32>, memref<4x5xf32>
  memref.dealloc %m : memref<4x27xf32>
  %xt = memref.alloc() {alignment = 64 : i64} : memref<8x8xf32>
  df.map (%i, %j) in (8, 8) outs(%out = %xt : memref<8x8xf32>) {
    %e = df.read %x[%j, %i] : memref<8x8xf32>
    df.write %e, %out[%i, %j] : memref<8x8xf32>
  }
  %s = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  blas.gemm %w, %xt, %s, %c1, %c4, %c8, %c8, %c8, %c8, %c8, %c0, %c0, %c0 {beta = 0.0 : f64} : memref<4x8xf32>, memref<8x8xf32>, memref<4x8xf32>
  memref.dealloc %xt : memref<8x8xf32>
  func.return %y, %s : memref<4x5xf32>, memref<4x8xf32>
}
