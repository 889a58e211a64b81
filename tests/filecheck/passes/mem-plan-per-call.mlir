// RUN: opt-tool %s --mem-plan | filecheck %s

// A function marked {df.arena_per_call} (a layer autodiff recomputes under a
// memory budget) allocates its arena at entry and frees it before each return,
// so its buffers are held only while it runs: no global. %c reuses %a's bytes.
// CHECK-NOT:   memref.global
// CHECK-LABEL: func.func @layer
// CHECK-NEXT:    %arena = memref.alloc() {alignment = 64 : i64} : memref<16384xi8>
// CHECK-NEXT:    %[[AT0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %a = memref.view %arena[%[[AT0]]][] : memref<16384xi8> to memref<2048xf32>
// CHECK-NEXT:    %[[AT1:.*]] = arith.constant 8192 : index
// CHECK-NEXT:    %b = memref.view %arena[%[[AT1]]][] : memref<16384xi8> to memref<2048xf32>
// CHECK-NEXT:    %c = memref.view %arena[%[[AT0]]][] : memref<16384xi8> to memref<2048xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         memref.dealloc %arena : memref<16384xi8>
// CHECK-NEXT:    func.return
func.func @layer(%x: memref<2048xf32>) -> f32 attributes {df.arena_per_call} {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() {alignment = 64 : i64} : memref<2048xf32>
  "memref.copy"(%x, %a) : (memref<2048xf32>, memref<2048xf32>) -> ()
  %b = memref.alloc() {alignment = 64 : i64} : memref<2048xf32>
  "memref.copy"(%a, %b) : (memref<2048xf32>, memref<2048xf32>) -> ()
  %c = memref.alloc() {alignment = 64 : i64} : memref<2048xf32>
  "memref.copy"(%b, %c) : (memref<2048xf32>, memref<2048xf32>) -> ()
  %v = memref.load %c[%c0] : memref<2048xf32>
  memref.dealloc %a : memref<2048xf32>
  memref.dealloc %b : memref<2048xf32>
  memref.dealloc %c : memref<2048xf32>
  func.return %v : f32
}
