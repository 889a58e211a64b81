// RUN: opt-tool %s --reuse-sibling-loops | filecheck %s

// A softmax row after lower-dataflow: the sum and the normalising loop both
// compute exp(x[j] - m). The first stores it into a row buffer, the second
// loads it; the subtraction and the exp leave the second loop.
// CHECK-LABEL: func.func @softmax_row
// CHECK:         %[[BUF:.*]] = memref.alloca() {alignment = 64 : i64} : memref<16xf32>
// CHECK-NEXT:    %[[S:.*]] = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK:           %[[E:.*]] = math.exp
// CHECK-NEXT:      memref.store %[[E]], %[[BUF]][%[[J]]] : memref<16xf32>
// CHECK:         scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:       math.exp
// CHECK-NOT:       arith.subf
// CHECK:           %[[R:.*]] = memref.load %[[BUF]][%[[K]]] : memref<16xf32>
// CHECK-NEXT:      arith.divf %[[R]], %[[S]] : f32
// CHECK:         func.return
func.func @softmax_row(%x: memref<16xf32>, %m: memref<f32>, %y: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %s = scf.for %j = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = memref.load %x[%j] : memref<16xf32>
    %mv = memref.load %m[] : memref<f32>
    %d = arith.subf %v, %mv : f32
    %e = math.exp %d : f32
    %a = arith.addf %acc, %e : f32
    scf.yield %a : f32
  }
  scf.for %k = %c0 to %c16 step %c1 {
    %v = memref.load %x[%k] : memref<16xf32>
    %mv = memref.load %m[] : memref<f32>
    %d = arith.subf %v, %mv : f32
    %e = math.exp %d : f32
    %q = arith.divf %e, %s : f32
    memref.store %q, %y[%k] : memref<16xf32>
  }
  func.return
}

// A write between the loops into a buffer the expression reads (x itself,
// through a view of the same allocation), loops over different ranges, a
// cheap expression, and an exp the first loop computes only under a branch:
// nothing is reused.
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     memref.alloca
// CHECK-COUNT-6: math.exp
// CHECK-NOT:     math.exp
// CHECK:         func.return
func.func @kept(%x: memref<16xf32>, %y: memref<16xf32>, %z: memref<16xf32>, %b: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %one = arith.constant 1.0 : f32
  %t = memref.alloc() : memref<16xf32>
  %tv = memref.subview %t[0] [16] [1] : memref<16xf32> to memref<16xf32, strided<[1]>>
  scf.for %j = %c0 to %c16 step %c1 {
    %v = memref.load %t[%j] : memref<16xf32>
    %e = math.exp %v : f32
    memref.store %e, %y[%j] : memref<16xf32>
  }
  memref.store %one, %tv[%c0] : memref<16xf32, strided<[1]>>
  scf.for %j = %c0 to %c16 step %c1 {
    %v = memref.load %t[%j] : memref<16xf32>
    %e = math.exp %v : f32
    memref.store %e, %y[%j] : memref<16xf32>
  }
  scf.for %j = %c0 to %c8 step %c1 {
    %v = memref.load %x[%j] : memref<16xf32>
    %e = math.exp %v : f32
    memref.store %e, %y[%j] : memref<16xf32>
  }
  scf.for %j = %c0 to %c16 step %c1 {
    %v = memref.load %x[%j] : memref<16xf32>
    %e = math.exp %v : f32
    memref.store %e, %y[%j] : memref<16xf32>
  }
  scf.for %j = %c0 to %c16 step %c1 {
    %v = memref.load %x[%j] : memref<16xf32>
    %e = arith.mulf %v, %v : f32
    memref.store %e, %y[%j] : memref<16xf32>
  }
  scf.for %j = %c0 to %c16 step %c1 {
    %v = memref.load %x[%j] : memref<16xf32>
    %e = arith.mulf %v, %v : f32
    memref.store %e, %y[%j] : memref<16xf32>
  }
  scf.for %j = %c0 to %c16 step %c1 {
    scf.if %b {
      %v = memref.load %z[%j] : memref<16xf32>
      %e = math.exp %v : f32
      memref.store %e, %y[%j] : memref<16xf32>
    }
  }
  scf.for %j = %c0 to %c16 step %c1 {
    %v = memref.load %z[%j] : memref<16xf32>
    %e = math.exp %v : f32
    memref.store %e, %y[%j] : memref<16xf32>
  }
  memref.dealloc %t : memref<16xf32>
  func.return
}
