// RUN: opt-tool %s --fuse-outer | filecheck %s
// RUN: opt-tool %s --fuse-outer --lower-dataflow=threads=2 | filecheck %s --check-prefix=LOWERED

// A row softmax-dot at buffer level: fills, a row max, a row sum of exponentials
// and a total. Every buffer two maps share is accessed at [%row, ...], so they
// become one map over the rows; the rank-1 fills are inlined, the others become
// inner maps over the columns, in order. The scalar fill moves before the group.
// CHECK-LABEL: func.func @rows
// CHECK:         df.map () in () outs(%{{.*}} = %[[L:.*]] : memref<f32>) {
// CHECK:         df.map (%[[I:.*]]) in (64) outs(%[[OM:.*]] = %[[M:.*]] : memref<64xf32>, %[[OS:.*]] = %[[S:.*]] : memref<64xf32>, %[[OL:.*]] = %[[L]] : memref<f32>) {
// CHECK-NEXT:      df.write %{{.*}}, %[[OM]][%[[I]]] : memref<64xf32>
// CHECK-NEXT:      df.write %{{.*}}, %[[OS]][%[[I]]] : memref<64xf32>
// CHECK-NEXT:      df.map (%[[J:.*]]) in (512) outs(%[[IM:.*]] = %[[OM]] : memref<64xf32>) {
// CHECK-NEXT:        df.read %{{.*}}[%[[I]], %[[J]]]
// CHECK-NEXT:        df.write %{{.*}}, %[[IM]][%[[I]]] wcr(max)
// CHECK:           df.map (%{{.*}}) in (512) outs(%{{.*}} = %[[OS]] : memref<64xf32>) {
// CHECK:             df.read %[[M]][%[[I]]]
// CHECK:             wcr(add)
// CHECK:           df.map (%{{.*}}) in (512) outs(%[[IL:.*]] = %[[OL]] : memref<f32>) {
// CHECK:             df.read %[[S]][%[[I]]]
// CHECK:             df.write %{{.*}}, %[[IL]][] wcr(add)
// CHECK-NOT:     df.map
// CHECK:         func.return

// Running rows in chunks: the total gets a private copy per chunk (it is not
// indexed by the row; a float sum, so 32 chunks whatever the thread count);
// the row max and sum do not.
// LOWERED-LABEL: func.func @rows
// LOWERED:         memref.alloc() {{.*}} : memref<32xf32>
// LOWERED:         "scf.parallel"
// LOWERED-NOT:     memref<2x64xf32>
// LOWERED:         math.exp
// LOWERED:         math.exp
func.func @rows(%x: memref<64x512xf32>, %w: memref<64x512xf32>) -> memref<f32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %m = memref.alloc() : memref<64xf32>
  df.map (%i) in (64) outs(%o = %m : memref<64xf32>) {
    df.write %ninf, %o[%i] : memref<64xf32>
  }
  %s = memref.alloc() : memref<64xf32>
  df.map (%i) in (64) outs(%o = %s : memref<64xf32>) {
    df.write %zero, %o[%i] : memref<64xf32>
  }
  %l = memref.alloc() : memref<f32>
  df.map () in () outs(%o = %l : memref<f32>) {
    df.write %zero, %o[] : memref<f32>
  }
  df.map (%i, %j) in (64, 512) outs(%o = %m : memref<64xf32>) {
    %v = df.read %x[%i, %j] : memref<64x512xf32>
    df.write %v, %o[%i] wcr(max) : memref<64xf32>
  }
  df.map (%i, %j) in (64, 512) outs(%o = %s : memref<64xf32>) {
    %v = df.read %x[%i, %j] : memref<64x512xf32>
    %mi = df.read %m[%i] : memref<64xf32>
    %d = arith.subf %v, %mi : f32
    %e = math.exp %d : f32
    df.write %e, %o[%i] wcr(add) : memref<64xf32>
  }
  df.map (%i, %j) in (64, 512) outs(%o = %l : memref<f32>) {
    %v = df.read %x[%i, %j] : memref<64x512xf32>
    %mi = df.read %m[%i] : memref<64xf32>
    %si = df.read %s[%i] : memref<64xf32>
    %wv = df.read %w[%i, %j] : memref<64x512xf32>
    %d = arith.subf %v, %mi : f32
    %e = math.exp %d : f32
    %p = arith.divf %e, %si : f32
    %q = arith.mulf %p, %wv : f32
    df.write %q, %o[] wcr(add) : memref<f32>
  }
  func.return %l : memref<f32>
}

// A column sum read at another row ([%i + 1]) and a transposed read: the
// second map depends on other rows of the first map's output, so nothing fuses.
// CHECK-LABEL: func.func @other_rows
// CHECK:         df.map (%{{.*}}, %{{.*}}) in (8, 8)
// CHECK:         df.map (%{{.*}}, %{{.*}}) in (7, 8)
// CHECK:         df.map (%{{.*}}, %{{.*}}) in (8, 8)
func.func @other_rows(%x: memref<8x8xf32>) -> (memref<8x8xf32>, memref<7x8xf32>, memref<8x8xf32>) {
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<8x8xf32>
  df.map (%i, %j) in (8, 8) outs(%o = %a : memref<8x8xf32>) {
    %v = df.read %x[%i, %j] : memref<8x8xf32>
    df.write %v, %o[%i, %j] : memref<8x8xf32>
  }
  %b = memref.alloc() : memref<7x8xf32>
  df.map (%i, %j) in (7, 8) outs(%o = %b : memref<7x8xf32>) {
    %i1 = arith.addi %i, %c1 : index
    %v = df.read %a[%i1, %j] : memref<8x8xf32>
    df.write %v, %o[%i, %j] : memref<7x8xf32>
  }
  %t = memref.alloc() : memref<8x8xf32>
  df.map (%i, %j) in (8, 8) outs(%o = %t : memref<8x8xf32>) {
    %v = df.read %a[%j, %i] : memref<8x8xf32>
    df.write %v, %o[%i, %j] : memref<8x8xf32>
  }
  func.return %a, %b, %t : memref<8x8xf32>, memref<7x8xf32>, memref<8x8xf32>
}

// A map writing into a function argument (which might alias the other
// argument) stays alone; so does a map after a deallocation it would cross.
// CHECK-LABEL: func.func @unsafe
// CHECK-COUNT-3: df.map (%{{.*}}) in (4)
func.func @unsafe(%x: memref<4xf32>, %y: memref<4xf32>) -> memref<4xf32> {
  %a = memref.alloc() : memref<4xf32>
  df.map (%i) in (4) outs(%o = %a : memref<4xf32>) {
    %v = df.read %x[%i] : memref<4xf32>
    df.write %v, %o[%i] : memref<4xf32>
  }
  df.map (%i) in (4) outs(%o = %y : memref<4xf32>) {
    %v = df.read %a[%i] : memref<4xf32>
    df.write %v, %o[%i] : memref<4xf32>
  }
  memref.dealloc %a : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  df.map (%i) in (4) outs(%o = %b : memref<4xf32>) {
    %v = df.read %y[%i] : memref<4xf32>
    df.write %v, %o[%i] : memref<4xf32>
  }
  func.return %b : memref<4xf32>
}

// A copy between two row maps (bufferize copies a shared zero fill into a
// second accumulator) joins the group as a map copying row by row; a copy
// that joins nothing stays a memref.copy.
// CHECK-LABEL: func.func @copy_between
// CHECK-NOT:     memref.copy
// CHECK:         df.map (%[[I:.*]]) in (4) outs(
// CHECK:           df.map (%{{.*}}) in (3) outs(
// CHECK:           df.map (%[[J:.*]]) in (3) outs(%[[O:.*]] = %{{.*}} : memref<4x3xf32>) {
// CHECK-NEXT:        %[[V:.*]] = df.read %[[Z:.*]][%[[I]], %[[J]]] : memref<4x3xf32>
// CHECK-NEXT:        df.write %[[V]], %[[O]][%[[I]], %[[J]]] : memref<4x3xf32>
// CHECK:           df.map (%{{.*}}) in (3) outs(
// CHECK:         "memref.copy"(%{{.*}}, %{{.*}}) : (memref<5xf32>, memref<5xf32>) -> ()
func.func @copy_between(%x: memref<4x3xf32>, %v: memref<5xf32>) -> (memref<4x3xf32>, memref<5xf32>) {
  %z = memref.alloc() : memref<4x3xf32>
  df.map (%i, %j) in (4, 3) outs(%o = %z : memref<4x3xf32>) {
    %v0 = df.read %x[%i, %j] : memref<4x3xf32>
    df.write %v0, %o[%i, %j] : memref<4x3xf32>
  }
  %c = memref.alloc() : memref<4x3xf32>
  "memref.copy"(%z, %c) : (memref<4x3xf32>, memref<4x3xf32>) -> ()
  df.map (%i, %j) in (4, 3) outs(%o = %c : memref<4x3xf32>) {
    %v0 = df.read %x[%i, %j] : memref<4x3xf32>
    df.write %v0, %o[%i, %j] wcr(add) : memref<4x3xf32>
  }
  %w = memref.alloc() : memref<5xf32>
  "memref.copy"(%v, %w) : (memref<5xf32>, memref<5xf32>) -> ()
  func.return %c, %w : memref<4x3xf32>, memref<5xf32>
}
