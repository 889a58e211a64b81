// RUN: opt-tool %s --pairwise-sums | filecheck %s
// RUN: opt-tool %s '--pairwise-sums{block=64}' | filecheck %s --check-prefix=SMALL

// A marked loop with a float sum and a maximum: blocks of 128 iterations, each
// summed from 0 in a loop of its own; after block k the stack's partials of
// the trailing-one levels of k are folded into its sum, which goes to level
// cttz(k + 1); at the end the levels of the block count's set bits are
// folded, lowest first. The maximum is carried through the blocks.
// CHECK-LABEL: func.func @sum_max
// CHECK:         %[[B:.*]] = arith.constant 128 : index
// CHECK:         %[[TRIPS:.*]] = arith.subi %n, %lo : index
// CHECK:         %[[NB:.*]] = arith.divui %{{.*}}, %[[B]] : index
// CHECK:         %[[STACK:.*]] = memref.alloca() {alignment = 64 : i64} : memref<64xf32>
// CHECK:         %[[MAX:.*]] = scf.for %[[K:.*]] = %{{.*}} to %[[NB]] step %{{.*}} iter_args(%[[M:.*]] = %ninf) -> (f32) {
// CHECK:           %[[BLO:.*]] = arith.addi %lo, %{{.*}} : index
// CHECK:           %[[BHI:.*]] = arith.minui %{{.*}}, %n : index
// CHECK:           %[[S:.*]], %[[M2:.*]] = scf.for %i = %[[BLO]] to %[[BHI]] step %c1 iter_args(%a = %zero, %b = %[[M]]) -> (f32, f32) {
// CHECK:             arith.addf %a, %v : f32
// CHECK:             arith.maximumf %b, %v : f32
// CHECK:           math.cttz %{{.*}} : i64
// CHECK:           %[[LEVEL:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:           %[[FOLD:.*]] = scf.for %[[L:.*]] = %{{.*}} to %[[LEVEL]] step %{{.*}} iter_args(%[[X:.*]] = %[[S]]) -> (f32) {
// CHECK-NEXT:        %[[P:.*]] = memref.load %[[STACK]][%[[L]]] : memref<64xf32>
// CHECK-NEXT:        %[[PX:.*]] = arith.addf %[[P]], %[[X]] : f32
// CHECK-NEXT:        scf.yield %[[PX]] : f32
// CHECK:           memref.store %[[FOLD]], %[[STACK]][%[[LEVEL]]] : memref<64xf32>
// CHECK:           scf.yield %[[M2]] : f32
// CHECK:         math.ctlz %{{.*}} : i64
// CHECK:         %[[SUM:.*]] = scf.for %[[L2:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[T:.*]] = %zero) -> (f32) {
// CHECK:           arith.shrui %[[NB]], %[[L2]] : index
// CHECK:           scf.if
// CHECK:             memref.load %[[STACK]][%[[L2]]] : memref<64xf32>
// CHECK:         func.return %[[SUM]], %[[MAX]] : f32, f32
func.func @sum_max(%x: memref<?xf32>, %lo: index, %n: index) -> (f32, f32) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c1 = arith.constant 1 : index
  %s, %m = scf.for %i = %lo to %n step %c1 iter_args(%a = %zero, %b = %ninf) -> (f32, f32) {
    %v = memref.load %x[%i] : memref<?xf32>
    %a2 = arith.addf %a, %v : f32
    %b2 = arith.maximumf %b, %v : f32
    scf.yield %a2, %b2 : f32, f32
  } {df.reduction}
  func.return %s, %m : f32, f32
}

// A loop of at most one block, one with only a maximum, one whose sum does
// not start at 0 (each block would add the start again), and an unmarked
// loop stay as they are; the mark goes.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     memref.alloca
// CHECK-NOT:     df.reduction
// CHECK:         func.return
// SMALL-LABEL: func.func @left_alone
// SMALL:         arith.constant 64 : index
// SMALL:         memref.alloca() {alignment = 64 : i64} : memref<64xf64>
// SMALL-NOT:     memref.alloca
// SMALL:         func.return
func.func @left_alone(%x: memref<256xf64>, %n: index) -> (f64, f64, f64, f64) {
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %s = scf.for %i = %c0 to %c128 step %c1 iter_args(%a = %zero) -> (f64) {
    %v = memref.load %x[%i] : memref<256xf64>
    %a2 = arith.addf %a, %v : f64
    scf.yield %a2 : f64
  } {df.reduction}
  %m = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zero) -> (f64) {
    %v = memref.load %x[%i] : memref<256xf64>
    %a2 = arith.maximumf %a, %v : f64
    scf.yield %a2 : f64
  } {df.reduction}
  %u = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zero) -> (f64) {
    %v = memref.load %x[%i] : memref<256xf64>
    %a2 = arith.addf %a, %v : f64
    scf.yield %a2 : f64
  }
  %o = scf.for %i = %c0 to %n step %c1 iter_args(%a = %one) -> (f64) {
    %v = memref.load %x[%i] : memref<256xf64>
    %a2 = arith.addf %a, %v : f64
    scf.yield %a2 : f64
  } {df.reduction}
  func.return %s, %m, %u, %o : f64, f64, f64, f64
}
