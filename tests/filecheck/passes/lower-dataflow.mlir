// RUN: opt-tool %s '--lower-dataflow{threads=1}' | filecheck %s --check-prefix=SERIAL
// RUN: opt-tool %s '--lower-dataflow{threads=4 parallel_threshold=16}' | filecheck %s --check-prefix=PAR
// RUN: opt-tool %s '--lower-dataflow{threads=2 parallel_threshold=16}' | filecheck %s --check-prefix=TWO

// A sum: serially, the innermost loop accumulates in an iter_arg (the loop
// marked for pairwise-sums) and adds to memory once.
// SERIAL-LABEL: func.func @sum
// SERIAL:         %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// SERIAL:         %[[T:.*]] = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[Z]]) -> (f32) {
// SERIAL-NEXT:      %[[V:.*]] = memref.load %x[%[[I]]] : memref<128xf32>
// SERIAL-NEXT:      %[[N:.*]] = arith.addf %[[ACC]], %[[V]] : f32
// SERIAL-NEXT:      scf.yield %[[N]] : f32
// SERIAL-NEXT:    } {df.reduction}
// SERIAL:         %[[OLD:.*]] = memref.load %s[] : memref<f32>
// SERIAL-NEXT:    %[[NEW:.*]] = arith.addf %[[OLD]], %[[T]] : f32
// SERIAL-NEXT:    memref.store %[[NEW]], %s[] : memref<f32>
// SERIAL-NOT:     df.

// In parallel, the output is privatised per chunk (filled with the identity),
// each chunk of the one dimension summed in a register, then the chunks are
// combined in a pairwise tree. A float sum runs in a number of chunks fixed
// by its sizes (128 iterations: 4), not by the thread count.
// PAR-LABEL: func.func @sum
// PAR:         %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// PAR:         "scf.parallel"
// PAR:           memref.store %{{.*}}, %[[P]][%[[C:.*]]] : memref<4xf32>
// PAR:           %[[T:.*]] = scf.for
// PAR:             memref.load %x
// PAR:           } {df.reduction}
// PAR:           memref.load %[[P]][%[[C]]] : memref<4xf32>
// PAR:           scf.reduce
// PAR:         %[[P0:.*]] = memref.load %[[P]][%{{.*}}] : memref<4xf32>
// PAR:         %[[P1:.*]] = memref.load %[[P]][%{{.*}}] : memref<4xf32>
// PAR:         %[[P2:.*]] = memref.load %[[P]][%{{.*}}] : memref<4xf32>
// PAR:         %[[P3:.*]] = memref.load %[[P]][%{{.*}}] : memref<4xf32>
// PAR-NEXT:    %[[A:.*]] = arith.addf %[[P0]], %[[P1]] : f32
// PAR-NEXT:    %[[B:.*]] = arith.addf %[[P2]], %[[P3]] : f32
// PAR-NEXT:    %[[AB:.*]] = arith.addf %[[A]], %[[B]] : f32
// PAR-NEXT:    %[[OLD:.*]] = memref.load %s[] : memref<f32>
// PAR-NEXT:    %[[NEW:.*]] = arith.addf %[[OLD]], %[[AB]] : f32
// PAR-NEXT:    memref.store %[[NEW]], %s[] : memref<f32>
// PAR:         memref.dealloc %[[P]]
// TWO-LABEL: func.func @sum
// TWO:         memref.alloc() {alignment = 64 : i64} : memref<4xf32>
func.func @sum(%x: memref<128xf32>, %s: memref<f32>) {
  df.map (%i) in (128) outs(%o = %s : memref<f32>) {
    %v = df.read %x[%i] : memref<128xf32>
    df.write %v, %o[] wcr(add) : memref<f32>
  }
  func.return
}

// Above the parallel threshold a float sum runs in chunks with one thread
// too (at most 32), so its terms associate the same way for any thread count.
// A maximum is exact in any order: with one thread it stays serial.
// SERIAL-LABEL: func.func @big_sum
// SERIAL:         memref.alloc() {alignment = 64 : i64} : memref<32xf64>
// SERIAL:         "scf.parallel"
// SERIAL-LABEL: func.func @big_max
// SERIAL-NOT:     scf.parallel
// SERIAL:         func.return
// TWO-LABEL: func.func @big_sum
// TWO:         memref.alloc() {alignment = 64 : i64} : memref<32xf64>
// TWO-LABEL: func.func @big_max
// TWO:         memref.alloc() {alignment = 64 : i64} : memref<2xf64>
func.func @big_sum(%x: memref<65536xf64>, %s: memref<f64>) {
  df.map (%i) in (65536) outs(%o = %s : memref<f64>) {
    %v = df.read %x[%i] : memref<65536xf64>
    df.write %v, %o[] wcr(add) : memref<f64>
  }
  func.return
}
func.func @big_max(%x: memref<65536xf64>, %s: memref<f64>) {
  df.map (%i) in (65536) outs(%o = %s : memref<f64>) {
    %v = df.read %x[%i] : memref<65536xf64>
    df.write %v, %o[] wcr(max) : memref<f64>
  }
  func.return
}

// Elementwise: tasklets are inlined into the loop nest; rows are independent,
// so nothing is privatised in parallel.
// Constants leave the loop nest (as canonicalize would move them, one loop per
// round, each round a walk of the module).
// SERIAL-LABEL: func.func @scale
// SERIAL:         %[[K:.*]] = arith.constant 2.000000e+00 : f64
// SERIAL-NEXT:    scf.for %[[I:.*]] =
// SERIAL:           scf.for %[[J:.*]] =
// SERIAL-NEXT:        %[[V:.*]] = memref.load %x[%[[I]], %[[J]]] : memref<64x32xf64>
// SERIAL-NEXT:        %[[M:.*]] = arith.mulf %[[V]], %[[K]] : f64
// SERIAL-NEXT:        memref.store %[[M]], %y[%[[I]], %[[J]]] : memref<64x32xf64>
// PAR-LABEL: func.func @scale
// PAR-NOT:     memref.alloc
// PAR:         "scf.parallel"
// PAR:           arith.minui
// PAR:           memref.store %{{.*}}, %y
func.func @scale(%x: memref<64x32xf64>, %y: memref<64x32xf64>) {
  df.map (%i, %j) in (64, 32) outs(%o = %y : memref<64x32xf64>) {
    %v = df.read %x[%i, %j] : memref<64x32xf64>
    %r = df.tasklet (%v) : (f64) -> f64 {
    ^bb0(%a: f64):
      %k = arith.constant 2.0 : f64
      %m = arith.mulf %a, %k : f64
      df.yield %m : f64
    }
    df.write %r, %o[%i, %j] : memref<64x32xf64>
  }
  func.return
}

// A gather whose innermost variable is compared with constants (its bounds
// guards) is split where the outcomes change: [0, 2), [2, 62), [62, 64).
// The middle loop's comparisons are all true, which LLVM then folds away.
// SERIAL-LABEL: func.func @guarded_gather
// SERIAL:         arith.constant 8 : index
// SERIAL-NEXT:    arith.constant 1 : index
// SERIAL-NEXT:    %[[A:.*]] = arith.constant 0 : index
// SERIAL-NEXT:    %[[B:.*]] = arith.constant 2 : index
// SERIAL-NEXT:    %[[S:.*]] = arith.constant 1 : index
// SERIAL:         %[[C:.*]] = arith.constant 2 : index
// SERIAL-NEXT:    %[[D:.*]] = arith.constant 62 : index
// SERIAL-NEXT:    %[[S2:.*]] = arith.constant 1 : index
// SERIAL:         %[[E:.*]] = arith.constant 62 : index
// SERIAL-NEXT:    %[[F:.*]] = arith.constant 64 : index
// SERIAL-NEXT:    %[[S3:.*]] = arith.constant 1 : index
// SERIAL:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// SERIAL-NEXT:      scf.for %{{.*}} = %[[A]] to %[[B]] step %[[S]]
// SERIAL:           scf.for %{{.*}} = %[[C]] to %[[D]] step %[[S2]]
// SERIAL:           scf.for %{{.*}} = %[[E]] to %[[F]] step %[[S3]]
func.func @guarded_gather(%x: memref<8x64xf32>, %y: memref<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  df.map (%i, %j) in (8, 64) outs(%o = %y : memref<8x64xf32>) {
    %w = arith.subi %j, %c1 : index
    %has_w = arith.cmpi sge, %w, %c0 : index
    %wc = arith.maxsi %w, %c0 : index
    %e = arith.addi %j, %c1 : index
    %has_e = arith.cmpi slt, %e, %c63 : index
    %ec = arith.minsi %e, %c63 : index
    %a = df.read %x[%i, %wc] : memref<8x64xf32>
    %b = df.read %x[%i, %ec] : memref<8x64xf32>
    %r = df.tasklet (%a, %b, %has_w, %has_e) : (f32, f32, i1, i1) -> f32 {
    ^bb0(%p: f32, %q: f32, %u: i1, %v: i1):
      %z = arith.constant 0.0 : f32
      %p1 = arith.select %u, %p, %z : f32
      %q1 = arith.select %v, %q, %z : f32
      %s = arith.addf %p1, %q1 : f32
      df.yield %s : f32
    }
    df.write %r, %o[%i, %j] : memref<8x64xf32>
  }
  func.return
}

// A batch of one: the outer dimension alone would give one chunk, so the
// next ones join it as one index space (1 x 3 x 8 = 24 >= 4 chunks per
// thread), recovered by division; the innermost loop stays a plain loop.
// SERIAL-LABEL: func.func @batch_of_one
// SERIAL-NOT:     scf.parallel
// PAR-LABEL: func.func @batch_of_one
// PAR-NOT:     memref.alloc
// PAR:         "scf.parallel"
// PAR:           %[[E8:.*]] = arith.constant 8 : index
// PAR:           %[[E3:.*]] = arith.constant 3 : index
// PAR:           scf.for %[[F:.*]] = %{{.*}} to %{{.*}} step
// PAR-NEXT:        %[[K:.*]] = arith.remui %[[F]], %[[E8]] : index
// PAR-NEXT:        %[[F2:.*]] = arith.divui %[[F]], %[[E8]] : index
// PAR-NEXT:        %[[J:.*]] = arith.remui %[[F2]], %[[E3]] : index
// PAR-NEXT:        %[[I:.*]] = arith.divui %[[F2]], %[[E3]] : index
// PAR:             scf.for %[[L:.*]] =
// PAR:               memref.load %x[%[[I]], %[[J]], %[[K]], %[[L]]] : memref<1x3x8x32xf32>
func.func @batch_of_one(%x: memref<1x3x8x32xf32>, %y: memref<1x3x8x32xf32>) {
  df.map (%i, %j, %k, %l) in (1, 3, 8, 32) outs(%o = %y : memref<1x3x8x32xf32>) {
    %v = df.read %x[%i, %j, %k, %l] : memref<1x3x8x32xf32>
    %m = arith.mulf %v, %v : f32
    df.write %m, %o[%i, %j, %k, %l] : memref<1x3x8x32xf32>
  }
  func.return
}

// Chunking both leading dimensions would make the sum per row a reduction
// two chunks share (a private copy per thread); chunking the first alone
// does not, so the map keeps that.
// PAR-LABEL: func.func @row_sums
// PAR-NOT:     memref.alloc
// PAR-NOT:     arith.remui
// PAR:         "scf.parallel"
func.func @row_sums(%x: memref<2x16x32xf32>, %y: memref<2xf32>) {
  df.map (%i, %j, %k) in (2, 16, 32) outs(%o = %y : memref<2xf32>) {
    %v = df.read %x[%i, %j, %k] : memref<2x16x32xf32>
    df.write %v, %o[%i] wcr(add) : memref<2xf32>
  }
  func.return
}
