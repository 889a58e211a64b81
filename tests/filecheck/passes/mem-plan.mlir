// RUN: opt-tool %s --mem-plan | filecheck %s
// RUN: opt-tool %s '--mem-plan{print-stats=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=STATS

// The arena of each planned function is a private, uninitialised global of bytes.
// CHECK: "memref.global"() <{sym_name = "__dfc_arena_reuse", type = memref<16384xi8>, initial_value, sym_visibility = "private", alignment = 64 : i64}> : () -> ()

// %c is allocated after %a's last use, so it takes %a's bytes; %b lives
// alongside both and gets its own. Deallocs disappear.
// CHECK-LABEL: func.func @reuse
// CHECK-NEXT:    %arena = memref.get_global @__dfc_arena_reuse : memref<16384xi8>
// CHECK-NEXT:    %[[AT0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %a = memref.view %arena[%[[AT0]]][] : memref<16384xi8> to memref<2048xf32>
// CHECK-NEXT:    %[[AT1:.*]] = arith.constant 8192 : index
// CHECK-NEXT:    %b = memref.view %arena[%[[AT1]]][] : memref<16384xi8> to memref<2048xf32>
// CHECK-NEXT:    %c = memref.view %arena[%[[AT0]]][] : memref<16384xi8> to memref<2048xf32>
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     memref.dealloc
// CHECK:         func.return
// STATS: mem-plan: @reuse peak-before=24576 peak-after=16384 arena=16384 stack=0 heap=0 dynamic=0
func.func @reuse(%x: memref<2048xf32>) -> f32 {
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

// A returned buffer (and one returned through a cast) belongs to the caller:
// it stays a heap allocation. The temporary is planned.
// CHECK-LABEL: func.func @returned
// CHECK:         %t = memref.view %arena
// CHECK:         %r = memref.alloc() {alignment = 64 : i64} : memref<2048xf32>
// CHECK:         %s = memref.alloc() {alignment = 64 : i64} : memref<2048xf32>
// CHECK:         %s2 = "memref.cast"(%s)
// CHECK:         func.return %r, %s2
// STATS: mem-plan: @returned peak-before=24576 peak-after=24576 arena=8192 stack=0 heap=16384 dynamic=0
func.func @returned(%x: memref<2048xf32>) -> (memref<2048xf32>, memref<?xf32>) {
  %t = memref.alloc() {alignment = 64 : i64} : memref<2048xf32>
  "memref.copy"(%x, %t) : (memref<2048xf32>, memref<2048xf32>) -> ()
  %r = memref.alloc() {alignment = 64 : i64} : memref<2048xf32>
  "memref.copy"(%t, %r) : (memref<2048xf32>, memref<2048xf32>) -> ()
  %s = memref.alloc() {alignment = 64 : i64} : memref<2048xf32>
  "memref.copy"(%t, %s) : (memref<2048xf32>, memref<2048xf32>) -> ()
  %s2 = "memref.cast"(%s) : (memref<2048xf32>) -> memref<?xf32>
  memref.dealloc %t : memref<2048xf32>
  func.return %r, %s2 : memref<2048xf32>, memref<?xf32>
}

// Small buffers go to a stack frame instead of the arena, planned alike: %s
// is first written after %v's last read, so they share bytes. Dynamic shapes
// are left alone.
// CHECK-LABEL: func.func @small
// CHECK-NEXT:    %frame = memref.alloca() {alignment = 64 : i64} : memref<256xi8>
// CHECK-NEXT:    %[[AT0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %v = memref.view %frame[%[[AT0]]][] : memref<256xi8> to memref<64xf32>
// CHECK-NEXT:    %s = memref.view %frame[%[[AT0]]][] : memref<256xi8> to memref<f32>
// CHECK:         %d = memref.alloc(%n) {alignment = 64 : i64} : memref<?xf32>
// CHECK:         memref.dealloc %d
// CHECK-NOT:     memref.dealloc
// STATS: mem-plan: @small peak-before=320 peak-after=256 arena=0 stack=256 heap=0 dynamic=1
func.func @small(%x: memref<64xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %v = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  %s = memref.alloc() {alignment = 64 : i64} : memref<f32>
  "memref.copy"(%x, %v) : (memref<64xf32>, memref<64xf32>) -> ()
  %e = memref.load %v[%c0] : memref<64xf32>
  memref.store %e, %s[] : memref<f32>
  %d = memref.alloc(%n) {alignment = 64 : i64} : memref<?xf32>
  memref.store %e, %d[%c0] : memref<?xf32>
  %r = memref.load %s[] : memref<f32>
  memref.dealloc %d : memref<?xf32>
  memref.dealloc %v : memref<64xf32>
  memref.dealloc %s : memref<f32>
  func.return %r : f32
}

// Allocations inside a loop body are hoisted: the body keeps only its uses.
// %acc is carried across iterations (used in the body), so it stays live
// over the whole loop and never shares bytes with the body's %tmp.
// CHECK-LABEL: func.func @loop
// CHECK-NEXT:    %arena = memref.get_global @__dfc_arena_loop : memref<16384xi8>
// CHECK-NEXT:    %[[AT0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %acc = memref.view %arena[%[[AT0]]][] : memref<16384xi8> to memref<2048xf32>
// CHECK-NEXT:    %[[AT1:.*]] = arith.constant 8192 : index
// CHECK-NEXT:    %tmp = memref.view %arena[%[[AT1]]][] : memref<16384xi8> to memref<2048xf32>
// CHECK:         scf.for
// CHECK-NOT:       memref.alloc
// CHECK:           "memref.copy"(%acc, %tmp)
// CHECK-NEXT:      "memref.copy"(%tmp, %acc)
// CHECK-NEXT:    }
// CHECK-NEXT:    %{{.*}} = memref.load %acc
// STATS: mem-plan: @loop peak-before=16384 peak-after=16384 arena=16384 stack=0 heap=0 dynamic=0
func.func @loop(%x: memref<2048xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %acc = memref.alloc() {alignment = 64 : i64} : memref<2048xf32>
  "memref.copy"(%x, %acc) : (memref<2048xf32>, memref<2048xf32>) -> ()
  scf.for %i = %c0 to %n step %c1 {
    %tmp = memref.alloc() {alignment = 64 : i64} : memref<2048xf32>
    "memref.copy"(%acc, %tmp) : (memref<2048xf32>, memref<2048xf32>) -> ()
    "memref.copy"(%tmp, %acc) : (memref<2048xf32>, memref<2048xf32>) -> ()
    memref.dealloc %tmp : memref<2048xf32>
  }
  %r = memref.load %acc[%c0] : memref<2048xf32>
  memref.dealloc %acc : memref<2048xf32>
  func.return %r : f32
}

// Inside an scf.parallel body every thread needs its own buffers: a small one
// goes to a frame at the start of the body, a large one stays on the heap.
// CHECK-LABEL: func.func @parallel
// CHECK:         "scf.parallel"
// CHECK-NEXT:    ^{{.*}}(%{{.*}}: index):
// CHECK-NEXT:      %frame = memref.alloca() {alignment = 64 : i64} : memref<256xi8>
// CHECK:           %p = memref.view %frame
// CHECK:           %q = memref.alloc() {alignment = 64 : i64} : memref<2048xf32>
// CHECK:           memref.dealloc %q
// CHECK-NOT:       memref.dealloc
// STATS: mem-plan: @parallel peak-before=8448 peak-after=8448 arena=0 stack=256 heap=8192 dynamic=0
func.func @parallel(%x: memref<2048xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %p = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    %q = memref.alloc() {alignment = 64 : i64} : memref<2048xf32>
    %v = memref.load %x[%i] : memref<2048xf32>
    memref.store %v, %p[%c0] : memref<64xf32>
    memref.store %v, %q[%c0] : memref<2048xf32>
    %w = memref.load %q[%c0] : memref<2048xf32>
    memref.store %w, %x[%i] : memref<2048xf32>
    memref.dealloc %q : memref<2048xf32>
    memref.dealloc %p : memref<64xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// A function that may run twice at once keeps its large buffers on the heap
// (an arena would be shared): @rec calls itself, @kernel runs in an scf.parallel.
// CHECK-LABEL: func.func @rec
// CHECK:         %t = memref.alloc() {alignment = 64 : i64} : memref<2048xf32>
// CHECK-LABEL: func.func @kernel
// CHECK:         %t = memref.alloc() {alignment = 64 : i64} : memref<2048xf32>
// CHECK-NOT:   __dfc_arena
// STATS: mem-plan: @rec peak-before=8192 peak-after=8192 arena=0 stack=0 heap=8192 dynamic=0
func.func @rec(%x: memref<2048xf32>, %n: index) {
  %t = memref.alloc() {alignment = 64 : i64} : memref<2048xf32>
  "memref.copy"(%x, %t) : (memref<2048xf32>, memref<2048xf32>) -> ()
  func.call @rec(%t, %n) : (memref<2048xf32>, index) -> ()
  memref.dealloc %t : memref<2048xf32>
  func.return
}
func.func @kernel(%x: memref<2048xf32>) {
  %t = memref.alloc() {alignment = 64 : i64} : memref<2048xf32>
  "memref.copy"(%x, %t) : (memref<2048xf32>, memref<2048xf32>) -> ()
  memref.dealloc %t : memref<2048xf32>
  func.return
}
func.func @launch(%x: memref<2048xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    func.call @kernel(%x) : (memref<2048xf32>) -> ()
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// A gemm's epilogue uses buffers as a loop body does: %h, the product, and
// %a, which the epilogue writes, are planned (a region op's operands would
// otherwise escape; these small ones go to the stack frame), and both live
// over the whole gemm, so they do not share bytes.
// CHECK-LABEL: func.func @gemm_epilogue
// CHECK:         %h = memref.view %frame[%{{.*}}][]
// CHECK-NEXT:    %[[AT:.*]] = arith.constant 768 : index
// CHECK-NEXT:    %a = memref.view %frame[%[[AT]]][]
// CHECK-NOT:     memref.alloc
// CHECK:         blas.gemm %x, %w, %h, {{.*}} epilogue {
// CHECK:           memref.store %{{.*}}, %a[
// CHECK:         func.return
func.func @gemm_epilogue(%x: memref<8x16xf32>, %w: memref<24x16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c24 = arith.constant 24 : index
  %h = memref.alloc() {alignment = 64 : i64} : memref<8x24xf32>
  %a = memref.alloc() {alignment = 64 : i64} : memref<8x24xf32>
  blas.gemm %x, %w, %h, %c1, %c8, %c24, %c16, %c16, %c16, %c24, %c0, %c0, %c0 {beta = 0.0 : f64, transpose_b} : memref<8x16xf32>, memref<24x16xf32>, memref<8x24xf32> epilogue {
  ^bb0(%t: index, %i: index, %j: index):
    %v = memref.load %h[%i, %j] : memref<8x24xf32>
    %e = math.exp %v : f32
    memref.store %e, %a[%i, %j] : memref<8x24xf32>
  }
  %r = memref.load %a[%c0, %c0] : memref<8x24xf32>
  memref.dealloc %h : memref<8x24xf32>
  memref.dealloc %a : memref<8x24xf32>
  func.return %r : f32
}
