// RUN: opt-tool %s --contraction-to-blas | filecheck %s
// RUN: opt-tool %s -p 'contraction-to-blas{blas=false}' | filecheck %s --check-prefix=NOBLAS

// Without a CPU BLAS (the engine's pipeline when none is installed) nothing changes.
// NOBLAS-NOT: blas.gemm

// A zero fill followed by a product map: one gemm with beta = 0, the fill gone.
// out[i, j] += x[i, k] * w[j, k] reads w transposed (linear's weight layout).
// CHECK-LABEL: func.func @linear_weight
// CHECK-NOT:     df.map
// CHECK:         blas.gemm %x, %w, %out, %{{.*}} {beta = 0.000000e+00 : f64, transpose_b} : memref<8x784xf32>, memref<120x784xf32>, memref<8x120xf32>
// CHECK-NOT:     df.map
// CHECK:         func.return
func.func @linear_weight(%x: memref<8x784xf32>, %w: memref<120x784xf32>) -> memref<8x120xf32> {
  %out = memref.alloc() {alignment = 64 : i64} : memref<8x120xf32>
  %zero = arith.constant 0.0 : f32
  df.map (%i, %j) in (8, 120) outs(%o = %out : memref<8x120xf32>) {
    df.write %zero, %o[%i, %j] : memref<8x120xf32>
  }
  df.map (%i, %j, %k) in (8, 120, 784) outs(%o = %out : memref<8x120xf32>) {
    %a = df.read %x[%i, %k] : memref<8x784xf32>
    %b = df.read %w[%j, %k] : memref<120x784xf32>
    %p = df.tasklet (%a, %b) : (f32, f32) -> f32 {
    ^bb0(%u: f32, %v: f32):
      %q = arith.mulf %u, %v : f32
      df.yield %q : f32
    }
    df.write %p, %o[%i, %j] wcr(add) : memref<8x120xf32>
  }
  func.return %out : memref<8x120xf32>
}

// A bias fill is kept: the gemm accumulates (beta = 1). Sizes come from the
// map's bounds, leading dimensions from the buffers' last sizes (memref.dim
// when dynamic). m = %n, n = 16, k = 4; lda = 4, ldb = 16, ldc = 16.
// CHECK-LABEL: func.func @bias_dynamic
// CHECK:         df.map
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK:         blas.gemm %x, %w, %out, %[[C1]], %n, %[[C16]], %[[C4]], %[[C4]], %[[C16]], %[[C16]], %[[C0]], %[[C0]], %[[C0]] {beta = 1.000000e+00 : f64} : memref<?x4xf64>, memref<4x16xf64>, memref<?x16xf64>
func.func @bias_dynamic(%x: memref<?x4xf64>, %w: memref<4x16xf64>, %bias: memref<16xf64>, %n: index) -> memref<?x16xf64> {
  %out = memref.alloc(%n) {alignment = 64 : i64} : memref<?x16xf64>
  df.map (%i, %j) in (%n, 16) outs(%o = %out : memref<?x16xf64>) {
    %b = df.read %bias[%j] : memref<16xf64>
    df.write %b, %o[%i, %j] : memref<?x16xf64>
  }
  df.map (%i, %j, %k) in (%n, 16, 4) outs(%o = %out : memref<?x16xf64>) {
    %a = df.read %x[%i, %k] : memref<?x4xf64>
    %b = df.read %w[%k, %j] : memref<4x16xf64>
    %p = arith.mulf %a, %b : f64
    df.write %p, %o[%i, %j] wcr(add) : memref<?x16xf64>
  }
  func.return %out : memref<?x16xf64>
}

// Batched with a shared right factor: batch strides 5*6 for x, 0 for w, 5*7 for out.
// CHECK-LABEL: func.func @batched
// CHECK-DAG:     %[[S0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[SX:.*]] = arith.muli
// CHECK:         blas.gemm %x, %w, %out, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SX]], %[[S0]], %{{.*}} {beta = 0.000000e+00 : f64}
func.func @batched(%x: memref<3x5x6xf64>, %w: memref<6x7xf64>) -> memref<3x5x7xf64> {
  %out = memref.alloc() {alignment = 64 : i64} : memref<3x5x7xf64>
  %zero = arith.constant 0.0 : f64
  df.map (%b, %i, %j) in (3, 5, 7) outs(%o = %out : memref<3x5x7xf64>) {
    df.write %zero, %o[%b, %i, %j] : memref<3x5x7xf64>
  }
  df.map (%b, %i, %j, %k) in (3, 5, 7, 6) outs(%o = %out : memref<3x5x7xf64>) {
    %a = df.read %x[%b, %i, %k] : memref<3x5x6xf64>
    %c = df.read %w[%k, %j] : memref<6x7xf64>
    %p = arith.mulf %a, %c : f64
    df.write %p, %o[%b, %i, %j] wcr(add) : memref<3x5x7xf64>
  }
  func.return %out : memref<3x5x7xf64>
}

// Not rewritten: the output is a function argument (it may alias an input),
// and a map reading its own output.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     blas.gemm
// CHECK:         func.return
func.func @left_alone(%x: memref<4x4xf64>, %y: memref<4x4xf64>, %out: memref<4x4xf64>) {
  df.map (%i, %j, %k) in (4, 4, 4) outs(%o = %out : memref<4x4xf64>) {
    %a = df.read %x[%i, %k] : memref<4x4xf64>
    %b = df.read %y[%k, %j] : memref<4x4xf64>
    %p = arith.mulf %a, %b : f64
    df.write %p, %o[%i, %j] wcr(add) : memref<4x4xf64>
  }
  %t = memref.alloc() {alignment = 64 : i64} : memref<4x4xf64>
  "memref.copy"(%x, %t) : (memref<4x4xf64>, memref<4x4xf64>) -> ()
  df.map (%i, %j, %k) in (4, 4, 4) outs(%o = %t : memref<4x4xf64>) {
    %a = df.read %t[%i, %k] : memref<4x4xf64>
    %b = df.read %y[%k, %j] : memref<4x4xf64>
    %p = arith.mulf %a, %b : f64
    df.write %p, %o[%i, %j] wcr(add) : memref<4x4xf64>
  }
  func.return
}

// Sibling fusion puts both products of a gradient (dA = dC @ B^T and
// dB = A^T @ dC) into one map with a two-result tasklet: it is split into one
// map per output, each a gemm.
// CHECK-LABEL: func.func @sibling_products
// CHECK-NOT:     df.map
// CHECK:         blas.gemm %dc, %b, %da, %{{.*}} {beta = 1.000000e+00 : f64, transpose_b} : memref<6x5xf64>, memref<4x5xf64>, memref<6x4xf64>
// CHECK:         blas.gemm %a, %dc, %db, %{{.*}} {beta = 1.000000e+00 : f64, transpose_a} : memref<6x4xf64>, memref<6x5xf64>, memref<4x5xf64>
// CHECK-NOT:     df.map
func.func @sibling_products(%a: memref<6x4xf64>, %b: memref<4x5xf64>, %dc: memref<6x5xf64>) -> (memref<6x4xf64>, memref<4x5xf64>) {
  %da = memref.alloc() {alignment = 64 : i64} : memref<6x4xf64>
  %db = memref.alloc() {alignment = 64 : i64} : memref<4x5xf64>
  df.map (%i, %j, %k) in (6, 5, 4) outs(%oa = %da : memref<6x4xf64>, %ob = %db : memref<4x5xf64>) {
    %x = df.read %a[%i, %k] : memref<6x4xf64>
    %y = df.read %b[%k, %j] : memref<4x5xf64>
    %g = df.read %dc[%i, %j] : memref<6x5xf64>
    %p, %q = df.tasklet (%x, %y, %g) : (f64, f64, f64) -> (f64, f64) {
    ^bb0(%u: f64, %v: f64, %w: f64):
      %pa = arith.mulf %w, %v : f64
      %pb = arith.mulf %u, %w : f64
      df.yield %pa, %pb : f64, f64
    }
    df.write %p, %oa[%i, %k] wcr(add) : memref<6x4xf64>
    df.write %q, %ob[%k, %j] wcr(add) : memref<4x5xf64>
  }
  func.return %da, %db : memref<6x4xf64>, memref<4x5xf64>
}

// The gradient of x^T x adds two products into dx from one map: each write is
// its own part, so dx gets two gemms (once only the last write of an output
// was kept).
// CHECK-LABEL: func.func @two_writes_into_one_output
// CHECK-NOT:     df.map
// CHECK:         blas.gemm %x, %dg, %dx, %{{.*}} {beta = 1.000000e+00 : f64, transpose_b} : memref<6x4xf64>, memref<4x4xf64>, memref<6x4xf64>
// CHECK:         blas.gemm %x, %dg, %dx, %{{.*}} {beta = 1.000000e+00 : f64} : memref<6x4xf64>, memref<4x4xf64>, memref<6x4xf64>
// CHECK-NOT:     df.map
func.func @two_writes_into_one_output(%x: memref<6x4xf64>, %dg: memref<4x4xf64>) -> memref<6x4xf64> {
  %dx = memref.alloc() {alignment = 64 : i64} : memref<6x4xf64>
  df.map (%k, %i, %j) in (6, 4, 4) outs(%o = %dx : memref<6x4xf64>) {
    %u = df.read %x[%k, %i] : memref<6x4xf64>
    %v = df.read %x[%k, %j] : memref<6x4xf64>
    %g = df.read %dg[%i, %j] : memref<4x4xf64>
    %p, %q = df.tasklet (%u, %v, %g) : (f64, f64, f64) -> (f64, f64) {
    ^bb0(%a: f64, %b: f64, %c: f64):
      %pa = arith.mulf %c, %b : f64
      %pb = arith.mulf %c, %a : f64
      df.yield %pa, %pb : f64, f64
    }
    df.write %p, %o[%k, %i] wcr(add) : memref<6x4xf64>
    df.write %q, %o[%k, %j] wcr(add) : memref<6x4xf64>
  }
  func.return %dx : memref<6x4xf64>
}

// A part that reads another output is not split off (it would see that
// output's final contents instead of the ones the fused map reads).
// CHECK-LABEL: func.func @reads_an_output
// CHECK:         df.map
// CHECK-NOT:     blas.gemm
func.func @reads_an_output(%a: memref<6x4xf64>, %b: memref<4x5xf64>) -> (memref<6x5xf64>, memref<6x5xf64>) {
  %c = memref.alloc() {alignment = 64 : i64} : memref<6x5xf64>
  %d = memref.alloc() {alignment = 64 : i64} : memref<6x5xf64>
  df.map (%i, %j, %k) in (6, 5, 4) outs(%oc = %c : memref<6x5xf64>, %od = %d : memref<6x5xf64>) {
    %x = df.read %a[%i, %k] : memref<6x4xf64>
    %y = df.read %b[%k, %j] : memref<4x5xf64>
    %z = df.read %oc[%i, %j] : memref<6x5xf64>
    %p, %q = df.tasklet (%x, %y, %z) : (f64, f64, f64) -> (f64, f64) {
    ^bb0(%u: f64, %v: f64, %w: f64):
      %pa = arith.mulf %u, %v : f64
      %pb = arith.mulf %w, %v : f64
      df.yield %pa, %pb : f64, f64
    }
    df.write %p, %oc[%i, %j] wcr(add) : memref<6x5xf64>
    df.write %q, %od[%i, %j] wcr(add) : memref<6x5xf64>
  }
  func.return %c, %d : memref<6x5xf64>, memref<6x5xf64>
}

// The zero fill need not be just before the product: ops between that do not
// touch the output leave it foldable (beta = 0); one that writes the output
// keeps it (beta = 1).
// CHECK-LABEL: func.func @fill_further_up
// CHECK:         blas.gemm %x, %y, %c, %{{.*}} {beta = 0.000000e+00 : f64}
// CHECK:         df.map
// CHECK:         blas.gemm %x, %y, %d, %{{.*}} {beta = 1.000000e+00 : f64}
func.func @fill_further_up(%x: memref<3x4xf64>, %y: memref<4x2xf64>) -> (memref<3x2xf64>, memref<3x2xf64>, memref<3x4xf64>) {
  %c = memref.alloc() {alignment = 64 : i64} : memref<3x2xf64>
  %d = memref.alloc() {alignment = 64 : i64} : memref<3x2xf64>
  %t = memref.alloc() {alignment = 64 : i64} : memref<3x4xf64>
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  df.map (%i, %j) in (3, 2) outs(%o = %c : memref<3x2xf64>) {
    df.write %zero, %o[%i, %j] : memref<3x2xf64>
  }
  df.map (%i, %j) in (3, 4) outs(%o = %t : memref<3x4xf64>) {
    df.write %one, %o[%i, %j] : memref<3x4xf64>
  }
  df.map (%i, %j, %k) in (3, 2, 4) outs(%o = %c : memref<3x2xf64>) {
    %a = df.read %x[%i, %k] : memref<3x4xf64>
    %b = df.read %y[%k, %j] : memref<4x2xf64>
    %p = arith.mulf %a, %b : f64
    df.write %p, %o[%i, %j] wcr(add) : memref<3x2xf64>
  }
  df.map (%i, %j) in (3, 2) outs(%o = %d : memref<3x2xf64>) {
    df.write %zero, %o[%i, %j] : memref<3x2xf64>
  }
  df.map (%i) in (2) outs(%o = %d : memref<3x2xf64>) {
    df.write %one, %o[%i, %i] : memref<3x2xf64>
  }
  df.map (%i, %j, %k) in (3, 2, 4) outs(%o = %d : memref<3x2xf64>) {
    %a = df.read %x[%i, %k] : memref<3x4xf64>
    %b = df.read %y[%k, %j] : memref<4x2xf64>
    %p = arith.mulf %a, %b : f64
    df.write %p, %o[%i, %j] wcr(add) : memref<3x2xf64>
  }
  func.return %c, %d, %t : memref<3x2xf64>, memref<3x2xf64>, memref<3x4xf64>
}
